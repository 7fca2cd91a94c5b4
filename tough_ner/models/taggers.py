"""NER taggers over pre-tokenised sentences, tokens kept exactly as given: a spaCy pipeline
and a transformers token-classification model, each a plain function of the sentences.
Each needs its extra (``spacy``; ``trainer`` for torch and transformers); nothing is downloaded."""
from __future__ import annotations

import os
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

Tagger = Callable[[Sequence[Sequence[str]]], List[List[str]]]
# How a word made of several sub-tokens gets its label, as transformers' pipeline names them:
# its first sub-token's; the best of its sub-tokens' scores averaged; the sub-token scoring highest.
AGGREGATIONS = ("first", "average", "max")


def spacy_pipeline(nlp, device: Optional[str] = None):
    """A spaCy pipeline: the object itself, or loaded from an installed package name (``-``
    read as ``_``) or a folder; ``device`` ``cuda``/``cuda:N`` runs it on that GPU."""
    try:
        import spacy
    except ImportError:
        raise ImportError("the spaCy adapter needs spaCy: pip install 'tough-ner[spacy]'") from None
    if device is not None and device.startswith("cuda"):
        spacy.require_gpu(int(device.partition(":")[2] or 0))
    if isinstance(nlp, (str, os.PathLike)):
        name = os.fspath(nlp)
        nlp = spacy.load(name if os.path.exists(name) else name.replace("-", "_"))
    return nlp


def spacy_docs(nlp, batch_size: int):
    """``sentences -> Docs`` of a spaCy pipeline (object or installed package name) run on
    pre-tokenised sentences: the tokens are kept exactly as given."""
    nlp = spacy_pipeline(nlp)
    from spacy.tokens import Doc

    def docs(sentences: Sequence[Sequence[str]]):
        return nlp.pipe((Doc(nlp.vocab, words=list(words)) for words in sentences), batch_size=batch_size)
    return docs


def spacy_tagger(nlp, batch_size: int = 256) -> Tagger:
    """Predictions of a spaCy pipeline (object or name of an installed package) for
    pre-tokenised sentences, tokens kept as given: IOB2 tags with the pipeline's labels.
    Needs the ``spacy`` extra."""
    docs = spacy_docs(nlp, batch_size)

    def tag(sentences: Sequence[Sequence[str]]) -> List[List[str]]:
        return [[f"{t.ent_iob_}-{t.ent_type_}" if t.ent_iob_ in ("B", "I") else "O" for t in doc]
                for doc in docs(sentences)]
    return tag


def spacy_spans(nlp, batch_size: int = 256) -> Callable[[Sequence[Sequence[str]]], List[List[list]]]:
    """The entities of a spaCy pipeline for pre-tokenised sentences as token spans
    ``[start, end, label]`` (end exclusive), tokens kept as given."""
    docs = spacy_docs(nlp, batch_size)

    def spans(sentences: Sequence[Sequence[str]]) -> List[List[list]]:
        return [[[ent.start, ent.end, ent.label_] for ent in doc.ents] for doc in docs(sentences)]
    return spans


def _torch():
    try:
        import torch
    except ImportError:
        raise ImportError("the transformers adapter needs torch and transformers: "
                          "pip install 'tough-ner[trainer]'") from None
    return torch


def window_size(model, tokenizer) -> Optional[int]:
    """How many sub-tokens of words one forward pass takes (the model's positions, less the
    tokenizer's special tokens), or None when neither says."""
    limits = [n for n in (getattr(tokenizer, "model_max_length", None),
                          getattr(model.config, "max_position_embeddings", None))
              if isinstance(n, int) and 0 < n < 1_000_000]
    if not limits:
        return None
    return max(1, min(limits) - tokenizer.num_special_tokens_to_add(pair=False))


