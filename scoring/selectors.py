"""What scoring's selectors share: a pool's state read once, and its scores.

The concerns apart: qrels exports in `scoring.export_selectors`, ranking stability in
`scoring.stability_selectors`, the leaderboard in `scoring.leaderboard_selectors`,
reusability in `scoring.reusability_selectors`; each reads the pool through
`pool_state` and scores runs through `pool_scores_report` here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc
from django.conf import settings
from django.db.models import Exists, F, Max, OuterRef

from judging import selectors as judging_selectors
from judging.adaptive import adaptive_inclusion, is_adaptive
from judging.core import label_sources
from judging.models import Adjudication, JudgmentEvent, MachineAssessor, MachineJudgment
from pooling import selectors as pooling_selectors
from pooling.models import Pool, PoolEntry, Run
from scoring.core import exports
from scoring.core.evaluation import evaluate
from scoring.core.exports import ExportError
from scoring.core.measures.base import RequestedMeasure
from scoring.core.measures.catalog import TREC, MeasureError
from scoring.core.measures.params import ParamError
from scoring.core.measures.rankings import EvalOptions
from scoring.core.sample_eval import evaluate_sample
from workbench.core.run_files import read_run_cache
from workbench.core.topic_ids import topic_sort_key

__all__ = [
    "ExportError",
    "NoRuns",
    "NothingJudged",
    "PoolScores",
    "ScoringError",
    "pool_scores",
    "pool_scores_report",
]


@dataclass(frozen=True)
class PoolState:
    """Everything an export reads from the database, read once."""

    pool: Pool
    labels: pd.DataFrame
    entries: pd.DataFrame
    aspects: tuple[str, ...]
    answers: dict[str, int]
    choice: LabelChoice = field(default_factory=lambda: HUMAN_CHOICE)

    @property
    def format_problems(self) -> dict[str, str]:
        return exports.format_problems(
            aspects=self.aspects, answers=self.answers, topics=self.entries["query_id"].unique()
        )


# Whose labels a qrels is made of (issue 25 item 6): the assessors' (the pool's final
# labels under its policy, adjudications first), a machine's, or the assessors' with
# the machine's filling the gaps. One definition, the pure core's.
HUMAN_LABELS = label_sources.HUMAN
LABEL_SOURCES = label_sources.LABEL_SOURCES


class LabelChoiceError(ExportError):
    """A label source or machine the pool cannot give: the request's mistake (400 / exit 2)."""


@dataclass(frozen=True)
class LabelChoice:
    """Whose labels: `source` one of LABEL_SOURCES and, for a machine source, the
    machine's name ("" for human). Made by `label_choice`, which checks both."""

    source: str = HUMAN_LABELS
    machine: str = ""

    @property
    def is_human(self) -> bool:
        return self.source == HUMAN_LABELS

    @property
    def key(self) -> str:
        """What cache and job keys carry: a machine's table is never served for human."""
        return self.source if self.is_human else f"{self.source}:{self.machine}"

    def params(self) -> dict[str, str]:
        """The query parameters naming this choice (none for the default, human)."""
        return {} if self.is_human else {"labels": self.source, "machine": self.machine}


HUMAN_CHOICE = LabelChoice()


def labelled_machines(pool: Pool) -> list[MachineAssessor]:
    """The campaign's machines with labels on the pool's documents, by name."""
    in_pool = PoolEntry.objects.filter(pool=pool, topic=OuterRef("topic"), docno=OuterRef("docno"))
    labelled = MachineJudgment.objects.filter(Exists(in_pool), machine=OuterRef("pk"))
    return list(
        MachineAssessor.objects.filter(campaign=pool.campaign_id)
        .filter(Exists(labelled))
        .select_related("account")
        .order_by("name")
    )


def label_choice(pool: Pool, labels: str | None = None, machine: str | None = None) -> LabelChoice:
    """The labels asked for: `labels` one of LABEL_SOURCES (None or "": human); with a
    machine source, `machine` names one of the campaign's machines with labels on the
    pool, or may be left out when exactly one has. LabelChoiceError naming the
    choices otherwise. With labels human, `machine` is not read."""
    source = labels or HUMAN_LABELS
    try:
        label_sources.label_source(source)
    except ValueError as error:
        raise LabelChoiceError(str(error)) from None
    if source == HUMAN_LABELS:  # a machine named beside it (a page's form sends one) is unused
        return HUMAN_CHOICE
    names = [each.name for each in labelled_machines(pool)]
    if not names:
        raise LabelChoiceError(f"labels {source}: no machine has labels on pool {pool.pk}")
    if not machine:
        if len(names) == 1:
            return LabelChoice(source, names[0])
        raise LabelChoiceError(f"labels {source}: name the machine, one of {', '.join(names)}")
    if machine not in names:
        raise LabelChoiceError(
            f"no machine {machine!r} with labels on pool {pool.pk}: one of {', '.join(names)}"
        )
    return LabelChoice(source, machine)


