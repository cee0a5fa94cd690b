"""A judged demo pool, shared by the export and score tests."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from judging import services as judging
from judging.models import Assignment
from pooling.models import Pool
from workbench import demo_content


def labels_for(docno: str, topic_id: str, assessor: str) -> tuple[int, dict[str, int]]:
    """What the demo generator meant, with assessor2 disagreeing now and then."""
    doc = DOCS[docno]
    relevance = doc.relevance if doc.topic_id == topic_id else 0
    if assessor == "assessor2" and int(docno[-2:]) % 5 == 0:
        relevance = 0 if relevance else 1
    if relevance == 0:
        return 0, {}
    return relevance, {"effectiveness": int(docno[-1]) % 4, "credibility": int(docno[-1]) % 2}


DOCS = {d.docno: d for d in demo_content.documents()}


@pytest.fixture
def pool(db) -> Pool:
    """The demo pool, every queue judged (assessor2 disagreeing now and then)."""
    call_command("load_demo", stdout=io.StringIO())
    pool = Pool.objects.get()
    for assignment in Assignment.objects.select_related("assessor", "topic"):
        for entry in assignment.queue():
            relevance, aspects = labels_for(
                entry.docno, assignment.topic.topic_id, assignment.assessor.username
            )
            judging.judgment_submit(
                assignment=assignment, docno=entry.docno, relevance=relevance, aspects=aspects
            )
    return pool
