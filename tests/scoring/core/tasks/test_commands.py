"""manage.py codiesp and manage.py scifact: output, JSON shape, exit status."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

ROOT = Path(__file__).resolve().parents[4]
GOLDEN = Path(__file__).parent / "golden"
HAND = GOLDEN / "codiesp" / "hand_small"
HAND_X = GOLDEN / "codiesp-x" / "hand_small"
WORKED = GOLDEN / "scifact" / "worked_example"


def _call(*arguments: object) -> str:
    out = io.StringIO()
    call_command(*map(str, arguments), stdout=out)
    return out.getvalue()


def _ranked(*extra: object) -> list[object]:
    return [
        "codiesp",
        *("--subtask", "D", "--gold", HAND / "gold.tsv", "--pred", HAND / "pred.tsv"),
        *("--codes", HAND / "codes.tsv", *extra),
    ]


def _x(*extra: object) -> list[object]:
    return [
        "codiesp",
        *("--subtask", "X", "--gold", HAND_X / "gold.tsv", "--pred", HAND_X / "pred.tsv"),
        *("--codes", HAND_X / "codes_D.tsv", "--codes", HAND_X / "codes_P.tsv", *extra),
    ]


def test_codiesp_text_prints_the_official_summary_and_which_mean():
    out = _call(*_ranked())
    assert out.splitlines() == [
        "MAP estimate: 0.472",
        "MAP mean: official, over the 3 cases with at least one valid prediction"
        " (a case missing from the gold counts 0)",
        "Micro-average precision = 0.571",
        "Micro-average recall = 1.0",
        "Micro-average F-score = 0.727",
    ]


def test_codiesp_average_gold_is_the_mean_over_every_gold_case():
    out = _call(*_ranked("--average", "gold"))
    assert out.splitlines()[:2] == [
        "MAP estimate: 0.708",  # (2.75/3 + 1/2) / 2
        "MAP mean: gold, over the 2 gold cases (a case without valid predictions counts 0;"
        " trec_eval -c)",
    ]


def test_codiesp_q_adds_a_line_per_case():
    lines = _call(*_ranked("-q")).splitlines()
    assert lines[:4] == [
        "case\tap\tprecision\trecall\tf1",
        "a\t0.917\t0.75\t1.0\t0.857",
        "b\t0.5\t0.5\t1.0\t0.667",
        "c\t0.0\tnan\tnan\tnan",
    ]


def test_codiesp_json_has_full_precision_and_null_for_nan():
    data = json.loads(_call(*_ranked("--format", "json")))
    assert list(data) == [
        "map",
        "average",
        "cases_averaged",
        "precision",
        "recall",
        "f1",
        "per_document",
        "extras",
    ]
    assert list(data["extras"]) == [
        "category_precision",
        "category_recall",
        "category_f1",
        "learning_accuracy",
    ]
    assert data["map"] == (2.75 / 3 + 0.5 + 0.0) / 3
    assert (data["average"], data["cases_averaged"]) == ("official", 3)
    assert data["per_document"]["a"] == {
        "ap": 2.75 / 3,
        "precision": 0.75,
        "recall": 1.0,
        "f1": 2 * 0.75 * 1.0 / 1.75,
    }
    assert data["per_document"]["c"] == {"ap": 0.0, "precision": None, "recall": None, "f1": None}


def test_codiesp_x_json_shape():
    data = json.loads(_call(*_x("--format", "json")))
    assert list(data) == ["precision", "recall", "f1", "per_document"]
    assert data["per_document"]["b"] == {"precision": None, "recall": None, "f1": None}
    assert data["per_document"]["c"] == {"precision": None, "recall": 0.0, "f1": None}


def test_codiesp_x_text():
    assert _call(*_x()).splitlines() == [
        "Micro-average precision = 0.5",
        "Micro-average recall = 0.5",
        "Micro-average F-score = 0.5",
    ]


def test_codiesp_x_has_no_average_option():
    with pytest.raises(CommandError, match="--average applies to the D and P") as error:
        _call(*_x("--average", "gold"))
    assert error.value.returncode == 2


def test_codiesp_bad_input_exits_2_naming_file_and_line(tmp_path):
    (tmp_path / "run.tsv").write_text("a\tx1\na\t1 2\tx1\n")
    arguments = _ranked()
    arguments[6] = tmp_path / "run.tsv"
    with pytest.raises(CommandError) as error:
        _call(*arguments)
    assert error.value.returncode == 2
    assert str(error.value).startswith(f"{tmp_path}/run.tsv:2: expected 2 tab-separated columns")


def test_codiesp_missing_file_exits_2(tmp_path):
    arguments = _ranked()
    arguments[4] = tmp_path / "nosuch.tsv"
    with pytest.raises(CommandError, match="no such file") as error:
        _call(*arguments)
    assert error.value.returncode == 2


def test_scifact_json_is_the_evaluators_keys_at_full_precision():
    data = json.loads(
        _call(
            "scifact",
            "--labels",
            WORKED / "claims.jsonl",
            "--preds",
            WORKED / "preds.jsonl",
            "--format",
            "json",
        )
    )
    assert data == json.loads((WORKED / "metrics.json").read_text())
    assert list(data)[:3] == [
        "abstract_label_only_precision",
        "abstract_label_only_recall",
        "abstract_label_only_f1",
    ]
    assert data["sentence_label_f1"] == 2 * 0.2 * 0.25 / 0.45


def test_scifact_text_is_a_table():
    out = _call("scifact", "--labels", WORKED / "claims.jsonl", "--preds", WORKED / "preds.jsonl")
    assert out.splitlines()[1].split() == ["abstract_label_only", "0.5000", "0.5000", "0.5000"]


def test_scifact_bad_input_exits_2(tmp_path):
    (tmp_path / "preds.jsonl").write_text(
        '{"id": 4, "evidence": {"7": {"sentences": [1], "label": "REFUTES"}}}\n'
    )
    with pytest.raises(CommandError) as error:
        _call("scifact", "--labels", WORKED / "claims.jsonl", "--preds", tmp_path / "preds.jsonl")
    assert error.value.returncode == 2
    assert ":1: claim 4, abstract 7: label 'REFUTES' is neither SUPPORT nor CONTRADICT" in str(
        error.value
    )


@pytest.mark.parametrize("command", ["codiesp", "scifact"])
def test_commands_from_the_shell_exit_2_on_bad_input(tmp_path, command):
    empty = tmp_path / "empty"
    empty.write_text("")
    if command == "codiesp":
        arguments = ["--subtask", "P", "--gold", empty, "--pred", empty, "--codes", empty]
    else:
        arguments = ["--labels", empty, "--preds", empty]
    completed = subprocess.run(
        [sys.executable, "manage.py", command, *map(str, arguments)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert str(empty) in completed.stderr
    assert "Traceback" not in completed.stderr
