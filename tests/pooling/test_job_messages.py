"""Numbers that the pooling jobs and commands write for people carry thousands separators."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from pooling import jobs
from pooling.core.spec import PoolSpec
from pooling.models import Pool
from tests.helpers import make_campaign, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    campaign = make_campaign(topics=("1",))
    make_run(campaign, "r", {"1": [f"d{i}" for i in range(1_200)]})
    return campaign


def test_the_pool_build_job_says_its_entries_with_a_thousands_separator(
    campaign, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = jobs.pool_build_start(campaign=campaign, spec=PoolSpec(depth=1_200), name="big")
    job.refresh_from_db()
    pool = Pool.objects.get()
    assert f"pool {pool.pk} (big): 1,200 entries" in job.log
    assert "1200" not in job.log


def test_build_pool_prints_its_counts_with_thousands_separators(campaign):
    out = io.StringIO()
    call_command(
        "build_pool", "--campaign", campaign.slug, "--depth", "1200", "--name", "big", stdout=out
    )
    assert "1,200 entries over 1 topics, 1,200 to judge, from 1 runs" in out.getvalue()


def test_a_judgments_import_says_its_counts_with_thousands_separators():
    from judging.services import JudgmentImportResult

    text = str(JudgmentImportResult(created=104_713, updated=1_000, unchanged=12))
    assert text.startswith("104,713 created, 1,000 updated, 12 unchanged")
