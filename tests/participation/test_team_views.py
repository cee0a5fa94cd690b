"""The team page (a participant's runs, upload and precedence) and the organiser's teams page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from participation import services as team_services
from pooling.models import Run
from tests.helpers import make_campaign, make_pool, make_team, make_team_run, make_user, run_text

pytestmark = pytest.mark.django_db

ROWS = {"301": ["d1", "d2"], "302": ["d3"]}


@pytest.fixture
def campaign():
    return make_campaign()


@pytest.fixture
def team(campaign, participant):
    return make_team(campaign, "Alpha", [participant])


def team_url(team, name: str = "team_detail") -> str:
    return reverse(f"teams:{name}", args=[team.pk])


def upload(client, team, name: str, data: bytes):
    return client.post(team_url(team, "team_run_upload"), {"file": SimpleUploadedFile(name, data)})


# --------------------------------------------------------------------------
# The team page


def test_home_sends_a_participant_to_their_team(participant_client, team):
    assert participant_client.get(reverse("home")).url == reverse("teams:team_home")
    assert participant_client.get(reverse("teams:team_home")).url == team_url(team)
    # The assessors' page is not theirs either.
    assert participant_client.get(reverse("judging:assessor_home")).url == reverse(
        "teams:team_home"
    )


def test_a_member_of_two_teams_chooses(participant_client, team, participant):
    other = make_team(make_campaign("trec-y", name="TREC Y"), "Alpha Y", [participant])
    page = participant_client.get(reverse("teams:team_home")).content.decode()
    assert team_url(team) in page
    assert team_url(other) in page


def test_upload_stores_the_run_and_lists_it_with_its_check(participant_client, team):
    response = upload(participant_client, team, "alpha1.txt", run_text("alpha1", {"301": ["d1"]}))
    assert response.url == team_url(team)
    run = Run.objects.get()
    assert (run.team, run.precedence, run.uploaded_by.username) == (team, 1, "pat")
    page = participant_client.get(team_url(team)).content.decode()
    assert "alpha1" in page
    assert "no ranking for topics 302, 303" in page
    assert f'name="run-{run.pk}" value="1"' in page


def test_the_stored_message_writes_the_line_count_with_thousands_separators(
    participant_client, team
):
    """'43000 lines' beside the table's 43,000."""
    docnos = [f"d{k}" for k in range(1200)]
    response = upload(participant_client, team, "big.txt", run_text("big", {"301": docnos}))
    page = participant_client.get(response.url).content.decode()
    assert "Run big stored: precedence 1, 1,200 lines." in page


def test_a_rejected_upload_shows_file_line_reason_and_stores_nothing(participant_client, team):
    response = upload(participant_client, team, "bad.txt", b"301 Q0 d1 1 high x\n302 Q0 d2\n")
    assert response.status_code == 400
    page = response.content.decode()
    assert "Rejected: nothing was stored." in page
    assert "bad.txt:1: score &#x27;high&#x27; is not a number" in page
    assert "bad.txt:2: expected 6 columns" in page
    assert not Run.objects.exists()


def test_after_the_deadline_the_upload_is_refused_with_the_reason(
    participant_client, campaign, team
):
    campaign.submission_deadline = timezone.now() - timedelta(hours=1)
    campaign.save()
    page = participant_client.get(team_url(team)).content.decode()
    assert "The deadline has passed" in page
    assert 'name="file"' not in page
    response = upload(participant_client, team, "alpha1.txt", run_text("alpha1", ROWS))
    assert response.status_code == 400
    assert "Refused: the submission deadline" in response.content.decode()
    assert not Run.objects.exists()


def test_a_late_run_accepted_is_stored_marked_late(participant_client, organiser, campaign, team):
    campaign.submission_deadline = timezone.now() - timedelta(hours=1)
    campaign.save()
    team_services.team_late_runs_accept(team=team)
    assert "accepts 1 more run(s)" in participant_client.get(team_url(team)).content.decode()
    upload(participant_client, team, "alpha1.txt", run_text("alpha1", ROWS))
    assert Run.objects.get().late
    assert ">late</span>" in participant_client.get(team_url(team)).content.decode()


def test_the_most_runs_per_team_is_refused_with_the_reason(participant_client, campaign, team):
    campaign.max_runs_per_team = 1
    campaign.save()
    make_team_run(team, "alpha1", ROWS)
    assert "the most runs" in participant_client.get(team_url(team)).content.decode()
    response = upload(participant_client, team, "alpha2.txt", run_text("alpha2", ROWS))
    assert response.status_code == 400
    assert "already has 1 run(s), the most" in response.content.decode()
    assert Run.objects.count() == 1


