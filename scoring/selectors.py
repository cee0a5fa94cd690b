"""qrels exports of a pool: one file, or a bundle with its manifest.

The labels are the pool's final labels under its stored policy
(`judging.judging_selectors.final_labels`); the files are written by the pure core
`scoring.core.exports`. The same state always gives byte-identical files; in a
bundle only `exported_at` in the manifest changes from one export to the next.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc
from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Max
from django.utils import timezone

from judging import selectors as judging_selectors
from judging.adaptive import adaptive_inclusion, is_adaptive
from judging.models import Adjudication, JudgmentEvent
from pooling import selectors as pooling_selectors
from pooling.core.spec import PoolSpec
from pooling.models import Pool, Run
from scoring.core import exports, stability
from scoring.core.analysis.leaderboard import (
    Leaderboard,
    LeaderboardError,
    ScoreTable,
    build_leaderboard,
)
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from scoring.core.analysis.pr_curve import PrecisionRecall, precision_recall
from scoring.core.analysis.reusability import (
    Reusability,
    ReusabilityError,
    ReusabilityInputs,
    default_measure,
    report_measure,
    reusability_of,
)
from scoring.core.evaluation import evaluate
from scoring.core.exports import FORMATS, INCLUSION_FILE, ExportError
from scoring.core.measures.base import RequestedMeasure
from scoring.core.measures.catalog import TREC, MeasureError
from scoring.core.measures.params import ParamError
from scoring.core.measures.rankings import EvalOptions
from scoring.core.sample_eval import evaluate_sample
from scoring.core.stability import Spread, Stability
from workbench.core.run_files import read_run_cache
from workbench.core.topic_ids import topic_sort_key
from workbench.jobs import job_latest
from workbench.models import Job

TIE_RULE = "score descending, then docno descending (byte order); the rank column is ignored"
PROVENANCE_FILE = "provenance.tsv"
MANIFEST_FILE = "manifest.json"
# Fixed entry times keep a bundle's bytes a function of its contents.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)

__all__ = [
    "ExportError",
    "ExportFile",
    "FormatChoice",
    "NoRuns",
    "NothingJudged",
    "PoolScores",
    "ScoringError",
    "pool_scores",
    "pool_scores_report",
    "qrels_bundle",
    "qrels_export",
    "qrels_format_choices",
]


@dataclass(frozen=True)
class ExportFile:
    name: str
    text: str

    @property
    def data(self) -> bytes:
        return self.text.encode("utf-8")

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class PoolState:
    """Everything an export reads from the database, read once."""

    pool: Pool
    labels: pd.DataFrame
    entries: pd.DataFrame
    aspects: tuple[str, ...]
    answers: dict[str, int]

    @property
    def format_problems(self) -> dict[str, str]:
        return exports.format_problems(
            aspects=self.aspects, answers=self.answers, topics=self.entries["query_id"].unique()
        )


# Whose labels a qrels is made of: the assessors' (the pool's final labels under its
# policy, adjudications first). Machine labels join here, as another choice.
HUMAN_LABELS = "human"
LABEL_SOURCES = (HUMAN_LABELS,)


def pool_state(pool: Pool, *, labels: str = HUMAN_LABELS) -> PoolState:
    """What every qrels export of the pool is made from; `labels` one of LABEL_SOURCES
    (ExportError for another)."""
    if labels not in LABEL_SOURCES:
        raise ExportError(f"labels {labels!r}: one of {', '.join(LABEL_SOURCES)}")
    entries = pooling_selectors.pool_entries_frame(pool)
    if is_adaptive(pool):
        # The probabilities of the draws so far, not of the build (judging.adaptive).
        inclusion = adaptive_inclusion(pool)
        keys = zip(entries["query_id"], entries["doc_id"], strict=True)
        entries["inclusion_probability"] = [inclusion[key] for key in keys]
    return PoolState(
        pool=pool,
        labels=judging_selectors.final_labels(pool),
        entries=entries,
        aspects=pool.campaign.schema.aspect_ids,
        answers=_answers(pool),
    )


@dataclass(frozen=True)
class FormatChoice:
    """A qrels format as the pool page and the API offer it."""

    name: str
    file: str
    description: str
    unavailable: str  # why the pool cannot produce it; empty when it can
    in_default_bundle: bool

    @property
    def available(self) -> bool:
        return not self.unavailable


def qrels_format_choices(*, pool: Pool) -> list[FormatChoice]:
    """Every format, whether the pool can produce it and why not (`exports.format_problems`).

    Cheap: reads the schema, the topics' answers and the pool's topics, not the labels.
    """
    topics = pool.entries.values_list("topic__topic_id", flat=True).distinct()
    problems = exports.format_problems(
        aspects=pool.campaign.schema.aspect_ids, answers=_answers(pool), topics=list(topics)
    )
    default = exports.bundle_formats(problems)
    return [
        FormatChoice(
            fmt.name, fmt.file, fmt.description, problems.get(fmt.name, ""), fmt.name in default
        )
        for fmt in FORMATS.values()
    ]


def qrels_export(
    *, pool: Pool, fmt: str, two_aspect: str | None = None, state: PoolState | None = None
) -> list[ExportFile]:
    """One format's files: the qrels, and inclusion.tsv beside stratified qrels."""
    state = state or pool_state(pool)
    frame = exports.export_frame(
        fmt,
        labels=state.labels,
        entries=state.entries,
        aspects=state.aspects,
        answers=state.answers,
        two_aspect=two_aspect,
    )
    files = [ExportFile(FORMATS[fmt].file, exports.render(fmt, frame))]
    if fmt == "stratified":
        files.append(ExportFile(INCLUSION_FILE, exports.inclusion_text(state.entries)))
    return files


