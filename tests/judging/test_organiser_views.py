"""Organiser pages for overlap, agreement and adjudication."""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin, urlsplit

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.http import QueryDict
from django.urls import reverse
from rest_framework.test import APIClient
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from judging import services
from judging.models import Adjudication, Assignment, OverlapItem, PoolPolicy
from pooling.models import BudgetOverrun
from tests.helpers import (
    make_campaign,
    make_documents,
    make_pool,
    make_pool_with_outsiders,
    make_user,
)

pytestmark = pytest.mark.django_db
RELEVANT = {"effectiveness": 3, "credibility": 1}


@pytest.fixture
def pool():
    ann, ben, _cat = (make_user(n) for n in ("ann", "ben", "cat"))
    campaign = make_campaign(topics=("1",))
    docs = [f"d{i:02d}" for i in range(12)]
    make_documents(campaign, docs)
    pool = make_pool(campaign, {"1": docs})
    topic = campaign.topics.get()
    services.assignments_create(pool=pool, topics=[topic], assessors=[ann])
    # ann and ben judge everything; they disagree on d00 and d01.
    for i, doc in enumerate(docs):
        rel_ann = 2 if i % 3 == 0 else 0
        rel_ben = rel_ann if i > 1 else (0 if rel_ann else 1)
        for user, rel in ((ann, rel_ann), (ben, rel_ben)):
            services.judgment_record(
                assessor=user,
                topic=topic,
                docno=doc,
                relevance=rel,
                aspects=RELEVANT if rel else {},
            )
    return pool


def ben_and_cat() -> list[int]:
    """The assessors to tick: they hold no assignment in the pool yet (only ann does)."""
    return list(User.objects.filter(username__in=["ben", "cat"]).values_list("pk", flat=True))


def test_overlap_preview_shows_the_cost_and_assign_creates_it(organiser_client, pool):
    url = reverse("judging:pool_overlap", args=[pool.pk])
    fields = {"k": "2", "fraction": "0.5", "seed": "3", "assessors": ben_and_cat()}
    preview = organiser_client.get(url, fields)
    page = preview.content.decode()
    assert "This plan costs 6 extra judgments" in page
    assert not OverlapItem.objects.exists()
    response = organiser_client.post(url, fields, follow=True)
    assert "Assigned 6 overlap judgments." in response.content.decode()
    assert OverlapItem.objects.count() == 6
    assert set(
        Assignment.objects.filter(kind="overlap").values_list("assessor__username", flat=True)
    ) <= {"ben", "cat"}


def test_overlap_with_none_ticked_goes_to_the_pools_assessors_only(organiser_client, tmp_path):
    """Not to another campaign's assessor, the account import_qrels made, nor an account
    holding no assignment in the pool; the forms offer the assessors who can log in."""
    pool = make_pool_with_outsiders(tmp_path)
    url = reverse("judging:pool_overlap", args=[pool.pk])
    fields = {"k": "2", "fraction": "0.1", "seed": "0"}
    page = organiser_client.get(url, fields).content.decode()
    assert "none ticked: this pool's assessors, ann, ben" in page
    # dora judges for another campaign and is offered: the hint says so, not the opposite.
    assert "this campaign's or another's" in page
    offered = set(re.findall(r'name="assessors" value="\d+"> (\w+)', page))
    assert offered == {"ann", "ben", "cat", "dora"}
    organiser_client.post(url, fields)
    extra = Assignment.objects.filter(pool=pool, kind=Assignment.OVERLAP)
    assert set(extra.values_list("assessor__username", flat=True)) == {"ann", "ben"}
    assign_page = organiser_client.get(reverse("judging:pool_assignments", args=[pool.pk]))
    offered = re.findall(r'name="assessors" value="\d+"> (\w+)', assign_page.content.decode())
    assert offered == ["ann", "ben", "cat", "dora"]
    assert "this campaign's or another's" in assign_page.content.decode()


