"""The plain readers give what the readers of record give, or leave the file to them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scoring.core.measures.columns import decoded
from scoring.core.plain_files import plain_qrels, plain_run
from scoring.core.qrels import (
    STRATIFIED_QRELS,
    THREE_ASPECT_QRELS,
    TREC_QRELS,
    TWO_ASPECT_QRELS,
    read_qrels_table,
)
from workbench.core.problems import InputError
from workbench.core.run_files import read_run

TOPICS = ["1", "2", "10", "007", "é", "#3"]
DOCNOS = ["a", "A", "d1", "d10", "ä", "x\u00a0y", "10.1/x", "#d", "a\x1cb", "\x00"]
NUMBERS = [
    "1", "0", "-0", "+2", "2.5", "-.5", ".5e1", "5.", "1e5", "1E-5", "007", "1e999", "-1e999",
    "4.9e-324", "1e-400", "0.30000000000000004441", "123456789012345678901234567890",
    "2147483647", "2147483648", "-2147483649", "+0000000000000000000000000000001",
    "nan", "inf", "-Infinity", "1.2.3", "0x10", "1_0", "e5", "+", "", "\u0661", "1e", "--1", "x",
    "1_000", "\u0661\u0662", "\uff11", "0_5.5", "1e1_0", "21.2295", "-0.0", "999999999999999",
    "9999999999999999", "0.000000000000000000001", "1.23456789012345", "-7e-3",
]  # fmt: skip
SEPARATORS = st.sampled_from([" ", "\t", "  ", " \t", "\f", "\u00a0"])
ENDINGS = st.sampled_from(["\n", "\r\n", " \n", "\n\n", "\v\n", "\t\n"])


DECIMALS = [n for n in NUMBERS[:20] if n not in ("1e999", "-1e999")]
INTEGERS = ["0", "1", "2", "-1", "-2", "+3", "007", "2147483647", "-2147483648", "2147483648"]


@st.composite
def files(draw: st.DrawFn, width: int, labels: tuple[int, ...], *, run: bool = False) -> bytes:
    """A well-formed file of lines of `width` fields, then up to three odd changes:
    a number, a separator, a line ending, an extra line, a field more or less."""
    separator = draw(st.sampled_from([" ", "\t"]))
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        fields = [draw(st.sampled_from(TOPICS)), "Q0", draw(st.sampled_from(DOCNOS))]
        fields += [draw(st.sampled_from(DECIMALS)) for _ in range(width - 3)]
        for index in labels:
            fields[index] = draw(st.sampled_from(INTEGERS))
        if run:
            fields[5] = draw(st.sampled_from(["r", "tag", "t\u00e9"]))
        lines.append([fields, [separator] * (width - 1), "\n"])
    prefix = draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))
    data_lines = list(lines)
    for _ in range(draw(st.integers(0, 3))):
        line = draw(st.sampled_from(data_lines))
        fields, separators, _ = line
        match draw(
            st.sampled_from(["number", "number", "separator", "ending", "line", "width", "prefix"])
        ):
            case "number":
                read = [index for index in labels if index < len(fields)]  # fields parsed
                fields[draw(st.sampled_from(read or [len(fields) - 1]))] = draw(
                    st.sampled_from(NUMBERS)
                )
            case "separator":
                separators[draw(st.integers(0, len(separators) - 1))] = draw(SEPARATORS)
            case "ending":
                line[2] = draw(ENDINGS)
            case "line":
                extra = draw(st.sampled_from(["# a comment", "", "   ", "#"]))
                lines.insert(draw(st.integers(0, len(lines))), [[extra], [], "\n"])
            case "width":
                if draw(st.booleans()) and len(fields) > 4:
                    fields.pop()
                    separators.pop()
                else:
                    fields.append("extra")
                    separators.append(separator)
            case "prefix":
                prefix = b"\xff"
    text = "".join(
        "".join(f + s for f, s in zip(fields, [*separators, ""], strict=False)) + ending
        for fields, separators, ending in lines
    )
    if draw(st.booleans()):
        text = text.rstrip("\n")
    return prefix + text.encode()


def _bits(values: np.ndarray) -> list[int]:
    return np.asarray(values, dtype=np.float64).view(np.int64).tolist()


@settings(max_examples=400, deadline=None)
@given(files(6, labels=(4,), run=True))
def test_a_plain_run_is_what_the_run_reader_reads(data):
    plain = plain_run(data)
    record = read_run(data, name="run", extra_fields="ignore")
    if plain is None:
        return
    assert record.ok, record.problems.summary_lines()
    table = record.table
    assert decoded(plain.query_id) == table.column("query_id").to_pylist()
    assert decoded(plain.doc_id) == table.column("doc_id").to_pylist()
    assert _bits(plain.score) == _bits(table.column("score").to_numpy())  # -0.0 too
    assert plain.run_id == table.column("run_id")[-1].as_py()


LAYOUTS = [TREC_QRELS, TWO_ASPECT_QRELS, THREE_ASPECT_QRELS, STRATIFIED_QRELS]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(LAYOUTS).flatmap(lambda layout: st.tuples(st.just(layout), qrels_files(layout)))
)
# Found: the last field, longer than the bytes left after it, was read past the end.
@example((TWO_ASPECT_QRELS, b"1 Q0 a 0 2147483647\n1 Q0 A 007 1\n"))
def test_plain_qrels_are_what_the_qrels_reader_reads(layout_and_data):
    layout, data = layout_and_data
    plain = plain_qrels(data, layout)
    if plain is None:
        return
    try:
        table = read_qrels_table(data, name="qrels", layout=layout)
    except InputError as error:
        pytest.fail(f"plain, but the reader of record says: {error}")
    assert [plain.query_id.values.values[c] for c in plain.query_id.codes] == table.column(
        "query_id"
    ).to_pylist()
    assert [plain.doc_id.values.values[c] for c in plain.doc_id.codes] == table.column(
        "doc_id"
    ).to_pylist()
    assert list(plain.columns) == [c for c in table.column_names if c not in ("query_id", "doc_id")]
    for name, values in plain.columns.items():
        assert values.tolist() == table.column(name).to_pylist()


def qrels_files(layout):
    positions = tuple(layout.columns.index(label) for label in layout.labels)
    return files(len(layout.columns), labels=positions)


@pytest.mark.parametrize(
    "data",
    [
        b"1 Q0 a 1 2.5 r\n1 Q0 b 2 1 r\n2 Q0 a 1 -3e2 r",
        b"\xef\xbb\xbf1\tQ0\ta\t1\t2.5\tr\n",
        b"1 Q0 x\xc2\xa0y 1 +.5 t\xc3\xa9\n",
    ],
)
def test_well_formed_runs_are_read_plainly(data):
    assert plain_run(data) is not None


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"# comment\n1 Q0 a 1 1 r\n",
        b"1 Q0 a 1 1 r\r\n",
        b"1 Q0 a 1 1 r\n\n1 Q0 b 1 1 r\n",
        b"1 Q0 a 1 1 r extra\n",
        b"1 Q0 a 1 nan r\n",
        b"1 Q0 a 1 1e999 r\n",
        b"1 Q0 a 1 1 r\n1 Q0 a 2 0 r\n",
        b"1  Q0 a 1 1 r\n",
        b"1 Q0 a 1 1 r\n2\tQ0 a 1 1 r\n",
        b"\xff 1 Q0 a 1 1 r\n",
    ],
)
def test_anything_unusual_is_left_to_the_run_reader(data):
    assert plain_run(data) is None
