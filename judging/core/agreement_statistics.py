"""Inter-assessor agreement statistics on arrays, and the rule that flags an
assessor. Pure core, numpy only: `judging.core.agreement` builds its frames on
these, and `judging.status` flags assessors with them without loading pandas
(a second of every `campaign_status` after a judgment changed).

See `judging.core.agreement` for the statistics, the aspects and the rules on
undefined values.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from workbench.core.label_schema import LabelSchema

Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal"]

NO_COMMON_ITEMS = "no items in common"


class Statistic(StrEnum):
    P_OBSERVED = "observed_agreement"
    P_EXPECTED = "p_expected"
    COHEN_KAPPA = "cohen_kappa"
    COHEN_KAPPA_LINEAR = "cohen_kappa_linear"
    COHEN_KAPPA_QUADRATIC = "cohen_kappa_quadratic"
    VOORHEES_OVERLAP = "voorhees_overlap"
    FLEISS_KAPPA = "fleiss_kappa"
    ALPHA_NOMINAL = "krippendorff_alpha_nominal"
    ALPHA_ORDINAL = "krippendorff_alpha_ordinal"


_KAPPA_STATISTIC: dict[Weights, Statistic] = {
    None: Statistic.COHEN_KAPPA,
    "linear": Statistic.COHEN_KAPPA_LINEAR,
    "quadratic": Statistic.COHEN_KAPPA_QUADRATIC,
}
_ALPHA_STATISTIC: dict[Level, Statistic] = {
    "nominal": Statistic.ALPHA_NOMINAL,
    "ordinal": Statistic.ALPHA_ORDINAL,
}


# --------------------------------------------------------------------------
# Results and aspects


@dataclass(frozen=True)
class Agreement:
    """One agreement statistic: a value, or undefined with the reason.

    `n_items` is the number of items the statistic was computed over; `note`
    qualifies a defined value (for example which items Fleiss' kappa used).
    """

    statistic: str
    value: float | None
    n_items: int
    undefined_reason: str | None = None
    note: str | None = None

    @classmethod
    def undefined(cls, statistic: str, n_items: int, reason: str) -> Agreement:
        return cls(statistic, None, n_items, undefined_reason=reason)

    @property
    def defined(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "statistic": str(self.statistic)}


@dataclass(frozen=True)
class Aspect:
    """What one agreement aspect reads from the labels frame.

    name: the key in results ("relevance", "relevance_binary", ...).
    column: the labels frame column it reads.
    values: the schema's categories, ascending. Cohen's weights and ordinal
        alpha use their order (weights follow the position in this tuple, as
        scikit-learn does).
    binarise_at: if set, a raw value v becomes 1 if v >= binarise_at else 0,
        and `values` must be (0, 1).
    relevant_from: if set, Voorhees' overlap of the items labelled
        >= relevant_from is also reported for each pair.
    """

    name: str
    column: str
    values: tuple[int, ...]
    binarise_at: int | None = None
    relevant_from: int | None = None

    def __post_init__(self) -> None:
        values = tuple(int(v) for v in self.values)
        object.__setattr__(self, "values", values)
        if len(values) < 2 or list(values) != sorted(set(values)) or values[0] < 0:
            raise ValueError(
                f"aspect {self.name!r}: values must be at least two distinct non-negative "
                f"integers in ascending order, got {values}"
            )
        if self.binarise_at is not None and values != (0, 1):
            raise ValueError(f"aspect {self.name!r}: a binarised aspect has values (0, 1)")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "values": list(self.values)}


def aspects_for_schema(
    relevance: Sequence[int] = (0, 1, 2),
    aspects: Mapping[str, Sequence[int]] | None = None,
    *,
    relevant_from: int = 1,
) -> tuple[Aspect, ...]:
    """The agreement aspects of a label schema.

    Returns relevance as graded (which also reports Voorhees' overlap of the
    items labelled >= `relevant_from`), relevance binarised at `relevant_from`,
    then one aspect per entry of `aspects`
    (default: effectiveness 0..3, credibility 0..1), each read from the
    column of the same name.
    """
    if aspects is None:
        aspects = {"effectiveness": (0, 1, 2, 3), "credibility": (0, 1)}
    return (
        Aspect("relevance", "relevance", tuple(relevance), relevant_from=relevant_from),
        Aspect("relevance_binary", "relevance", (0, 1), binarise_at=relevant_from),
        *(Aspect(name, name, tuple(values)) for name, values in aspects.items()),
    )


DEFAULT_ASPECTS = aspects_for_schema()


def schema_aspects(schema: LabelSchema) -> tuple[Aspect, ...]:
    """The agreement aspects of a label schema: relevance graded and binary, then its aspects."""
    return aspects_for_schema(schema.relevance.values, {a.id: a.values for a in schema.aspects})


def aspect_values(raw: ArrayLike, aspect: Aspect) -> tuple[np.ndarray, np.ndarray]:
    """The aspect's value of each raw label as floats, NaN where there is none (null
    or negative: -1 not asked, -2 not given), and a mask of the labels outside the
    schema (the caller says where they are)."""
    values = np.array(raw, dtype=np.float64)
    values[values < 0] = np.nan
    if aspect.binarise_at is not None:
        binary = np.where(np.isnan(values), np.nan, (values >= aspect.binarise_at).astype(float))
        return binary, np.zeros(len(values), dtype=bool)
    return values, ~np.isnan(values) & ~np.isin(values, aspect.values)


# --------------------------------------------------------------------------
# Pairwise statistics on two aligned label arrays (the items both rated)


def confusion_counts(a: ArrayLike, b: ArrayLike, *, values: Sequence[int]) -> np.ndarray:
    """Counts[i, j] = items labelled values[i] by the first rater and values[j] by the second.

    Every schema value has a row and a column, used or not.
    """
    a_index, b_index = category_index(a, values), category_index(b, values)
    size = len(values)
    flat = np.bincount(a_index * size + b_index, minlength=size * size)
    return flat.reshape(size, size)


def observed_agreement(a: ArrayLike, b: ArrayLike) -> Agreement:
    """P(A): the share of items both raters put in the same category."""
    a, b = np.asarray(a), np.asarray(b)
    if a.size == 0:
        return Agreement.undefined(Statistic.P_OBSERVED, 0, NO_COMMON_ITEMS)
    return Agreement(Statistic.P_OBSERVED, float(np.mean(a == b)), a.size)


def chance_agreement(a: ArrayLike, b: ArrayLike, *, values: Sequence[int]) -> Agreement:
    """P(E) as in Cohen's kappa: sum over categories of p_a(c) * p_b(c)."""
    counts = confusion_counts(a, b, values=values)
    n = int(counts.sum())
    if n == 0:
        return Agreement.undefined(Statistic.P_EXPECTED, 0, NO_COMMON_ITEMS)
    p_a, p_b = counts.sum(axis=1) / n, counts.sum(axis=0) / n
    return Agreement(Statistic.P_EXPECTED, float(p_a @ p_b), n)