def test_overlap_preview_lists_the_topics_in_the_campaigns_order(organiser_client):
    """Not in string order (1037798 before 19335), as no other page lists them."""
    ann, ben = make_user("ann"), make_user("ben")
    campaign = make_campaign(topics=("9", "10"))
    pool = make_pool(campaign, {"9": ["a", "b"], "10": ["c", "d"]})
    services.assignments_create(pool=pool, topics=list(campaign.topics.all()), assessors=[ann])
    url = reverse("judging:pool_overlap", args=[pool.pk])
    page = organiser_client.get(
        url, {"k": "2", "fraction": "1", "seed": "0", "assessors": [ann.pk, ben.pk]}
    ).content.decode()
    costs = re.findall(r'<tr><td>(\d+)</td><td class="num">2</td></tr>', page)
    assert costs == ["9", "10"]


def test_overlap_preview_keeps_the_ticked_assessors_and_topics(organiser_client, pool):
    ben = User.objects.get(username="ben")
    url = reverse("judging:pool_overlap", args=[pool.pk])
    page = organiser_client.get(
        url, {"k": "2", "fraction": "0.5", "seed": "3", "assessors": [ben.pk], "topics": ["1"]}
    ).content.decode()
    assert f'name="assessors" value="{ben.pk}" checked> ben' in page
    cat = User.objects.get(username="cat")
    assert f'name="assessors" value="{cat.pk}"> cat' in page
    assert 'name="topics" value="1" checked> 1' in page
    # The assign form carries exactly what was previewed.
    assert f'<input type="hidden" name="assessors" value="{ben.pk}">' in page
    assert '<input type="hidden" name="topics" value="1">' in page
    organiser_client.post(
        url, {"k": "2", "fraction": "0.5", "seed": "3", "assessors": [ben.pk], "topics": ["1"]}
    )
    assert set(
        Assignment.objects.filter(kind="overlap").values_list("assessor__username", flat=True)
    ) == {"ben"}


def test_overlap_past_the_budget_is_compared_and_needs_confirmation(organiser_client, pool):
    campaign = pool.campaign
    campaign.judgment_budget = 26  # 24 judgments made: 2 left
    campaign.save()
    url = reverse("judging:pool_overlap", args=[pool.pk])
    fields = {"k": "2", "fraction": "0.5", "seed": "3", "assessors": ben_and_cat()}
    page = organiser_client.get(url, fields).content.decode()
    assert "Budget 26: 24 judgments made, <strong>2</strong> left." in page
    assert "the campaign's plan still needs 6 judgments" in page
    assert "4 over what is left." in page
    response = organiser_client.post(url, fields)
    assert response.status_code == 409
    assert "asks for 6 new judgments and the budget 26: 24 spent, 2 left: 4 over" in (
        response.content.decode()
    )
    assert not OverlapItem.objects.exists()
    organiser_client.post(url, {**fields, "confirm_over_budget": "on"})
    assert OverlapItem.objects.count() == 6
    assert BudgetOverrun.objects.get().action == f"overlap K=2 on pool {pool.pk}"


def test_overlap_preview_compares_the_whole_plan_left_with_the_budget(organiser_client):
    """Issue 23: "Fits" for 100 extra judgments when the plan was already 4,927 over."""
    ann, ben = make_user("ann"), make_user("ben")
    campaign = make_campaign(topics=("1",), judgment_budget=20)
    docs = [f"d{i:02d}" for i in range(40)]
    pool = make_pool(campaign, {"1": docs})
    [work] = services.assignments_create(pool=pool, topics=campaign.topics.all(), assessors=[ann])
    for doc in docs[:10]:
        services.judgment_submit(assignment=work, docno=doc, relevance=0, aspects={})
    url = reverse("judging:pool_overlap", args=[pool.pk])
    fields = {"k": "2", "fraction": "0.1", "seed": "3", "assessors": [ann.pk, ben.pk]}
    page = organiser_client.get(url, fields).content.decode()
    assert "This plan costs 4 extra judgments" in page  # 4 of the 10 left: alone, they fit
    assert "Budget 20: 10 judgments made, <strong>10</strong> left." in page
    # 30 of the plan left to judge, and 4 more: 24 over what is left.
    assert "the campaign's plan still needs 34 judgments" in page
    assert '<span class="warn" data-plan-over-by="24">24 over what is left.</span>' in page
    assert "Fits" not in page
    assert "forecast-change/?change=4" in page
    campaign.judgment_budget = 6000
    campaign.save()
    page = organiser_client.get(url, fields).content.decode()
    assert "Budget 6,000: 10 judgments made, <strong>5,990</strong> left." in page
    assert '<span class="ok">within what is left.</span>' in page


