"""Inter-assessor agreement. Pure core, no Django.

Statistics, per aspect, per topic and over the campaign:

- pairwise (two assessors, the items both rated): observed agreement P(A),
  chance agreement P(E), Cohen's kappa unweighted, linear and quadratic
  (scikit-learn's `cohen_kappa_score` with the schema's values as labels),
  Voorhees' overlap |A and B| / |A or B| of the relevant sets, confusion matrices;
- over all assessors: Fleiss' kappa and Krippendorff's alpha (nominal and
  ordinal, missing ratings allowed, the `krippendorff` package).

Input: a labels frame, one row per judgment, with columns `assessor,
query_id, doc_id` and one integer column per judged aspect (`relevance`,
`effectiveness`, `credibility`). Negative values and nulls are "no value":
-1 (not judged because not relevant) and -2 (should have been judged and
was not) leave the item out of that aspect's statistics. Any other value
outside the aspect's schema is an error.

"Over the campaign" pools the items, (query_id, doc_id) pairs, of all topics.

Nothing here returns a silent NaN: a statistic that cannot be computed is an
`Agreement` with `value=None` and an `undefined_reason` (no items in common,
one category only, fewer than two ratings on every item, ...). In frames the
value is NaN and `undefined_reason` says why.

Fleiss' kappa needs the same number of ratings K on every item. Rule used
here: K is the most common number of ratings among the items rated more than
twice (ties: the larger); the items with exactly K ratings are used and the
others left out (the `note` says how many). With no item rated more than
twice it is undefined: with two ratings per item use Cohen's kappa.
Krippendorff's alpha needs no such rule: it uses every item with at least
two ratings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

ITEM = ["query_id", "doc_id"]
LABEL_KEY = ["assessor", *ITEM]
PAIR_COLUMNS = (
    "aspect",
    "scope",
    "query_id",
    "assessor_a",
    "assessor_b",
    "statistic",
    "value",
    "n_items",
    "undefined_reason",
    "note",
)
GROUP_COLUMNS = (
    "aspect",
    "scope",
    "query_id",
    "statistic",
    "value",
    "n_items",
    "n_assessors",
    "undefined_reason",
    "note",
)
ASSESSOR_COLUMNS = (
    "assessor",
    "mean_value",
    "n_pairs",
    "n_items",
    "median_of_others",
    "flagged",
    "flag_reason",
    "undefined_reason",
)

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


# --------------------------------------------------------------------------
# Pairwise statistics on two aligned label arrays (the items both rated)


def confusion_counts(a: ArrayLike, b: ArrayLike, *, values: Sequence[int]) -> np.ndarray:
    """Counts[i, j] = items labelled values[i] by the first rater and values[j] by the second.

    Every schema value has a row and a column, used or not.
    """
    a_index, b_index = _category_index(a, values), _category_index(b, values)
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
    the rule (items with the most common count K > 2 are used).
    """
    statistic = Statistic.FLEISS_KAPPA
    table = np.asarray(counts, dtype=np.float64)
    per_item = table.sum(axis=1)
    multi = per_item[per_item > 2]
    if multi.size == 0:
        return Agreement.undefined(
            statistic,
            0,
            "no item rated by more than two assessors (with two, use Cohen's kappa)",
        )
    k = _most_common(multi)
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
    note = f"{k:g} ratings per item" + (
        f"; {left_out} other items rated more than once left out" if left_out else ""
    )
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


# --------------------------------------------------------------------------
# Frames over a labels frame


def aspect_ratings(labels: pd.DataFrame, aspect: Aspect) -> pd.DataFrame:
    """The ratings of one aspect: columns `assessor, query_id, doc_id, value`.

    Rows without a value (null or negative) are dropped; `value` is an int
    from `aspect.values`. Raises ValueError on any other value.
    """
    values = _aspect_values(labels, aspect)
    present = ~np.isnan(values)
    ratings = labels.loc[present, LABEL_KEY].reset_index(drop=True)
    return ratings.assign(value=values[present].astype(np.int64))


