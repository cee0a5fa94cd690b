"""The agreement table: LABELS files read, every line checked against independent oracles.

Oracles: scikit-learn's `cohen_kappa_score` (the schema's values as labels),
statsmodels' `fleiss_kappa`, the `krippendorff` package (the schema's values
as value domain); observed agreement and Voorhees' overlap by hand. They are
computed here from plain Python rows, not from the core's frames.
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections import Counter
from collections.abc import Callable
from fractions import Fraction

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from judging.core import agreement_table
from judging.core.agreement_table import agreement_lines, format_json, format_text, read_labels
from tests.judging.generated_labels import HEADER, Row, labels_file, random_rows
from workbench.core.label_schema import SCHEMA_PRESETS, LabelSchema, default_schema
from workbench.core.problems import InputError
from workbench.core.topic_ids import topic_sort_key

DECISION = LabelSchema.default()
BINARY = LabelSchema.parse(SCHEMA_PRESETS["binary"].data)
GRADED = LabelSchema.parse(SCHEMA_PRESETS["graded-0-2"].data)
TOLERANCE = 1e-9


def table_lines(rows: list[Row], schema: LabelSchema = DECISION) -> list[dict]:
    frame = read_labels(labels_file(rows), name="labels.tsv", schema=schema)
    return agreement_table.line_records(agreement_lines(frame, schema=schema))


# --------------------------------------------------------------------------
# The oracles


def aspect_readers(schema: LabelSchema) -> dict[str, tuple[tuple[int, ...], Callable]]:
    """Table aspect -> (value domain, the value of a row or None)."""
    readers: dict[str, tuple[tuple[int, ...], Callable]] = {
        "rel": (schema.relevance.values, lambda r: r["rel"]),
        "rel_binary": (
            (0, 1),
            lambda r: None if r["rel"] is None else int(r["rel"] >= 1),
        ),
    }
    for column, aspect in zip(("eff", "cred"), schema.aspects, strict=False):
        readers[column] = (aspect.values, lambda r, c=column: r[c])
    return readers


def expected_lines(rows: list[Row], schema: LabelSchema = DECISION) -> dict[tuple, float | None]:
    """(aspect, scope, statistic, raters) -> the oracle's value, None where undefined."""
    topics = sorted({r["topic"] for r in rows}, key=topic_sort_key)
    expected: dict[tuple, float | None] = {}
    for aspect, (values, read) in aspect_readers(schema).items():
        for scope in [*topics, "all"]:
            in_scope = [r for r in rows if scope in ("all", r["topic"])]
            items = {(r["topic"], r["docno"]) for r in in_scope}
            judged = {(r["assessor"], r["topic"], r["docno"]) for r in in_scope}
            rated = {
                (r["assessor"], (r["topic"], r["docno"])): read(r)
                for r in in_scope
                if read(r) is not None
            }
            assessors = sorted({r["assessor"] for r in in_scope})
            for x, y in itertools.combinations(assessors, 2):
                if not any((x, *i) in judged and (y, *i) in judged for i in items):
                    continue  # a pair is listed where both labelled a common item
                common = sorted(i for i in items if (x, i) in rated and (y, i) in rated)
                a = [rated[x, i] for i in common]
                b = [rated[y, i] for i in common]
                for statistic, value in pair_oracle(a, b, values, overlap=aspect == "rel"):
                    expected[aspect, scope, statistic, f"{x}|{y}"] = value
            ratings = {
                item: [rated[who, item] for who in assessors if (who, item) in rated]
                for item in sorted(items)
            }
            for statistic, value in group_oracle(ratings, assessors, values):
                expected[aspect, scope, statistic, "*"] = value
    return expected


