"""Making a release: the snapshot of a pool's qrels, scores and leaderboard that a
release freezes, and the files it is written as (read back by
`scoring.release_selectors`).

A release's scores are the scorer's own output for the release's files: the
qrels of `selectors.pool_state` (the one selector every qrels export is made
from) written as `qrels.txt`, and the run files as they were uploaded, scored
by `scoring.core.trec_eval.main` (what `wb-trec-eval` runs) with the options of
`scoring.core.releases`; the bundle's reproduce.sh runs the same commands, so
its output is scores.tsv byte for byte. The leaderboard is built from those
per-topic values by the same code as the live one (`leaderboard_selectors.leaderboard_of`).
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from django.conf import settings

from pooling import selectors as pooling_selectors
from pooling.models import Pool, Run, Team
from scoring import export_selectors, leaderboard_selectors, selectors
from scoring.core import releases as core
from scoring.core import sample_eval, trec_eval
from scoring.core.analysis import render
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from scoring.core.exports import FORMATS, ExportError
from scoring.core.measures.catalog import TREC
from scoring.release_selectors import (
    LEADERBOARD_FILES,
    MANIFEST_FILE,
    PROVENANCE_FILE,
    NoRunToRelease,
    ReleaseError,
    scores_frame,
)
from workbench.core.topic_ids import topic_sort_key

# Runs scored by one call of the scorer: a job's progress moves once per batch.
RUN_BATCH = 25


@dataclass(frozen=True)
class SnapshotRun:
    run: Run
    file_name: str
    team: Team | None
    means: dict[str, float]
    missing_topics: list[str]


@dataclass(frozen=True)
class Snapshot:
    """A pool's results now, ready to store: the files (qrels in every layout the pool
    can give, provenance.tsv, scores.tsv, the leaderboard in three formats) and
    what the release row holds. Nothing of it is stored yet."""

    pool: Pool
    measure: str
    measures: list[str]
    options: dict[str, Any]
    label_policy: dict[str, Any]
    sampled: bool
    judged_topics: list[str]
    left_out_topics: list[str]
    leaderboard: dict[str, Any]
    runs: list[SnapshotRun]
    files: dict[str, bytes]
    state_as_of: str
    pool_spec: dict[str, Any] = field(default_factory=dict)
    pool_revisions: list[dict[str, Any]] = field(default_factory=list)


def release_measures(measure: str, measures: Sequence[str] | None, *, sampled: bool) -> list[str]:
    """The trec_eval measures a release scores: `measures` (default the scores page's),
    and the leaderboard's `measure` first if they lack it. infAP and infNDCG come
    from sample_eval, for a sampled pool only, whatever is asked. ReleaseError for
    a measure it cannot score."""
    chosen = list(dict.fromkeys(measures or selectors.DEFAULT_MEASURES))
    if measure not in chosen:
        chosen.insert(0, measure)
    inferred = [m for m in chosen if m in core.INFERRED_MEASURES]
    if inferred and not sampled:
        raise ReleaseError(
            f"measure {inferred[0]}: infAP and infNDCG score a sampled pool; this one is not"
        )
    chosen = [m for m in chosen if m not in core.INFERRED_MEASURES] or list(
        selectors.DEFAULT_MEASURES
    )
    try:
        TREC.select(chosen)
    except ValueError as error:  # MeasureError, ParamError
        raise ReleaseError(str(error)) from None
    return chosen


def options_of(options: LeaderboardOptions) -> dict[str, Any]:
    return {
        "tests": list(options.tests),
        "correction": options.correction,
        "alpha": options.alpha,
        "seed": options.seed,
        "resamples": options.n_resamples,
    }


def options_from(data: dict[str, Any]) -> LeaderboardOptions:
    return LeaderboardOptions(
        tests=tuple(data["tests"]),
        correction=data["correction"],
        alpha=float(data["alpha"]),
        seed=int(data["seed"]),
        n_resamples=int(data["resamples"]),
    )


def release_refusal(
    *,
    pool: Pool,
    measure: str,
    measures: Sequence[str] | None,
    labels: str,
    machine: str | None = None,
) -> None:
    """Raise (ReleaseError, or NothingJudged) for a release that cannot be made, before
    a job is started for it; cheap."""
    try:
        selectors.label_choice(pool, labels, machine)
    except selectors.LabelChoiceError as error:
        raise ReleaseError(str(error)) from None
    release_measures(measure, measures, sampled=pooling_selectors.pool_samples(pool))
    if not pool.campaign.runs.exists():
        raise NoRunToRelease(f"{pool.campaign.name} has no run to score")
    selectors.refuse_unjudged(pool)


def release_snapshot(
    *,
    pool: Pool,
    measure: str,
    measures: Sequence[str] | None = None,
    options: LeaderboardOptions | None = None,
    labels: str = selectors.HUMAN_LABELS,
    machine: str | None = None,
    progress: Any = None,
) -> Snapshot:
    """Read the pool's labels once, write its qrels, score every run of the campaign
    on them and rank the runs: the release as it would be stored. `progress` (a
    job's JobProgress) counts the runs scored."""
    options = options or LeaderboardOptions()
    sampled = pooling_selectors.pool_samples(pool)
    chosen = release_measures(measure, measures, sampled=sampled)
    try:
        state = selectors.pool_state(pool, labels=labels, machine=machine)
    except ExportError as error:
        raise ReleaseError(str(error)) from None
    if state.labels.empty:
        raise selectors.NothingJudged("nothing is judged in this pool yet")
    runs = sorted(pool.campaign.runs.select_related("team"), key=lambda run: run.tag)
    if not runs:
        raise NoRunToRelease(f"{pool.campaign.name} has no run to score")
    names = core.bundle_run_names(run.tag for run in runs)
    by_tag = {run.tag: run for run in runs}
    ordered = [by_tag[tag] for tag in core.run_order(names)]

    files: dict[str, bytes] = {}
    for fmt in FORMATS:
        if fmt not in state.format_problems:
            for export in export_selectors.qrels_export(pool=pool, fmt=fmt, state=state):
                files[export.name] = export.data
    files[PROVENANCE_FILE] = export_selectors.provenance_text(state.labels).encode()

    rows = _scores(files, ordered, chosen, sampled=sampled, progress=progress)
    files[core.SCORES_FILE] = (core.SCORES_HEADER + rows).encode()
    scores = scores_frame(rows)
    judged = sorted(set(state.labels["query_id"]), key=topic_sort_key)
    campaign_topics = pool.campaign.topics.values_list("topic_id", flat=True)
    missing = {run.tag: [t for t in judged if t not in run.documents_per_topic] for run in runs}
    report = selectors.PoolScores(
        scores=scores,
        judged_topics=judged,
        left_out=sorted(set(campaign_topics) - set(judged), key=topic_sort_key),
        missing=missing,
    )
    board = leaderboard_selectors.leaderboard_of(
        leaderboard_selectors.score_table_of(report, measure), options
    )
    board_json = render.to_json(board)
    files[LEADERBOARD_FILES["tsv"]] = render.tsv(board).encode()
    files[LEADERBOARD_FILES["json"]] = _json(board_json)
    files[LEADERBOARD_FILES["latex"]] = render.latex(board).encode()

    means = scores[scores["query_id"] == "all"]
    run_means: dict[str, dict[str, float]] = {run.tag: {} for run in runs}
    for tag, name, value in means[["run_id", "measure", "value"]].itertuples(index=False):
        run_means[tag][name] = value
    return Snapshot(
        pool=pool,
        measure=measure,
        measures=chosen,
        options=options_of(options),
        label_policy=export_selectors.label_policy(
            pool, state.choice.source, state.choice.machine or None
        ),
        sampled=sampled,
        judged_topics=judged,
        left_out_topics=report.left_out,
        leaderboard=board_json,
        runs=[
            SnapshotRun(run, names[run.tag], run.team, run_means[run.tag], missing[run.tag])
            for run in runs
        ],
        files=files,
        state_as_of=selectors.state_time(pool),
        pool_spec=pool.spec,
        pool_revisions=export_selectors.pool_revisions(pool),
    )


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=1, allow_nan=False) + "\n").encode()


