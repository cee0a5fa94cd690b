"""Commands of generated answers: bad input exits 2 with file:line and stores nothing."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from judging.models import NuggetList
from pooling.models import AnswerRun
from tests.helpers import answer_file, answer_line, make_answer_campaign

pytestmark = pytest.mark.django_db


def test_import_generated_answers_stores_the_runs(tmp_path):
    campaign = make_answer_campaign(runs=())
    path = tmp_path / "answers.jsonl"
    path.write_bytes(answer_file(("x",)))
    out = io.StringIO()
    call_command("import_generated_answers", "--campaign", campaign.slug, str(path), stdout=out)
    assert "1 run(s) of answers, 2 answers: x" in out.getvalue()
    assert AnswerRun.objects.count() == 1


def test_a_bad_answer_file_exits_2_naming_the_line(tmp_path):
    campaign = make_answer_campaign(runs=())
    path = tmp_path / "bad.jsonl"
    path.write_text(answer_line("x", "1", [("A.", [0])]) + "\n" + "{oops\n")
    with pytest.raises(CommandError) as caught:
        call_command("import_generated_answers", "--campaign", campaign.slug, str(path))
    assert caught.value.returncode == 2
    assert f"{path}:2" in str(caught.value)
    assert not AnswerRun.objects.exists()


def test_nuggets_are_imported_and_exported(tmp_path):
    campaign = make_answer_campaign()
    path = tmp_path / "nuggets.jsonl"
    record = {"qid": "2", "query": "q", "nuggets": [{"text": "Fact", "importance": "vital"}]}
    path.write_text(json.dumps(record) + "\n")
    call_command(
        "nuggets", "--campaign", campaign.slug, "--import", str(path), stdout=io.StringIO()
    )
    out = io.StringIO()
    call_command("nuggets", "--campaign", campaign.slug, stdout=out)
    assert json.loads(out.getvalue()) == {
        "qid": "2",
        "query": "Topic 2 title",
        "nuggets": [{"text": "Fact", "importance": "vital"}],
    }
    path.write_text(json.dumps({**record, "qid": "nope"}) + "\n")
    with pytest.raises(CommandError) as caught:
        call_command("nuggets", "--campaign", campaign.slug, "--import", str(path))
    assert caught.value.returncode == 2
    assert NuggetList.objects.count() == 1