def pair_oracle(a: list[int], b: list[int], values, *, overlap: bool):
    yield "observed_agreement", (np.mean(np.equal(a, b)) if a else None)
    one_category = len(set(a) | set(b)) <= 1
    for statistic, weights in (
        ("cohen_kappa", None),
        ("cohen_kappa_linear", "linear"),
        ("cohen_kappa_quadratic", "quadratic"),
    ):
        value = None if one_category else cohen_kappa_score(a, b, labels=values, weights=weights)
        yield statistic, value
    if overlap:
        in_a = {i for i, v in enumerate(a) if v >= 1}
        in_b = {i for i, v in enumerate(b) if v >= 1}
        either = in_a | in_b
        yield "voorhees_overlap", (len(in_a & in_b) / len(either) if either else None)


def group_oracle(ratings: dict[tuple, list[int]], assessors: list[str], values):
    pairable = {item: r for item, r in ratings.items() if len(r) >= 2}
    used = {v for r in pairable.values() for v in r}
    for level in ("nominal", "ordinal"):
        value = None
        if len(used) > 1:
            # assessors x items, NaN where an assessor gave no value: rebuilt from
            # the per-item ratings in an arbitrary assessor slot (alpha ignores who).
            width = max(len(r) for r in pairable.values())
            matrix = np.full((width, len(pairable)), np.nan)
            for column, r in enumerate(pairable.values()):
                matrix[: len(r), column] = r
            value = krippendorff.alpha(
                reliability_data=matrix, value_domain=list(values), level_of_measurement=level
            )
        yield f"krippendorff_alpha_{level}", value
    yield "fleiss_kappa", fleiss_oracle(list(ratings.values()), values)


def fleiss_oracle(ratings: list[list[int]], values) -> float | None:
    """statsmodels on the items the core's rule selects: the most common count K > 2,
    else the items rated twice (Scott's pi)."""
    sizes = Counter(len(r) for r in ratings if len(r) > 2) or Counter(
        len(r) for r in ratings if len(r) == 2
    )
    if not sizes:
        return None
    most = max(sizes.values())
    k = max(size for size, count in sizes.items() if count == most)
    table = np.array([[r.count(v) for v in values] for r in ratings if len(r) == k])
    if np.count_nonzero(table.sum(axis=0)) == 1:
        return None
    return statsmodels_fleiss_kappa(table)


