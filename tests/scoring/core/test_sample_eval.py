"""The sample_eval command line: sample_eval.pl's outputs, several runs, errors."""

import io
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.core.sample_eval import main
from tests.scoring.helpers import reference_cases

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = Path(__file__).parent / "reference" / "sample_eval"
QRELS = "1 0 a 1 1\n1 0 b 2 -1\n1 0 c 2 0\n2 0 a 1 2\n"
RUN = "1 Q0 b 1 2 first\n1 Q0 a 2 1 first\n2 Q0 a 1 1 first\n"


def deep_case() -> tuple[str, str]:
    """A pool of 1400 documents in three strata sampled at different rates, and a run
    of 1300 documents (1000 are scored)."""
    grades = (0, 0, 0, 1, 0, 2, 0, 0)
    qrels, run = [], []
    for i in range(1400):
        stratum = 1 + i % 3
        sampled = stratum == 1 or (stratum == 2 and i % 2 == 0) or i % 5 == 0
        qrels.append(f"7 0 P{i} {stratum} {grades[i % 8] if sampled else -1}\n")
    for i in range(1300):
        doc = f"P{i}" if i < 1200 else f"X{i}"
        run.append(f"7 Q0 {doc} 0 {(i * 37) % 1301 / 10} deep\n")
    return "".join(qrels), "".join(run)


@pytest.fixture
def reference(tmp_path, monkeypatch):
    for path in REFERENCE.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    qrels, run = deep_case()
    (tmp_path / "deep.qrels").write_text(qrels)
    (tmp_path / "deep.run").write_text(run)
    monkeypatch.chdir(tmp_path)


def _sample_eval(*arguments: object, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([str(argument) for argument in arguments], out, err, stdin=io.BytesIO(stdin))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("arguments", "expected"), reference_cases(REFERENCE))
@pytest.mark.usefixtures("reference")
def test_output_equals_sample_eval_pl(arguments, expected):
    status, out, err = _sample_eval(*shlex.split(arguments))
    assert status == 0, err
    assert out == (REFERENCE / expected).read_text()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "first.run").write_text(RUN)
    (tmp_path / "second.run").write_text(RUN.replace("first", "second").replace("b 1 2", "b 1 0"))
    return tmp_path


def test_topics_print_in_numeric_order_then_the_summary(files):
    (files / "qrels").write_text(QRELS + "10 0 a 1 1\n")
    (files / "first.run").write_text(RUN + "10 Q0 a 1 1 first\n")
    _, out, _ = _sample_eval("-q", files / "qrels", files / "first.run")
    assert [line.split("\t")[2] for line in out.splitlines() if line.startswith("infAP")] == [
        "1",
        "2",
        "10",
        "all",
    ]
    # a, below the unsampled b (a third relevant), at rank 2: 1/2 + 1/2 x 1/3.
    assert out.splitlines()[:2] == ["infAP\t\t1\t\t0.6667", "infNDCG\t\t1\t\t0.6309"]
    assert "inum_rel\tall\t        3.0000" in out.splitlines()
    assert out.endswith("num_ret\t\tall\t        4\n")


def test_several_runs_print_one_block_each(files):
    one = [
        _sample_eval("-q", files / "qrels", files / name)[1] for name in ("first.run", "second.run")
    ]
    assert _sample_eval("-q", files / "qrels", files / "first.run", files / "second.run")[
        1
    ] == "".join(one)
    assert one[0] != one[1]


def test_a_run_from_standard_input(files):
    expected = _sample_eval(files / "qrels", files / "first.run")
    assert _sample_eval(files / "qrels", "-", stdin=RUN.encode()) == expected


def test_help_exits_zero():
    status, out, _ = _sample_eval("--help")
    assert (status, out.splitlines()[0]) == (
        0,
        "Usage: sample_eval [-q] [--format text|tsv] qrels_file run...",
    )


@pytest.mark.parametrize(
    ("qrels", "run", "arguments", "message"),
    [
        (
            "1 0 a 1 1\n1 0 b 0\n",
            RUN,
            [],
            "qrels:2: expected 5 columns (topic iter docno stratum rel), found 4",
        ),
        (
            "1 0 a 1 1\n1 0 b 2 -1 x\n",
            RUN,
            [],
            "qrels:2: expected 5 columns (topic iter docno stratum rel), found 6",
        ),
        ("1 0 a one 1\n", RUN, [], "qrels:1: stratum 'one' is not an integer"),
        ("1 0 a 1 yes\n", RUN, [], "qrels:1: relevance 'yes' is not an integer"),
        (
            "1 0 a 1 1\n1 0 a 2 -1\n",
            RUN,
            [],
            "qrels:2: docno 'a' judged twice for topic '1' (first on line 1)",
        ),
        (QRELS, "1 Q0 a 1 2 t\n1 Q0 a 2 1 t\n", [], "run:2: docno 'a' appears twice in topic '1'"),
        (QRELS, "1 Q0 a 1\n", [], "run:1: expected 6 columns (topic Q0 docno rank score tag)"),
        (QRELS, "3 Q0 a 1 1 t\n", [], "run: no topic of the run is in the qrels"),
        (QRELS, RUN, ["-c"], "unknown option -c"),
    ],
)
def test_errors_are_one_line_naming_the_file_and_line_with_status_2(
    tmp_path, qrels, run, arguments, message
):
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    status, out, err = _sample_eval(*arguments, tmp_path / "qrels", tmp_path / "run")
    assert (status, out) == (2, "")
    assert err.startswith("sample_eval: ")
    assert message in err
    assert err.count("\n") == 1


def test_a_missing_file_or_run_is_one_line_with_status_2(files):
    assert _sample_eval(files / "qrels", files / "missing.run")[2].startswith(
        "sample_eval: cannot read '"
    )
    assert _sample_eval(files / "qrels")[2] == (
        "sample_eval: needs a qrels file and at least one run (see --help)\n"
    )


def test_manage_py_sample_eval_prints_what_main_prints(files):
    arguments = ["-q", files / "qrels", files / "first.run"]
    command = [sys.executable, "manage.py", "sample_eval", *map(str, arguments)]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert (completed.returncode, completed.stdout) == (0, _sample_eval(*arguments)[1])
    failed = subprocess.run(
        [sys.executable, "manage.py", "sample_eval", str(files / "qrels")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (failed.returncode, failed.stderr.count("\n")) == (2, 1)


def test_format_tsv_gives_trec_evals_rows_at_full_precision(files):
    status, out, err = _sample_eval(
        "-q", "--format", "tsv", files / "qrels", files / "first.run", files / "second.run"
    )
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "run\trun_id\tquery_id\tmeasure\tvalue"
    rows = [line.split("\t") for line in lines[1:]]
    assert {row[1] for row in rows} == {"first", "second"}
    text = _sample_eval("-q", files / "qrels", files / "first.run")[1]
    summary = {
        line.split()[0]: float(line.split()[2]) for line in text.splitlines() if "\tall\t" in line
    }
    first = {row[3]: float(row[4]) for row in rows if row[1] == "first" and row[2] == "all"}
    assert first["infAP"] == pytest.approx(summary["infAP"], abs=5e-5)
    assert (
        _sample_eval("--format=tsv", files / "qrels", files / "first.run")[1]
        == (_sample_eval("--format", "tsv", files / "qrels", files / "first.run")[1])
    )


def test_an_unknown_format_is_one_line_with_status_2(files):
    status, out, err = _sample_eval("--format", "csv", files / "qrels", files / "first.run")
    assert (status, out) == (2, "")
    assert err == "sample_eval: unknown output format 'csv' (known: text, tsv)\n"
