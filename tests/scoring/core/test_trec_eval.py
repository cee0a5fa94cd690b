"""The trec_eval command line: conformance with trec_eval 10.0, options, errors."""

import io
import json
import math
import os
import re
import shlex
import time
from pathlib import Path

import pytest

from scoring.core import command_line
from scoring.core.plain_files import plain_qrels, plain_run
from scoring.core.trec_eval import main

# The project's shared reference data: beside the checkout, or where WORKBENCH_SHARED_DIR says
# (a clone elsewhere, as CI's).
SHARED = Path(
    os.environ.get("WORKBENCH_SHARED_DIR") or Path(__file__).resolve().parents[3].parent / "shared"
)
CONFORMANCE = SHARED / "conformance" / "trec_eval"
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 1\n2 0 d 1\n"
RUN = "1 Q0 a 1 3.0 tag1\n1 Q0 x 2 2.0 tag1\n1 Q0 c 3 1.0 tag1\n2 Q0 d 1 1.5 tag1\n"
OTHER_RUN = "1 Q0 c 1 3.0 tag2\n2 Q0 a 1 1.0 tag2\n3 Q0 a 1 1.0 tag2\n"


def _conformance_cases() -> list:
    cases = CONFORMANCE / "CASES.md"
    if not cases.is_file():
        reason = (
            f"trec_eval 10.0 conformance files not found in {CONFORMANCE}: "
            "set WORKBENCH_SHARED_DIR to the shared directory"
        )
        return [pytest.param("", "", marks=pytest.mark.skip(reason=reason))]
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|$", cases.read_text(), re.MULTILINE)
    assert rows, "no cases in CASES.md"
    return [pytest.param(arguments, expected, id=arguments) for arguments, expected in rows]


@pytest.mark.parametrize(("arguments", "expected"), _conformance_cases())
@pytest.mark.parametrize("reader", ["as given", "of record", "plain"])
def test_output_is_byte_identical_to_trec_eval_10(
    arguments, expected, reader, monkeypatch, tmp_path
):
    """With the files as NIST gives them (tabs, padded scores, comments, extra
    fields: mostly read by the readers of record); all read by the readers of
    record; and rewritten in the plain shape, all read by `plain_files`."""
    monkeypatch.chdir(CONFORMANCE)
    if reader == "of record":
        monkeypatch.setattr(command_line, "plain_qrels", lambda data, layout: None)
    elif reader == "plain":
        _write_plain_copies(CONFORMANCE, tmp_path)
        monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    assert main(shlex.split(arguments), out, err) == 0, err.getvalue()
    assert out.getvalue().encode() == (CONFORMANCE / expected).read_bytes()


def _write_plain_copies(source: Path, target: Path) -> None:
    """The qrels and runs of `source` in the plain shape: one space between fields,
    no comment lines, no fields past a run's tag (trec_eval ignores them)."""
    for path in source.iterdir():
        if path.name.startswith(("qrels", "results")):
            width = 6 if path.name.startswith("results") else 4
            lines = [line.split()[:width] for line in path.read_text().splitlines()]
            text = "".join(" ".join(f) + "\n" for f in lines if f and not f[0].startswith("#"))
            (target / path.name).write_text(text)
            plain = plain_run(text.encode()) if width == 6 else plain_qrels(text.encode())
            assert plain is not None, f"{path.name} is not plain"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "b.run").write_text(RUN)
    (tmp_path / "runs" / "a.run").write_text(OTHER_RUN)
    (tmp_path / "runs" / ".hidden").write_text("not a run")
    return tmp_path


