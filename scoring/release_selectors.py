"""Releases: what a release is made of (`release_snapshot`, read and scored, nothing
written), its stored files and bundle, what a team is shown of it, and two
releases compared.

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
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import IO, Any

import pandas as pd
from django.conf import settings
from django.core.files.storage import default_storage
from django.db.models import QuerySet

from pooling import selectors as pooling_selectors
from pooling.models import Campaign, Pool, Run, Team
from scoring import export_selectors, leaderboard_selectors, selectors
from scoring.core import releases as core
from scoring.core import sample_eval, trec_eval
from scoring.core.analysis import render
from scoring.core.analysis.leaderboard import Leaderboard
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from scoring.core.exports import FORMATS, ExportError
from scoring.core.measures.catalog import TREC
from scoring.models import Release
from workbench.core.topic_ids import topic_sort_key

# The files of a release besides the qrels (whose names are the export's).
LEADERBOARD_FILES = {
    "tsv": "leaderboard.tsv",
    "json": "leaderboard.json",
    "latex": "leaderboard.tex",
}
MANIFEST_FILE = "manifest.json"
PROVENANCE_FILE = export_selectors.PROVENANCE_FILE
QRELS_FILE = core.QRELS_FILE
# Runs scored by one call of the scorer: a job's progress moves once per batch.
RUN_BATCH = 25
# Fixed entry times keep a bundle's bytes a function of its contents.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class ReleaseError(selectors.ScoringError):
    """A release that cannot be made, shown or bundled as asked; the message says why."""


class NoRunToRelease(ReleaseError):
    """The campaign has no run: a state of the campaign, not a mistake of the request."""


# --------------------------------------------------------------------------
# Making one


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
    *, pool: Pool, measure: str, measures: Sequence[str] | None, labels: str
) -> None:
    """Raise (ReleaseError, or NothingJudged) for a release that cannot be made, before
    a job is started for it; cheap."""
    if labels not in selectors.LABEL_SOURCES:
        raise ReleaseError(f"labels {labels!r}: one of {', '.join(selectors.LABEL_SOURCES)}")
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
    progress: Any = None,
) -> Snapshot:
    """Read the pool's labels once, write its qrels, score every run of the campaign
    on them and rank the runs: the release as it would be stored. `progress` (a
    job's JobProgress) counts the runs scored."""
    options = options or LeaderboardOptions()
    sampled = pooling_selectors.pool_samples(pool)
    chosen = release_measures(measure, measures, sampled=sampled)
    try:
        state = selectors.pool_state(pool, labels=labels)
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
        label_policy=export_selectors.label_policy(pool, labels),
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


def scores_frame(rows: str) -> pd.DataFrame:
    """scores.tsv's lines (no header) as run_id, query_id, measure, value (floats)."""
    frame = pd.read_csv(
        io.StringIO(rows),
        sep="\t",
        names=["run_id", "measure", "query_id", "value"],
        dtype=str,
        keep_default_na=False,
        quoting=3,  # csv.QUOTE_NONE: a tag is never quoted
    )
    frame["value"] = [float(value) for value in frame["value"]]
    return frame[["run_id", "query_id", "measure", "value"]]


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


# --------------------------------------------------------------------------
# Reading one back


def pool_releases(pool: Pool) -> QuerySet[Release]:
    return pool.releases.select_related("released_by", "withdrawal__withdrawn_by").order_by(
        "version"
    )


def release_or_none(pool: Pool, version: int) -> Release | None:
    return pool_releases(pool).filter(version=version).first()


def release_file(release: Release, name: str) -> bytes:
    """A stored file of the release, checked against the SHA-256 it was stored with;
    KeyError for a name the release has not, ReleaseError for a changed file."""
    expected = release.files[name]
    with default_storage.open(f"{release.directory}/{name}", "rb") as file:
        data = file.read()
    if hashlib.sha256(data).hexdigest() != expected["sha256"]:
        raise ReleaseError(f"{name} of {release} is not the file that was released")
    return data


def release_leaderboard(release: Release) -> Leaderboard:
    """The leaderboard as released (nothing scored again)."""
    return render.from_json(release.leaderboard)


def bundle_name(release: Release) -> str:
    return f"{release.pool.campaign.slug}-pool{release.pool_id}-release{release.version}.zip"


def release_bundle(release: Release, out: IO[bytes]) -> None:
    """Write the release's zip to `out`: its stored files, the run files under runs/
    as they were uploaded, all checked against the hashes they were released with.
    The same release always gives the same bytes."""
    entries: list[tuple[str, Any]] = [(name, name) for name in release.files]
    runs = list(release.runs.select_related("run"))
    entries += [(f"{core.RUNS_FOLDER}/{item.file_name}", item) for item in runs]
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, source in sorted(entries, key=lambda entry: entry[0]):
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if name == core.SCRIPT_FILE else 0o644) << 16
            if isinstance(source, str):
                archive.writestr(info, release_file(release, source))
            else:
                _write_run(archive, info, source)


