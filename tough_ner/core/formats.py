"""Every NER output format to one decoded ``Batch``: the only module that knows formats.

Per sentence, each side (gold or predicted) may be given as
  tags      a list of tags in any scheme the decoder reads (``B-PER``, ``U-LOC``, ...);
  spans     a list of token spans ``(start, end, type)``, end exclusive (tuples, lists, or
            dicts with ``start``, ``end`` and ``type`` or ``label``);
  chars     a record ``{"text": ..., "entities": [{"start", "end", "label"}]}`` of character
            offsets over the sentence text (``text`` defaults to the tokens joined by spaces);
  mentions  a list of ``{"text", "type"}`` without positions (LLM output);
  spacy     a ``spacy.tokens.Doc`` or ``spacy.training.Example`` (its ``reference`` doc for the
            gold side, its ``predicted`` doc for the predictions): its ``ents``, or its span
            group ``doc.spans[spans_key]`` with ``spans_key``.
Each side's format is detected from its first non-empty sentence, or named.

Rules (the metric cards repeat them):
  * Entities are flat: nested or overlapping spans on one side are an error naming the sentence,
    unless ``allow_overlap=True`` keeps those of the sides given as spans, character spans,
    mention lists or spaCy docs (``Batch.overlapping``; the methods defined on flat tags refuse them).
  * Character spans are aligned to the tokens (found left to right in the text, separated by
    whitespace only).  A span that does not start and end on token boundaries is expanded to
    the tokens it touches (``misaligned="snap"``, counted in ``n_snapped``) or refused
    (``misaligned="error"``).
  * A mention is placed on an occurrence of its text in the sentence, starting and ending on
    token boundaries, found by the first rule that finds one: ``exact`` (the text as written,
    whitespace removed), ``normalised`` (``normalised=True``: Unicode NFKC, case folded,
    whitespace removed, punctuation stripped from the edges of the mention and of the tokens;
    with ``case_sensitive=False`` alone, case folded only), ``fuzzy`` (``fuzzy=threshold``:
    the tokens whose normalised text has difflib's ``SequenceMatcher`` ratio >= threshold with
    the mention's, best ratio first).  Each rule runs over every mention before the next.
    ``placement="leftmost"`` (default): longer mentions first, then in the given order, each
    on the leftmost occurrence that overlaps no placed mention, so two predicted "Paris" take
    the first two occurrences.  ``placement="ordered"``: the list follows the text, so mention
    i + 1 is placed after mention i (a repeated mention on its next occurrence); the alignment
    places the most mentions, then the most exact, then the most normalised, then the highest
    summed similarity.  With ``allow_overlap=True``, a mention those rules place nowhere then
    goes inside or across placed mentions, on an occurrence that is not exactly a placed one's
    span (one mention an occurrence), tier after tier: the leftmost, or in an ordered list one
    starting between the starts of its placed neighbours in the list; the flat placement of the
    others is kept.  A mention placed nowhere is *hallucinated* (status ``ungrounded``): a
    false positive without a position, listed in ``Batch.hallucinated``; each placed one's
    status is in ``Batch.mention_status``.
  * A predicted mention list that is not one (text that is not JSON, JSON holding no list,
    mentions without string ``text`` and ``type``) is *unparseable*: scored as predicting
    nothing, listed in ``Batch.unparseable`` and named in one warning, or an error with
    ``strict_json=True``.  A gold mention list must be right.
  * ``type_map`` ({label: type, or None to drop the entity}) renames the types of every side
    not given as tags (e.g. spaCy's OntoNotes labels to CoNLL types); other labels are kept.
"""
from __future__ import annotations

import json
import unicodedata
from bisect import bisect_left, bisect_right
from functools import cached_property, lru_cache
from itertools import accumulate
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from .._util import shown
from .batch import Batch
from .schemes import Span, decode, spans_to_tags

FORMATS = ("tags", "spans", "chars", "mentions", "spacy")
SIDES = {"references": "reference", "predictions": "prediction"}


# ---- detection -------------------------------------------------------------------------
def _is_record(item) -> bool:
    return isinstance(item, dict) or isinstance(item, Mapping)  # the plain dict test first: ABC checks are slow


def _is_spacy(item) -> bool:
    return hasattr(item, "ents") and hasattr(item, "text") or hasattr(item, "predicted") and hasattr(item, "reference")


def detect(sentences: Sequence[Any]) -> str:
    """The format of one side: ``tags``, ``spans``, ``chars``, ``mentions`` or ``spacy``."""
    for sentence in sentences:
        if _is_spacy(sentence):
            return "spacy"
        if isinstance(sentence, Mapping):
            return "chars"
        if isinstance(sentence, str):
            raise ValueError("a sentence is one string: give a list of tags (or spans, or mentions) per sentence")
        if len(sentence) == 0:
            continue
        first = sentence[0]
        if isinstance(first, str):
            return "tags"
        if isinstance(first, Mapping):
            return "spans" if "start" in first else "mentions"
        if isinstance(first, (tuple, list)):
            return "spans"
        raise ValueError(f"cannot tell the format of a sentence starting with {shown(first)}")
    return "spans"  # nothing but empty sentences: no entities, whatever the format


# ---- one sentence of each format to token spans -----------------------------------------
def _label(item: Mapping, sentence: int, what: str) -> str:
    value = item.get("type", item.get("label"))
    if not isinstance(value, str) or not value:
        raise ValueError(f"sentence {sentence}: {what} {shown(dict(item))} has no 'type' or 'label' string")
    return value


