"""Teams submit runs: checked as the organiser's, before the deadline, up to a limit,
in an order of precedence that a pool can take its runs by."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from judging import services as judging_services
from participation import services as team_services
from pooling import pool_services, run_services, selectors
from pooling.core.spec import PoolSpec
from pooling.errors import SubmissionRefused, TeamError
from pooling.models import Run
from tests.helpers import (
    make_campaign,
    make_pool,
    make_run,
    make_team,
    make_team_run,
    make_user,
    run_text,
)
from workbench.core.problems import InputError

pytestmark = pytest.mark.django_db

ROWS = {"301": ["d1", "d2"], "302": ["d3"]}


@pytest.fixture
def campaign():
    return make_campaign()


@pytest.fixture
def team(campaign, participant):
    return make_team(campaign, "Alpha", [participant])


def submit(team, tag: str, data: bytes | None = None) -> Run:
    upload = run_services.RunUpload(f"{tag}.txt", data if data is not None else run_text(tag, ROWS))
    return team_services.team_run_submit(team=team, upload=upload)


def set_limits(campaign, *, deadline=None, max_runs=None, pooled=None) -> None:
    team_services.campaign_submissions_update(
        campaign=campaign,
        submission_deadline=deadline,
        max_runs_per_team=max_runs,
        pooled_runs_per_team=pooled,
    )


# --------------------------------------------------------------------------
# Upload


def test_a_team_run_is_stored_as_the_teams_last_in_precedence(team, participant):
    first = submit(team, "alpha1")
    second = team_services.team_run_submit(
        team=team,
        upload=run_services.RunUpload("alpha2.txt", run_text("alpha2", ROWS)),
        uploaded_by=participant,
    )
    assert (first.team, first.precedence, first.late) == (team, 1, False)
    assert (second.precedence, second.uploaded_by) == (2, participant)
    assert (second.line_count, second.topic_count, second.depth) == (3, 2, 2)


def test_a_team_run_is_checked_as_an_organisers_upload_and_nothing_is_stored(campaign, team):
    make_run(campaign, "taken", ROWS)
    bad = b"301 Q0 d1 1 high alpha1\n999 Q0 d2 2 1.0 alpha1\n"
    with pytest.raises(InputError) as error:
        submit(team, "alpha1", bad)
    assert str(error.value).splitlines() == [
        "alpha1.txt:1: score 'high' is not a number",
        "alpha1.txt:2: topic '999' is not a topic of this campaign",
    ]
    with pytest.raises(InputError, match=r"alpha1\.txt:1: run tag 'taken' is already used"):
        submit(team, "alpha1", run_text("taken", ROWS))
    assert list(campaign.runs.values_list("tag", flat=True)) == ["taken"]


def test_the_same_problems_as_an_organiser_upload(campaign, team):
    data = b"301 Q0 d1 1 1.0 x\n301 Q0 d1 2 0.5 x\n301 Q0 d2\n"
    with pytest.raises(InputError) as organiser_error:
        run_services.runs_import(campaign=campaign, uploads=[run_services.RunUpload("x.txt", data)])
    with pytest.raises(InputError) as team_error:
        submit(team, "x", data)
    assert team_error.value.problems == organiser_error.value.problems
    assert not campaign.runs.exists()


def test_a_task_campaign_takes_no_team():
    from tests.helpers import make_task_campaign

    with pytest.raises(TeamError, match="task campaign"):
        make_team(make_task_campaign(), "Alpha")


# --------------------------------------------------------------------------
# Deadline and late runs


def test_after_the_deadline_a_run_is_refused_and_nothing_stored(campaign, team):
    set_limits(campaign, deadline=timezone.now() - timedelta(minutes=1))
    with pytest.raises(SubmissionRefused, match=r"deadline .* has passed: alpha1\.txt is not"):
        submit(team, "alpha1")
    assert not Run.objects.exists()


def test_before_the_deadline_a_run_is_on_time(campaign, team):
    set_limits(campaign, deadline=timezone.now() + timedelta(hours=1))
    assert not submit(team, "alpha1").late


def test_a_late_run_the_organiser_accepted_is_stored_marked_late_once(campaign, team):
    submit(team, "alpha1")
    set_limits(campaign, deadline=timezone.now() - timedelta(minutes=1))
    team = team_services.team_late_runs_accept(team=team)
    late = submit(team, "alpha2")
    assert (late.late, late.precedence) == (True, 2)
    team.refresh_from_db()
    assert team.late_runs_accepted == 0
    with pytest.raises(SubmissionRefused, match="deadline"):
        submit(team, "alpha3")


def test_a_rejected_late_file_spends_no_acceptance(campaign, team):
    set_limits(campaign, deadline=timezone.now() - timedelta(minutes=1))
    team_services.team_late_runs_accept(team=team)
    with pytest.raises(InputError):
        submit(team, "alpha1", b"301 Q0 d1 1\n")
    team.refresh_from_db()
    assert team.late_runs_accepted == 1


def test_a_late_run_can_be_added_to_a_depth_pool(campaign, team):
    submit(team, "alpha1")
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    set_limits(campaign, deadline=timezone.now() - timedelta(minutes=1))
    team_services.team_late_runs_accept(team=team)
    late = submit(team, "late1", run_text("late1", {"301": ["d7"]}))
    [row] = selectors_late(campaign)
    assert (row.run, row.pools) == (late, [pool])
    pool_services.pool_add_runs(pool=pool, runs=[late])
    assert selectors_late(campaign)[0].pools == []


def selectors_late(campaign):
    from participation.selectors import late_runs

    return late_runs(campaign)


# --------------------------------------------------------------------------
# Most runs per team


def test_a_team_sends_at_most_the_campaigns_limit(campaign, team, participant):
    set_limits(campaign, max_runs=2)
    submit(team, "alpha1")
    submit(team, "alpha2")
    with pytest.raises(SubmissionRefused, match="already has 2 run"):
        submit(team, "alpha3")
    other = make_team(campaign, "Beta", [make_user("bea")])
    assert submit(other, "beta1").precedence == 1  # the limit is per team
    assert campaign.runs.count() == 3


def test_the_limit_counts_late_runs_too(campaign, team):
    set_limits(campaign, max_runs=1)
    submit(team, "alpha1")
    set_limits(campaign, max_runs=1, deadline=timezone.now() - timedelta(minutes=1))
    team_services.team_late_runs_accept(team=team)
    with pytest.raises(SubmissionRefused, match="the most"):
        submit(team, "alpha2")


def test_limits_below_one_are_refused(campaign):
    with pytest.raises(TeamError, match="most runs per team must be 1 or more"):
        set_limits(campaign, max_runs=0)


# --------------------------------------------------------------------------
# Precedence


def test_a_team_orders_its_runs(team):
    for tag in ("alpha1", "alpha2", "alpha3"):
        submit(team, tag)
    team_services.team_run_precedence_set(team=team, order=["alpha3", "alpha1", "alpha2"])
    assert list(team.runs.order_by("precedence").values_list("tag", "precedence")) == [
        ("alpha3", 1),
        ("alpha1", 2),
        ("alpha2", 3),
    ]


@pytest.mark.parametrize(
    ("order", "message"),
    [
        (["alpha1"], "left out: alpha2"),
        (["alpha1", "alpha1", "alpha2"], "named twice: alpha1"),
        (["alpha1", "alpha2", "beta1"], "not runs of team Alpha: beta1"),
    ],
)
def test_a_precedence_names_every_run_of_the_team_once(campaign, team, order, message):
    submit(team, "alpha1")
    submit(team, "alpha2")
    make_run(campaign, "beta1", ROWS)
    with pytest.raises(TeamError, match=message):
        team_services.team_run_precedence_set(team=team, order=order)
    assert list(team.runs.order_by("tag").values_list("precedence", flat=True)) == [1, 2]


def test_the_precedence_is_fixed_after_the_deadline(campaign, team):
    submit(team, "alpha1")
    submit(team, "alpha2")
    set_limits(campaign, deadline=timezone.now() - timedelta(minutes=1))
    with pytest.raises(TeamError, match="no longer changes"):
        team_services.team_run_precedence_set(team=team, order=["alpha2", "alpha1"])


def test_a_replaced_team_run_stays_the_teams(team):
    run = submit(team, "alpha1")
    submit(team, "alpha2")
    new = run_services.run_replace(
        run=run, upload=run_services.RunUpload("fixed.txt", run_text("alpha1b", ROWS))
    )
    assert (new.team, new.precedence, new.late) == (team, 1, False)


# --------------------------------------------------------------------------
# Pooling by precedence


@pytest.fixture
def teams_with_runs(campaign, team):
    """Alpha: a1 (2nd), a2 (1st), a3 (3rd), a-late (late); Beta: b1; the organiser: base."""
    submit(team, "a1", run_text("a1", {"301": ["a1-doc"]}))
    submit(team, "a2", run_text("a2", {"301": ["a2-doc"]}))
    submit(team, "a3", run_text("a3", {"301": ["a3-doc"]}))
    team_services.team_run_precedence_set(team=team, order=["a2", "a1", "a3"])
    beta = make_team(campaign, "Beta", [make_user("bea")])
    submit(beta, "b1", run_text("b1", {"301": ["b1-doc"]}))
    make_run(campaign, "base", {"301": ["base-doc"]})
    set_limits(campaign, deadline=timezone.now() - timedelta(minutes=1))
    team_services.team_late_runs_accept(team=team)
    submit(team, "a-late", run_text("a-late", {"301": ["late-doc"]}))
    return campaign


def tags(runs) -> list[str]:
    return sorted(run.tag for run in runs)


def test_pool_runs_are_the_first_n_of_every_team_and_the_organisers(teams_with_runs):
    campaign = teams_with_runs
    assert tags(selectors.pool_runs(campaign)) == ["a-late", "a1", "a2", "a3", "b1", "base"]
    assert tags(selectors.pool_runs(campaign, runs_per_team=1)) == ["a2", "b1", "base"]
    assert tags(selectors.pool_runs(campaign, runs_per_team=2)) == ["a1", "a2", "b1", "base"]
    assert tags(selectors.pool_runs(campaign, runs_per_team=9)) == ["a1", "a2", "a3", "b1", "base"]


def test_a_pool_built_from_the_first_run_of_every_team(teams_with_runs):
    pool = pool_services.pool_build(
        campaign=teams_with_runs, spec=PoolSpec(depth=5), runs_per_team=1
    )
    assert tags(pool.runs.all()) == ["a2", "b1", "base"]
    assert sorted(pool.entries.values_list("docno", flat=True)) == ["a2-doc", "b1-doc", "base-doc"]
    assert pool.runs_per_team == 1
    assert pool.name == "1-5:1.0, first 1 run(s) per team"


def test_build_pool_command_takes_runs_per_team(teams_with_runs, capsys):
    call_command("build_pool", "--campaign", "trec-x", "--depth", "5", "--runs-per-team", "2")
    assert "from 4 runs" in capsys.readouterr().out
    pool = teams_with_runs.pools.get()
    assert tags(pool.runs.all()) == ["a1", "a2", "b1", "base"]
    with pytest.raises(CommandError, match="1 or more"):
        call_command("build_pool", "--campaign", "trec-x", "--depth", "5", "--runs-per-team", "0")


# --------------------------------------------------------------------------
# Members: participants are neither organisers nor assessors


def test_members_are_neither_organisers_nor_assessors(campaign, organiser, assessor):
    pool = make_pool(campaign, {"301": ["d1"]})
    judging_services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )
    with pytest.raises(TeamError, match=r"olivia is an organiser.*alice is an assessor"):
        make_team(campaign, "Alpha", [organiser, assessor])
    assert not campaign.teams.exists()


def test_one_team_per_campaign_per_member(campaign, team, participant):
    with pytest.raises(TeamError, match="pat is already in team Alpha"):
        make_team(campaign, "Beta", [participant])
    other = make_campaign("trec-y")
    assert make_team(other, "Alpha", [participant]).members.get() == participant
    with pytest.raises(TeamError, match="already has a team named 'Alpha'"):
        make_team(campaign, "Alpha")


def test_participants_are_never_assigned_to_judge(campaign, team, participant):
    pool = make_pool(campaign, {"301": ["d1"]})
    with pytest.raises(judging_services.AssignmentError, match="pat: a participant"):
        judging_services.assignments_create(
            pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[participant]
        )


def test_make_team_run_helper_submits_as_the_team(team):
    assert make_team_run(team, "alpha1", ROWS).team == team


def test_create_team_command(campaign, participant, capsys):
    call_command("create_team", "--campaign", "trec-x", "--name", "Alpha", "--member", "pat")
    assert "team Alpha registered in trec-x: pat; 0 late run(s)" in capsys.readouterr().out
    make_user("quinn")
    call_command(
        "create_team",
        "--campaign",
        "trec-x",
        "--name",
        "Alpha",
        "--member",
        "quinn",
        "--accept-late",
        "2",
    )
    assert "team Alpha updated in trec-x: quinn; 2 late run(s)" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no account named nobody"):
        call_command("create_team", "--campaign", "trec-x", "--name", "B", "--member", "nobody")
    make_user("olivia", organiser=True)
    with pytest.raises(CommandError, match="olivia is an organiser"):
        call_command("create_team", "--campaign", "trec-x", "--name", "B", "--member", "olivia")
