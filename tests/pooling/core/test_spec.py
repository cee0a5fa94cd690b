"""Pool specs (pure core): parsing, validation, storage, presets, gaps."""

from __future__ import annotations

import re

import pytest

from pooling.core.spec import (
    CDS_2014,
    PRESETS,
    PoolSpec,
    PoolSpecError,
    Stratum,
    parse_pool_spec,
    parse_strata,
    parse_stratum,
)

# --------------------------------------------------------------------------
# Spec: parsing, validation, storage


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"strata": ["1-20:1.0", "15-30:0.5"]}, "overlap"),
        ({"strata": ["21-100:0.8", "1-20:1.0"]}, "out of order"),
        ({"strata": ["1-20:1.5"]}, "between 0 and 1"),
        ({"strata": ["1-20:0.1234567"]}, "more than 6 decimals"),
        ({"depth": "0"}, "at least 1"),
        ({"depth": "ten"}, "not an integer"),
        ({"strata": ["30-20:0.5"]}, "after its last"),
        ({"strata": ["0-20:0.5"]}, "ranks start at 1"),
        ({"strata": ["1-20"]}, "LO-HI:RATE"),
        ({"strata": ["a-b:0.5"]}, "LO-HI:RATE"),
        ({"strata": ["1-20:x"]}, "LO-HI:RATE"),
        ({"strata": ["-1-20:0.5"]}, "LO-HI:RATE"),
        ({"depth": "20", "strata": ["10-100:0.5"]}, "overlaps stratum 10-100:0.5"),
        ({"depth": "20", "strata": ["21-100:0.5"], "topic_depths": ["7:30"]}, "topic '7'"),
        ({"strata": ["1-20:0.5"], "topic_depths": ["7:30"]}, "give it too"),
        ({"depth": "20", "topic_depths": ["7"]}, "TOPIC:DEPTH"),
        ({"depth": "20", "topic_depths": ["7:10", "7:12"]}, "given twice"),
        ({"depth": "20", "topic_depths": ["7:0"]}, "at least 1"),
        ({"depth": "20", "seed": "-3"}, "non-negative"),
        ({"depth": "20", "order": "random"}, "order must be one of"),
        ({}, "give a depth"),
    ],
)
def test_bad_specs_are_rejected_with_a_message_saying_what_is_wrong(arguments, message):
    with pytest.raises(PoolSpecError, match=message):
        parse_pool_spec(**arguments)


def test_per_topic_depths_are_keyed_by_string_topic_ids():
    with pytest.raises(PoolSpecError, match="topic ids are strings, not 301"):
        PoolSpec(depth=10, topic_depths={301: 20})  # type: ignore[dict-item]


def test_pool_spec_errors_are_caught_as_value_errors_with_their_reason():
    """Forms and commands catch ValueError: a spec error must reach them with its message."""
    with pytest.raises(ValueError, match=r"stratum 1-5:-0.1: the rate must be between 0 and 1"):
        Stratum(1, 5, -0.1)


def test_spec_round_trips_through_its_stored_form():
    spec = PoolSpec(
        depth=20,
        strata=parse_strata("21-100:0.8"),
        topic_depths={"a:b": 5},
        seed=3,
        allow_gaps=True,
    )
    assert PoolSpec.from_dict(spec.to_dict()) == spec
    assert spec.to_dict()["strata"] == ["21-100:0.8"]


def test_presets_offer_depth_k_and_cds_2014():
    assert PRESETS["depth-100"].spec == PoolSpec(depth=100)
    assert CDS_2014.strata_for("1") == parse_strata("1-20:1.0 21-100:0.8 101-500:0.5")
    assert PRESETS["cds-2014"].spec is CDS_2014


def test_scaling_multiplies_the_strata_rates_and_caps_them_at_one():
    scaled = CDS_2014.scaled(1.5)
    assert scaled.strata_for("1") == parse_strata("1-20:1.0 21-100:1.0 101-500:0.75")
    assert CDS_2014.scaled(0.1).strata == (Stratum(21, 100, 0.08), Stratum(101, 500, 0.05))


def test_parse_stratum_reads_integers_and_decimal_rates():
    assert parse_stratum(" 21-100:.8 ") == Stratum(21, 100, 0.8)
    assert str(parse_stratum("1-20:1")) == "1-20:1.0"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"depth": 5, "topic_depths": {"103": 3}, "strata": "6-25:0.3"},
            "depth of topic '103' 3 and stratum 6-25:0.3 leave ranks 4-5 out of the pool",
        ),
        ({"depth": 3, "strata": "5-25:0.3"}, "depth 3 and stratum 5-25:0.3 leave rank 4 out"),
        (
            {"depth": 5, "strata": "6-20:0.5 30-40:0.1"},
            "strata 6-20:0.5 and 30-40:0.1 leave ranks 21-29",
        ),
        ({"strata": "21-100:0.5"}, "stratum 21-100:0.5, with no depth before it, leave ranks 1-20"),
    ],
)
def test_a_gap_in_the_ranks_is_an_error_unless_asked_for(spec, message):
    fields = {**spec, "strata": parse_strata(spec["strata"])}
    with pytest.raises(PoolSpecError, match=re.escape(message)):
        PoolSpec(**fields)
    allowed = PoolSpec(**fields, allow_gaps=True)
    assert PoolSpec.from_dict(allowed.to_dict()) == allowed
    assert allowed.to_args()[-1] == "--allow-gaps"


def test_gapless_specs_store_no_allow_gaps_key():
    assert "allow_gaps" not in CDS_2014.to_dict()
    assert "--allow-gaps" not in CDS_2014.to_args()


def test_full_depth_is_the_k_of_a_depth_k_pool_and_none_otherwise():
    assert PoolSpec(depth=20).full_depth("1") == 20
    assert PoolSpec(depth=20, topic_depths={"2": 50}).full_depth("2") == 50
    # Strata judged in full, one after the other, pool every rank down to the last.
    assert PoolSpec(depth=10, strata=(Stratum(11, 30, 1.0),)).full_depth("1") == 30
    assert PoolSpec(depth=10, strata=(Stratum(11, 30, 0.5),)).full_depth("1") is None
    gap = PoolSpec(depth=10, strata=(Stratum(21, 30, 1.0),), allow_gaps=True)
    assert gap.full_depth("1") is None
    assert PoolSpec(strata=(Stratum(5, 30, 1.0),), allow_gaps=True).full_depth("1") is None
    assert PoolSpec(source="qrels.txt").full_depth("1") is None


def test_covered_depth_is_the_deepest_rank_of_strata_without_gaps_sampled_or_not():
    assert PoolSpec(depth=10, strata=(Stratum(11, 30, 0.5),)).covered_depth("1") == 30
    assert PoolSpec(strata=(Stratum(1, 30, 0.1),)).covered_depth("1") == 30
    assert PoolSpec(depth=20, topic_depths={"2": 50}).covered_depth("2") == 50
    gap = PoolSpec(depth=10, strata=(Stratum(21, 30, 0.5),), allow_gaps=True)
    assert gap.covered_depth("1") is None
    assert PoolSpec(strata=(Stratum(5, 30, 0.5),), allow_gaps=True).covered_depth("1") is None
    assert PoolSpec(source="qrels.txt").covered_depth("1") is None