def test_precedence_form_reorders_the_runs(participant_client, team):
    a1, a2 = make_team_run(team, "alpha1", ROWS), make_team_run(team, "alpha2", ROWS)
    response = participant_client.post(
        team_url(team, "team_precedence"), {f"run-{a1.pk}": "5", f"run-{a2.pk}": "2"}
    )
    assert response.status_code == 302
    assert list(team.runs.order_by("precedence").values_list("tag", flat=True)) == [
        "alpha2",
        "alpha1",
    ]
    response = participant_client.post(
        team_url(team, "team_precedence"), {f"run-{a1.pk}": "1", f"run-{a2.pk}": "1"}
    )
    assert response.status_code == 400
    assert "two runs have precedence 1" in response.content.decode()


def withdraw_url(team, run) -> str:
    return reverse("teams:team_run_withdraw", args=[team.pk, run.pk])


def test_a_team_withdraws_a_run_and_the_later_ones_move_up(participant_client, team):
    _, a2, _ = (make_team_run(team, f"alpha{k}", ROWS) for k in (1, 2, 3))
    original = a2.original_file.name
    page = participant_client.get(team_url(team)).content.decode()
    assert withdraw_url(team, a2) in page
    confirm = participant_client.get(withdraw_url(team, a2)).content.decode()
    assert "Withdraw run alpha2?" in confirm
    assert Run.objects.count() == 3, "asking to confirm changes nothing"
    response = participant_client.post(withdraw_url(team, a2))
    assert response.url == team_url(team)
    assert list(team.runs.order_by("precedence").values_list("tag", "precedence")) == [
        ("alpha1", 1),
        ("alpha3", 2),
    ]
    assert not default_storage.exists(original)
    assert "Run alpha2 withdrawn." in participant_client.get(team_url(team)).content.decode()


def test_a_run_stays_after_the_deadline_or_once_pooled(participant_client, campaign, team):
    run = make_team_run(team, "alpha1", ROWS)
    pool = make_pool(campaign, {"301": ["d1"]})
    pool.runs.add(run)
    response = participant_client.post(withdraw_url(team, run))
    assert response.status_code == 400
    assert "is in pool" in response.content.decode()
    pool.runs.remove(run)
    campaign.submission_deadline = timezone.now() - timedelta(hours=1)
    campaign.save()
    assert withdraw_url(team, run) not in participant_client.get(team_url(team)).content.decode()
    response = participant_client.post(withdraw_url(team, run))
    assert response.status_code == 400
    assert "deadline" in response.content.decode()
    assert Run.objects.get().tag == "alpha1"


def test_another_teams_page_is_a_404(participant_client, campaign, team):
    rivals = make_team(campaign, "Rivals", [make_user("rita")])
    for name in ("team_detail",):
        assert participant_client.get(team_url(rivals, name)).status_code == 404
    for name in ("team_run_upload", "team_precedence"):
        assert participant_client.post(team_url(rivals, name)).status_code == 404
    theirs = make_team_run(rivals, "rival1", ROWS)
    assert participant_client.post(withdraw_url(rivals, theirs)).status_code == 404
    assert participant_client.post(withdraw_url(team, theirs)).status_code == 404
    theirs.delete()
    assert participant_client.get(reverse("teams:team_scores", args=[rivals.pk])).status_code == 404
    assert not Run.objects.exists()


# --------------------------------------------------------------------------
# The organiser's teams page


def teams_url(campaign, name: str = "campaign_teams", *args) -> str:
    return reverse(f"participation:{name}", args=[campaign.slug, *args])


def test_organiser_registers_a_team_and_sets_its_members(organiser_client, campaign):
    make_user("pat"), make_user("quinn")
    response = organiser_client.post(
        teams_url(campaign, "team_create"), {"name": "Alpha", "members": "pat, quinn"}
    )
    assert response.status_code == 302
    team = campaign.teams.get()
    assert sorted(team.members.values_list("username", flat=True)) == ["pat", "quinn"]
    organiser_client.post(teams_url(campaign, "team_members", team.pk), {"members": "quinn"})
    assert list(team.members.values_list("username", flat=True)) == ["quinn"]
    page = organiser_client.get(teams_url(campaign)).content.decode()
    assert "Alpha" in page
    assert 'value="quinn"' in page


def test_organiser_cannot_make_themselves_or_unknown_accounts_members(organiser_client, campaign):
    response = organiser_client.post(
        teams_url(campaign, "team_create"), {"name": "Alpha", "members": "olivia"}
    )
    assert response.status_code == 400
    assert "olivia is an organiser" in response.content.decode()
    response = organiser_client.post(
        teams_url(campaign, "team_create"), {"name": "Alpha", "members": "nobody"}
    )
    assert "no account named nobody" in response.content.decode()
    assert not campaign.teams.exists()


