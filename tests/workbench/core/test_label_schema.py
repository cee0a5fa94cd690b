"""The label schema: validation and the rules a judgment must follow."""

import copy
import json

import pytest

from workbench.core.label_schema import (
    MAX_GRADE,
    NOT_ASKED,
    SCHEMA_PRESETS,
    LabelError,
    LabelSchema,
    LabelSchemaError,
    default_schema,
    load_schema,
    preset_of,
    schema_problems,
)

BINARY = {
    "relevance": {
        "grades": [
            {"value": 0, "name": "Not relevant", "key": "n"},
            {"value": 1, "name": "Relevant", "key": "r"},
        ]
    }
}
FOUR_GRADES = {
    "relevance": {"grades": [{"value": v, "name": f"Grade {v}", "key": str(v)} for v in range(4)]},
    "aspects": [],
}


def test_default_schema_is_valid_with_relevance_and_two_aspects():
    schema = LabelSchema.default()
    assert schema.relevance.values == (0, 1, 2)
    assert schema.aspect_ids == ("effectiveness", "credibility")
    assert schema.aspects[0].values == (0, 1, 2, 3)
    assert schema.aspects[1].values == (0, 1)


@pytest.mark.parametrize("data", [BINARY, FOUR_GRADES])
def test_binary_and_four_grade_schemas_are_valid(data):
    schema = LabelSchema.parse(data)
    assert schema.aspects == ()
    assert schema.clean(len(schema.relevance.values) - 1, {}) == (schema.relevance.values[-1], {})


def test_aspects_are_required_when_relevant():
    schema = LabelSchema.default()
    assert schema.clean(2, {"effectiveness": "3", "credibility": 1}) == (
        2,
        {"effectiveness": 3, "credibility": 1},
    )
    with pytest.raises(LabelError, match="Credibility is required when Relevance is 1"):
        schema.clean(1, {"effectiveness": 3})


def test_aspects_are_stored_as_not_asked_when_not_relevant():
    schema = LabelSchema.default()
    assert schema.clean("0", {"effectiveness": 3}) == (
        0,
        {"effectiveness": NOT_ASKED, "credibility": NOT_ASKED},
    )


def test_aspect_asked_always_is_required_even_when_not_relevant():
    data = default_schema()
    data["aspects"][1]["when"] = "always"
    schema = LabelSchema.parse(data)
    with pytest.raises(LabelError, match="Credibility is required when Relevance is 0"):
        schema.clean(0, {})
    assert schema.clean(0, {"credibility": 0}) == (
        0,
        {"effectiveness": NOT_ASKED, "credibility": 0},
    )


@pytest.mark.parametrize(
    ("relevance", "aspects", "message"),
    [
        (
            3,
            {},
            r"Relevance must be one of 0 \(Not relevant\), 1 \(Relevant\), 2 \(Highly relevant\); got 3",
        ),
        ("two", {}, "Relevance must be a whole number; got 'two'"),
        (True, {}, "Relevance must be a whole number; got True"),
        (1, {"effectiveness": 4, "credibility": 1}, "Effectiveness must be one of .*; got 4"),
        (1, {"effectiveness": 1, "credibility": 1, "mood": 2}, "unknown aspect mood"),
    ],
)
def test_values_outside_the_schema_are_rejected(relevance, aspects, message):
    with pytest.raises(LabelError, match=message):
        LabelSchema.default().clean(relevance, aspects)


def _broken(change) -> dict:
    data = copy.deepcopy(default_schema())
    change(data)
    return data


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ([], "the label schema must be a JSON object"),
        ({"relevance": []}, "'relevance' must be an object with 'grades'"),
        (_broken(lambda d: d.update(extra=1)), "unknown schema fields: extra"),
        (
            _broken(lambda d: d["relevance"]["grades"].pop() and d["relevance"]["grades"].pop()),
            "relevance: 'grades' must list at least two grades",
        ),
        (
            _broken(lambda d: d["relevance"]["grades"][1].update(value=0)),
            "relevance: grade value 0 is used twice",
        ),
        (
            _broken(lambda d: d["relevance"]["grades"][1].update(value=-1)),
            "relevance: grade value -1 must be a non-negative integer",
        ),
        (
            _broken(lambda d: d["relevance"]["grades"][0].update(value=5)),
            "relevance: grade 0 (not relevant) is required",
        ),
        (
            _broken(lambda d: d["relevance"]["grades"][1].update(key="ab")),
            "relevance: grade 1 needs a one-character key",
        ),
        (
            _broken(lambda d: d["relevance"]["grades"][1].update(key="u")),
            "relevance: key 'u' is reserved (u undoes, ? shows the key map, ! sets a document aside, / writes a note)",
        ),
        (
            _broken(lambda d: d["relevance"]["grades"][1].update(name="")),
            "relevance: grade 1 needs a name",
        ),
        (
            _broken(lambda d: d["aspects"][1]["grades"][0].update(key="e")),
            "key 'e' is used by both effectiveness and credibility",
        ),
        (
            _broken(lambda d: d["aspects"][1].update(id="effectiveness")),
            "aspect id 'effectiveness' is used twice",
        ),
        (
            _broken(lambda d: d["aspects"][1].update(id="not an id")),
            "aspect 2 needs an 'id' made of letters, digits and _",
        ),
        (
            _broken(lambda d: d["aspects"][0].update(when="sometimes")),
            "aspect 'effectiveness': 'when' must be one of relevant, always",
        ),
        (_broken(lambda d: d.update(aspects={})), "'aspects' must be a list"),
    ],
)
def test_schema_problems_are_reported(data, problem):
    assert problem in schema_problems(data)
    with pytest.raises(LabelSchemaError):
        LabelSchema.parse(data)