def label_choice_of(pool: Pool, query: Any) -> LabelChoice:
    """`label_choice` of a request's query (`labels`, `machine`)."""
    return label_choice(pool, query.get("labels"), query.get("machine"))


@dataclass(frozen=True)
class LabelOffer:
    """What a page offers of the label sources: the machines with labels on the
    pool (none: the page shows human only, and says why) and the current choice."""

    choice: LabelChoice
    machines: list[str]
    sources: tuple[str, ...] = LABEL_SOURCES

    @property
    def query(self) -> str:
        """The choice as a query string for the page's links ("" for human)."""
        from urllib.parse import urlencode

        return urlencode(self.choice.params())


def label_offer(pool: Pool, choice: LabelChoice = HUMAN_CHOICE) -> LabelOffer:
    return LabelOffer(choice, [machine.name for machine in labelled_machines(pool)])


def machine_final_labels(pool: Pool, machine: str, aspects: Sequence[str]) -> pd.DataFrame:
    """One machine's labels of the pool in the shape of the final labels
    (`judging.selectors.final_labels`): provenance "machine", the machine's account
    as the assessor who decided it."""
    from judging.machine_selectors import machine_labels_frame

    assessor = MachineAssessor.objects.select_related("account").get(
        campaign=pool.campaign_id, name=machine
    )
    frame = machine_labels_frame(pool, assessor)
    who = (assessor.account.username,)
    columns = ["query_id", "doc_id", "relevance", *aspects]
    frame = frame[columns].copy()
    frame["provenance"] = "machine"
    frame["n_judgments"] = np.int64(1)
    frame["assessors"] = [who] * len(frame)
    frame["decided_by"] = [who] * len(frame)
    frame["decided_at"] = ""
    frame["reason"] = ""
    return frame.astype({"n_judgments": "int64"}).reset_index(drop=True)


