"""A small pool judged by one assessor on half its documents and by machines on all
of them, where every qrels variant is known by heart."""

from __future__ import annotations

from django.contrib.auth.models import User

from judging import machine_services
from judging import services as judging
from judging.core.judgment_files import ImportedJudgment
from judging.models import MachineAssessor
from tests.helpers import make_campaign, make_documents, make_pool, make_run, make_user

TOPICS = ("301", "302")
DOCS = {t: [f"{t}-d{i}" for i in range(3)] for t in TOPICS}
HUMAN = {("301", "301-d0"): 2, ("301", "301-d1"): 0, ("302", "302-d0"): 1}
MACHINE = {
    ("301", "301-d0"): 0,
    ("301", "301-d1"): 1,
    ("301", "301-d2"): 2,
    ("302", "302-d0"): 1,
    ("302", "302-d1"): 0,
    ("302", "302-d2"): 1,
}
# A human label where one exists, else the machine's.
HUMAN_THEN_MACHINE = MACHINE | HUMAN


def qrels_lines(labels: dict[tuple[str, str], int]) -> str:
    return "".join(f"{t} 0 {d} {r}\n" for (t, d), r in sorted(labels.items()))


def store_machine_labels(campaign, name: str, labels: dict[tuple[str, str], int]):
    """A machine of the campaign with these relevance labels (imported, no endpoint)."""
    machine = MachineAssessor.objects.filter(campaign=campaign, name=name).first()
    if machine is None:
        machine = machine_services.machine_create(
            campaign=campaign, name=name, base_url="http://127.0.0.1:9/v1", model=f"{name}-model"
        )
    topics = {t.topic_id: t.pk for t in campaign.topics.all()}
    machine_services.machine_judgments_store(
        machine=machine,
        labels={(topics[t], d): {"relevance": r} for (t, d), r in labels.items()},
    )
    return machine


def make_variant_pool(slug: str = "variants", *, machine: bool = True):
    """The pool, its human labels (HUMAN), two runs, and machine `llm` (MACHINE)."""
    campaign = make_campaign(slug, topics=TOPICS)
    make_documents(campaign, [d for docs in DOCS.values() for d in docs])
    pool = make_pool(campaign, DOCS)
    if not User.objects.filter(username="alice").exists():
        make_user("alice")
    judging.judgments_import(
        campaign=campaign,
        rows=[ImportedJudgment("alice", t, d, r) for (t, d), r in HUMAN.items()],
    )
    # run-a ranks d0 first, run-b d2 first: they swap places between the label sources.
    make_run(campaign, "run-a", {t: DOCS[t] for t in TOPICS})
    make_run(campaign, "run-b", {t: DOCS[t][::-1] for t in TOPICS})
    if machine:
        store_machine_labels(campaign, "llm", MACHINE)
    return pool
