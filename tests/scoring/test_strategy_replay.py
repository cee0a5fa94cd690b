"""The pool page's "what would each strategy have found": a job replaying the
simulator on the pool's runs, with an earlier pool's labels or uploaded qrels."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import services
from pooling import pool_services
from pooling.core.spec import PoolSpec
from scoring.core.analysis.arguments import one_number
from scoring.core.measures.catalog import TREC
from scoring.core.pool_simulation import Settings, simulate
from scoring.core.pool_simulation_cli import to_json
from tests.helpers import make_campaign, make_run, make_user
from tests.judging.test_adaptive import RUNS, relevant
from workbench.core.label_schema import SCHEMA_PRESETS
from workbench.core.run_files import read_run_cache
from workbench.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def pools():
    """A judged depth-8 pool (the earlier one) and a second pool of the same runs."""
    campaign = make_campaign(topics=("1", "2"), label_schema=SCHEMA_PRESETS["binary"].schema())
    for tag, rows in RUNS.items():
        make_run(campaign, tag, rows)
    earlier = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=8), name="old")
    ann = make_user("ann")
    for assignment in services.assignments_create(
        pool=earlier, topics=list(campaign.topics.all()), assessors=[ann]
    ):
        for entry in assignment.queue():
            services.judgment_submit(
                assignment=assignment,
                docno=entry.docno,
                relevance=relevant(entry.docno),
                aspects={},
            )
    now = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=8), name="new")
    return earlier, now


def expected_report(pool, qrels_rows, budgets) -> dict:
    import pandas as pd

    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    runs = [read_run_cache(run.cache_file.path) for run in pool.runs.order_by("tag")]
    settings = Settings(
        strategies=("depth", "mtf", "hedge", "bandit", "thompson", "active"),
        budgets=tuple(budgets),
        measure=one_number(TREC.select(["map"]), "map"),
        depth=8,
    )
    return to_json(simulate(qrels, runs, settings))


def qrels_rows() -> list[tuple[str, str, int]]:
    return sorted(
        {(t, d, relevant(d)) for run in RUNS.values() for t, docs in run.items() for d in docs}
    )


def test_the_page_replays_an_earlier_pools_labels_in_a_job_with_pictures(
    organiser_client, pools, django_capture_on_commit_callbacks
):
    earlier, now = pools
    url = reverse("scoring:pool_strategy_replay", args=[now.pk])
    page = organiser_client.get(url).content.decode()
    assert f'<option value="{earlier.pk}">' in page
    with django_capture_on_commit_callbacks(execute=True):
        started = organiser_client.post(url, {"source_pool": earlier.pk, "budgets": "4,10"})
    job = Job.objects.get()
    assert started.url == f"{url}?job={job.pk}"
    assert job.state == Job.DONE, job.error
    assert job.result["report"] == expected_report(now, qrels_rows(), [4, 10])
    shown = organiser_client.get(started.url)
    assert shown.context["report"]["strategies"][1]["strategy"] == "mtf"
    assert 'data-strategy="bandit"' in shown.content.decode()
    for fmt, kind in [("svg", "image/svg+xml"), ("png", "image/png"), ("csv", "text/csv")]:
        picture = organiser_client.get(
            reverse("scoring:pool_strategy_replay_plot", args=[now.pk, job.pk, fmt])
        )
        assert picture.status_code == 200
        assert picture["Content-Type"].startswith(kind)
    assert (
        b"mtf"
        in organiser_client.get(
            reverse("scoring:pool_strategy_replay_plot", args=[now.pk, job.pk, "csv"])
        ).content
    )


def test_uploaded_qrels_are_replayed_and_a_bad_line_is_named(
    organiser, pools, django_capture_on_commit_callbacks
):
    _, now = pools
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=organiser).key}")
    url = f"/api/pools/{now.pk}/strategies/"
    assert api.get(url).status_code == 404
    bad = SimpleUploadedFile("old.qrels", b"1 0 g0 1\n1 0 g1\n")
    refused = api.post(url, {"qrels": bad, "budgets": "6"}, format="multipart")
    assert refused.status_code == 400
    assert "old.qrels:2" in refused.json()["detail"]
    assert api.post(url, {"source_pool": "", "budgets": "0"}).status_code == 400
    assert not Job.objects.exists()
    text = "".join(f"{t} 0 {d} {r}\n" for t, d, r in qrels_rows()).encode()
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(
            url, {"qrels": SimpleUploadedFile("q.txt", text), "budgets": "6"}, format="multipart"
        )
    assert started.status_code == 202
    assert api.get(url).json() == expected_report(now, qrels_rows(), [6])