@pytest.mark.parametrize("value", [MAX_GRADE + 1, 2**31, 10**30])
@pytest.mark.parametrize("question", ["relevance", "effectiveness"])
def test_a_grade_the_judgment_table_cannot_store_is_refused(value, question):
    data = default_schema()
    target = data["relevance"] if question == "relevance" else data["aspects"][0]
    target["grades"][-1]["value"] = value
    [problem] = schema_problems(data)
    assert problem.startswith(f"{question}: grade value {str(value)[:20]}")
    assert f"at most {MAX_GRADE}" in problem


def test_the_largest_storable_grade_is_a_valid_grade():
    data = default_schema()
    data["relevance"]["grades"][-1]["value"] = MAX_GRADE
    assert LabelSchema.parse(data).clean(MAX_GRADE, {"effectiveness": 0, "credibility": 0})[0] == (
        MAX_GRADE
    )


def test_key_map_lists_every_question_in_order():
    key_map = LabelSchema.default().key_map()
    assert [q["id"] for q in key_map] == ["relevance", "effectiveness", "credibility"]
    assert key_map[0]["grades"][2] == {"value": 2, "name": "Highly relevant", "key": "2"}


def test_questions_are_relevance_then_the_aspects_in_order():
    schema = LabelSchema.default()
    assert [q.id for q in schema.questions] == ["relevance", "effectiveness", "credibility"]
    assert LabelSchema.parse(BINARY).questions == (LabelSchema.parse(BINARY).relevance,)


def test_imports_may_mark_an_aspect_as_not_judged():
    schema = LabelSchema.default()
    assert schema.clean(1, {"effectiveness": -2, "credibility": 1}, allow_not_judged=True) == (
        1,
        {"effectiveness": -2, "credibility": 1},
    )
    with pytest.raises(LabelError, match="Effectiveness must be one of"):
        schema.clean(1, {"effectiveness": -2, "credibility": 1})


@pytest.mark.parametrize("name", sorted(SCHEMA_PRESETS))
def test_every_preset_is_a_valid_schema_and_recognised(name):
    preset = SCHEMA_PRESETS[name]
    data = preset.schema()
    assert schema_problems(data) == []
    assert preset_of(data) == name
    data["relevance"]["grades"][0]["name"] = "changed"
    assert preset_of(data) is None, "a copy is independent of the preset"
    assert preset_of(preset.schema()) == name


def test_presets_cover_binary_to_five_grades_and_the_decision_track():
    grades = {
        name: LabelSchema.parse(p.data).relevance.values for name, p in SCHEMA_PRESETS.items()
    }
    assert grades["binary"] == (0, 1)
    assert grades["graded-0-3"] == (0, 1, 2, 3)
    assert grades["graded-0-4"] == (0, 1, 2, 3, 4)
    assert LabelSchema.parse(SCHEMA_PRESETS["decision"].data) == LabelSchema.default()
    assert LabelSchema.parse(SCHEMA_PRESETS["graded-0-3"].data).aspects == ()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("3", r"Relevance must be one of 0 \(Not relevant\), .*; got 3"),
        ("1.0", "Relevance must be a whole number; got '1.0'"),
        ("", "Relevance must be a whole number; got ''"),
    ],
)
def test_a_question_reads_only_its_own_grades(raw, message):
    relevance = LabelSchema.default().relevance
    assert relevance.value_of(" 2 ") == 2
    with pytest.raises(LabelError, match=message):
        relevance.value_of(raw)


def test_load_schema_reads_a_preset_name_or_a_json_file(tmp_path):
    assert load_schema("binary") == LabelSchema.parse(SCHEMA_PRESETS["binary"].data)
    assert load_schema("decision") == LabelSchema.default()
    path = tmp_path / "four.json"
    path.write_text(json.dumps(FOUR_GRADES))
    assert load_schema(str(path)).relevance.values == (0, 1, 2, 3)


def test_load_schema_errors_name_the_presets_or_the_file(tmp_path):
    with pytest.raises(LabelSchemaError, match=r"unknown schema 'nope': a preset \(binary, "):
        load_schema("nope")
    not_json = tmp_path / "bad.json"
    not_json.write_text("{")
    with pytest.raises(LabelSchemaError, match=f"{not_json}: not valid JSON: Expecting"):
        load_schema(str(not_json))
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps({"relevance": {"grades": []}}))
    with pytest.raises(LabelSchemaError, match=f"{invalid}: relevance: 'grades' must list"):
        load_schema(str(invalid))


def test_labels_read_by_their_schema_names():
    schema = LabelSchema.default()
    assert schema.label_names({"relevance": 2, "effectiveness": 3, "credibility": 1}) == [
        "Relevance: Highly relevant",
        "Effectiveness: Effective",
        "Credibility: Credible",
    ]
    # Aspects not asked are left out; -2 and values outside the schema are said as they are.
    assert schema.label_names({"relevance": 0, "effectiveness": -1, "credibility": -1}) == [
        "Relevance: Not relevant"
    ]
    assert schema.label_names({"relevance": 1, "effectiveness": -2, "credibility": 7}) == [
        "Relevance: Relevant",
        "Effectiveness: not judged",
        "Credibility: 7",
    ]
    assert schema.label_names({}) == []
