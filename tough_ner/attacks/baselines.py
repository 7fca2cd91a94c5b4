"""Reference systems that need no model."""
from __future__ import annotations

from typing import List, Sequence

import numpy as np

from ..core.schemes import spans_to_tags
from ..core.stats import TrainStats


def memorization(stats: TrainStats, tokens: Sequence[Sequence[str]]) -> List[List[str]]:
    """Tag each seen word with its usual training label, by the two-step rule of HardEval's
    diff subsets: O when its O count is strictly larger than its entity count, else its most
    frequent entity type (ties: the first type by name).  Unseen words get O; each run of
    one type becomes one IOB2 entity.  It errs on every diff token by construction."""
    if not tokens:
        return []
    flat = [token for sentence in tokens for token in sentence]
    ids = stats.ids(flat)
    seen = ids >= 0
    counts = stats.label_counts
    o_count = np.where(seen, counts.get(ids, 0), 0)
    entity = np.where(seen, stats.token_totals[ids], 0) - o_count
    usual = np.where(seen & (o_count <= entity), counts.usual_entity[ids], 0)  # 0 where only ever O, or unseen
    labels = [stats.labels[i] for i in usual]
    result, start = [], 0
    for sentence in tokens:
        sentence_labels = labels[start:start + len(sentence)]
        start += len(sentence)
        spans, i = [], 0
        while i < len(sentence_labels):
            j = i + 1
            if sentence_labels[i] != "O":
                while j < len(sentence_labels) and sentence_labels[j] == sentence_labels[i]:
                    j += 1
                spans.append((i, j, sentence_labels[i]))
            i = j
        result.append(spans_to_tags(spans, len(sentence), "bio"))
    return result
