"""Pool reusability: would a run whose documents were not pooled be scored fairly
with these qrels? Leave-one-out over the runs that built the pool. Pure core.

    report = reusability(qrels, runs, depth=100, measure=TREC.select(["map"])[0])
    report = sampled_reusability(stratified, runs, depth=200, measure=report_measure(
        "infAP", sampled=True))

The pool was built from the documents each run ranks within the top `depth`
of a topic (ranked by the decided rule, `workbench.core.ranking_rule`, as the pooler
ranks). For each run (and, given a run -> group mapping, each group of runs),
the judged documents that it alone pooled are taken out of the qrels, and its
runs are scored again: the score a run would get had it been a newcomer whose
documents nobody judged. docs/reusability.md states the rule in full.

Reported for each leave-out, beside the measure asked for: bpref (meant for
incomplete judgments) and the measure on condensed lists (trec_eval -J:
unjudged documents dropped from the ranking first, Sakai 2007). Over all
runs: Kendall's tau and tau_AP between the ranking with every judgment and
the leave-out ranking (each run scored without its own contribution), and
each run's share of its top k judged for k in JUDGED_AT.

A sampled (stratified) pool is left out the same way, scored with an inferred
measure (infAP, infNDCG, `scoring.core.measures.inferred`) and bpref, without -J:
a document only the unit pooled leaves the pool whether it was sampled or
not, and every other keeps the inclusion probability of the whole pool
(`scoring.core.measures.sampling.fixed_inclusion`). The one difference from a
depth-k pool in who pooled what is that unsampled rows (label -1) count as
pooled (`_Pool`).

Who pooled each qrels row is worked out once, from one ranking of every run;
each leave-out then scores only its own runs, on the qrels minus its rows
(`scoring.core.evaluation.evaluate`, so any trec_eval measure works).

Frames as `scoring.core.evaluation`: qrels with query_id, doc_id, relevance (and
maybe more numeric columns: stratum for a sampled pool); runs with query_id,
doc_id, score, run_id. An inclusion frame as
`scoring.core.measures.sampling.with_inclusion_probabilities` takes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from scoring.core.analysis.arguments import one_number
from scoring.core.analysis.correlation import kendall_tau, tau_ap
from scoring.core.analysis.ranks import ranks
from scoring.core.command_line import UsageError
from scoring.core.evaluation import evaluate
from scoring.core.measures.base import RequestedMeasure
from scoring.core.measures.catalog import SAMPLE_EVAL, TREC, MeasureError
from scoring.core.measures.columns import Coded, PlainQrels, Qrels, Run, qrels_columns, run_tag
from scoring.core.measures.params import ParamError
from scoring.core.measures.rankings import EvalOptions, JudgedRankings, Judgments, rank_and_judge
from scoring.core.measures.sampling import fixed_inclusion, with_inclusion_probabilities

if TYPE_CHECKING:
    import pandas as pd

JUDGED_AT = (10, 100, 1000)
BPREF = "bpref"
# What a sampled pool is scored with (sample_eval's), the first by default.
INFERRED = ("infAP", "infNDCG")
DEPTH_DEFAULT = "map"

type Depth = int | Mapping[str, int]


class ReusabilityError(ValueError):
    """Inputs a reusability report cannot be made from; the message says why.
    run: the index of the run at fault, when one is."""

    def __init__(self, message: str, *, run: int | None = None) -> None:
        super().__init__(message)
        self.run = run


@dataclass(frozen=True)
class ReusabilityInputs:
    """What a report is made from, however it was read (files, or a stored pool):
    the arguments of `reusability` but the measure; groups: those the source
    knows (a stored pool's teams), None when it knows none. sampled: a
    stratified pool (`sampled_reusability`: qrels with a stratum column,
    depth the deepest rank sampled, inclusion the probabilities if given)."""

    qrels: Qrels
    runs: Sequence[Run]
    depth: Depth
    options: EvalOptions
    groups: Mapping[str, str] | None = None
    sampled: bool = False
    inclusion: pd.DataFrame | None = None

    @property
    def default_measure(self) -> str:
        return default_measure(sampled=self.sampled)


@dataclass(frozen=True)
class MeasureScores:
    """One measure's summary for every run, with every judgment (`full`) and with
    the judged documents the run's unit alone pooled taken out (`without`).

    rank: in the ranking with every judgment (`ranks.ranks`: highest first,
    equal scores by tag). rank_without: the run's rank when its unit's runs
    score `without` and every other run its full score, as a newcomer would
    be ranked against the runs that were pooled. tau and tau_ap compare the
    full ranking with the leave-out ranking, every run at its `without`.
    """

    name: str
    judged_only: bool
    full: np.ndarray
    without: np.ndarray
    rank: np.ndarray
    rank_without: np.ndarray
    tau: float | None
    tau_ap: float | None

    @property
    def label(self) -> str:
        return f"{self.name} -J" if self.judged_only else self.name

    @property
    def change(self) -> np.ndarray:
        return self.without - self.full

    @property
    def mean_change(self) -> float:
        """The mean change over the runs that have a score both ways (NaN: none)."""
        change = self.change[np.isfinite(self.change)]
        return float(change.mean()) if len(change) else math.nan

    def largest_drop(self) -> int | None:
        """The run whose score falls most, None when none falls."""
        drop = self.full - self.without
        if not np.any(drop > 0):
            return None
        return int(np.nanargmax(drop))

    def largest_rank_drop(self) -> int | None:
        """The run that loses most places, None when none loses any."""
        fall = self.rank_without - self.rank
        if not np.any(fall > 0):
            return None
        return int(np.argmax(fall))


@dataclass(frozen=True)
class LeaveOut:
    """Each unit (a run, or a group of runs) left out in turn.

    names: the units; unit_of_run: each run's unit (an index into names).
    removed, removed_relevant: per unit, the qrels rows only it pooled (in a
    depth-k pool only judged ones: see `_Pool`), and how many of them are
    relevant (at the relevance level). removed_judged: how many of them are
    judged (all, in a depth-k pool).
    judged_without: k -> each run's share of its top k judged once its
    unit's pairs are taken out (see `Reusability.judged`).
    """

    unit: str
    names: tuple[str, ...]
    unit_of_run: np.ndarray
    removed: np.ndarray
    removed_relevant: np.ndarray
    removed_judged: np.ndarray
    measures: tuple[MeasureScores, ...]
    judged_without: dict[int, np.ndarray]

    def runs_of(self, unit: int) -> np.ndarray:
        return np.flatnonzero(self.unit_of_run == unit)


@dataclass(frozen=True)
class Reusability:
    """runs: the tags, in the order given; topics: the qrels topics.
    pooled: the qrels rows some run pooled (judged ones only, unless sampled);
    pooled_judged: the judged ones among them; judged: k -> each run's share of
    its top k documents judged (mean over its topics in the qrels; a topic with
    fewer than k documents counts those it has). sampled: a stratified pool,
    scored with an inferred measure and bpref, without -J."""

    measure: str
    depth: Depth
    runs: tuple[str, ...]
    topics: tuple[str, ...]
    pooled: int
    pooled_judged: int
    judged: dict[int, np.ndarray]
    by_run: LeaveOut
    by_group: LeaveOut | None
    sampled: bool = False

    @property
    def leave_outs(self) -> tuple[LeaveOut, ...]:
        return (self.by_run,) if self.by_group is None else (self.by_run, self.by_group)


def reusability(
    qrels: Qrels,
    runs: Sequence[Run],
    *,
    depth: Depth,
    measure: RequestedMeasure,
    groups: Mapping[str, str] | None = None,
    options: EvalOptions | None = None,
    progress: Callable[[int], object] | None = None,
) -> Reusability:
    """Leave each run (and each group of `groups`, run tag -> group) out of the
    pool built to `depth` (one depth, or one per topic: a topic without one
    pooled nothing), and score `measure` (one value, from `TREC.select`) with
    and without it. `options` as for `evaluate` (-J is set for the condensed
    variant only); `progress(1)` after each unit."""
    options = replace(options or EvalOptions(), judged_only=False)
    _check_measure(measure)
    name = measure.names[0]
    variants = [_Variant(name, measure, options)]
    if name != BPREF:
        variants.append(_Variant(BPREF, TREC.select([BPREF])[0], options))
    variants.append(_Variant(name, measure, replace(options, judged_only=True)))
    return _report(
        as_plain_qrels(qrels), runs, depth, variants, groups, options, progress, sampled=False
    )


def sampled_reusability(
    qrels: Qrels,
    runs: Sequence[Run],
    *,
    depth: Depth,
    measure: RequestedMeasure,
    inclusion: pd.DataFrame | None = None,
    groups: Mapping[str, str] | None = None,
    options: EvalOptions | None = None,
    progress: Callable[[int], object] | None = None,
) -> Reusability:
    """`reusability` for a stratified pool sampled down to `depth` (per topic: the
    deepest rank of its last stratum): qrels with a stratum column and label
    -1 for pooled documents not sampled, as sample_eval reads them; `measure`
    infAP or infNDCG (`report_measure`). The inclusion probabilities are those
    of `inclusion` (per stratum or per document, as `evaluate_sample` takes
    them), else each stratum's sampled share in these qrels; either way they
    are fixed from the whole pool and kept in every leave-out. The measure is
    scored as sample_eval scores it (evaluate's defaults), bpref with `options`."""
    options = replace(options or EvalOptions(), judged_only=False)
    _check_measure(measure)
    if measure.measure.name not in INFERRED:
        raise ReusabilityError(f"measure {measure.measure.name!r}: {_INFERRED_ONLY}")
    try:
        if inclusion is not None:
            qrels = with_inclusion_probabilities(qrels_frame(qrels), inclusion)
        plain = as_plain_qrels(qrels)
        fixed = fixed_inclusion(Judgments(plain, options.relevance_level))
    except ValueError as error:
        raise ReusabilityError(str(error)) from None
    plain = PlainQrels(plain.query_id, plain.doc_id, {**plain.columns, **fixed})
    variants = [
        _Variant(measure.names[0], measure, EvalOptions()),  # as evaluate_sample scores
        _Variant(BPREF, TREC.select([BPREF])[0], options),
    ]
    return _report(plain, runs, depth, variants, groups, options, progress, sampled=True)


def reusability_of(
    inputs: ReusabilityInputs,
    measure: RequestedMeasure,
    *,
    groups: Mapping[str, str] | None = None,
    progress: Callable[[int], object] | None = None,
) -> Reusability:
    """The report of inputs read from files or a stored pool, sampled or not."""
    if inputs.sampled:
        return sampled_reusability(
            inputs.qrels,
            inputs.runs,
            depth=inputs.depth,
            measure=measure,
            inclusion=inputs.inclusion,
            groups=groups,
            options=inputs.options,
            progress=progress,
        )
    return reusability(
        inputs.qrels,
        inputs.runs,
        depth=inputs.depth,
        measure=measure,
        groups=groups,
        options=inputs.options,
        progress=progress,
    )


_INFERRED_ONLY = f"a sampled pool is scored with an inferred measure, {' or '.join(INFERRED)}"


def default_measure(*, sampled: bool) -> str:
    return INFERRED[0] if sampled else DEPTH_DEFAULT


def report_measure(name: str, *, sampled: bool) -> RequestedMeasure:
    """The one per-topic number a report is about: for a sampled pool infAP or
    infNDCG (sample_eval's), for a depth-k pool one trec_eval measure (not
    infAP: on a depth-k pool that is AP). ReusabilityError says why not."""
    if sampled:
        if name not in INFERRED:
            raise ReusabilityError(f"measure {name!r}: {_INFERRED_ONLY}")
        return SAMPLE_EVAL.select([name])[0]
    if name in INFERRED:
        raise ReusabilityError(
            f"measure {name!r} is inferred from a sampled pool, and this pool samples "
            f"nothing: name a trec_eval measure (default {DEPTH_DEFAULT})"
        )
    try:
        return one_number(TREC.select([name]), name)
    except (MeasureError, ParamError, UsageError) as error:
        raise ReusabilityError(str(error)) from None


def _check_measure(measure: RequestedMeasure) -> None:
    if len(measure.names) != 1 or measure.measure.summary is None:
        raise ReusabilityError(f"measure {measure.measure.name!r}: one value with a summary")


def _report(
    qrels: PlainQrels,
    runs: Sequence[Run],
    depth: Depth,
    variants: list[_Variant],
    groups: Mapping[str, str] | None,
    options: EvalOptions,
    progress: Callable[[int], object] | None,
    *,
    sampled: bool,
) -> Reusability:
    """Who pooled what, once; then each unit left out and scored with `variants`."""
    tags = tuple(run_tag(run) for run in runs)
    for run, tag in enumerate(tags):
        if tag in tags[:run]:
            raise ReusabilityError(f"two runs have the tag {tag!r}", run=run)
    if not runs:
        raise ReusabilityError("no runs")
    judgments = Judgments(qrels, options.relevance_level)
    depths = _depth_of_topics(depth, judgments.topics)
    deepest = max(int(depths.max(initial=0)), *JUDGED_AT)
    ranked = rank_and_judge(
        judgments, runs, EvalOptions(max_docs_per_topic=deepest), with_judgment_rows=True
    )
    lacking = np.flatnonzero(np.bincount(ranked.group_run, minlength=len(runs)) == 0)
    if len(lacking):
        raise ReusabilityError(
            f"no topic of run {tags[lacking[0]]!r} is in the qrels", run=int(lacking[0])
        )
    scorer = _Scorer(qrels, runs, variants)
    full = scorer.scores(np.ones(len(judgments.row_label), dtype=bool), np.arange(len(runs)))
    pool = _Pool(ranked, depths, judgments.row_label, options.relevance_level, sampled=sampled)
    unit_kinds = [("run", tags, np.arange(len(runs)))]
    if groups is not None:
        names, unit_of_run = _group_units(tags, groups)
        unit_kinds.append(("group", names, unit_of_run))
    leave_outs = [
        _leave_out(kind, names, unit_of_run, pool, scorer, full, tags, variants, progress)
        for kind, names, unit_of_run in unit_kinds
    ]
    return Reusability(
        measure=variants[0].name,
        depth=depth if isinstance(depth, int) else dict(depth),
        runs=tags,
        topics=judgments.topics,
        pooled=pool.pooled,
        pooled_judged=pool.pooled_judged,
        judged={k: pool.judged_share(k) for k in JUDGED_AT},
        by_run=leave_outs[0],
        by_group=leave_outs[1] if groups is not None else None,
        sampled=sampled,
    )


def qrels_frame(qrels: Qrels) -> pd.DataFrame:
    """The qrels as a pandas frame (`with_inclusion_probabilities` takes one)."""
    import pandas as pd

    if isinstance(qrels, pd.DataFrame):
        return qrels
    query_id, doc_id, columns = qrels_columns(qrels)
    return pd.DataFrame(
        {
            "query_id": np.asarray(query_id.values.values, dtype=object)[query_id.codes],
            "doc_id": np.asarray(doc_id.values.values, dtype=object)[doc_id.codes],
            **columns,
        }
    )


def as_plain_qrels(qrels: Qrels) -> PlainQrels:
    """The qrels as coded columns, whatever frame they came in: rows are then
    taken out by index, and every scoring shares one docno index."""
    if isinstance(qrels, PlainQrels):
        return qrels
    return PlainQrels(*qrels_columns(qrels))


def qrels_subset(qrels: PlainQrels, keep: np.ndarray) -> PlainQrels:
    """The rows of `keep`; a topic left without rows is no longer a qrels topic."""
    vocabulary = qrels.query_id.values
    codes = qrels.query_id.codes[keep]
    present = np.bincount(codes, minlength=len(vocabulary)) > 0
    if not present.all():
        kept = np.flatnonzero(present)
        values = vocabulary.values
        renumber = np.full(len(values), -1, dtype=np.int64)
        renumber[kept] = np.arange(len(kept))
        vocabulary, codes = vocabulary.like([values[code] for code in kept]), renumber[codes]
    return PlainQrels(
        Coded(vocabulary, codes),
        Coded(qrels.doc_id.values, qrels.doc_id.codes[keep]),
        {name: values[keep] for name, values in qrels.columns.items()},
    )


@dataclass(frozen=True)
class _Variant:
    """One measure of the report, and the options it is scored with (-J or not)."""

    name: str
    requested: RequestedMeasure
    options: EvalOptions

    @property
    def judged_only(self) -> bool:
        return self.options.judged_only


class _Scorer:
    """Scores runs on the qrels rows kept: one evaluate per set of options."""

    def __init__(self, qrels: PlainQrels, runs: Sequence[Run], variants: list[_Variant]) -> None:
        self.qrels, self.runs, self.variants = qrels, runs, variants

    def scores(self, keep: np.ndarray, runs: np.ndarray) -> list[np.ndarray]:
        """Each variant's summary for `runs` (indices), on the rows of `keep`."""
        qrels = self.qrels if keep.all() else qrels_subset(self.qrels, keep)
        frames = [self.runs[run] for run in runs]
        result: list[np.ndarray] = [np.empty(0)] * len(self.variants)
        for options in dict.fromkeys(variant.options for variant in self.variants):
            chosen = [i for i, v in enumerate(self.variants) if v.options == options]
            requested = [self.variants[i].requested for i in chosen]
            evaluation = evaluate(qrels, frames, requested, options)
            by_name = {values.requested.names[0]: values.summary for values in evaluation.measures}
            for i in chosen:
                summary = by_name[self.variants[i].name]
                assert summary is not None  # checked: the measure has a summary
                result[i] = np.asarray(summary[:, 0], dtype=np.float64)
        return result


class _Pool:
    """Who pooled each qrels row: the ranked documents of every run within its
    topic's depth that the qrels list, worked out once. In a depth-k pool only
    judged rows (label >= 0) count: a -1 row scores as unjudged whether it is
    there or not. In a sampled pool every row counts, -1 too: the inferred
    measures count the pooled documents of each stratum, so a document only
    the unit pooled must leave the pool, sampled or not."""

    def __init__(
        self,
        ranked: JudgedRankings,
        depths: np.ndarray,
        labels: np.ndarray,
        relevance_level: int,
        *,
        sampled: bool,
    ) -> None:
        assert ranked.row_judgment is not None
        self.ranked = ranked
        self.relevant = labels >= relevance_level
        self.row_judged = labels >= 0
        self.n_rows = len(labels)
        self.row_run = ranked.group_run[ranked.row_group]
        self.judged = ranked.row_label >= 0
        within = ranked.row_rank < depths[ranked.group_topic[ranked.row_group]]
        pooled = within & (ranked.row_judgment >= 0 if sampled else self.judged)
        self.pooled_row = ranked.row_judgment[pooled]
        self.pooled_run = self.row_run[pooled]
        some_run = np.bincount(self.pooled_row, minlength=self.n_rows) > 0
        self.pooled = int(np.count_nonzero(some_run))
        self.pooled_judged = int(np.count_nonzero(some_run & self.row_judged))

    def sole_unit(self, unit_of_run: np.ndarray, n_units: int) -> np.ndarray:
        """For each qrels row, the one unit whose runs pooled it; -1 where no
        unit or more than one did."""
        key = np.unique(self.pooled_row * n_units + unit_of_run[self.pooled_run])
        row, unit = np.divmod(key, n_units)
        count = np.bincount(row, minlength=self.n_rows)
        only = np.full(self.n_rows, -1, dtype=np.int64)
        alone = count[row] == 1
        only[row[alone]] = unit[alone]
        return only

    def judged_share(self, k: int, lost: np.ndarray | None = None) -> np.ndarray:
        """Per run, the mean over its topics of the share of its top k judged;
        `lost` (per ranked row): judged documents that no longer count."""
        ranked = self.ranked
        judged = self.judged if lost is None else self.judged & ~lost
        counted = (ranked.row_rank < k) & judged
        n_groups = len(ranked.num_ret)
        per_group = np.bincount(ranked.row_group[counted], minlength=n_groups) / np.minimum(
            ranked.num_ret, k
        )
        n_runs = len(ranked.run_tags)
        topics = np.bincount(ranked.group_run, minlength=n_runs)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.bincount(ranked.group_run, per_group, minlength=n_runs) / topics

    def lost_rows(self, only: np.ndarray, unit_of_run: np.ndarray) -> np.ndarray:
        """Per ranked row: a judged document its own run's unit alone pooled."""
        row = self.ranked.row_judgment
        assert row is not None
        owner = np.where(row >= 0, only[np.maximum(row, 0)], -1)
        return (owner >= 0) & (owner == unit_of_run[self.row_run])


def _leave_out(
    kind: str,
    names: tuple[str, ...],
    unit_of_run: np.ndarray,
    pool: _Pool,
    scorer: _Scorer,
    full: list[np.ndarray],
    tags: tuple[str, ...],
    variants: list[_Variant],
    progress: Callable[[int], object] | None,
) -> LeaveOut:
    only = pool.sole_unit(unit_of_run, len(names))
    owned = only >= 0
    removed = np.bincount(only[owned], minlength=len(names))
    removed_relevant = np.bincount(only[owned & pool.relevant], minlength=len(names))
    removed_judged = np.bincount(only[owned & pool.row_judged], minlength=len(names))
    without = [values.copy() for values in full]
    for unit in range(len(names)):
        if removed[unit]:  # else the qrels are the same, and so are the scores
            members = np.flatnonzero(unit_of_run == unit)
            for values, scored in zip(without, scorer.scores(only != unit, members), strict=True):
                values[members] = scored
        if progress is not None:
            progress(1)
    lost = pool.lost_rows(only, unit_of_run)
    return LeaveOut(
        unit=kind,
        names=names,
        unit_of_run=unit_of_run,
        removed=removed,
        removed_relevant=removed_relevant,
        removed_judged=removed_judged,
        measures=tuple(
            _measure_scores(variant, tags, unit_of_run, full_values, without_values)
            for variant, full_values, without_values in zip(variants, full, without, strict=True)
        ),
        judged_without={k: pool.judged_share(k, lost) for k in JUDGED_AT},
    )


def _measure_scores(
    variant: _Variant,
    tags: tuple[str, ...],
    unit_of_run: np.ndarray,
    full: np.ndarray,
    without: np.ndarray,
) -> MeasureScores:
    rank_without = np.empty(len(tags), dtype=np.int64)
    for unit in np.unique(unit_of_run):
        members = unit_of_run == unit
        rank_without[members] = ranks(tags, np.where(members, without, full))[members]
    full_scores = dict(zip(tags, full.tolist(), strict=True))
    leave_out_scores = dict(zip(tags, without.tolist(), strict=True))
    return MeasureScores(
        name=variant.name,
        judged_only=variant.judged_only,
        full=full,
        without=without,
        rank=ranks(tags, full),
        rank_without=rank_without,
        tau=kendall_tau(full_scores, leave_out_scores),
        tau_ap=tau_ap(full_scores, leave_out_scores),
    )


def _depth_of_topics(depth: Depth, topics: Sequence[str]) -> np.ndarray:
    """The pooled depth of each qrels topic (0: nothing pooled)."""
    if isinstance(depth, int):
        given = dict.fromkeys(topics, depth)
    else:
        given = {topic: depth.get(topic, 0) for topic in topics}
    for topic, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ReusabilityError(f"the depth of topic {topic!r} is {value!r}, not a depth")
    if isinstance(depth, int) and depth < 1:
        raise ReusabilityError(f"the depth must be at least 1, not {depth}")
    return np.array([given[topic] for topic in topics], dtype=np.int64)


def _group_units(
    tags: tuple[str, ...], groups: Mapping[str, str]
) -> tuple[tuple[str, ...], np.ndarray]:
    """The groups (sorted) and each run's group; every run needs one."""
    missing = [tag for tag in tags if tag not in groups]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise ReusabilityError(f"run {missing[0]!r} has no group{more}", run=tags.index(missing[0]))
    names = tuple(sorted({groups[tag] for tag in tags}))
    index = {name: unit for unit, name in enumerate(names)}
    return names, np.array([index[groups[tag]] for tag in tags], dtype=np.int64)
