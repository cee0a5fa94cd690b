"""manage.py reusability on a sampled pool: stratified qrels files (with or without
inclusion.tsv) and a stored sampled pool, which reports as its files do and
with the inferred scores its scores page shows."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from pooling import selectors as pooling_selectors
from pooling.core.spec import PoolSpec, Stratum
from scoring import reusability_selectors, selectors
from scoring.core import exports
from scoring.core.analysis.reusability import report_measure, sampled_reusability
from scoring.core.analysis.reusability_render import to_json
from tests.helpers import run_text
from tests.scoring.core.analysis.test_reusability_command import (
    POOL_RUNS,
    _main,
    judged_pool,
    pool_main,
)
from tests.scoring.core.analysis.test_reusability_sampled import HAND_QRELS, HAND_RUNS

STRATIFIED = "".join(
    f"{q} 0 {d} {s} {r}\n" for q, d, s, r in HAND_QRELS.itertuples(index=False, name=None)
)
RUN_TEXT = {
    "A": "1 Q0 d2 1 3 A\n1 Q0 d1 2 2 A\n1 Q0 d4 3 1 A\n",
    "B": "1 Q0 d3 1 3 B\n1 Q0 d1 2 2 B\n",
}
INCLUSION = (
    "topic\tdocno\tstratum\tinclusion_probability\n"
    "1\td1\t1\t1.0\n1\td2\t2\t0.25\n1\td3\t1\t1.0\n1\td4\t2\t0.25\n"
)


@pytest.fixture
def files(tmp_path) -> list[str]:
    (tmp_path / "stratified").write_text(STRATIFIED)
    (tmp_path / "inclusion.tsv").write_text(INCLUSION)
    for name, text in RUN_TEXT.items():
        (tmp_path / name).write_text(text)
    runs = [str(tmp_path / name) for name in RUN_TEXT]
    return ["--stratified", str(tmp_path / "stratified"), "--depth", "2", *runs]


def test_stratified_files_report_as_the_core_does(files):
    status, out, err = _main(*files, "--format", "json")
    assert (status, err) == (0, "")
    report = json.loads(out)
    measure = report_measure("infAP", sampled=True)
    assert report == to_json(sampled_reusability(HAND_QRELS, HAND_RUNS, depth=2, measure=measure))
    assert (report["measure"], report["sampled"], report["pooled"]) == ("infAP", True, 3)
    assert [m["measure"] for m in report["leave_out"][0]["measures"]] == ["infAP", "bpref"]
    assert [u["removed_judged"] for u in report["leave_out"][0]["units"]] == [0, 1]


def test_an_inclusion_file_gives_the_probabilities(files):
    inclusion = str(files[1]).replace("stratified", "inclusion.tsv")
    status, out, err = _main(*files, "--inclusion", inclusion, "-m", "infNDCG", "--format", "json")
    assert (status, err) == (0, "")
    given = pd.DataFrame(
        {"query_id": ["1", "1"], "stratum": [1, 2], "inclusion_probability": [1.0, 0.25]}
    )
    measure = report_measure("infNDCG", sampled=True)
    core = sampled_reusability(HAND_QRELS, HAND_RUNS, depth=2, measure=measure, inclusion=given)
    assert json.loads(out) == to_json(core)


def test_the_text_says_why_there_is_no_condensed_list(files):
    status, out, _ = _main(*files)
    assert status == 0
    assert "infAP, sampled down to depth 2; 2 runs, 1 topic, 3 documents pooled (2 judged)" in out
    assert "No -J" in out
    assert "infAP -J" not in out
    assert "removed  judged  relevant" in out


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("1\td1\t1\n", "inclusion.tsv:2: expected 'topic docno stratum inclusion_probability'"),
        ("1\td1\tone\t1.0\n", "inclusion.tsv:2: stratum 'one' is not an integer"),
        ("1\td1\t1\t0\n", "inclusion.tsv:2: inclusion probability '0' is not in (0, 1]"),
        ("1\td1\t1\t1.5\n", "inclusion.tsv:2: inclusion probability '1.5' is not in (0, 1]"),
        ("1\td1\t1\t1.0\n1\td1\t1\t1.0\n", "inclusion.tsv:3: topic 1 docno d1 is on line 2 too"),
        (
            "1\td1\t1\t1.0\n1\td3\t1\t0.5\n",
            "inclusion.tsv:3: topic 1 stratum 1: inclusion probability 0.5, but 1.0 on line 2",
        ),
        ("1\td1\t2\t0.5\n", "inclusion.tsv:2: topic 1 docno d1 is in stratum 2, the qrels say 1"),
        ("1\td1\t1\t1.0\n", "inclusion.tsv: topic '1', stratum 2: no inclusion probability"),
    ],
)
def test_a_bad_inclusion_file_is_one_line_and_status_2(files, tmp_path, lines, message):
    (tmp_path / "inclusion.tsv").write_text(
        "topic\tdocno\tstratum\tinclusion_probability\n" + lines
    )
    status, out, err = _main(*files, "--inclusion", str(tmp_path / "inclusion.tsv"))
    assert (status, out) == (2, "")
    assert err.startswith(f"reusability: {tmp_path}/{message}")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (["-m", "map"], "measure 'map': a sampled pool is scored with an inferred measure"),
        (["-m", "infAP", "--qrels", "x"], "give one qrels: --qrels (depth-k pool) or --stratified"),
    ],
)
def test_bad_options_for_a_sampled_pool(files, change, message):
    status, out, err = _main(*files, *change)
    assert (status, out) == (2, "")
    assert message in err
    assert err.count("\n") == 1


def test_inclusion_needs_stratified_qrels_and_infap_a_sampled_pool(tmp_path):
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    (tmp_path / "A").write_text(RUN_TEXT["A"])
    plain = ["--qrels", str(tmp_path / "qrels"), "--depth", "2", str(tmp_path / "A")]
    status, _, err = _main(*plain, "--inclusion", str(tmp_path / "qrels"))
    assert (status, err) == (
        2,
        "reusability: --inclusion goes with a sampled pool's --stratified qrels\n",
    )
    status, _, err = _main(*plain, "-m", "infAP")
    assert status == 2
    assert "measure 'infAP' is inferred from a sampled pool, and this pool samples nothing" in err


# --------------------------------------------------------------------------
# --pool

SAMPLED = PoolSpec(depth=1, strata=(Stratum(2, 3, 0.5),), seed=3)


@pytest.mark.django_db
def test_a_stored_sampled_pool_reports_as_its_files_do(tmp_path):
    pool = judged_pool(SAMPLED)
    status, out, err = pool_main("--pool", str(pool.pk), "--format", "json")
    assert (status, err) == (0, "")
    from_pool = json.loads(out)
    assert (from_pool["measure"], from_pool["sampled"]) == ("infAP", True)
    assert from_pool["depth"] == {"301": 3, "302": 3}
    # The files the pool exports, scored as the pool is (-c for bpref).
    state = selectors.pool_state(pool)
    frame = exports.export_frame(
        "stratified", labels=state.labels, entries=state.entries, aspects=state.aspects
    )
    (tmp_path / "stratified").write_text(exports.render("stratified", frame))
    names = []
    for tag, rows in POOL_RUNS.items():
        (tmp_path / tag).write_bytes(run_text(tag, rows))
        names.append(str(tmp_path / tag))
    status, from_files, err = _main(
        "--stratified",
        str(tmp_path / "stratified"),
        "--depth",
        "3",
        "-c",
        "--format",
        "json",
        *names,
    )
    assert (status, err) == (0, "")
    assert from_pool == {**json.loads(from_files), "depth": {"301": 3, "302": 3}}
    # Unsampled documents count as pooled: more pooled than judged.
    assert from_pool["pooled"] > from_pool["pooled_judged"]


@pytest.mark.django_db
def test_with_every_judgment_the_scores_are_the_scores_pages():
    pool = judged_pool(SAMPLED)
    scores = selectors.pool_scores(pool=pool, measures=["bpref"])
    for measure in ("infAP", "infNDCG"):
        report = reusability_selectors.pool_reusability(pool=pool, measure=measure)
        shown = scores[scores["measure"] == measure].set_index("run_id")["value"]
        full = report.by_run.measures[0].full
        assert list(full) == [shown[tag] for tag in report.runs]  # exactly
    default = reusability_selectors.pool_reusability(pool=pool)
    assert default.measure == "infAP"
    assert list(default.runs) == ["A", "B", "C"]


@pytest.mark.django_db
def test_a_pool_revised_to_sample_is_a_sampled_pool():
    """The rule is each topic's plan now: a depth-k pool whose topic 302 a revision
    samples is reported on with inferred measures, its scores page shows them."""
    from pooling import pool_services

    pool = judged_pool(PoolSpec(depth=3))
    assert not pooling_selectors.pool_samples(pool)
    pool_services.pool_revise(
        pool=pool, spec=PoolSpec(depth=1, strata=(Stratum(2, 3, 0.5),)), topics=["302"]
    )
    assert pooling_selectors.pool_samples(pool)
    report = reusability_selectors.pool_reusability(pool=pool)
    assert report.sampled
    assert report.depth == {"301": 3, "302": 3}
    assert "infAP" in set(selectors.pool_scores(pool=pool)["measure"])


@pytest.mark.django_db
def test_measures_a_stored_pool_refuses():
    sampled = judged_pool(SAMPLED)
    status, _, err = pool_main("--pool", str(sampled.pk), "-m", "map")
    assert status == 2
    assert "a sampled pool is scored with an inferred measure, infAP or infNDCG" in err


@pytest.mark.django_db
def test_a_depth_k_pool_refuses_inferred_measures():
    depth = judged_pool(PoolSpec(depth=2))
    status, _, err = pool_main("--pool", str(depth.pk), "-m", "infAP")
    assert status == 2
    assert "this pool samples nothing" in err


def test_the_docs_state_the_sampled_rule_and_every_option():
    from pathlib import Path

    from scoring.core.analysis.reusability_cli import _parser

    docs = (Path(__file__).resolve().parents[4] / "docs" / "reusability.md").read_text()
    assert "## Sampled pools" in docs
    assert "Why fixed probabilities are sound" in docs
    actions = [action.option_strings for action in _parser()._actions if action.option_strings]
    assert ["--stratified"] in actions
    assert ["--inclusion"] in actions
    # Each option appears in the usage lines, by one of its names.
    usage = docs.split("\n\n")[1]
    missing = [
        names
        for names in actions
        if not any(re.search(re.escape(name) + r"(?![\w-])", usage) for name in names)
    ]
    assert missing == [["-h", "--help"]]