def _trec_eval(*arguments, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([str(argument) for argument in arguments], out, err, stdin=io.BytesIO(stdin))
    return status, out.getvalue(), err.getvalue()


def test_summary_lines_are_padded_names_topic_and_value(files):
    status, out, _ = _trec_eval("-m", "map", "-m", "num_ret", files / "qrels", files / "runs/b.run")
    assert status == 0
    assert out == "num_ret               \tall\t4\nmap                   \tall\t0.6667\n"


def test_options_are_read_as_getopt_reads_them(files):
    qrels, run = files / "qrels", files / "runs/b.run"
    expected = _trec_eval("-q", "-c", "-M", "2", "-m", "P.1,2", qrels, run)
    assert expected[0] == 0
    for arguments in (
        ("-qc", "-M2", "-mP.1,2", qrels, run),
        (qrels, run, "-qcM2", "--measure=P.1,2"),
        ("--query_eval_wanted", "--complete", "--Max_ret", "2", "-m", "P.1,2", qrels, run),
        ("-q", "-c", "-M", "2", "-m", "P.1,2", "--", qrels, run),
    ):
        assert _trec_eval(*arguments) == expected


def test_per_topic_values_without_summary(files):
    _, out, _ = _trec_eval("-q", "-n", "-m", "P.1", files / "qrels", files / "runs/b.run")
    assert out == "P_1                   \t1\t1.0000\nP_1                   \t2\t1.0000\n"
    assert _trec_eval("-n", files / "qrels", files / "runs/b.run")[1] == ""


def test_several_runs_print_one_block_each_and_a_directory_its_files_by_name(files):
    qrels = files / "qrels"
    one = [_trec_eval("-q", qrels, files / "runs" / name)[1] for name in ("a.run", "b.run")]
    assert _trec_eval("-q", qrels, files / "runs/b.run", files / "runs/a.run")[1] == one[1] + one[0]
    assert _trec_eval("-q", qrels, files / "runs")[1] == one[0] + one[1]


def test_several_runs_without_runid_start_each_block_with_its_runid_line(files):
    qrels, runs = files / "qrels", [files / "runs/b.run", files / "runs/a.run"]
    alone = [_trec_eval("-q", "-m", "map", qrels, run)[1] for run in runs]
    status, out, _ = _trec_eval("-q", "-m", "map", qrels, *runs)
    assert status == 0
    assert out == (
        f"runid                 \tall\ttag1\n{alone[0]}runid                 \tall\ttag2\n{alone[1]}"
    )
    no_summary = _trec_eval("-n", "-q", "-m", "map", qrels, *runs)[1]
    assert [line for line in no_summary.splitlines() if line.startswith("runid")] == [
        "runid                 \tall\ttag1",
        "runid                 \tall\ttag2",
    ]


def test_several_runs_asking_for_runid_print_it_once_where_trec_eval_does(files):
    qrels, runs = files / "qrels", [files / "runs/b.run", files / "runs/a.run"]
    for measures in (["-m", "map", "-m", "runid"], []):  # no -m: the official set has runid
        alone = [_trec_eval(*measures, qrels, run)[1] for run in runs]
        assert _trec_eval(*measures, qrels, *runs)[1] == alone[0] + alone[1]


def test_help_says_how_blocks_of_several_runs_are_told_apart():
    _, out, _ = _trec_eval("--help")
    assert "runid" in out.split("Measures, in output order")[0]


def test_tsv_and_json_hold_the_same_rows_at_full_precision(files):
    arguments = ("-q", "-m", "map", "-m", "runid", files / "qrels", files / "runs")
    _, tsv, _ = _trec_eval("--format", "tsv", *arguments)
    lines = tsv.splitlines()
    assert lines[0] == "run\trun_id\tquery_id\tmeasure\tvalue"
    assert f"{files / 'runs/b.run'}\ttag1\tall\tmap\t0.6666666666666666" in lines
    _, text, _ = _trec_eval(*arguments)
    assert len(lines) - 1 == len(text.splitlines())
    rows = json.loads(_trec_eval("--format=json", *arguments)[1])
    assert rows[-1] == {
        "run": str(files / "runs/b.run"),
        "run_id": "tag1",
        "query_id": "all",
        "measure": "map",
        "value": 0.6666666666666666,
    }
    assert len(rows) == len(lines) - 1


def test_run_from_standard_input(files):
    expected = _trec_eval(files / "qrels", files / "runs/b.run")
    assert _trec_eval(files / "qrels", "-", stdin=RUN.encode()) == expected


def test_fields_after_the_run_tag_are_ignored_as_trec_eval_does(files):
    (files / "long.run").write_text(RUN.replace("tag1\n", "tag1 more words\n"))
    assert _trec_eval(files / "qrels", files / "long.run") == _trec_eval(
        files / "qrels", files / "runs/b.run"
    )


def test_help_and_version_exit_zero():
    assert _trec_eval("-h")[1].startswith("Usage: trec_eval")
    assert _trec_eval("--version")[1].startswith("trec_eval version 10.0")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["-m", "nosuch", "{qrels}", "{run}"], "trec_eval: unknown measure 'nosuch'"),
        (["-m", "P.0", "{qrels}", "{run}"], "measure 'P': cutoffs must be positive"),
        (
            ["{bad_qrels}", "{run}"],
            "bad_qrels:2: expected 4 columns (topic iter docno rel), found 6",
        ),
        (["{qrels}", "{bad_run}"], "bad.run:2: expected 6 columns (topic Q0 docno rank score tag)"),
        (["{qrels}", "{twice_run}"], "twice.run:3: docno 'a' appears twice in topic '1'"),
        (["{twice_qrels}", "{run}"], "twice_qrels:2: docno 'a' judged twice for topic '1'"),
        (
            ["-m", "ndcg", "{huge_qrels}", "{run}"],
            "huge_qrels:2: relevance 1000000000000000000 is out of range: "
            "labels are integers from -2147483648 to 2147483647",
        ),
        (["{qrels}", "{missing}"], "trec_eval: cannot read '"),
        (["-R", "qrels_other", "{qrels}", "{run}"], "unknown rel_info format 'qrels_other'"),
        (
            ["-R", "prefs", "{qrels}", "{run}"],
            "rel_info format 'prefs' of trec_eval is not supported",
        ),
        (["-T", "other", "{qrels}", "{run}"], "unknown results format 'other'"),
        (["-Z", "zscores", "{qrels}", "{run}"], "option --Zscore of trec_eval is not supported"),
        (["-x", "{qrels}", "{run}"], "unknown option -x"),
        (["-M", "-1", "{qrels}", "{run}"], "option -M needs an integer >= 0"),
        (["-l", "two", "{qrels}", "{run}"], "option -l needs an integer"),
        (["{qrels}"], "needs a rel_info file and at least one run"),
        (["{qrels}", "{stranger_run}"], "stranger.run: no topic of the run is in the qrels"),
        (["-m", "utility.1,2", "{qrels}", "{run}"], "utility takes 4 coefficients"),
    ],
)
def test_errors_are_one_line_on_stderr_with_status_2(files, arguments, message):
    paths = {
        "qrels": files / "qrels",
        "run": files / "runs/b.run",
        "bad_qrels": files / "bad_qrels",
        "bad_run": files / "bad.run",
        "twice_run": files / "twice.run",
        "twice_qrels": files / "twice_qrels",
        "huge_qrels": files / "huge_qrels",
        "stranger_run": files / "stranger.run",
        "missing": files / "missing.run",
    }
    paths["bad_qrels"].write_text("1 0 a 1\n" + RUN)  # a run given as qrels
    paths["bad_run"].write_text("1 Q0 a 1 3.0 tag\n1 Q0 b 2.0\n")
    paths["twice_run"].write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 a 3 1 t\n")
    paths["twice_qrels"].write_text("1 0 a 1\n1 0 a 0\n")
    paths["huge_qrels"].write_text("1 0 a 1\n1 0 c 1000000000000000000\n")
    paths["stranger_run"].write_text("7 Q0 a 1 1 t\n")
    status, out, err = _trec_eval(*(argument.format(**paths) for argument in arguments))
    assert (status, out) == (2, "")
    assert message in err
    assert err.startswith("trec_eval: ")
    assert err.count("\n") == 1
    assert err.endswith("\n")


