"""The demo campaign: complete, deterministic, idempotent."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from pooling.models import Campaign, Document, Run, Topic
from workbench import demo_content
from workbench.demo import DEMO_USERS
from workbench.roles import is_organiser

pytestmark = pytest.mark.django_db


def snapshot() -> dict[str, object]:
    return {
        "topics": list(Topic.objects.values_list("topic_id", "title", "description", "extra")),
        "documents": list(Document.objects.values_list("docno", "title", "text")),
        "runs": list(Run.objects.values_list("tag", "sha256", "line_count", "depth")),
        "campaigns": Campaign.objects.count(),
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
    for username, password in DEMO_USERS.items():
        assert f"{username:<10} password: {password}" in out.getvalue()
        assert authenticate(username=username, password=password) is not None
    assert is_organiser(authenticate(username="organiser", password=DEMO_USERS["organiser"]))
    assert not is_organiser(authenticate(username="assessor1", password=DEMO_USERS["assessor1"]))


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
