"""The pooling app's long work, run as jobs (see `workbench.jobs`)."""

from __future__ import annotations

from typing import Any

from pooling import services
from pooling.models import Campaign, Pool
from pooling.spec import PoolSpec
from workbench.jobs import JobProgress
from workbench.models import Job


def pool_build(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Build a pool: params campaign (slug), spec (`PoolSpec.to_dict`), name,
    confirm_over_budget. Progress counts the run files read."""
    params = job.params
    campaign = Campaign.objects.get(slug=params["campaign"])
    progress(done=0, total=campaign.runs.count())
    pool = services.pool_build(
        campaign=campaign,
        spec=PoolSpec.from_dict(params["spec"]),
        name=params.get("name", ""),
        created_by=job.created_by,
        progress=progress.advance,
        confirm_over_budget=params.get("confirm_over_budget", False),
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
    for row in revision.summary:
        progress.note(
            f"topic {row['query_id']}: {row['to_judge_before']} to judge before, "
            f"{row['to_judge_after']} after ({row['leaving']} leaving, {row['joining']} joining, "
            f"{row['judged_kept']} judged kept)"
        )
    return {"pool": pool.pk, "campaign": pool.campaign.slug, "revision": revision.number}