def _scores(
    files: dict[str, bytes],
    runs: Sequence[Run],
    measures: Sequence[str],
    *,
    sampled: bool,
    progress: Any,
) -> str:
    """scores.tsv's rows: what reproduce.sh prints for these files (its commands, run
    here by the same code, a batch of runs at a time)."""
    if progress is not None:
        progress(done=0, total=len(runs), unit="runs")
    rows = []
    with tempfile.TemporaryDirectory(prefix="release-") as folder:
        qrels = Path(folder) / core.QRELS_FILE
        qrels.write_bytes(files[core.QRELS_FILE])
        stratified = Path(folder) / core.STRATIFIED_FILE
        if sampled:
            stratified.write_bytes(files[core.STRATIFIED_FILE])
        for start in range(0, len(runs), RUN_BATCH):
            batch = [run.original_file.path for run in runs[start : start + RUN_BATCH]]
            arguments = [*core.trec_eval_arguments(measures), str(qrels), *batch]
            rows.append(core.scores_rows(_scored(trec_eval.main, arguments)))
            if progress is not None:
                progress.advance(len(batch))
        if sampled:
            for start in range(0, len(runs), RUN_BATCH):
                batch = [run.original_file.path for run in runs[start : start + RUN_BATCH]]
                arguments = [*core.sample_eval_arguments(), str(stratified), *batch]
                output = _scored(sample_eval.main, arguments)
                rows.append(core.scores_rows(output, keep=core.INFERRED_MEASURES))
    return "".join(rows)


