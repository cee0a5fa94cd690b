"""Problems and the error that reports them (pure core)."""

from __future__ import annotations

from tests.workbench.core.test_run_files import check
from workbench.core import run_files
from workbench.core.problems import InputError, ProblemLog


def test_input_error_lists_each_files_problems():
    first = check(b"301 Q0 d1 1 x t\n")
    second = run_files.read_run(b"", name="other.txt")
    error = InputError.from_logs(first.problems, second.problems)
    assert str(error).splitlines() == [
        "run.txt:1: score 'x' is not a number",
        "other.txt: empty file: no run lines",
    ]
    assert error.as_dict() == {
        "errors": [
            {"file": "run.txt", "line": 1, "reason": "score 'x' is not a number"},
            {"file": "other.txt", "line": 0, "reason": "empty file: no run lines"},
        ],
        "total": 2,
    }


def test_problem_log_keeps_earliest_lines_when_added_out_of_order():
    log = ProblemLog("f", limit=3)
    for line in [9, 8, 7, 6, 5, 4, 3, 2, 1, 10, 11, 12, 13]:
        log.add(line, "x")
    assert [p.line for p in log.sorted()] == [1, 2, 3]
    assert log.total == 13