def test_a_team_name_or_member_holding_a_control_character_is_refused(organiser_client, campaign):
    make_user("pat")
    response = organiser_client.post(
        teams_url(campaign, "team_create"), {"name": "Alpha", "members": "pat\x1b[2J"}
    )
    assert response.status_code == 400
    assert "username &#x27;pat\\x1b[2J&#x27; holds U+001B (ESC)" in response.content.decode()
    response = organiser_client.post(
        teams_url(campaign, "team_create"), {"name": "Al\u2067pha", "members": "pat"}
    )
    assert response.status_code == 400
    assert "team name &#x27;Al\\u2067pha&#x27; holds U+2067" in response.content.decode()
    assert not campaign.teams.exists()


def test_organiser_sets_the_deadline_and_limits(organiser_client, campaign):
    response = organiser_client.post(
        teams_url(campaign, "submission_settings"),
        {
            "submission_deadline": "2030-05-01T12:00",
            "max_runs_per_team": "3",
            "pooled_runs_per_team": "2",
        },
    )
    assert response.status_code == 302
    campaign.refresh_from_db()
    assert campaign.submission_deadline.isoformat() == "2030-05-01T12:00:00+00:00"
    assert (campaign.max_runs_per_team, campaign.pooled_runs_per_team) == (3, 2)
    response = organiser_client.post(
        teams_url(campaign, "submission_settings"), {"max_runs_per_team": "0"}
    )
    assert response.status_code == 400


def test_organiser_accepts_a_late_run_and_sees_where_to_add_it(organiser_client, campaign, team):
    organiser_client.post(teams_url(campaign, "team_accept_late", team.pk), {"count": "1"})
    team.refresh_from_db()
    assert team.late_runs_accepted == 1
    from pooling import pool_services
    from pooling.core.spec import PoolSpec

    make_team_run(team, "alpha1", ROWS)
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=5))
    campaign.submission_deadline = timezone.now() - timedelta(hours=1)
    campaign.save()
    make_team_run(team, "alpha2", {"301": ["d9"]})
    page = organiser_client.get(teams_url(campaign)).content.decode()
    link = reverse("pooling:pool_detail", args=[campaign.slug, pool.pk]) + "#late-runs"
    assert link in page
    pool_page = organiser_client.get(reverse("pooling:pool_detail", args=[campaign.slug, pool.pk]))
    assert 'id="late-runs"' in pool_page.content.decode()
    detail = organiser_client.get(reverse("pooling:campaign_detail", args=[campaign.slug]))
    assert "Alpha" in detail.content.decode()


def test_the_teams_page_lists_the_campaigns_releases_and_where_to_make_one(
    organiser_client, participant
):
    from scoring import services as scoring_services
    from tests.helpers import make_judged_team_campaign, make_release

    campaign, _, pool = make_judged_team_campaign(participant)
    page = organiser_client.get(teams_url(campaign)).content.decode()
    assert "Nothing released" in page
    assert reverse("scoring:pool_releases", args=[pool.pk]) in page
    release = make_release(pool)
    scoring_services.release_withdraw(release=make_release(pool), reason="oops")
    page = organiser_client.get(teams_url(campaign)).content.decode()
    assert reverse("scoring:release_detail", args=[pool.pk, release.version]) in page
    assert "shown to the teams" in page
    assert "withdrawn" in page


def test_pool_form_offers_the_first_n_runs_of_every_team(
    organiser_client, campaign, team, django_capture_on_commit_callbacks
):
    campaign.pooled_runs_per_team = 1
    campaign.save()
    make_team_run(team, "alpha1", {"301": ["d1"]})
    make_team_run(team, "alpha2", {"301": ["d2"]})
    page = organiser_client.get(reverse("pooling:pool_new", args=[campaign.slug])).content.decode()
    assert 'name="runs" value="per-team" checked' in page
    assert 'name="runs_per_team" min="1" value="1"' in page
    assert "From 1 run." in page
    whatif = organiser_client.get(
        reverse("pooling:pool_whatif", args=[campaign.slug]),
        {"depth": "5", "seed": "0", "order": "shuffled", "runs": "all"},
    ).content.decode()
    assert "From 2 runs." in whatif
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser_client.post(
            reverse("pooling:pool_new", args=[campaign.slug]),
            {
                "depth": "5",
                "seed": "0",
                "order": "shuffled",
                "runs": "per-team",
                "runs_per_team": "1",
            },
        )
    assert response.status_code == 302  # to the job
    pool = campaign.pools.get()
    assert list(pool.runs.values_list("tag", flat=True)) == ["alpha1"]
    pool_page = organiser_client.get(reverse("pooling:pool_detail", args=[campaign.slug, pool.pk]))
    assert "--runs-per-team 1" in pool_page.content.decode()


def test_participants_get_403_on_the_organisers_team_pages(participant_client, campaign, team):
    assert participant_client.get(teams_url(campaign)).status_code == 403
    response = participant_client.post(teams_url(campaign, "team_accept_late", team.pk))
    assert response.status_code == 403
