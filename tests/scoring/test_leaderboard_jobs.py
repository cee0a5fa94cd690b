"""The leaderboard of a pool too large to score in a request: a job scores the
measure's per-topic values on the current labels, and the page, its downloads,
its pictures and the API work from the stored table exactly as they do from
one scored in the request."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging.models import Judgment
from scoring import leaderboard_selectors, selectors
from scoring.core.analysis.leaderboard import ScoreTable
from scoring.core.analysis.render import to_json
from tests.scoring.conftest import change_a_label
from workbench.jobs import job_start
from workbench.models import Job

pytestmark = pytest.mark.django_db

QUERY = {"measure": "P.10", "test": "wilcoxon", "correction": "bonferroni", "alpha": "0.1"}


@pytest.fixture
def large(settings):
    """Make the demo pool (8 runs x 5 topics) too large to score in a request."""

    def limit(cells: int) -> None:
        settings.WORKBENCH_SYNC_SCORING_CELLS = cells
        cache.clear()  # each test computes afresh, in the request or in the job

    limit(39)
    return limit


def page_url(pool, **params) -> str:
    query = "&".join(f"{k}={v}" for k, v in (params or QUERY).items())
    return reverse("scoring:pool_leaderboard", args=[pool.pk]) + f"?{query}"


def plot_url(pool, kind: str, **params) -> str:
    query = "&".join(f"{k}={v}" for k, v in (QUERY | params).items())
    return reverse("scoring:leaderboard_plot", args=[pool.pk, kind]) + f"?{query}"


def score_in_a_job(client, pool, capture, **params):
    with capture(execute=True):
        response = client.post(page_url(pool, **params))
    assert response.status_code == 302
    assert response.url == page_url(pool, **params)  # back to the page, options kept
    return Job.objects.filter(kind=leaderboard_selectors.LEADERBOARD_JOB).latest("created_at")


def api_for(user) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return api


def test_a_small_pool_is_scored_in_the_request_with_no_job(organiser_client, pool, large):
    large(40)
    page = organiser_client.get(page_url(pool))
    assert page.context["board"] is not None
    assert "Score the leaderboard" not in page.content.decode()
    assert not Job.objects.exists()


def test_a_large_pool_offers_a_job_and_a_get_starts_nothing(organiser_client, pool, large):
    page = organiser_client.get(page_url(pool))
    assert page.status_code == 200
    html = page.content.decode()
    assert "board" not in page.context
    assert "Score the leaderboard" in html
    assert page.context["cells"] == 40
    # Its downloads and pictures say it is not scored yet.
    download = organiser_client.get(page_url(pool) + "&download=json")
    assert download.status_code == 409
    assert "not scored yet" in download.context["error"]
    picture = organiser_client.get(plot_url(pool, "box"))
    assert picture.status_code == 409
    assert "not scored yet" in picture.content.decode()
    assert not Job.objects.exists()


def test_the_job_stores_the_table_scored_in_the_request(
    organiser_client, pool, large, django_capture_on_commit_callbacks
):
    job = score_in_a_job(organiser_client, pool, django_capture_on_commit_callbacks)
    assert job.state == Job.DONE
    assert (job.done, job.total) == (9, 9)  # each of the 8 runs read, then the scoring
    assert job.params == leaderboard_selectors.leaderboard_job(pool, "P.10")["params"]
    stored = ScoreTable.from_dict(job.result["table"])
    large(10**9)
    scored = leaderboard_selectors.pool_score_table(pool=pool, measure="P.10")
    assert (stored.measure, stored.runs, stored.topics) == (
        scored.measure,
        scored.runs,
        scored.topics,
    )
    np.testing.assert_array_equal(stored.values, scored.values)


def test_the_page_downloads_and_pictures_equal_those_scored_in_the_request(
    organiser_client, pool, large, django_capture_on_commit_callbacks
):
    score_in_a_job(organiser_client, pool, django_capture_on_commit_callbacks)
    from_job = organiser_client.get(page_url(pool))
    html = from_job.content.decode()
    assert "Scored in the background by" in html
    assert "Score the leaderboard" not in html
    stored = {
        "page": json.dumps(to_json(from_job.context["board"])),
        "json": organiser_client.get(page_url(pool) + "&download=json").content,
        "latex": organiser_client.get(page_url(pool) + "&download=latex").content,
        **{
            kind: organiser_client.get(plot_url(pool, kind, format="csv")).content
            for kind in ("box", "median", "matrix", "pr", "pr-topic")
        },
    }
    large(10**9)
    in_request = organiser_client.get(page_url(pool))
    assert "Scored in the background by" not in in_request.content.decode()
    assert stored == {
        "page": json.dumps(to_json(in_request.context["board"])),
        "json": organiser_client.get(page_url(pool) + "&download=json").content,
        "latex": organiser_client.get(page_url(pool) + "&download=latex").content,
        **{
            kind: organiser_client.get(plot_url(pool, kind, format="csv")).content
            for kind in ("box", "median", "matrix", "pr", "pr-topic")
        },
    }
    assert len(from_job.context["rows"]) == 8
    assert b"\\toprule" in stored["latex"]


def test_other_options_reuse_the_stored_table_and_another_measure_needs_its_own(
    organiser_client, pool, large, django_capture_on_commit_callbacks
):
    score_in_a_job(organiser_client, pool, django_capture_on_commit_callbacks)
    other_test = organiser_client.get(page_url(pool, measure="P.10", test="t", alpha="0.01"))
    assert other_test.context["board"].options.alpha == 0.01
    other_measure = organiser_client.get(page_url(pool, measure="map"))
    assert "board" not in other_measure.context
    assert "Score the leaderboard" in other_measure.content.decode()
    assert Job.objects.count() == 1


def test_a_new_label_makes_the_stored_table_out_of_date(
    organiser_client, pool, large, django_capture_on_commit_callbacks
):
    first = score_in_a_job(organiser_client, pool, django_capture_on_commit_callbacks)
    change_a_label(pool)
    page = organiser_client.get(page_url(pool))
    html = page.content.decode()
    assert "board" not in page.context  # the stored table is not served for new labels
    assert "data-superseded" in html
    assert reverse("job_detail", args=[first.pk]) in html
    assert "Score the leaderboard" in html
    assert organiser_client.get(plot_url(pool, "matrix")).status_code == 409
    second = score_in_a_job(organiser_client, pool, django_capture_on_commit_callbacks)
    assert second != first
    large(10**9)
    scored = leaderboard_selectors.pool_score_table(pool=pool, measure="P.10")
    np.testing.assert_array_equal(
        ScoreTable.from_dict(second.result["table"]).values, scored.values
    )
    assert second.params["version"] != first.params["version"]


def test_a_second_post_starts_no_second_job(
    organiser_client, pool, large, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        organiser_client.post(page_url(pool))
        running = organiser_client.get(page_url(pool))
        organiser_client.post(page_url(pool))
    assert Job.objects.count() == 1
    html = running.content.decode()
    assert 'id="background-job"' in html  # polls itself until the job is done
    assert "Score the leaderboard" not in html


def test_a_failed_job_stores_nothing_and_can_be_tried_again(
    organiser_client, pool, large, django_capture_on_commit_callbacks
):
    # A measure trec_eval knows but that has no per-topic values: said by the job.
    failed = score_in_a_job(
        organiser_client, pool, django_capture_on_commit_callbacks, measure="runid"
    )
    assert (failed.state, failed.result) == (Job.FAILED, None)
    assert "no per-topic values" in failed.error
    page = organiser_client.get(page_url(pool, measure="runid")).content.decode()
    assert "The last attempt failed: measure" in page
    assert "Score the leaderboard" in page
    retried = score_in_a_job(
        organiser_client, pool, django_capture_on_commit_callbacks, measure="runid"
    )
    assert retried != failed
    # A job with a measure nobody knows fails too, and nothing is kept.
    with django_capture_on_commit_callbacks(execute=True):
        spec = leaderboard_selectors.leaderboard_job(pool, "nosuch")
        bad = job_start(kind=spec["kind"], title=spec["title"], params=spec["params"])
    bad.refresh_from_db()
    assert (bad.state, bad.result) == (Job.FAILED, None)
    assert "unknown measure 'nosuch'" in bad.error
    assert cache.get(f"score-table:{pool.pk}:{selectors.scores_version(pool, ['nosuch'])}") is None


def test_a_bad_measure_or_nothing_judged_is_said_before_any_job(organiser_client, pool, large):
    bad = organiser_client.post(page_url(pool, measure="nosuch"))
    assert bad.status_code == 400
    assert "nosuch" in bad.context["error"]
    Judgment.objects.all().delete()
    unjudged = organiser_client.post(page_url(pool))
    assert unjudged.status_code == 200
    assert "nothing is judged" in unjudged.context["notice"].lower()
    assert not Job.objects.exists()


def test_only_organisers_see_or_start_it(
    organiser, assessor, participant, pool, large, django_capture_on_commit_callbacks
):
    for user in (assessor, participant):
        client = Client()
        client.force_login(user)
        assert client.get(page_url(pool)).status_code == 403
        assert client.post(page_url(pool)).status_code == 403
        assert client.get(plot_url(pool, "box")).status_code == 403
        assert api_for(user).post(f"/api/pools/{pool.pk}/leaderboard/").status_code == 403
    assert not Job.objects.exists()
    client = Client()
    client.force_login(organiser)
    job = score_in_a_job(client, pool, django_capture_on_commit_callbacks)
    for user in (assessor, participant):
        client = Client()
        client.force_login(user)
        assert client.get(page_url(pool)).status_code == 403
        assert client.get(reverse("job_detail", args=[job.pk])).status_code == 404
        assert api_for(user).get(f"/api/pools/{pool.pk}/leaderboard/").status_code == 403


def test_the_api_scores_in_a_job_then_gives_the_json_of_the_request(
    organiser, pool, large, django_capture_on_commit_callbacks
):
    api = api_for(organiser)
    url = f"/api/pools/{pool.pk}/leaderboard/"
    missing = api.get(url, QUERY)
    assert missing.status_code == 404
    assert "POST to make one" in missing.json()["detail"]
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(url + "?measure=P.10")
    assert started.status_code == 202
    job = Job.objects.get(pk=started.json()["job"])
    assert started["Location"] == reverse("api-job", args=[job.pk])
    assert job.state == Job.DONE
    stored = api.get(url, QUERY)
    assert stored.status_code == 200
    again = api.post(url + "?measure=P.10")  # done already: the same job, nothing queued
    assert (again.status_code, again.json()["job"]) == (202, job.pk)
    assert Job.objects.count() == 1
    large(10**9)
    in_request = api.get(url, QUERY)
    assert stored.content == in_request.content
    small = api.post(url + "?" + "&".join(f"{k}={v}" for k, v in QUERY.items()))
    assert (small.status_code, small.json()) == (200, in_request.json())  # no job
    assert Job.objects.count() == 1
    # New labels: the stored table is out of date.
    large(39)
    change_a_label(pool)
    stale = api.get(url, QUERY)
    assert stale.status_code == 404
    assert f"job {job.pk} made one of earlier labels" in stale.json()["detail"]
    assert api.get(url, {"measure": "nosuch"}).status_code == 400


def test_the_api_says_a_job_is_running_or_failed(
    organiser, pool, large, django_capture_on_commit_callbacks
):
    api = api_for(organiser)
    url = f"/api/pools/{pool.pk}/leaderboard/?measure=runid"
    with django_capture_on_commit_callbacks(execute=False):
        queued = api.post(url)
        polled = api.get(url)
    assert (queued.status_code, polled.status_code) == (202, 202)
    assert polled.json()["job"] == queued.json()["job"]
    Job.objects.filter(pk=queued.json()["job"]).update(state=Job.FAILED, error="it broke")
    failed = api.get(url)
    assert failed.status_code == 404
    assert "the last attempt failed: it broke" in failed.json()["detail"]


def test_the_precision_recall_curves_score_no_more_runs_than_a_request_may(
    organiser_client, pool, large, django_capture_on_commit_callbacks
):
    score_in_a_job(organiser_client, pool, django_capture_on_commit_callbacks)
    assert selectors.runs_in_request(pool) == 7  # 39 pairs over 5 topics
    runs = [f"demo-run{n}" for n in range(1, 9)]
    picked = "&".join(f"runs={run}" for run in runs)
    page = organiser_client.get(page_url(pool) + "&" + picked)
    assert page.context["pr_runs"] == runs[:7]
    assert "at most 7 on this pool" in page.content.decode()
    too_many = organiser_client.get(plot_url(pool, "pr") + "&" + picked)
    assert too_many.status_code == 400
    assert "choose at most 7" in too_many.content.decode()
    seven = organiser_client.get(
        plot_url(pool, "pr", format="csv") + "&" + picked[: picked.rindex("&")]
    )
    assert seven.status_code == 200


def test_a_table_a_job_made_is_read_back_by_the_scorings_in_a_request(
    organiser_client, pool, large, monkeypatch, django_capture_on_commit_callbacks
):
    """The participants' leaderboard scores in the request: once a job has the
    table of the current labels, it is read from the job, not scored again."""
    job = score_in_a_job(organiser_client, pool, django_capture_on_commit_callbacks)
    cache.clear()

    def no_scoring(*args, **kwargs):
        raise AssertionError("scored again")

    monkeypatch.setattr(leaderboard_selectors, "_pool_score_table", no_scoring)
    table = leaderboard_selectors.pool_score_table(pool=pool, measure="P.10")
    assert table.to_dict() == job.result["table"]
    change_a_label(pool)  # a new state: the job's table is not the current labels'
    with pytest.raises(AssertionError, match="scored again"):
        leaderboard_selectors.pool_score_table(pool=pool, measure="P.10")