def pairwise_agreement(
    labels: pd.DataFrame, *, aspects: Sequence[Aspect] = DEFAULT_ASPECTS
) -> pd.DataFrame:
    """Pairwise statistics of every assessor pair that judged a common item.

    labels: `assessor, query_id, doc_id` and the aspects' columns.

    Returns one row per (aspect, scope, query_id, assessor pair, statistic),
    columns PAIR_COLUMNS: scope is "topic" (query_id set) or "campaign"
    (query_id NaN, items of all topics pooled); assessor_a < assessor_b;
    statistic a `Statistic` value; value NaN exactly when undefined_reason
    is set. A pair appears in a scope if both judged at least one common
    item there; an aspect that neither rated on those items (effectiveness
    of non-relevant documents) is undefined with "no items in common".
    """
    pairs = _co_judged(labels, aspects)
    records: list[dict[str, Any]] = []
    for scope, query_id, (assessor_a, assessor_b), group in _pair_scopes(pairs):
        keys = {"scope": scope, "query_id": query_id}
        keys |= {"assessor_a": assessor_a, "assessor_b": assessor_b}
        for aspect in aspects:
            a = group[f"{aspect.name}_a"].to_numpy()
            b = group[f"{aspect.name}_b"].to_numpy()
            both = ~np.isnan(a) & ~np.isnan(b)
            for agreement in pair_statistics(a[both], b[both], aspect):
                records.append({"aspect": aspect.name, **keys, **agreement.to_dict()})
    return _frame(records, PAIR_COLUMNS)


def group_agreement(
    labels: pd.DataFrame, *, aspects: Sequence[Aspect] = DEFAULT_ASPECTS
) -> pd.DataFrame:
    """Fleiss' kappa and Krippendorff's alpha per aspect, per topic and over the campaign.

    labels: `assessor, query_id, doc_id` and the aspects' columns.

    Returns one row per (aspect, scope, query_id, statistic), columns
    GROUP_COLUMNS: scope and query_id as in `pairwise_agreement`;
    n_assessors is the number of assessors who rated the aspect in the scope.
    """
    _check_labels(labels, aspects)
    topics = sorted(labels.query_id.unique())
    records: list[dict[str, Any]] = []
    for aspect in aspects:
        ratings = aspect_ratings(labels, aspect)
        counts, item_topics = _count_table(ratings, aspect.values)
        per_topic = ratings.groupby("query_id").assessor.nunique()
        scopes = [("topic", t, item_topics == t, int(per_topic.get(t, 0))) for t in topics]
        scopes.append(("campaign", None, slice(None), ratings.assessor.nunique()))
        for scope, query_id, rows, n_assessors in scopes:
            keys = {"aspect": aspect.name, "scope": scope, "query_id": query_id}
            for agreement in group_statistics(counts[rows], aspect):
                records.append({**keys, **agreement.to_dict(), "n_assessors": n_assessors})
    return _frame(records, GROUP_COLUMNS)


def confusion_matrix(
    labels: pd.DataFrame,
    *,
    aspect: Aspect,
    assessor_a: Any,
    assessor_b: Any,
    query_id: str | None = None,
) -> pd.DataFrame:
    """Confusion matrix of two assessors on the items both rated (of one topic, or all).

    Rows are assessor_a's label, columns assessor_b's, both indexed by every
    value of the schema (a category nobody used still has its row and column).
    """
    ratings = aspect_ratings(labels, aspect)
    if query_id is not None:
        ratings = ratings[ratings.query_id == query_id]
    a = ratings[ratings.assessor == assessor_a]
    b = ratings[ratings.assessor == assessor_b]
    common = a.merge(b, on=ITEM, suffixes=("_a", "_b"))
    counts = confusion_counts(common.value_a, common.value_b, values=aspect.values)
    return pd.DataFrame(
        counts,
        index=pd.Index(aspect.values, name=str(assessor_a)),
        columns=pd.Index(aspect.values, name=str(assessor_b)),
    )


