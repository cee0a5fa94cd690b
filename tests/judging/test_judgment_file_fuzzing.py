"""The judgment and label readers on any input: rows, or problems with their line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from judging.core.judgment_files import read_judgments_tsv, read_labels_tsv
from workbench.core.label_schema import SCHEMA_PRESETS, LabelSchema

CELL = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12) | (
    st.sampled_from(["0", "1", "2", "3", "-1", "-2", "", "\x00", "9" * 5000, "1e400", "nan"])
)
ROWS = st.lists(st.lists(CELL, min_size=0, max_size=7), max_size=8)
SCHEMAS = st.sampled_from(sorted(SCHEMA_PRESETS)).map(
    lambda name: LabelSchema.parse(SCHEMA_PRESETS[name].data)
)


def tsv(rows: list[list[str]], header: str = "") -> bytes:
    return (header + "".join("\t".join(row) + "\n" for row in rows)).encode()


@given(st.binary(max_size=1500) | ROWS.map(tsv), SCHEMAS)
def test_judgment_files_give_judgments_or_problems(data, schema):
    rows, log = read_judgments_tsv(
        data, name="j.tsv", schema=schema, known_topics={"1", "2"}, known_assessors=None
    )
    assert all(p.file == "j.tsv" and p.reason for p in log.sorted())
    for row in rows:
        assert row.relevance in schema.relevance.values
        assert "\x00" not in row.assessor + row.docno


@given(
    st.binary(max_size=1500)
    | ROWS.map(lambda rows: tsv(rows, "assessor\ttopic\tdocno\trel\teff\tcred\n")),
    SCHEMAS,
)
def test_labels_files_give_labels_or_problems(data, schema):
    _, log = read_labels_tsv(data, name="labels.tsv", schema=schema)
    assert all(p.file == "labels.tsv" and p.reason for p in log.sorted())
