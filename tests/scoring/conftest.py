"""A judged demo pool, shared by the export and score tests."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from demo import content as demo_content
from judging import services as judging
from judging.core.judgment_files import ImportedJudgment
from judging.models import Assignment, Judgment
from pooling.models import Pool


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


def judged_demo_pool() -> Pool:
    """The demo pool, every queue judged (assessor2 disagreeing now and then).

    The judgments are stored in one bulk import, as they would be from a file:
    the tests here are about what a judged pool exports and scores, not about
    judging one document at a time (tests/judging covers that).
    """
    call_command("load_demo", stdout=io.StringIO())
    pool = Pool.objects.get()
    rows = [
        ImportedJudgment(
            assignment.assessor.username,
            assignment.topic.topic_id,
            entry.docno,
            *labels_for(entry.docno, assignment.topic.topic_id, assignment.assessor.username),
        )
        for assignment in Assignment.objects.select_related("assessor", "topic")
        for entry in assignment.queue()
    ]
    judging.judgments_import(campaign=pool.campaign, rows=rows)
    return pool


def change_a_label(pool: Pool) -> None:
    """Turn one judgment of the pool the other way: the labels are in a new state."""
    assignment = Assignment.objects.filter(pool=pool).first()
    judgment = Judgment.objects.filter(assessor=assignment.assessor, topic=assignment.topic)[0]
    judging.judgment_record(
        assessor=assignment.assessor,
        topic=assignment.topic,
        docno=judgment.docno,
        relevance=1 - min(judgment.relevance, 1),
        aspects={"effectiveness": 1, "credibility": 1},
    )


@pytest.fixture
def pool(db) -> Pool:
    return judged_demo_pool()


@pytest.fixture
def graded_pool(db) -> Pool:
    """A TREC DL-like pool: relevance 0-3, no aspects, no accepted answers; judged by NIST."""
    from tests.helpers import make_campaign, make_pool
    from workbench.core.label_schema import SCHEMA_PRESETS

    campaign = make_campaign(
        "dl", topics=("1", "2"), label_schema=SCHEMA_PRESETS["graded-0-3"].schema()
    )
    pool = make_pool(campaign, {"1": ["d1", "d2", "d3"], "2": ["d1", "d4"]})
    labels = {("1", "d1"): 3, ("1", "d2"): 0, ("1", "d3"): 1, ("2", "d1"): 2, ("2", "d4"): 0}
    rows = [ImportedJudgment("nist", t, d, rel) for (t, d), rel in labels.items()]
    judging.judgments_import(campaign=campaign, rows=rows, create_assessors=True)
    return pool


def judged_pool_of_runs(*tags: str, docnos: tuple[str, ...] = ("d1", "d2", "e1", "e2")) -> Pool:
    """A small binary campaign with a run of each tag (taking turns at ranking the
    documents the other way round), its pool of the four documents (two for topic 1,
    two for topic 2), judged by NIST: for tests about what a run tag or a docno does
    to the pages and downloads."""
    from tests.helpers import make_campaign, make_pool, make_run
    from workbench.core.label_schema import SCHEMA_PRESETS

    campaign = make_campaign(
        "tags", topics=("1", "2"), label_schema=SCHEMA_PRESETS["binary"].schema()
    )
    entries = {"1": list(docnos[:2]), "2": list(docnos[2:])}
    for i, tag in enumerate(tags):
        make_run(campaign, tag, {t: d[:: 1 if i % 2 == 0 else -1] for t, d in entries.items()})
    pool = make_pool(campaign, entries)
    labels = {("1", docnos[0]): 1, ("1", docnos[1]): 0, ("2", docnos[2]): 0, ("2", docnos[3]): 1}
    rows = [ImportedJudgment("nist", t, d, rel) for (t, d), rel in labels.items()]
    judging.judgments_import(campaign=campaign, rows=rows, create_assessors=True)
    return pool