QRELS_FILES = (*FORMATS, "inclusion")


def qrels_file(*, pool: Pool, fmt: str, two_aspect: str | None = None) -> ExportFile:
    """One download (`fmt` one of QRELS_FILES): a format's qrels, or `inclusion` for the
    stratified pool's inclusion probabilities. Raises ExportError when the pool cannot
    produce it."""
    wanted = "stratified" if fmt == "inclusion" else fmt
    files = qrels_export(pool=pool, fmt=wanted, two_aspect=two_aspect)
    return next(f for f in files if f.name == INCLUSION_FILE) if fmt == "inclusion" else files[0]


def qrels_bundle(
    *, pool: Pool, formats: list[str] | None = None, two_aspect: str | None = None
) -> bytes:
    """A zip of the formats' files, provenance.tsv and manifest.json.

    No formats: the default ones the pool can produce (`exports.bundle_formats`).
    A format it cannot produce is an ExportError saying why.
    """
    state = pool_state(pool)
    problems = state.format_problems
    formats = exports.bundle_formats(problems) if formats is None else formats
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ExportError(f"choose formats among {', '.join(FORMATS)}; got {formats!r}")
    refused = [f"{fmt} {problems[fmt]}" for fmt in dict.fromkeys(formats) if fmt in problems]
    if refused:
        raise ExportError("; ".join(refused))
    files: dict[str, ExportFile] = {}
    for fmt in dict.fromkeys(formats):
        for file in qrels_export(pool=pool, fmt=fmt, two_aspect=two_aspect, state=state):
            files[file.name] = file
    files[PROVENANCE_FILE] = ExportFile(PROVENANCE_FILE, provenance_text(state.labels))
    manifest = export_manifest(state, list(dict.fromkeys(formats)), files, two_aspect)
    files[MANIFEST_FILE] = ExportFile(MANIFEST_FILE, json.dumps(manifest, indent=2) + "\n")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name].data)
    return buffer.getvalue()


