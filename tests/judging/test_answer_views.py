"""The pages of answer judging: the organiser's (answers, nuggets, assignments) and
the assessor's (one answer beside the nuggets, keyboard-driven, run hidden)."""

from __future__ import annotations

import html
import io
import json

import pytest
from django.urls import reverse

from judging import answer_selectors, answer_services
from judging.models import AnswerAssignment, AnswerJudgment, NuggetList
from pooling.models import Answer, AnswerRun
from tests.helpers import answer_file, answer_line, make_answer_campaign, make_nuggets

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    return make_answer_campaign()


def _file(data: bytes, name: str) -> io.BytesIO:
    upload = io.BytesIO(data)
    upload.name = name
    return upload


# --------------------------------------------------------------------------
# Organiser


def test_the_organiser_uploads_answers_and_sees_the_runs(organiser_client):
    campaign = make_answer_campaign(runs=())
    url = reverse("judging:answers_upload", args=[campaign.slug])
    response = organiser_client.post(url, {"file": _file(answer_file(), "a.jsonl")}, follow=True)
    assert response.status_code == 200
    assert "Stored 3 run(s) of answers (6 answers)" in response.content.decode()
    assert AnswerRun.objects.count() == 3


def test_a_bad_answer_file_is_a_400_naming_file_and_line_and_stores_nothing(organiser_client):
    campaign = make_answer_campaign(runs=())
    data = (
        answer_line("r", "1", [("Fine.", [0])]) + "\n" + answer_line("r", "1", [("x", [9])])
    ).encode()
    url = reverse("judging:answers_upload", args=[campaign.slug])
    response = organiser_client.post(url, {"file": _file(data, "bad.jsonl")})
    assert response.status_code == 400
    text = response.content.decode()
    assert "bad.jsonl:2" in text
    assert "nothing was stored" in text
    assert not AnswerRun.objects.exists()


def test_an_assessor_cannot_reach_the_organiser_pages(assessor_client, campaign):
    response = assessor_client.get(reverse("judging:answers_campaign", args=[campaign.slug]))
    assert response.status_code in (302, 403)


def test_editing_the_nuggets_makes_a_version_and_a_bad_line_is_a_400(organiser_client, campaign):
    topic = campaign.topics.get(topic_id="1")
    url = reverse("judging:nuggets_edit", args=[campaign.slug, topic.pk])
    response = organiser_client.post(url, {"text": "vital: A\nokay: B", "note": "first"})
    assert response.status_code == 302
    response = organiser_client.post(url, {"text": "okay: B\nvital: A merged with C"})
    assert topic.nugget_lists.count() == 2
    page = organiser_client.get(url).content.decode()
    assert "okay: B\nvital: A merged with C" in page
    assert "Version 1" in page
    response = organiser_client.post(url, {"text": "vital: fine\nno importance"})
    assert response.status_code == 400
    assert "nuggets:2: write" in response.content.decode()
    assert topic.nugget_lists.count() == 2


def test_nuggets_import_and_export_in_nuggetizer_jsonl(organiser_client, campaign):
    data = "\n".join(
        json.dumps(
            {"qid": qid, "query": "q", "nuggets": [{"text": f"fact {qid}", "importance": "vital"}]}
        )
        for qid in ("1", "2")
    ).encode()
    response = organiser_client.post(
        reverse("judging:nuggets_import", args=[campaign.slug]), {"file": _file(data, "n.jsonl")}
    )
    assert response.status_code == 302
    assert NuggetList.objects.count() == 2
    exported = organiser_client.get(reverse("judging:nuggets_export", args=[campaign.slug]))
    lines = [json.loads(line) for line in exported.content.decode().splitlines()]
    assert [(r["qid"], r["nuggets"]) for r in lines] == [
        ("1", [{"text": "fact 1", "importance": "vital"}]),
        ("2", [{"text": "fact 2", "importance": "vital"}]),
    ]
    bad = json.dumps({"qid": "77", "query": "q", "nuggets": []}).encode()
    response = organiser_client.post(
        reverse("judging:nuggets_import", args=[campaign.slug]), {"file": _file(bad, "n.jsonl")}
    )
    assert response.status_code == 400
    assert "n.jsonl:1: topic '77'" in html.unescape(response.content.decode())
    assert NuggetList.objects.count() == 2


