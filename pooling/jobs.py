"""The pooling app's long work, run as jobs (see `workbench.jobs`).

Each kind records its result with `progress.stored` inside the transaction
that stores its work (the services' `before_commit`): the job is done exactly
when the work is stored, so a run after a worker stopped stores it once, and
a run cancelled or taken over stores nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.utils.text import get_valid_filename

from pooling import pool_services, run_services, selectors, services
from pooling.core.spec import PoolSpec, spec_label
from pooling.models import Campaign, Pool, PoolRevision, Run
from workbench.jobs import JobLeaseLost, JobProgress, job_start
from workbench.models import Job


def pool_build(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Build a pool: params campaign (slug), spec (`PoolSpec.to_dict`), name,
    confirm_over_budget, runs_per_team (optional: each team's first N runs).
    Progress counts the pool's topics made ready to store (`pool_services.pool_build`);
    the log says when the runs are ranked and when the entries are stored."""
    params = job.params
    campaign = Campaign.objects.get(slug=params["campaign"])
    per_team = params.get("runs_per_team")
    runs = len(selectors.pool_runs(campaign, runs_per_team=per_team))
    progress.note(f"ranking {runs:,} runs")

    def topics_ready(done: int, total: int) -> None:
        if done == 0:  # the runs are ranked and pooled: now a topic at a time
            progress.note(f"pooled {total:,} topics; making their entries")
            progress(done=0, total=total, unit="topics")
        else:
            progress(done=done)  # saved every half second, not for each topic
        if done == total:
            progress.note("storing the entries")

    def stored(pool: Pool) -> None:
        entries = pool.entries.count()
        progress.note(f"pool {pool.pk} ({pool.name}): {entries:,} entries")
        without_text = selectors.count_without_text(pool)
        if without_text:
            progress.note(
                f"{without_text:,} document{'s' if without_text != 1 else ''} to judge without "
                "text: load their texts before assigning (the list is on the pool's page, or "
                f"python manage.py export_pool --pool {pool.pk} --format without-text)"
            )
        progress.stored(
            {
                "pool": pool.pk,
                "campaign": campaign.slug,
                "entries": entries,
                "without_text": without_text,
            }
        )

    pool_services.pool_build(
        campaign=campaign,
        spec=PoolSpec.from_dict(params["spec"]),
        name=params.get("name", ""),
        created_by=job.created_by,
        progress=topics_ready,
        confirm_over_budget=params.get("confirm_over_budget", False),
        runs_per_team=per_team,
        before_commit=stored,
    )
    return job.result


def pool_build_start(
    *,
    campaign: Campaign,
    spec: PoolSpec,
    name: str = "",
    confirm_over_budget: bool = False,
    runs_per_team: int | None = None,
    created_by: Any = None,
) -> Job:
    """Start the job that builds the pool (`pool_build`, above): it reads every
    run file, too long for a request. The name defaults to the spec's label;
    `runs_per_team` as for `pool_services.pool_build`."""
    return job_start(
        kind=pool_build,
        title=f"Build pool {name or spec_label(spec)}",
        params={
            "campaign": campaign.slug,
            "spec": spec.to_dict(),
            "name": name,
            "confirm_over_budget": confirm_over_budget,
            "runs_per_team": runs_per_team,
        },
        campaign=campaign,
        created_by=created_by,
    )


