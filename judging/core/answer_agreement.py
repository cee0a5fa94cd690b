"""Agreement on the labels of generated answers: the relevance agreement core
(`judging.core.agreement`: Cohen's kappa, Fleiss' kappa, Krippendorff's alpha,
per topic and pooled) on items of their own. Pure core, no Django.

An item is one nugget of one answer under one nugget-list version
(`answer:v<version>:n<position>`), or one citation of one answer sentence
(`answer:s<sentence>:c<citation>`): two assessors who judged an answer against
different versions share no item, since their nuggets are not the same.
Labels are ordered categories: not_support 0, partial_support 1, support 2
(no 0, partial 1, full 2); the binary aspect counts partial as support.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judging.core.agreement import Aspect
from judging.core.answer_labels import CITATION_LABELS, NUGGET_LABELS

NUGGET_VALUES = {label: 2 - i for i, label in enumerate(NUGGET_LABELS)}  # support 2 ... 0
CITATION_VALUES = {label: 2 - i for i, label in enumerate(CITATION_LABELS)}  # full 2 ... 0

NUGGET_ASPECTS = (
    Aspect("nugget", "label", (0, 1, 2), relevant_from=1),
    Aspect("nugget_binary", "label", (0, 1), binarise_at=1),
)
CITATION_ASPECTS = (
    Aspect("support", "label", (0, 1, 2), relevant_from=1),
    Aspect("support_binary", "label", (0, 1), binarise_at=1),
)


@dataclass(frozen=True)
class JudgedAnswer:
    """One assessor's labels of one answer: per nugget (nuggets: `version` set), or
    per sentence a list per citation (citations: `version` None)."""

    assessor: str
    topic: str
    answer: int
    version: int | None
    labels: Sequence[Any]


def labels_frame(judged: Iterable[JudgedAnswer]) -> pd.DataFrame:
    """The agreement core's labels frame: `assessor, query_id, doc_id, label`."""
    rows = []
    for j in judged:
        if j.version is not None:
            rows += [
                (j.assessor, j.topic, f"{j.answer}:v{j.version}:n{n}", NUGGET_VALUES[label])
                for n, label in enumerate(j.labels, 1)
            ]
        else:
            rows += [
                (j.assessor, j.topic, f"{j.answer}:s{s}:c{c}", CITATION_VALUES[label])
                for s, sentence in enumerate(j.labels)
                for c, label in enumerate(sentence)
            ]
    frame = pd.DataFrame(rows, columns=["assessor", "query_id", "doc_id", "label"])
    return frame.astype({"label": "int64"})


LEVELS = {2: "support", 1: "partial", 0: "not"}


def human_machine_confusion(labels: pd.DataFrame, machines: set[str]) -> list[dict[str, Any]]:
    """Per machine account, the confusion of the humans' labels (rows) with the
    machine's (columns) over the items both labelled: support, partial, not
    (full, partial, no for citations: the same ordered values). Each human label
    of an item counts once against the machine's label of it.

    Returns `[{"machine", "n_items", "matrix": {human: {machine: count}}}]`."""
    out: list[dict[str, Any]] = []
    if labels.empty or not machines:
        return out
    is_machine = labels["assessor"].isin(machines)
    people = labels[~is_machine]
    for machine in sorted(machines):
        theirs = labels[labels["assessor"] == machine][["doc_id", "label"]]
        both = people.merge(theirs, on="doc_id", suffixes=("_human", "_machine"))
        matrix = {LEVELS[h]: {LEVELS[m]: 0 for m in (2, 1, 0)} for h in (2, 1, 0)}
        for h, m in zip(both["label_human"], both["label_machine"], strict=True):
            matrix[LEVELS[int(h)]][LEVELS[int(m)]] += 1
        out.append({"machine": machine, "n_items": len(both), "matrix": matrix})
    return out
