"""The glossary: one plain-language line per measure and subset, in one place.

``TERMS`` holds the text; ``terms_of(key)`` splits a flat result key (``ter_unseen_I``,
``recall_tcm_unseen``, ``eLen_2_f1``, ``nrb_n_type_errors``, ...) into the terms it is made
of, and ``explain(key)`` says it in words.  ``tough-ner explain``, the HTML report, the Spaces
and the metric-card test read this module.
"""
from __future__ import annotations

import difflib
import re
from typing import Dict, List, Tuple

# term id -> (name as shown, one plain line).  Group order is the order of the printed glossary.
TERMS: Dict[str, Tuple[str, str]] = {
    # ---- scores
    "precision": ("precision", "share of predicted entities that are right (exact span and type)."),
    "recall": ("recall", "share of gold entities found with exactly the right span and type."),
    "f1": ("F1", "harmonic mean of precision and recall (exact span and type), as conlleval and seqeval."),
    "accuracy": ("accuracy", "share of target entities found with the right boundaries and a matching type."),
    "n": ("n", "how many items (tokens, mentions or entities) a rate is computed over; "
               "a rate over few items is uncertain, and an empty subset gives NaN with n = 0."),
    "f_beta": ("F-beta", "(1 + β²)·P·R / (β²·P + R) (exact span and type): recall weighs β times as much as "
                         "precision; given beside F1 when β is not 1."),
    "macro": ("macro average", "the unweighted mean over entity types (those with a gold or a predicted mention) "
                               "of each type's score, as seqeval's classification_report: a type's precision is 0 "
                               "without predictions, its recall 0 without gold mentions."),
    "weighted": ("weighted average", "the mean over entity types of each type's score, weighted by its gold "
                                     "mentions (support), as seqeval's classification_report; 0 without gold "
                                     "mentions."),
    # ---- tag sequences
    "invalid_transitions": ("invalid transitions", "pairs of adjacent tags (each sentence preceded and followed "
                                                   "by O) that the declared tag scheme forbids, e.g. I-X after O in "
                                                   "IOB2, as seqscore's validate counts them; the default scheme "
                                                   "(auto) counts I-/E-X not continuing a B-/I-X span."),
    "gold": ("gold", "the gold (reference) tags."),
    "pred": ("pred", "the predicted tags."),
    # ---- HardEval
    "ter": ("TER", "token error rate: share of tokens whose predicted label (with its type and "
                   "B/I/L/U position) differs from the gold label; lower is better."),
    "hardeval": ("hardeval score", "mean of the TER on unseen tokens and the TER on diff tokens "
                                   "(HardEval's single number; lower is better)."),
    "all": ("all tokens", "every test token."),
    "unseen": ("unseen", "test tokens whose word never occurs in the training data (unseen-I + unseen-O)."),
    "unseen_I": ("unseen-I", "test tokens never seen in training that are part of a gold entity."),
    "unseen_O": ("unseen-O", "test tokens never seen in training that are outside any gold entity."),
    "diff": ("diff", "seen test tokens whose gold label differs from their usual training label "
                     "(diff-I + diff-O + diff-E)."),
    "diff_I": ("diff-I", "test tokens inside a gold entity whose word is usually O in training."),
    "diff_O": ("diff-O", "test tokens outside entities whose word is usually part of an entity in training."),
    "diff_E": ("diff-E", "test tokens of a gold type X whose word is usually an entity in training, "
                         "but more often of another type than X."),
    "strict": ("strict", "diff subsets restricted to tokens whose gold label (type for diff-E) "
                         "never occurs with the word in training."),
    # ---- TMR
    "mentions": ("mentions", "every gold entity mention of the test set."),
    "predicted": ("predicted", "every entity mention a system predicts (precision's n); with mention lists, "
                               "those placed nowhere in the sentence too."),
    "seen": ("seen", "gold mentions whose text and type occur together as a training mention."),
    "unseen_any": ("unseen (any)", "gold mentions that are not seen: unseen-tokens + unseen-type."),
    "unseen_tokens": ("unseen-tokens", "gold mentions whose text is never a training mention, of any type."),
    "unseen_type": ("unseen-type", "gold mentions whose text is a training mention, but never of this type."),
    "tcm_all": ("TCM", "type-confusable mentions: the text appears with two or more types among the "
                       "gold test mentions."),
    "tcm_seen": ("TCM-seen", "type-confusable mentions whose text is a training mention."),
    "tcm_unseen": ("TCM-unseen", "type-confusable mentions whose text is never a training mention."),
    # ---- bucket attributes
    "bucket": ("bucket", "a range of one attribute's values; bucket i is the i-th of the attribute's "
                         "buckets, listed with their ranges in the report (and the JSON)."),
    "eLen": ("eLen", "entity length: tokens in the entity."),
    "sLen": ("sLen", "sentence length: tokens in the entity's sentence."),
    "eDen": ("eDen", "entity density: gold entities in the sentence / sentence length."),
    "oDen": ("oDen", "OOV density: sentence tokens never seen in training / sentence length."),
    "eFre": ("eFre", "entity frequency: training mentions with the entity's text (any type) / all "
                     "training mentions; shown as a count of training mentions."),
    "tFre": ("tFre", "token frequency: training occurrences of the token / all training tokens; "
                     "shown as a count of training occurrences."),
    "eCon": ("eCon", "entity label consistency: share of the training occurrences of the entity's "
                     "words annotated as exactly this entity with this type (1.0: always, 0: never)."),
    "tCon": ("tCon", "token label consistency: share of the token's training occurrences labelled "
                     "with the entity's type."),
    "tag": ("tag", "the entity type (one bucket per type)."),
    # ---- NRB
    "nrb": ("NRB", "Name Regularity Bias set: sentences whose target entity can only be typed from "
                   "its context (the name itself suggests another type)."),
    "wts": ("WTS", "the control set: the same target names in contexts that agree with their usual type."),
    "gap": ("gap", "WTS accuracy − NRB accuracy: how much a system relies on the name rather than the context."),
    "type_errors": ("type errors", "targets found with the right boundaries but a wrong type."),
    "boundary_errors": ("boundary errors", "targets only overlapped by a prediction."),
    "nrb_missed": ("missed targets", "targets no predicted entity overlaps."),
    "seen_other_type": ("seen with another type", "targets whose text is a training mention of another type only."),
    "type_map": ("type map", "how the system's entity types were mapped to the NRB types: detected from its "
                             "labels (nrb, conll or ontonotes label sets) unless given."),
    "PERSON": ("PERSON", "targets of type person."),
    "LOCATION": ("LOCATION", "targets of type location."),
    "ORGANIZATION": ("ORGANIZATION", "targets of type organization."),
    # ---- RockNER
    "original": ("original", "the test set as it is."),
    "attacked": ("attacked", "the test set after RockNER's substitutions (entities replaced by other "
                             "real entities of the same type, or context words by rare alternatives)."),
    "f1_drop": ("F1 drop", "F1 on the original set − F1 on the attacked set; lower is better."),
    "f1_drop_relative": ("relative drop", "F1 drop / original F1: the share of F1 lost under attack."),
    "exact_right_type": ("exact, right type", "a predicted entity has exactly the gold span and type (correct)."),
    "exact_wrong_type": ("exact, wrong type", "a predicted entity has exactly the gold span, with another type."),
    "overlap_right_type_d1": ("overlap d=1, right type", "the closest overlapping prediction differs by 1 token "
                                                         "position, with the right type."),
    "overlap_right_type_d2": ("overlap d=2, right type", "the closest overlapping prediction differs by 2 token "
                                                         "positions, with the right type."),
    "overlap_right_type_d3plus": ("overlap d≥3, right type", "the closest overlapping prediction differs by 3 or "
                                                             "more token positions, with the right type."),
    "overlap_wrong_type_d1": ("overlap d=1, wrong type", "the closest overlapping prediction differs by 1 token "
                                                         "position, with a wrong type."),
    "overlap_wrong_type_d2": ("overlap d=2, wrong type", "the closest overlapping prediction differs by 2 token "
                                                         "positions, with a wrong type."),
    "overlap_wrong_type_d3plus": ("overlap d≥3, wrong type", "the closest overlapping prediction differs by 3 or "
                                                             "more token positions, with a wrong type."),
    "missed": ("missed", "no predicted entity shares a token with the gold entity."),
    "confusion_difference": ("confusion difference", "attacked − original count of each (gold type, predicted "
                                                     "type) pair: where the attack moves the errors."),
    # ---- input formats
    "hallucinated": ("hallucinated", "a predicted mention (from a mention list) whose text occurs nowhere free in "
                                     "its sentence: a false positive with no position."),
    "snapped": ("snapped", "a character span that did not fall on token boundaries, widened to the tokens it covers."),
    "placed_exact": ("placed exactly", "a predicted mention placed where its text occurs as written (whitespace "
                                       "aside)."),
    "placed_normalised": ("placed after normalising", "a predicted mention placed where its text occurs once "
                                                      "both are normalised (Unicode NFKC, case, whitespace, "
                                                      "punctuation at the edges), or compared without case."),
    "placed_fuzzy": ("placed fuzzily", "a predicted mention placed on the tokens most similar to it (difflib's "
                                       "ratio at or above the fuzzy threshold)."),
    "unparseable": ("unparseable", "a sentence whose prediction was no mention list (not JSON, no list, or wrong "
                                   "types): scored as predicting nothing, counted apart from NER errors."),
    # ---- the error table's outcomes
    "correct": ("correct", "a prediction with exactly the gold span and type."),
    "wrong_type": ("wrong type", "a prediction with exactly the gold span but another type."),
    "wrong_boundary": ("wrong boundary", "the best overlapping prediction has other boundaries "
                                         "(its overlap in tokens is given); on a predicted entity's row: an "
                                         "extra prediction overlapping a gold entity."),
    "extra_prediction": ("extra prediction", "a predicted entity that overlaps a gold entity but is the match "
                                             "of none (each has a prediction at least as close); counted apart "
                                             "from the gold entities' outcomes."),
    "spurious": ("spurious", "a predicted entity that overlaps no gold entity."),
}

