"""Load the demo campaign and demo users. Idempotent: a second load changes nothing."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.db import transaction

from demo import answer_content
from demo import content as demo_content
from judging import answer_services, machine_services
from judging import services as judging_services
from judging.core.nugget_files import NuggetText
from judging.core.overlap import OverlapSpec
from pooling import answer_services as answer_run_services
from pooling import pool_services, run_services
from pooling import services as pooling_services
from pooling.core.spec import PoolSpec, parse_strata
from pooling.models import Answer, Campaign, Pool
from workbench.roles import ORGANISER_GROUP

DEMO_SLUG = "demo"
DEMO_ANSWERS_SLUG = "demo-answers"
# Printed by `load_demo` and in the README: these accounts are for a local demo only.
DEMO_USERS = {
    "organiser": "demo-organiser",
    "assessor1": "demo-assessor1",
    "assessor2": "demo-assessor2",
}
DEMO_GUIDELINES = (
    "Judge whether the document helps answer the question. Highly relevant: it states "
    "clearly whether the treatment works. Relevant: it discusses the treatment for this "
    "condition but is vague. When a document is relevant, say what it claims about the "
    "treatment's effect and whether you find the document credible."
)


# Depth 10 judged in full, ranks 11-50 sampled: a small stratified pool.
DEMO_POOL_SPEC = PoolSpec(depth=10, strata=parse_strata("11-50:0.3"), seed=2019)
DEMO_PRIMARY = {"assessor1": ("1", "2", "3"), "assessor2": ("4", "5")}
DEMO_OVERLAP = OverlapSpec(k=2, fraction=0.2, seed=2019)


@dataclass(frozen=True)
class DemoSummary:
    campaign: Campaign
    users: dict[str, str]
    new_runs: int
    pool: Pool
    answers: Campaign


@transaction.atomic
def demo_load() -> DemoSummary:
    users = _demo_users()
    campaign = Campaign.objects.filter(slug=DEMO_SLUG).first()
    if campaign is None:
        campaign = pooling_services.campaign_create(
            name="Demo: consumer health questions",
            slug=DEMO_SLUG,
            description="Five health questions in the style of the TREC 2019 Decision track.",
            guidelines=DEMO_GUIDELINES,
            judgment_budget=1500,
            created_by=users["organiser"],
        )
    pooling_services.topics_import(
        campaign=campaign, data=demo_content.topics_jsonl(), name="demo-topics.jsonl"
    )
    pooling_services.documents_import(
        campaign=campaign,
        stream=io.BytesIO(demo_content.documents_jsonl()),
        name="demo-documents.jsonl",
    )
    have = set(campaign.runs.values_list("tag", flat=True))
    uploads = [
        run_services.RunUpload(f"{tag}.txt", data)
        for tag, data in demo_content.runs().items()
        if tag not in have
    ]
    if uploads:
        run_services.runs_import(campaign=campaign, uploads=uploads, uploaded_by=users["organiser"])
    pool = campaign.pools.order_by("pk").first() or _demo_pool(campaign, users)
    _demo_baseline(campaign, pool)
    answers = Campaign.objects.filter(slug=DEMO_ANSWERS_SLUG).first() or _demo_answers(users)
    return DemoSummary(campaign, dict(DEMO_USERS), len(uploads), pool, answers)


def _demo_baseline(campaign: Campaign, pool: Pool) -> None:
    """The built-in lexical machine assessor with its labels of the demo pool: no
    model, no network, a second or so. Its labels stay apart from the humans'."""
    baseline = machine_services.machine_baseline(campaign=campaign)
    machine_services.machine_judge_run(machine=baseline, pool=pool)


def _demo_pool(campaign: Campaign, users: dict[str, User]) -> Pool:
    """The demo's pool, its primary assessors and some overlap for agreement."""
    pool = pool_services.pool_build(
        campaign=campaign, spec=DEMO_POOL_SPEC, name="demo pool", created_by=users["organiser"]
    )
    for username, topic_ids in DEMO_PRIMARY.items():
        judging_services.assignments_create(
            pool=pool,
            topics=campaign.topics.filter(topic_id__in=topic_ids),
            assessors=[users[username]],
        )
    assessors = [users[username] for username in DEMO_PRIMARY]
    judging_services.overlap_assign(pool=pool, spec=DEMO_OVERLAP, assessors=assessors)
    return pool


def _demo_answers(users: dict[str, User]) -> Campaign:
    """The generated-answers campaign: topics, the cited segments, three runs of
    answers, nuggets, assignments, and some of it judged."""
    campaign = pooling_services.campaign_create(
        name="Demo: generated answers",
        slug=DEMO_ANSWERS_SLUG,
        description="Three RAG runs answer three of the health questions; assessors judge "
        "the answers by nuggets and their citations' support.",
        task_kind="answers",
        created_by=users["organiser"],
    )
    topics = [
        line
        for line in demo_content.topics_jsonl().decode().splitlines()
        if json.loads(line)["topic_id"] in answer_content.ANSWER_TOPICS
    ]
    pooling_services.topics_import(
        campaign=campaign, data="\n".join(topics).encode(), name="demo-topics.jsonl"
    )
    segments = [
        json.dumps({"docno": d.docno, "title": d.title, "text": d.text})
        for d in answer_content.cited_documents()
    ]
    pooling_services.documents_import(
        campaign=campaign, stream=io.BytesIO("\n".join(segments).encode()), name="segments.jsonl"
    )
    answer_run_services.answer_runs_import(
        campaign=campaign,
        data=answer_content.answers_jsonl(),
        name="demo-answers.jsonl",
        uploaded_by=users["organiser"],
    )
    for topic in campaign.topics.all():
        answer_services.nugget_list_save(
            topic=topic,
            nuggets=[NuggetText(t, i) for i, t in answer_content.NUGGETS[topic.topic_id]],
            created_by=users["organiser"],
        )
    work = {
        ("1", "assessor1", "nuggets"),
        ("2", "assessor1", "nuggets"),
        ("3", "assessor2", "nuggets"),
        ("1", "assessor2", "citations"),
    }
    assignments = {
        (topic_id, task): answer_services.answer_assignment_create(
            topic=campaign.topics.get(topic_id=topic_id),
            assessor=users[username],
            task=task,
            seed=2024,
        )
        for topic_id, username, task in sorted(work)
    }
    # Topics 1 and 2 judged by nuggets; topic 1's first two answers by citation support.
    for topic_id in ("1", "2"):
        nuggets = assignments[(topic_id, "nuggets")]
        size = len(answer_content.NUGGETS[topic_id])
        for answer in Answer.objects.filter(topic=nuggets.topic).select_related("run"):
            labels = [answer_content.nugget_label(answer.run.tag, n) for n in range(size)]
            answer_services.answer_judgment_record(assignment=nuggets, answer=answer, labels=labels)
    citations = assignments[("1", "citations")]
    for answer_id in citations.answer_ids()[:2]:
        answer = Answer.objects.get(pk=answer_id)
        labels = [
            ["full" if answer.run.tag != "demo-rag-poor" else "no"] * n
            for n in answer_services.citation_counts(answer)
        ]
        answer_services.answer_judgment_record(assignment=citations, answer=answer, labels=labels)
    return campaign


def _demo_users() -> dict[str, User]:
    organisers, _ = Group.objects.get_or_create(name=ORGANISER_GROUP)
    users = {}
    for username, password in DEMO_USERS.items():
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_active = True
        user.save()
        if username == "organiser":
            user.groups.add(organisers)
        users[username] = user
    return users