def chosen_labels(
    pool: Pool, choice: LabelChoice, human: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The final labels of `choice` (`label_sources.labels_for_source`); `human`: the
    pool's final human labels when the caller has them already."""
    human = judging_selectors.final_labels(pool) if human is None else human
    if choice.is_human:
        return human
    machine = machine_final_labels(pool, choice.machine, pool.campaign.schema.aspect_ids)
    return label_sources.labels_for_source(human, machine, choice.source)


def pool_state(
    pool: Pool,
    *,
    labels: str = HUMAN_LABELS,
    machine: str | None = None,
    human: pd.DataFrame | None = None,
) -> PoolState:
    """What every qrels export of the pool is made from; `labels` one of LABEL_SOURCES,
    `machine` a machine's name for a machine source (`label_choice`; LabelChoiceError,
    an ExportError, for what it refuses). `human`: the pool's final human labels, when
    the caller read them already (a report on several label sources)."""
    choice = label_choice(pool, labels, machine)
    entries = pooling_selectors.pool_entries_frame(pool)
    if is_adaptive(pool):
        # The probabilities of the draws so far, not of the build (judging.adaptive).
        inclusion = adaptive_inclusion(pool)
        keys = zip(entries["query_id"], entries["doc_id"], strict=True)
        entries["inclusion_probability"] = [inclusion[key] for key in keys]
    return PoolState(
        pool=pool,
        labels=chosen_labels(pool, choice, human),
        entries=entries,
        aspects=pool.campaign.schema.aspect_ids,
        answers=pool_answers(pool),
        choice=choice,
    )


def pool_answers(pool: Pool) -> dict[str, int]:
    """Each topic's accepted answer (extra 'answer'), where it is a whole number."""
    answers = {}
    for topic_id, extra in pool.campaign.topics.values_list("topic_id", "extra"):
        try:
            answers[topic_id] = int(extra["answer"])
        except (KeyError, TypeError, ValueError):
            continue
    return answers


def state_time(pool: Pool) -> str:
    """When the exported state last changed: the latest judgment or adjudication."""
    times = [
        pool.created_at,
        JudgmentEvent.objects.filter(topic__campaign=pool.campaign).aggregate(t=Max("at"))["t"],
        Adjudication.objects.filter(topic__campaign=pool.campaign).aggregate(t=Max("decided_at"))[
            "t"
        ],
        *pool.additions.values_list("created_at", flat=True),
        *pool.revisions.values_list("created_at", flat=True),
    ]
    return max(t for t in times if t is not None).isoformat(timespec="seconds")


def state_version(pool: Pool, choice: LabelChoice = HUMAN_CHOICE) -> str:
    """Changes whenever the labels, the pool or the runs change (finer than
    `state_time`, which is to the second); with a machine's labels, whenever its
    labels change too, and never equal to the human labels' version."""
    campaign = pool.campaign
    events = JudgmentEvent.objects.filter(topic__campaign=campaign).aggregate(n=Max("id"))["n"]
    decided = Adjudication.objects.filter(topic__campaign=campaign).aggregate(t=Max("decided_at"))
    runs = campaign.runs.aggregate(n=Max("id"))["n"]
    policy = json.dumps(judging_selectors.policy_of(pool).label_policy, sort_keys=True)
    changes = f"{pool.revisions.count()}:{pool.additions.count()}"
    version = f"{events}:{decided['t']}:{runs}:{changes}:{policy}"
    if not choice.is_human:
        machine = MachineJudgment.objects.filter(
            machine__campaign=campaign, machine__name=choice.machine
        ).aggregate(n=Max("id"), t=Max("updated_at"))
        version += f":{choice.key}:{machine['n']}:{machine['t']}"
    return hashlib.sha256(version.encode()).hexdigest()[:20]


# --------------------------------------------------------------------------
# Scores


class ScoringError(ValueError):
    """Runs that cannot be scored against this pool yet; the message says why."""


class NothingJudged(ScoringError):
    """No final label yet: a state of the campaign, not a mistake of the request."""


class NoRuns(ScoringError):
    """The campaign has no run to rank yet: a state of the campaign, as NothingJudged."""


DEFAULT_MEASURES = ("map", "P.10", "ndcg_cut.10", "bpref", "recip_rank")
# How a pool's runs are scored: trec_eval -c -M 1000 (a judged topic a run lacks counts 0).
POOL_MAX_DOCS = 1000
POOL_EVAL_OPTIONS = EvalOptions(complete=True, max_docs_per_topic=POOL_MAX_DOCS)
INFERRED_MEASURES = ("infAP", "infNDCG")


@dataclass(frozen=True)
class PoolScores:
    """The scores of the campaign's runs and the topics they are averaged over.

    scores: run_id, query_id ("all" for the means), measure, value.
    judged_topics: the topics with final labels, which every mean is over (-c).
    left_out: the campaign's other topics (nothing judged), in no mean.
    missing: run_id -> the judged topics the run has no ranking for (each scores 0).
    """

    scores: pd.DataFrame
    judged_topics: list[str]
    left_out: list[str]
    missing: dict[str, list[str]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for a job's result (`from_dict` reads it back)."""
        return {
            "scores": self.scores[["run_id", "query_id", "measure", "value"]].to_dict("list"),
            "judged_topics": self.judged_topics,
            "left_out": self.left_out,
            "missing": self.missing,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PoolScores:
        return cls(
            scores=pd.DataFrame(data["scores"]),
            judged_topics=data["judged_topics"],
            left_out=data["left_out"],
            missing=data["missing"],
        )


def scoring_cells(pool: Pool) -> int:
    """How much work scoring the campaign's runs is: runs x topics."""
    return pool.campaign.runs.count() * pool.campaign.topics.count()


def scores_in_request(pool: Pool) -> bool:
    """Whether a page scores the campaign's runs here or in a job
    (WORKBENCH_SYNC_SCORING_CELLS)."""
    return scoring_cells(pool) <= settings.WORKBENCH_SYNC_SCORING_CELLS


def runs_in_request(pool: Pool) -> int:
    """How many runs a picture scores while you wait (the precision-recall curves):
    as many as WORKBENCH_SYNC_SCORING_CELLS allows over the campaign's topics, one
    at least. Every run, in a pool small enough to be scored in the request."""
    topics = max(1, pool.campaign.topics.count())
    return max(1, settings.WORKBENCH_SYNC_SCORING_CELLS // topics)


def scores_version(pool: Pool, measures: list[str], choice: LabelChoice = HUMAN_CHOICE) -> str:
    """What a stored scoring was computed from: the labels' state (whose labels
    included) and the measures."""
    return f"{state_version(pool, choice)}:{' '.join(measures)}"


def trec_measures(measures: list[str]) -> list[RequestedMeasure]:
    """The measures of trec_eval `-m` arguments; ScoringError for one it does not know
    (cheap: a page says so before it starts a job)."""
    try:
        return TREC.select(measures)
    except (MeasureError, ParamError) as error:
        raise ScoringError(str(error)) from None


def leaderboard_measure_name(measure: str) -> str:
    """The one value a leaderboard ranks by (`P.10` is P_10, `Rprec_mult_1.5` is
    Rprec_mult_1.50, an inferred measure is itself); ScoringError for a measure it
    does not know or that names several values (`recall.1,2`, `P`)."""
    if measure in INFERRED_MEASURES:
        return measure
    try:
        return TREC.select_one(measure).names[0]
    except (MeasureError, ParamError) as error:
        raise ScoringError(str(error)) from None


def pool_scores(
    *,
    pool: Pool,
    measures: list[str] | None = None,
    per_topic: bool = False,
    choice: LabelChoice | None = None,
) -> pd.DataFrame:
    """Every run of the campaign scored against the pool's current final labels.

    trec_eval measures as `-c -M 1000` computes them (missing topics count 0),
    and for a sampled pool sample_eval's infAP and infNDCG from its strata.
    Columns: run_id, query_id ("all" for the means), measure, value.
    """
    return pool_scores_report(
        pool=pool, measures=measures, per_topic=per_topic, choice=choice or HUMAN_CHOICE
    ).scores


def pool_scores_report(
    *,
    pool: Pool,
    measures: list[str] | None = None,
    per_topic: bool = False,
    runs: Sequence[Run] | None = None,
    progress: Any = None,
    choice: LabelChoice = HUMAN_CHOICE,
    human: pd.DataFrame | None = None,
) -> PoolScores:
    """`pool_scores`, with the topics the means are over and those left out; of
    `runs` only (a team's), when given: a run's scores do not depend on the others'.
    `progress` (a job's JobProgress) advances by one per run read, and one for
    the scoring. `choice`: whose labels (`label_choice`; the humans' by default);
    `human` as `pool_state`'s."""
    state = pool_state(pool, labels=choice.source, machine=choice.machine or None, human=human)
    if state.labels.empty:
        raise NothingJudged("nothing is judged in this pool yet")
    requested = trec_measures(list(measures or DEFAULT_MEASURES))
    tagged = campaign_runs(pool, runs, progress)
    tables = [table for _, table in tagged]
    qrels = state.labels[["query_id", "doc_id", "relevance"]]
    frames = [evaluate(qrels, tables, requested, POOL_EVAL_OPTIONS).to_frame()]
    if pooling_selectors.pool_samples(pool):
        inferred = evaluate_sample(stratified_qrels(state), tables).to_frame()
        frames.append(inferred[inferred["measure"].isin(INFERRED_MEASURES)])
    scores = pd.concat(frames, ignore_index=True).drop(columns="run")
    if not per_topic:
        scores = scores[scores["query_id"] == "all"]
    if progress is not None:
        progress.advance()
    judged = sorted(set(qrels["query_id"]), key=topic_sort_key)
    campaign_topics = pool.campaign.topics.values_list("topic_id", flat=True)
    missing = {}
    for tag, table in tagged:
        has = set(pc.unique(table["query_id"]).to_pylist())
        missing[tag] = [topic for topic in judged if topic not in has]
    return PoolScores(
        scores=scores.reset_index(drop=True),
        judged_topics=judged,
        left_out=sorted(set(campaign_topics) - set(judged), key=topic_sort_key),
        missing=missing,
    )


def stratified_qrels(state: PoolState) -> pd.DataFrame:
    """The pool's stratified qrels (sample_eval's), which its inferred measures score on."""
    return exports.export_frame(
        "stratified", labels=state.labels, entries=state.entries, aspects=state.aspects
    )


def campaign_runs(
    pool: Pool, runs: Sequence[Run] | None = None, progress: Any = None
) -> list[tuple[str, Any]]:
    """(tag, ranked table) of every run of the pool's campaign (or of `runs`), by tag;
    `progress` expects one step per run and one more (the caller's)."""
    chosen = list(pool.campaign.runs.order_by("tag")) if runs is None else sorted(runs, key=_tag)
    if progress is not None:
        progress(done=0, total=len(chosen) + 1)
    tagged = []
    for run in chosen:
        tagged.append((run.tag, read_run_cache(run.cache_file.path)))
        if progress is not None:
            progress.advance()
    return tagged


def runs_tagged(pool: Pool, tags: Sequence[str]) -> list[Run]:
    """The campaign's runs of these tags; ScoringError naming any it has not."""
    runs = list(pool.campaign.runs.filter(tag__in=tags))
    unknown = sorted(set(tags) - {run.tag for run in runs})
    if unknown:
        raise ScoringError(f"no run {', '.join(unknown)} in this campaign")
    return runs


def _tag(run: Run) -> str:
    return run.tag


def refuse_unjudged(pool: Pool) -> None:
    """NothingJudged for a pool none of whose documents is judged yet; cheap (one
    query), so that a page says so rather than start a job that would fail."""
    if not pool.entries.filter(topic__judgments__docno=F("docno")).exists():
        raise NothingJudged("nothing is judged in this pool yet")
