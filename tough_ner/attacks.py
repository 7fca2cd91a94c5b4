"""RockNER's natural adversarial attacks (Lin et al., EMNLP 2021).

Entity level: gold entities are replaced by other real entities of the same type (and fine
class, when the original is found in one of the dictionary's classes) that are not training
mentions; tags are rewritten in IOB2.  Context level: up to ``max_words`` non-entity content
words per sentence are masked in turn and filled by a masked language model with a word
drawn from a rank window of its proposals (ranks 51-100 by default); of several candidate
sentences, the one that makes a victim tagger miss most gold entities is kept.

Both return a ``datasets.Dataset`` with ``tokens``, ``ner_tags`` (IOB2 strings) and
``replacements``: one record per replaced entity or word with its level, its position in the
new sentence, the original and new text, and its label (entity type or POS tag).  Randomness
comes from ``random.Random`` seeded by ``seed`` over sorted candidates, so the same seed,
data and resources give byte-identical output on any machine.
"""
from __future__ import annotations

import random
from bisect import bisect_left
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from ._util import no_gc
from .batch import Batch
from .corpus import Corpus, Sentences, from_dataset
from .dictionaries import Dictionary, DictionaryLike, builtin, normalize, scheme_for
from .schemes import Span, decode, spans_to_tags
from .stats import TrainStats
from .taggers import Tagger

Record = Dict[str, Union[str, int]]
FillMask = Callable[[str], Sequence]

# Nouns (common and proper), verbs, adjectives and adverbs, as Penn Treebank or Universal POS tags.
CONTENT_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "JJ", "JJR", "JJS",
                          "RB", "RBR", "RBS", "NOUN", "PROPN", "VERB", "ADJ", "ADV"})


def as_lists(data, tags=None) -> Tuple[Sentences, Sentences, List[List[Record]]]:
    """Tokens, tags and earlier replacement records from a Dataset (``tokens``/``ner_tags``,
    string or ClassLabel tags), a Corpus, or token and tag lists."""
    records, tokens = None, data
    if tags is None:
        if isinstance(data, Corpus):
            tokens, tags = data.tokens, data.tags
        elif hasattr(data, "column_names"):
            corpus = from_dataset(data)
            tokens, tags = corpus.tokens, corpus.tags
            if "replacements" in data.column_names:
                records = [list(r) for r in data["replacements"]]
        else:
            raise TypeError("give a datasets.Dataset, a Corpus, or token lists and tag lists")
    with no_gc():
        tokens, tags = [list(s) for s in tokens], [list(s) for s in tags]
    return tokens, tags, records or [[] for _ in tokens]


def to_dataset(tokens: Sentences, tags: Sentences, records: List[List[Record]]):
    """The attacked sentences as a ``datasets.Dataset``."""
    import datasets
    import pyarrow as pa

    strings = datasets.List(datasets.Value("string"))
    record = {"level": datasets.Value("string"), "start": datasets.Value("int32"), "end": datasets.Value("int32"),
              "original": datasets.Value("string"), "replacement": datasets.Value("string"),
              "label": datasets.Value("string")}
    features = datasets.Features({"tokens": strings, "ner_tags": strings, "replacements": datasets.List(record)})
    # Straight to Arrow: datasets' per-example encoding would triple the attack's time.
    table = pa.Table.from_pydict({"tokens": tokens, "ner_tags": tags, "replacements": records},
                                 schema=features.arrow_schema)
    return datasets.Dataset(table, info=datasets.DatasetInfo(features=features))


def rewrite(tokens: Sequence[str], spans: Sequence[Span], new_texts: Dict[int, List[str]]
            ) -> Tuple[List[str], List[str], List[Span]]:
    """Replace the tokens of ``spans[i]`` by ``new_texts[i]``: new tokens, IOB2 tags and spans."""
    result: List[str] = []
    moved: List[Span] = []
    last = 0
    for i, (start, end, entity_type) in enumerate(spans):
        result += tokens[last:start]
        words = new_texts.get(i, tokens[start:end])
        moved.append((len(result), len(result) + len(words), entity_type))
        result += words
        last = end
    result += tokens[last:]
    return result, spans_to_tags(moved, len(result), "bio"), moved


