"""trec_eval's text, TSV and JSON."""

import io
import json

from scoring.core.report import write_report
from tests.scoring.helpers import evaluate_strings


def _report(output_format: str) -> str:
    # -c -J: the placeholder of topic 2 is dropped, leaving 0/0 at recall 0.
    evaluation = evaluate_strings(
        "1 a 1\n2 a 1",
        ["1 a 1"],
        ["iprec_at_recall.0", "relstring"],
        complete=True,
        judged_only=True,
    )
    out = io.StringIO()
    write_report(evaluation, out, run_names=["r"], output_format=output_format, per_topic=True)
    return out.getvalue()


def test_text_prints_nan_with_its_sign_as_glibc_does():
    assert _report("text") == (
        "iprec_at_recall_0.00  \t1\t1.0000\n"
        "relstring             \t1\t'1'\n"
        "iprec_at_recall_0.00  \t2\t  -nan\n"
        "relstring             \t2\t''\n"
        "iprec_at_recall_0.00  \tall\t  -nan\n"
    )


def test_json_writes_null_for_nan():
    rows = json.loads(_report("json"))
    assert rows[2] == {
        "run": "r",
        "run_id": "run0",
        "query_id": "2",
        "measure": "iprec_at_recall_0.00",
        "value": None,
    }


def test_tsv_writes_text_values_as_they_are():
    assert "r\trun0\t1\trelstring\t1" in _report("tsv").splitlines()