def windows(lengths: Sequence[Sequence[int]], size: Optional[int]) -> List[tuple]:
    """``(sentence, first word, end word)`` pieces of sentences whose words have ``lengths``
    sub-tokens each, every piece at most ``size`` sub-tokens (a longer word is a piece alone)."""
    pieces = []
    for s, words in enumerate(lengths):
        first, used = 0, 0
        for w, n in enumerate(words):
            if size is not None and used and used + n > size:
                pieces.append((s, first, w))
                first, used = w, 0
            used += n
        pieces.append((s, first, len(words)))
    return pieces


def transformers_tagger(model, tokenizer=None, batch_size: int = 32, device: Optional[str] = None,
                        aggregation: str = "first") -> Tagger:
    """Predictions of a transformers token-classification model (or a
    ``pipeline("token-classification")``) for pre-tokenised sentences: the model's labels
    (``id2label``), one per word, from its sub-tokens by ``aggregation`` (``first``: the first
    sub-token's, as the Trainer scores; ``average``; ``max``; see ``AGGREGATIONS``), read
    through the tokenizer's ``word_ids`` so words are never split or merged.  A sentence
    longer than the model's positions is cut into pieces of whole words, each run alone.  A
    word the tokenizer turns into no sub-token at all (a control character) gets ``O``.
    Needs the ``trainer`` extra (torch, transformers)."""
    torch = _torch()
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, got {aggregation!r}")
    if hasattr(model, "model") and hasattr(model, "tokenizer"):  # a pipeline
        model, tokenizer = model.model, tokenizer or model.tokenizer
    if tokenizer is None:
        raise ValueError("give the model's tokenizer (a fast tokenizer: word_ids are needed)")
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{type(tokenizer).__name__} is a slow tokenizer: words are mapped to sub-tokens through "
                         "a fast tokenizer's word_ids (load it with use_fast=True)")
    labels: Dict[int, str] = {int(i): label for i, label in model.config.id2label.items()}
    model.eval()
    if device is not None:
        model.to(device)
    size = window_size(model, tokenizer)

    def tag(sentences: Sequence[Sequence[str]]) -> List[List[str]]:
        sentences = [list(words) for words in sentences]
        tags: List[List[str]] = [["O"] * len(words) for words in sentences]
        if not sentences:
            return tags
        plain = tokenizer(sentences, is_split_into_words=True, add_special_tokens=False, verbose=False)
        lengths = []
        for s, words in enumerate(sentences):
            counts = [0] * len(words)
            for word in plain.word_ids(s):
                counts[word] += 1
            lengths.append(counts)
        pieces = windows(lengths, size)
        # Pieces of similar length share a batch: less padding; each word's label is its own.
        pieces.sort(key=lambda p: sum(lengths[p[0]][p[1]:p[2]]))
        for first in range(0, len(pieces), batch_size):
            chunk = pieces[first:first + batch_size]
            words = [sentences[s][a:b] for s, a, b in chunk]
            encoded = tokenizer(words, is_split_into_words=True, truncation=size is not None, padding=True,
                                return_tensors="pt", **({"max_length": size + tokenizer.num_special_tokens_to_add()}
                                                        if size is not None else {}))
            with torch.no_grad():
                logits = model(**{k: v.to(model.device) for k, v in encoded.items()}).logits
            scores = logits.float().cpu().numpy()
            for row, (s, a, _) in enumerate(chunk):
                positions: Dict[int, List[int]] = {}
                for position, word in enumerate(encoded.word_ids(row)):
                    if word is not None:
                        positions.setdefault(word, []).append(position)
                for word, where in positions.items():
                    tags[s][a + word] = labels[_aggregate(scores[row, where], aggregation)]
        return tags
    return tag


def _aggregate(logits: np.ndarray, aggregation: str) -> int:
    """The label id of one word from its sub-tokens' logits (rows), as the pipeline's strategies."""
    if aggregation == "first":
        return int(np.argmax(logits[0]))
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=-1, keepdims=True)
    if aggregation == "average":
        return int(np.argmax(probabilities.mean(axis=0)))
    best = int(np.argmax(probabilities.max(axis=-1)))
    return int(np.argmax(probabilities[best]))