def cohen_kappa(
    a: ArrayLike, b: ArrayLike, *, values: Sequence[int], weights: Weights = None
) -> Agreement:
    """Cohen's kappa of two raters over the schema's categories (`values`).

    Undefined with no items in common, and when both raters used one and the
    same category only (chance agreement is then 1 and kappa is 0/0).
    """
    statistic = _KAPPA_STATISTIC[weights]
    counts = confusion_counts(a, b, values=values)
    n = int(counts.sum())
    if n == 0:
        return Agreement.undefined(statistic, 0, NO_COMMON_ITEMS)
    used = np.flatnonzero(counts.sum(axis=0) + counts.sum(axis=1))
    if used.size == 1:
        only = values[int(used[0])]
        return Agreement.undefined(
            statistic, n, f"both assessors used only category {only}; chance agreement is 1"
        )
    return Agreement(statistic, _kappa(counts, weights), n)


def _kappa(counts: np.ndarray, weights: Weights) -> float:
    """1 - sum(w * observed) / sum(w * expected), the weights over category
    positions: scikit-learn's definition (its `cohen_kappa_score` is the
    tests' oracle), without the second it takes to import scikit-learn."""
    positions = np.arange(counts.shape[0])
    distance = np.abs(positions[:, None] - positions[None, :])
    weight = {None: distance > 0, "linear": distance, "quadratic": distance**2}[weights]
    expected = np.outer(counts.sum(axis=0), counts.sum(axis=1)) / counts.sum()
    return float(1 - np.sum(weight * counts) / np.sum(weight * expected))


