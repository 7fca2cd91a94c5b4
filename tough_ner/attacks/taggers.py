"""Adapters that turn real systems into plain functions over pre-tokenised sentences:
NER taggers (spaCy, transformers) for NRB and the RockNER victim, a POS tagger (spaCy) and
a masked language model (transformers) for the context-level attack.  Each needs its extra."""
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


def spacy_pos(nlp, batch_size: int = 256) -> Tagger:
    """Penn Treebank POS tags (``token.tag_``, else the universal ``token.pos_``) of a spaCy
    pipeline for pre-tokenised sentences, tokens kept as given.  Needs the ``spacy`` extra."""
    docs = _spacy_docs(nlp, batch_size)

    def tag(sentences: Sequence[Sequence[str]]) -> List[List[str]]:
        return [[t.tag_ or t.pos_ for t in doc] for doc in docs(sentences)]
    return tag


def mlm_fill_mask(model, top_k: int = 100, tokenizer=None) -> Callable[[str], List[tuple]]:
    """A fill-mask function ``text -> [(word, score), ...]`` (best first, ``top_k`` of them)
    from a local transformers model directory, a masked-LM model object with its tokenizer,
    or a ``pipeline("fill-mask")``; its ``batch`` attribute takes a list of texts at once.
    Nothing is downloaded.  Needs the ``trainer`` extra."""
    import os

    try:
        from transformers import pipeline
    except ImportError:
        raise ImportError("the masked-LM adapter needs torch and transformers: "
                          "pip install 'tough-ner[trainer]'") from None
    if isinstance(model, (str, os.PathLike)):
        if not os.path.isdir(model):
            raise ValueError(f"{os.fspath(model)!r} is not a local model directory (nothing is downloaded)")
        pipe = pipeline("fill-mask", model=os.fspath(model), tokenizer=tokenizer or os.fspath(model))
    elif hasattr(model, "model") and hasattr(model, "tokenizer"):
        pipe = model
    else:
        if tokenizer is None:
            raise ValueError("give the masked LM's tokenizer")
        pipe = pipeline("fill-mask", model=model, tokenizer=tokenizer)
    top_k = min(top_k, len(pipe.tokenizer))

    def pairs(result) -> List[tuple]:
        if result and isinstance(result[0], list):  # several masks: the first one's proposals
            result = result[0]
        return [(item["token_str"], item["score"]) for item in result]

    def fill(text: str) -> List[tuple]:
        return pairs(pipe(text, top_k=top_k))

    def batch(texts: Sequence[str]) -> List[List[tuple]]:
        """Several texts in one call (the pipeline batches them)."""
        if not texts:
            return []
        results = pipe(list(texts), top_k=top_k, batch_size=min(len(texts), 64))
        if len(texts) == 1:  # one text: the pipeline returns its proposals unwrapped
            results = [results]
        return [pairs(result) for result in results]
    fill.mask_token = pipe.tokenizer.mask_token
    fill.batch = batch
    return fill