# ---- entity level ---------------------------------------------------------------------------
class _Candidates:
    """Replacement pools per type and class, training mentions removed."""

    def __init__(self, dictionary: Dictionary, excluded: set):
        self.by_class = {t: {c: tuple(x for x in pool if x not in excluded) for c, pool in classes.items()}
                         for t, classes in dictionary.items()}
        self.by_type = {t: tuple(sorted({x for pool in classes.values() for x in pool}))
                        for t, classes in self.by_class.items()}
        # The class of a known entity: the first class (by name) listing it, before exclusion.
        self.class_of = {t: {x: c for c in sorted(classes, reverse=True) for x in classes[c]}
                         for t, classes in dictionary.items()}

    def pool(self, entity_type: str, text: str) -> Tuple[str, ...]:
        """Sorted candidates for an entity: its class's if it has one with another candidate,
        else every candidate of its type."""
        name = self.class_of.get(entity_type, {}).get(text)
        if name is not None:
            pool = self.by_class[entity_type][name]
            if len(pool) > (text in pool):
                return pool
        return self.by_type.get(entity_type, ())


def draw_other(rng: random.Random, pool: Tuple[str, ...], text: str) -> str:
    """A uniform draw from a sorted pool, never ``text`` itself."""
    at = bisect_left(pool, text)
    if at < len(pool) and pool[at] == text:
        index = rng.randrange(len(pool) - 1)
        return pool[index + (index >= at)]
    return pool[rng.randrange(len(pool))]


def entity_attack(data, tags=None, dictionary: Optional[DictionaryLike] = None, ratio: float = 1.0, seed: int = 0,
                  train=None, exclude_seen: bool = True):
    """RockNER's entity-level attack.

    Args:
        data: a ``datasets.Dataset`` (``tokens``, ``ner_tags``), a Corpus, or token lists (with ``tags``).
        dictionary: ``{type: [...]}`` or ``{type: {class: [...]}}`` (see ``tough_ner.dictionaries``);
            default: the built-in one for the data's CoNLL or OntoNotes types.
        ratio: share of the eligible entities to replace (an entity is eligible when its type
            has a candidate other than itself); ``round(ratio * eligible)`` are replaced.
        seed: the seed of the draws.
        train: training statistics (anything ``train=`` accepts); with ``exclude_seen``,
            candidates that are training mentions of any type are never used.
    """
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"ratio must be between 0 and 1, got {ratio}")
    tokens, tags, records = as_lists(data, tags)
    batch = Batch(tokens, tags)
    if dictionary is None:
        dictionary = builtin(scheme_for(batch.types))
    stats = TrainStats.coerce(train) if train is not None else None
    excluded = set(stats.mention_text_counts) if stats is not None and exclude_seen else set()
    candidates = _Candidates(normalize(dictionary), excluded)
    eligible = []  # (sentence, span index, text, pool)
    for s, spans in enumerate(batch.gold_spans):
        for i, (start, end, entity_type) in enumerate(spans):
            text = " ".join(tokens[s][start:end])
            pool = candidates.pool(entity_type, text)
            if len(pool) > (text in pool):
                eligible.append((s, i, text, pool))
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(eligible)), round(ratio * len(eligible))))
    new_texts: Dict[int, Dict[int, List[str]]] = {}
    for index in chosen:
        s, i, text, pool = eligible[index]
        new_texts.setdefault(s, {})[i] = draw_other(rng, pool, text).split()
    out_tokens, out_tags = [], []
    for s, (sentence, sentence_tags) in enumerate(zip(tokens, tags)):
        if s not in new_texts:
            out_tokens.append(sentence)
            out_tags.append(spans_to_tags(batch.gold_spans[s], len(sentence), "bio"))
            continue
        spans = batch.gold_spans[s]
        new_tokens, new_tags, moved = rewrite(sentence, spans, new_texts[s])
        out_tokens.append(new_tokens)
        out_tags.append(new_tags)
        records[s] = _shifted(records[s], spans, moved, new_texts[s])
        for i, words in sorted(new_texts[s].items()):
            start, end, entity_type = moved[i]
            records[s].append({"level": "entity", "start": start, "end": end,
                               "original": " ".join(sentence[spans[i][0]:spans[i][1]]),
                               "replacement": " ".join(words), "label": entity_type})
    return to_dataset(out_tokens, out_tags, records)


