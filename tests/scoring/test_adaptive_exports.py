"""The export of a live adaptive pool: it says so, and active carries its inclusion probabilities."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from judging.models import Assignment
from scoring import export_selectors
from tests.helpers import make_user
from tests.judging.test_adaptive import _fresh_state, adaptive_pool, judge_all  # noqa: F401

pytestmark = pytest.mark.django_db


def judged_pool(strategy: str):
    from judging import adaptive, services

    pool = adaptive_pool(strategy, budget=6)
    ann = make_user("ann")
    for assignment in services.assignments_create(
        pool=pool, topics=list(pool.campaign.topics.all()), assessors=[ann]
    ):
        judge_all(assignment)
    return pool, adaptive


def bundle(pool) -> dict[str, str]:
    data = export_selectors.qrels_bundle(pool=pool, formats=["qrels", "stratified"])
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def inclusion_rows(text: str) -> dict[tuple[str, str], float]:
    rows = [line.split("\t") for line in text.splitlines()[1:]]
    return {(topic, docno): float(p) for topic, docno, _, p in rows}


def test_an_active_pool_exports_the_inclusion_probabilities_of_its_draws():
    pool, adaptive = judged_pool("active")
    files = bundle(pool)
    manifest = json.loads(files["manifest.json"])
    assert manifest["adaptive"]["strategy"] == "active"
    assert "sample_eval" in manifest["adaptive"]["inclusion_probabilities"]
    inclusion = inclusion_rows(files["inclusion.tsv"])
    assert len(inclusion) == pool.entries.count()
    topic = pool.campaign.topics.get(topic_id="1")
    expected = adaptive.topic_state(pool, topic.pk, "1").inclusion()
    assert {d: p for (t, d), p in inclusion.items() if t == "1"} == pytest.approx(expected)
    # Every drawn document was drawn with some chance; the probabilities are not all 1.
    for entry in pool.entries.filter(sampled=True).select_related("topic"):
        assert 0 < inclusion[entry.topic.topic_id, entry.docno] <= 1
    assert len(set(inclusion.values())) > 2


def test_a_deterministic_adaptive_pool_says_it_has_no_inclusion_probabilities():
    pool, _ = judged_pool("mtf")
    files = bundle(pool)
    assert json.loads(files["manifest.json"])["adaptive"]["inclusion_probabilities"].startswith(
        "none"
    )
    drawn = {(e.topic.topic_id, e.docno) for e in pool.entries.filter(sampled=True)}
    inclusion = inclusion_rows(files["inclusion.tsv"])
    assert {key for key, p in inclusion.items() if p == 1.0} == drawn
    assert set(inclusion.values()) == {0.0, 1.0}
    assert Assignment.objects.count() == 2


def test_the_reusability_report_says_why_an_adaptive_pool_has_none(organiser_client):
    from django.urls import reverse

    pool, _ = judged_pool("bandit")
    page = organiser_client.get(reverse("scoring:pool_reusability", args=[pool.pk]))
    assert page.status_code == 400
    assert "is adaptive (bandit)" in page.context["error"]
    assert "simulate_pooling" in page.context["error"]
