"""NER taggers over pre-tokenised sentences, tokens kept exactly as given: a spaCy pipeline
and a transformers token-classification model, each a plain function of the sentences.
Each needs its extra (``spacy``; ``trainer`` for torch and transformers)."""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence

Tagger = Callable[[Sequence[Sequence[str]]], List[List[str]]]


def _spacy_docs(nlp, batch_size: int):
    """``sentences -> Docs`` of a spaCy pipeline (object or installed package name) run on
    pre-tokenised sentences: the tokens are kept exactly as given."""
    try:
        import spacy
        from spacy.tokens import Doc
    except ImportError:
        raise ImportError("the spaCy adapter needs spaCy: pip install 'tough-ner[spacy]'") from None
    if isinstance(nlp, str):
        nlp = spacy.load(nlp)

    def docs(sentences: Sequence[Sequence[str]]):
        return nlp.pipe((Doc(nlp.vocab, words=list(words)) for words in sentences), batch_size=batch_size)
    return docs


def spacy_tagger(nlp, batch_size: int = 256) -> Tagger:
    """Predictions of a spaCy pipeline (object or name of an installed package) for
    pre-tokenised sentences, tokens kept as given: IOB2 tags with the pipeline's labels.
    Needs the ``spacy`` extra."""
    docs = _spacy_docs(nlp, batch_size)

    def tag(sentences: Sequence[Sequence[str]]) -> List[List[str]]:
        return [[f"{t.ent_iob_}-{t.ent_type_}" if t.ent_iob_ in ("B", "I") else "O" for t in doc]
                for doc in docs(sentences)]
    return tag


def transformers_tagger(model, tokenizer=None, batch_size: int = 32, device: Optional[str] = None) -> Tagger:
    """Predictions of a transformers token-classification model (or a
    ``pipeline("token-classification")``) for pre-tokenised sentences: each word takes the
    label of its first sub-token.  Needs the ``trainer`` extra (torch, transformers)."""
    try:
        import torch
    except ImportError:
        raise ImportError("the transformers adapter needs torch and transformers: "
                          "pip install 'tough-ner[trainer]'") from None
    if hasattr(model, "model") and hasattr(model, "tokenizer"):  # a pipeline
        model, tokenizer = model.model, tokenizer or model.tokenizer
    if tokenizer is None:
        raise ValueError("give the model's tokenizer (a fast tokenizer: word_ids are needed)")
    labels = model.config.id2label
    model.eval()
    if device is not None:
        model.to(device)

    def tag(sentences: Sequence[Sequence[str]]) -> List[List[str]]:
        tags: List[List[str]] = []
        sentences = list(sentences)
        for first in range(0, len(sentences), batch_size):
            chunk = [list(words) for words in sentences[first:first + batch_size]]
            encoded = tokenizer(chunk, is_split_into_words=True, truncation=True, padding=True, return_tensors="pt")
            with torch.no_grad():
                logits = model(**{k: v.to(model.device) for k, v in encoded.items()}).logits
            best = logits.argmax(-1).cpu().numpy()
            for row, words in enumerate(chunk):
                word_tags = ["O"] * len(words)
                done = set()
                for position, word in enumerate(encoded.word_ids(row)):
                    if word is not None and word not in done:
                        word_tags[word] = labels[int(best[row, position])]
                        done.add(word)
                tags.append(word_tags)
        return tags
    return tag