def _shifted(records: List[Record], spans: Sequence[Span], moved: Sequence[Span], replaced) -> List[Record]:
    """Earlier records moved along with the rewritten sentence; a record of an entity that is
    replaced again is dropped (the new record's original is that earlier replacement)."""
    kept = []
    for record in records:
        where = (record["start"], record["end"])
        j = next((j for j, span in enumerate(spans) if span[:2] == where), None)
        if j is not None and record["level"] == "entity":
            if j in replaced:
                continue
            start, end = moved[j][:2]
        else:
            before = [j for j, span in enumerate(spans) if span[1] <= record["start"]]
            delta = moved[before[-1]][1] - spans[before[-1]][1] if before else 0
            start, end = record["start"] + delta, record["end"] + delta
        kept.append({**record, "start": start, "end": end})
    return kept


# ---- context level --------------------------------------------------------------------------
def _mask_of(fill_mask, mask_token: Optional[str]) -> str:
    tokenizer = getattr(fill_mask, "tokenizer", None)
    return mask_token or getattr(fill_mask, "mask_token", None) or getattr(tokenizer, "mask_token", None) or "[MASK]"


def _proposals(result) -> List[str]:
    """Words from a fill-mask result: ``(word, score)`` pairs, dicts with ``token_str``, or words."""
    words = []
    for item in result:
        if isinstance(item, dict):
            item = item.get("token_str", item.get("word", ""))
        elif isinstance(item, (tuple, list)):
            item = item[0]
        words.append(str(item).strip())
    return words


def usable(word: str, original: str, mask: str) -> bool:
    """A proposal can replace a word when it is one ASCII token with a letter (as RockNER keeps
    ASCII words), not a sub-word piece or a special token, and differs from the original."""
    return (bool(word) and word.isascii() and not any(ch.isspace() for ch in word) and any(ch.isalpha() for ch in word)
            and not word.startswith("##") and word != mask and not (word[0] in "[<" and word[-1] in "]>")
            and word.lower() != original.lower())


def _pos_tags(pos, tokens: Sentences) -> Sentences:
    if pos is None:
        raise ValueError("the context attack needs POS tags: pos= a list of tag lists, a function of the "
                         "sentences, or a spaCy pipeline")
    if hasattr(pos, "pipe") and hasattr(pos, "vocab"):
        from .taggers import spacy_pos
        pos = spacy_pos(pos)
    tags = pos(tokens) if callable(pos) else pos
    if len(tags) != len(tokens):
        raise ValueError(f"{len(tokens)} sentences but POS tags for {len(tags)}")
    for s, (sentence, sentence_tags) in enumerate(zip(tokens, tags)):
        if len(sentence) != len(sentence_tags):
            raise ValueError(f"sentence {s}: {len(sentence)} tokens but {len(sentence_tags)} POS tags")
    return [list(t) for t in tags]