def test_the_organiser_assigns_topics_answers(organiser_client, campaign, assessor):
    topics = list(campaign.topics.values_list("pk", flat=True))
    response = organiser_client.post(
        reverse("judging:answer_assign", args=[campaign.slug]),
        {"topics": topics, "assessor": assessor.pk, "task": "nuggets", "seed": 5},
    )
    assert response.status_code == 302
    assert AnswerAssignment.objects.filter(assessor=assessor, seed=5).count() == 2


# --------------------------------------------------------------------------
# Assessor


@pytest.fixture
def assignment(campaign, assessor):
    topic = campaign.topics.get(topic_id="1")
    make_nuggets(topic)
    return answer_services.answer_assignment_create(topic=topic, assessor=assessor, seed=1)


def test_the_assessor_sees_an_answer_beside_the_nuggets_and_no_run(assessor_client, assignment):
    response = assessor_client.get(
        reverse("judging:answer_judge_next", args=[assignment.pk]), follow=True
    )
    text = response.content.decode()
    assert response.status_code == 200
    assert "First fact" in text
    assert "Second fact" in text
    assert "says one thing." in text
    for tag in ("run-a", "run-b", "run-c"):
        text = text.replace(f"{tag} says one thing.", "")  # the answer's own words
        assert tag not in text
    home = assessor_client.get(reverse("judging:assessor_home")).content.decode()
    assert reverse("judging:answer_judge_next", args=[assignment.pk]) in home


def test_saving_moves_on_in_the_seeded_order_until_all_are_judged(assessor_client, assignment):
    queue = answer_selectors.answer_queue(assignment)
    nugget_list = answer_services.current_nuggets(assignment.topic)
    for position in (1, 2, 3):
        url = reverse("judging:answer_judge", args=[assignment.pk, position])
        response = assessor_client.post(
            url,
            {
                "n1": "support",
                "n2": "partial_support",
                "nugget_list": nugget_list.pk,
                "seconds": "2.5",
            },
            headers={"HX-Request": "true"},
        )
        assert response.status_code == 200
    judged = list(AnswerJudgment.objects.order_by("id").values_list("answer_id", flat=True))
    assert judged == queue.ids
    assert "Every answer of this topic is judged" in response.content.decode()


def test_missing_labels_are_a_400_and_save_nothing(assessor_client, assignment):
    nugget_list = answer_services.current_nuggets(assignment.topic)
    url = reverse("judging:answer_judge", args=[assignment.pk, 1])
    response = assessor_client.post(url, {"n1": "support", "nugget_list": nugget_list.pk})
    assert response.status_code == 400
    assert "Not saved" in response.content.decode()
    response = assessor_client.post(url, {"n1": "support", "n2": "support"})
    assert response.status_code == 400
    assert not AnswerJudgment.objects.exists()


def test_another_assessors_assignment_is_a_404(client, assessor2, assignment):
    client.force_login(assessor2)
    assert client.get(reverse("judging:answer_judge", args=[assignment.pk, 1])).status_code == 404


def test_undo_and_cannot_judge_from_the_page(assessor_client, assignment):
    nugget_list = answer_services.current_nuggets(assignment.topic)
    assessor_client.post(
        reverse("judging:answer_judge", args=[assignment.pk, 1]),
        {"n1": "support", "n2": "support", "nugget_list": nugget_list.pk},
    )
    response = assessor_client.post(reverse("judging:answer_undo", args=[assignment.pk]))
    assert response.status_code == 302
    assert response.url == reverse("judging:answer_judge", args=[assignment.pk, 1])
    assert not AnswerJudgment.objects.exists()
    response = assessor_client.post(
        reverse("judging:answer_cannot", args=[assignment.pk, 1]), {"reason": "unreadable"}
    )
    assert response.status_code == 302
    assert answer_selectors.answer_queue(assignment).next_unjudged() == 2


