"""Machine help on answer judging (issue 27 item 6): nugget proposals, machine
labels, the assessor's pre-fill (and no leak without it), machines in the
agreement, the command. Chat through a real loopback server with scripted replies."""

from __future__ import annotations

import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from judging import answer_machine_services as ams
from judging import answer_selectors, answer_services
from judging.core import nugget_prompt
from judging.machine_client import EndpointUnreachable
from judging.machine_selectors import machine_spend
from judging.models import (
    AnswerAssignment,
    AnswerJudgment,
    AnswerJudgmentEvent,
    MachineSample,
    NuggetList,
)
from pooling.models import Answer
from scoring.answer_selectors import nugget_scores
from tests.helpers import make_answer_campaign, make_nuggets
from tests.judging.chat_server import ChatServer, Reply
from tests.judging.machine_helpers import fast, make_chat_machine
from workbench.models import Job

pytestmark = pytest.mark.django_db

NUGGETS = json.dumps(
    [
        {"text": "The sky is blue by Rayleigh scattering", "importance": "vital"},
        {"text": "Sunsets are red", "importance": "okay"},
    ]
)


def scripted(labels: list[str] | None = None):
    """Nuggets for a nugget request, else `labels` cut to the request's nugget count."""

    def reply(body):
        text = body["messages"][-1]["content"]
        if "Nuggets:" not in text:
            return Reply(content=NUGGETS)
        count = int(re.search(r"JSON list of (\d+) labels", text).group(1))
        chosen = (labels or ["support", "partial_support", "not_support"]) * count
        return Reply(content=json.dumps(chosen[:count]))

    return reply


@pytest.fixture
def campaign():
    return make_answer_campaign()


def topic_of(campaign, topic_id="1"):
    return campaign.topics.get(topic_id=topic_id)


# --------------------------------------------------------------------------
# Proposals


def test_a_chat_proposal_is_a_new_version_by_the_machine_beside_the_human_one(campaign):
    topic = topic_of(campaign)
    human = make_nuggets(topic)
    with ChatServer(scripted()) as server:
        machine = make_chat_machine(campaign, server.url)
        result = ams.machine_nuggets_propose(
            machine=machine, campaign=campaign, topics=["1"], endpoint=fast(machine)
        )
    assert (result.done, result.failed, result.versions) == (1, 0, {"1": 2})
    assert len(server.requests) == 1
    sent = server.requests[0]["messages"][-1]["content"]
    assert "run-a says one thing." in sent
    assert "run-c says one thing." in sent
    proposed = answer_services.current_nuggets(topic)
    assert proposed.version == 2
    assert proposed.created_by == machine.account
    assert proposed.note == (
        f"machine pre-fill by llm (test-model, prompt {nugget_prompt.NUGGET_VERSION})"
    )
    assert [n.importance for n in proposed.nuggets.order_by("position")] == ["vital", "okay"]
    assert NuggetList.objects.get(pk=human.pk).nuggets.count() == 2  # untouched
    sample = MachineSample.objects.get(machine=machine)
    assert (sample.docno, sample.ok, sample.tokens_in) == ("nuggets", True, 100)
    assert sample.raw_reply == NUGGETS
    spend = machine_spend(campaign)  # beside the human budget, as the pools' requests
    assert (spend.requests, spend.tokens_in, spend.tokens_out) == (1, 100, 5)


def test_a_bad_reply_is_asked_once_more_then_recorded_as_a_failure_with_its_raw_text(campaign):
    with ChatServer(lambda body: Reply(content="I think the nuggets are many.")) as server:
        machine = make_chat_machine(campaign, server.url)
        result = ams.machine_nuggets_propose(
            machine=machine, campaign=campaign, topics=["1"], endpoint=fast(machine)
        )
    assert len(server.requests) == 2
    assert (result.done, result.failed, dict(result.reasons)) == (0, 1, {"not JSON": 1})
    assert not NuggetList.objects.exists()
    sample = MachineSample.objects.get()
    assert not sample.ok
    assert sample.failure == "not JSON"
    assert sample.requests == 2
    assert sample.raw_reply == "I think the nuggets are many."


def test_a_fenced_reply_on_the_second_ask_is_used(campaign):
    with ChatServer(lambda body: Reply(content="```json\n" + NUGGETS + "\n```")) as server:
        server.queue.append(Reply(content='[{"text": "x", "importance": "major"}]'))
        machine = make_chat_machine(campaign, server.url)
        result = ams.machine_nuggets_propose(
            machine=machine, campaign=campaign, topics=["1"], endpoint=fast(machine)
        )
    assert (result.done, result.failed, result.requests) == (1, 0, 2)