def provenance_text(labels: pd.DataFrame) -> str:
    """Where each final label came from, one line per item: topic, docno, relevance,
    provenance, number of judgments, assessors, who decided it (the adjudicator, or
    the assessors whose judgments gave it), and for an adjudication when and why."""
    rows = exports.sort_items(labels)
    header = "topic docno relevance provenance judgments assessors decided_by decided_at reason"
    lines = ["\t".join(header.split()) + "\n"]
    for row in rows.itertuples(index=False):
        reason = " ".join(row.reason.split())  # one line, no tabs
        lines.append(
            f"{row.query_id}\t{row.doc_id}\t{row.relevance}\t{row.provenance}\t"
            f"{row.n_judgments}\t{','.join(row.assessors)}\t{','.join(row.decided_by)}\t"
            f"{row.decided_at}\t{reason}\n"
        )
    return "".join(lines)


def label_policy(pool: Pool, labels: str = HUMAN_LABELS) -> dict[str, Any]:
    """How the labels of `pool_state(pool, labels=...)` were decided, as data: whose
    labels, the policy's steps (adjudicated first by default) and the disagreement
    mode. A release stores it; the export manifest says the same."""
    policy = judging_selectors.policy_of(pool)
    return {
        "labels": labels,
        "steps": list(policy.label_policy["steps"]),
        "disagreement_mode": policy.disagreement_mode,
    }


def pool_revisions(pool: Pool) -> list[dict[str, Any]]:
    """Each re-plan: which topics got which spec, when, by whom and why."""
    return [
        {
            "number": revision.number,
            "topics": revision.topics,
            "spec": revision.spec,
            "reason": revision.reason,
            "by": revision.created_by.username if revision.created_by else None,
            "at": revision.created_at.isoformat(timespec="seconds"),
        }
        for revision in pool.revisions.select_related("created_by")
    ]


def export_manifest(
    state: PoolState, formats: list[str], files: dict[str, ExportFile], two_aspect: str | None
) -> dict[str, Any]:
    pool = state.pool
    policy = judging_selectors.policy_of(pool)
    manifest: dict[str, Any] = {
        "campaign": {"slug": pool.campaign.slug, "name": pool.campaign.name},
        "pool": {
            "id": pool.pk,
            "name": pool.name,
            "spec": pool.spec,
            "revisions": pool_revisions(pool),
        },
        "tie_rule": TIE_RULE,
        "label_policy": policy.label_policy,
        "disagreement_mode": policy.disagreement_mode,
        "machine_use": judging_selectors.machine_use_manifest(pool),
        "formats": {fmt: FORMATS[fmt].description for fmt in formats},
        "counts": _counts(state),
        "agreement": judging_selectors.agreement_report(pool, machines=False).summary(),
        "runs": [
            {"tag": run.tag, "file": run.original_name, "sha256": run.sha256}
            for run in pool.runs.order_by("tag")
        ],
        "files": {
            name: {"sha256": file.sha256, "lines": file.text.count("\n")}
            for name, file in sorted(files.items())
        },
        "state_as_of": state_time(pool),
        "exported_at": timezone.now().isoformat(timespec="seconds"),
    }
    if is_adaptive(pool):
        manifest["adaptive"] = adaptive_manifest(pool)
    if "correctness" in formats:
        manifest["correctness_mapping"] = exports.CORRECTNESS_MAPPING
        manifest["accepted_answers"] = dict(sorted(state.answers.items()))
    if "twoaspects" in formats:
        manifest["twoaspects_aspect"] = two_aspect or (
            "credibility" if "credibility" in state.aspects else state.aspects[0]
        )
    return manifest


def adaptive_manifest(pool: Pool) -> dict[str, Any]:
    """What a reader of an adaptive pool's bundle must know (docs/adaptive_pooling.md)."""
    strategy = pool.spec["strategy"]
    sampled = strategy == "active"
    return {
        "strategy": strategy,
        "budget": pool.spec["budget"],
        "order": "each topic's documents were drawn one at a time, when its assessor asked, "
        "from the judgments so far; an entry's order is its place in its topic's draws",
        "inclusion_probabilities": (
            "inclusion.tsv (with the stratified format): each candidate's probability of "
            "being drawn by the draws made, for sample_eval-style estimates"
            if sampled
            else "none: the strategy is deterministic given the labels, so inclusion.tsv "
            "holds 1 for a drawn document and 0 for the others, and no estimate from it "
            "is unbiased; score the judged documents as a (biased) pool"
        ),
    }