def voorhees_overlap(a: ArrayLike, b: ArrayLike, *, relevant_from: int = 1) -> Agreement:
    """Voorhees' overlap |A and B| / |A or B| of the items each rater labelled >= relevant_from."""
    a, b = np.asarray(a), np.asarray(b)
    if a.size == 0:
        return Agreement.undefined(Statistic.VOORHEES_OVERLAP, 0, NO_COMMON_ITEMS)
    in_a, in_b = a >= relevant_from, b >= relevant_from
    both, either = int(np.sum(in_a & in_b)), int(np.sum(in_a | in_b))
    if either == 0:
        return Agreement.undefined(
            Statistic.VOORHEES_OVERLAP, a.size, "neither assessor labelled any item relevant"
        )
    note = f"|A|={int(in_a.sum())}, |B|={int(in_b.sum())}, |A and B|={both}"
    return Agreement(Statistic.VOORHEES_OVERLAP, both / either, a.size, note=note)


def pair_statistics(a: ArrayLike, b: ArrayLike, aspect: Aspect) -> list[Agreement]:
    """Every pairwise statistic of an aspect, for two aligned label arrays."""
    results = [
        observed_agreement(a, b),
        chance_agreement(a, b, values=aspect.values),
        *(cohen_kappa(a, b, values=aspect.values, weights=w) for w in _KAPPA_STATISTIC),
    ]
    if aspect.relevant_from is not None:
        results.append(voorhees_overlap(a, b, relevant_from=aspect.relevant_from))
    return results


# --------------------------------------------------------------------------
# Multi-rater statistics on an items x categories count table


def fleiss_kappa(counts: ArrayLike) -> Agreement:
    """Fleiss' kappa of an items x categories table of rating counts.

    counts[i, j] is the number of assessors who put item i in category j.
    Items may have different numbers of ratings: see the module docstring for
    the rule (items with the most common count K > 2 are used; with no item
    rated more than twice, the items rated twice, where it is Scott's pi).
    """
    statistic = Statistic.FLEISS_KAPPA
    table = np.asarray(counts, dtype=np.float64)
    per_item = table.sum(axis=1)
    multi = per_item[per_item > 2]
    if multi.size:
        k = _most_common(multi)
    elif np.any(per_item == 2):
        k = 2.0
    else:
        return Agreement.undefined(statistic, 0, "no item rated by two or more assessors")
    table = table[per_item == k]
    left_out = int(np.sum(per_item >= 2)) - len(table)
    p_category = table.sum(axis=0) / table.sum()
    if np.count_nonzero(p_category) == 1:
        return Agreement.undefined(
            statistic, len(table), "only one category used; chance agreement is 1"
        )
    p_items = ((table**2).sum(axis=1) - k) / (k * (k - 1))
    p_expected = float(p_category @ p_category)
    value = (float(p_items.mean()) - p_expected) / (1.0 - p_expected)
    note = f"{k:g} ratings per item" + (" (Scott's pi)" if k == 2 else "")
    if left_out:
        note += f"; {left_out} other items rated more than once left out"
    return Agreement(statistic, value, len(table), note=note)


