"""Answer runs stored from a TREC 2024 RAG answer file, or nothing."""

from __future__ import annotations

import pytest

from pooling import answer_services
from pooling.models import Answer, AnswerRun, AnswerSentence, Citation
from tests.helpers import answer_file, answer_line, make_answer_campaign, make_campaign
from workbench.core.problems import InputError

pytestmark = pytest.mark.django_db


def test_every_run_answer_sentence_and_citation_is_stored():
    campaign = make_answer_campaign()
    assert sorted(campaign.answer_runs.values_list("tag", flat=True)) == ["run-a", "run-b", "run-c"]
    assert Answer.objects.count() == 6
    answer = Answer.objects.get(run__tag="run-b", topic__topic_id="2")
    assert answer.line == 4
    assert answer.references == [f"seg-{i}" for i in range(5)]
    assert list(answer.sentences.values_list("text", flat=True)) == [
        "run-b says one thing.",
        "And another.",
    ]
    cited = Citation.objects.filter(sentence__answer=answer).order_by(
        "sentence__position", "position"
    )
    assert [(c.sentence.position, c.reference, c.segment) for c in cited] == [
        (0, 0, "seg-0"),
        (1, 1, "seg-1"),
        (1, 2, "seg-2"),
    ]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "2: "),
        (answer_line("r", "1", [("Text.", [7])]), 'outside "references"'),
        (answer_line("r", "99", [("Text.", [0])]), "topic '99' is not a topic of this campaign"),
        (answer_line("run-a", "1", [("Text.", [0])]), "answers topic '1' again (first on line 1)"),
    ],
)
def test_a_bad_line_is_named_and_nothing_is_stored(line, reason):
    campaign = make_campaign("rag", topics=("1", "2"), task_kind="answers")
    data = answer_line("run-a", "1", [("Fine.", [0])]) + "\n" + line + "\n"
    with pytest.raises(InputError) as caught:
        answer_services.answer_runs_import(campaign=campaign, data=data.encode(), name="a.jsonl")
    assert "a.jsonl:2" in str(caught.value)
    assert reason in str(caught.value)
    assert not AnswerRun.objects.exists()
    assert not AnswerSentence.objects.exists()


def test_a_run_tag_already_stored_is_refused_with_its_first_line():
    campaign = make_answer_campaign(runs=("run-a",))
    with pytest.raises(InputError, match=r"again.jsonl:1: run 'run-a' is already stored"):
        answer_services.answer_runs_import(
            campaign=campaign, data=answer_file(("run-a", "run-z")), name="again.jsonl"
        )
    assert AnswerRun.objects.count() == 1


def test_a_ranked_campaign_takes_no_answers():
    campaign = make_campaign("ranked", topics=("1",))
    with pytest.raises(InputError, match="takes no generated answers"):
        answer_services.answer_runs_import(
            campaign=campaign, data=answer_file(topics=("1",)), name="a.jsonl"
        )


def test_stored_answer_runs_lock_the_task_kind():
    from pooling.selectors import campaign_task_kind_lock

    assert "3 answer runs" in campaign_task_kind_lock(make_answer_campaign())


def test_the_cited_segments_can_be_stored_as_ranked_runs_to_pool():
    from pooling.models import Run

    campaign = make_campaign("rag", topics=("1", "2"), task_kind="answers")
    data = "\n".join(
        [
            answer_line("r", "1", [("A.", [2]), ("B.", [0, 2])]),
            answer_line("r", "2", [("Nothing cited.", [])]),
        ]
    )
    answer_services.answer_runs_import(
        campaign=campaign, data=data.encode(), name="a.jsonl", pool_cited=True
    )
    run = Run.objects.get()
    assert (run.tag, run.documents_per_topic) == ("r", {"1": 2})
    assert run.original_file.read().decode() == "1 Q0 seg-0 1 2 r\n1 Q0 seg-2 2 1 r\n"


def test_without_the_choice_no_ranked_run_is_stored():
    from pooling.models import Run

    make_answer_campaign()
    assert not Run.objects.exists()