def _counts(state: PoolState) -> dict[str, Any]:
    """Per topic and in total: pooled, sampled, judged (sampled with a final label), unjudged."""
    entries = state.entries
    judged_keys = set(zip(state.labels["query_id"], state.labels["doc_id"], strict=True))
    judged = [
        (q, d) in judged_keys and s
        for q, d, s in zip(entries["query_id"], entries["doc_id"], entries["sampled"], strict=True)
    ]
    frame = entries.assign(judged=judged)
    per_topic = {}
    for topic, group in frame.groupby("query_id", sort=False):
        sampled = int(group["sampled"].sum())
        judged_here = int(group["judged"].sum())
        per_topic[str(topic)] = {
            "pooled": len(group),
            "sampled": sampled,
            "judged": judged_here,
            "unjudged": sampled - judged_here,
        }
    ordered = dict(sorted(per_topic.items(), key=lambda item: topic_sort_key(item[0])))
    total = {
        key: sum(c[key] for c in ordered.values())
        for key in ("pooled", "sampled", "judged", "unjudged")
    }
    return {"total": total, "topics": ordered}


def _answers(pool: Pool) -> dict[str, int]:
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


def _state_version(pool: Pool) -> str:
    """Changes whenever the labels, the pool or the runs change (finer than
    `state_time`, which is to the second)."""
    campaign = pool.campaign
    events = JudgmentEvent.objects.filter(topic__campaign=campaign).aggregate(n=Max("id"))["n"]
    decided = Adjudication.objects.filter(topic__campaign=campaign).aggregate(t=Max("decided_at"))
    runs = campaign.runs.aggregate(n=Max("id"))["n"]
    policy = json.dumps(judging_selectors.policy_of(pool).label_policy, sort_keys=True)
    changes = f"{pool.revisions.count()}:{pool.additions.count()}"
    version = f"{events}:{decided['t']}:{runs}:{changes}:{policy}"
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


def scores_version(pool: Pool, measures: list[str]) -> str:
    """What a stored scoring was computed from: the labels' state and the measures."""
    return f"{_state_version(pool)}:{' '.join(measures)}"


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
    *, pool: Pool, measures: list[str] | None = None, per_topic: bool = False
) -> pd.DataFrame:
    """Every run of the campaign scored against the pool's current final labels.

    trec_eval measures as `-c -M 1000` computes them (missing topics count 0),
    and for a sampled pool sample_eval's infAP and infNDCG from its strata.
    Columns: run_id, query_id ("all" for the means), measure, value.
    """
    return pool_scores_report(pool=pool, measures=measures, per_topic=per_topic).scores


def pool_scores_report(
    *,
    pool: Pool,
    measures: list[str] | None = None,
    per_topic: bool = False,
    runs: Sequence[Run] | None = None,
    progress: Any = None,
) -> PoolScores:
    """`pool_scores`, with the topics the means are over and those left out; of
    `runs` only (a team's), when given: a run's scores do not depend on the others'.
    `progress` (a job's JobProgress) advances by one per run read, and one for
    the scoring."""
    state = pool_state(pool)
    if state.labels.empty:
        raise NothingJudged("nothing is judged in this pool yet")
    requested = trec_measures(list(measures or DEFAULT_MEASURES))
    tagged = _campaign_runs(pool, runs, progress)
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