HARDEVAL_SUBSETS = ("all", "unseen", "unseen_I", "unseen_O", "diff", "diff_I", "diff_O", "diff_E")
TMR_SUBSETS = ("seen", "unseen_any", "unseen_tokens", "unseen_type", "tcm_all", "tcm_seen", "tcm_unseen")
ATTRIBUTES = ("eLen", "sLen", "eDen", "oDen", "eFre", "tFre", "eCon", "tCon", "tag")
CATEGORIES = tuple(k for k in TERMS if k.startswith(("exact_", "overlap_"))) + ("missed",)
_SUBSET = "|".join(sorted(HARDEVAL_SUBSETS + TMR_SUBSETS, key=len, reverse=True))
_NRB_TAIL = r"(?:_(PERSON|LOCATION|ORGANIZATION|seen_other_type))?"

# (pattern, term ids; "\1"-style entries name a group of the match)
_RULES: List[Tuple[str, Tuple[str, ...]]] = [
    (r"(precision|recall|f1|hardeval|gap|f1_drop|f1_drop_relative|n)", ("\\1",)),
    (r"(macro|weighted)_(precision|recall|f1|f_beta)", ("\\1", "\\2")),
    (r"n_invalid_transitions_(gold|pred)(?:_(original|attacked))?", ("n", "\\2", "\\1", "invalid_transitions")),
    (r"(macro|weighted)_(precision|recall|f1|f_beta)_(original|attacked)", ("\\1", "\\2", "\\3")),
    (r"ter_(%s)" % _SUBSET, ("ter", "\\1")),
    (r"recall_(%s)" % _SUBSET, ("recall", "\\1")),
    (r"n_(%s|mentions|predicted)" % _SUBSET, ("n", "\\1")),
    (r"(%s)" % "|".join(ATTRIBUTES), ("\\1",)),
    (r"(%s)_(\d+)_(f1|precision|recall)" % "|".join(ATTRIBUTES), ("\\3", "\\1")),
    (r"tag_(.+)_(f1|precision|recall)", ("\\2", "tag")),
    (r"(?:(nrb|wts)_)?accuracy" + _NRB_TAIL, ("\\1", "accuracy", "\\2")),
    (r"(?:(nrb|wts)_)?n", ("n", "\\1")),
    (r"(?:(nrb|wts)_)?n_(type_errors|boundary_errors|seen_other_type)", ("n", "\\1", "\\2")),
    (r"(?:(nrb|wts)_)?n_missed", ("n", "\\1", "nrb_missed")),
    (r"(precision|recall|f1)_(original|attacked)", ("\\1", "\\2")),
    (r"n_(original|attacked)", ("n", "\\1")),
    (r"n_(hallucinated|snapped|unparseable)", ("n", "\\1")),
    (r"n_(exact|normalised|fuzzy)", ("n", "placed_\\1")),
    (r"(original|attacked)_(%s)" % "|".join(CATEGORIES), ("\\1", "\\2")),
]