def test_overlap_errors_are_shown(organiser_client, pool):
    page = organiser_client.get(
        reverse("judging:pool_overlap", args=[pool.pk]), {"k": "9", "assessors": ben_and_cat()}
    ).content.decode()
    assert (
        'class="errors" role="alert">K=9 needs 8 assessors besides the primary of topic '
        "&#x27;1&#x27;, 2 available</p>" in page
    )
    assert not OverlapItem.objects.exists()


def test_agreement_page_shows_kappa_flags_and_confusion(organiser_client, pool):
    url = reverse("judging:pool_agreement", args=[pool.pk])
    page = organiser_client.get(url).content.decode()
    assert "ann · ben" in page
    assert "cohen_kappa" in page
    page = organiser_client.get(
        url, {"aspect": "relevance", "a": "ann", "b": "ben"}
    ).content.decode()
    assert "Confusion matrix: ann (rows) by ben (columns)" in page


def test_agreement_page_shows_voorhees_overlap_of_the_relevant_sets(organiser_client, pool):
    page = organiser_client.get(reverse("judging:pool_agreement", args=[pool.pk])).content.decode()
    overlap = page.split("Voorhees' overlap of the relevant sets")[1].split("</table>")[0]
    # ann: d00 d03 d06 d09 relevant; ben: d01 d03 d06 d09; 3 in both of 5 in either.
    assert "ann · ben" in overlap
    assert ">0.600<" in overlap


def test_agreement_page_gives_fleiss_kappa_of_two_assessors_as_scotts_pi(organiser_client, pool):
    page = organiser_client.get(reverse("judging:pool_agreement", args=[pool.pk])).content.decode()
    row = page.split("<td>relevance</td><td>fleiss_kappa</td>")[1].split("</tr>")[0]
    # Every document rated twice (ann and ben, as the fixture): statsmodels on those.
    ratings = [(2, 0), (0, 1)] + [(2, 2) if i % 3 == 0 else (0, 0) for i in range(2, 12)]
    table = np.array([[pair.count(value) for value in (0, 1, 2)] for pair in ratings])
    assert f">{statsmodels_fleiss_kappa(table):.3f}<" in row
    assert "2 ratings per item (Scott&#x27;s pi)" in row
    assert "undefined" not in row


def test_adjudication_queue_and_recording_a_final_label(organiser_client, pool):
    url = reverse("judging:pool_adjudication", args=[pool.pk])
    page = organiser_client.get(url).content.decode()
    assert page.count("Adjudicate</a>") == 2
    topic = pool.campaign.topics.get()
    item_url = reverse("judging:adjudicate", args=[pool.pk, topic.pk, "d00"])
    item_page = organiser_client.get(item_url).content.decode()
    assert "Text of d00." in item_page
    assert "ann" in item_page
    assert "ben" in item_page
    response = organiser_client.post(
        item_url,
        {"relevance": "1", "effectiveness": "2", "credibility": "1", "reason": "partly on topic"},
    )
    assert response.url == url
    adjudication = Adjudication.objects.get()
    assert (adjudication.relevance, adjudication.reason) == (1, "partly on topic")
    assert organiser_client.get(url).content.decode().count("Adjudicate</a>") == 1


def test_adjudication_rejects_labels_outside_the_schema(organiser_client, pool):
    topic = pool.campaign.topics.get()
    response = organiser_client.post(
        reverse("judging:adjudicate", args=[pool.pk, topic.pk, "d00"]), {"relevance": "1"}
    )
    assert "Effectiveness is required" in response.content.decode()
    assert not Adjudication.objects.exists()