def test_an_unreachable_endpoint_fails_before_anything_is_stored(campaign):
    make_nuggets(topic_of(campaign))
    machine = make_chat_machine(campaign, "http://127.0.0.1:9/v1")
    with pytest.raises(EndpointUnreachable):
        ams.machine_answers_assign(machine=machine, campaign=campaign, endpoint=fast(machine))
    assert not AnswerJudgment.objects.exists()
    assert not MachineSample.objects.exists()


def test_the_lexical_baseline_proposes_from_the_answers_sentences(campaign):
    machine = ams.machine_named(campaign=campaign, name="baseline")
    result = ams.machine_nuggets_propose(machine=machine, campaign=campaign, topics=["2"])
    assert result.done == 1
    proposed = answer_services.current_nuggets(topic_of(campaign, "2"))
    assert proposed.note == "machine pre-fill by baseline (lexical-overlap, prompt overlap-1)"
    assert proposed.created_by == machine.account
    assert ams.is_machine_version(proposed)


# --------------------------------------------------------------------------
# Machine labels


def _assign_chat(campaign, labels=None):
    with ChatServer(scripted(labels)) as server:
        machine = make_chat_machine(campaign, server.url)
        result = ams.machine_answers_assign(
            machine=machine, campaign=campaign, endpoint=fast(machine)
        )
    return machine, result, server


def test_machine_labels_are_the_machines_judgments_with_provenance(campaign):
    nuggets = make_nuggets(topic_of(campaign))
    machine, result, server = _assign_chat(campaign)
    assert result.skipped_topics == ["2"]  # no nuggets yet
    assert (result.done, result.failed, len(server.requests)) == (3, 0, 3)
    judgments = AnswerJudgment.objects.filter(assessor=machine.account)
    assert judgments.count() == 3
    judgment = judgments.first()
    assert judgment.labels == ["support", "partial_support"]
    assert judgment.nugget_list == nuggets
    assert judgment.provenance["machine"] == "llm"
    assert judgment.provenance["model"] == "test-model"
    assert judgment.provenance["prompt_version"] == nugget_prompt.ASSIGN_VERSION
    assert judgment.provenance["raw_reply"] == '["support", "partial_support"]'
    assert judgment.provenance["tokens_in"] == 100
    assert not AnswerAssignment.objects.filter(assessor=machine.account).exists()
    # a run again sends nothing for what is labelled against the same version
    with ChatServer(scripted()) as again_server:
        machine.base_url = again_server.url
        machine.save()
        again = ams.machine_answers_assign(
            machine=machine, campaign=campaign, endpoint=fast(machine)
        )
    assert (again.done, again.unchanged, len(again_server.requests)) == (0, 3, 0)


def test_a_machine_is_never_given_an_answer_assignment(campaign):
    machine = ams.machine_named(campaign=campaign, name="baseline")
    with pytest.raises(answer_services.AnswerLabelError, match="machine assessor"):
        answer_services.answer_assignment_create(topic=topic_of(campaign), assessor=machine.account)


def test_scores_agreement_and_adjudication_leave_the_machines_labels_out(campaign, assessor):
    topic = topic_of(campaign)
    make_nuggets(topic)
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    first = Answer.objects.get(pk=assignment.answer_ids()[0])
    answer_services.answer_judgment_record(
        assignment=assignment, answer=first, labels=["not_support", "not_support"]
    )
    _assign_chat(campaign, ["support"])  # the machine says support everywhere
    scores = nugget_scores(campaign).result
    assert [row.scores["all"] for row in scores.per_topic] == [0.0]  # the human's only
    people = answer_selectors.answer_agreement(campaign, "nuggets", machines=False)
    assert set(people.labels["assessor"]) == {"alice"}
    assert people.machines == {}
    assert people.confusion == []
    assert answer_selectors.answer_disagreements(campaign, "nuggets") == []
    # As on the relevance agreement: machines with labels take part unless left out.
    both = answer_selectors.answer_agreement(campaign, "nuggets")
    assert both.machines == {"machine.rag.llm": "llm"}
    [confusion] = both.confusion
    assert confusion["n_items"] == 2
    assert confusion["matrix"]["not"]["support"] == 2
    pairs = both.pairs[both.pairs.scope == "campaign"]
    assert {tuple(sorted((r.assessor_a, r.assessor_b))) for r in pairs.itertuples()} == {
        ("alice", "machine.rag.llm")
    }


