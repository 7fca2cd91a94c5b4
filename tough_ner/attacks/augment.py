"""RockNER's three training-data augmentations, as seeded callables for ``datasets.Dataset.map``.

Use them with ``dataset.map(augmentation, with_indices=True)``: each example draws from
``random.Random(f"{seed}/{index}")``, so the result does not depend on batching or on
``num_proc``.  Examples have ``tokens`` and ``ner_tags`` (strings, or class ids with
``label_names``); the output tags are IOB2.
  EntitySwitching  each entity becomes another training mention of the same type.
  RandomMasking    each letter of each entity token becomes a random letter of the same case.
  MixingUp         the start of a sentence up to (and including) one of its entities is joined
                   to the end of another sentence after an entity of the same type.
"""
from __future__ import annotations

import random
import string
from typing import Dict, List, Optional, Sequence, Tuple

from . import draw_other, rewrite
from ..core.schemes import Span, decode, spans_to_tags
from ..core.stats import TrainStats


class _Augmentation:
    def __init__(self, seed: int = 0, label_names: Optional[Sequence[str]] = None,
                 tokens_column: str = "tokens", tags_column: str = "ner_tags"):
        self.seed = seed
        self.label_names = list(label_names) if label_names is not None else None
        self.label_ids = {name: i for i, name in enumerate(self.label_names or [])}
        self.tokens_column, self.tags_column = tokens_column, tags_column

    def _read(self, example) -> Tuple[List[str], List[str]]:
        tokens, tags = list(example[self.tokens_column]), list(example[self.tags_column])
        if tags and not isinstance(tags[0], str):
            if self.label_names is None:
                raise ValueError(f"the {self.tags_column!r} column holds class ids: give label_names= "
                                 f"(e.g. dataset.features[{self.tags_column!r}].feature.names)")
            tags = [self.label_names[i] for i in tags]
        return tokens, tags

    def _write(self, example, tokens: List[str], spans: Sequence[Span]) -> dict:
        tags = spans_to_tags(spans, len(tokens), "bio")
        if self.label_names is not None and example[self.tags_column] and \
                not isinstance(example[self.tags_column][0], str):
            missing = sorted({t for t in tags if t not in self.label_ids})
            if missing:
                raise ValueError(f"IOB2 tag(s) {', '.join(missing)} are not among label_names")
            tags = [self.label_ids[t] for t in tags]
        return {self.tokens_column: tokens, self.tags_column: tags}

    def __call__(self, example, index: int = 0) -> dict:
        tokens, tags = self._read(example)
        return self.augment(tokens, decode(tags, index), random.Random(f"{self.seed}/{index}"), index, example)

    def augment(self, tokens, spans, rng, index, example) -> dict:
        raise NotImplementedError


class EntitySwitching(_Augmentation):
    """Swap entities for other training mentions of the same type (each with probability ``p``)."""

    def __init__(self, train, p: float = 1.0, **options):
        super().__init__(**options)
        stats = TrainStats.coerce(train)
        self.p = p
        pools: Dict[str, List[str]] = {}
        for text, entity_type in stats.mentions:
            pools.setdefault(entity_type, []).append(text)
        self.pools = {t: tuple(sorted(set(texts))) for t, texts in pools.items()}
        self.members = {t: set(texts) for t, texts in pools.items()}

    def augment(self, tokens, spans, rng, index, example) -> dict:
        new_texts = {}
        for i, (start, end, entity_type) in enumerate(spans):
            text = " ".join(tokens[start:end])
            pool = self.pools.get(entity_type, ())
            if len(pool) > (text in self.members.get(entity_type, ())) and rng.random() < self.p:
                new_texts[i] = draw_other(rng, pool, text).split()
        new_tokens, _, moved = rewrite(tokens, spans, new_texts)
        return self._write(example, new_tokens, moved)


class RandomMasking(_Augmentation):
    """Replace every letter of entity tokens by a random letter of the same case."""

    def augment(self, tokens, spans, rng, index, example) -> dict:
        tokens = list(tokens)
        for start, end, _ in spans:
            for i in range(start, end):
                tokens[i] = "".join(rng.choice(string.ascii_uppercase) if ch.isupper() else
                                    rng.choice(string.ascii_lowercase) if ch.islower() else ch
                                    for ch in tokens[i])
        return self._write(example, tokens, spans)


class MixingUp(_Augmentation):
    """Join a sentence's start, through one of its entities, to the rest of another sentence
    after an entity of the same type.  ``partners``: the sentences to draw from (a Dataset or
    a list of examples; usually the dataset being mapped)."""

    def __init__(self, partners, **options):
        super().__init__(**options)
        self.partners: List[Tuple[List[str], List[Span]]] = []
        self.ends: Dict[str, List[Tuple[int, int]]] = {}  # type -> (partner, end of its entity)
        for j, example in enumerate(partners):
            tokens, tags = self._read(example)
            spans = decode(tags, j)
            self.partners.append((tokens, spans))
            for _, end, entity_type in spans:
                self.ends.setdefault(entity_type, []).append((j, end))

    def augment(self, tokens, spans, rng, index, example) -> dict:
        if not spans:
            return self._write(example, tokens, spans)
        start, end, entity_type = spans[rng.randrange(len(spans))]
        options = [(j, e) for j, e in self.ends.get(entity_type, ()) if (self.partners[j][0], j) != (tokens, index)]
        if not options:
            return self._write(example, tokens, spans)
        j, after = rng.choice(options)
        other, other_spans = self.partners[j]
        shift = end - after
        joined = [s for s in spans if s[1] <= end]
        joined += [(a + shift, b + shift, t) for a, b, t in other_spans if a >= after]
        return self._write(example, tokens[:end] + other[after:], joined)
