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
twice, K is 2: the items rated twice are used, and Fleiss' kappa is then
Scott's pi (statsmodels' `fleiss_kappa` gives the same value); it differs
from Cohen's kappa in pooling both assessors' categories for P(E).
Krippendorff's alpha needs no such rule: it uses every item with at least
two ratings.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

# The statistics on arrays live in agreement_statistics (no pandas); callers read
# this module as the whole of agreement, so its names are re-exported here.
from judging.core.agreement_statistics import DEFAULT_ASPECTS as DEFAULT_ASPECTS
from judging.core.agreement_statistics import NO_COMMON_ITEMS as NO_COMMON_ITEMS
from judging.core.agreement_statistics import Agreement as Agreement
from judging.core.agreement_statistics import Aspect as Aspect
from judging.core.agreement_statistics import FlagRule as FlagRule
from judging.core.agreement_statistics import (
    PairValue,
    aspect_values,
    assessor_scores,
    category_index,
    group_statistics,
    pair_statistics,
)
from judging.core.agreement_statistics import Statistic as Statistic
from judging.core.agreement_statistics import aspects_for_schema as aspects_for_schema
from judging.core.agreement_statistics import chance_agreement as chance_agreement
from judging.core.agreement_statistics import cohen_kappa as cohen_kappa
from judging.core.agreement_statistics import confusion_counts as confusion_counts
from judging.core.agreement_statistics import fleiss_kappa as fleiss_kappa
from judging.core.agreement_statistics import krippendorff_alpha as krippendorff_alpha
from judging.core.agreement_statistics import observed_agreement as observed_agreement
from judging.core.agreement_statistics import voorhees_overlap as voorhees_overlap

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
    values = map(PairValue, chosen.assessor_a, chosen.assessor_b, chosen.value, chosen.n_items)
    scores = [
        asdict(score) | {"flagged": score.flag_reason is not None}
        for score in assessor_scores(values, rule)
    ]
    table = pd.DataFrame(scores, columns=list(ASSESSOR_COLUMNS))
    kinds: dict[str, Any] = {"mean_value": np.float64, "median_of_others": np.float64}
    kinds |= {"n_pairs": np.int64, "n_items": np.int64, "flagged": bool}
    return table.astype(kinds | {"flag_reason": "str", "undefined_reason": "str"})


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
    values, outside = aspect_values(raw, aspect)
    if outside.any():
        first = labels.loc[outside, LABEL_KEY].iloc[0].to_dict()
        raise ValueError(
            f"{int(outside.sum())} {aspect.column} values outside the schema "
            f"{list(aspect.values)}, first {values[outside][0]:g} at {first}"
        )
    return values


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
    np.add.at(counts, (item, category_index(ratings.value, values)), 1)
    topics = np.empty(n_items, dtype=object)
    topics[item] = ratings.query_id.to_numpy()
    return counts, topics


def _frame(rows: list[dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(columns))
    return frame.astype({"value": np.float64, "undefined_reason": "str", "note": "str"})
