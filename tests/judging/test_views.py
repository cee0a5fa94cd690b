"""The judging screen and the organiser's assignment pages."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from judging import services
from judging.models import Assignment, Judgment, JudgmentEvent
from tests.helpers import (
    assert_nothing_leaks,
    hide_values_in_pool_entries,
    make_campaign,
    make_documents,
    make_pool,
    make_replanned_assignments,
)

pytestmark = pytest.mark.django_db

RELEVANT = {"relevance": "2", "effectiveness": "3", "credibility": "1"}


@pytest.fixture
def assignment(assessor) -> Assignment:
    campaign = make_campaign(guidelines="Read the whole document.")
    make_documents(campaign, ["d1", "d2", "d3", "d9"])
    pool = make_pool(campaign, {"301": ["d1", "d2", "d3"], "302": ["d9"]})
    # Give the pool entries the kind of data an assessor must never see.
    hide_values_in_pool_entries(pool)
    return services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )[0]


def judge_url(assignment: Assignment, position: int) -> str:
    return reverse("judging:judge", args=[assignment.pk, position])


def test_home_lists_assignments_with_progress(assessor_client, assignment):
    services.judgment_submit(assignment=assignment, docno="d1", relevance=0, aspects={})
    page = assessor_client.get(reverse("judging:assessor_home")).content.decode()
    assert "Topic 301: Topic 301 title" in page
    assert "1 / 3 judged" in page
    assert reverse("judging:judge_next", args=[assignment.pk]) in page
    assert "302" not in page


def test_continue_jumps_to_the_first_unjudged_document(assessor_client, assignment):
    services.judgment_submit(assignment=assignment, docno="d1", relevance=0, aspects={})
    response = assessor_client.get(reverse("judging:judge_next", args=[assignment.pk]))
    assert response.url == judge_url(assignment, 2)


def test_judging_page_shows_topic_document_guidelines_and_position(assessor_client, assignment):
    page = assessor_client.get(judge_url(assignment, 2)).content.decode()
    assert "Document <strong>2</strong> of 3" in page
    assert "What about 301?" in page
    assert "Read the whole document." in page
    assert "Text of d2." in page
    assert "Highly relevant (2)" in page
    assert 'data-key="e"' in page


def test_query_terms_are_highlighted(assessor_client, assignment):
    assignment.topic.title = "text"
    assignment.topic.save()
    page = assessor_client.get(judge_url(assignment, 1)).content.decode()
    assert "<mark>Text</mark> of d1." in page


def test_pages_never_show_ranks_runs_scores_strata_or_others_labels(
    assessor_client, assignment, assessor2
):
    other = services.assignments_create(
        pool=assignment.pool,
        topics=assignment.pool.campaign.topics.filter(topic_id="302"),
        assessors=[assessor2],
    )[0]
    services.judgment_submit(
        assignment=other, docno="d9", relevance=2, aspects={"effectiveness": 3, "credibility": 1}
    )
    pages = [
        assessor_client.get(reverse("judging:assessor_home")),
        assessor_client.get(judge_url(assignment, 1)),
        assessor_client.get(reverse("judging:judged_list", args=[assignment.pk])),
    ]
    for page in (p.content.decode() for p in pages):
        assert_nothing_leaks(page)


def test_another_assessors_assignment_is_404(client, assignment, assessor2):
    client.force_login(assessor2)
    for url in (
        judge_url(assignment, 1),
        reverse("judging:judge_next", args=[assignment.pk]),
        reverse("judging:judged_list", args=[assignment.pk]),
    ):
        assert client.get(url).status_code == 404
    response = client.post(judge_url(assignment, 1), RELEVANT)
    assert response.status_code == 404
    assert client.post(reverse("judging:judge_undo", args=[assignment.pk])).status_code == 404
    assert not Judgment.objects.exists()


def test_post_saves_and_redirects_to_the_next_unjudged(assessor_client, assignment):
    response = assessor_client.post(judge_url(assignment, 1), {**RELEVANT, "seconds": "7.5"})
    assert response.url == judge_url(assignment, 2)
    judgment = Judgment.objects.get()
    assert (judgment.docno, judgment.relevance, judgment.aspects, judgment.seconds) == (
        "d1",
        2,
        {"effectiveness": 3, "credibility": 1},
        7.5,
    )


def test_htmx_post_returns_the_next_document_panel_and_pushes_its_url(assessor_client, assignment):
    response = assessor_client.post(
        judge_url(assignment, 1), {"relevance": "0"}, headers={"HX-Request": "true"}
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert response.headers["HX-Push-Url"] == judge_url(assignment, 2)
    assert page.lstrip().startswith('<div id="judge" class="judge">')
    assert "Text of d2." in page
    assert "<html" not in page


def test_missing_aspect_is_rejected_with_a_message_and_nothing_stored(assessor_client, assignment):
    response = assessor_client.post(
        judge_url(assignment, 1), {"relevance": "1", "effectiveness": "2"}
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "Credibility is required when Relevance is 1" in page
    # The posted choices stay selected for the assessor to complete.
    assert re.search(r'name="effectiveness" value="2" data-key="c" checked', page)
    assert not Judgment.objects.exists()
    assert not JudgmentEvent.objects.exists()


def test_value_outside_the_schema_is_rejected(assessor_client, assignment):
    response = assessor_client.post(judge_url(assignment, 1), {"relevance": "7"})
    assert response.status_code == 400
    assert (
        "Relevance must be one of 0 (Not relevant), 1 (Relevant), 2 (Highly relevant); got 7"
        in response.content.decode()
    )
    assert not Judgment.objects.exists()


def test_double_submit_keeps_one_judgment_and_counts_its_time_once(assessor_client, assignment):
    for _ in range(2):
        assessor_client.post(judge_url(assignment, 1), {**RELEVANT, "seconds": "7.5"})
    assert Judgment.objects.count() == 1
    assert JudgmentEvent.objects.count() == 1
    assert Judgment.objects.get().seconds == 7.5


def test_reopening_a_judged_document_marks_its_labels_without_choosing_them(
    assessor_client, assignment
):
    """A revision starts from an incomplete form, like a first judgment."""
    assessor_client.post(judge_url(assignment, 1), RELEVANT)
    page = assessor_client.get(judge_url(assignment, 1)).content.decode()
    assert "You judged this document before" in page
    assert " checked" not in page
    earlier = re.findall(r'<span class="previous">([^<]+)<small class="was">earlier', page)
    assert earlier == ["Highly relevant (2) ", "Effective (e) ", "Credible (k) "]


def test_undo_shows_the_undone_document_again(assessor_client, assignment):
    assessor_client.post(judge_url(assignment, 1), RELEVANT)
    assessor_client.post(judge_url(assignment, 2), {"relevance": "0"})
    response = assessor_client.post(
        reverse("judging:judge_undo", args=[assignment.pk]), headers={"HX-Request": "true"}
    )
    assert response.headers["HX-Push-Url"] == judge_url(assignment, 2)
    assert "Undone: d2." in response.content.decode()
    assert list(Judgment.objects.values_list("docno", flat=True)) == ["d1"]


def test_undo_with_nothing_to_undo_says_so(assessor_client, assignment):
    response = assessor_client.post(
        reverse("judging:judge_undo", args=[assignment.pk]), follow=True
    )
    assert "Nothing to undo." in response.content.decode()


def test_judged_list_links_to_reopen_each_document(assessor_client, assignment):
    assessor_client.post(judge_url(assignment, 3), RELEVANT)
    page = assessor_client.get(
        reverse("judging:judged_list", args=[assignment.pk])
    ).content.decode()
    assert "Relevance: Highly relevant · Effectiveness: Effective · Credibility: Credible" in page
    assert judge_url(assignment, 3) in page


def test_a_replan_leaves_the_assessor_every_label_she_made_to_see_and_revise(
    assessor_client, assessor
):
    replanned = make_replanned_assignments(assessor)
    home = assessor_client.get(reverse("judging:assessor_home")).content.decode()
    for mine in replanned.values():
        queue = set(mine["assignment"].queue().values_list("docno", flat=True))
        assert f"{len(mine['judged'])} / {len(queue | mine['judged'])} judged" in home

    mine = replanned["1"]
    assignment = mine["assignment"]
    listed = assessor_client.get(reverse("judging:judged_list", args=[assignment.pk]))
    page = listed.content.decode()
    assert all(docno in page for docno in mine["judged"])
    out = sorted(mine["out"])[0]
    reopen = reverse("judging:judge_document", args=[assignment.pk, out])
    assert reopen in page

    shown = assessor_client.get(reopen).content.decode()
    assert "took this document out of your queue" in shown
    assert "You judged this document before" in shown
    assert f"read {out}" in shown  # her note
    response = assessor_client.post(reopen, {"relevance": "0"})
    assert response.status_code == 302
    revised = Judgment.objects.get(assessor=assessor, topic=assignment.topic, docno=out)
    assert revised.relevance == 0
    assert JudgmentEvent.objects.filter(docno=out, action=JudgmentEvent.UPDATE).exists()

    undone = assessor_client.post(
        reverse("judging:judge_undo", args=[assignment.pk]), headers={"HX-Request": "true"}
    )
    assert undone.headers["HX-Push-Url"] == reopen  # the same document, shown again
    revised.refresh_from_db()
    assert revised.relevance == 1

    # One still in the queue opens at its place in it.
    kept = sorted(mine["judged"] - mine["out"])[0]
    position = assignment.queue().get(docno=kept).position
    by_docno = reverse("judging:judge_document", args=[assignment.pk, kept])
    assert assessor_client.get(by_docno).url == judge_url(assignment, position)


def test_a_set_aside_document_a_replan_dropped_is_listed_as_out_of_the_queue(
    assessor_client, assessor
):
    replanned = make_replanned_assignments(assessor)
    mine = replanned["2"]
    assert mine["dropped"]
    page = assessor_client.get(
        reverse("judging:judged_list", args=[mine["assignment"].pk])
    ).content.decode()
    row = re.search(rf'<tr data-set-aside="{mine["set_aside"]}">.*?</tr>', page, re.S).group()
    assert "No longer in your queue" in row
    assert "Reopen to judge" not in row


def test_only_the_assessors_own_documents_open_by_docno(assessor_client, assignment):
    url = reverse("judging:judge_document", args=[assignment.pk, "d9"])  # another topic's
    assert assessor_client.get(url).status_code == 404
    unjudged = reverse("judging:judge_document", args=[assignment.pk, "d2"])
    assert assessor_client.get(unjudged).url == judge_url(assignment, 2)


def test_done_page_when_everything_is_judged(assessor_client, assignment):
    for position in (1, 2, 3):
        assessor_client.post(judge_url(assignment, position), {"relevance": "0"})
    response = assessor_client.get(reverse("judging:judge_next", args=[assignment.pk]))
    assert "All 3 documents of this topic are judged." in response.content.decode()


def test_position_outside_the_queue_goes_to_continue(assessor_client, assignment):
    response = assessor_client.get(judge_url(assignment, 99))
    assert response.url == reverse("judging:judge_next", args=[assignment.pk])


def test_document_without_text_says_so(assessor_client, assignment):
    assignment.pool.campaign.documents.filter(docno="d1").delete()
    page = assessor_client.get(judge_url(assignment, 1)).content.decode()
    assert "has not been loaded" in page


# --------------------------------------------------------------------------
# Organisers


def test_organiser_assigns_topics_from_the_page(organiser_client, assessor, assessor2):
    campaign = make_campaign(topics=("1", "2"))
    pool = make_pool(campaign, {"1": ["a", "b"], "2": ["c"]})
    url = reverse("judging:pool_assignments", args=[pool.pk])
    topics = [t.pk for t in campaign.topics.all()]
    response = organiser_client.post(
        url, {"topics": topics, "assessors": [assessor.pk, assessor2.pk]}, follow=True
    )
    page = response.content.decode()
    assert "2 assignment(s) in place." in page
    assert sorted(Assignment.objects.values_list("topic__topic_id", "assessor__username")) == [
        ("1", "alice"),
        ("2", "bob"),
    ]
    assert "0 / 2" in page
    assert "0 / 1" in page


def test_assignment_clash_is_reported(organiser_client, assessor, assessor2):
    campaign = make_campaign(topics=("1",))
    pool = make_pool(campaign, {"1": ["a"]})
    services.assignments_create(pool=pool, topics=campaign.topics.all(), assessors=[assessor])
    response = organiser_client.post(
        reverse("judging:pool_assignments", args=[pool.pk]),
        {"topics": [campaign.topics.get().pk], "assessors": [assessor2.pk]},
        follow=True,
    )
    assert "topic 1 already has primary assessor alice" in response.content.decode()


def test_document_history_shows_every_change(organiser_client, assignment):
    services.judgment_submit(
        assignment=assignment,
        docno="d1",
        relevance=1,
        aspects={"effectiveness": 1, "credibility": 0},
    )
    services.judgment_submit(assignment=assignment, docno="d1", relevance=0, aspects={})
    page = organiser_client.get(
        reverse("judging:document_history", args=[assignment.topic.pk, "d1"])
    ).content.decode()
    assert page.count("<td>alice</td>") == 3
    assert "Judged" in page
    assert "Revised" in page


def test_assessors_cannot_open_organiser_judging_pages(assessor_client, assignment):
    assert (
        assessor_client.get(
            reverse("judging:pool_assignments", args=[assignment.pool.pk])
        ).status_code
        == 403
    )
    assert (
        assessor_client.get(
            reverse("judging:document_history", args=[assignment.topic.pk, "d1"])
        ).status_code
        == 403
    )


def test_assessors_list_names_the_pool_and_leaves_out_retired_pools(
    assessor_client, assessor, assignment
):
    from pooling import pool_services

    campaign = assignment.topic.campaign
    assessor_client.post(judge_url(assignment, 1), RELEVANT)
    rebuilt = make_pool(campaign, {"301": ["d1", "d3"]}, name="depth 60 after the cut")
    services.assignments_create(pool=rebuilt, topics=[assignment.topic], assessors=[assessor])
    page = assessor_client.get(reverse("judging:assessor_home")).content.decode()
    assert page.count("Topic 301:") == 2
    assert "TREC-X · pool" in page
    assert "TREC-X · depth 60 after the cut" in page
    assert "overlap" not in page.lower(), "an assessor is not told which topics are overlap"

    pool_services.pool_retire(pool=assignment.pool)
    page = assessor_client.get(reverse("judging:assessor_home")).content.decode()
    assert page.count("Topic 301:") == 1
    assert "TREC-X · depth 60 after the cut" in page
    assert assessor_client.get(judge_url(assignment, 2)).status_code == 404
    assert assessor_client.post(judge_url(assignment, 2), RELEVANT).status_code == 404
    # The judgment made in the retired pool stays and counts in the new one.
    assert Judgment.objects.filter(docno="d1").exists()
    new_assignment = Assignment.objects.get(pool=rebuilt)
    assert new_assignment.progress() == (1, 2)


@pytest.mark.parametrize("seconds", ["abc", "-3", "nan"])
def test_an_active_time_that_is_not_a_number_of_seconds_is_refused(
    assessor_client, assignment, seconds
):
    response = assessor_client.post(judge_url(assignment, 1), {**RELEVANT, "seconds": seconds})
    assert response.status_code == 400
    assert "The active time sent is not a number." in response.content.decode()
    assert not Judgment.objects.exists()
