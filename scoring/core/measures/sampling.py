"""The sampling design of a stratified pool, and what sample_eval estimates from it.

A stratified qrels (`scoring.core.qrels.STRATIFIED_QRELS`) lists every pooled
document of a topic with its stratum; a label >= 0 marks a document sampled
and judged, a label below 0 one pooled but not sampled. The documents of a
(topic, stratum) were sampled uniformly, with one inclusion probability pi:
sample_eval's, the sampled share of the stratum in the qrels (judged /
pooled), or one given in an `inclusion_probability` qrels column (see
`with_inclusion_probabilities`), or one fixed from other qrels
(`fixed_inclusion`: a pool's, kept when some of its documents are taken out).

From that design, per topic, as NIST's sample_eval.pl estimates them: the
number of relevant documents R (the sum over strata of k / pi, k the sampled
relevant documents of the stratum), the number at each grade, and the DCG of
the ideal ranking of those numbers (rounded to whole documents, down to rank
1000). Two defects of the script are fixed here: it orders the grades of
that ideal ranking as strings (grade 10 after grade 2), and past rank 1000
it still adds one document of every further grade.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from scoring.core.measures.numerics import sequential_sum
from scoring.core.measures.rankings import Judgments

if TYPE_CHECKING:
    import pandas as pd

MAX_RESULTS = 1000  # sample_eval's $maxResultSize: documents scored per topic, ideal ranks
# The qrels columns of an inclusion probability fixed as a fraction (`fixed_inclusion`).
FIXED_INCLUSION = ("inclusion_numerator", "inclusion_denominator")


@dataclass(frozen=True)
class StratumEstimates:
    """What the measures need of the design, per topic and stratum (topics, strata).

    row_stratum: the stratum index of each qrels row; strata are ordered as
        sample_eval orders them (their values as strings).
    relevant: the sampled relevant documents (label > 0).
    ap_weight: the share of R estimated in the stratum, k / pi / R (0 where pi or R is 0).
    num_rel: (topics,) R.
    ideal_dcg: (topics,) the DCG of the ideal ranking of the estimated grades.
    """

    row_stratum: np.ndarray
    relevant: np.ndarray
    ap_weight: np.ndarray
    num_rel: np.ndarray
    ideal_dcg: np.ndarray

    @property
    def n_strata(self) -> int:
        return int(self.relevant.shape[1])


def stratum_estimates(judgments: Judgments) -> StratumEstimates:
    """The (cached) estimates of a stratified qrels."""
    key = "stratum estimates"
    if key not in judgments.derived:
        judgments.derived[key] = _estimate(judgments)
    estimates = judgments.derived[key]
    assert isinstance(estimates, StratumEstimates)
    return estimates


def fixed_inclusion(judgments: Judgments) -> dict[str, np.ndarray]:
    """Each qrels row's inclusion probability as these estimates read it, in two
    columns (FIXED_INCLUSION: numerator, denominator). Added to the qrels, they
    fix the design: any subset of the rows is then estimated with the
    probabilities of the whole, to the last bit (k / pi stays k * N / n)."""
    cell, shape, _ = _cells(judgments)
    numerator, denominator = _inclusion(judgments, cell, shape)
    return {
        name: values.ravel()[cell]
        for name, values in zip(FIXED_INCLUSION, (numerator, denominator), strict=True)
    }


def _cells(judgments: Judgments) -> tuple[np.ndarray, tuple[int, int], np.ndarray]:
    """Each row's (topic, stratum) cell, the shape of the cells, each row's stratum."""
    if "stratum" not in judgments.columns:
        raise ValueError("inferred measures need stratified qrels (a stratum column)")
    strata, row_stratum = np.unique(judgments.columns["stratum"].astype(str), return_inverse=True)
    shape = (len(judgments.topics), len(strata))
    return judgments.row_topic * len(strata) + row_stratum, shape, row_stratum


def _inclusion(
    judgments: Judgments, cell: np.ndarray, shape: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """pi of each (topic, stratum) as numerator / denominator, kept apart so that
    k / pi is sample_eval's k * N / n: fixed (`fixed_inclusion`), given, or the
    sampled share of the stratum in these qrels."""
    columns = judgments.columns
    if FIXED_INCLUSION[0] in columns:
        numerator, denominator = np.zeros(shape), np.ones(shape)
        numerator.ravel()[cell] = columns[FIXED_INCLUSION[0]]
        denominator.ravel()[cell] = columns[FIXED_INCLUSION[1]]
        return numerator, denominator
    if "inclusion_probability" in columns:
        numerator = np.zeros(shape)
        numerator.ravel()[cell] = columns["inclusion_probability"]
        return numerator, np.ones(shape)
    size = shape[0] * shape[1]
    sampled = np.bincount(cell[judgments.row_label >= 0], minlength=size).reshape(shape)
    return sampled, np.bincount(cell, minlength=size).reshape(shape)


def _estimate(judgments: Judgments) -> StratumEstimates:
    cell, shape, row_stratum = _cells(judgments)
    label = judgments.row_label

    def count(rows: np.ndarray) -> np.ndarray:
        return np.bincount(cell[rows], minlength=shape[0] * shape[1]).reshape(shape)

    numerator, denominator = _inclusion(judgments, cell, shape)

    def expanded(counts: np.ndarray) -> np.ndarray:
        """counts / pi, where pi is not 0."""
        safe = np.where(numerator != 0, numerator, 1)
        return np.where(numerator != 0, counts * denominator / safe, 0.0)

    relevant = count(label > 0)
    estimated_relevant = expanded(relevant)
    num_rel = sequential_sum(estimated_relevant.T)
    safe_num_rel = np.where(num_rel != 0, num_rel, 1)[:, None]
    ap_weight = np.where(
        (numerator != 0) & (num_rel[:, None] != 0), estimated_relevant / safe_num_rel, 0.0
    )
    grades, grade = np.unique(label[label > 0], return_inverse=True)
    by_grade = np.bincount(
        cell[label > 0] * len(grades) + grade, minlength=shape[0] * shape[1] * len(grades)
    ).reshape(*shape, len(grades))
    estimated_by_grade = sequential_sum(
        np.moveaxis(expanded(by_grade.transpose(2, 0, 1)), 2, 0)
    )  # (grades, topics)
    ideal_dcg = np.array(
        [_ideal_dcg(grades, estimated_by_grade[:, topic]) for topic in range(shape[0])]
    )
    return StratumEstimates(row_stratum, relevant, ap_weight, num_rel, ideal_dcg)


def _ideal_dcg(grades: np.ndarray, estimated: np.ndarray) -> float:
    """Each grade, best first, as many times as its estimate rounds to, down to rank 1000."""
    counts = np.floor(estimated + 0.5).astype(np.int64)
    gains = np.repeat(grades[::-1], counts[::-1])[:MAX_RESULTS].astype(np.float64)
    terms = gains / perl_log2(len(gains) + 2)[2:]
    return float(sequential_sum(terms[:, None])[0])


@lru_cache(maxsize=8)
def _perl_log2_of_integers(size: int) -> np.ndarray:
    return np.array([-np.inf] + [math.log(k) / math.log(2) for k in range(1, size)])


def perl_log2(size: int) -> np.ndarray:
    """log(k) / log(2) for k = 0 .. size-1: the script's discount, as Perl computes it."""
    capacity = 1 << max(size - 1, 1).bit_length()
    return _perl_log2_of_integers(capacity)[:size]


