"""Adapters that turn real systems into plain functions over pre-tokenised sentences for the
attacks: a POS tagger (spaCy) and a masked language model (transformers) for the context-level
attack.  The NER taggers (spaCy, transformers) for NRB and the RockNER victim live with the
model runner (``tough_ner.models.taggers``) and are importable from here as before.  Each
needs its extra."""
from __future__ import annotations

from typing import Callable, List, Sequence

from ..models.taggers import Tagger, spacy_docs, spacy_tagger, transformers_tagger

__all__ = ["Tagger", "spacy_tagger", "transformers_tagger", "spacy_pos", "mlm_fill_mask"]


def spacy_pos(nlp, batch_size: int = 256) -> Tagger:
    """Penn Treebank POS tags (``token.tag_``, else the universal ``token.pos_``) of a spaCy
    pipeline for pre-tokenised sentences, tokens kept as given.  Needs the ``spacy`` extra."""
    docs = spacy_docs(nlp, batch_size)

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