def _campaign_runs(
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


def _runs_tagged(pool: Pool, tags: Sequence[str]) -> list[Run]:
    """The campaign's runs of these tags; ScoringError naming any it has not."""
    runs = list(pool.campaign.runs.filter(tag__in=tags))
    unknown = sorted(set(tags) - {run.tag for run in runs})
    if unknown:
        raise ScoringError(f"no run {', '.join(unknown)} in this campaign")
    return runs


def _tag(run: Run) -> str:
    return run.tag


# --------------------------------------------------------------------------
# Ranking stability: is the budget enough?

STABILITY_MEASURES = DEFAULT_MEASURES


@dataclass(frozen=True)
class StabilityReport:
    """The runs' ranking at each checkpoint of the labelling, and for a sampled
    pool the inferred measure now with its spread over topics."""

    stability: Stability
    inferred_measure: str | None
    inferred: dict[str, Spread]
    state_time: str


def pool_ranking_stability(
    *, pool: Pool, measure: str = "map", steps: int = stability.DEFAULT_STEPS
) -> StabilityReport:
    """`scoring.core.stability` on the pool's final labels, in the order they were first
    made; cached until a judgment, an adjudication or the pool changes."""
    if measure not in STABILITY_MEASURES:
        raise ScoringError(f"measure {measure!r}: one of {', '.join(STABILITY_MEASURES)}")
    as_of = state_time(pool)
    key = f"stability:{pool.pk}:{measure}:{steps}:{_state_version(pool)}"
    report = cache.get(key)
    if report is None:
        report = _ranking_stability(pool, measure, steps, as_of)
        cache.set(key, report, timeout=3600)
    return report


def _ranking_stability(pool: Pool, measure: str, steps: int, state_time: str) -> StabilityReport:
    state = pool_state(pool)
    if state.labels.empty:
        raise NothingJudged("nothing is judged in this pool yet")
    tagged = _campaign_runs(pool)
    tags = [tag for tag, _ in tagged]
    runs = [table for _, table in tagged]
    requested = TREC.select([measure])
    options = POOL_EVAL_OPTIONS

    def score(labels: pd.DataFrame) -> dict[str, float]:
        summary = evaluate(labels[["query_id", "doc_id", "relevance"]], runs, requested, options)
        values = summary.measures[0].summary
        assert values is not None
        return {tag: float(values[i][0]) for i, tag in enumerate(tags)}

    labels = state.labels.merge(
        judging_selectors.labelling_times(pool), on=["query_id", "doc_id"], how="left"
    )
    result = stability.ranking_stability(labels, score, measure=measure, steps=steps)
    inferred_measure, inferred = None, {}
    if pooling_selectors.pool_samples(pool):
        frame = evaluate_sample(stratified_qrels(state), runs).to_frame()
        inferred_measure = INFERRED_MEASURES[0]
        per_topic = frame[(frame["measure"] == inferred_measure) & (frame["query_id"] != "all")]
        per_topic = per_topic.assign(run_id=[tags[i] for i in per_topic["run"]])
        inferred = stability.spread_over_topics(per_topic)
    return StabilityReport(result, inferred_measure, inferred, state_time)


# --------------------------------------------------------------------------
# Leaderboard: ranked runs with significance tests, and its pictures

# trec_eval's 11 recall levels of iprec_at_recall.
RECALL_LEVELS = tuple(level / 10 for level in range(11))


# The job kind that scores a large pool's leaderboard (`scoring.jobs.pool_leaderboard`).
LEADERBOARD_JOB = "scoring.jobs.pool_leaderboard"


def leaderboard_job(pool: Pool, measure: str) -> dict[str, Any]:
    """The kind, params and title of the job scoring a large pool's leaderboard. The
    params hold the labels' state its table is scored from (a new judgment calls
    for a new table): the page, its pictures and the API find it again by them."""
    return {
        "kind": LEADERBOARD_JOB,
        "params": {"pool": pool.pk, "measure": measure, "version": scores_version(pool, [measure])},
        "title": f"Leaderboard of pool {pool.pk} ({measure})",
    }


def pool_score_table(*, pool: Pool, measure: str, progress: Any = None) -> ScoreTable:
    """One measure's per-topic values of every run against the pool's final labels
    (as `pool_scores`: -c, so every run has every judged topic): what a leaderboard
    and its pictures rest on. The request's is kept in the cache until the labels
    change, for the page and each of its pictures (read from a leaderboard job's
    result when one has it); a job's (`progress` given) is kept in the job's
    result instead. NothingJudged before any final label, then NoRuns for a campaign
    without runs."""
    if progress is not None:
        return _pool_score_table(pool, measure, progress)
    key = f"score-table:{pool.pk}:{scores_version(pool, [measure])}"
    table = cache.get(key)
    if table is None:
        table = _table_of_job(pool, measure) or _pool_score_table(pool, measure)
        cache.set(key, table, timeout=3600)
    return table


def _table_of_job(pool: Pool, measure: str) -> ScoreTable | None:
    """The table a leaderboard job made of the current labels, if one did: read back
    rather than scored again (the participants' leaderboard of a large pool)."""
    spec = leaderboard_job(pool, measure)
    job = job_latest(kind=spec["kind"], params=spec["params"])
    if job is None or job.state != Job.DONE:
        return None
    return ScoreTable.from_dict(job.result["table"])


def _pool_score_table(pool: Pool, measure: str, progress: Any = None) -> ScoreTable:
    report = pool_scores_report(pool=pool, measures=[measure], per_topic=True, progress=progress)
    return score_table_of(report, measure)


def score_table_of(report: PoolScores, measure: str) -> ScoreTable:
    """One measure's per-topic values of a scoring (every run, every judged topic)."""
    if not report.missing:  # a key per run scored
        raise NoRuns("no runs yet: the campaign has no run to rank")
    scores = report.scores[report.scores["query_id"] != "all"]
    name = leaderboard_measure_name(measure)
    scores = scores[scores["measure"] == name]
    if scores.empty:
        raise ScoringError(f"measure {measure!r} has no per-topic values for this pool")
    runs = tuple(sorted(report.missing))
    topics = tuple(report.judged_topics)
    values = np.full((len(runs), len(topics)), np.nan)
    run_index = {run: k for k, run in enumerate(runs)}
    topic_index = {topic: k for k, topic in enumerate(topics)}
    for run, topic, value in scores[["run_id", "query_id", "value"]].itertuples(index=False):
        values[run_index[run], topic_index[topic]] = float(value)
    return ScoreTable(name, runs, topics, values)


def pool_leaderboard(
    *, pool: Pool, measure: str, options: LeaderboardOptions
) -> tuple[Leaderboard, ScoreTable]:
    """The leaderboard of the pool's runs by one measure, and the values it rests on."""
    table = pool_score_table(pool=pool, measure=measure)
    return leaderboard_of(table, options), table


def empty_leaderboard(measure: str, options: LeaderboardOptions) -> Leaderboard:
    """The leaderboard of a campaign with no run yet: no run, no pair, no topic."""
    return Leaderboard(measure, (), (), (), (), options)


def leaderboard_of(table: ScoreTable, options: LeaderboardOptions) -> Leaderboard:
    """The statistics of a score table (scored here or stored by a job): cheap next
    to scoring, so they are worked out on each request, with its test and alpha."""
    try:
        return build_leaderboard(table, options)
    except LeaderboardError as error:
        raise ScoringError(str(error)) from None


def pool_precision_recall(*, pool: Pool, runs: list[str]) -> dict[str, list[float]]:
    """Interpolated precision at the 11 recall levels, averaged over the judged
    topics (trec_eval's iprec_at_recall), for each chosen run; only those are
    scored (a run's scores do not depend on the others')."""
    most = runs_in_request(pool)
    if len(runs) > most:
        raise ScoringError(
            f"{len(runs)} runs are more than a picture of this pool scores while you wait: "
            f"choose at most {most}"
        )
    chosen = _runs_tagged(pool, runs)
    scores = pool_scores_report(pool=pool, measures=["iprec_at_recall"], runs=chosen).scores
    curves = {}
    for run in runs:
        mine = scores[scores["run_id"] == run].set_index("measure")["value"]
        curves[run] = [float(mine[f"iprec_at_recall_{level:.2f}"]) for level in RECALL_LEVELS]
    return curves


# --------------------------------------------------------------------------
# Reusability: each run left out of the pool in turn


def pool_reusability_inputs(*, pool: Pool) -> ReusabilityInputs:
    """What `scoring.core.analysis.reusability` needs for a stored pool: the runs it was
    built from (late additions too), the scoring options of `pool_scores`, the
    teams, and

    - a depth-k pool: its final labels as qrels, and the depth each judged
      topic is pooled to now (the spec of its last revision);
    - a sampled pool (`pooling.selectors.pool_samples`): the stratified qrels its scores page
      scores infAP on, and the deepest rank each topic samples now.

    Raises ScoringError for a pool it cannot be made for (`reusability_depths`),
    NothingJudged before any final label."""
    labels = judging_selectors.final_labels(pool)
    if labels.empty:
        raise NothingJudged("nothing is judged in this pool yet")
    sampled, depths = reusability_depths(pool)
    runs = [read_run_cache(run.cache_file.path) for run in pool.runs.order_by("tag")]
    if not runs:
        raise ScoringError(f"pool {pool.pk} was built from no runs: there is nothing to leave out")
    if sampled:  # as pool_scores reads it, so that the full scores are the same
        qrels = stratified_qrels(pool_state(pool))
    else:
        qrels = labels[["query_id", "doc_id", "relevance"]]
    topics = sorted(set(qrels["query_id"]), key=topic_sort_key)
    return ReusabilityInputs(
        qrels=qrels,
        runs=runs,
        depth={topic: depths[topic] for topic in topics if topic in depths},
        options=POOL_EVAL_OPTIONS,
        groups=pool_run_teams(pool),
        sampled=sampled,
    )


def reusability_depths(pool: Pool) -> tuple[bool, dict[str, int]]:
    """Whether the pool is sampled, and each topic's depth now: for a depth-k pool
    its k (`PoolSpec.full_depth`), for a sampled one the deepest rank its strata
    reach (`covered_depth`): a run's contribution is what it ranks down to there.
    Raises ScoringError for imported judgments, and for ranks left out between
    strata (gaps), where a run's top ranks are not what it brought to the pool."""
    spec = PoolSpec.from_dict(pool.spec)
    if spec.source:
        raise ScoringError(
            f"pool {pool.pk} holds judgments imported from {spec.source}, not a pool of "
            "runs: there is nothing to leave out"
        )
    if spec.is_adaptive:
        raise ScoringError(
            f"pool {pool.pk} is adaptive ({spec.strategy}): which documents were judged "
            "depended on every run's earlier finds, so leaving a run's documents out of its "
            "judgments does not show the pool built without it (docs/adaptive_pooling.md, "
            "rank bias and reusability); replay the strategy without the run instead "
            "(manage.py simulate_pooling)"
        )
    sampled = pooling_selectors.pool_samples(pool)
    depths = {}
    for topic, plan in pooling_selectors.topic_specs(pool).items():
        depth = plan.covered_depth(topic) if sampled else plan.full_depth(topic)
        if depth is None:
            strata = " ".join(str(stratum) for stratum in plan.strata_for(topic))
            raise ScoringError(
                f"topic {topic} of pool {pool.pk} leaves ranks out ({strata}): a run's top "
                "ranks are not what it brought to the pool, so it cannot be left out"
            )
        depths[topic] = depth
    return sampled, depths


# The job kind that makes reports (`scoring.jobs.pool_reusability`).
REUSABILITY_JOB = "scoring.jobs.pool_reusability"


def reusability_params(pool: Pool, measure: str) -> dict[str, Any]:
    """A report job's params: the pool, the measure and the labels' state they
    were computed from (a new judgment calls for a new report)."""
    return {"pool": pool.pk, "measure": measure, "version": f"{_state_version(pool)}:{measure}"}


def reusability_job(pool: Pool, measure: str) -> Job | None:
    """The newest job reporting on the pool's current labels with this measure (a
    failed one too: its error says why), or None."""
    return job_latest(kind=REUSABILITY_JOB, params=reusability_params(pool, measure))


def pool_reusability(
    *, pool: Pool, measure: str | None = None, progress: Any = None
) -> Reusability:
    """`scoring.core.analysis.reusability` on the pool: each of its runs left out in turn
    (`pool_reusability_inputs` says which pools can be), with `measure` (default
    `reusability_default_measure`). `progress` (a job's JobProgress) advances
    by one per run left out."""
    inputs = pool_reusability_inputs(pool=pool)
    requested = _report_measure(measure or inputs.default_measure, sampled=inputs.sampled)
    groups = inputs.groups
    if progress is not None:
        progress(done=0, total=len(inputs.runs) + len(set((groups or {}).values())))
    try:
        return reusability_of(
            inputs,
            requested,
            groups=groups,
            progress=progress.advance if progress is not None else None,
        )
    except ReusabilityError as error:
        raise ScoringError(str(error)) from None


def pool_run_teams(pool: Pool) -> dict[str, str] | None:
    """Run tag -> team of the pool's runs, for leaving each team out in turn; an
    organiser's own run is a group of its own. None when no run has a team."""
    runs = list(pool.runs.select_related("team").order_by("tag"))
    if not any(run.team_id for run in runs):
        return None
    return {run.tag: run.team.name if run.team else f"(run {run.tag})" for run in runs}


def reusability_default_measure(pool: Pool) -> str:
    """infAP for a sampled pool, map for a depth-k one."""
    return default_measure(sampled=pooling_selectors.pool_samples(pool))


def reusability_measure(measure: str, *, pool: Pool) -> RequestedMeasure:
    """The one per-topic number a report on this pool can be about (an inferred
    measure for a sampled pool, a trec_eval one otherwise); ScoringError otherwise."""
    return _report_measure(measure, sampled=pooling_selectors.pool_samples(pool))


def _report_measure(measure: str, *, sampled: bool) -> RequestedMeasure:
    try:
        return report_measure(measure, sampled=sampled)
    except ReusabilityError as error:
        raise ScoringError(str(error)) from None


def reusability_refusal(pool: Pool) -> None:
    """Raise (NothingJudged, or ScoringError saying why) for a pool whose runs cannot
    be left out, before a job is started; cheap, from the specs and two counts."""
    reusability_depths(pool)
    if not pool.runs.exists():
        raise ScoringError(f"pool {pool.pk} was built from no runs: there is nothing to leave out")
    refuse_unjudged(pool)


def refuse_unjudged(pool: Pool) -> None:
    """NothingJudged for a pool none of whose documents is judged yet; cheap (one
    query), so that a page says so rather than start a job that would fail."""
    if not pool.entries.filter(topic__judgments__docno=F("docno")).exists():
        raise NothingJudged("nothing is judged in this pool yet")


def pool_precision_recall_on_topic(
    *, pool: Pool, runs: list[str], topic: str
) -> dict[str, PrecisionRecall]:
    """Each chosen run's precision-recall curve at every recall level on one topic,
    against the pool's final labels (relevant: a label of 1 or more), first 1000."""
    labels = judging_selectors.final_labels(pool)
    topic_labels = labels[labels["query_id"] == topic]
    if topic_labels.empty:
        raise ScoringError(f"topic {topic!r} has no final label in this pool")
    relevant = set(topic_labels.loc[topic_labels["relevance"] >= 1, "doc_id"])
    tables = dict(_campaign_runs(pool, _runs_tagged(pool, runs)))  # those chosen only
    curves = {}
    for run in runs:
        table = tables[run]
        rows = table.filter(pc.equal(table["query_id"], topic))
        curves[run] = precision_recall(
            rows["doc_id"].to_pylist(),
            rows["score"].to_numpy(),
            relevant,
            max_docs=POOL_MAX_DOCS,
        )
    return curves