def krippendorff_alpha(counts: ArrayLike, *, values: Sequence[int], level: Level) -> Agreement:
    """Krippendorff's alpha of an items x categories table of rating counts.

    Columns follow `values` (the schema's categories, ascending, which the
    ordinal level uses). Items with fewer than two ratings carry no pairs and
    are left out; missing ratings need no special treatment.
    """
    statistic = _ALPHA_STATISTIC[level]
    table = np.asarray(counts, dtype=np.int64)
    pairable = table[table.sum(axis=1) >= 2]
    if len(pairable) == 0:
        return Agreement.undefined(statistic, 0, "no item rated by two or more assessors")
    if np.count_nonzero(pairable.sum(axis=0)) == 1:
        return Agreement.undefined(
            statistic, len(pairable), "only one category used; expected disagreement is 0"
        )
    import krippendorff

    value = krippendorff.alpha(
        value_counts=pairable, value_domain=list(values), level_of_measurement=level
    )
    return Agreement(statistic, float(value), len(pairable))


def group_statistics(counts: ArrayLike, aspect: Aspect) -> list[Agreement]:
    """Every multi-rater statistic of an aspect, for an items x categories count table."""
    return [
        fleiss_kappa(counts),
        *(krippendorff_alpha(counts, values=aspect.values, level=lv) for lv in _ALPHA_STATISTIC),
    ]


def category_index(labels: ArrayLike, values: Sequence[int]) -> np.ndarray:
    """Position of each label in `values`; ValueError for a label outside them."""
    labels = np.asarray(labels)
    domain = np.asarray(values)
    index = np.searchsorted(domain, labels).clip(max=len(domain) - 1)
    outside = domain[index] != labels
    if outside.any():
        raise ValueError(f"labels {np.unique(labels[outside]).tolist()} not in {list(values)}")
    return index


def _most_common(counts: np.ndarray) -> float:
    """The most frequent value, the larger one on a tie."""
    distinct, frequency = np.unique(counts, return_counts=True)
    return float(distinct[frequency == frequency.max()].max())


# --------------------------------------------------------------------------
# Flagging an assessor


@dataclass(frozen=True)
class FlagRule:
    """When an assessor's agreement with the others is low.

    An assessor's score is the mean of `statistic` (default: unweighted
    Cohen's kappa on relevance) over their campaign-level pairs with at least
    `min_items` common items. They are flagged if the score is below
    `min_value` (0.4: below "moderate" on the Landis and Koch scale) or more
    than `max_below_median` below the median score of the other assessors.
    """

    aspect: str = "relevance"
    statistic: str = Statistic.COHEN_KAPPA.value
    min_items: int = 10
    min_value: float = 0.4
    max_below_median: float = 0.2

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _median_of_others(means: np.ndarray) -> np.ndarray:
    """For each entry, the median of the other entries' defined values (NaN if none)."""
    n = len(means)
    others = np.where(np.eye(n, dtype=bool), np.nan, means[np.newaxis, :])
    defined = np.any(~np.isnan(others), axis=1)
    result = np.full(n, np.nan)
    result[defined] = np.nanmedian(others[defined], axis=1)
    return result


@dataclass(frozen=True)
class PairValue:
    """One statistic of two assessors over the items of every topic both rated
    (value NaN where it is undefined)."""

    assessor_a: Any
    assessor_b: Any
    value: float
    n_items: int


@dataclass(frozen=True)
class AssessorScore:
    """An assessor's mean agreement with the others under a `FlagRule`: mean_value
    over n_pairs usable pairs (NaN, with undefined_reason, if none), n_items summed
    over them, the median of the other assessors' means, and why they are flagged
    (None: they are not)."""

    assessor: Any
    mean_value: float
    n_pairs: int
    n_items: int
    median_of_others: float
    flag_reason: str | None
    undefined_reason: str | None


