"""manage.py codiesp, scifact and nugget_scores: output, JSON shape, exit status."""

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
NUGGETS = GOLDEN / "nuggets" / "hand_small" / "assignments.jsonl"


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


@pytest.mark.parametrize("command", ["codiesp", "scifact", "nugget_scores"])
def test_commands_from_the_shell_exit_2_on_bad_input(tmp_path, command):
    empty = tmp_path / "empty"
    empty.write_text("")
    if command == "codiesp":
        arguments = ["--subtask", "P", "--gold", empty, "--pred", empty, "--codes", empty]
    elif command == "scifact":
        arguments = ["--labels", empty, "--preds", empty]
    else:
        arguments = ["--assignments", empty]
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


# --------------------------------------------------------------------------
# nugget_scores


def test_nugget_scores_json_has_every_run_and_every_topic_at_full_precision():
    data = json.loads(_call("nugget_scores", "--assignments", NUGGETS, "--format", "json"))
    official = json.loads((NUGGETS.parent / "nuggetizer.json").read_text())
    assert list(data) == ["runs", "per_topic"]
    assert [list(run) for run in data["runs"]] == [
        [
            "run",
            "n_topics",
            "all",
            "strict_all",
            "vital",
            "strict_vital",
            "weighted",
            "strict_weighted",
        ]
    ] * 2
    assert [(run["run"], run["n_topics"], run["vital"]) for run in data["runs"]] == [
        (theirs["run_id"], n, theirs["vital_score"])
        for theirs, n in zip(official["runs"], (2, 1), strict=True)
    ]
    assert [(row["run"], row["topic"], row["all"]) for row in data["per_topic"]] == [
        (theirs["run_id"], theirs["qid"], theirs["all_score"]) for theirs in official["per_record"]
    ]
    assert data["runs"][0]["weighted"] == (2 / 3 + 0.75) / 2


def test_nugget_scores_text_is_a_table_of_runs_and_q_adds_the_topics():
    lines = _call("nugget_scores", "--assignments", NUGGETS).splitlines()
    assert lines == [
        "run\tn_topics\tall\tstrict_all\tvital\tstrict_vital\tweighted\tstrict_weighted",
        "a\t2\t0.6875\t0.5000\t0.3750\t0.2500\t0.7083\t0.5000",
        "b\t1\t0.2500\t0.0000\t0.0000\t0.0000\t0.1667\t0.0000",
    ]
    per_topic = _call("nugget_scores", "--assignments", NUGGETS, "-q").splitlines()
    assert per_topic[:3] == lines
    assert per_topic[3:] == [
        "",
        "run\ttopic\tall\tstrict_all\tvital\tstrict_vital\tweighted\tstrict_weighted",
        "a\t1\t0.6250\t0.5000\t0.7500\t0.5000\t0.6667\t0.5000",
        "a\t2\t0.7500\t0.5000\t0.0000\t0.0000\t0.7500\t0.5000",
        "b\t1\t0.2500\t0.0000\t0.0000\t0.0000\t0.1667\t0.0000",
    ]


def test_nugget_scores_bad_input_exits_2_naming_every_file_line_and_reason(tmp_path):
    good = NUGGETS.read_text().splitlines()
    bad = tmp_path / "assignments.jsonl"
    bad.write_text(
        "\n".join(
            [
                good[0],
                good[0],
                good[1].replace('"partial_support"', '"Partial"'),
                "{oops",
                json.dumps({"qid": "5", "run_id": "a"}),
            ]
        )
        + "\n"
    )
    with pytest.raises(CommandError) as error:
        _call("nugget_scores", "--assignments", bad)
    assert error.value.returncode == 2
    assert str(error.value).splitlines() == [
        f"{bad}:2: run 'a' answers topic '1' again (first on line 1); nuggetizer would count both",
        f"{bad}:3: nuggets[0]: assignment 'Partial' is not one of support, partial_support,"
        " not_support (nuggetizer counts it as not_support)",
        f"{bad}:4: not valid JSON: Expecting property name enclosed in double quotes at column 2",
        f'{bad}:5: no "nuggets": every record lists its nuggets (an empty list for none)',
    ]


def test_nugget_scores_missing_file_exits_2(tmp_path):
    with pytest.raises(CommandError, match="no such file") as error:
        _call("nugget_scores", "--assignments", tmp_path / "nosuch.jsonl")
    assert error.value.returncode == 2