def _scored(main: Any, arguments: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    if main(arguments, out, err) != 0:
        raise ReleaseError(err.getvalue().strip())
    return out.getvalue()


@cache
def workbench_version() -> dict[str, str | None]:
    """The package's version and, in a git checkout, the commit it runs."""
    try:
        version: str | None = metadata.version("judging-workbench")
    except metadata.PackageNotFoundError:
        version = None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"version": version, "commit": commit or None}


def release_title(pool: Pool, version: int) -> str:
    return f"release {version} of pool {pool.pk} ({pool.name}) of {pool.campaign.name}"


def release_documents(
    snapshot: Snapshot,
    *,
    version: int,
    released_at: datetime,
    released_by: Any,
    reason: str,
    workbench: dict[str, Any],
) -> dict[str, bytes]:
    """manifest.json and reproduce.sh, once the release has its version: the hashes
    of every file, run and qrels, how they were scored, and by which workbench."""
    pool = snapshot.pool
    script = core.reproduce_script(
        title=release_title(pool, version),
        measures=snapshot.measures,
        sampled=snapshot.sampled,
        workbench=workbench,
    ).encode()
    files = {**snapshot.files, core.SCRIPT_FILE: script}
    manifest = {
        "release": {
            "campaign": {"slug": pool.campaign.slug, "name": pool.campaign.name},
            "pool": {"id": pool.pk, "name": pool.name},
            "version": version,
            "released_at": released_at.isoformat(timespec="seconds"),
            "released_by": getattr(released_by, "username", None),
            "reason": reason,
            "state_as_of": snapshot.state_as_of,
        },
        "workbench": workbench,
        "label_policy": snapshot.label_policy,
        "pool": {"spec": snapshot.pool_spec, "revisions": snapshot.pool_revisions},
        "scoring": {
            "trec_eval": ["wb-trec-eval", *core.trec_eval_arguments(snapshot.measures)],
            "sample_eval": ["wb-sample-eval", *core.sample_eval_arguments()]
            if snapshot.sampled
            else None,
            "tie_rule": export_selectors.TIE_RULE,
            "measures": snapshot.measures,
            "judged_topics": snapshot.judged_topics,
            "left_out_topics": snapshot.left_out_topics,
        },
        "leaderboard": {"measure": snapshot.measure, "options": snapshot.options},
        "files": {name: _described(data) for name, data in sorted(files.items())},
        "runs": [
            {
                "tag": item.run.tag,
                "file": f"{core.RUNS_FOLDER}/{item.file_name}",
                "original_name": item.run.original_name,
                "sha256": item.run.sha256,
                "team": item.team.name if item.team else None,
            }
            for item in snapshot.runs
        ],
    }
    return {core.SCRIPT_FILE: script, MANIFEST_FILE: _json(manifest)}


def _described(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def described_files(files: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    return {name: _described(data) for name, data in sorted(files.items())}