def campaign_pair_values(
    ratings: Iterable[tuple[Any, str, str, Any]], aspect: Aspect, statistic: str
) -> list[PairValue]:
    """`statistic` of `aspect` for every pair of assessors that rated a common item,
    over the items (query_id, doc_id) of all topics: the campaign rows of
    `agreement.pairwise_agreement`, from (assessor, query_id, doc_id, raw label)
    tuples, without a frame. Pairs are (a, b) with a < b, in order."""
    by_item: dict[tuple[str, str], list[tuple[Any, Any]]] = defaultdict(list)
    for assessor, query_id, doc_id, raw in ratings:
        by_item[(query_id, doc_id)].append((assessor, raw))
    labels: dict[tuple[Any, Any], tuple[list[Any], list[Any]]] = defaultdict(lambda: ([], []))
    for item, raters in by_item.items():
        for (a, raw_a), (b, raw_b) in combinations(sorted(raters, key=lambda r: r[0]), 2):
            if a == b:
                raise ValueError(f"two labels of {a!r} for one item {item}")
            labels[(a, b)][0].append(raw_a)
            labels[(a, b)][1].append(raw_b)
    pairs = []
    for (a, b), (raw_a, raw_b) in sorted(labels.items()):
        values_a, outside_a = aspect_values(raw_a, aspect)
        values_b, outside_b = aspect_values(raw_b, aspect)
        if outside_a.any() or outside_b.any():
            bad = np.concatenate([values_a[outside_a], values_b[outside_b]])
            raise ValueError(f"{aspect.column} values {bad.tolist()} outside {list(aspect.values)}")
        both = ~np.isnan(values_a) & ~np.isnan(values_b)
        chosen = next(
            result
            for result in pair_statistics(values_a[both], values_b[both], aspect)
            if result.statistic == statistic
        )
        value = math.nan if chosen.value is None else chosen.value
        pairs.append(PairValue(a, b, value, chosen.n_items))
    return pairs


def assessor_scores(pairs: Iterable[PairValue], rule: FlagRule) -> list[AssessorScore]:
    """Every assessor of `pairs` (the rule's aspect and statistic over the campaign)
    scored and flagged by `rule`: lowest mean first, undefined last, then by name."""
    sides: dict[Any, list[PairValue]] = defaultdict(list)
    for pair in pairs:
        sides[pair.assessor_a].append(pair)
        sides[pair.assessor_b].append(pair)
    assessors = sorted(sides)
    usable = [
        [p for p in sides[who] if not math.isnan(p.value) and p.n_items >= rule.min_items]
        for who in assessors
    ]
    means = np.array(
        [statistics.fmean(p.value for p in mine) if mine else math.nan for mine in usable]
    )
    medians = _median_of_others(means)
    scores = [
        AssessorScore(
            assessor=who,
            mean_value=float(mean),
            n_pairs=len(mine),
            n_items=sum(p.n_items for p in mine),
            median_of_others=float(median),
            flag_reason=_flag_reason(mean, median, rule),
            undefined_reason=None
            if mine
            else f"no pair with a defined {rule.statistic} on at least {rule.min_items} "
            "common items",
        )
        for who, mine, mean, median in zip(assessors, usable, means, medians, strict=True)
    ]
    undefined_last = lambda s: (math.isnan(s.mean_value), np.nan_to_num(s.mean_value), s.assessor)  # noqa: E731
    return sorted(scores, key=undefined_last)


def _flag_reason(mean: float, median_of_others: float, rule: FlagRule) -> str | None:
    """Why an assessor is flagged, None if they are not (comparisons with NaN are False)."""
    if mean < rule.min_value:
        return f"mean {rule.statistic} below {rule.min_value}"
    if mean < median_of_others - rule.max_below_median:
        return f"mean {rule.statistic} more than {rule.max_below_median} below the others' median"
    return None
