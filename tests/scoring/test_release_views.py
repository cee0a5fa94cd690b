"""The organiser's release pages: the list and its form, a release with its
downloads and what changed, the withdrawal."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from judging import services as judging_services
from scoring.models import Release
from tests.helpers import make_judged_team_campaign, make_release
from workbench.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(participant):
    return make_judged_team_campaign(participant)


def releases_url(pool) -> str:
    return reverse("scoring:pool_releases", args=[pool.pk])


def release_url(pool, version: int) -> str:
    return reverse("scoring:release_detail", args=[pool.pk, version])


def test_the_form_releases_and_the_page_shows_the_release_with_its_downloads(
    organiser_client, judged
):
    _, _, pool = judged
    page = organiser_client.get(releases_url(pool)).content.decode()
    assert "Nothing released yet" in page
    assert "Release as version 1" in page
    response = organiser_client.post(
        releases_url(pool), {"measure": "P.10", "reason": "first results", "test": "t"}
    )
    assert response.status_code == 302
    assert response.url == release_url(pool, 1)
    release = Release.objects.get()
    page = organiser_client.get(response.url).content.decode()
    assert "Release 1 made: the teams see it." in page
    assert "first results" in page
    assert release.files["qrels.txt"]["sha256"] in page
    assert reverse("scoring:release_bundle", args=[pool.pk, 1]) in page
    assert 'data-run="alpha1"' in page
    assert "nothing to compare with yet" in page
    listing = organiser_client.get(releases_url(pool)).content.decode()
    assert 'data-version="1"' in listing
    assert "Release as version 2" in listing


def test_a_bad_release_form_is_400_with_the_reason(organiser_client, judged):
    _, _, pool = judged
    response = organiser_client.post(releases_url(pool), {"measure": "nosuch"})
    assert response.status_code == 400
    assert "Not released:" in response.content.decode()
    assert "nosuch" in response.content.decode()
    assert not Release.objects.exists()


def test_the_second_release_page_shows_what_changed_since_the_first(organiser_client, judged):
    campaign, _, pool = judged
    make_release(pool)
    judging_services.judgment_record(
        assessor=User.objects.get(username="alice"),
        topic=campaign.topics.get(topic_id="302"),
        docno="docx-4",
        relevance=0,
        aspects={},
    )
    make_release(pool)
    page = organiser_client.get(release_url(pool, 2)).content.decode()
    assert "From version 1 to 2: 0 labels added, 1 changed, 0 removed" in page
    changes = page[page.index('data-changes="labels"') :]
    assert '<td>302</td><td class="mono">docx-4</td><td class="num">1</td>' in changes
    scores = page[page.index('data-changes="scores"') :]
    assert "alpha1" in scores[: scores.index("</table>")]
    first = organiser_client.get(release_url(pool, 1), {"from": 2}).content.decode()
    assert "From version 1 to 2" in first  # the older one compared with the newer
    bad = organiser_client.get(release_url(pool, 2), {"from": 7}).content.decode()
    assert "has no other release 7" in bad


def test_a_withdrawal_needs_a_reason_and_keeps_the_release(organiser_client, judged):
    _, _, pool = judged
    make_release(pool)
    withdraw = reverse("scoring:release_withdraw", args=[pool.pk, 1])
    page = organiser_client.post(withdraw, {"reason": ""}, follow=True).content.decode()
    assert "Not withdrawn: say why." in page
    assert not Release.objects.get().withdrawn
    page = organiser_client.post(withdraw, {"reason": "wrong qrels"}, follow=True)
    text = page.content.decode()
    assert "Release 1 withdrawn: the teams no longer see it." in text
    assert "wrong qrels" in text
    assert "data-withdrawn" in text
    assert Release.objects.get().withdrawal.reason == "wrong qrels"


def test_the_bundle_and_each_file_download(organiser_client, judged):
    _, _, pool = judged
    make_release(pool)
    response = organiser_client.get(reverse("scoring:release_bundle", args=[pool.pk, 1]))
    assert response.status_code == 200
    assert response["Content-Disposition"].endswith(f'-pool{pool.pk}-release1.zip"')
    names = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).namelist()
    assert "reproduce.sh" in names
    scores = organiser_client.get(reverse("scoring:release_file", args=[pool.pk, 1, "scores.tsv"]))
    assert scores.content.decode().startswith("run\tmeasure\ttopic\tvalue\n")
    missing = reverse("scoring:release_file", args=[pool.pk, 1, "nosuch"])
    assert organiser_client.get(missing).status_code == 404
    assert organiser_client.get(release_url(pool, 5)).status_code == 404


def test_a_large_pool_is_released_in_a_job_whose_page_links_the_release(
    organiser_client, judged, settings, django_capture_on_commit_callbacks
):
    _, _, pool = judged
    settings.WORKBENCH_SYNC_SCORING_CELLS = 1
    assert "a job makes the release" in organiser_client.get(releases_url(pool)).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser_client.post(releases_url(pool), {"measure": "map"})
    job = Job.objects.get()
    assert response.url == reverse("job_detail", args=[job.pk])
    page = organiser_client.get(response.url).content.decode()
    assert f"Open release 1 of pool {pool.pk}" in page
    assert release_url(pool, 1) in page


def test_the_pool_pages_and_the_teams_page_lead_to_the_releases(organiser_client, judged):
    campaign, _, pool = judged
    leaderboard = organiser_client.get(reverse("scoring:pool_leaderboard", args=[pool.pk]))
    assert releases_url(pool) in leaderboard.content.decode()
    teams = organiser_client.get(reverse("participation:campaign_teams", args=[campaign.slug]))
    assert releases_url(pool) in teams.content.decode()