def worst_first(frame: pd.DataFrame, *, aspect: str, statistic: str) -> pd.DataFrame:
    """Rows of one aspect and statistic, lowest value first, undefined rows last.

    Works on `pairwise_agreement` and `group_agreement` frames; ties keep a
    stable order by the key columns.
    """
    chosen = frame[(frame.aspect == aspect) & (frame.statistic == statistic)]
    keys = [c for c in ("scope", "query_id", "assessor_a", "assessor_b") if c in chosen]
    ordered = chosen.sort_values(["value", *keys], na_position="last", kind="stable")
    return ordered.reset_index(drop=True)


# --------------------------------------------------------------------------
# Flagging assessors


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


def assessor_agreement(pairs: pd.DataFrame, *, rule: FlagRule = FlagRule()) -> pd.DataFrame:
    """Per assessor: mean pairwise agreement with the others, and whether it is flagged.

    pairs: a `pairwise_agreement` frame; only its campaign-level rows are used.

    Returns one row per assessor appearing in those rows, lowest mean first,
    columns ASSESSOR_COLUMNS: mean_value over n_pairs usable pairs (NaN, with
    undefined_reason, if none), n_items summed over those pairs,
    median_of_others (the median of the other assessors' means), flagged,
    flag_reason.
    """
    chosen = pairs[
        (pairs.scope == "campaign")
        & (pairs.aspect == rule.aspect)
        & (pairs.statistic == rule.statistic)
    ]
    sides = pd.concat(
        [
            chosen.assign(assessor=chosen[side])[["assessor", "value", "n_items"]]
            for side in ("assessor_a", "assessor_b")
        ],
        ignore_index=True,
    )
    usable = sides[sides.value.notna() & (sides.n_items >= rule.min_items)]
    per_assessor = usable.groupby("assessor").agg(
        mean_value=("value", "mean"), n_pairs=("value", "size"), n_items=("n_items", "sum")
    )
    table = per_assessor.reindex(pd.Index(sorted(sides.assessor.unique()), name="assessor"))
    table = table.fillna({"n_pairs": 0, "n_items": 0}).astype({"n_pairs": int, "n_items": int})
    table["median_of_others"] = _median_of_others(table.mean_value.to_numpy())
    table["flag_reason"] = _flag_reasons(table.mean_value, table.median_of_others, rule)
    table["flagged"] = table.flag_reason.notna()
    table["undefined_reason"] = _reasons_where(
        table.mean_value.isna(),
        f"no pair with a defined {rule.statistic} on at least {rule.min_items} common items",
    )
    ordered = table.reset_index().sort_values(["mean_value", "assessor"], na_position="last")
    return ordered[list(ASSESSOR_COLUMNS)].reset_index(drop=True)


def _median_of_others(means: np.ndarray) -> np.ndarray:
    """For each entry, the median of the other entries' defined values (NaN if none)."""
    n = len(means)
    others = np.where(np.eye(n, dtype=bool), np.nan, means[np.newaxis, :])
    defined = np.any(~np.isnan(others), axis=1)
    result = np.full(n, np.nan)
    result[defined] = np.nanmedian(others[defined], axis=1)
    return result


def _flag_reasons(mean: pd.Series, median_of_others: pd.Series, rule: FlagRule) -> pd.Series:
    """Why each assessor is flagged, None where they are not (comparisons with NaN are False)."""
    reasons = _reasons_where(
        mean < median_of_others - rule.max_below_median,
        f"mean {rule.statistic} more than {rule.max_below_median} below the others' median",
    )
    below_minimum = mean < rule.min_value
    reasons[below_minimum] = f"mean {rule.statistic} below {rule.min_value}"
    return reasons


def _reasons_where(condition: pd.Series, reason: str) -> pd.Series:
    return pd.Series(np.nan, index=condition.index, dtype="str").mask(condition, reason)


