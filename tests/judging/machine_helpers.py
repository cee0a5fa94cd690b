"""Shared set-up of the machine assessors' tests."""

from __future__ import annotations

import sys
import types

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


def ensure_lexical() -> None:
    """The lexical core is written on another branch; until it is merged, a tiny
    stand-in with its interface (tests only)."""
    try:
        import judging.core.lexical  # noqa: F401
    except ImportError:
        module = types.ModuleType("judging.core.lexical")

        def bm25_scores(query, documents):
            words = set(query.lower().split())
            return {d: float(len(words & set(t.lower().split()))) for d, t in documents.items()}

        def default_thresholds(scores, levels):
            top = max(scores, default=0.0)
            return [top * (k + 1) / len(levels) for k in range(len(levels) - 1)]

        def fit_thresholds(scores, grades, levels):
            return default_thresholds(scores, levels)

        def grades_from_scores(scores, levels, thresholds):
            return {d: levels[sum(s > t for t in thresholds)] for d, s in scores.items()}

        for function in (bm25_scores, default_thresholds, fit_thresholds, grades_from_scores):
            setattr(module, function.__name__, function)
        sys.modules["judging.core.lexical"] = module