def test_policy_and_mode_are_stored(organiser_client, pool):
    url = reverse("judging:pool_adjudication", args=[pool.pk])
    assert organiser_client.get(url).status_code == 200
    assert not PoolPolicy.objects.exists(), "reading the page stores no policy"
    organiser_client.post(url, {"policy": "adjudicated, majority, maximum", "mode": "any"})
    policy = PoolPolicy.objects.get(pool=pool)
    assert policy.label_policy == {"steps": ["adjudicated", "majority", "maximum"]}
    assert policy.disagreement_mode == "any"
    response = organiser_client.post(url, {"policy": "primary", "mode": "any"}, follow=True)
    assert "Policy not changed" in response.content.decode()
    response = organiser_client.post(url, {"policy": "majority, maximum", "mode": "x"}, follow=True)
    assert "Policy not changed: * mode" in response.content.decode()
    assert PoolPolicy.objects.get(pool=pool).label_policy == {
        "steps": ["adjudicated", "majority", "maximum"]
    }


@pytest.mark.parametrize("name", ["pool_overlap", "pool_agreement", "pool_adjudication"])
def test_assessors_get_403(client, pool, name):
    client.force_login(make_user("zed"))
    assert client.get(reverse(f"judging:{name}", args=[pool.pk])).status_code == 403


def test_history_lookup_leads_to_the_documents_history(organiser_client, pool):
    topic = pool.campaign.topics.get()
    response = organiser_client.get(
        reverse("judging:document_history_lookup"), {"topic": topic.pk, "docno": " d01 "}
    )
    assert response.url == reverse("judging:document_history", args=[topic.pk, "d01"])
    lookup = reverse("judging:document_history_lookup")
    for bad in ({"topic": topic.pk, "docno": ""}, {"topic": "abc", "docno": "d01"}, {}):
        assert organiser_client.get(lookup, bad).status_code == 404
    page = organiser_client.get(response.url).content.decode()
    assert page.count("<td>ann</td>") == 2


def _history(client, topic, docno: str):
    return client.get(reverse("judging:document_history", args=[topic.pk, docno]))


def test_history_shows_the_adjudication_who_when_and_why(organiser_client, organiser, pool):
    topic = pool.campaign.topics.get()
    page = _history(organiser_client, topic, "d00").content.decode()
    assert "Not adjudicated" in page
    services.adjudication_record(
        pool=pool,
        topic=topic,
        docno="d00",
        relevance=1,
        aspects={"effectiveness": 3, "credibility": 1},
        reason="partly on topic",
        decided_by=organiser,
    )
    page = _history(organiser_client, topic, "d00").content.decode()
    adjudication = Adjudication.objects.get()
    assert (
        "<td>Relevance: Relevant · Effectiveness: Effective · Credibility: Credible</td>"
        f"<td>{organiser.username}</td>"
        f"<td>{adjudication.decided_at:%Y-%m-%d %H:%M:%S}</td><td>partly on topic</td>"
    ) in page


def test_history_and_adjudication_show_labels_by_their_schema_names(organiser_client, pool):
    topic = pool.campaign.topics.get()
    history = _history(organiser_client, topic, "d00").content.decode()
    adjudicate = organiser_client.get(
        reverse("judging:adjudicate", args=[pool.pk, topic.pk, "d00"])
    ).content.decode()
    queue = organiser_client.get(
        reverse("judging:pool_adjudication", args=[pool.pk])
    ).content.decode()
    for page in (history, adjudicate, queue):
        assert "{&#x27;" not in page  # no Python dict
        assert "{'" not in page
    ann = "Relevance: Highly relevant · Effectiveness: Effective · Credibility: Credible"
    assert f"<td>{ann}</td>" in history
    assert f"<td>{ann}</td>" in adjudicate
    assert "<td>Relevance: Not relevant</td>" in adjudicate
    assert "ann: Highly relevant · ben: Not relevant" in queue
    assert "<td>Relevance</td>" in queue  # what they differ on, by name


def test_history_of_a_docno_the_campaign_never_saw_is_404(organiser_client, pool):
    topic = pool.campaign.topics.get()
    assert _history(organiser_client, topic, "no-such-doc").status_code == 404
    assert _history(organiser_client, topic, "d05").status_code == 200
    make_documents(pool.campaign, ["loaded-only"])
    assert _history(organiser_client, topic, "loaded-only").status_code == 200
    make_pool(pool.campaign, {"1": ["pooled-only"]}, name="other")
    assert _history(organiser_client, topic, "pooled-only").status_code == 200