def with_inclusion_probabilities(qrels: pd.DataFrame, probabilities: pd.DataFrame) -> pd.DataFrame:
    """The stratified qrels with the inclusion probability of each document's stratum.

    probabilities: per stratum (query_id, stratum, inclusion_probability), or
    per document (query_id, doc_id, inclusion_probability; further columns,
    such as the stratum of the workbench's inclusion.tsv, are ignored). Every
    (topic, stratum) of the qrels needs one probability in (0, 1]: the
    estimates assume a uniform sample within each stratum.
    """
    keys = ["query_id", "doc_id"] if "doc_id" in probabilities.columns else ["query_id", "stratum"]
    given = probabilities[[*keys, "inclusion_probability"]].astype({"query_id": str})
    if "doc_id" in keys:
        given = qrels[["query_id", "doc_id", "stratum"]].merge(given.astype({"doc_id": str}))
    per_stratum = given[["query_id", "stratum", "inclusion_probability"]].drop_duplicates()
    per_stratum = per_stratum.astype({"stratum": np.int64, "inclusion_probability": np.float64})
    conflicting = per_stratum[per_stratum.duplicated(["query_id", "stratum"], keep=False)]
    if len(conflicting):
        topic, stratum = conflicting.iloc[0][["query_id", "stratum"]]
        raise ValueError(f"topic {topic!r}, stratum {stratum}: inclusion probabilities differ")
    outside = per_stratum[~per_stratum["inclusion_probability"].between(0, 1, inclusive="right")]
    if len(outside):
        topic, stratum, probability = outside.iloc[0]
        raise ValueError(
            f"topic {topic!r}, stratum {stratum}: inclusion probability {probability} "
            "is not in (0, 1]"
        )
    merged = qrels.merge(per_stratum, on=["query_id", "stratum"], how="left")
    missing = merged[merged["inclusion_probability"].isna()]
    if len(missing):
        topic, stratum = missing.iloc[0][["query_id", "stratum"]]
        raise ValueError(f"topic {topic!r}, stratum {stratum}: no inclusion probability")
    return merged