def pool_revise(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Re-plan topics of a pool: params pool (id), spec, topics, reason, confirm_over_budget."""
    params = job.params
    pool = Pool.objects.select_related("campaign").get(pk=params["pool"])
    progress(done=0, total=1)

    def stored(revision: PoolRevision) -> None:
        # One note (one write of the log), not one per topic.
        progress.note(
            "\n".join(
                f"topic {row['query_id']}: {row['to_judge_before']:,} to judge before, "
                f"{row['to_judge_after']:,} after ({row['leaving']:,} leaving, "
                f"{row['joining']:,} joining, {row['judged_kept']:,} judged kept)"
                for row in revision.summary
            )
        )
        progress.stored(
            {"pool": pool.pk, "campaign": pool.campaign.slug, "revision": revision.number}
        )

    pool_services.pool_revise(
        pool=pool,
        spec=PoolSpec.from_dict(params["spec"]),
        topics=params["topics"],
        reason=params.get("reason", ""),
        created_by=job.created_by,
        confirm_over_budget=params.get("confirm_over_budget", False),
        before_commit=stored,
    )
    return job.result


def pool_revise_start(
    *,
    pool: Pool,
    spec: PoolSpec,
    topics: Sequence[str],
    reason: str = "",
    confirm_over_budget: bool = False,
    created_by: Any = None,
) -> Job:
    """Start the job that re-plans `topics` of the pool (`pool_revise`, above)."""
    return job_start(
        kind=pool_revise,
        title=f"Re-plan {len(topics)} topic(s) of pool {pool.pk}",
        params={
            "pool": pool.pk,
            "spec": spec.to_dict(),
            "topics": list(topics),
            "reason": reason,
            "confirm_over_budget": confirm_over_budget,
        },
        campaign=pool.campaign,
        created_by=created_by,
    )


def runs_import(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Import uploaded run files kept on disk (`runs_import_start`): params
    campaign (slug), files ([{path, name}], storage names), keep_valid. Progress
    counts the files read and checked. Checked and stored as `run_services.runs_import`
    does: a rejected file fails the job with its `file:line: reason` problems and
    stores nothing (with keep_valid, the valid files are stored and the log lists
    the rejected ones). The uploaded files are removed when the job ends, done or
    failed; a run that lost its lease leaves them to the run that took over."""
    params = job.params
    campaign = Campaign.objects.get(slug=params["campaign"])
    files = params["files"]
    _refuse_gone([f for f in files if not default_storage.exists(f["path"])])
    uploads = [
        run_services.RunUpload(f["name"], Path(default_storage.path(f["path"]))) for f in files
    ]
    progress(done=0, total=len(uploads), unit="files")
    for upload in uploads:
        progress.note(f"{upload.name}: {upload.data.stat().st_size:,} bytes")  # type: ignore[union-attr]

    def counted(items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            progress.advance()
            yield item

    def stored(runs: list[Run]) -> None:
        for run in runs:
            progress.note(
                f"stored run {run.tag}: {run.line_count:,} lines, {run.topic_count:,} topics"
            )
        tags, rejected = [run.tag for run in runs], len(uploads) - len(runs)
        progress.stored({"campaign": campaign.slug, "runs": tags, "rejected": rejected})

    with _removed_at_the_end(files):
        try:
            run_services.runs_import(
                campaign=campaign,
                uploads=uploads,
                uploaded_by=job.created_by,
                keep_valid=params.get("keep_valid", False),
                progress=counted,
                before_commit=stored,
            )
        except run_services.RunsPartlyImported as error:
            if not error.stored:
                raise
            for line in str(error).splitlines():
                progress.note(line)
    return job.result


def runs_import_start(
    *,
    campaign: Campaign,
    files: Sequence[UploadedFile],
    uploaded_by: Any = None,
    keep_valid: bool = False,
) -> Job:
    """Keep uploaded run files on disk and start the job that imports them
    (`runs_import`, above), for uploads too large to parse in a request.
    The job checks and stores exactly as `run_services.runs_import` does, and removes the
    files when it ends."""
    names = ", ".join(f.name for f in files)
    return job_start(
        kind=runs_import,
        title=f"Import runs {names}"[:300],
        params={"campaign": campaign.slug, "files": _kept(files), "keep_valid": keep_valid},
        campaign=campaign,
        created_by=uploaded_by,
    )


def documents_import(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Import an uploaded collection kept on disk (`documents_import_start`):
    params campaign (slug), file ({path, name}), format (None: from the name and
    the first bytes). Progress counts the bytes read. A problem anywhere fails the
    job with every `file:line: reason` and stores nothing. The file is removed
    when the job ends, as in `runs_import`."""
    params = job.params
    campaign = Campaign.objects.get(slug=params["campaign"])
    kept = params["file"]
    _refuse_gone([kept] if not default_storage.exists(kept["path"]) else [])

    def stored(result: services.ImportResult) -> None:
        progress(done=job.total)
        progress.note(f"{kept['name']}: {result}")
        progress.stored(
            {"campaign": campaign.slug, "created": result.created, "updated": result.updated}
        )

    with _removed_at_the_end([kept]), default_storage.open(kept["path"], "rb") as stream:
        progress(done=0, total=default_storage.size(kept["path"]), unit=Job.BYTES)
        services.documents_import(
            campaign=campaign,
            stream=_ReadCounted(stream, progress),  # type: ignore[arg-type]
            name=kept["name"],
            format=params.get("format"),
            before_commit=stored,
        )
    return job.result


def documents_import_start(
    *, campaign: Campaign, file: UploadedFile, format: str | None = None, uploaded_by: Any = None
) -> Job:
    """Keep an uploaded collection on disk and start the job that imports it
    (`documents_import`, above), for files too large to load in a request.
    The job stores exactly as `services.documents_import` does (a problem anywhere stores
    nothing), and removes the file when it ends."""
    (kept,) = _kept([file])
    return job_start(
        kind=documents_import,
        title=f"Import documents {file.name}"[:300],
        params={"campaign": campaign.slug, "file": kept, "format": format},
        campaign=campaign,
        created_by=uploaded_by,
    )


def _kept(files: Sequence[UploadedFile]) -> list[dict[str, str]]:
    """Uploaded files saved under uploads/pending/ for a job: [{path, name}]. An
    upload already streamed to a temporary file is moved, not copied, so nothing
    holds it in memory."""
    folder = f"uploads/pending/{uuid.uuid4().hex}"
    return [
        {
            "path": default_storage.save(f"{folder}/{get_valid_filename(f.name) or 'file'}", f),
            "name": f.name,
        }
        for f in files
    ]


def _refuse_gone(files: list[dict[str, str]]) -> None:
    if files:
        names = ", ".join(f["name"] for f in files)
        raise ValueError(
            f"{names}: the uploaded file is gone (an earlier run of this job ended and "
            "removed it): upload it again"
        )


@contextmanager
def _removed_at_the_end(files: list[dict[str, str]]) -> Iterator[None]:
    """Remove the uploaded files a job reads once it ends, done or failed; not when
    its run lost its lease, since the run that took the job over reads them."""
    try:
        yield
    except JobLeaseLost:
        raise
    except BaseException:
        _remove(files)
        raise
    _remove(files)


def _remove(files: list[dict[str, str]]) -> None:
    for f in files:
        default_storage.delete(f["path"])


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