def terms_of(key: str) -> List[str]:
    """The glossary terms a flat result key is made of (``KeyError`` when it is not one)."""
    if key in TERMS:
        return [key]
    if key.casefold() in _BY_NAME:  # a term as the glossary lists it ("TER", "macro average")
        return [_BY_NAME[key.casefold()]]
    for pattern, parts in _RULES:
        match = re.fullmatch(pattern, key)
        if match:
            terms = [match.expand(p) if "\\" in p else p for p in parts]
            return [t for t in terms if t]
    raise KeyError(key)


_BY_NAME = {name.casefold(): term for term, (name, _) in TERMS.items()}


def explain(key: str) -> str:
    """A flat result key (or a glossary term) in words, one line per term it is made of."""
    try:
        terms = terms_of(key)
    except KeyError:
        known = dict.fromkeys([*TERMS, *(name for name, _ in TERMS.values()), *_examples()])
        close = difflib.get_close_matches(key, list(known), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"{key!r} is not a tough-ner key or glossary term{hint} "
                       "(`tough-ner explain` lists them all)") from None
    one_term = len(terms) == 1 and key.casefold() in (terms[0].casefold(), TERMS[terms[0]][0].casefold())
    lines = [] if one_term else [f"{key}:"]
    lines += [f"  {TERMS[t][0]}: {TERMS[t][1]}" if lines else f"{TERMS[t][0]}: {TERMS[t][1]}" for t in terms]
    match = re.fullmatch(r"(%s)_(\d+)_(f1|precision|recall)" % "|".join(ATTRIBUTES), key)
    if match:
        lines.append(f"  this key: {TERMS[match.group(3)][0]} of the entities in bucket {match.group(2)} "
                     f"(counting from 0) of {match.group(1)}")
    match = re.fullmatch(r"tag_(.+)_(f1|precision|recall)", key)
    if match:
        lines.append(f"  this key: {TERMS[match.group(2)][0]} of the entities of type {match.group(1)}")
    return "\n".join(lines)


