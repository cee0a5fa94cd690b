"""Ranking stability as judging proceeds: the pure core against brute force, and the
dashboard's panel on a judged pool."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pandas as pd
import pytest
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

from judging import services
from pooling import pool_services
from pooling.core.spec import PoolSpec, Stratum
from scoring import stability_selectors
from scoring.core import stability
from tests.helpers import make_campaign, make_documents, make_pool, make_run


def brute_tau_b(x: list[float], y: list[float]) -> float:
    """Kendall's tau-b from its definition: (concordant - discordant) / sqrt((n0-n1)(n0-n2))."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif dx == dy:
            concordant += 1
        else:
            discordant += 1
    n0 = concordant + discordant
    return (concordant - discordant) / math.sqrt((n0 + ties_x) * (n0 + ties_y))


scores = st.dictionaries(
    st.sampled_from([f"run{i}" for i in range(8)]), st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0])
)


@given(a=scores, b=scores)
@settings(max_examples=200, deadline=None)
def test_kendall_tau_is_tau_b_with_missing_runs_scored_zero(a, b):
    runs = sorted(set(a) | set(b))
    x = [a.get(r, 0.0) for r in runs]
    y = [b.get(r, 0.0) for r in runs]
    tau = stability.kendall_tau(a, b)
    if len(runs) < 2 or len(set(x)) == 1 or len(set(y)) == 1:
        assert tau is None
    else:
        assert tau == pytest.approx(brute_tau_b(x, y))
        assert tau == pytest.approx(kendalltau(x, y, variant="b").statistic, abs=1e-12)


@given(total=st.integers(0, 5000), steps=st.integers(1, 20))
def test_checkpoints_grow_to_every_label(total, steps):
    sizes = stability.checkpoint_sizes(total, steps)
    if total == 0:
        assert sizes == []
        return
    assert sizes[-1] == total
    assert sizes == sorted(set(sizes))
    assert len(sizes) == min(steps, total) or len(sizes) <= steps
    assert sizes[0] >= 1


def test_each_checkpoint_scores_the_labels_made_by_then_in_their_order():
    labels = pd.DataFrame(
        {
            "query_id": ["1", "1", "1", "1"],
            "doc_id": ["a", "b", "c", "d"],
            "relevance": [1, 0, 1, 1],
            # d was imported (no time): it comes first; then by time, not by row.
            "labelled_at": [pd.Timestamp("2026-01-03"), pd.Timestamp("2026-01-01"), None, None],
        }
    )
    labels.loc[2, "labelled_at"] = pd.Timestamp("2026-01-02")
    seen: list[list[str]] = []

    def score(frame: pd.DataFrame) -> dict[str, float]:
        seen.append(list(frame["doc_id"]))
        relevant = frame["relevance"].sum()
        return {"x": float(relevant), "y": float(len(frame) - relevant)}

    result = stability.ranking_stability(labels, score, measure="count", steps=4)
    assert seen == [["d"], ["d", "b"], ["d", "b", "c"], ["d", "b", "c", "a"]]
    assert [c.labelled for c in result.checkpoints] == [1, 2, 3, 4]
    assert [c.share for c in result.checkpoints] == [0.25, 0.5, 0.75, 1.0]
    # Now x (3) > y (1); after d alone x > y too, after d and b x = y (a tie).
    assert [c.tau for c in result.checkpoints] == [1.0, None, 1.0, 1.0]
    assert result.settled_at().labelled == 3
    # Now alone is no sign of settling: its tau is 1 by definition.
    assert stability.ranking_stability(labels.iloc[:1], score, measure="count").settled_at() is None


def test_settled_means_from_there_on():
    def checkpoint(tau):
        return stability.Checkpoint(labelled=1, share=0.1, scores={}, tau=tau)

    taus = [0.95, 0.5, 0.92, 0.97, 1.0]
    result = stability.Stability("map", [checkpoint(t) for t in taus])
    assert result.settled_at() is result.checkpoints[2]
    moving = [checkpoint(0.95), checkpoint(0.5), checkpoint(1.0)]
    assert stability.Stability("map", moving).settled_at() is None


def test_spread_is_the_standard_error_of_the_mean_over_topics():
    frame = pd.DataFrame(
        {
            "run_id": ["a", "a", "a", "b"],
            "query_id": ["1", "2", "3", "1"],
            "value": [0.1, 0.4, 0.7, 0.3],
        }
    )
    spread = stability.spread_over_topics(frame)
    assert spread["a"].mean == pytest.approx(0.4)
    assert spread["a"].stderr == pytest.approx(statistics.stdev([0.1, 0.4, 0.7]) / math.sqrt(3))
    assert (spread["b"].mean, spread["b"].stderr, spread["b"].topics) == (0.3, None, 1)


# --------------------------------------------------------------------------
# The dashboard's panel


