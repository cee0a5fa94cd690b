"""The pooling app's long work, run as jobs (see `workbench.jobs`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from django.core.files.storage import default_storage

from pooling import selectors, services
from pooling.models import Campaign, Pool
from pooling.spec import PoolSpec
from workbench.jobs import JobProgress
from workbench.models import Job


def pool_build(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Build a pool: params campaign (slug), spec (`PoolSpec.to_dict`), name,
    confirm_over_budget, runs_per_team (optional: each team's first N runs).
    Progress counts the run files read."""
    params = job.params
    campaign = Campaign.objects.get(slug=params["campaign"])
    per_team = params.get("runs_per_team")
    progress(done=0, total=len(selectors.pool_runs(campaign, runs_per_team=per_team)), unit="runs")
    pool = services.pool_build(
        campaign=campaign,
        spec=PoolSpec.from_dict(params["spec"]),
        name=params.get("name", ""),
        created_by=job.created_by,
        progress=progress.advance,
        confirm_over_budget=params.get("confirm_over_budget", False),
        runs_per_team=per_team,
    )
    entries = pool.entries.count()
    progress.note(f"pool {pool.pk} ({pool.name}): {entries} entries")
    return {"pool": pool.pk, "campaign": campaign.slug, "entries": entries}


def pool_revise(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Re-plan topics of a pool: params pool (id), spec, topics, reason, confirm_over_budget."""
    params = job.params
    pool = Pool.objects.select_related("campaign").get(pk=params["pool"])
    progress(done=0, total=1)
    revision = services.pool_revise(
        pool=pool,
        spec=PoolSpec.from_dict(params["spec"]),
        topics=params["topics"],
        reason=params.get("reason", ""),
        created_by=job.created_by,
        confirm_over_budget=params.get("confirm_over_budget", False),
    )
    # One note (one write of the log), not one per topic.
    progress.note(
        "\n".join(
            f"topic {row['query_id']}: {row['to_judge_before']} to judge before, "
            f"{row['to_judge_after']} after ({row['leaving']} leaving, {row['joining']} joining, "
            f"{row['judged_kept']} judged kept)"
            for row in revision.summary
        )
    )
    return {"pool": pool.pk, "campaign": pool.campaign.slug, "revision": revision.number}


def runs_import(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Import uploaded run files kept on disk (`services.runs_import_start`): params
    campaign (slug), files ([{path, name}], storage names), keep_valid. Progress
    counts the files read and checked. Checked and stored as `services.runs_import`
    does: a rejected file fails the job with its `file:line: reason` problems and
    stores nothing (with keep_valid, the valid files are stored and the log lists
    the rejected ones). The uploaded files are removed whatever happens."""
    params = job.params
    campaign = Campaign.objects.get(slug=params["campaign"])
    files = params["files"]
    uploads = [services.RunUpload(f["name"], Path(default_storage.path(f["path"]))) for f in files]
    progress(done=0, total=len(uploads), unit="files")
    for upload in uploads:
        progress.note(f"{upload.name}: {upload.data.stat().st_size:,} bytes")  # type: ignore[union-attr]

    def counted(items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            progress.advance()
            yield item

    try:
        try:
            runs = services.runs_import(
                campaign=campaign,
                uploads=uploads,
                uploaded_by=job.created_by,
                keep_valid=params.get("keep_valid", False),
                progress=counted,
            )
            rejected = 0
        except services.RunsPartlyImported as error:
            if not error.stored:
                raise
            for line in str(error).splitlines():
                progress.note(line)
            runs, rejected = error.stored, len({p.file for p in error.problems})
    finally:
        for f in files:
            default_storage.delete(f["path"])
    for run in runs:
        progress.note(f"stored run {run.tag}: {run.line_count:,} lines, {run.topic_count} topics")
    return {"campaign": campaign.slug, "runs": [run.tag for run in runs], "rejected": rejected}


def documents_import(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Import an uploaded collection kept on disk (`services.documents_import_start`):
    params campaign (slug), file ({path, name}), format (None: from the name and
    the first bytes). Progress counts the bytes read. A problem anywhere fails the
    job with every `file:line: reason` and stores nothing. The file is removed
    whatever happens."""
    params = job.params
    campaign = Campaign.objects.get(slug=params["campaign"])
    kept = params["file"]
    try:
        with default_storage.open(kept["path"], "rb") as stream:
            progress(done=0, total=default_storage.size(kept["path"]), unit=Job.BYTES)
            result = services.documents_import(
                campaign=campaign,
                stream=_ReadCounted(stream, progress),  # type: ignore[arg-type]
                name=kept["name"],
                format=params.get("format"),
            )
    finally:
        default_storage.delete(kept["path"])
    progress(done=job.total)
    progress.note(f"{kept['name']}: {result}")
    return {"campaign": campaign.slug, "created": result.created, "updated": result.updated}


class _ReadCounted:
    """A binary stream, read line by line, that reports the bytes read as the job's
    progress: a file with a problem is still read to its end (to report every
    problem), and the bar follows the reading, not only the batches written."""

    def __init__(self, stream: IO[bytes], progress: JobProgress) -> None:
        self.stream, self.progress = stream, progress

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.progress(done=self.stream.tell())
        return data

    def seek(self, offset: int) -> int:
        return self.stream.seek(offset)

    def __iter__(self) -> Iterator[bytes]:
        done = self.stream.tell()
        for line in self.stream:
            done += len(line)
            self.progress(done=done)
            yield line
