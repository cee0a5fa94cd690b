"""Data migrations of the judging app."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import connection

from judging import services
from judging.models import Judgment, JudgmentEvent
from tests.helpers import make_campaign, make_user

pytestmark = pytest.mark.django_db


def test_stored_times_that_are_not_finite_positive_numbers_become_zero():
    migration = importlib.import_module("judging.migrations.0003_judgment_seconds_finite")
    campaign = make_campaign(topics=("1",))
    topic, assessor = campaign.topics.get(), make_user("alice")
    for docno in ("nan", "inf", "neg", "ok"):
        services.judgment_record(
            assessor=assessor, topic=topic, docno=docno, relevance=0, aspects={}, seconds=3
        )
    bad_values = [("inf", float("inf")), ("neg", -2.0)]
    if connection.vendor != "sqlite":  # SQLite stores a NaN as NULL: it cannot hold one
        bad_values.append(("nan", float("nan")))
    for docno, bad in bad_values:
        Judgment.objects.filter(docno=docno).update(seconds=bad)
        JudgmentEvent.objects.filter(docno=docno).update(seconds=bad)
    migration.clean_seconds(apps, None)
    cleaned = {docno: 0.0 for docno, _ in bad_values}
    assert dict(Judgment.objects.values_list("docno", "seconds")) == {
        **dict.fromkeys(("nan", "inf", "neg", "ok"), 3.0),
        **cleaned,
    }
    events = dict(JudgmentEvent.objects.values_list("docno", "seconds"))
    assert events == {**dict.fromkeys(("nan", "inf", "neg", "ok"), 3.0), **cleaned}