def assert_lines_match_oracles(rows: list[Row], schema: LabelSchema = DECISION) -> int:
    """Every line equals its oracle to 1e-9 and the lines are exactly the oracle's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = expected_lines(rows, schema)
    lines = table_lines(rows, schema)
    got = {(r["aspect"], r["scope"], r["statistic"], r["raters"]): r for r in lines}
    assert len(got) == len(lines), "each key once"
    assert set(got) == set(expected)
    defined = 0
    for key, value in expected.items():
        line = got[key]
        if value is None:
            assert line["value"] is None, key
            assert line["reason"], key
        else:
            assert line["reason"] is None, key
            assert line["value"] == pytest.approx(value, abs=TOLERANCE, rel=0), key
            defined += 1
    return defined


# --------------------------------------------------------------------------
# Every line against the oracles


@pytest.mark.parametrize(
    ("seed", "n_assessors", "p_judge"),
    [(1, 2, 0.8), (2, 3, 0.6), (3, 4, 0.6), (4, 4, 0.35), (5, 3, 0.9)],
)
def test_every_line_equals_the_oracles_on_random_decision_labels(seed, n_assessors, p_judge):
    rows = random_rows(seed, n_assessors=n_assessors, p_judge=p_judge)
    assert assert_lines_match_oracles(rows) > 100


@pytest.mark.parametrize("preset", ["binary", "graded-0-3", "graded-0-4"])
def test_every_line_equals_the_oracles_for_schemas_without_aspects(preset):
    schema = LabelSchema.parse(SCHEMA_PRESETS[preset].data)
    top = schema.relevance.values[-1]
    rng = np.random.default_rng(len(preset))
    rows = [
        {"assessor": a, "topic": t, "docno": f"d{d}", "rel": int(rng.integers(0, top + 1))}
        | {"eff": None, "cred": None}
        for t in ("1", "2", "3")
        for d in range(15)
        for a in ("ann", "bob", "cat")
        if rng.random() < 0.75
    ]
    assert assert_lines_match_oracles(rows, schema) > 50
    assert {line["aspect"] for line in table_lines(rows, schema)} == {"rel", "rel_binary"}


label = st.one_of(st.none(), st.integers(0, 2))
small_rows = st.lists(
    st.fixed_dictionaries(
        {
            "assessor": st.sampled_from(["ann", "bob", "cat"]),
            "topic": st.sampled_from(["1", "2"]),
            "docno": st.sampled_from(["d1", "d2", "d3", "d4"]),
            "rel": label,
            "eff": st.one_of(st.none(), st.integers(0, 3)),
            "cred": st.one_of(st.none(), st.integers(0, 1)),
        }
    ),
    min_size=1,
    max_size=20,
    unique_by=lambda r: (r["assessor"], r["topic"], r["docno"]),
)


@given(rows=small_rows)
@settings(max_examples=60, deadline=None)
def test_every_line_equals_the_oracles_or_is_undefined_where_they_are(rows):
    """Small tables, where undefined values (one category, no common item) are common."""
    assert_lines_match_oracles(rows)


def test_fleiss_kappa_with_the_same_number_of_ratings_on_every_item_uses_every_item():
    rng = np.random.default_rng(7)
    rows = [
        {"assessor": a, "topic": "1", "docno": f"d{d}", "rel": int(rng.integers(0, 3))}
        | {"eff": None, "cred": None}
        for d in range(20)
        for a in ("ann", "bob", "cat")
    ]
    table = np.array(
        [
            [sum(r["rel"] == v for r in rows if r["docno"] == f"d{d}") for v in (0, 1, 2)]
            for d in range(20)
        ]
    )
    line = next(
        r
        for r in table_lines(rows)
        if (r["aspect"], r["scope"], r["statistic"]) == ("rel", "1", "fleiss_kappa")
    )
    assert line["value"] == pytest.approx(statsmodels_fleiss_kappa(table), abs=TOLERANCE, rel=0)


def test_fleiss_kappa_with_unequal_rating_counts_uses_the_items_with_the_most_common_count():
    """Five items rated three times, two rated four times: the three-rating items are used."""
    ratings = {"d1": [0, 0, 1], "d2": [1, 1, 1], "d3": [2, 2, 1], "d4": [0, 0, 0], "d5": [2, 1, 2]}
    ratings |= {"d6": [0, 1, 2, 2], "d7": [2, 2, 2, 0]}
    rows = [
        {"assessor": name, "topic": "1", "docno": doc, "rel": value, "eff": None, "cred": None}
        for doc, values in ratings.items()
        for name, value in zip(("ann", "bob", "cat", "dan"), values, strict=False)
    ]
    three = np.array([[r.count(v) for v in (0, 1, 2)] for r in list(ratings.values())[:5]])
    line = next(
        r
        for r in table_lines(rows)
        if (r["aspect"], r["scope"], r["statistic"]) == ("rel", "1", "fleiss_kappa")
    )
    assert line["value"] == pytest.approx(statsmodels_fleiss_kappa(three), abs=TOLERANCE, rel=0)


# --------------------------------------------------------------------------
# The `all` scope, order, formats


def test_all_scope_is_the_pooled_table_not_the_mean_of_topics():
    # Topic 1: ann 0 1 2, bob 0 1 2 (kappa 1). Topic 2: ann 0 0, bob 0 1 (kappa 0).
    # Pooled: p_o = 4/5, p_e = 3/5*2/5 + 1/5*2/5 + 1/5*1/5 = 9/25, kappa = 11/16.
    text = HEADER + "".join(
        f"{who}\t{topic}\td{doc}\t{rel}\t\t\n"
        for topic, pairs in (("1", [(0, 0), (1, 1), (2, 2)]), ("2", [(0, 0), (0, 1)]))
        for doc, (ann, bob) in enumerate(pairs)
        for who, rel in (("ann", ann), ("bob", bob))
    )
    frame = read_labels(text.encode(), name="labels.tsv", schema=GRADED)
    kappa = {
        r["scope"]: r["value"]
        for r in agreement_table.line_records(agreement_lines(frame, schema=GRADED))
        if (r["aspect"], r["statistic"]) == ("rel", "cohen_kappa")
    }
    assert kappa["1"] == pytest.approx(1.0)
    assert kappa["2"] == pytest.approx(0.0)
    assert kappa["all"] == pytest.approx(11 / 16, abs=TOLERANCE)
    assert kappa["all"] == pytest.approx(
        cohen_kappa_score([0, 1, 2, 0, 0], [0, 1, 2, 0, 1], labels=[0, 1, 2]), abs=TOLERANCE
    )
    assert kappa["all"] != pytest.approx((kappa["1"] + kappa["2"]) / 2)


def test_lines_are_ordered_by_aspect_topic_statistic_and_pair():
    lines = table_lines(random_rows(8, n_assessors=3))
    aspects = ["rel", "rel_binary", "eff", "cred"]
    statistics = [
        "observed_agreement",
        "cohen_kappa",
        "cohen_kappa_linear",
        "cohen_kappa_quadratic",
        "voorhees_overlap",
        "krippendorff_alpha_nominal",
        "krippendorff_alpha_ordinal",
        "fleiss_kappa",
    ]

    def documented(line: dict) -> tuple:
        scope = line["scope"]
        return (
            aspects.index(line["aspect"]),
            scope == "all",
            topic_sort_key(scope) if scope != "all" else (),
            statistics.index(line["statistic"]),
            line["raters"].split("|"),
        )

    assert [documented(line) for line in lines] == sorted(documented(line) for line in lines)
    scopes = list(dict.fromkeys(line["scope"] for line in lines))
    assert scopes == ["2", "7", "10", "covid-1", "all"]


def test_text_is_a_header_then_five_columns_or_six_with_the_reason():
    lines = agreement_lines(
        read_labels(labels_file(random_rows(9)), name="labels.tsv", schema=DECISION),
        schema=DECISION,
    )
    text = format_text(lines).splitlines()
    assert text[0] == "aspect\tscope\tstatistic\traters\tvalue\treason"
    records = agreement_table.line_records(lines)
    assert len(text) == 1 + len(records)
    for row, record in zip(text[1:], records, strict=True):
        cells = row.split("\t")
        assert cells[:4] == [record[c] for c in ("aspect", "scope", "statistic", "raters")]
        if record["value"] is None:
            assert cells[4:] == ["undefined", record["reason"]]
        else:
            assert len(cells) == 5
            assert float(cells[4]) == record["value"], "full precision: reads back exactly"


def test_json_has_the_same_values_as_text():
    lines = agreement_lines(
        read_labels(labels_file(random_rows(10)), name="labels.tsv", schema=DECISION),
        schema=DECISION,
    )
    from_json = json.loads(format_json(lines))
    from_text = [row.split("\t") for row in format_text(lines).splitlines()[1:]]
    assert len(from_json) == len(from_text) > 100
    for record, cells in zip(from_json, from_text, strict=True):
        assert list(record) == ["aspect", "scope", "statistic", "raters", "value", "reason"]
        assert [record[c] for c in ("aspect", "scope", "statistic", "raters")] == cells[:4]
        if record["value"] is None:
            assert cells[4:] == ["undefined", record["reason"]]
        else:
            assert record["value"] == float(cells[4])
            assert record["reason"] is None


def test_negative_zero_is_printed_as_zero():
    lines = agreement_table.pd.DataFrame(
        {
            "aspect": ["rel"],
            "scope": ["1"],
            "statistic": ["cohen_kappa"],
            "raters": ["ann|bob"],
            "value": [-0.0],
            "reason": [None],
        }
    )
    assert format_text(lines).splitlines()[1].endswith("\t0.0")


# --------------------------------------------------------------------------
# A golden example, computed by hand


GOLDEN = """\
assessor\ttopic\tdocno\trel
bob\t10\td1\t1
ann\t10\td1\t1
cat\t10\td1\t1
ann\t10\td2\t0
bob\t10\td2\t1
cat\t10\td3\t0
ann\t2\td1\t1
bob\t2\td1\t1
ann\t2\td2\t1
bob\t2\td2\t0
ann\t2\td3\t0
bob\t2\td3\t0
ann\t2\td4\t0
bob\t2\td4\t0
bob\t2\td5\t1
ann\t2\td6\t-1
"""
ONE_CATEGORY = "both assessors used only category 1; chance agreement is 1"
FLEISS_ONE = "only one category used; chance agreement is 1"
KAPPAS = ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic")
# Topic 2: ann 1 1 0 0, bob 1 0 0 0 (d5 bob only, d6 no label). P(A) 3/4, P(E) 1/2,
#   kappa 1/2 (binary: the weights change nothing); overlap {d1, d2} vs {d1}: 1/2;
#   alpha: o00 = 4, o11 = 2, o01 = o10 = 1, n0 = 5, n1 = 3: 1 - (2/8) / (30/56) = 8/15.
#   Fleiss (two ratings an item: Scott's pi): p(0) 5/8, p(1) 3/8, P(E) 17/32, P(A) 3/4: 7/15.
# Topic 10: d1 rated 1 by all three, d2 ann 0 bob 1, d3 cat only.
#   ann|bob: P(A) 1/2, P(E) 1/2, kappa 0, overlap {d1} vs {d1, d2}: 1/2;
#   ann|cat, bob|cat: d1 only, both 1: P(A) 1, kappa undefined, overlap 1.
#   alpha: o11 = 3 (d1: 6 pairs of weight 1/2), o01 = o10 = 1, n0 = 1, n1 = 4:
#   D_o = 2/5, D_e = 8/20: alpha 0. Fleiss: d1 alone (K = 3), one category.
# All: ann|bob on 6 items, ann 1 0 1 1 0 0, bob 1 1 1 0 0 0: P(A) 2/3, P(E) 1/2,
#   kappa 1/3; overlap 2 of 4: 1/2. alpha: o11 = 5, o00 = 4, o01 + o10 = 4,
#   n1 = 7, n0 = 6, n = 13: 1 - (4/13) / (84/156) = 3/7.
GOLDEN_REL = [
    ("2", "observed_agreement", "ann|bob", Fraction(3, 4)),
    *(("2", k, "ann|bob", Fraction(1, 2)) for k in KAPPAS),
    ("2", "voorhees_overlap", "ann|bob", Fraction(1, 2)),
    ("2", "krippendorff_alpha_nominal", "*", Fraction(8, 15)),
    ("2", "krippendorff_alpha_ordinal", "*", Fraction(8, 15)),
    ("2", "fleiss_kappa", "*", Fraction(7, 15)),
    ("10", "observed_agreement", "ann|bob", Fraction(1, 2)),
    ("10", "observed_agreement", "ann|cat", Fraction(1)),
    ("10", "observed_agreement", "bob|cat", Fraction(1)),
    *(
        line
        for k in KAPPAS
        for line in (
            ("10", k, "ann|bob", Fraction(0)),
            ("10", k, "ann|cat", ONE_CATEGORY),
            ("10", k, "bob|cat", ONE_CATEGORY),
        )
    ),
    ("10", "voorhees_overlap", "ann|bob", Fraction(1, 2)),
    ("10", "voorhees_overlap", "ann|cat", Fraction(1)),
    ("10", "voorhees_overlap", "bob|cat", Fraction(1)),
    ("10", "krippendorff_alpha_nominal", "*", Fraction(0)),
    ("10", "krippendorff_alpha_ordinal", "*", Fraction(0)),
    ("10", "fleiss_kappa", "*", FLEISS_ONE),
    ("all", "observed_agreement", "ann|bob", Fraction(2, 3)),
    ("all", "observed_agreement", "ann|cat", Fraction(1)),
    ("all", "observed_agreement", "bob|cat", Fraction(1)),
    *(
        line
        for k in KAPPAS
        for line in (
            ("all", k, "ann|bob", Fraction(1, 3)),
            ("all", k, "ann|cat", ONE_CATEGORY),
            ("all", k, "bob|cat", ONE_CATEGORY),
        )
    ),
    ("all", "voorhees_overlap", "ann|bob", Fraction(1, 2)),
    ("all", "voorhees_overlap", "ann|cat", Fraction(1)),
    ("all", "voorhees_overlap", "bob|cat", Fraction(1)),
    ("all", "krippendorff_alpha_nominal", "*", Fraction(3, 7)),
    ("all", "krippendorff_alpha_ordinal", "*", Fraction(3, 7)),
    ("all", "fleiss_kappa", "*", FLEISS_ONE),
]


def test_golden_example_computed_by_hand():
    frame = read_labels(GOLDEN.encode(), name="golden.tsv", schema=BINARY)
    text = format_text(agreement_lines(frame, schema=BINARY)).splitlines()
    # Binary relevance: rel_binary is rel without Voorhees' overlap.
    expected = [("rel", *line) for line in GOLDEN_REL] + [
        ("rel_binary", *line) for line in GOLDEN_REL if line[1] != "voorhees_overlap"
    ]
    assert len(text) == 1 + len(expected)
    for row, (aspect, scope, statistic, raters, value) in zip(text[1:], expected, strict=True):
        cells = row.split("\t")
        assert cells[:4] == [aspect, scope, statistic, raters]
        if isinstance(value, str):
            assert cells[4:] == ["undefined", value]
        else:
            assert len(cells) == 5
            assert float(cells[4]) == pytest.approx(float(value), abs=1e-12, rel=0)


# --------------------------------------------------------------------------
# Reading LABELS files


def read(text: str, schema: LabelSchema = DECISION):
    return read_labels(text.encode(), name="labels.tsv", schema=schema)


def test_a_labels_file_becomes_a_labels_frame_without_the_missing_labels():
    frame = read(
        "\ufeff" + HEADER + "ann\t1\td1\t2\t3\t1\r\n"
        "# a comment\n\nbob\t1\td1\t0\t\t\nann\t1\td2\t1\t-2\t-1\n"
    )
    assert frame.columns.tolist() == [
        "assessor",
        "query_id",
        "doc_id",
        "relevance",
        "effectiveness",
        "credibility",
    ]
    assert frame.astype(object).where(frame.notna(), None).values.tolist() == [
        ["ann", "1", "d1", 2, 3, 1],
        ["bob", "1", "d1", 0, None, None],
        ["ann", "1", "d2", 1, None, None],
    ]


@pytest.mark.parametrize(
    "header", ["assessor\ttopic\tdocno\trel\n", "assessor\ttopic\tdocno\trel\teff\tcred\n"]
)
def test_a_schema_without_aspects_takes_four_columns_or_empty_eff_and_cred(header):
    body = "ann\t1\td1\t1\n" if header.count("\t") == 3 else "ann\t1\td1\t1\t\t-1\n"
    frame = read(header + body, BINARY)
    assert frame.columns.tolist() == ["assessor", "query_id", "doc_id", "relevance"]
    assert frame.relevance.tolist() == [1]


@pytest.mark.parametrize(
    ("text", "schema", "problem"),
    [
        (
            "assessor\ttopic\tdocno\trelevance\teff\tcred\nann\t1\td1\t1\t1\t1\n",
            DECISION,
            "labels.tsv:1: expected the header line assessor, topic, docno, rel, eff, cred "
            "(tab-separated); found 6 columns: assessor, topic, docno, relevance, eff, cred",
        ),
        (
            "assessor topic docno rel\n",
            BINARY,
            "labels.tsv:1: expected the header line assessor, topic, docno, rel, eff, cred "
            "(tab-separated), which may stop after rel; "
            "found 1 column: assessor topic docno rel",
        ),
        (
            "assessor\ttopic\tdocno\trel\nann\t1\td1\t1\n",
            DECISION,
            "labels.tsv:1: expected the header line assessor, topic, docno, rel, eff, cred",
        ),
        (
            HEADER + "ann\t1\td1\t1\t1\t1\nbob\t1\td1\t1\t1\n",
            DECISION,
            "labels.tsv:3: expected 6 tab-separated columns (assessor topic docno rel eff cred), "
            "found 5",
        ),
        (
            HEADER + "ann\t1\td1\t3\t1\t1\n",
            DECISION,
            "labels.tsv:2: rel: Relevance must be one of 0 (Not relevant), 1 (Relevant), "
            "2 (Highly relevant); got 3",
        ),
        (HEADER + "ann\t1\td1\t1\t4\t1\n", DECISION, "labels.tsv:2: eff: Effectiveness must be"),
        (HEADER + "ann\t1\td1\t1\t1\t-3\n", DECISION, "labels.tsv:2: cred: Credibility must be"),
        (
            HEADER + "ann\t1\td1\t1.5\t1\t1\n",
            DECISION,
            "labels.tsv:2: rel: Relevance must be a whole number; got '1.5'",
        ),
        (
            HEADER + "ann\t1\td1\tx\t1\t1\n",
            DECISION,
            "labels.tsv:2: rel: Relevance must be a whole",
        ),
        (
            HEADER + "ann\t1\td1\t1\t1\t1\n\nann\t1\td1\t2\t1\t1\n",
            DECISION,
            "labels.tsv:4: ann labelled docno 'd1' of topic '1' twice (first on line 2)",
        ),
        (
            HEADER + "ann\t1\td1\t1\t\t1\n",
            BINARY,
            "labels.tsv:2: cred: must be empty, the schema has no aspect for it",
        ),
        (HEADER + "a|b\t1\td1\t1\t1\t1\n", DECISION, "labels.tsv:2: assessor 'a|b': a name may"),
        (HEADER + "ann\t\td 1\t1\t1\t1\n", DECISION, "labels.tsv:2: no topic"),
        (
            HEADER + "ann\tall\td1\t1\t1\t1\n",
            DECISION,
            "labels.tsv:2: topic 'all': reserved: the agreement table's name for all topics pooled",
        ),
        (HEADER + "ann\t1\td 1\t1\t1\t1\n", DECISION, "labels.tsv:2: docno 'd 1' is empty or"),
        ("", DECISION, "labels.tsv: empty file: expected the header line assessor, topic,"),
        ("\n# nothing\n", DECISION, "labels.tsv: empty file"),
        (HEADER, DECISION, "labels.tsv: no labels after the header line"),
        (HEADER + "ann\t1\td\xe9\t1\t1\t1\n", DECISION, "labels.tsv:2: not UTF-8 (byte 0xe9)"),
    ],
)
def test_bad_labels_name_the_file_line_and_reason(text, schema, problem):
    data = text.encode("latin-1") if "\xe9" in text else text.encode()
    with pytest.raises(InputError) as raised:
        read_labels(data, name="labels.tsv", schema=schema)
    assert problem in str(raised.value)


def test_every_bad_line_is_reported_at_once():
    with pytest.raises(InputError) as raised:
        read(HEADER + "ann\t1\td1\t3\t1\t1\nann\t1\td2\t1\t1\nann\t1\td3\t1\t9\t1\n")
    assert [p.line for p in raised.value.problems] == [2, 3, 4]


def test_a_schema_with_more_aspects_than_columns_is_refused():
    data = default_schema()
    data["aspects"].append(
        {
            **data["aspects"][1],
            "id": "novelty",
            "grades": [
                {"value": 0, "name": "Old", "key": "o"},
                {"value": 1, "name": "New", "key": "w"},
            ],
        }
    )
    schema = LabelSchema.parse(data)
    with pytest.raises(InputError, match=r"labels\.tsv: the schema has 3 aspects"):
        read(HEADER + "ann\t1\td1\t1\t1\t1\n", schema)
    with pytest.raises(ValueError, match=r"names for 2 \(eff, cred\)"):
        agreement_table.aspect_names(schema)