def _is_offset(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # JSON's true is an int to Python


def _token_spans(sentence: int, items, length: int) -> List[Span]:
    spans = []
    for item in items:
        if _is_record(item):
            start, end, label = item.get("start"), item.get("end"), _label(item, sentence, "span")
        else:
            if len(item) != 3:
                raise ValueError(f"sentence {sentence}: span {shown(item)} is not (start, end, type)")
            start, end, label = item
        if not (_is_offset(start) and _is_offset(end) and isinstance(label, str)) or not 0 <= start < end <= length:
            raise ValueError(f"sentence {sentence}: span {shown(item)} is not (start, end, type) with "
                             f"0 <= start < end <= {length} (token positions, end exclusive)")
        spans.append((start, end, label))
    return spans


def token_offsets(sentence: int, tokens: Sequence[str], text: str) -> Tuple[List[int], List[int]]:
    """Character start and end of each token in ``text`` (tokens in order, whitespace between)."""
    starts, ends, position = [], [], 0
    for i, token in enumerate(tokens):
        found = text.find(token, position) if token else -1
        if found < 0 or text[position:found].strip():
            raise ValueError(f"sentence {sentence}, token {i} {shown(token)}: not found in the text after character "
                             f"{position} (the text must hold the tokens in order, separated by whitespace)")
        starts.append(found)
        ends.append(found + len(token))
        position = found + len(token)
    return starts, ends


def _char_spans(sentence: int, record, tokens: Sequence[str], misaligned: str, snapped: list) -> List[Span]:
    if not _is_record(record) or not isinstance(record.get("entities", []), (list, tuple)):
        raise ValueError(f"sentence {sentence}: expected {{'text': ..., 'entities': [{{'start', 'end', 'label'}}]}}, "
                         f"got {shown(record)}")
    joined = " ".join(tokens)
    text = record.get("text")
    text = joined if text is None else text
    if text == joined and text.count(" ") == len(tokens) - 1:  # the usual text: no offsets needed
        locate = _joined_locator(text)
    else:  # also checks that the text holds the tokens (a shifted line is an error)
        locate = _offsets_locator(*token_offsets(sentence, tokens, text))
        return [_snap(sentence, item, locate, text, misaligned, snapped) for item in record.get("entities", [])]
    spans, n = [], len(text)
    for item in record.get("entities", []):
        # the usual well-formed, aligned span inline; anything else through _snap (checks, snapping)
        if type(item) is dict:
            start, end, label = item.get("start"), item.get("end"), item.get("type", item.get("label"))
            if (type(start) is int and type(end) is int and type(label) is str and label and 0 <= start < end <= n
                    and (start == 0 or text[start - 1] == " ") and text[start] != " "
                    and (end == n or text[end] == " ") and text[end - 1] != " "):
                first = text.count(" ", 0, start)
                spans.append((first, first + text.count(" ", start, end) + 1, label))
                continue
        spans.append(_snap(sentence, item, locate, text, misaligned, snapped))
    return spans


def _offsets_locator(starts: List[int], ends: List[int]):
    """(first token, end token, on token boundaries) of a character span, from token offsets."""
    def locate(start: int, end: int) -> Tuple[int, int, bool]:
        first = bisect_right(ends, start)       # first token ending after the span starts
        last = bisect_left(starts, end)         # tokens before this one start before the span ends
        return first, last, first < last and starts[first] == start and ends[last - 1] == end
    return locate


def _joined_locator(text: str):
    """The same over tokens joined by single spaces (no token holds a space): a character's
    token is the number of spaces before it."""
    def locate(start: int, end: int) -> Tuple[int, int, bool]:
        first = text.count(" ", 0, start) + (text[start] == " ")
        last = text.count(" ", 0, end - 1) + 1
        aligned = ((start == 0 or text[start - 1] == " ") and text[start] != " "
                   and (end == len(text) or text[end] == " ") and text[end - 1] != " ")
        return first, last, aligned
    return locate


def _snap(sentence, item, locate, text, misaligned, snapped) -> Span:
    """A character span as the token span it covers: the tokens it touches."""
    start, end = (item.get("start"), item.get("end")) if _is_record(item) else (None, None)
    if not (_is_offset(start) and _is_offset(end)) or not 0 <= start < end <= len(text):
        raise ValueError(f"sentence {sentence}: character span {shown(item)} needs integer 'start' < 'end' within "
                         f"the text ({len(text)} characters)")
    label = _label(item, sentence, "character span")
    first, last, aligned = locate(start, end)
    if first >= last:
        raise ValueError(f"sentence {sentence}: character span {start}-{end} {shown(text[start:end])} covers no token")
    if not aligned:
        if misaligned == "error":
            raise ValueError(f"sentence {sentence}: character span {start}-{end} {shown(text[start:end])} does not "
                             f"fall on token boundaries (misaligned='snap' expands it to the tokens it touches)")
        snapped.append({"sentence": sentence, "start": start, "end": end, "label": label,
                        "tokens": [first, last]})
    return first, last, label


# ---- mention lists: placing each mention on tokens ----------------------------------------
PLACEMENTS = ("leftmost", "ordered")


def normalise(text: str) -> str:
    """A text as normalised matching compares it: Unicode NFKC, case folded, whitespace removed."""
    if text.isascii():  # NFKC changes no ASCII text, and casefold is lower there
        return "".join(text.lower().split())
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


@lru_cache(maxsize=1 << 16)  # a corpus repeats its tokens; the cache is bounded
def _core(text: str) -> Tuple[int, int]:
    """Where ``text`` starts and ends once the punctuation (Unicode category P*) at its edges is left out."""
    start, end = 0, len(text)
    if end and text[0].isalnum() and text[-1].isalnum():  # the usual token: nothing to strip
        return start, end
    while start < end and unicodedata.category(text[start])[0] == "P":
        start += 1
    while end > start and unicodedata.category(text[end - 1])[0] == "P":
        end -= 1
    return start, end


def _strip_punctuation(text: str) -> str:
    start, end = _core(text)
    return text[start:end]


class _Writing:
    """One way of writing a sentence's tokens (as given, or normalised): their pieces joined,
    and which character positions start and end a token, for finding a mention's occurrences
    on token boundaries.  With ``strip``, a token's own edge punctuation is outside it, and a
    token of punctuation only can neither start nor end an occurrence."""

    def __init__(self, pieces: Sequence[str], strip: bool = False):
        self.pieces = pieces
        self.joined = "".join(pieces)
        if not strip:  # as comprehensions: this runs for every sentence
            bounds = list(accumulate(map(len, pieces), initial=0))
            self.starts = {b: i for i, b in reversed(list(enumerate(bounds[:-1])))}
            self.ends = {bounds[i + 1]: i + 1 for i, piece in enumerate(pieces) if piece}
            return
        # the tokens' cores are disjoint: one token per position; one of punctuation only has no core
        self.starts, self.ends, at = {}, {}, 0  # char -> the token starting there / after the one ending there
        for i, piece in enumerate(pieces):
            if piece[:1].isalnum() and piece[-1:].isalnum():  # the usual token: its core is all of it
                start, end = 0, len(piece)
            else:
                start, end = _core(piece)
            if start < end:
                self.starts[at + start], self.ends[at + end] = i, i + 1
            at += len(piece)

    def occurrences(self, needle: str):
        """Token spans ``(start, end)`` whose text is ``needle``, left to right."""
        at = self.joined.find(needle) if needle else -1
        while at >= 0:
            a, b = self.starts.get(at), self.ends.get(at + len(needle))
            if a is not None and b is not None and a < b:
                yield a, b
            at = self.joined.find(needle, at + 1)

    def near(self, needle: str, threshold: float):
        """Token spans whose text has a ``difflib`` similarity ratio >= ``threshold`` with
        ``needle``, best first (then leftmost, then shortest): ``[(ratio, start, end)]``."""
        from difflib import SequenceMatcher

        matcher = SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(needle)
        longest = len(needle) * (2 - threshold) / threshold  # ratio <= 2 * shorter / (sum of lengths)
        found = []
        ends = sorted(self.ends.items())
        end_chars = [char for char, _ in ends]
        for start_char, a in sorted(self.starts.items()):
            for end_char, b in ends[bisect_right(end_chars, start_char):]:
                if b <= a:
                    continue
                if end_char - start_char > longest:
                    break
                matcher.set_seq1(self.joined[start_char:end_char])
                if (matcher.real_quick_ratio() >= threshold and matcher.quick_ratio() >= threshold
                        and matcher.ratio() >= threshold):
                    found.append((-matcher.ratio(), a, b))
        return [(-r, a, b) for r, a, b in sorted(found)]


class _Placer:
    """The tiers of one sentence: exact (whitespace removed), then normalised (``normalise``:
    NFKC, case, edge punctuation; or case alone with ``case_sensitive=False``), then fuzzy
    (``fuzzy``: a threshold on difflib's ratio over normalised text).  Each tier's writing of
    the tokens is made the first time a mention needs it."""

    def __init__(self, tokens: Sequence[str], case_sensitive: bool, normalised: bool, fuzzy: Optional[float]):
        self.tokens = tokens
        joined = "".join(tokens)
        spaced = "".join(joined.split()) != joined  # tokens holding whitespace: rare, removed
        self.exact = _Writing(["".join(token.split()) for token in tokens] if spaced else tokens)
        if normalised or fuzzy is not None:
            self.fold, self.strip = normalise, True
        elif not case_sensitive:
            self.fold, self.strip = str.lower, False
        else:
            self.fold = None
        self.fuzzy = fuzzy

    @property
    def tiers(self) -> List[Tuple[str, int]]:
        """The tiers in order, each with the needle it reads (0: as written, 1: folded)."""
        return [("exact", 0)] + ([("normalised", 1)] if self.fold is not None else []) + (
            [("fuzzy", 1)] if self.fuzzy is not None else [])

    @cached_property
    def folded(self) -> _Writing:
        pieces = self.exact.pieces
        if self.fold is normalise and self.exact.joined.isascii():  # whitespace already out: lower case is all
            return _Writing([piece.lower() for piece in pieces], True)
        return _Writing([self.fold(piece) for piece in pieces], self.strip)

    def needles(self, text: str) -> Tuple[str, Optional[str]]:
        """The mention as each tier compares it: exact, and folded (None without that tier)."""
        folded = None
        if self.fold is not None:
            folded = self.fold(text)
            folded = _strip_punctuation(folded) if self.strip else "".join(folded.split())
        return "".join(text.split()), folded

    def candidates(self, exact: str, folded: Optional[str]) -> List[Tuple[str, int, int, float]]:
        """``[(status, start, end, similarity)]`` of one mention: every exact occurrence, then
        the folded ones, then the fuzzy ones (similarity 1 but for fuzzy ones)."""
        found = [("exact", a, b, 1.0) for a, b in self.exact.occurrences(exact)]
        seen = {(a, b) for _, a, b, _ in found}
        if folded is not None:
            found += [("normalised", a, b, 1.0) for a, b in self.folded.occurrences(folded) if (a, b) not in seen]
            seen.update((a, b) for _, a, b, _ in found)
        if self.fuzzy is not None and folded:
            found += [("fuzzy", a, b, r) for r, a, b in self.folded.near(folded, self.fuzzy) if (a, b) not in seen]
        return found


def _place_leftmost(placer: _Placer, needles: list, n_tokens: int) -> dict:
    """Tier after tier, longer mentions first then in the given order, each mention on the
    leftmost free occurrence (fuzzy: the free candidate of best ratio)."""
    taken = [False] * n_tokens
    placed = {}
    for status, which in placer.tiers:
        waiting = [k for k in range(len(needles)) if k not in placed and needles[k][which]]
        for k in sorted(waiting, key=lambda k: -len(needles[k][which])):
            needle = needles[k][which]
            if status == "exact":
                spans = placer.exact.occurrences(needle)
            elif status == "normalised":
                spans = placer.folded.occurrences(needle)
            else:
                spans = ((a, b) for _, a, b in placer.folded.near(needle, placer.fuzzy))
            for a, b in spans:
                if not any(taken[a:b]):
                    taken[a:b] = [True] * (b - a)
                    placed[k] = (a, b, status)
                    break
    return placed


def _place_ordered(placer: _Placer, needles: list) -> dict:
    """Placements in the order of the list (each mention after the previous placed one): the
    most mentions placed, then the most exact, then the most normalised, then the highest
    summed fuzzy similarity; ties go to placing the earlier mention, on its earliest occurrence."""
    placed, cursor = {}, 0
    for k, (exact, _) in enumerate(needles):  # the usual case: every mention exact, in order
        place = next((span for span in placer.exact.occurrences(exact) if span[0] >= cursor), None)
        if place is None:
            break
        placed[k] = (*place, "exact")
        cursor = place[1]
    else:
        return placed
    options = [sorted(placer.candidates(*needle), key=lambda o: (o[1], o[2])) for needle in needles]
    return _earliest_alignment(options) or _best_alignment(options)


def _earliest_alignment(options: list) -> Optional[dict]:
    """The earliest placement of every mention in order, when it is the best one: each mention
    has one status (exact or normalised) wherever it goes, so every complete placement scores
    the same.  None when that does not hold or no complete placement exists."""
    if not all(found and len({status for status, *_ in found}) == 1 and found[0][0] != "fuzzy"
               for found in options):
        return None
    placed, cursor = {}, 0
    for k, found in enumerate(options):
        pick = next(((a, b, status) for status, a, b, _ in found if a >= cursor), None)
        if pick is None:
            return None
        placed[k], cursor = pick, pick[1]
    return placed


def _best_alignment(options: list) -> dict:
    """The best placement in order (``_place_ordered``), by dynamic programming over the
    cursor: each mention's candidates ``[(status, start, end, similarity)]`` sorted by position."""
    w = len(options) + 1  # one score: placed, then exact, then normalised, then similarity (each < w of the former)
    value = {"exact": w ** 3 + w ** 2, "normalised": w ** 3 + w, "fuzzy": w ** 3}
    cursors = sorted({0} | {b for found in options for _, _, b, _ in found})
    best = dict.fromkeys(cursors, 0.0)  # the best score of the mentions after the current one, per cursor
    choices = []
    for found in reversed(options):
        now, choice = {}, {}
        for c in cursors:
            top, pick = best[c], None
            for status, a, b, similarity in found:
                if a >= c:
                    score = value[status] + (similarity if status == "fuzzy" else 0) + best[b]
                    if score > top or score == top and pick is None:
                        top, pick = score, (a, b, status)
            now[c], choice[c] = top, pick
        best = now
        choices.append(choice)
    placed, cursor = {}, 0
    for k, choice in enumerate(reversed(choices)):
        pick = choice[cursor]
        if pick is not None:
            placed[k] = pick
            cursor = pick[1]
    return placed


def _place_overlapping(placer: _Placer, needles: list, placed: dict, ordered: bool) -> None:
    """``allow_overlap``: each mention the flat placement left unplaced goes on an occurrence
    inside or across placed mentions, never exactly on one's span (one mention an occurrence),
    tier after tier; ``ordered``: in the list's order, starting between the starts of its
    placed neighbours in the list, else leftmost, longer mentions first."""
    taken = {(a, b) for a, b, _ in placed.values()}
    waiting = [k for k in range(len(needles)) if k not in placed]
    options = {k: placer.candidates(*needles[k]) for k in waiting}
    for status, _ in placer.tiers:
        waiting = [k for k in waiting if k not in placed]
        for k in waiting if ordered else sorted(waiting, key=lambda k: -len(needles[k][0])):
            low, high = 0, len(placer.tokens)
            if ordered:
                low = max((placed[j][0] for j in placed if j < k), default=low)
                high = min((placed[j][0] for j in placed if j > k), default=high)
            pick = next(((a, b) for found, a, b, _ in options[k]
                         if found == status and low <= a <= high and (a, b) not in taken), None)
            if pick is not None:
                placed[k] = (*pick, status)
                taken.add(pick)


def _mention_list(value) -> Tuple[Optional[list], Optional[str]]:
    """(the mentions, None), or (None, why the value is no mention list): a list of
    ``{"text", "type"}`` records with string values, given as such or as its JSON text (an
    LLM's raw output), or an object holding one list (``{"entities": [...]}``)."""
    if isinstance(value, str):
        from .corpus import refuse_deep_nesting

        try:
            with refuse_deep_nesting("the mention list"):
                value = json.loads(value)
        except json.JSONDecodeError as error:
            return None, f"not JSON ({error.msg})"
        except ValueError as error:  # too deep: unparseable like any other answer that is no list
            return None, str(error)
    if type(value) is not list and _is_record(value):
        lists = [item for item in value.values() if isinstance(item, list)]
        if len(lists) == 1:
            value = lists[0]
    if not isinstance(value, (list, tuple)):
        return None, f"holds no list of mentions ({type(value).__name__})"
    for item in value:
        if not (_is_record(item) and isinstance(item.get("text"), str)):
            return None, f"mention {shown(item, 80)} is not {{'text': ..., 'type': ...}}"
        label = item.get("type", item.get("label"))
        if not isinstance(label, str) or not label:
            return None, f"mention {shown(item, 80)} has no 'type' or 'label' string"
        hidden = next((c for c in label if not c.isprintable()), None)
        if hidden is not None:  # a type that would print as another one (schemes.parse_label refuses it)
            return None, f"mention {shown(item, 80)} has a type holding U+{ord(hidden):04X}, a character not shown"
    return value, None


def _mention_spans(items, tokens: Sequence[str], placement: str, case_sensitive: bool, normalised: bool,
                   fuzzy: Optional[float], hallucinated: list, statuses: list,
                   allow_overlap: bool = False) -> List[Span]:
    """Place each mention (module docstring); the unplaced go to ``hallucinated``, the status
    of each placed one to ``statuses`` (``{(start, end): status}``)."""
    if not items:
        hallucinated.append([])
        statuses.append({})
        return []
    placer = _Placer(tokens, case_sensitive, normalised, fuzzy)
    needles = [placer.needles(item["text"]) for item in items]
    if placement == "ordered":
        placed = _place_ordered(placer, needles)
    else:
        placed = _place_leftmost(placer, needles, len(tokens))
    if allow_overlap and len(placed) < len(needles):
        _place_overlapping(placer, needles, placed, placement == "ordered")
    labels = [item.get("type", item.get("label")) for item in items]
    hallucinated.append([{"text": item["text"], "type": labels[k]} for k, item in enumerate(items) if k not in placed])
    statuses.append({(a, b): status for a, b, status in placed.values()})
    return [(a, b, labels[k]) for k, (a, b, _) in placed.items()]


def _spacy_doc(item, side: str):
    """The doc of a side: a Doc itself, or an Example's reference (gold) or predicted doc."""
    return (item.reference if side == "references" else item.predicted) if hasattr(item, "predicted") else item


def _spacy_spans(sentence: int, item, side: str, tokens: Optional[Sequence[str]], misaligned: str,
                 snapped: list, spans_key: Optional[str] = None) -> Tuple[List[str], List[Span], bool]:
    """(tokens, spans, whether the doc has the span group ``spans_key``): the doc's ``ents``, or
    with ``spans_key`` its span group of that name (none when the doc has no such group)."""
    doc = _spacy_doc(item, side)
    has_group = spans_key is not None and spans_key in doc.spans
    found = doc.ents if spans_key is None else doc.spans[spans_key] if has_group else ()
    words = [token.text for token in doc]
    if tokens is None or list(tokens) == words:
        return words, [(span.start, span.end, span.label_) for span in found], has_group
    record = {"text": doc.text, "entities": [{"start": span.start_char, "end": span.end_char, "label": span.label_}
                                             for span in found]}
    return list(tokens), _char_spans(sentence, record, tokens, misaligned, snapped), has_group


def _flat(sentence: int, spans: List[Span], side: str) -> List[Span]:
    spans = sorted(spans)
    for (a, b, t), (c, d, u) in zip(spans, spans[1:]):
        if c < b:
            raise ValueError(f"sentence {sentence}: {SIDES[side]} spans {a}-{b} {t} and {c}-{d} {u} overlap or nest; "
                             "tough-ner scores flat entities only (keep one of them, or pass allow_overlap=True "
                             "for span scores, match_scores and TMR)")
    return spans


def _sorted_spans(sentence: int, spans: List[Span], side: str) -> List[Span]:
    """A sentence's spans sorted, overlapping or nested ones kept (``allow_overlap``); a span
    given twice is an error (spaCy's scorer would count it once: a set)."""
    spans = sorted(spans)
    for (a, b, t), same in zip(spans, spans[1:]):
        if same == (a, b, t):
            raise ValueError(f"sentence {sentence}: {SIDES[side]} span {a}-{b} {t} is given twice")
    return spans


def first_overlap(spans_per_sentence: Sequence[Sequence[Span]]) -> Optional[Tuple[int, Span, Span]]:
    """(sentence, span, span) of the first two sorted spans that overlap or nest, or None when
    every sentence is flat."""
    for s, spans in enumerate(spans_per_sentence):
        end = None
        for span in spans:
            if end is not None and span[0] < end[1]:
                return s, end, span
            if end is None or span[1] > end[1]:
                end = span  # the span reaching furthest so far
    return None


def _flat_projection(spans: Sequence[Span]) -> List[Span]:
    """The sorted spans that overlap no earlier kept one: a flat tagging of an overlapping
    sentence (the tags the batch keeps; the spans it scores are all of them)."""
    kept: List[Span] = []
    for span in spans:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


# ---- the conversion layer ----------------------------------------------------------------
class Converted:
    """One side as token spans per sentence, with what the conversion noticed."""

    def __init__(self, spans, hallucinated=None, snapped=(), tags=None, status=None, unparseable=()):
        self.spans: List[List[Span]] = spans
        self.tags: Optional[Sequence[Sequence[str]]] = tags  # the tags as given, for a side given as tags
        self.hallucinated: Optional[List[List[dict]]] = hallucinated
        self.snapped: List[dict] = list(snapped)
        self.status: Optional[List[dict]] = status  # mention lists: per sentence, {(start, end): status}
        self.unparseable: List[dict] = list(unparseable)  # mention lists: {"sentence", "problem"}


def _check_mention_options(placement: str, fuzzy) -> None:
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    if fuzzy is not None and (isinstance(fuzzy, bool) or not isinstance(fuzzy, (int, float)) or not 0 < fuzzy <= 1):
        raise ValueError(f"fuzzy is a similarity threshold in (0, 1] (difflib's ratio) or None, got {fuzzy!r}")


def convert(tokens: Optional[Sequence[Sequence[str]]], sentences: Sequence[Any], format: Optional[str] = None,
            side: str = "predictions", misaligned: str = "snap", case_sensitive: bool = True,
            type_map: Optional[Mapping[str, Optional[str]]] = None, placement: str = "leftmost",
            normalised: bool = False, fuzzy: Optional[float] = None, strict_json: bool = False,
            allow_overlap: bool = False, spans_key: Optional[str] = None) -> Tuple[List[List[str]], Converted]:
    """(tokens, token spans of one side).  ``tokens`` may be None for spaCy docs (taken from them);
    ``allow_overlap`` keeps overlapping or nested spans (an error otherwise); ``spans_key``:
    spaCy docs give their span group of that name instead of their ``ents``."""
    format = format or detect(sentences)
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    if misaligned not in ("snap", "error"):
        raise ValueError(f"misaligned must be 'snap' or 'error', got {misaligned!r}")
    _check_mention_options(placement, fuzzy)
    if tokens is None and format != "spacy":
        raise ValueError("tokens= is required (only spaCy docs carry their own tokens)")
    if tokens is not None and len(tokens) != len(sentences):
        raise ValueError(f"{len(tokens)} token sentences but {len(sentences)} {SIDES[side]} sentences")
    out_tokens: List[List[str]] = [] if tokens is None else list(tokens)
    spans: List[List[Span]] = []
    hallucinated: Optional[list] = [] if format == "mentions" else None
    status: Optional[list] = [] if format == "mentions" else None
    unparseable: list = []
    snapped: list = []
    groups = 0  # spaCy docs holding the span group spans_key
    for s, sentence in enumerate(sentences):
        words = None if tokens is None else tokens[s]
        if format == "tags":
            if isinstance(sentence, str) or len(sentence) != len(words):
                raise ValueError(f"sentence {s}: {len(words)} tokens but "
                                 f"{'one string' if isinstance(sentence, str) else len(sentence)} {SIDES[side]} tags")
            found = decode(sentence, s)
        elif format == "spans":
            found = _token_spans(s, sentence, len(words))
        elif format == "chars":
            found = _char_spans(s, sentence, words, misaligned, snapped)
        elif format == "mentions":
            items, problem = _mention_list(sentence)
            if problem is not None:
                if side == "references" or strict_json:
                    raise ValueError(f"sentence {s}: {problem}" +
                                     ("" if side == "references" else " (strict_json)"))
                unparseable.append({"sentence": s, "problem": problem})
                items = ()
            found = _mention_spans(items, words, placement, case_sensitive, normalised, fuzzy, hallucinated, status,
                                   allow_overlap)
        else:
            if not _is_spacy(sentence):
                raise ValueError(f"sentence {s}: expected a spaCy Doc or Example, got {type(sentence).__name__}")
            words, found, has_group = _spacy_spans(s, sentence, side, words, misaligned, snapped, spans_key)
            groups += has_group
            if tokens is None:
                out_tokens.append(words)
        if type_map is not None and format != "tags":
            found = [(a, b, type_map.get(t, t)) for a, b, t in found if type_map.get(t, t) is not None]
            if hallucinated is not None:
                hallucinated[-1] = [{**m, "type": type_map.get(m["type"], m["type"])} for m in hallucinated[-1]
                                    if type_map.get(m["type"], m["type"]) is not None]
        spans.append(found if format == "tags" else (_sorted_spans if allow_overlap else _flat)(s, found, side))
    if spans_key is not None and format == "spacy" and sentences and not groups:  # a misspelt key, not empty docs
        names = sorted({key for sentence in sentences for key in _spacy_doc(sentence, side).spans})
        raise ValueError(f"spans_key={spans_key!r}: no {SIDES[side]} doc has that span group (their groups: "
                         f"{', '.join(map(repr, names)) or 'none'})")
    return out_tokens, Converted(spans, hallucinated, snapped, sentences if format == "tags" else None, status,
                                 unparseable)


def to_tags(tokens: Optional[Sequence[Sequence[str]]], sentences: Sequence[Any], format: Optional[str] = None,
            scheme: str = "bio", **options) -> List[List[str]]:
    """One side in any format as tags (IOB2 by default) over ``tokens``.  Mention lists lose
    their hallucinated mentions here: use ``as_batch`` to score them."""
    tokens, converted = convert(tokens, sentences, format, **options)
    return [spans_to_tags(spans, len(words), scheme) for spans, words in zip(converted.spans, tokens)]


def as_batch(tokens: Optional[Sequence[Sequence[str]]], references: Sequence[Any],
             predictions: Optional[Sequence[Any]] = None, reference_format: Optional[str] = None,
             prediction_format: Optional[str] = None, *, misaligned: str = "snap", case_sensitive: bool = True,
             type_map: Optional[Mapping[str, Optional[str]]] = None, documents: Optional[Sequence] = None,
             placement: str = "leftmost", normalised: bool = False, fuzzy: Optional[float] = None,
             strict_json: bool = False, source: Optional[str] = None, scheme: str = "auto", mode: str = "lenient",
             repair: str = "conlleval", allow_overlap: bool = False, spans_key: Optional[str] = None) -> Batch:
    """The decoded ``Batch`` of gold and predictions given in any format (module docstring).

    ``scheme``, ``mode``, ``repair``: how the sides given as tags are decoded (``Batch``).

    ``documents``: a document id per sentence (resampling by document).  The batch carries ``hallucinated`` (per sentence, the predicted mentions placed nowhere;
    None unless predictions are mention lists), ``snapped`` (character spans expanded to token
    boundaries: sentence, offsets, label, token span) and ``formats``.  Predicted mention lists
    also give ``mention_status`` (per sentence, ``{(start, end): status}`` of the placed ones)
    and ``unparseable`` (``{"sentence", "problem"}`` of each prediction that is no mention
    list, scored as predicting nothing; ``strict_json=True`` makes it an error instead).
    ``source``: the file the predictions were read from, one sentence a line (warnings name its lines).
    ``allow_overlap``: keep overlapping or nested spans of the sides given as spans, character
    spans, mention lists or spaCy docs (``Batch.overlapping`` names the first of each side;
    ``Batch.require_flat``).  ``spans_key``: spaCy docs give their span group of that name
    (``doc.spans[spans_key]``, as spaCy's span categorizer writes and its scorer reads; a doc
    without it has none) instead of ``doc.ents``; a key no doc of a side has is an error.
    """
    options = dict(misaligned=misaligned, case_sensitive=case_sensitive, type_map=type_map, placement=placement,
                   normalised=normalised, fuzzy=fuzzy, strict_json=strict_json, allow_overlap=allow_overlap,
                   spans_key=spans_key)
    tokens, gold = convert(tokens, references, reference_format, "references", **options)
    pred = None
    if predictions is not None:
        _, pred = convert(tokens, predictions, prediction_format, "predictions", **options)
    if gold.hallucinated is not None and any(gold.hallucinated):
        s = next(s for s, items in enumerate(gold.hallucinated) if items)
        raise ValueError(f"sentence {s}: gold mention {shown(gold.hallucinated[s][0])} does not occur in the sentence")
    overlapping = {} if not allow_overlap else {
        name: found for name, side in (("gold", gold), ("pred", pred))
        if side is not None and side.tags is None and (found := first_overlap(side.spans)) is not None}
    # A side given as tags keeps them (the canonical sentence order hashes the gold tags); others are
    # written in IOB2, which the decoder reads back as the same flat spans (an overlapping side: its
    # flat projection, the spans themselves set below).
    tags = [None if side is None else side.tags if side.tags is not None else
            [spans_to_tags(_flat_projection(spans) if name in overlapping else spans, len(words))
             for spans, words in zip(side.spans, tokens)] for name, side in (("gold", gold), ("pred", pred))]
    given_as_tags = [name for name, side in zip(("gold", "pred"), (gold, pred))
                     if side is not None and side.tags is not None]
    batch = Batch(tokens, tags[0], tags[1], documents, scheme=scheme, mode=mode, repair=repair, declared=given_as_tags)
    batch.formats = {"references": reference_format or detect(references),
                     "predictions": None if predictions is None else prediction_format or detect(predictions)}
    if spans_key is not None and "spacy" not in batch.formats.values():
        raise ValueError(f"spans_key={spans_key!r} names a span group of spaCy docs, but no side is given as spaCy "
                         f"docs (formats: {batch.formats['references']}, {batch.formats['predictions']})")
    if overlapping:
        _keep_overlapping(batch, {name: side.spans for name, side in (("gold", gold), ("pred", pred))
                                  if name in overlapping}, overlapping)
    batch.snapped = [{**item, "side": "reference"} for item in gold.snapped] + (
        [] if pred is None else [{**item, "side": "prediction"} for item in pred.snapped])
    if pred is not None and pred.hallucinated is not None:
        _set_hallucinated(batch, pred.hallucinated)
        batch.mention_status = pred.status
        batch.unparseable = pred.unparseable
        if pred.unparseable:
            _warn_unparseable(pred.unparseable, source)
    return batch


def _warn_unparseable(unparseable: List[dict], source: Optional[str]) -> None:
    from .checks import warn_input

    where = (lambda s: f"line {s + 1}") if source else (lambda s: f"sentence {s}")
    shown = "; ".join(f"{where(item['sentence'])}: {item['problem']}" for item in unparseable[:5])
    more = f"; and {len(unparseable) - 5} more" if len(unparseable) > 5 else ""
    warn_input(f"{source or 'predictions'}: {len(unparseable)} unparseable mention list(s), each scored as "
               f"predicting nothing (n_unparseable; strict_json=True or --strict-json stops instead): "
               f"{shown}{more}", stacklevel=3)


def _keep_overlapping(batch: Batch, spans: dict, overlapping: dict) -> None:
    """Make ``spans`` ({side: per-sentence spans, some overlapping}) the spans the batch scores,
    in place of those decoded from its tags (their flat projection)."""
    for side, found in spans.items():
        batch.__dict__["gold_spans" if side == "gold" else "pred_spans"] = found
        batch.__dict__.pop("_arrays_" + side, None)
        batch.__dict__["_invalid_" + side] = 0  # written from spans: no tag to be invalid
    batch.overlapping = overlapping
    _add_types(batch, {t for found in spans.values() for sentence in found for _, _, t in sentence})


def _set_hallucinated(batch: Batch, hallucinated: List[List[dict]]) -> None:
    batch.hallucinated = hallucinated
    _add_types(batch, {m["type"] for items in hallucinated for m in items})  # a per-type row for those types too


def _add_types(batch: Batch, types: set) -> None:
    """The batch's types with ``types`` added (a type its tags never had), in sorted order."""
    if types - set(batch.types):
        batch.types = sorted(set(batch.types) | types)
        batch.type_index = {t: i for i, t in enumerate(batch.types)}



def select(batch: Batch, rows: Sequence[int]) -> Batch:
    """The batch of some of ``batch``'s sentences, keeping what ``as_batch`` recorded."""
    part = Batch([batch.tokens[i] for i in rows], [batch.references[i] for i in rows],
                 None if batch.predictions is None else [batch.predictions[i] for i in rows],
                 None if batch.documents is None else [batch.documents[i] for i in rows],
                 **batch.decoding_options())
    part.formats = batch.formats
    if batch.hallucinated is not None:
        _set_hallucinated(part, [batch.hallucinated[i] for i in rows])
    where = {row: k for k, row in enumerate(rows)}
    part.snapped = [{**item, "sentence": where[item["sentence"]]} for item in batch.snapped if item["sentence"] in where]
    if batch.overlapping:
        spans = {side: [(batch.gold_spans if side == "gold" else batch.pred_spans)[i] for i in rows]
                 for side in batch.overlapping}
        overlapping = {side: found for side, part_spans in spans.items()
                       if (found := first_overlap(part_spans)) is not None}
        if overlapping:
            _keep_overlapping(part, {side: spans[side] for side in overlapping}, overlapping)
    if batch.mention_status is not None:
        part.mention_status = [batch.mention_status[i] for i in rows]
        part.unparseable = [{**item, "sentence": where[item["sentence"]]} for item in batch.unparseable
                            if item["sentence"] in where]
    return part


def read_jsonl(path, raw: bool = False) -> List[Any]:
    """One sentence per line of a JSON Lines file: the sentence's value in its format (a list
    of tags, of token spans, of mentions, or a character-span record).  ``raw``: each line's
    text as it is (mention lists: ``as_batch`` parses them and counts what does not parse)."""
    import os

    from .corpus import refuse_deep_nesting

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such JSONL file: {path}")
    sentences = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if raw:
                sentences.append(line.rstrip("\r\n"))
                continue
            if not line.strip():
                raise ValueError(f"{path} line {number}: blank line (one JSON value per sentence, no blank lines)")
            try:
                with refuse_deep_nesting(f"{path} line {number}"):
                    sentences.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path} line {number}: not JSON ({error.msg})") from None
    return sentences