def test_the_citation_page_shows_each_cited_segment_and_takes_its_labels(
    assessor_client, campaign, assessor
):
    topic = campaign.topics.get(topic_id="2")
    assignment = answer_services.answer_assignment_create(
        topic=topic, assessor=assessor, task="citations"
    )
    url = reverse("judging:answer_judge", args=[assignment.pk, 1])
    text = assessor_client.get(url).content.decode()
    assert "Text of seg-1." in text
    assert 'name="c1_1"' in text
    response = assessor_client.post(url, {"c0_0": "full", "c1_0": "partial", "c1_1": "no"})
    assert response.status_code == 302
    assert AnswerJudgment.objects.get().labels == [["full"], ["partial", "no"]]
    assert Answer.objects.filter(topic=topic).count() == 3


def test_deleting_an_answer_run_asks_for_a_confirmation(organiser_client, campaign):
    run = AnswerRun.objects.get(tag="run-a")
    url = reverse("judging:answer_run_delete", args=[campaign.slug, run.pk])
    organiser_client.post(url)
    assert AnswerRun.objects.filter(pk=run.pk).exists()
    organiser_client.post(url, {"confirm": "on"})
    assert not AnswerRun.objects.filter(pk=run.pk).exists()
    assert Answer.objects.count() == 4


def test_the_agreement_page_gives_cohens_kappa_on_the_nugget_labels(
    organiser_client, campaign, assessor, assessor2
):
    from sklearn.metrics import cohen_kappa_score

    topic = campaign.topics.get(topic_id="1")
    make_nuggets(topic)
    labels = {
        assessor: [
            ["support", "not_support"],
            ["partial_support", "support"],
            ["support", "support"],
        ],
        assessor2: [
            ["support", "partial_support"],
            ["partial_support", "support"],
            ["not_support", "support"],
        ],
    }
    answers = list(Answer.objects.filter(topic=topic).order_by("pk"))
    for user, per_answer in labels.items():
        assignment = answer_services.answer_assignment_create(topic=topic, assessor=user)
        for answer, answer_labels in zip(answers, per_answer, strict=True):
            answer_services.answer_judgment_record(
                assignment=assignment, answer=answer, labels=answer_labels
            )
    response = organiser_client.get(
        reverse("judging:answers_agreement", args=[campaign.slug]), {"statistic": "cohen_kappa"}
    )
    assert response.status_code == 200
    [pair] = response.context["campaign_pairs"]
    value = {"support": 2, "partial_support": 1, "not_support": 0}
    a = [value[x] for row in labels[assessor] for x in row]
    b = [value[x] for row in labels[assessor2] for x in row]
    assert pair["value"] == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2]))
    assert pair["n_items"] == 6
    assert response.context["campaign_groups"]


def test_a_disagreement_is_adjudicated_and_the_final_labels_are_scored(
    organiser_client, campaign, assessor, assessor2
):
    from judging.models import AnswerAdjudication
    from scoring.answer_selectors import nugget_scores

    topic = campaign.topics.get(topic_id="1")
    nuggets = make_nuggets(topic)
    answer = Answer.objects.filter(topic=topic).order_by("pk").first()
    for user, labels in (
        (assessor, ["support", "support"]),
        (assessor2, ["not_support", "support"]),
    ):
        assignment = answer_services.answer_assignment_create(topic=topic, assessor=user)
        answer_services.answer_judgment_record(assignment=assignment, answer=answer, labels=labels)
    page = organiser_client.get(reverse("judging:answers_adjudication", args=[campaign.slug]))
    [disagreement] = page.context["disagreements"]
    assert disagreement.answer == answer
    url = reverse("judging:answer_adjudicate", args=[campaign.slug, answer.pk])
    shown = organiser_client.get(url, {"version": nuggets.pk}).content.decode()
    assert "alice: <strong>support</strong>" in shown
    assert answer.run.tag not in shown.replace(f"{answer.run.tag} says", "")  # its own words
    bad = organiser_client.post(f"{url}?task=nuggets", {"version": nuggets.pk, "n1": "support"})
    assert bad.status_code == 400
    assert not AnswerAdjudication.objects.exists()
    response = organiser_client.post(
        url, {"version": nuggets.pk, "n1": "partial_support", "n2": "not_support", "reason": "r"}
    )
    assert response.status_code == 302
    [row] = [r for r in nugget_scores(campaign).result.per_topic if r.run == answer.run.tag]
    assert row.scores["all"] == 0.25  # (0.5 + 0) / 2 nuggets: the final labels, not alice's