# Docnos a browser would resolve to another address if they went into a URL as
# they are (dot segments, slashes, backslashes), or that need escaping (%, ?, #, ~).
ODD_DOCNOS = [
    ".",
    "..",
    "a/../b",
    "../x",
    "./b",
    "x/.",
    "x/",
    "a\\..\\b",
    "100%",
    "50%2F",
    "q?x=1",
    "frag#1",
    "~",
    "a~2Fb",
    "10.1371/journal.pone.0001",
    "http://example.org/a b?c=1#d",
    "ünï/code",
]


def _followed(client, page_url: str, href: str):
    """GET what a browser requests for a link found in a page: the href resolved
    against the page, dot segments removed (urljoin follows RFC 3986 as browsers do).
    The response, and the address it came from (percent-encoded, as requested)."""
    target = urlsplit(urljoin("http://testserver" + page_url, html.unescape(href)))
    return client.get(target.path, QueryDict(target.query)), target.path


def _hrefs(response) -> list[str]:
    return re.findall(r'href="([^"]*)"', response.content.decode())


def test_every_docno_link_lands_on_its_own_document(organiser_client, organiser):
    ann, ben = make_user("ann"), make_user("ben")
    campaign = make_campaign(topics=("1",))
    # b and x are documents too: a link that loses its dot segments lands on them.
    make_documents(campaign, ["b", "x"])
    pool = make_pool(campaign, {"1": [*ODD_DOCNOS, "b", "x"]})
    topic = campaign.topics.get()
    for docno in ODD_DOCNOS:
        for user, relevance in ((ann, 0), (ben, 2)):
            services.judgment_record(
                assessor=user,
                topic=topic,
                docno=docno,
                relevance=relevance,
                aspects=RELEVANT if relevance else {},
            )
    queue_url = reverse("judging:pool_adjudication", args=[pool.pk])
    queue = organiser_client.get(queue_url)
    links = [h for h in _hrefs(queue) if "/adjudicate/" in h]
    assert len(links) == len(ODD_DOCNOS)
    landed = []
    for href in links:
        item, item_url = _followed(organiser_client, queue_url, href)
        assert item.status_code == 200, href
        docno = item.context["docno"]
        landed.append(docno)
        [history_href] = [h for h in _hrefs(item) if "/history/" in h]
        history, _ = _followed(organiser_client, item_url, history_href)
        assert (history.status_code, history.context["docno"]) == (200, docno), history_href
        decided = organiser_client.post(item_url, {"relevance": "0"})
        assert decided.status_code == 302, href
        assert Adjudication.objects.filter(topic=topic, docno=docno).exists()
    assert sorted(landed) == sorted(ODD_DOCNOS)
    # The history form sends on to the same page.
    for docno in ODD_DOCNOS:
        lookup = organiser_client.get(
            reverse("judging:document_history_lookup"), {"topic": topic.pk, "docno": docno}
        )
        history, _ = _followed(organiser_client, "/judge/history/", lookup["Location"])
        assert history.context["docno"] == docno


def test_a_document_outside_the_pool_is_not_adjudicated(organiser_client, organiser, pool):
    topic = pool.campaign.topics.get()
    make_pool(pool.campaign, {"1": ["elsewhere"]}, name="other")
    for docno in ("no-such-doc", "elsewhere"):
        url = reverse("judging:adjudicate", args=[pool.pk, topic.pk, docno])
        page = organiser_client.get(url)
        assert page.status_code == 404
        assert f"document {docno!r} is not in pool {pool.pk} for topic 1" in page.content.decode()
        assert organiser_client.post(url, {"relevance": "0"}).status_code == 404
    api = APIClient()
    api.force_authenticate(organiser)
    response = api.post(
        f"/api/pools/{pool.pk}/adjudication/",
        {"topic": "1", "docno": "elsewhere", "relevance": 0},
        format="json",
    )
    assert response.status_code == 400
    assert "only a pooled document gets a final label" in response.json()["detail"]
    with pytest.raises(services.AdjudicationError):
        services.adjudication_record(
            pool=pool,
            topic=topic,
            docno="no-such-doc",
            relevance=0,
            aspects={},
            reason="",
            decided_by=organiser,
        )
    assert not Adjudication.objects.exists()
