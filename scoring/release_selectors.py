"""Releases read back: a stored release's files and bundle, what a team is shown
of it, and two releases compared (a release is made by
`scoring.release_snapshot_selectors`)."""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

import pandas as pd
from django.core.files.storage import default_storage
from django.db.models import QuerySet

from pooling.models import Campaign, Pool, Team
from scoring import export_selectors, selectors
from scoring.core import releases as core
from scoring.core.analysis import render
from scoring.core.analysis.leaderboard import Leaderboard
from scoring.core.measures.catalog import TREC
from scoring.models import Release

# The files of a release besides the qrels (whose names are the export's).
LEADERBOARD_FILES = {
    "tsv": "leaderboard.tsv",
    "json": "leaderboard.json",
    "latex": "leaderboard.tex",
}
MANIFEST_FILE = "manifest.json"
PROVENANCE_FILE = export_selectors.PROVENANCE_FILE
QRELS_FILE = core.QRELS_FILE
# Fixed entry times keep a bundle's bytes a function of its contents.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class ReleaseError(selectors.ScoringError):
    """A release that cannot be made, shown or bundled as asked; the message says why."""


class NoRunToRelease(ReleaseError):
    """The campaign has no run: a state of the campaign, not a mistake of the request."""


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
