"""make_* helpers for tests: small, explicit, no factories."""

from __future__ import annotations

import io
from collections.abc import Iterable

from django.contrib.auth.models import Group, User

from pooling import services
from pooling.models import Campaign, Run
from workbench.roles import ORGANISER_GROUP

PASSWORD = "a-test-password"


def make_user(username: str, *, organiser: bool = False) -> User:
    user = User.objects.create_user(username, password=PASSWORD)
    if organiser:
        user.groups.add(Group.objects.get_or_create(name=ORGANISER_GROUP)[0])
    return user


def make_campaign(
    slug: str = "trec-x", *, topics: Iterable[str] = ("301", "302", "303"), **fields
) -> Campaign:
    campaign = services.campaign_create(name=fields.pop("name", slug.upper()), slug=slug, **fields)
    lines = [f"{t}\tTopic {t} title\tWhat about {t}?" for t in topics]
    if lines:
        services.topics_import(
            campaign=campaign, data=("\n".join(lines) + "\n").encode(), name="topics.tsv"
        )
    return campaign


def run_text(tag: str, rows: dict[str, list[str]]) -> bytes:
    """A run file: for each topic, its docnos in rank order with falling scores."""
    lines = []
    for topic, docnos in rows.items():
        for rank, docno in enumerate(docnos, start=1):
            lines.append(f"{topic} Q0 {docno} {rank} {100 - rank}.5 {tag}")
    return ("\n".join(lines) + "\n").encode()


def make_run(campaign: Campaign, tag: str, rows: dict[str, list[str]]) -> Run:
    upload = services.RunUpload(f"{tag}.txt", run_text(tag, rows))
    return services.runs_import(campaign=campaign, uploads=[upload])[0]


def make_documents(campaign: Campaign, docnos: Iterable[str]) -> None:
    lines = [f"{d}\tTitle of {d}\tText of {d}." for d in docnos]
    services.documents_import(
        campaign=campaign, stream=io.BytesIO(("\n".join(lines) + "\n").encode()), name="docs.tsv"
    )


def make_pool(campaign: Campaign, entries: dict[str, list[str]], *, name: str = "pool"):
    """A pool whose queue for each topic is the given docnos, in that order.

    Built directly from entries (depth 1..n, all sampled), for tests that
    are about judging rather than pooling.
    """
    from pooling.models import Pool, PoolEntry

    pool = Pool.objects.create(campaign=campaign, name=name, spec={"depth": 100})
    topics = {t.topic_id: t for t in campaign.topics.all()}
    PoolEntry.objects.bulk_create(
        PoolEntry(
            pool=pool,
            topic=topics[topic_id],
            docno=docno,
            best_rank=rank,
            n_runs=1,
            stratum=1,
            inclusion_probability=1.0,
            sampled=True,
            order=rank,
        )
        for topic_id, docnos in entries.items()
        for rank, docno in enumerate(docnos, start=1)
    )
    return pool