def test_the_lexical_baseline_labels_by_term_coverage(campaign):
    topic = topic_of(campaign)
    make_nuggets(
        topic,
        (
            ("vital", "says one thing"),  # 3 of 3 terms: support
            ("vital", "says one thing loudly today"),  # 3 of 5 = 0.6: partial
            ("okay", "penguins fly south"),  # none: not
        ),
    )
    machine = ams.machine_named(campaign=campaign, name="baseline")
    result = ams.machine_answers_assign(machine=machine, campaign=campaign, topics=["1"])
    assert result.done == 3
    labels = AnswerJudgment.objects.filter(assessor=machine.account).values_list(
        "labels", flat=True
    )
    assert list(labels) == [["support", "partial_support", "not_support"]] * 3


# --------------------------------------------------------------------------
# Pre-fill on the assessor's page


def _prefilled(campaign, assessor, *, on: bool):
    topic = topic_of(campaign)
    make_nuggets(topic)
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    machine = ams.machine_named(campaign=campaign, name="baseline")
    # the machine's labels: support, then not_support, on every answer
    ams._store_labels(
        machine,
        answer_services.current_nuggets(topic),
        {
            pk: (["support", "not_support"], {"machine": "baseline"})
            for pk in assignment.answer_ids()
        },
    )
    if on:
        assert ams.answer_prefill_set(campaign=campaign, machine=machine, topics=[topic]) == 1
    assignment.refresh_from_db()
    return assignment, machine


def test_a_prefilled_page_starts_from_the_machines_labels_and_says_so(
    assessor_client, campaign, assessor
):
    assignment, _machine = _prefilled(campaign, assessor, on=True)
    url = reverse("judging:answer_judge", args=[assignment.pk, 1])
    text = assessor_client.get(url).content.decode()
    assert "Pre-filled by a machine: check every label" in text
    assert 'name="n1" value="support" data-key="s" checked' in text
    assert 'name="n2" value="not_support" data-key="n" checked' in text
    assert 'name="prefilled_from" value="machine.rag.baseline"' in text
    assert "data-prefilled" in text
    response = assessor_client.post(
        url,
        {
            "nugget_list": answer_services.current_nuggets(assignment.topic).pk,
            "n1": "support",
            "n2": "partial_support",
            "seconds": "3",
            "prefilled_from": "machine.rag.baseline",
        },
    )
    assert response.status_code == 302
    judgment = AnswerJudgment.objects.get(assessor=assessor)
    assert judgment.prefilled_from == "machine.rag.baseline"
    assert judgment.labels == ["support", "partial_support"]
    assert AnswerJudgmentEvent.objects.get(assessor=assessor).prefilled_from == (
        "machine.rag.baseline"
    )


def test_without_prefill_the_assessor_never_sees_the_machines_labels(
    assessor_client, campaign, assessor
):
    assignment, machine = _prefilled(campaign, assessor, on=False)
    for position in (1, 2, 3):
        text = assessor_client.get(
            reverse("judging:answer_judge", args=[assignment.pk, position])
        ).content.decode()
        assert "checked" not in text
        assert "machine" not in text.lower()
        assert "data-prefilled" not in text
    # a forged pre-fill field is not recorded either
    assessor_client.post(
        reverse("judging:answer_judge", args=[assignment.pk, 1]),
        {
            "nugget_list": answer_services.current_nuggets(assignment.topic).pk,
            "n1": "support",
            "n2": "support",
            "prefilled_from": machine.account.username,
        },
    )
    assert AnswerJudgment.objects.get(assessor=assessor).prefilled_from == ""


def test_another_assessors_page_stays_unfilled_after_the_prefill_is_turned_off(
    assessor_client, campaign, assessor
):
    assignment, _machine = _prefilled(campaign, assessor, on=True)
    ams.answer_prefill_set(campaign=campaign, machine=None)
    text = assessor_client.get(
        reverse("judging:answer_judge", args=[assignment.pk, 1])
    ).content.decode()
    assert "Pre-filled" not in text
    assert "checked" not in text


# --------------------------------------------------------------------------
# Organiser pages and API


