"""Final labels of judged items, and the items assessors disagree on. Pure core, no Django.

Frames (an item is a (query_id, doc_id) pair):

- judgments: `assessor, query_id, doc_id, relevance, is_primary` and one
  column per aspect (default `effectiveness, credibility`); one row per
  (assessor, item); relevance a non-negative int; aspects ints, where -1
  means "not judged because not relevant" and -2 "should have been judged
  and was not" (any negative value or null is "no value").
- adjudications: `query_id, doc_id, relevance` and the aspect columns (an
  absent aspect column counts as no value); optional `decided_by` (who
  decided, None if unknown), `decided_at` (when, as text) and `reason`;
  one row per item.

Final label policy: an ordered list of steps; each item takes its label from
the first step that gives one.

- adjudicated: the adjudication, if the item has one.
- primary: the judgment of the topic's primary assessor, if they judged it.
- majority: the relevance value given by more assessors than any other; a
  tie between the most frequent values gives nothing (falls through).
- maximum: the highest relevance value given. It always gives a label, so a
  policy ends with it.

Aspects come from the same source as the relevance decision: the
adjudication, or the primary's judgment, or, for majority and maximum, a
vote among the judgments that agree with the chosen relevance: the most
frequent value, the higher one on a tie, ignoring "no value". Then, so that
exported labels follow the qrels convention, the aspects of a label with
relevance 0 are -1 and an aspect left without a value on a relevant label
is -2.

Provenance is the step's name, except "single" for an item judged once
whose label is that judgment (whichever of primary, majority or maximum
took it): there was nothing to reconcile.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

import numpy as np
import pandas as pd

ITEM = ["query_id", "doc_id"]
DEFAULT_ASPECTS = ("effectiveness", "credibility")
NOT_RELEVANT = -1  # aspect code: not judged because not relevant
NOT_JUDGED = -2  # aspect code: should have been judged and was not
FINAL_COLUMNS_BEFORE_ASPECTS = ("query_id", "doc_id", "relevance")
FINAL_COLUMNS_AFTER_ASPECTS = (
    "provenance",
    "n_judgments",
    "assessors",
    "decided_by",
    "decided_at",
    "reason",
)
DISAGREEMENT_COLUMNS = (
    "query_id",
    "doc_id",
    "n_judgments",
    "assessors",
    "relevance_values",
    "spread",
    "crosses_line",
    "disagrees_on",
)


class Step(StrEnum):
    ADJUDICATED = "adjudicated"
    PRIMARY = "primary"
    MAJORITY = "majority"
    MAXIMUM = "maximum"


class Provenance(StrEnum):
    ADJUDICATED = "adjudicated"
    PRIMARY = "primary"
    MAJORITY = "majority"
    MAXIMUM = "maximum"
    SINGLE = "single"


@dataclass(frozen=True)
class LabelPolicy:
    """Ordered steps giving each item its final label; see the module docstring."""

    steps: tuple[Step, ...] = (Step.ADJUDICATED, Step.PRIMARY, Step.MAJORITY, Step.MAXIMUM)

    def __post_init__(self) -> None:
        try:
            steps = tuple(Step(step) for step in self.steps)
        except ValueError as error:
            raise ValueError(f"{error}; steps are {[s.value for s in Step]}") from None
        if len(set(steps)) != len(steps):
            raise ValueError(f"a step is listed twice in {[s.value for s in steps]}")
        if not steps or steps[-1] != Step.MAXIMUM:
            raise ValueError(
                "a policy ends with 'maximum', the step that always gives a label "
                f"(steps after it would never apply), got {[s.value for s in steps]}"
            )
        object.__setattr__(self, "steps", steps)

    def to_dict(self) -> dict[str, Any]:
        return {"steps": [step.value for step in self.steps]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabelPolicy:
        return cls(steps=tuple(data["steps"]))


DEFAULT_POLICY = LabelPolicy()


# --------------------------------------------------------------------------
# Final labels


def final_labels(
    judgments: pd.DataFrame,
    adjudications: pd.DataFrame | None = None,
    *,
    policy: LabelPolicy = DEFAULT_POLICY,
    aspects: Sequence[str] = DEFAULT_ASPECTS,
) -> pd.DataFrame:
    """The final label of every item that has one under `policy`.

    judgments, adjudications: as in the module docstring.

    Returns one row per item, sorted by query_id then doc_id, columns
    `query_id, doc_id, relevance, <aspects>, provenance, n_judgments,
    assessors, decided_by, decided_at, reason`: provenance a `Provenance`
    value; assessors the sorted tuple of everyone who judged the item;
    decided_by those who gave the label (the adjudicator; the primary; the
    majority; those who gave the maximum); decided_at and reason the
    adjudication's, "" for the other labels.
    """
    judgments = _checked_judgments(judgments, aspects)
    adjudications = _checked_adjudications(adjudications, aspects)
    chosen: list[pd.DataFrame] = []
    resolved = pd.MultiIndex.from_tuples([], names=ITEM)
    for step in policy.steps:
        candidates = _CANDIDATES[step](judgments, adjudications, aspects)
        new = candidates[~candidates.index.isin(resolved)]
        chosen.append(new.assign(provenance=step.value))
        resolved = resolved.append(new.index)
    labels = pd.concat(chosen).join(_judges(judgments))
    labels = labels.fillna({"n_judgments": 0}).astype({"n_judgments": np.int64})
    for column in ("decided_at", "reason"):  # the adjudication's; "" for other labels
        values = labels.get(column, pd.Series(index=labels.index, dtype=object)).astype(object)
        labels[column] = values.where(values.notna(), "")
    labels["assessors"] = labels.assessors.map(lambda who: who if isinstance(who, tuple) else ())
    judged_once = (labels.n_judgments == 1) & (labels.provenance != Provenance.ADJUDICATED)
    labels.loc[judged_once, "provenance"] = Provenance.SINGLE.value
    columns = [*FINAL_COLUMNS_BEFORE_ASPECTS, *aspects, *FINAL_COLUMNS_AFTER_ASPECTS]
    return labels.reset_index().sort_values(ITEM)[columns].reset_index(drop=True)


def _adjudicated(
    judgments: pd.DataFrame, adjudications: pd.DataFrame, aspects: Sequence[str]
) -> pd.DataFrame:
    labels = adjudications.set_index(ITEM)[["relevance", *aspects, "decided_at", "reason"]]
    decided_by = _tuples(
        [(who,) if isinstance(who, str) else () for who in adjudications.decided_by]
    )
    return _normalised(labels.assign(decided_by=decided_by), aspects)


def _primary(
    judgments: pd.DataFrame, adjudications: pd.DataFrame, aspects: Sequence[str]
) -> pd.DataFrame:
    primary = judgments[judgments.is_primary]
    twice = primary.duplicated(ITEM)
    if twice.any():
        first = primary.loc[twice, ITEM].iloc[0].to_dict()
        raise ValueError(f"two primary judgments of one item, first {first}")
    labels = primary.set_index(ITEM)[["relevance", *aspects]]
    decided_by = _tuples([(who,) for who in primary.assessor])
    return _normalised(labels.assign(decided_by=decided_by), aspects)


def _majority(
    judgments: pd.DataFrame, adjudications: pd.DataFrame, aspects: Sequence[str]
) -> pd.DataFrame:
    votes = judgments.groupby([*ITEM, "relevance"]).size().rename("votes").reset_index()
    leaders = votes[votes.votes == votes.groupby(ITEM).votes.transform("max")]
    unique_leaders = leaders[~leaders.duplicated(ITEM, keep=False)]
    return _voted(judgments, unique_leaders[[*ITEM, "relevance"]], aspects)


def _maximum(
    judgments: pd.DataFrame, adjudications: pd.DataFrame, aspects: Sequence[str]
) -> pd.DataFrame:
    highest = judgments.groupby(ITEM, as_index=False).relevance.max()
    return _voted(judgments, highest, aspects)


_CANDIDATES: dict[Step, Callable[[pd.DataFrame, pd.DataFrame, Sequence[str]], pd.DataFrame]] = {
    Step.ADJUDICATED: _adjudicated,
    Step.PRIMARY: _primary,
    Step.MAJORITY: _majority,
    Step.MAXIMUM: _maximum,
}


def _voted(judgments: pd.DataFrame, chosen: pd.DataFrame, aspects: Sequence[str]) -> pd.DataFrame:
    """Labels with the chosen relevance and aspects voted by the judgments that agree with it.

    chosen: `query_id, doc_id, relevance`, one row per item.
    """
    supporters = judgments.merge(chosen, on=[*ITEM, "relevance"])
    labels = chosen.set_index(ITEM)
    for aspect in aspects:
        labels[aspect] = _most_frequent_value(supporters, aspect)
    labels["decided_by"] = _tuples_by_assessor(supporters, "assessor")
    return _normalised(labels, aspects)


def _most_frequent_value(judgments: pd.DataFrame, column: str) -> pd.Series:
    """Per item, the most frequent value (>= 0) of `column`, the higher on a tie."""
    valued = judgments[judgments[column] >= 0]
    counts = valued.groupby([*ITEM, column]).size().rename("count").reset_index()
    ranked = counts.sort_values(["count", column], ascending=False)
    return ranked.drop_duplicates(ITEM).set_index(ITEM)[column]


def _normalised(labels: pd.DataFrame, aspects: Sequence[str]) -> pd.DataFrame:
    """Aspects as the qrels convention wants: -1 when not relevant, -2 if a value is missing."""
    relevant = labels.relevance > 0
    for aspect in aspects:
        has_value = labels[aspect] >= 0  # False for NaN
        labels[aspect] = (
            labels[aspect]
            .where(has_value & relevant, np.where(relevant, NOT_JUDGED, NOT_RELEVANT))
            .astype(np.int64)
        )
    return labels.astype({"relevance": np.int64})


def _tuples(values: Sequence[tuple[Any, ...]]) -> np.ndarray:
    """A 1-d object array of tuples (np.array would make a 2-d array of them)."""
    return pd.Series(list(values), dtype=object).to_numpy()


def _tuples_by_assessor(judgments: pd.DataFrame, column: str) -> pd.Series:
    """Per item, the tuple of `column` values of its judgments, in assessor order.

    Slicing one sorted list keeps this fast; groupby().agg(tuple) would build
    a Series per item.
    """
    ordered = judgments.sort_values([*ITEM, "assessor"])
    starts = np.flatnonzero(~ordered.duplicated(ITEM).to_numpy())
    bounds = [*starts.tolist(), len(ordered)]
    values = ordered[column].tolist()
    tuples = [tuple(values[start:end]) for start, end in itertools.pairwise(bounds)]
    index = pd.MultiIndex.from_frame(ordered[ITEM].iloc[starts])
    return pd.Series(tuples, index=index, dtype=object)


def _judges(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per item: n_judgments and assessors (sorted tuple)."""
    assessors = _tuples_by_assessor(judgments, "assessor")
    return pd.DataFrame({"n_judgments": assessors.map(len), "assessors": assessors})


