"""The assign command."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from judging.models import Assignment
from tests.helpers import make_campaign, make_pool

pytestmark = pytest.mark.django_db


@pytest.fixture
def pool():
    campaign = make_campaign(topics=("1", "2", "3"))
    return make_pool(campaign, {"1": ["a"], "2": ["b"], "3": ["c"]})


def call(*args: str) -> str:
    out = io.StringIO()
    call_command("assign", *args, stdout=out)
    return out.getvalue()


def test_assign_one_topic(pool, assessor):
    assert call("--pool", str(pool.pk), "--topic", "2", "--assessor", "alice") == "topic 2: alice\n"
    assert list(Assignment.objects.values_list("topic__topic_id", "assessor__username")) == [
        ("2", "alice")
    ]


def test_assign_all_topics_dealt_between_assessors(pool, assessor, assessor2):
    out = call("--pool", str(pool.pk), "--topic", "all", "--assessor", "bob", "--assessor", "alice")
    assert out.splitlines() == ["topic 1: bob", "topic 2: alice", "topic 3: bob"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pool", "999", "--topic", "1", "--assessor", "alice"], "no pool with id 999"),
        (["--topic", "9", "--assessor", "alice"], "not topics of campaign trec-x: 9"),
        (["--topic", "1", "--assessor", "nobody"], "no active user named nobody"),
        (["--assessor", "alice"], "give at least one --topic (or --topic all)"),
    ],
)
def test_assign_errors(pool, assessor, args, message):
    if "--pool" not in args:
        args = ["--pool", str(pool.pk), *args]
    with pytest.raises(CommandError) as caught:
        call(*args)
    assert str(caught.value) == message
    assert not Assignment.objects.exists()
