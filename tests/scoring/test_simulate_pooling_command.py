"""manage.py simulate_pooling: its JSON as the issue lays it out, the text, the
order and pictures it writes, and bad input (exit 2 with file:line and reason),
through call_command and once as a real process."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.core.pool_simulation_cli import main

ROOT = Path(__file__).resolve().parents[2]
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n1 0 d 1\n1 0 f 1\n2 0 x 1\n2 0 y 0\n"
RUNS = {
    "A": "1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n1 Q0 c 3 1 A\n",
    "B": "1 Q0 c 1 3 B\n1 Q0 d 2 2 B\n1 Q0 e 3 1 B\n2 Q0 x 1 2 B\n2 Q0 z 2 1 B\n",
    "C": "1 Q0 b 1 9 C\n1 Q0 a 2 8 C\n2 Q0 y 1 1 C\n",
}
BUDGET_KEYS = {"budget", "judged", "relevant", "recall", "tau", "tau_ap"}


@pytest.fixture
def files(tmp_path) -> dict[str, str]:
    (tmp_path / "qrels").write_text(QRELS)
    for tag, text in RUNS.items():
        (tmp_path / tag).write_text(text)
    return {"qrels": str(tmp_path / "qrels"), **{tag: str(tmp_path / tag) for tag in RUNS}}


def run_files(files: dict[str, str]) -> list[str]:
    return [files[tag] for tag in RUNS]


def _main(*arguments: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(arguments), out, err, stdin=io.BytesIO())
    return status, out.getvalue(), err.getvalue()


def test_json_is_laid_out_as_the_issue_gives_it(files):
    status, out, err = _main(
        *run_files(files), "--qrels", files["qrels"], "--strategy", "depth,mtf,hedge,bandit,active",
        "--budget", "2,4", "--budget", "100", "--format", "json", "--depth", "all",
    )  # fmt: skip
    assert (status, err) == (0, "")
    data = json.loads(out)
    assert [s["strategy"] for s in data["strategies"]] == [
        "depth",
        "mtf",
        "hedge",
        "bandit",
        "active",
    ]
    for strategy in data["strategies"]:
        assert set(strategy) == {"strategy", "budgets"}
        assert [b["budget"] for b in strategy["budgets"]] == [2, 4, 100]
        for budget in strategy["budgets"]:
            extra = {"estimate"} if strategy["strategy"] == "active" else set()
            assert set(budget) == BUDGET_KEYS | extra
    depth = data["strategies"][0]["budgets"]
    assert depth[-1] == {
        "budget": 100,
        "judged": 8,
        "relevant": 4,
        "recall": 0.8,
        "tau": 1.0,
        "tau_ap": 1.0,
    }
    estimate = data["strategies"][-1]["budgets"][0]["estimate"]
    assert set(estimate) == {
        "rmse", "mean_standard_error", "within_one_se", "within_two_se",
        "pool_rmse", "pool_within_one_se", "pool_within_two_se", "runs",
    }  # fmt: skip
    assert [r["run"] for r in estimate["runs"]] == ["A", "B", "C"]
    assert (data["measure"], data["runs"], data["topics"], data["relevant"]) == ("map", 3, 2, 5)
    assert (data["candidates"], data["relevant_candidates"], data["depth"]) == (8, 4, None)
    assert [(t["team"], t["unique_relevant"]) for t in data["teams"]] == [
        ("A", 0),
        ("B", 2),
        ("C", 0),
    ]
    assert data["teams"][1]["found"]["depth"] == [0, 1, 2]  # x (4th), then d (7th)


def test_text_gives_a_table_per_strategy_and_the_teams(files, tmp_path):
    (tmp_path / "groups").write_text("A\tone\nC\tone\nB\ttwo\n")
    status, out, err = _main(
        *run_files(files), "--qrels", files["qrels"], "--budget", "3,100", "--strategy", "depth,active",
        "--groups", str(tmp_path / "groups"),
    )  # fmt: skip
    assert (status, err) == (0, "")
    assert "3 runs, 2 topics; 8 candidate documents (depth 100), holding 4 of the qrels' 5" in out
    assert "     100        8         4  0.8000  1.0000  1.0000         3" in out
    assert "its map estimate: standard error, and error against map under the qrels" in out
    assert "Relevant documents only one team's runs rank (found at budget 100):" in out
    assert "two       2        2        2" in out


def test_order_and_pictures_are_written_where_asked(files, tmp_path):
    order, svg, png, csv = (tmp_path / name for name in ("order", "c.svg", "c.png", "c.csv"))
    status, _, err = _main(
        *run_files(files), "--qrels", files["qrels"], "--budget", "3", "--strategy", "depth,bandit",
        "--order", str(order), "--plot", str(svg), "--plot", str(png), "--plot", str(csv),
    )  # fmt: skip
    assert (status, err) == (0, "")
    lines = order.read_text().splitlines()
    assert lines[:3] == ["depth 1 c 1", "depth 2 y 2", "depth 1 b 3"]
    assert [line.split()[0] for line in lines] == ["depth"] * 3 + ["bandit"] * 3
    assert (
        "<title>Relevant documents found (equal allocation, depth 100)</title>" in svg.read_text()
    )
    assert png.read_bytes().startswith(b"\x89PNG")
    assert csv.read_text().splitlines()[:3] == [
        "strategy,judgments,relevant",
        "depth,0,0",
        "depth,1,1",
    ]


def test_the_command_runs_through_call_command(files):
    out = io.StringIO()
    call_command(
        "simulate_pooling", *run_files(files), "--qrels", files["qrels"], "--budget", "4",
        "--strategy", "mtf", "--format", "json", stdout=out, stderr=io.StringIO(),
    )  # fmt: skip
    assert json.loads(out.getvalue())["strategies"][0]["budgets"][0]["judged"] == 4


BAD = [
    (
        "qrels",
        "1 0 a 1\n1 0 b\n",
        [],
        "{qrels}:2: expected 4 columns (topic iter docno rel), found 3",
    ),
    ("A", "1 Q0 a 1 3 A\n1 Q0 b 2 two A\n", [], "{A}:2: "),
    (None, None, ["--budget", "0"], "--budget: 0 is not a positive number of judgments"),
    (None, None, ["--budget", "5,-3"], "--budget: -3 is not a positive number of judgments"),
    (None, None, ["--budget", "ten"], "--budget: 'ten' is not a whole number"),
    (None, None, ["--strategy", "depth,greedy"], "--strategy: unknown strategy 'greedy'"),
    (None, None, ["--depth", "0"], "--depth must be at least 1, not 0"),
    (None, None, ["-m", "P"], "-m P has 9 values"),
    (None, None, ["--plot", "curves.gif"], "--plot curves.gif: name a .svg, .png, .csv file"),
]


@pytest.mark.parametrize(("file", "text", "options", "message"), BAD)
def test_bad_input_exits_with_2_naming_the_file_line_and_reason(
    files, file, text, options, message
):
    if file is not None:
        Path(files[file]).write_text(text)
    budget = [] if "--budget" in options else ["--budget", "5"]
    arguments = [*run_files(files), "--qrels", files["qrels"], *budget, *options]
    err = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("simulate_pooling", *arguments, stdout=io.StringIO(), stderr=err)
    assert caught.value.returncode == 2
    assert err.getvalue().startswith("simulate_pooling: " + message.format(**files))
    assert err.getvalue().count("\n") == 1


def test_a_bad_budget_exits_with_2_as_a_real_process(files):
    command = [sys.executable, "manage.py", "simulate_pooling", *run_files(files)]
    command += ["--qrels", files["qrels"], "--budget", "0"]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert completed.returncode == 2
    assert completed.stderr == (
        "simulate_pooling: --budget: 0 is not a positive number of judgments\n"
    )
    assert completed.stdout == ""
