"""Shared set-up of the machine assessors' tests."""

from __future__ import annotations

from judging import machine_services
from tests.helpers import make_campaign, make_documents, make_pool


def make_machine_pool(slug: str = "mach", docs: int = 3):
    campaign = make_campaign(slug, topics=("301", "302"))
    docnos = {t: [f"{t}-d{i}" for i in range(docs)] for t in ("301", "302")}
    make_documents(campaign, [d for ds in docnos.values() for d in ds])
    return campaign, make_pool(campaign, docnos)


def make_chat_machine(campaign, url: str, name: str = "llm", **settings):
    return machine_services.machine_create(
        campaign=campaign, name=name, base_url=url, model="test-model", **settings
    )


def fast(machine, **overrides):
    """The machine's endpoint with short timeouts and backoff, for tests."""
    options = {"timeout": 1.0, "connect_timeout": 0.5, "backoff": 0.01, "retries": 2}
    return machine_services.endpoint_of(machine, **{**options, **overrides})
