"""A generated-answers campaign's scores: the numbers `manage.py nugget_scores` prints
for the same labels, on the page, the exports and the API."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from judging import answer_services
from pooling.models import Answer
from scoring import answer_selectors
from tests.helpers import make_answer_campaign, make_nuggets

pytestmark = pytest.mark.django_db

LABELS = {
    ("run-a", "1"): ["support", "partial_support", "not_support"],
    ("run-b", "1"): ["partial_support", "support", "support"],
    ("run-c", "1"): ["not_support", "not_support", "partial_support"],
    ("run-a", "2"): ["support", "partial_support"],
    ("run-b", "2"): ["not_support", "not_support"],
    # run-c's answer to topic 2 is not judged: it is not in run-c's mean
}
NUGGETS = {
    "1": (("vital", "V1"), ("okay", "O1"), ("vital", "V2")),
    "2": (("okay", "O1"), ("okay", "O2")),  # no vital nugget: vital scores 0.0
}


@pytest.fixture
def judged(assessor):
    campaign = make_answer_campaign()
    for topic in campaign.topics.all():
        make_nuggets(topic, NUGGETS[topic.topic_id])
        assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
        for answer in Answer.objects.filter(topic=topic).select_related("run"):
            labels = LABELS.get((answer.run.tag, topic.topic_id))
            if labels:
                answer_services.answer_judgment_record(
                    assignment=assignment, answer=answer, labels=labels
                )
    return campaign


def _command_json() -> dict:
    """The same labels in nuggetizer's assign layout, scored by the command."""
    lines = [
        json.dumps(
            {
                "qid": topic,
                "run_id": run,
                "nuggets": [
                    {"text": text, "importance": importance, "assignment": label}
                    for (importance, text), label in zip(NUGGETS[topic], labels, strict=True)
                ],
            }
        )
        for (run, topic), labels in LABELS.items()
    ]
    return lines


def test_the_campaigns_scores_are_the_commands(judged, tmp_path):
    path = tmp_path / "assignments.jsonl"
    path.write_text("\n".join(_command_json()) + "\n")
    out = io.StringIO()
    call_command("nugget_scores", "--assignments", str(path), "--format", "json", stdout=out)
    expected = json.loads(out.getvalue())
    from scoring.core.tasks import nuggets

    assert nuggets.as_json(answer_selectors.nugget_scores(judged).result) == expected
    assert [r["n_topics"] for r in expected["runs"]] == [2, 2, 1]
    topic2 = [row for row in expected["per_topic"] if row["topic"] == "2"]
    assert all(row["vital"] == 0.0 for row in topic2)


def test_the_api_and_the_exports_give_the_same_numbers(judged, organiser_client):
    expected = answer_selectors.nugget_scores(judged)
    api = organiser_client.get(f"/api/campaigns/{judged.slug}/nugget-scores/").json()
    from scoring.core.tasks import nuggets

    assert api == {
        **nuggets.as_json(expected.result),
        "unjudged": {"run-a": 0, "run-b": 0, "run-c": 1},
    }
    exported = organiser_client.get(
        reverse("scoring:answer_scores_export", args=[judged.slug, "json"])
    )
    assert json.loads(exported.content) == nuggets.as_json(expected.result)
    tsv = organiser_client.get(reverse("scoring:answer_scores_export", args=[judged.slug, "tsv"]))
    assert tsv.content.decode().splitlines() == nuggets.text_lines(expected.result, per_topic=True)
    page = organiser_client.get(
        reverse("scoring:answer_scores", args=[judged.slug])
    ).content.decode()
    run_a = next(r for r in expected.result.runs if r.run == "run-a")
    assert f"{run_a.scores['all']:.4f}" in page


def test_a_judgment_is_scored_against_the_nugget_version_it_used(judged):
    before = answer_selectors.nugget_scores(judged).result
    topic = judged.topics.get(topic_id="2")
    make_nuggets(topic, (("vital", "O1"), ("vital", "O2")))  # a later edit, nobody re-judged
    assert answer_selectors.nugget_scores(judged).result == before


def test_the_first_assigned_assessor_counts_and_a_later_one_changes_nothing(judged, assessor2):
    before = answer_selectors.nugget_scores(judged).result
    topic = judged.topics.get(topic_id="1")
    second = answer_services.answer_assignment_create(topic=topic, assessor=assessor2)
    for answer in Answer.objects.filter(topic=topic):
        answer_services.answer_judgment_record(
            assignment=second, answer=answer, labels=["support"] * 3
        )
    assert answer_selectors.nugget_scores(judged).result == before


def test_citation_support_scores_come_from_the_citation_core(assessor, organiser_client):
    from scoring.core.tasks import citations

    campaign = make_answer_campaign(runs=("run-a", "run-b"), topics=("1",))
    topic = campaign.topics.get()
    assignment = answer_services.answer_assignment_create(
        topic=topic, assessor=assessor, task="citations"
    )
    labels = {"run-a": [["full"], ["partial", "no"]], "run-b": [["no"], ["no", "no"]]}
    for answer in Answer.objects.select_related("run"):
        answer_services.answer_judgment_record(
            assignment=assignment, answer=answer, labels=labels[answer.run.tag]
        )
    api = organiser_client.get(f"/api/campaigns/{campaign.slug}/citation-scores/").json()
    assert api["runs"][0] == {
        "run": "run-a",
        "n_answers": 1,
        **citations.run_support([citations.answer_support(labels["run-a"])]),
    }
    assert api["runs"][0]["precision"] == pytest.approx(0.5)


def test_a_ranked_campaign_has_no_nugget_scores(organiser_client):
    from tests.helpers import make_campaign

    campaign = make_campaign("ranked")
    assert organiser_client.get(f"/api/campaigns/{campaign.slug}/nugget-scores/").status_code == 404


def test_the_leaderboard_ranks_the_runs_by_any_nugget_or_citation_measure(judged, organiser_client):
    from scoring.core.tasks import nuggets

    url = reverse("scoring:answer_leaderboard", args=[judged.slug])
    response = organiser_client.get(url, {"measure": "strict_all", "test": "t"})
    assert response.status_code == 200
    board = response.context["board"]
    # run-c has no judged answer to topic 2: that topic is left out for every run
    assert board.topics == ("1",)
    assert [e.topic for e in board.excluded] == ["2"]
    per_topic = nuggets.as_json(answer_selectors.nugget_scores(judged).result)["per_topic"]
    expected = {r["run"]: r["strict_all"] for r in per_topic if r["topic"] == "1"}
    assert {row.run: row.mean for row in board.runs} == expected
    svg = organiser_client.get(
        reverse("scoring:answer_leaderboard_plot", args=[judged.slug, "box"]),
        {"measure": "strict_all"},
    )
    assert svg.status_code == 200
    assert svg["Content-Type"].startswith("image/svg")
    tsv = organiser_client.get(url, {"measure": "all", "download": "tsv"})
    assert tsv.status_code == 200
    bad = organiser_client.get(url, {"measure": "map"})
    assert bad.status_code == 400
    assert "is not one of" in bad.content.decode()
    nothing = organiser_client.get(url, {"measure": "precision"})
    assert nothing.status_code == 400
