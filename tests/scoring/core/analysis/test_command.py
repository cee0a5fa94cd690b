"""manage.py leaderboard: end to end in a subprocess, and its core `main` in process."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from scoring.core.analysis.cli import main

ROOT = Path(__file__).resolve().parents[4]
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 a 1\n2 0 d 1\n3 0 e 1\n3 0 a 0\n"
RUNS = {
    "one": "1 Q0 a 1 3 one\n1 Q0 b 2 2 one\n2 Q0 d 1 3 one\n3 Q0 e 1 1 one\n",
    "two": "1 Q0 b 1 3 two\n1 Q0 a 2 2 two\n2 Q0 a 1 3 two\n",  # no topic 3
    "three": "1 Q0 c 1 3 three\n1 Q0 a 2 2 three\n2 Q0 d 1 3 three\n3 Q0 a 1 3 three\n3 Q0 e 2 2 three\n",
}


@pytest.fixture
def files(tmp_path) -> list[str]:
    (tmp_path / "qrels").write_text(QRELS)
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    return ["--qrels", str(tmp_path / "qrels"), *(str(tmp_path / name) for name in RUNS)]


def _manage(*arguments: object) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "manage.py", "leaderboard", *map(str, arguments)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def _main(*arguments: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(arguments), out, err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


def test_json(files):
    completed = _manage(*files, "--test", "all", "--format", "json", "--resamples", "100")
    assert (completed.returncode, completed.stderr) == (0, "")
    data = json.loads(completed.stdout)
    assert data["measure"] == "map"
    assert [run["run"] for run in data["runs"]] == ["three", "one", "two"]
    assert {run["n_topics"] for run in data["runs"]} == {2}  # topic 3 left out
    assert set(data["runs"][0]) >= {"run", "mean", "n_topics", "ci_low", "ci_high"}
    assert len(data["pairs"]) == 3 * 5
    assert {pair["test"] for pair in data["pairs"]} == {
        "t",
        "wilcoxon",
        "sign",
        "randomization",
        "tukey",
    }
    assert set(data["pairs"][0]) >= {"a", "b", "test", "statistic", "p_value", "p_adjusted"}
    assert data["excluded"][0]["topic"] == "3"
    assert data["excluded"][0]["runs"] == ["two"]


def test_latex(files):
    completed = _manage(*files, "--format", "latex", "-m", "P.5")
    assert completed.returncode == 0
    assert "\\toprule" in completed.stdout
    assert "P\\_5" in completed.stdout


def test_complete_scores_the_missing_topic_instead(files):
    status, out, _ = _main(*files, "-c", "--format", "json")
    data = json.loads(out)
    assert status == 0
    assert data["excluded"] == []
    assert {run["n_topics"] for run in data["runs"]} == {3}


def test_text_is_the_default(files):
    status, out, err = _main(*files)
    assert (status, err) == (0, "")
    assert out.startswith("map over 2 topics (1 left out)\n")


def test_call_command_with_a_run_first(files):
    out = io.StringIO()
    call_command("leaderboard", *files[2:], *files[:2], "--format", "tsv", stdout=out)
    assert out.getvalue().startswith("rank\trun\tmean")


def test_help():
    status, out, _ = _main("--help")
    assert status == 0
    assert out.startswith("usage: leaderboard")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"qrels": "missing"},
            "leaderboard: cannot read '{dir}/missing': No such file or directory",
        ),
        (
            {"run": "1 Q0 a\n"},
            "leaderboard: {dir}/one:1: expected 6 columns (topic Q0 docno rank score tag), found 3",
        ),
        ({"option": ["-m", "nosuch"]}, "leaderboard: unknown measure 'nosuch'"),
        ({"option": ["-m", "gm_map"]}, "leaderboard: measure 'gm_map' has no per-topic values"),
        ({"option": ["--alpha", "1.5"]}, "leaderboard: alpha must be between 0 and 1, got 1.5"),
        (
            {"option": ["--resamples", "x"]},
            "leaderboard: argument --resamples: invalid int value: 'x'",
        ),
        (
            {"run": "1 Q0 a 1 3 two\n"},
            "leaderboard: {dir}/two: the tag 'two' is the tag of {dir}/one too (a leaderboard names runs by tag)",
        ),
    ],
)
def test_bad_input_is_one_line_and_status_2(files, tmp_path, change, message):
    arguments = list(files)
    if "qrels" in change:
        arguments[1] = str(tmp_path / change["qrels"])
    if "run" in change:
        (tmp_path / "one").write_text(change["run"])
    arguments += change.get("option", [])
    status, out, err = _main(*arguments)
    assert (status, out) == (2, "")
    assert err == message.format(dir=tmp_path) + "\n"


def test_bad_input_through_manage_py_has_no_traceback(tmp_path, files):
    (tmp_path / "one").write_text("1 Q0 a 1 x one\n")
    completed = _manage(*files)
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.count("\n") == 1
    assert completed.stderr.startswith(f"leaderboard: {tmp_path}/one:1: ")