@pytest.fixture
def judged_pool(db, assessor):
    campaign = make_campaign(topics=("301", "302"))
    docs = [f"d{i}" for i in range(1, 7)]
    make_documents(campaign, docs)
    make_run(campaign, "good", {"301": ["d1", "d2", "d3"], "302": ["d4", "d5", "d6"]})
    make_run(campaign, "bad", {"301": ["d3", "d2", "d1"], "302": ["d6", "d5", "d4"]})
    make_run(campaign, "mid", {"301": ["d2", "d1", "d3"], "302": ["d5", "d4", "d6"]})
    pool = make_pool(campaign, {"301": docs[:3], "302": docs[3:]})
    for topic in campaign.topics.all():
        services.assignments_create(pool=pool, topics=[topic], assessors=[assessor])
    return pool


def judge(pool, assessor, topic, docno, relevance):
    services.judgment_record(
        assessor=assessor,
        topic=pool.campaign.topics.get(topic_id=topic),
        docno=docno,
        relevance=relevance,
        aspects={"effectiveness": 3, "credibility": 1} if relevance else {},
    )


def test_the_panel_ranks_the_runs_and_follows_new_judgments(
    judged_pool, assessor, organiser_client
):
    url = reverse("scoring:pool_stability", args=[judged_pool.pk])
    assert "Nothing is judged in this pool yet." in organiser_client.get(url).content.decode()
    for topic, docno, rel in [("301", "d1", 2), ("301", "d3", 0), ("302", "d4", 1)]:
        judge(judged_pool, assessor, topic, docno, rel)
    report = stability_selectors.pool_ranking_stability(pool=judged_pool, measure="map")
    assert [c.labelled for c in report.stability.checkpoints] == [1, 2, 3]
    assert report.stability.now.scores == pytest.approx({"good": 1.0, "mid": 0.5, "bad": 1 / 3})
    assert report.stability.now.tau == 1.0
    page = organiser_client.get(url, {"measure": "recip_rank"}, headers={"HX-Request": "true"})
    text = page.content.decode()
    assert page.status_code == 200
    assert "<html" not in text  # the panel alone, for the dashboard
    assert (
        text.index('data-run="good"') < text.index('data-run="mid"') < text.index('data-run="bad"')
    )
    # A new judgment changes the state: the cached report is not served again.
    judge(judged_pool, assessor, "302", "d6", 2)
    again = stability_selectors.pool_ranking_stability(pool=judged_pool, measure="map")
    assert again.stability.now.labelled == 4


def test_a_sampled_pool_shows_the_inferred_measure_with_its_spread(assessor, db):
    campaign = make_campaign(topics=("301", "302"))
    docs = [f"d{i}" for i in range(1, 9)]
    make_documents(campaign, docs)
    make_run(campaign, "r1", {"301": docs[:4], "302": docs[4:]})
    make_run(campaign, "r2", {"301": docs[3::-1], "302": docs[:3:-1]})
    spec = PoolSpec(depth=1, strata=(Stratum(2, 4, 0.5),), seed=3)
    pool = pool_services.pool_build(campaign=campaign, spec=spec, name="sampled")
    for entry in pool.entries.filter(sampled=True):
        judge(
            pool,
            assessor,
            entry.topic.topic_id,
            entry.docno,
            1 if entry.docno in ("d1", "d5") else 0,
        )
    report = stability_selectors.pool_ranking_stability(pool=pool, measure="map")
    assert report.inferred_measure == "infAP"
    assert set(report.inferred) == {"r1", "r2"}
    assert report.inferred["r1"].topics == 2
    assert report.inferred["r1"].stderr is not None


def test_a_bad_measure_is_a_400_and_assessors_are_kept_out(
    judged_pool, organiser_client, client, assessor
):
    url = reverse("scoring:pool_stability", args=[judged_pool.pk])
    response = organiser_client.get(url, {"measure": "ndcg; drop table"})
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    client.force_login(assessor)
    assert client.get(url).status_code in (302, 403)


def test_the_dashboard_loads_the_panel_of_each_open_pool(judged_pool, organiser_client):
    page = organiser_client.get(
        reverse("judging:campaign_dashboard", args=[judged_pool.campaign.slug])
    ).content.decode()
    assert reverse("scoring:pool_stability", args=[judged_pool.pk]) in page
    assert 'hx-trigger="load"' in page


def test_a_new_final_label_policy_is_not_served_from_the_cache(judged_pool, assessor, assessor2):
    judge(judged_pool, assessor, "301", "d1", 0)  # the primary assessor
    judge(judged_pool, assessor2, "301", "d1", 2)
    judge(judged_pool, assessor, "302", "d4", 1)
    first = stability_selectors.pool_ranking_stability(pool=judged_pool, measure="map")
    services.policy_update(pool=judged_pool, steps=["maximum"], disagreement_mode="any")
    second = stability_selectors.pool_ranking_stability(pool=judged_pool, measure="map")
    assert first.stability.now.scores["good"] == 0.5
    assert second.stability.now.scores["good"] == 1.0