def test_a_file_with_many_problems_reports_the_first_and_counts_the_rest(files):
    (files / "bad.run").write_text("1 Q0 a\n1 Q0 b\n1 Q0 c\n")
    err = _trec_eval(files / "qrels", files / "bad.run")[2]
    assert err.endswith(
        ":1: expected 6 columns (topic Q0 docno rank score tag), found 3 (and 2 more problems)\n"
    )


# Eight topics' set_P = k / n (k relevant of n retrieved): exactly 1.31 in all,
# 1.3099999999999998 as C adds the doubles left to right, 1.31 when added pairwise.
HALF_WAY_SET_P = [(3, 25), (3, 25), (1, 10), (0, 10), (16, 50), (2, 10), (12, 50), (21, 100)]


def test_the_mean_over_topics_is_a_left_to_right_sum_of_doubles_as_in_c(tmp_path):
    qrels, run = [], []
    for topic, (relevant, retrieved) in enumerate(HALF_WAY_SET_P, start=1):
        qrels += [f"{topic} 0 d{i} {int(i < relevant)}\n" for i in range(retrieved)]
        run += [f"{topic} Q0 d{i} {i + 1} {1000 - i} tag\n" for i in range(retrieved)]
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(run))
    status, out, err = _trec_eval("-m", "set_P", tmp_path / "qrels", tmp_path / "run")
    assert status == 0, err
    values = [relevant / retrieved for relevant, retrieved in HALF_WAY_SET_P]
    c_sum = 0.0
    for value in values:  # trec_eval's loop, in its topic order
        c_sum += value
    pairwise = ((values[0] + values[1]) + (values[2] + values[3])) + (
        (values[4] + values[5]) + (values[6] + values[7])
    )
    assert f"{c_sum / 8:6.4f}" != f"{pairwise / 8:6.4f}"  # the case tells the two apart
    assert out == f"set_P                 \tall\t{c_sum / 8:6.4f}\n"


def test_a_label_as_large_as_a_c_int_scores_at_once(tmp_path):
    """The gain table costs the judged labels, not the largest one (it took 15 s per
    topic for a label of 32767, and did not end for 10^18)."""
    (tmp_path / "qrels").write_text("1 0 a 2147483647\n1 0 b 1\n1 0 c 0\n")
    (tmp_path / "run").write_text("1 Q0 b 1 3 r\n1 Q0 a 2 2 r\n")
    start = time.perf_counter()
    status, out, err = _trec_eval("-m", "ndcg", "-m", "rbp", tmp_path / "qrels", tmp_path / "run")
    assert time.perf_counter() - start < 1
    assert status == 0, err
    ideal = 2147483647 + 1 / math.log2(3)
    ndcg = (1 + 2147483647 / math.log2(3)) / ideal
    assert f"ndcg                  \tall\t{ndcg:.4f}\n" in out


def test_a_label_of_10_to_the_18_is_refused_at_once(tmp_path):
    (tmp_path / "qrels").write_text("1 0 a 1000000000000000000\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n")
    start = time.perf_counter()
    status, _, err = _trec_eval("-m", "ndcg", tmp_path / "qrels", tmp_path / "run")
    assert time.perf_counter() - start < 1
    assert status == 2
    assert (
        err
        == f"trec_eval: {tmp_path / 'qrels'}:1: relevance 1000000000000000000 is out of range: labels are integers from -2147483648 to 2147483647\n"
    )