def batch_from_files(tokens: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], path, format: str,
                     **options) -> Batch:
    """Gold tags read elsewhere (a CoNLL file) and predictions from a JSONL file in ``format``;
    an error about sentence k names the file's line k + 1.  A line of a mention list that does
    not parse, or holds no list, is counted as unparseable (a warning names its line) unless
    ``strict_json=True``."""
    import os
    import re

    predictions = read_jsonl(path, raw=format == "mentions")
    try:
        return as_batch(tokens, gold, predictions, "tags", format, source=os.fspath(path), **options)
    except ValueError as error:
        message = re.sub(r"^sentence (\d+)", lambda m: f"line {int(m.group(1)) + 1} (sentence {m.group(1)})",
                         str(error))
        raise ValueError(f"{path}: {message}") from None


def system_predictions(test, path, pred_format: str = "tags", columns=None, test_name: str = "the test set",
                       **options):
    """One system's predictions for ``test`` (a Corpus) from ``path``: JSON Lines in
    ``pred_format`` (also any ``.jsonl`` file; ``options`` go to ``as_batch``), else a CoNLL file
    of token ... gold prediction or token prediction (``columns`` to choose) whose tokens and gold
    must be the test set's, an error naming the first difference otherwise (``test_name``: how
    the error names the test set)."""
    from .checks import first_difference
    from .corpus import read_system, source_name

    if pred_format != "tags" or str(path).endswith(".jsonl"):
        return batch_from_files(test.tokens, test.tags, path, pred_format, documents=test.documents, **options)
    predicted = read_system(path, columns)
    if not len(predicted):
        raise ValueError(f"{source_name(path)} holds no sentence")
    where = first_difference(predicted.path, test.path, token=(predicted.tokens, test.tokens),
                             gold=(predicted.tags, test.tags))
    if where:  # the same tokens with other gold: a prediction column read as gold; else: a file cut short
        hint = (f"was a prediction file given as {test_name}?" if ": gold " in where else
                "is one of them cut short, or of another test set?")
        raise ValueError(f"{predicted.path} does not hold the tokens and gold tags of {test_name} {test.path}: "
                         f"{where} ({hint} A system file is read as token ... gold prediction, or token "
                         f"prediction; choose its columns with --columns)")
    return predicted.predictions[0]