# --------------------------------------------------------------------------
# Serialisation


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts: NaN and NA become None, numpy scalars Python ones."""
    return [
        {key: _json_value(value) for key, value in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def agreement_summary(pairs: pd.DataFrame, groups: pd.DataFrame) -> dict[str, Any]:
    """The campaign-level agreement for a manifest: JSON-ready, no NaN.

    pairs, groups: `pairwise_agreement` and `group_agreement` frames.
    """
    return {
        "scope": "campaign (items of all topics pooled)",
        "groups": records(groups[groups.scope == "campaign"].drop(columns="query_id")),
        "pairs": records(pairs[pairs.scope == "campaign"].drop(columns="query_id")),
    }


def _json_value(value: Any) -> Any:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    return value.item() if isinstance(value, np.generic) else value


# --------------------------------------------------------------------------
# Helpers


def _check_labels(labels: pd.DataFrame, aspects: Sequence[Aspect]) -> None:
    names = [a.name for a in aspects]
    if len(set(names)) != len(names):
        raise ValueError(f"aspect names must be distinct, got {names}")
    required = [*LABEL_KEY, *dict.fromkeys(a.column for a in aspects)]
    missing = [c for c in required if c not in labels.columns]
    if missing:
        raise ValueError(f"labels frame lacks columns {missing}")
    duplicated = labels.duplicated(LABEL_KEY)
    if duplicated.any():
        first = labels.loc[duplicated, LABEL_KEY].iloc[0].to_dict()
        raise ValueError(
            f"{int(duplicated.sum())} duplicate labels for one (assessor, query_id, doc_id), "
            f"first {first}"
        )


def _aspect_values(labels: pd.DataFrame, aspect: Aspect) -> np.ndarray:
    """The aspect's value of each row as floats, NaN where there is none."""
    raw = pd.to_numeric(labels[aspect.column]).to_numpy(dtype=np.float64, na_value=np.nan)
    raw[raw < 0] = np.nan
    if aspect.binarise_at is not None:
        return np.where(np.isnan(raw), np.nan, (raw >= aspect.binarise_at).astype(np.float64))
    invalid = ~np.isnan(raw) & ~np.isin(raw, aspect.values)
    if invalid.any():
        first = labels.loc[invalid, LABEL_KEY].iloc[0].to_dict()
        raise ValueError(
            f"{int(invalid.sum())} {aspect.column} values outside the schema "
            f"{list(aspect.values)}, first {raw[invalid][0]:g} at {first}"
        )
    return raw


def _category_index(labels: ArrayLike, values: Sequence[int]) -> np.ndarray:
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


def _co_judged(labels: pd.DataFrame, aspects: Sequence[Aspect]) -> pd.DataFrame:
    """One row per item judged by two assessors, assessor_a < assessor_b.

    Columns: query_id, doc_id, assessor_a, assessor_b and, per aspect,
    `<name>_a` and `<name>_b` (floats, NaN where the assessor gave no value).
    """
    _check_labels(labels, aspects)
    slim = labels[LABEL_KEY].assign(**{a.name: _aspect_values(labels, a) for a in aspects})
    pairs = slim.merge(slim, on=ITEM, suffixes=("_a", "_b"))
    return pairs[pairs.assessor_a < pairs.assessor_b].reset_index(drop=True)


def _pair_scopes(
    pairs: pd.DataFrame,
) -> Iterator[tuple[str, str | None, tuple[Any, Any], pd.DataFrame]]:
    """(scope, query_id, (assessor_a, assessor_b), rows) per topic, then over the campaign."""
    for (query_id, a, b), group in pairs.groupby(["query_id", "assessor_a", "assessor_b"]):
        yield "topic", query_id, (a, b), group
    for (a, b), group in pairs.groupby(["assessor_a", "assessor_b"]):
        yield "campaign", None, (a, b), group


def _count_table(ratings: pd.DataFrame, values: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Items x categories rating counts of an `aspect_ratings` frame, and each item's topic.

    Items are (query_id, doc_id) in sorted order; columns follow `values`.
    """
    item = ratings.groupby(ITEM, sort=True).ngroup().to_numpy()
    n_items = int(item.max()) + 1 if len(item) else 0
    counts = np.zeros((n_items, len(values)), dtype=np.int64)
    np.add.at(counts, (item, _category_index(ratings.value, values)), 1)
    topics = np.empty(n_items, dtype=object)
    topics[item] = ratings.query_id.to_numpy()
    return counts, topics


def _frame(rows: list[dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(columns))
    return frame.astype({"value": np.float64, "undefined_reason": "str", "note": "str"})
