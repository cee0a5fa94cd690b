"""Load the demo campaign and demo users. Idempotent: a second load changes nothing."""

from __future__ import annotations

import io
from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.db import transaction

from demo import content as demo_content
from judging import services as judging_services
from judging.core.overlap import OverlapSpec
from pooling import services as pooling_services
from pooling.core.spec import PoolSpec, parse_strata
from pooling.models import Campaign, Pool
from workbench.roles import ORGANISER_GROUP

DEMO_SLUG = "demo"
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
        pooling_services.RunUpload(f"{tag}.txt", data)
        for tag, data in demo_content.runs().items()
        if tag not in have
    ]
    if uploads:
        pooling_services.runs_import(
            campaign=campaign, uploads=uploads, uploaded_by=users["organiser"]
        )
    pool = campaign.pools.order_by("pk").first() or _demo_pool(campaign, users)
    return DemoSummary(campaign, dict(DEMO_USERS), len(uploads), pool)


def _demo_pool(campaign: Campaign, users: dict[str, User]) -> Pool:
    """The demo's pool, its primary assessors and some overlap for agreement."""
    pool = pooling_services.pool_build(
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
