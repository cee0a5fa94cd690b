"""Every form and API input, fuzzed: answers are never a server error (5xx)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from judging import services as judging
from pooling import pool_services
from pooling.core.spec import PoolSpec
from tests.helpers import make_campaign, make_documents, make_run, make_user

pytestmark = pytest.mark.django_db

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20) | (
    st.sampled_from(
        ["", "0", "-1", "1e400", "nan", "inf", "9" * 5000, "\x00", "1-5:0.5", "all", "[" * 500]
    )
)
FEW = settings(max_examples=40, deadline=None)


@pytest.fixture
def world(client):
    organiser, alice, bob = (
        make_user("olivia", organiser=True),
        make_user("alice"),
        make_user("bob"),
    )
    campaign = make_campaign(topics=("1", "2"))
    make_documents(campaign, ["d1", "d2", "d3"])
    make_run(campaign, "r", {"1": ["d1", "d2", "d3"], "2": ["d1"]})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=3))
    topics = list(campaign.topics.all())
    [assignment, _] = judging.assignments_create(pool=pool, topics=topics, assessors=[alice, bob])
    return {"organiser": organiser, "alice": alice, "pool": pool, "assignment": assignment}


def as_user(client, user):
    client.force_login(user)
    return client


@FEW
@given(relevance=TEXT, effectiveness=TEXT, credibility=TEXT, seconds=TEXT)
def test_the_judging_form(client, world, relevance, effectiveness, credibility, seconds):
    url = reverse("judging:judge", args=[world["assignment"].pk, 1])
    fields = {
        "relevance": relevance,
        "effectiveness": effectiveness,
        "credibility": credibility,
        "seconds": seconds,
    }
    assert as_user(client, world["alice"]).post(url, fields).status_code < 500


@FEW
@given(depth=TEXT, strata=TEXT, seed=TEXT, order=TEXT, preset=TEXT)
def test_the_pool_form(client, world, depth, strata, seed, order, preset):
    url = reverse("pooling:pool_whatif", args=[world["pool"].campaign.slug])
    fields = {"depth": depth, "strata": strata, "seed": seed, "order": order, "preset": preset}
    assert as_user(client, world["organiser"]).get(url, fields).status_code < 500


@FEW
@given(k=TEXT, fraction=TEXT, seed=TEXT, topics=TEXT, assessors=TEXT)
def test_the_overlap_form(client, world, k, fraction, seed, topics, assessors):
    url = reverse("judging:pool_overlap", args=[world["pool"].pk])
    fields = {"k": k, "fraction": fraction, "seed": seed, "topics": topics, "assessors": assessors}
    assert as_user(client, world["organiser"]).get(url, fields).status_code < 500


@FEW
@given(aspect=TEXT, statistic=TEXT, a=TEXT, b=TEXT, topic=TEXT, policy=TEXT, mode=TEXT)
def test_the_agreement_and_adjudication_pages(
    client, world, aspect, statistic, a, b, topic, policy, mode
):
    pool = world["pool"].pk
    client = as_user(client, world["organiser"])
    agreement = {"aspect": aspect, "statistic": statistic, "a": a, "b": b, "topic": topic}
    assert client.get(reverse("judging:pool_agreement", args=[pool]), agreement).status_code < 500
    adjudication = reverse("judging:pool_adjudication", args=[pool])
    assert client.post(adjudication, {"policy": policy, "mode": mode}).status_code < 500
    lookup = {"topic": topic, "docno": a}
    assert client.get(reverse("judging:document_history_lookup"), lookup).status_code < 500


@FEW
@given(measures=TEXT, aspect=TEXT, formats=TEXT)
def test_the_scores_and_qrels_pages(client, world, measures, aspect, formats):
    pool = world["pool"].pk
    client = as_user(client, world["organiser"])
    scores = client.get(reverse("scoring:pool_scores", args=[pool]), {"measures": measures})
    assert scores.status_code < 500
    qrels = client.get(
        reverse("scoring:qrels_download", args=[pool, "twoaspects"]), {"aspect": aspect}
    )
    assert qrels.status_code < 500
    bundle = client.get(reverse("scoring:bundle_download", args=[pool]), {"formats": formats})
    assert bundle.status_code < 500


@FEW
@given(name=TEXT, slug=TEXT, budget=TEXT, schema=TEXT, custom=TEXT)
def test_the_campaign_form(client, world, name, slug, budget, schema, custom):
    fields = {
        "name": name,
        "slug": slug,
        "judgment_budget": budget,
        "label_schema": schema,
        "custom_schema": custom,
    }
    response = as_user(client, world["organiser"]).post(reverse("pooling:campaign_create"), fields)
    assert response.status_code < 500


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)


@FEW
@given(body=JSON | st.fixed_dictionaries({"relevance": JSON, "aspects": JSON, "seconds": JSON}))
def test_the_judgment_api(world, body):
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=world["alice"])
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    url = f"/api/assignments/{world['assignment'].pk}/judgments/d1/"
    response = client.put(url, json.dumps(body, allow_nan=True), content_type="application/json")
    assert response.status_code < 500
    assert response["Content-Type"].startswith("application/json")