def _write_run(archive: zipfile.ZipFile, info: zipfile.ZipInfo, item: Any) -> None:
    digest = hashlib.sha256()
    with item.run.original_file.open("rb") as file, archive.open(info, "w") as entry:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
            entry.write(chunk)
    if digest.hexdigest() != item.sha256:
        raise ReleaseError(f"run {item.tag}'s file is not the one that was released")


# --------------------------------------------------------------------------
# What a team is shown


def campaign_releases(campaign: Campaign) -> list[Release]:
    """Every release of the campaign's pools, withdrawn ones too, newest first."""
    return list(
        Release.objects.filter(pool__campaign=campaign)
        .select_related("pool", "released_by", "withdrawal")
        .order_by("-released_at", "-pk")
    )


def team_releases(team: Team) -> QuerySet[Release]:
    """The releases the team's campaign was given and not withdrawn, newest first."""
    return (
        Release.objects.filter(pool__campaign_id=team.campaign_id, withdrawal__isnull=True)
        .select_related("pool")
        .order_by("-released_at", "-pk")
    )


def measure_names(measures: Iterable[str]) -> list[str]:
    """The names trec_eval prints for `-m` arguments (P.5,10: P_5 and P_10); an
    inferred measure is its own name. ReleaseError for one trec_eval lacks."""
    names: list[str] = []
    for measure in measures:
        if measure in core.INFERRED_MEASURES:
            names.append(measure)
            continue
        try:
            names += [name for requested in TREC.select([measure]) for name in requested.names]
        except ValueError as error:
            raise ReleaseError(str(error)) from None
    return names


def released_scores(
    release: Release,
    *,
    tags: Sequence[str],
    measures: Sequence[str] | None = None,
    per_topic: bool = False,
) -> selectors.PoolScores:
    """The scores of the runs `tags` as the release holds them: the means, or (per
    topic) scores.tsv's rows; `measures` (trec_eval's -m syntax) narrows them to
    those the release scored (ReleaseError for another)."""
    items = list(release.runs.filter(tag__in=tags).order_by("tag"))
    if per_topic:
        text = release_file(release, core.SCORES_FILE).decode()
        frame = scores_frame(text.split("\n", 1)[1])
        frame = frame[frame["run_id"].isin([item.tag for item in items])]
    else:
        frame = pd.DataFrame(
            [
                (item.tag, "all", name, value)
                for item in items
                for name, value in item.means.items()
            ],
            columns=["run_id", "query_id", "measure", "value"],
        )
    if measures:
        names = measure_names(measures)
        scored = {name for item in items for name in item.means} or set(frame["measure"])
        lacking = [name for name in names if name not in scored]
        if lacking:
            raise ReleaseError(
                f"release {release.version} has no {', '.join(lacking)}; it scored "
                f"{', '.join(dict.fromkeys(n for item in items for n in item.means))}"
            )
        frame = frame[frame["measure"].isin(names)]
    return selectors.PoolScores(
        scores=frame.reset_index(drop=True),
        judged_topics=list(release.judged_topics),
        left_out=list(release.left_out_topics),
        missing={item.tag: list(item.missing_topics) for item in items},
    )


def release_teams(release: Release) -> dict[str, str]:
    """Run tag -> its team's name when released ('' for the organisers' runs)."""
    return dict(release.runs.values_list("tag", "team_name"))


# --------------------------------------------------------------------------
# Two releases compared


@dataclass(frozen=True)
class ReleaseComparison:
    """What changed from `old` to `new` (two releases of one pool): labels added,
    changed or removed; runs whose mean or rank moved, by each measure both scored;
    pairs whose significance flipped (None when the leaderboards rank by different
    measures or with different options, which would not be a fair comparison)."""

    old: Release
    new: Release
    labels: pd.DataFrame
    scores: list[core.ScoreChange]
    flips: list[core.SignificanceFlip] | None
    measures: list[str]

    @property
    def label_counts(self) -> dict[str, int]:
        counts = self.labels["change"].value_counts()
        return {change: int(counts.get(change, 0)) for change in ("added", "changed", "removed")}


def release_comparison(old: Release, new: Release) -> ReleaseComparison:
    from scoring.core.qrels import read_qrels

    if old.pool_id != new.pool_id:
        raise ReleaseError("only two releases of one pool are compared")
    qrels = [
        read_qrels(release_file(release, QRELS_FILE), name=f"{release} {QRELS_FILE}")
        for release in (old, new)
    ]
    labels = core.label_changes(*qrels)
    means = [{item.tag: item.means for item in release.runs.all()} for release in (old, new)]
    board_measure = new.leaderboard["measure"]
    names = list(dict.fromkeys(n for item in means[1].values() for n in item))
    common = [n for n in names if any(n in m for m in means[0].values())]
    common.sort(key=lambda name: name != board_measure)  # the leaderboard's first
    flips = None
    if old.leaderboard["measure"] == board_measure and old.leaderboard_options == (
        new.leaderboard_options
    ):
        flips = core.significance_flips(old.leaderboard["pairs"], new.leaderboard["pairs"])
    return ReleaseComparison(
        old=old,
        new=new,
        labels=labels,
        scores=core.score_changes(means[0], means[1], common),
        flips=flips,
        measures=common,
    )