# --------------------------------------------------------------------------
# Disagreements


def find_disagreements(
    judgments: pd.DataFrame,
    *,
    mode: Literal["any", "relevance_line"] = "any",
    aspects: Sequence[str] | None = None,
    relevant_from: int = 1,
    adjudications: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The queue of items whose assessors disagree, for adjudication.

    judgments: as in the module docstring (is_primary is not needed).
    mode: "any": two judgments differ in one of `aspects` (default relevance,
        effectiveness, credibility; "no value" is not a value, so
        effectiveness 2 against -1 is no difference); "relevance_line": one
        assessor says relevant (relevance >= relevant_from) and another not
        (`aspects` must then be None).
    adjudications: items listed here (`query_id, doc_id`) are already
        settled and left out.

    Returns columns DISAGREEMENT_COLUMNS: assessors sorted, relevance_values
    in the same order, spread = max - min relevance, crosses_line, and
    disagrees_on (the aspects that differ). Ordered worst first: items
    crossing the relevance line, then by spread, then by query_id, doc_id.
    """
    if mode not in ("any", "relevance_line"):
        raise ValueError(f"mode must be 'any' or 'relevance_line', got {mode!r}")
    if mode == "relevance_line" and aspects is not None:
        raise ValueError("mode 'relevance_line' compares relevance only; leave aspects unset")
    compared = ("relevance",) if mode == "relevance_line" else aspects
    compared = tuple(compared or ("relevance", *DEFAULT_ASPECTS))
    judgments = _checked_judgments(
        judgments, [a for a in compared if a != "relevance"], need_primary=False
    )
    if adjudications is not None:
        judgments = _without_items(judgments, adjudications)

    items = _judges(judgments)
    by_item = judgments.groupby(ITEM)
    items["spread"] = by_item.relevance.max() - by_item.relevance.min()
    relevant = judgments.assign(relevant=judgments.relevance >= relevant_from)
    items["crosses_line"] = relevant.groupby(ITEM).relevant.nunique() > 1
    differs = pd.DataFrame({a: _differs(judgments, a) for a in compared}).reindex(
        items.index, fill_value=False
    )
    listed = items.crosses_line if mode == "relevance_line" else differs.any(axis=1)
    items["disagrees_on"] = _names_where(differs, list(compared))
    items["relevance_values"] = _tuples_by_assessor(judgments, "relevance")
    queue = items[listed].reset_index()
    queue = queue.sort_values(
        ["crosses_line", "spread", *ITEM], ascending=[False, False, True, True]
    )
    return queue[list(DISAGREEMENT_COLUMNS)].reset_index(drop=True)


def _differs(judgments: pd.DataFrame, column: str) -> pd.Series:
    """Per item, whether two judgments give different values (>= 0) of `column`."""
    valued = judgments[judgments[column] >= 0]
    return valued.groupby(ITEM)[column].nunique() > 1


def _names_where(flags: pd.DataFrame, names: list[str]) -> pd.Series:
    """Per row, the tuple of column names whose flag is set."""
    name_array = np.array(names, dtype=object)
    return pd.Series(
        [tuple(name_array[row]) for row in flags.to_numpy(dtype=bool)],
        index=flags.index,
        dtype=object,
    )


def _without_items(frame: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    settled = pd.MultiIndex.from_frame(other[ITEM].astype("str"))
    return frame[~pd.MultiIndex.from_frame(frame[ITEM]).isin(settled)]


# --------------------------------------------------------------------------
# Validation


def _checked_judgments(
    judgments: pd.DataFrame, aspects: Iterable[str], *, need_primary: bool = True
) -> pd.DataFrame:
    """Judgments with string ids and numeric aspects; ValueError on bad input."""
    aspects = list(aspects)
    required = ["assessor", *ITEM, "relevance", *(["is_primary"] if need_primary else []), *aspects]
    _require_columns(judgments, required, "judgments")
    judgments = judgments[required].astype({"query_id": "str", "doc_id": "str"})
    twice = judgments.duplicated(["assessor", *ITEM])
    if twice.any():
        first = judgments.loc[twice, ["assessor", *ITEM]].iloc[0].to_dict()
        raise ValueError(f"two judgments by one assessor of one item, first {first}")
    _check_relevance(judgments, "judgments")
    converted = {a: pd.to_numeric(judgments[a]).astype(np.float64) for a in aspects}
    converted["relevance"] = pd.to_numeric(judgments.relevance).astype(np.int64)
    if need_primary:
        converted["is_primary"] = judgments.is_primary.astype(bool)
    return judgments.assign(**converted)


def _checked_adjudications(
    adjudications: pd.DataFrame | None, aspects: Sequence[str]
) -> pd.DataFrame:
    """Adjudications with every aspect column (NaN where absent); ValueError on bad input."""
    if adjudications is None:
        adjudications = pd.DataFrame(columns=[*ITEM, "relevance"])
    _require_columns(adjudications, [*ITEM, "relevance"], "adjudications")
    adjudications = adjudications.astype({"query_id": "str", "doc_id": "str"})
    twice = adjudications.duplicated(ITEM)
    if twice.any():
        first = adjudications.loc[twice, ITEM].iloc[0].to_dict()
        raise ValueError(f"two adjudications of one item, first {first}")
    _check_relevance(adjudications, "adjudications")
    return adjudications.assign(
        decided_by=_text_column(adjudications, "decided_by", None),
        decided_at=_text_column(adjudications, "decided_at", ""),
        reason=_text_column(adjudications, "reason", ""),
        relevance=pd.to_numeric(adjudications.relevance).astype(np.int64),
        **{
            a: pd.to_numeric(adjudications[a]).astype(np.float64) if a in adjudications else np.nan
            for a in aspects
        },
    )


def _text_column(frame: pd.DataFrame, column: str, missing: str | None) -> list[str | None]:
    """A column's values as text, `missing` where the frame lacks the column or a value."""
    if column not in frame:
        return [missing] * len(frame)
    return [missing if pd.isna(value) or value == "" else str(value) for value in frame[column]]


def _require_columns(frame: pd.DataFrame, columns: Iterable[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} frame lacks columns {missing}")


def _check_relevance(frame: pd.DataFrame, name: str) -> None:
    relevance = pd.to_numeric(frame.relevance)
    bad = relevance.isna() | (relevance < 0)
    if bad.any():
        first = frame.loc[bad, ITEM].iloc[0].to_dict()
        raise ValueError(f"{name}: relevance must be a value >= 0, first bad at {first}")
