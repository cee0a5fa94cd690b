"""Machine assessors as a second assessor (issue 25 item 6): the agreement page, API
and command count them like any assessor, marked as machines, with an option to leave
them out; the flagging of assessors, the adjudication queue and the final labels stay
human only; the humans' final labels by each machine's labels."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse

from judging import machine_services, selectors, services
from judging.core import agreement
from judging.machine_selectors import machine_labels_frame
from tests.judging.machine_helpers import make_chat_machine, make_machine_pool

pytestmark = pytest.mark.django_db

# Three documents per topic: 301-d0..d2, 302-d0..d2.
ALICE = {"301": (2, 0, 1), "302": (0, 0, 2)}
BOB = {"301": (2, 0, 0), "302": (1, 0, 2)}
LLM = {"301": (1, 0, 0), "302": (0, 2, 2)}


def labels_of(relevance: int) -> dict[str, int]:
    if relevance == 0:
        return {"relevance": 0, "effectiveness": -1, "credibility": -1}
    return {"relevance": relevance, "effectiveness": 1, "credibility": 1}


def judge(campaign, who, grades) -> None:
    for topic in campaign.topics.all():
        for i, rel in enumerate(grades[topic.topic_id]):
            aspects = {} if rel == 0 else {"effectiveness": 1, "credibility": 1}
            services.judgment_record(
                assessor=who,
                topic=topic,
                docno=f"{topic.topic_id}-d{i}",
                relevance=rel,
                aspects=aspects,
            )


def give_machine_labels(machine, grades) -> None:
    labels = {}
    for topic in machine.campaign.topics.all():
        for i, rel in enumerate(grades[topic.topic_id]):
            labels[(topic.pk, f"{topic.topic_id}-d{i}")] = labels_of(rel)
    machine_services.machine_judgments_store(machine=machine, labels=labels)


@pytest.fixture
def judged(assessor, assessor2):
    campaign, pool = make_machine_pool()
    judge(campaign, assessor, ALICE)
    judge(campaign, assessor2, BOB)
    return campaign, pool


@pytest.fixture
def with_machine(judged):
    campaign, pool = judged
    machine = make_chat_machine(campaign, "http://127.0.0.1:9/v1")
    give_machine_labels(machine, LLM)
    return campaign, pool, machine


def test_machines_take_part_like_any_assessor_when_the_pool_has_their_labels(with_machine):
    _campaign, pool, machine = with_machine
    username = machine.account.username
    report = selectors.agreement_report(pool)
    assert report.machines == {username: "llm (machine)"}
    # The same statistics as a frame in which the machine is one more assessor.
    table = pd.concat(
        [selectors.judgments_frame(pool), machine_labels_frame(pool)], ignore_index=True
    )
    aspects = selectors.schema_aspects(pool)
    expected = agreement.pairwise_agreement(table, aspects=aspects)
    pd.testing.assert_frame_equal(report.pairs, expected)
    pd.testing.assert_frame_equal(report.groups, agreement.group_agreement(table, aspects=aspects))
    with_llm = report.pairs[(report.pairs.assessor_b == username)]
    assert set(with_llm.aspect) == {a.name for a in aspects}  # every statistic per aspect
    assert set(with_llm.assessor_a) == {"alice", "bob"}


def test_machines_can_be_left_out_and_a_pool_without_machine_labels_has_none(with_machine):
    _campaign, pool, machine = with_machine
    humans_only = selectors.agreement_report(pool, machines=False)
    assert humans_only.machines == {}
    assert machine.account.username not in set(humans_only.labels.assessor)
    assert set(humans_only.pairs.assessor_a) | set(humans_only.pairs.assessor_b) == {
        "alice",
        "bob",
    }
    other_campaign, other_pool = make_machine_pool("plain")
    make_chat_machine(other_campaign, "http://127.0.0.1:9/v1")  # a machine, no labels
    assert selectors.agreement_report(other_pool).machines == {}


def test_flagging_disagreements_and_final_labels_stay_human_only(judged):
    campaign, pool = judged
    before = {
        "assessors": selectors.agreement_report(pool).assessors,
        "queue": selectors.disagreements(pool),
        "final": selectors.final_labels(pool),
    }
    machine = make_chat_machine(campaign, "http://127.0.0.1:9/v1")
    give_machine_labels(machine, LLM)  # disagrees with both humans on several documents
    report = selectors.agreement_report(pool)
    assert report.machines  # the machine is in the pairs...
    pd.testing.assert_frame_equal(report.assessors, before["assessors"])  # ...not in the flags
    assert machine.account.username not in set(report.assessors.assessor)
    queue = selectors.disagreements(pool)
    pd.testing.assert_frame_equal(queue, before["queue"])
    for who in queue.assessors:
        assert machine.account.username not in who
    final = selectors.final_labels(pool)
    pd.testing.assert_frame_equal(final, before["final"])
    assert all(machine.account.username not in who for who in final.assessors)


def test_the_report_cache_follows_the_machine_labels(with_machine):
    _campaign, pool, machine = with_machine
    first = selectors.agreement_report(pool)
    give_machine_labels(machine, ALICE)  # the machine now agrees with alice everywhere
    second = selectors.agreement_report(pool)
    row = second.pairs[
        (second.pairs.scope == "campaign")
        & (second.pairs.aspect == "relevance")
        & (second.pairs.statistic == "observed_agreement")
        & (second.pairs.assessor_a == "alice")
        & (second.pairs.assessor_b == machine.account.username)
    ]
    assert row.value.tolist() == [1.0]
    assert first.labels.relevance.tolist() != second.labels.relevance.tolist()


def test_the_humans_final_labels_by_machine_labels(with_machine):
    _campaign, pool, _machine = with_machine
    report = selectors.agreement_report(pool)
    matrices = selectors.human_machine_matrices(pool, report, aspect="relevance")
    assert len(matrices) == 1
    (matrix,) = matrices
    # Final labels under the default policy: alice and bob disagree on 301-d2 (1/0)
    # and 302-d0 (0/1); computed by hand from the final labels themselves.
    final = selectors.final_labels(pool).set_index(["query_id", "doc_id"]).relevance
    expected = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
    for (topic, docno), human in final.items():
        expected[human][LLM[topic][int(docno[-1])]] += 1
    assert matrix["values"] == [0, 1, 2]
    assert matrix["counts"] == expected
    assert matrix["n"] == 6
    assert matrix["name"] == "llm (machine)"
    every = selectors.human_machine_matrices(pool, report)
    assert [m["aspect"] for m in every] == [a.name for a in report.aspects]


def test_the_page_names_machines_and_shows_their_matrix(client, organiser, with_machine):
    _campaign, pool, machine = with_machine
    client.force_login(organiser)
    url = reverse("judging:pool_agreement", args=[pool.pk])
    page = client.get(url).content.decode()
    assert "llm (machine)" in page
    assert 'id="human-machine"' in page
    assert "never enter the flagging of assessors" in page
    left_out = client.get(url, {"machines": "0"}).content.decode()
    assert "llm (machine)" not in left_out
    assert 'id="human-machine"' not in left_out
    assert '<option value="0" selected>left out</option>' in left_out
    pair = client.get(
        url, {"a": "alice", "b": machine.account.username, "aspect": "relevance"}
    ).content.decode()
    assert "Confusion matrix: alice (rows) by llm (machine) (columns)" in pair


def test_the_api_marks_machines_and_can_leave_them_out(client, organiser, with_machine):
    _campaign, pool, machine = with_machine
    username = machine.account.username
    client.force_login(organiser)
    url = reverse("api-pool-agreement", args=[pool.pk])
    body = client.get(url).json()
    assert body["machines"] is True
    assert {r["assessor"]: r["is_machine"] for r in body["raters"]} == {
        "alice": False,
        "bob": False,
        username: True,
    }
    machine_pairs = [p for p in body["campaign_pairs"] if p["assessor_b"] == username]
    assert machine_pairs
    assert all(p["is_machine_b"] and not p["is_machine_a"] for p in machine_pairs)
    assert {a["assessor"] for a in body["assessors"]} <= {"alice", "bob"}
    assert {(m["machine"], m["aspect"]) for m in body["human_machine"]} == {
        (username, a) for a in body["aspects"]
    }
    left_out = client.get(url, {"machines": "0"}).json()
    assert left_out["machines"] is False
    assert left_out["human_machine"] == []
    assert all(not r["is_machine"] for r in left_out["raters"])


def test_the_command_names_machines_and_leaves_them_out_on_request(with_machine):
    _campaign, pool, machine = with_machine

    def run(*extra: str) -> str:
        out = io.StringIO()
        call_command("agreement", "--pool", str(pool.pk), *extra, stdout=out)
        return out.getvalue()

    default = run()
    assert "alice|llm (machine)" in default
    assert machine.account.username not in default
    without = run("--no-machines")
    assert "(machine)" not in without
    assert without == run("--no-machines", "--format", "text")
    lines = json.loads(run("--format", "json"))
    assert any("llm (machine)" in line["raters"] for line in lines)