def context_attack(data, tags=None, fill_mask: Union[FillMask, str, None] = None, pos=None, *, n_candidates: int = 5,
                   max_words: int = 3, ranks: Tuple[int, int] = (51, 100), victim: Optional[Tagger] = None,
                   seed: int = 0, mask_token: Optional[str] = None):
    """RockNER's context-level attack.

    Args:
        data: a ``datasets.Dataset`` (``tokens``, ``ner_tags``; an entity-attacked set keeps
            its records), a Corpus, or token lists (with ``tags``).
        fill_mask: a function ``text with one mask -> [(word, score), ...]`` ranked best
            first, a transformers fill-mask pipeline, or a local model directory.
        pos: POS tags (one list per sentence), a function of the sentences returning them,
            or a spaCy pipeline; words tagged as nouns, verbs, adjectives or adverbs
            (``CONTENT_TAGS``) outside gold entities are the targets.
        n_candidates: candidate sentences per sentence; each masks 1 to ``max_words`` random targets.
        ranks: the 1-based, inclusive rank window the new word is drawn from.
        victim: a tagger ``sentences -> tags``; the candidate where it misses most gold
            entities is kept (ties and no victim: a random candidate).
        seed: each sentence draws from ``random.Random(f"{seed}/{index}")``.
    """
    first, last = ranks
    if not 1 <= first <= last:
        raise ValueError(f"ranks must be (first, last) with 1 <= first <= last, got {ranks}")
    if max_words < 1 or n_candidates < 1:
        raise ValueError("max_words and n_candidates must be at least 1")
    if fill_mask is None:
        raise ValueError("the context attack needs a masked language model: fill_mask= a function, "
                         "a transformers pipeline or a local model directory")
    if isinstance(fill_mask, str) or hasattr(fill_mask, "model"):
        from .taggers import mlm_fill_mask
        fill_mask = mlm_fill_mask(fill_mask, top_k=last)
    mask = _mask_of(fill_mask, mask_token)
    tokens, tags, records = as_lists(data, tags)
    batch = Batch(tokens, tags)
    pos_tags = _pos_tags(pos, tokens)
    memo: Dict[str, List[str]] = {}

    def window(text: str) -> List[str]:
        if text not in memo:
            memo[text] = _proposals(fill_mask(text))[first - 1:last]
        return memo[text]

    rngs, candidates = [], []  # per sentence: its generator and candidate (words, changed positions)
    for s, sentence in enumerate(tokens):
        rng = random.Random(f"{seed}/{s}")
        rngs.append(rng)
        inside = {i for start, end, _ in batch.gold_spans[s] for i in range(start, end)}
        targets = [i for i, tag in enumerate(pos_tags[s]) if tag in CONTENT_TAGS and i not in inside]
        options = []
        for _ in range(n_candidates if targets else 0):
            chosen = sorted(rng.sample(targets, rng.randint(1, min(max_words, len(targets)))))
            words = list(sentence)
            changed = []
            for i in chosen:  # masked in turn, earlier replacements in place
                proposals = [w for w in window(" ".join(words[:i] + [mask] + words[i + 1:]))
                             if usable(w, sentence[i], mask)]
                if proposals:
                    words[i] = rng.choice(proposals)
                    changed.append(i)
            options.append((words, changed))
        candidates.append(options)
    missed = _missed_by(victim, batch, candidates)
    out_tokens = []
    for s, options in enumerate(candidates):
        if not options:
            out_tokens.append(tokens[s])
            continue
        worst = max(missed[s])
        words, changed = options[rngs[s].choice([k for k, m in enumerate(missed[s]) if m == worst])]
        out_tokens.append(words)
        records[s] = records[s] + [{"level": "context", "start": i, "end": i + 1, "original": tokens[s][i],
                                    "replacement": words[i], "label": pos_tags[s][i]} for i in changed]
    return to_dataset(out_tokens, [spans_to_tags(spans, len(t), "bio") for spans, t in zip(batch.gold_spans, tokens)],
                      records)


def _missed_by(victim: Optional[Tagger], batch: Batch, candidates) -> List[List[int]]:
    """For each sentence's candidates, how many gold entities the victim does not predict exactly."""
    if victim is None:
        return [[0] * len(options) for options in candidates]
    flat = [words for options in candidates for words, _ in options]
    predicted = iter(victim(flat) if flat else [])
    missed = []
    for s, options in enumerate(candidates):
        gold = batch.gold_spans[s]
        row = []
        for _ in options:
            found = set(decode(next(predicted), s))
            row.append(sum(span not in found for span in gold))
        missed.append(row)
    return missed


def attack(data, tags=None, level: str = "entity", ratio: float = 1.0, seed: int = 0, dictionary=None, train=None,
           fill_mask=None, pos=None, **context_options):
    """The entity attack, the context attack, or both (entities first, then context words)."""
    if level not in ("entity", "context", "both"):
        raise ValueError(f"level must be 'entity', 'context' or 'both', got {level!r}")
    if level != "context":
        data = entity_attack(data, tags, dictionary, ratio, seed, train)
        tags = None
        if level == "entity":
            return data
        if pos is not None and not callable(pos) and not hasattr(pos, "pipe"):
            raise ValueError("with level='both', pos= must tag the new sentences: give a function or a spaCy "
                             "pipeline, not fixed tag lists")
    return context_attack(data, tags, fill_mask, pos, seed=seed, **context_options)
