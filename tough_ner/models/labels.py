"""A model's labels to the test set's types: the label map.

A label map is ``{model label: type, or None to drop the entity}``; labels it does not name
are kept.  For a model that predicts tags, a key may also be a whole tag (``LABEL_3``, the
names a config without ``id2label`` gives) mapped to a tag (``B-PER``, ``O``).  ``auto``
(the default) keeps a model's labels when they are types of the test set or the training
data, and maps OntoNotes labels (spaCy's English pipelines) to CoNLL types when those are
the data's.  Any label still unknown after the map is an error naming it.
"""
from __future__ import annotations

import json
import os
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

LabelMap = Dict[str, Optional[str]]
AUTO = "auto"
CONLL = frozenset({"PER", "LOC", "ORG", "MISC"})
# OntoNotes 5 types to CoNLL-2003's.  FAC (buildings, airports) is a location here, as in the NRB
# presets; CoNLL's MISC holds nationalities, events, works, laws, languages and products; dates,
# times and quantities are no CoNLL entity, so they are dropped.
ONTONOTES_TO_CONLL: LabelMap = {
    "PERSON": "PER", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC", "ORG": "ORG",
    "NORP": "MISC", "EVENT": "MISC", "PRODUCT": "MISC", "WORK_OF_ART": "MISC", "LAW": "MISC", "LANGUAGE": "MISC",
    "DATE": None, "TIME": None, "PERCENT": None, "MONEY": None, "QUANTITY": None, "ORDINAL": None, "CARDINAL": None,
}
PRESETS: Dict[str, LabelMap] = {"ontonotes": ONTONOTES_TO_CONLL}


def parse_label_map(value: Union[None, str, Mapping[str, Optional[str]]]) -> Union[str, LabelMap]:
    """``auto`` (also None), a preset name (``ontonotes``: OntoNotes to CoNLL), ``A=B,C=``
    pairs (an empty right side drops the label), a JSON file ``{"A": "B", "C": null}``, or a dict."""
    if value is None or value == AUTO:
        return AUTO
    if isinstance(value, Mapping):
        mapping = dict(value)
    elif value in PRESETS:
        return value
    elif value.endswith(".json") or os.path.isfile(value):
        from ..core.corpus import refuse_deep_nesting

        with open(value, encoding="utf-8") as handle, refuse_deep_nesting(f"label map {value}"):
            try:
                mapping = json.load(handle)
            except json.JSONDecodeError as error:
                raise ValueError(f"label map {value}: not JSON ({error.msg})") from None
        if not isinstance(mapping, dict):
            raise ValueError(f"label map {value}: give a JSON object {{label: type or null}}")
    else:
        mapping = {}
        for pair in value.split(","):
            label, sep, target = (part.strip() for part in pair.partition("="))
            if not sep or not label:
                raise ValueError(f"label map {value!r}: give LABEL=TYPE pairs separated by commas (LABEL= drops "
                                 f"it), a JSON file, 'auto' or a preset ({', '.join(PRESETS)})")
            mapping[label] = target or None
    wrong = {k: v for k, v in mapping.items() if not isinstance(k, str) or not (v is None or isinstance(v, str))}
    if wrong:
        raise ValueError(f"label map: labels and types are strings (null drops a label), got {wrong}")
    return {label: target or None for label, target in mapping.items()}


def types_of(sentences: Sequence, format: str) -> List[str]:
    """The labels a model used in its raw predictions (any format), in order of first use."""
    seen: Dict[str, None] = {}
    for sentence in sentences:
        if format == "tags":
            for tag in sentence:
                if isinstance(tag, str) and tag != "O":
                    seen[tag.partition("-")[2] or tag] = None
        elif format == "chars":
            for item in sentence.get("entities", ()) if isinstance(sentence, Mapping) else ():
                seen[_item_label(item)] = None
        else:
            for item in sentence:
                seen[_item_label(item)] = None
    return [label for label in seen if isinstance(label, str)]


def _item_label(item):
    if isinstance(item, Mapping):
        return item.get("type", item.get("label"))
    return item[2] if isinstance(item, (list, tuple)) and len(item) == 3 else None


def choose(given: Union[str, LabelMap], model_labels: Iterable[str], known: Iterable[str]) -> Tuple[str, LabelMap]:
    """(what was used, the map): ``given`` itself, or for ``auto`` the identity when the
    model's labels are known types, else the OntoNotes preset when the data's types are
    CoNLL's and the model's labels OntoNotes'."""
    if isinstance(given, dict):
        return "custom", given
    if given != AUTO:
        return given, PRESETS[given]
    labels, known = set(model_labels), set(known)
    if labels <= known:
        return "none", {}
    if known and known <= CONLL and labels <= set(ONTONOTES_TO_CONLL) | CONLL:
        return "ontonotes", ONTONOTES_TO_CONLL
    return "none", {}


def map_tags(sentences: Sequence[Sequence[str]], mapping: LabelMap) -> List[List[str]]:
    """Tags with the label map applied: a whole tag it names becomes the tag it gives; else the
    tag's type is renamed (None: the token becomes O).  Tags with no map entry stay as they are."""
    if not mapping:
        return [list(tags) for tags in sentences]
    cache: Dict[str, str] = {"O": "O"}

    def renamed(tag: str) -> str:
        if not isinstance(tag, str):  # left for the decoder to name
            return tag
        if tag in cache:
            return cache[tag]
        if tag in mapping:
            cache[tag] = mapping[tag] or "O"
            return cache[tag]
        prefix, sep, label = tag.partition("-")
        if sep and label in mapping:
            cache[tag] = "O" if mapping[label] is None else f"{prefix}-{mapping[label]}"
            return cache[tag]
        return tag

    return [[renamed(tag) for tag in tags] for tags in sentences]
