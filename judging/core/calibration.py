"""A machine assessor against the humans, on the documents judged by both
(issue 25 item 6, the calibration report). Pure core: numpy and pandas.

For one aspect (`agreement_statistics.Aspect`: relevance graded or binary, or
a schema aspect): n, observed agreement, Cohen's kappa plain, linear and
quadratic (`agreement_statistics.cohen_kappa`, scikit-learn's definition, the
weights over the schema's grades), the confusion matrix (rows human, columns
machine, every grade of the schema), per-topic kappas (undefined, with the
reason, where a topic has no common document or both used one grade only),
and, for a machine with several samples per document, the share of its
documents whose samples disagree.

Labels below 0 (-1 not asked, -2 not given) are no label: a document counts
only where both sides have one for the aspect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from judging.core.agreement_statistics import (
    Agreement,
    Aspect,
    aspect_values,
    cohen_kappa,
    confusion_counts,
    observed_agreement,
)
from workbench.core.topic_ids import topic_sort_key

KEY = ["query_id", "doc_id"]
NO_LABEL = -1


@dataclass(frozen=True)
class Kappas:
    """Cohen's kappa plain, linear and quadratic of one set of documents."""

    plain: Agreement
    linear: Agreement
    quadratic: Agreement

    @classmethod
    def of(cls, human: np.ndarray, machine: np.ndarray, values: Sequence[int]) -> Kappas:
        return cls(
            cohen_kappa(human, machine, values=values),
            cohen_kappa(human, machine, values=values, weights="linear"),
            cohen_kappa(human, machine, values=values, weights="quadratic"),
        )

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name).to_dict() for name in ("plain", "linear", "quadratic")}


@dataclass(frozen=True)
class TopicCalibration:
    query_id: str
    n: int
    kappa: Kappas

    def to_json(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "n": self.n, "kappa": self.kappa.to_json()}


@dataclass(frozen=True)
class SampleDisagreement:
    """Of the documents with at least two machine samples for the aspect, how
    many have samples that do not all give the same grade."""

    n_documents: int
    n_disagreeing: int

    @property
    def share(self) -> float | None:
        return self.n_disagreeing / self.n_documents if self.n_documents else None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "share": self.share}


@dataclass(frozen=True)
class Calibration:
    """The machine against the humans for one aspect. confusion[i][j]: documents
    the humans put in values[i] and the machine in values[j]."""

    aspect: str
    values: tuple[int, ...]
    n: int
    observed_agreement: Agreement
    kappa: Kappas
    confusion: tuple[tuple[int, ...], ...]
    per_topic: tuple[TopicCalibration, ...]
    samples: SampleDisagreement | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "aspect": self.aspect,
            "values": list(self.values),
            "n": self.n,
            "observed_agreement": self.observed_agreement.to_dict(),
            "kappa": self.kappa.to_json(),
            "confusion": {
                "rows": "human",
                "columns": "machine",
                "counts": [list(row) for row in self.confusion],
            },
            "per_topic": [topic.to_json() for topic in self.per_topic],
            "samples": None if self.samples is None else self.samples.to_json(),
        }


def calibrate_labels(
    human: Sequence[int],
    machine: Sequence[int],
    *,
    aspect: Aspect,
    topics: Sequence[str] | None = None,
    samples: SampleDisagreement | None = None,
) -> Calibration:
    """Calibration from two aligned label sequences (item i labelled human[i]
    and machine[i], in topic topics[i]). Raw labels: the aspect binarises them
    if it says so, and items where either side is below 0 are left out.
    ValueError for a label outside the aspect's values, or unaligned inputs."""
    if len(human) != len(machine) or (topics is not None and len(topics) != len(human)):
        raise ValueError("human labels, machine labels and topics must have the same length")
    h, bad_h = aspect_values(human, aspect)
    m, bad_m = aspect_values(machine, aspect)
    if bad_h.any() or bad_m.any():
        outside = sorted({int(v) for v in np.concatenate([h[bad_h], m[bad_m]])})
        raise ValueError(f"aspect {aspect.name!r}: labels {outside} not in {list(aspect.values)}")
    both = ~np.isnan(h) & ~np.isnan(m)
    h, m = h[both].astype(np.int64), m[both].astype(np.int64)
    values = aspect.values
    per_topic = []
    if topics is not None:
        topic_array = np.asarray([str(t) for t in topics], dtype=object)[both]
        for query_id in sorted({str(t) for t in topics}, key=topic_sort_key):
            mine = topic_array == query_id
            per_topic.append(
                TopicCalibration(query_id, int(mine.sum()), Kappas.of(h[mine], m[mine], values))
            )
    counts = confusion_counts(h, m, values=values)
    return Calibration(
        aspect=aspect.name,
        values=tuple(values),
        n=int(h.size),
        observed_agreement=observed_agreement(h, m),
        kappa=Kappas.of(h, m, values),
        confusion=tuple(tuple(int(c) for c in row) for row in counts),
        per_topic=tuple(per_topic),
        samples=samples,
    )