def test_the_nuggets_page_offers_machine_proposals_and_the_baseline_runs_inline(
    organiser_client, campaign
):
    topic = topic_of(campaign)
    make_chat_machine(campaign, "http://127.0.0.1:9/v1")
    url = reverse("judging:nuggets_edit", args=[campaign.slug, topic.pk])
    text = organiser_client.get(url).content.decode()
    assert "Propose nuggets with llm" in text
    assert "Propose nuggets with baseline" in text
    response = organiser_client.post(
        reverse("judging:nuggets_propose", args=[campaign.slug, topic.pk]),
        {"machine": "baseline"},
        follow=True,
    )
    text = response.content.decode()
    assert response.status_code == 200
    assert "The current version is a machine's proposal" in text
    assert "machine pre-fill by baseline" in text
    # the organiser's edit makes the next, human version
    organiser_client.post(url, {"text": "vital: A fact\nokay: Another", "note": "checked"})
    current = answer_services.current_nuggets(topic)
    assert current.version == 2
    assert not ams.is_machine_version(current)


def test_a_chat_proposal_from_the_page_is_a_job(
    organiser_client, campaign, django_capture_on_commit_callbacks
):
    topic = topic_of(campaign)
    with ChatServer(scripted()) as server:
        machine = make_chat_machine(campaign, server.url)
        with django_capture_on_commit_callbacks(execute=True):
            response = organiser_client.post(
                reverse("judging:nuggets_propose", args=[campaign.slug, topic.pk]),
                {"machine": machine.pk},
            )
    assert response.status_code == 302
    job = Job.objects.get()
    assert job.state == Job.DONE, job.error
    assert job.result["done"] == 1
    assert answer_services.current_nuggets(topic).created_by == machine.account


def test_the_answers_page_sets_the_prefill_and_labels_with_the_baseline(
    organiser_client, campaign, assessor
):
    topic = topic_of(campaign)
    make_nuggets(topic)
    answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    machine = ams.machine_named(campaign=campaign, name="baseline")
    url = reverse("judging:answers_machine", args=[campaign.slug])
    response = organiser_client.post(url, {"action": "assign", "machine": machine.pk})
    assert response.status_code == 302
    assert AnswerJudgment.objects.filter(assessor=machine.account).count() == 3
    response = organiser_client.post(url, {"action": "prefill", "machine": machine.pk}, follow=True)
    assert "1 nugget assignment(s) pre-filled by baseline" in response.content.decode()
    assert AnswerAssignment.objects.get().prefill == machine
    organiser_client.post(url, {"action": "prefill", "machine": ""})
    assert AnswerAssignment.objects.get().prefill is None
    bad = organiser_client.post(url, {"action": "nonsense", "machine": machine.pk})
    assert bad.status_code == 400


def test_the_agreement_page_and_api_mark_machines_and_leave_them_out_on_request(
    organiser_client, campaign, assessor
):
    topic = topic_of(campaign)
    make_nuggets(topic)
    assignment = answer_services.answer_assignment_create(topic=topic, assessor=assessor)
    for pk in assignment.answer_ids():
        answer_services.answer_judgment_record(
            assignment=assignment, answer=Answer.objects.get(pk=pk), labels=["support", "support"]
        )
    machine = ams.machine_named(campaign=campaign, name="baseline")
    ams.machine_answers_assign(machine=machine, campaign=campaign)
    url = reverse("judging:answers_agreement", args=[campaign.slug])
    people = organiser_client.get(url + "?machines=0").content.decode()
    assert "machine.rag.baseline" not in people
    assert "People and machines (1)" in people
    both = organiser_client.get(url).content.decode()
    assert "Humans versus machines" in both
    assert 'machine.rag.baseline <span class="badge machine">machine</span>' in both
    api = reverse("api-answer-agreement", args=[campaign.slug])
    data = organiser_client.get(api + "?machines=0").json()
    assert data["machines"] == []
    assert data["confusion"] == []
    data = organiser_client.get(api).json()
    assert data["machines"] == ["machine.rag.baseline"]
    assert data["confusion"][0]["n_items"] == 6


# --------------------------------------------------------------------------
# The command


