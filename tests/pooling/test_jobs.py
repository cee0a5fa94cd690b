"""The pooling app's jobs: a pool build reports per topic."""

from __future__ import annotations

import pytest

from pooling.core.spec import PoolSpec
from tests.helpers import make_campaign, make_run
from workbench.jobs import job_start
from workbench.models import Job

pytestmark = pytest.mark.django_db


def test_a_pool_build_job_counts_the_topics_and_logs_its_steps(
    django_capture_on_commit_callbacks, organiser
):
    campaign = make_campaign(topics=("301", "302", "303"))
    make_run(campaign, "a", {"301": ["d1", "d2"], "302": ["d3"], "303": ["d4"]})
    make_run(campaign, "b", {"301": ["d2", "d5"], "303": ["d6"]})
    with django_capture_on_commit_callbacks(execute=True):
        job = job_start(
            kind="pooling.jobs.pool_build",
            title="build",
            params={"campaign": campaign.slug, "spec": PoolSpec(depth=2).to_dict()},
            campaign=campaign,
            created_by=organiser,
        )
    job.refresh_from_db()
    assert job.state == Job.DONE, job.error
    assert (job.done, job.total, job.unit) == (3, 3, "topics")
    assert job.log.splitlines()[:3] == [
        "ranking 2 runs",
        "pooled 3 topics; making their entries",
        "storing the entries",
    ]
    assert job.result["entries"] == 6
