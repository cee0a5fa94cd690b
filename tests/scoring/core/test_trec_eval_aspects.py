"""trec_eval -R qrels_twoaspects / qrels_threeaspects: the Decision track extension's
outputs, and the errors of a measure asked with the wrong format."""

import io
import re
import shlex
from pathlib import Path

import pytest

from scoring.core.trec_eval import main
from tests.scoring.helpers import reference_cases

REFERENCE = Path(__file__).parent / "reference" / "multi_aspect"
TWO = "1 0 a 2 1\n1 0 b 0 3\n"
THREE = "1 0 a 2 1 0\n1 0 b 0 3 1\n"
RUN = "1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n"


@pytest.mark.parametrize(("arguments", "expected"), reference_cases(REFERENCE))
def test_output_equals_the_decision_track_extension(arguments, expected, monkeypatch):
    monkeypatch.chdir(REFERENCE)
    out, err = io.StringIO(), io.StringIO()
    assert main(shlex.split(arguments), out, err) == 0, err.getvalue()
    assert out.getvalue() == (REFERENCE / expected).read_text()


def _trec_eval(tmp_path: Path, *arguments: str, qrels: str = TWO) -> tuple[int, str, str]:
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(RUN)
    out, err = io.StringIO(), io.StringIO()
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    return main([*arguments, *files], out, err), out.getvalue(), err.getvalue()


def test_without_measures_every_measure_of_the_format_is_printed(tmp_path):
    _, out, _ = _trec_eval(tmp_path, "-R", "qrels_threeaspects", qrels=THREE)
    names = [line.split()[0] for line in out.splitlines()]
    assert names == [
        "runid",
        "num_q",
        "nlre_three",
        "cam_three_ndcg",
        "cam_map_three",
        "nwcs_three",
    ]


def test_help_lists_the_measures_of_the_format(tmp_path):
    _, out, _ = _trec_eval(tmp_path, "-h", "-R", "qrels_twoaspects")
    assert "nicknames: twoaspects" in out
    assert re.search(r"^  cam_map +CAM of AP", out, re.M)


@pytest.mark.parametrize(
    ("arguments", "qrels", "message"),
    [
        (
            ["-m", "cam"],
            "1 0 a 1\n",
            "measure 'cam' needs the rel_info format 'qrels_twoaspects' (-R)",
        ),
        (
            ["-m", "nwcs_three"],
            "1 0 a 1\n",
            "measure 'nwcs_three' needs the rel_info format 'qrels_threeaspects' (-R)",
        ),
        (
            ["-R", "qrels_twoaspects", "-m", "map"],
            TWO,
            "measure 'map' needs the rel_info format 'qrels' (-R)",
        ),
        (
            ["-R", "qrels_twoaspects", "-m", "official"],
            TWO,
            "measure 'official' needs the rel_info format 'qrels' (-R)",
        ),
        (
            ["-R", "qrels_threeaspects", "-m", "cam"],
            THREE,
            "measure 'cam' needs the rel_info format 'qrels_twoaspects' (-R)",
        ),
        (
            ["-R", "qrels_twoaspects", "-J"],
            TWO,
            "option -J is not offered with -R qrels_twoaspects",
        ),
        (
            ["-R", "qrels_twoaspects"],
            "1 0 a 1 1\n1 0 b 1\n",
            "qrels:2: expected 5 columns (topic iter docno a1 a2), found 4",
        ),
        (
            ["-R", "qrels_threeaspects"],
            TWO,
            # Every line of the other layout: one problem that names the layout it is.
            "qrels:1: every line has 5 columns, not the 6 of qrels_threeaspects (topic iter "
            "docno a1 a2 a3); 5 columns are qrels_twoaspects (topic iter docno a1 a2)",
        ),
        (["-R", "qrels_twoaspects"], "1 0 a 1 -\n", "qrels:1: aspect_2 '-' is not an integer"),
    ],
)
def test_a_measure_or_file_of_the_wrong_format_is_one_line_with_status_2(
    tmp_path, arguments, qrels, message
):
    status, out, err = _trec_eval(tmp_path, *arguments, qrels=qrels)
    assert (status, out) == (2, "")
    assert err.startswith("trec_eval: ")
    assert message in err
    assert err.count("\n") == 1