def test_the_command_proposes_and_assigns_with_the_baseline(campaign, capsys):
    call_command("machine_nuggets", "--campaign", "rag", "--machine", "baseline", "--propose")
    out = capsys.readouterr().out
    assert "proposed nuggets in rag" in out
    assert "done: 2" in out
    call_command(
        "machine_nuggets", "--campaign", "rag", "--machine", "baseline", "--assign", "--topics", "1"
    )
    out = capsys.readouterr().out
    assert "labelled answers" in out
    assert "done: 3" in out


def test_the_command_labels_through_a_chat_machine(campaign, capsys):
    make_nuggets(topic_of(campaign))
    with ChatServer(scripted()) as server:
        make_chat_machine(campaign, server.url)
        call_command("machine_nuggets", "--campaign", "rag", "--machine", "llm", "--assign")
    out = capsys.readouterr().out
    assert "done: 3" in out
    assert "requests: 3" in out
    assert "tokens in/out: 300/15" in out


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--campaign", "nope", "--machine", "baseline", "--propose"], "no such campaign"),
        (["--campaign", "rag", "--machine", "ghost", "--propose"], "has no machine 'ghost'"),
        (
            ["--campaign", "rag", "--machine", "baseline", "--assign", "--topics", "9"],
            "unknown topics: 9",
        ),
    ],
)
def test_the_command_refuses_bad_input_with_exit_2(campaign, args, reason):
    with pytest.raises(CommandError, match=reason) as error:
        call_command("machine_nuggets", *args)
    assert error.value.returncode == 2


def test_a_missing_key_fails_before_anything_is_sent(campaign, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with ChatServer(scripted()) as server:
        make_chat_machine(campaign, server.url, api_key_env="NO_SUCH_KEY_VAR")
        with pytest.raises(CommandError, match="NO_SUCH_KEY_VAR"):
            call_command("machine_nuggets", "--campaign", "rag", "--machine", "llm", "--propose")
    assert server.requests == []


def test_the_adjudication_page_lists_the_peoples_labels_only(
    organiser_client, campaign, assessor, assessor2
):
    topic = topic_of(campaign)
    nuggets = make_nuggets(topic)
    for person, label in ((assessor, "support"), (assessor2, "not_support")):
        assignment = answer_services.answer_assignment_create(topic=topic, assessor=person)
        first = Answer.objects.get(pk=assignment.answer_ids()[0])
        answer_services.answer_judgment_record(
            assignment=assignment, answer=first, labels=[label, label]
        )
    ams.machine_answers_assign(
        machine=ams.machine_named(campaign=campaign, name="baseline"), campaign=campaign
    )
    [disagreement] = answer_selectors.answer_disagreements(campaign, "nuggets")
    assert {j.assessor.username for j in disagreement.judgments} == {"alice", "bob"}
    url = reverse("judging:answer_adjudicate", args=[campaign.slug, first.pk])
    text = organiser_client.get(url, {"version": nuggets.pk}).content.decode()
    assert "alice" in text
    assert "machine.rag.baseline" not in text


@pytest.mark.parametrize("on", [True, False])
def test_the_api_gives_the_prefill_only_when_it_is_on_and_records_it(
    assessor_client, campaign, assessor, on
):
    assignment, machine = _prefilled(campaign, assessor, on=on)
    next_url = reverse("api-answer-assignment-next", args=[assignment.pk])
    data = assessor_client.get(next_url).json()
    if on:
        assert data["prefill"] == {
            "machine": "machine.rag.baseline",
            "labels": ["support", "not_support"],
        }
    else:
        assert data["prefill"] is None
        assert "support" not in json.dumps({k: v for k, v in data.items() if k != "nuggets"})
    put = assessor_client.put(
        reverse("api-answer-labels", args=[assignment.pk, data["answer"]]),
        {
            "labels": ["support", "support"],
            "nugget_list": data["nugget_list"],
            "prefilled_from": machine.account.username,
        },
        content_type="application/json",
    )
    assert put.status_code == 200
    judgment = AnswerJudgment.objects.get(assessor=assessor)
    assert judgment.prefilled_from == (machine.account.username if on else "")


def test_machine_labels_of_an_older_nugget_version_are_not_prefilled(
    assessor_client, campaign, assessor
):
    assignment, _machine = _prefilled(campaign, assessor, on=True)
    make_nuggets(assignment.topic, (("vital", "A new fact"), ("okay", "Another")))  # version 2
    text = assessor_client.get(
        reverse("judging:answer_judge", args=[assignment.pk, 1])
    ).content.decode()
    assert "Pre-filled" not in text
    assert "checked" not in text
