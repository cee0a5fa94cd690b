"""The pooling app's long work, run as jobs (see `workbench.jobs`)."""

from __future__ import annotations

from typing import Any

from pooling import services
from pooling.models import Campaign
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
