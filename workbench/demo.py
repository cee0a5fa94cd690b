"""Load the demo campaign and demo users. Idempotent: a second load changes nothing."""

from __future__ import annotations

import io
from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.db import transaction

from pooling import services as pooling_services
from pooling.models import Campaign
from workbench import demo_content
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


@dataclass(frozen=True)
class DemoSummary:
    campaign: Campaign
    users: dict[str, str]
    new_runs: int


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
    return DemoSummary(campaign, dict(DEMO_USERS), len(uploads))


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
