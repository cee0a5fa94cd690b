"""Machines helping the humans (issue 25 item 6): a queue that starts with the documents
the machines did not settle, and post-edit (the judging page shows the machines' labels,
off by default, recorded with each judgment and in the export manifest)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.urls import reverse

from judging import machine_services, selectors, services
from judging.models import JudgmentEvent, MachineSample, PoolPolicy
from tests.helpers import assert_nothing_leaks, hide_values_in_pool_entries
from tests.judging.machine_helpers import make_chat_machine, make_machine_pool

pytestmark = pytest.mark.django_db

RELEVANT = {"relevance": "2", "effectiveness": "3", "credibility": "1"}
MACHINE_NAME = "oracle7"  # a name that appears nowhere else on the judging page


def labels_of(relevance: int) -> dict[str, int]:
    if relevance == 0:
        return {"relevance": 0, "effectiveness": -1, "credibility": -1}
    return {"relevance": relevance, "effectiveness": 1, "credibility": 0}


@pytest.fixture
def setup(assessor):
    """Topic 301 with 301-d0..d4 in that order; the machine labelled d0 (two samples
    agreeing), d1 (two samples disagreeing), d3 (one sample); d2 and d4 unlabelled."""
    campaign, pool = make_machine_pool(docs=5)
    hide_values_in_pool_entries(pool)
    topic = campaign.topics.get(topic_id="301")
    machine = make_chat_machine(campaign, "http://127.0.0.1:9/v1", name=MACHINE_NAME)
    machine_services.machine_judgments_store(
        machine=machine,
        labels={(topic.pk, d): labels_of(2) for d in ("301-d0", "301-d1", "301-d3")},
    )
    for docno, index, rel in (
        ("301-d0", 0, 2),
        ("301-d0", 1, 2),
        ("301-d1", 0, 2),
        ("301-d1", 1, 0),
        ("301-d3", 0, 2),
    ):
        MachineSample.objects.create(
            machine=machine,
            topic=topic,
            docno=docno,
            sample=index,
            labels=labels_of(rel),
            ok=True,
            cache_key="k",
        )
    (assignment,) = services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )
    return pool, machine, assignment


def order_of_work(assignment) -> list[str]:
    """The docnos in the order `next_unjudged` hands them out, judging each."""
    seen, after = [], 0
    while (entry := assignment.next_unjudged(after=after)) is not None:
        seen.append(entry.docno)
        services.judgment_record(
            assessor=assignment.assessor,
            topic=assignment.topic,
            docno=entry.docno,
            relevance=0,
            aspects={},
        )
        after = entry.position
    return seen


def test_the_default_queue_is_the_pool_order(setup):
    _, _, assignment = setup
    assert order_of_work(assignment) == [f"301-d{i}" for i in range(5)]


def test_machine_first_puts_unsettled_documents_first(setup):
    pool, _, assignment = setup
    services.policy_machine_use_update(pool=pool, queue_order="machine_first", post_edit=False)
    # d1 (samples disagree), d2 and d4 (no machine label), then the settled d0 and d3.
    assert order_of_work(assignment) == ["301-d1", "301-d2", "301-d4", "301-d0", "301-d3"]


def test_machine_first_counts_the_latest_sample_of_a_rerun(setup):
    pool, machine, assignment = setup
    services.policy_machine_use_update(pool=pool, queue_order="machine_first", post_edit=False)
    MachineSample.objects.create(  # a re-run: sample 1 of d1 now agrees
        machine=machine,
        topic=assignment.topic,
        docno="301-d1",
        sample=1,
        labels=labels_of(2),
        ok=True,
        cache_key="k",
        cached=True,
    )
    assert order_of_work(assignment)[:2] == ["301-d2", "301-d4"]


def test_machine_first_keeps_positions_and_the_judging_page_hides_run_and_rank(
    assessor_client, setup
):
    pool, _, assignment = setup
    services.policy_machine_use_update(pool=pool, queue_order="machine_first", post_edit=False)
    response = assessor_client.get(reverse("judging:judge_next", args=[assignment.pk]))
    assert response.url == reverse("judging:judge", args=[assignment.pk, 2])  # 301-d1
    page = assessor_client.get(response.url).content.decode()
    assert "301-d1" in page
    assert_nothing_leaks(page, MACHINE_NAME, "Machine label")


def test_an_adaptive_pool_keeps_its_strategy(assessor):
    from tests.judging.test_adaptive import adaptive_pool

    pool = adaptive_pool("mtf", budget=6)
    (assignment, *_) = services.assignments_create(
        pool=pool, topics=list(pool.campaign.topics.all()), assessors=[assessor]
    )
    first_default = assignment.next_unjudged()
    services.policy_machine_use_update(pool=pool, queue_order="machine_first", post_edit=False)
    assert assignment.next_unjudged() == first_default


def test_without_post_edit_no_machine_label_nor_name_reaches_the_assessor(assessor_client, setup):
    _, _, assignment = setup
    pages = [
        assessor_client.get(reverse("judging:judge", args=[assignment.pk, p])).content.decode()
        for p in (1, 2, 3)
    ]
    pages.append(
        assessor_client.get(reverse("judging:judged_list", args=[assignment.pk])).content.decode()
    )
    pages.append(assessor_client.get(reverse("judging:assessor_home")).content.decode())
    api = [
        assessor_client.get(reverse("api-assignments")).content.decode(),
        assessor_client.get(reverse("api-assignment-next", args=[assignment.pk])).content.decode(),
    ]
    for text in (*pages, *api):
        assert_nothing_leaks(text, MACHINE_NAME, "test-model", "Machine label", "machine.")
    assessor_client.post(reverse("judging:judge", args=[assignment.pk, 1]), RELEVANT)
    assert JudgmentEvent.objects.get().shown_machine_label is None


def test_post_edit_shows_the_machine_label_and_records_it(assessor_client, setup):
    pool, _machine, assignment = setup
    services.policy_machine_use_update(pool=pool, queue_order="default", post_edit=True)
    page = assessor_client.get(reverse("judging:judge", args=[assignment.pk, 1])).content.decode()
    assert "Machine label: Highly relevant; Effectiveness" in page
    assert f"({MACHINE_NAME}, model test-model)" in page
    assert "may bias you" in page
    assert " checked" not in page  # nothing is chosen for the assessor
    assessor_client.post(reverse("judging:judge", args=[assignment.pk, 1]), RELEVANT)
    event = JudgmentEvent.objects.get()
    assert event.shown_machine_label == {MACHINE_NAME: labels_of(2)}
    # A document no machine labelled: the page says so, and the judgment records {}.
    page = assessor_client.get(reverse("judging:judge", args=[assignment.pk, 3])).content.decode()
    assert "No machine label for this document." in page
    assessor_client.post(reverse("judging:judge", args=[assignment.pk, 3]), RELEVANT)
    assert JudgmentEvent.objects.get(docno="301-d2").shown_machine_label == {}


def test_the_policy_page_sets_queue_order_and_post_edit(client, organiser, setup):
    pool, _, _ = setup
    client.force_login(organiser)
    url = reverse("judging:pool_adjudication", args=[pool.pk])
    assert 'id="machine-use"' in client.get(url).content.decode()
    client.post(url, {"form": "machine_use", "queue_order": "machine_first", "post_edit": "on"})
    policy = PoolPolicy.objects.get(pool=pool)
    assert (policy.queue_order, policy.post_edit) == ("machine_first", True)
    client.post(url, {"form": "machine_use", "queue_order": "default"})
    policy.refresh_from_db()
    assert (policy.queue_order, policy.post_edit) == ("default", False)
    response = client.post(url, {"form": "machine_use", "queue_order": "random"}, follow=True)
    assert "Not changed" in response.content.decode()
    policy.refresh_from_db()
    assert policy.queue_order == "default"


def test_the_policy_api_sets_and_keeps_queue_order_and_post_edit(client, organiser, setup):
    pool, _, _ = setup
    client.force_login(organiser)
    url = reverse("api-pool-policy", args=[pool.pk])
    body = client.get(url).json()
    assert (body["queue_order"], body["post_edit"]) == ("default", False)
    base = {"steps": body["steps"], "disagreement_mode": body["disagreement_mode"]}
    put = client.put(
        url, {**base, "queue_order": "machine_first", "post_edit": True}, "application/json"
    )
    assert put.status_code == 200
    assert (put.json()["queue_order"], put.json()["post_edit"]) == ("machine_first", True)
    kept = client.put(url, base, "application/json").json()  # left out: kept
    assert (kept["queue_order"], kept["post_edit"]) == ("machine_first", True)
    bad = client.put(url, {**base, "queue_order": "random"}, "application/json")
    assert bad.status_code == 400
    assert "queue_order" in bad.json()
    with pytest.raises(ValueError, match="queue order must be one of"):
        services.policy_machine_use_update(pool=pool, queue_order="random", post_edit=False)


def test_the_export_manifest_records_queue_order_and_post_edit(assessor_client, setup):
    from scoring import export_selectors as scoring_selectors

    pool, _, assignment = setup
    services.policy_machine_use_update(pool=pool, queue_order="machine_first", post_edit=True)
    assessor_client.post(reverse("judging:judge", args=[assignment.pk, 1]), RELEVANT)
    data = scoring_selectors.qrels_bundle(pool=pool, formats=["qrels"])
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["machine_use"] == selectors.machine_use_manifest(pool)
    assert manifest["machine_use"]["queue_order"] == "machine_first"
    assert manifest["machine_use"]["post_edit"] is True
    assert manifest["machine_use"]["judgment_events_with_machine_label_shown"] == 1


def test_the_document_history_shows_the_machine_label_shown(
    client, assessor_client, organiser, setup
):
    pool, _, assignment = setup
    services.policy_machine_use_update(pool=pool, queue_order="default", post_edit=True)
    assessor_client.post(reverse("judging:judge", args=[assignment.pk, 1]), RELEVANT)
    client.force_login(organiser)
    url = reverse("judging:document_history", args=[assignment.topic.pk, "301-d0"])
    page = client.get(url).content.decode()
    assert "Machine label shown" in page
    assert f"{MACHINE_NAME}: " in page


def test_the_api_hands_out_the_same_next_document(assessor_client, setup):
    pool, _, assignment = setup
    url = reverse("api-assignment-next", args=[assignment.pk])
    assert assessor_client.get(url).json()["docno"] == "301-d0"
    services.policy_machine_use_update(pool=pool, queue_order="machine_first", post_edit=True)
    body = assessor_client.get(url).json()
    assert (body["docno"], body["position"]) == ("301-d1", 2)
    assert_nothing_leaks(json.dumps(body), MACHINE_NAME, "test-model", "relevance")


def test_machine_first_orders_an_overlap_queue_too(setup, assessor2):
    from judging.core.overlap import OverlapSpec
    from judging.models import Assignment

    pool, _, assignment = setup
    services.assignments_create(
        pool=pool, topics=pool.campaign.topics.filter(topic_id="302"), assessors=[assessor2]
    )
    services.overlap_assign(
        pool=pool,
        spec=OverlapSpec(k=2, fraction=1.0, seed=1),
        assessors=[assignment.assessor, assessor2],
    )
    overlap = Assignment.objects.get(
        assessor=assessor2, kind=Assignment.OVERLAP, topic__topic_id="301"
    )
    in_queue = list(overlap.queue().values_list("docno", flat=True))
    services.policy_machine_use_update(pool=pool, queue_order="machine_first", post_edit=False)
    order = order_of_work(overlap)
    unsettled = [d for d in in_queue if d in {"301-d1", "301-d2", "301-d4"}]
    assert order == unsettled + [d for d in in_queue if d not in unsettled]
