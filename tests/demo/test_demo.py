"""The demo campaign: complete, deterministic, idempotent."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.test import RequestFactory

from demo import content as demo_content
from demo.services import DEMO_USERS
from judging.models import Assignment, MachineJudgment, OverlapItem
from pooling.models import Campaign, Document, PoolEntry, Run, Topic
from workbench.roles import is_organiser

pytestmark = pytest.mark.django_db


def snapshot() -> dict[str, object]:
    return {
        "topics": list(Topic.objects.values_list("topic_id", "title", "description", "extra")),
        "documents": list(Document.objects.values_list("docno", "title", "text")),
        "runs": list(Run.objects.values_list("tag", "sha256", "line_count", "depth")),
        "campaigns": Campaign.objects.count(),
        "pool_entries": list(
            PoolEntry.objects.order_by("pk").values_list("docno", "stratum", "sampled", "order")
        ),
        "assignments": list(
            Assignment.objects.values_list("topic__topic_id", "assessor__username", "kind")
        ),
        "overlap_items": OverlapItem.objects.count(),
    }


def test_load_demo_builds_the_campaign_and_prints_logins():
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    campaign = Campaign.objects.get(slug="demo")
    assert campaign.topics.count() == 5
    assert 300 <= campaign.documents.count() <= 400
    runs = list(campaign.runs.all())
    assert len(runs) == 8
    assert {r.depth for r in runs} == {100}
    assert {r.topic_count for r in runs} == {5}
    # The login lockout counts failures per request: authenticate as the login page does.
    login = RequestFactory().post("/accounts/login/")
    for username, password in DEMO_USERS.items():
        assert f"{username:<10} password: {password}" in out.getvalue()
        assert authenticate(login, username=username, password=password) is not None
    organiser = authenticate(login, username="organiser", password=DEMO_USERS["organiser"])
    assessor = authenticate(login, username="assessor1", password=DEMO_USERS["assessor1"])
    assert is_organiser(organiser)
    assert not is_organiser(assessor)
    labels = MachineJudgment.objects.filter(topic__campaign=campaign).count()
    assert labels > 0
    assert f"Machine assessor 'baseline' (lexical, offline): {labels:,} labels" in out.getvalue()


def test_load_demo_twice_changes_nothing():
    call_command("load_demo", stdout=io.StringIO())
    first = snapshot()
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert snapshot() == first
    assert "(0 new)" in out.getvalue()


def test_demo_content_is_deterministic():
    assert demo_content.documents_jsonl() == demo_content.documents_jsonl()
    assert demo_content.runs() == demo_content.runs()


def test_demo_runs_retrieve_mostly_on_topic_documents_first():
    docs = {d.docno: d for d in demo_content.documents()}
    run = demo_content.runs()["demo-run1"].decode().splitlines()
    top10 = [line.split() for line in run if line.split()[3] in {str(r) for r in range(1, 11)}]
    on_topic = sum(docs[docno].topic_id == topic for topic, _, docno, *_ in top10)
    assert on_topic / len(top10) > 0.8


def test_demo_has_a_pool_ready_to_judge_with_overlap():
    call_command("load_demo", stdout=io.StringIO())
    campaign = Campaign.objects.get(slug="demo")
    pool = campaign.pools.get()
    assert pool.spec["strata"] == ["11-50:0.3"]
    assert pool.entries.filter(sampled=False).exists()
    primaries = sorted(
        Assignment.objects.filter(kind="primary").values_list(
            "topic__topic_id", "assessor__username"
        )
    )
    assert primaries == [
        ("1", "assessor1"),
        ("2", "assessor1"),
        ("3", "assessor1"),
        ("4", "assessor2"),
        ("5", "assessor2"),
    ]
    overlap = Assignment.objects.filter(kind="overlap")
    assert {a.assessor.username for a in overlap} == {"assessor1", "assessor2"}
    # Every overlap item is one the topic's primary assessor also judges.
    for assignment in overlap:
        assert all(entry.sampled for entry in assignment.queue())
    assert OverlapItem.objects.count() > 0


def test_the_demo_has_a_generated_answers_campaign_with_scores():
    from judging.models import AnswerAssignment, AnswerJudgment, NuggetList
    from pooling.models import AnswerRun
    from scoring.answer_selectors import nugget_scores

    call_command("load_demo", stdout=io.StringIO())
    call_command("load_demo", stdout=io.StringIO())  # a second load changes nothing
    campaign = Campaign.objects.get(slug="demo-answers")
    assert campaign.is_answers
    assert campaign.topics.count() == 3
    assert AnswerRun.objects.filter(campaign=campaign).count() == 3
    assert NuggetList.objects.filter(topic__campaign=campaign).count() == 3
    assert AnswerAssignment.objects.filter(topic__campaign=campaign).count() == 4
    assert AnswerJudgment.objects.filter(task="nuggets").count() == 6
    assert AnswerJudgment.objects.filter(task="citations").count() == 2
    runs = {run.run: run.scores["all"] for run in nugget_scores(campaign).result.runs}
    assert runs["demo-rag-good"] > runs["demo-rag-mid"] > runs["demo-rag-poor"]


def test_the_demo_has_the_lexical_baseline_with_its_labels_and_no_judgment_of_it():
    from judging.models import Judgment, MachineAssessor, MachineJudgment
    from tests.judging.machine_helpers import ensure_lexical

    ensure_lexical()
    call_command("load_demo", stdout=io.StringIO())
    baseline = MachineAssessor.objects.get(campaign__slug="demo")
    assert baseline.name == "baseline"
    assert baseline.is_baseline
    pool = Campaign.objects.get(slug="demo").pools.get()
    labelled = MachineJudgment.objects.filter(machine=baseline).count()
    assert labelled == pool.entries.filter(retired=False).count()
    assert not Judgment.objects.filter(assessor=baseline.account).exists()
    call_command("load_demo", stdout=io.StringIO())
    assert MachineJudgment.objects.filter(machine=baseline).count() == labelled