def _examples() -> List[str]:
    return ([f"ter_{s}" for s in HARDEVAL_SUBSETS] + [f"recall_{s}" for s in TMR_SUBSETS]
            + [f"{a}_0_f1" for a in ATTRIBUTES] + ["nrb_accuracy", "wts_accuracy", "f1_drop_relative"])


def title(key: str) -> str:
    """A key's name in words: ``ter_unseen_I`` -> ``TER unseen-I`` (the key itself when unknown)."""
    try:
        return " ".join(TERMS[t][0] for t in terms_of(key))
    except KeyError:
        return key


def anchor(key: str) -> str:
    """The HTML id of the glossary entry a key points to (its most specific term)."""
    terms = terms_of(key)
    specific = [t for t in terms if t not in ("n", "f1", "recall", "precision", "accuracy", "bucket")]
    return "g-" + (specific or terms)[-1]


def entries() -> List[Tuple[str, str, str]]:
    """(term id, name, text) of every glossary entry, in order."""
    return [(term, name, text) for term, (name, text) in TERMS.items()]


def text() -> str:
    """The whole glossary as plain text (``tough-ner explain`` without a key)."""
    width = max(len(name) for name, _ in TERMS.values())
    return "\n".join(f"{name:<{width}}  {line}" for name, line in TERMS.values())


def markdown() -> str:
    """The glossary as a Markdown list (the Spaces)."""
    return "\n".join(f"- **{name}**: {line}" for name, line in TERMS.values())
