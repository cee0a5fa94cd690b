"""`manage.py agreement`: a LABELS file without the database, or a pool's stored judgments."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging import services
from judging.core.agreement_table import agreement_lines, format_text, read_labels
from judging.core.judgment_files import read_judgments_tsv
from tests.helpers import make_campaign, make_pool
from tests.judging.core.test_agreement_table import GOLDEN, assert_lines_match_oracles
from tests.judging.generated_labels import HEADER, labels_file, random_rows
from workbench.core.label_schema import SCHEMA_PRESETS, LabelSchema, default_schema

ROOT = Path(__file__).resolve().parents[2]


def agreement(*arguments: object) -> str:
    out = io.StringIO()
    call_command("agreement", *map(str, arguments), stdout=out)
    return out.getvalue()


def manage(*arguments: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "manage.py", "agreement", *map(str, arguments)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, check=False)


def write(tmp_path: Path, data: bytes | str, name: str = "labels.tsv") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# --------------------------------------------------------------------------
# A file


def test_a_file_prints_the_core_table_without_touching_the_database(tmp_path):
    """No django_db mark: pytest-django fails any query this test would make."""
    rows = random_rows(21, n_assessors=3)
    path = write(tmp_path, labels_file(rows))
    schema = LabelSchema.default()
    expected = format_text(
        agreement_lines(read_labels(path.read_bytes(), name="x", schema=schema), schema=schema)
    )
    assert agreement(path) == expected
    assert_lines_match_oracles(rows)


def test_a_file_needs_no_database_in_a_real_process(tmp_path):
    """A data directory without a database: the command neither needs nor creates one."""
    path = write(tmp_path, GOLDEN)
    data_dir = tmp_path / "data"
    env = {"WORKBENCH_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin"}
    done = manage(path, "--schema", "binary", env=env)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == agreement(path, "--schema", "binary")
    assert not any(data_dir.glob("*.sqlite3*"))


def test_schema_is_a_preset_name_or_a_json_file(tmp_path):
    path = write(tmp_path, GOLDEN)
    schema_file = write(tmp_path, json.dumps(SCHEMA_PRESETS["binary"].data), "binary.json")
    by_name = agreement(path, "--schema", "binary")
    assert agreement(path, "--schema", schema_file) == by_name
    assert "\nrel\t2\tcohen_kappa\tann|bob\t0.5\n" in by_name
    graded = write(tmp_path, "assessor\ttopic\tdocno\trel\nann\t1\td1\t4\nbob\t1\td1\t3\n")
    assert "\nrel\t1\tobserved_agreement\tann|bob\t0.0\n" in agreement(
        graded, "--schema", "graded-0-4"
    )
    with pytest.raises(CommandError, match=f"{graded}:2: rel: Relevance must be one of 0 "):
        agreement(graded, "--schema", "binary")


def test_json_gives_the_same_values_as_text(tmp_path):
    path = write(tmp_path, labels_file(random_rows(22)))
    text = agreement(path).splitlines()
    records = json.loads(agreement(path, "--format", "json"))
    assert len(records) == len(text) - 1 > 100
    for record, row in zip(records, text[1:], strict=True):
        cells = row.split("\t")
        assert [record[k] for k in ("aspect", "scope", "statistic", "raters")] == cells[:4]
        if record["value"] is None:
            assert cells[4:] == ["undefined", record["reason"]]
        else:
            assert record["value"] == float(cells[4])


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    path = write(tmp_path, labels_file(random_rows(23)))
    pipeline = f"{sys.executable} manage.py agreement {path} | head -1; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", pipeline], cwd=ROOT, capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "aspect\tscope\tstatistic\traters\tvalue\treason\n",
        "",
    )


# --------------------------------------------------------------------------
# Bad input: exit status 2, file:line: reason


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("assessor\ttopic\tdoc\trel\teff\tcred\n", ":1: expected the header line"),
        (HEADER + "ann\t1\td1\t1\t1\n", ":2: expected 6 tab-separated columns"),
        (HEADER + "ann\t1\td1\t5\t1\t1\n", ":2: rel: Relevance must be one of"),
        (HEADER + "ann\t1\td1\tyes\t1\t1\n", ":2: rel: Relevance must be a whole number"),
        (HEADER + "ann\t1\td1\t1\t1\t1\nann\t1\td1\t0\t\t\n", ":3: ann labelled docno 'd1'"),
        ("", ": empty file"),
        (HEADER, ": no labels after the header line"),
    ],
)
def test_bad_labels_exit_2_naming_file_line_and_reason(tmp_path, text, problem):
    path = write(tmp_path, text)
    with pytest.raises(CommandError) as raised:
        agreement(path)
    assert raised.value.returncode == 2
    assert f"{path}{problem}" in str(raised.value)


def test_bad_labels_in_a_real_process_exit_2_without_traceback(tmp_path):
    path = write(tmp_path, HEADER + "ann\t1\td1\t1\t1\t1\nbob\t1\td1\t3\t1\t1\n")
    done = manage(path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"{path}:3: rel: Relevance must be one of" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((), "give either a LABELS.tsv file or --pool ID"),
        (("x.tsv", "--pool", "1"), "give either a LABELS.tsv file or --pool ID"),
        (("--pool", "1", "--schema", "binary"), "--schema is for a file"),
        (("{tmp}/missing.tsv",), "{tmp}/missing.tsv: No such file or directory"),
        (("{tmp}/labels.tsv", "--schema", "nope"), "--schema: unknown schema 'nope': a preset"),
    ],
)
def test_usage_errors_exit_2(tmp_path, arguments, message):
    write(tmp_path, GOLDEN)
    with pytest.raises(CommandError, match=message.format(tmp=tmp_path)) as raised:
        agreement(*(a.format(tmp=tmp_path) for a in arguments))
    assert raised.value.returncode == 2


def test_the_command_module_leaves_the_computing_libraries_until_it_runs():
    """`--help` and the command listing do not pay for pandas and scikit-learn."""
    code = (
        "import sys, django; django.setup(); "
        "import judging.management.commands.agreement; "
        "sys.exit(bool({'pandas', 'sklearn'} & set(sys.modules)))"
    )
    env = {"DJANGO_SETTINGS_MODULE": "config.settings", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=False)
    assert done.returncode == 0


# --------------------------------------------------------------------------
# A pool's stored judgments


def store(campaign, data: bytes) -> None:
    rows, log = read_judgments_tsv(
        data,
        name="labels.tsv",
        schema=campaign.schema,
        known_topics=campaign.topics.values_list("topic_id", flat=True),
        known_assessors=None,
    )
    assert log.ok, log.summary_lines()
    services.judgments_import(campaign=campaign, rows=rows, create_assessors=True)


@pytest.mark.django_db
def test_a_pool_gives_the_same_lines_as_its_labels_in_a_file(tmp_path):
    rows = random_rows(24, n_assessors=4)
    data = labels_file(rows, stored_codes=True)
    topics = sorted({r["topic"] for r in rows})
    campaign = make_campaign(topics=topics)
    pool = make_pool(
        campaign, {t: sorted({r["docno"] for r in rows if r["topic"] == t}) for t in topics}
    )
    store(campaign, data)
    from_pool = agreement("--pool", pool.pk)
    assert from_pool == agreement(write(tmp_path, data))
    assert from_pool.count("\n") > 200
    assert json.loads(agreement("--pool", pool.pk, "--format", "json")) == json.loads(
        agreement(write(tmp_path, data), "--format", "json")
    )


@pytest.mark.django_db
def test_a_pool_uses_its_campaign_schema(tmp_path):
    graded = SCHEMA_PRESETS["graded-0-3"].schema()
    campaign = make_campaign(topics=("1",), label_schema=graded)
    pool = make_pool(campaign, {"1": ["d1", "d2", "d3"]})
    data = "assessor\ttopic\tdocno\trel\n" + "".join(
        f"{who}\t1\t{doc}\t{rel}\n"
        for who, labels in (("ann", (3, 0, 2)), ("bob", (3, 1, 2)))
        for doc, rel in zip(("d1", "d2", "d3"), labels, strict=True)
    )
    store(campaign, data.encode())
    from_pool = agreement("--pool", pool.pk)
    assert from_pool == agreement(write(tmp_path, data), "--schema", "graded-0-3")
    assert {line.split("\t")[0] for line in from_pool.splitlines()[1:]} == {"rel", "rel_binary"}


@pytest.mark.django_db
def test_unknown_pool_exits_2():
    with pytest.raises(CommandError, match="no pool with id 999") as raised:
        agreement("--pool", 999)
    assert raised.value.returncode == 2


@pytest.mark.django_db
def test_a_pool_whose_schema_has_more_aspects_than_columns_exits_2():
    schema = default_schema()
    novelty = [{"value": 0, "name": "Old", "key": "o"}, {"value": 1, "name": "New", "key": "w"}]
    schema["aspects"].append({"id": "novelty", "name": "Novelty", "grades": novelty})
    pool = make_pool(make_campaign(topics=("1",), label_schema=schema), {"1": ["d1"]})
    with pytest.raises(CommandError, match=f"pool {pool.pk}: the schema has 3 aspects") as raised:
        agreement("--pool", pool.pk)
    assert raised.value.returncode == 2