def _labelled(frame: pd.DataFrame, aspect: Aspect) -> pd.DataFrame:
    """The frame's rows that have a label for the aspect, as (query_id, doc_id, label)."""
    values, outside = aspect_values(frame[aspect.column].to_numpy(dtype=np.float64), aspect)
    if outside.any():
        raise ValueError(
            f"aspect {aspect.name!r}: labels {sorted({int(v) for v in values[outside]})} "
            f"not in {list(aspect.values)}"
        )
    result = frame[KEY].assign(label=values)
    if "assessor" in frame.columns:
        result["assessor"] = frame["assessor"].to_numpy()
    if "is_primary" in frame.columns:
        result["is_primary"] = frame["is_primary"].to_numpy(dtype=bool)
    return result[~np.isnan(values)]


def _human_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """One human label per document: the primary assessor's, else the first
    assessor's by name."""
    order = [c for c in ("is_primary", "assessor") if c in frame.columns]
    ascending = [c != "is_primary" for c in order]
    chosen = frame.sort_values([*KEY, *order], ascending=[True, True, *ascending], kind="stable")
    return chosen.drop_duplicates(KEY)[[*KEY, "label"]]


def _machine_labels(frame: pd.DataFrame) -> tuple[pd.DataFrame, SampleDisagreement | None]:
    """One machine label per document: the most frequent of its samples (rows),
    the lower grade on a tie; and the samples' disagreement (None when no
    document has two samples)."""
    counted = frame.groupby([*KEY, "label"], sort=True).size().rename("count").reset_index()
    best = counted.sort_values([*KEY, "count", "label"], ascending=[True, True, False, True])
    labels = best.drop_duplicates(KEY)[[*KEY, "label"]]
    sizes = frame.groupby(KEY).size()
    distinct = counted.groupby(KEY).size()
    several = sizes[sizes >= 2].index
    if len(several) == 0:
        return labels, None
    return labels, SampleDisagreement(len(several), int((distinct.loc[several] > 1).sum()))


def calibrate_frames(human: pd.DataFrame, machine: pd.DataFrame, *, aspect: Aspect) -> Calibration:
    """Calibration from two judgment frames with `judging.selectors.judgments_frame`'s
    columns (assessor, query_id, doc_id, relevance, is_primary, one column per
    aspect, -1 not asked): `human` the humans' judgments, `machine` one machine
    assessor's, a row per sample.

    The human label of a document is its primary assessor's (else the first
    assessor's by name); the machine's is its samples' most frequent grade
    (the lower on a tie), after the aspect binarises them if it does.
    Per-topic kappas are over every topic with a document either side
    labelled (undefined where they share none).
    """
    machine_rows = _labelled(machine, aspect)
    machine_labels, samples = _machine_labels(machine_rows)
    human_labels = _human_labels(_labelled(human, aspect))
    # Outer: a document one side left unlabelled keeps its topic in the per-topic table.
    both = human_labels.merge(
        machine_labels, on=KEY, how="outer", suffixes=("_human", "_machine")
    ).fillna({"label_human": NO_LABEL, "label_machine": NO_LABEL})
    both = both.sort_values(KEY, kind="stable")
    return calibrate_labels(
        both["label_human"].astype(np.int64).tolist(),
        both["label_machine"].astype(np.int64).tolist(),
        aspect=replace(aspect, column="label", binarise_at=None),
        topics=[str(q) for q in both["query_id"]],
        samples=samples,
    )
