"""The import commands: what they store, what they print, how they fail."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from pooling.models import Campaign, Document, Run, Topic
from tests.helpers import make_campaign, run_text
from workbench.core.label_schema import DEFAULT_PRESET, SCHEMA_PRESETS

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def call(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_create_campaign_then_import_everything(tmp_path: Path):
    (tmp_path / "topics.txt").write_text(
        "<top>\n<num> Number: 1\n<title> first\n</top>\n<top>\n<num> Number: 2\n<title> second\n</top>\n"
    )
    (tmp_path / "docs.jsonl").write_text(
        '{"docno": "d1", "text": "x"}\n{"docno": "d2", "text": "y"}\n'
    )
    (tmp_path / "a.txt").write_bytes(run_text("a", {"1": ["d1", "d2"], "2": ["d2"]}))
    (tmp_path / "b.txt").write_bytes(run_text("b", {"1": ["d2"]}))
    assert (
        call("create_campaign", "--slug", "c", "--name", "C", "--budget", "500")
        == "created campaign c\n"
    )
    assert "topics 2 created, 0 updated" in call(
        "import_topics", "--campaign", "c", str(tmp_path / "topics.txt")
    )
    assert "documents 2 created, 0 updated" in call(
        "import_documents", "--campaign", "c", str(tmp_path / "docs.jsonl")
    )
    out = call("import_runs", "--campaign", "c", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    assert out.splitlines() == [
        "stored run a: 3 lines, 2 topics, depth 2",
        "stored run b: 1 lines, 1 topics, depth 1",
    ]
    assert Campaign.objects.get().judgment_budget == 500
    assert Topic.objects.count() == 2
    assert Document.objects.count() == 2
    assert Run.objects.count() == 2


@pytest.mark.parametrize("name", sorted(SCHEMA_PRESETS))
def test_create_campaign_with_a_schema_preset(name):
    call("create_campaign", "--slug", "c", "--name", "C", "--schema-preset", name)
    assert Campaign.objects.get().label_schema == SCHEMA_PRESETS[name].data


def test_create_campaign_uses_the_decision_preset_by_default():
    call("create_campaign", "--slug", "c", "--name", "C")
    assert Campaign.objects.get().label_schema == SCHEMA_PRESETS[DEFAULT_PRESET].data
    assert DEFAULT_PRESET == "decision"


def test_create_campaign_of_a_task_kind():
    call("create_campaign", "--slug", "c", "--name", "C")
    call("create_campaign", "--slug", "s", "--name", "S", "--task-kind", "scifact")
    assert dict(Campaign.objects.values_list("slug", "task_kind")) == {
        "c": "ranked",
        "s": "scifact",
    }


def test_create_campaign_reads_a_schema_file(tmp_path: Path):
    schema = SCHEMA_PRESETS["binary"].schema()
    schema["relevance"]["grades"][1]["name"] = "On topic"
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    call(
        "create_campaign",
        "--slug",
        "c",
        "--name",
        "C",
        "--label-schema",
        str(tmp_path / "schema.json"),
    )
    assert Campaign.objects.get().label_schema == schema


def test_create_campaign_help_lists_the_presets(capsys):
    with pytest.raises(SystemExit):
        call_command("create_campaign", "--help")
    text = " ".join(capsys.readouterr().out.split())
    for name in SCHEMA_PRESETS:
        assert f"{name}:" in text
    assert "TREC Deep Learning" in text


def test_create_campaign_refuses_a_schema_file_with_problems(tmp_path: Path):
    (tmp_path / "bad.json").write_text('{"relevance": {"grades": []}}')
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(CommandError, match="'grades' must list at least two grades"):
        call(
            "create_campaign",
            "--slug",
            "c",
            "--name",
            "C",
            "--label-schema",
            str(tmp_path / "bad.json"),
        )
    with pytest.raises(
        CommandError, match=r"broken\.json: not valid JSON: Expecting property name .* at column 2"
    ):
        call(
            "create_campaign",
            "--slug",
            "c",
            "--name",
            "C",
            "--label-schema",
            str(tmp_path / "broken.json"),
        )
    assert not Campaign.objects.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--schema-preset", "graded-0-9"],
            "argument --schema-preset: invalid choice: 'graded-0-9'",
        ),
        (
            ["--schema-preset", "binary", "--label-schema", "s.json"],
            "argument --label-schema: not allowed with argument --schema-preset",
        ),
    ],
)
def test_create_campaign_refuses_bad_schema_arguments(args, message):
    with pytest.raises(CommandError, match=message):
        call("create_campaign", "--slug", "c", "--name", "C", *args)
    assert not Campaign.objects.exists()


def test_create_campaign_usage_errors_exit_2(tmp_path: Path):
    env = {"WORKBENCH_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "create_campaign",
            "--slug",
            "c",
            "--name",
            "C",
            "--schema-preset",
            "binary",
            "--label-schema",
            "s.json",
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "not allowed with argument --schema-preset" in done.stderr
    assert "Traceback" not in done.stderr


def test_import_runs_rejects_the_batch_and_names_file_and_line(tmp_path: Path):
    make_campaign()
    (tmp_path / "good.txt").write_bytes(run_text("good", {"301": ["d1"]}))
    (tmp_path / "bad.txt").write_bytes(b"301 Q0 d1 1 2 bad\n301 Q0 d2 2 oops bad\n")
    with pytest.raises(CommandError) as caught:
        call(
            "import_runs",
            "--campaign",
            "trec-x",
            str(tmp_path / "good.txt"),
            str(tmp_path / "bad.txt"),
        )
    assert (
        str(caught.value)
        == f"rejected, nothing stored:\n{tmp_path}/bad.txt:2: score 'oops' is not a number"
    )
    assert not Run.objects.exists()


def test_import_runs_keep_valid_stores_the_good_ones(tmp_path: Path):
    make_campaign()
    (tmp_path / "good.txt").write_bytes(run_text("good", {"301": ["d1"]}))
    (tmp_path / "bad.txt").write_bytes(b"")
    with pytest.raises(CommandError, match=r"bad\.txt: empty file"):
        call(
            "import_runs",
            "--campaign",
            "trec-x",
            "--keep-valid",
            str(tmp_path / "good.txt"),
            str(tmp_path / "bad.txt"),
        )
    assert list(Run.objects.values_list("tag", flat=True)) == ["good"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["import_runs", "--campaign", "nope", "x.txt"],
            "no campaign with slug 'nope' (campaigns: trec-x)",
        ),
        (
            ["import_runs", "--campaign", "trec-x", "/no/such/file.txt"],
            "/no/such/file.txt: no such file",
        ),
        (
            ["import_topics", "--campaign", "trec-x", "/no/such/topics"],
            "/no/such/topics: no such file",
        ),
        (
            ["create_campaign", "--slug", "trec-x", "--name", "again"],
            "slug: Campaign with this Slug already exists.",
        ),
    ],
)
def test_command_errors_are_one_clear_line(args, message):
    make_campaign()
    with pytest.raises(CommandError) as caught:
        call(*args)
    assert str(caught.value) == message


def test_import_topics_rejects_bad_file_and_keeps_topics(tmp_path: Path):
    make_campaign(topics=("1",))
    (tmp_path / "t.jsonl").write_text('{"id": "2", "title": "two"}\nnot json\n')
    with pytest.raises(CommandError, match=r"t.jsonl:2: not valid JSON"):
        call("import_topics", "--campaign", "trec-x", str(tmp_path / "t.jsonl"))
    assert list(Topic.objects.values_list("topic_id", flat=True)) == ["1"]


def test_import_answers_reads_topics_efficacy_and_rejects_unknown_topics(tmp_path: Path):
    make_campaign()
    (tmp_path / "topics_efficacy").write_text("301 1\n302 0\n303 -1\n")
    out = call("import_answers", "--campaign", "trec-x", str(tmp_path / "topics_efficacy"))
    assert out.strip() == f"{tmp_path / 'topics_efficacy'}: 3 answers set, 3 of them changed"
    assert [t.answer for t in Topic.objects.all()] == [1, 0, -1]
    (tmp_path / "bad").write_text("301 0\n304 1\n")
    with pytest.raises(CommandError, match=r"bad:2: topic '304' is not a topic of this campaign"):
        call("import_answers", "--campaign", "trec-x", str(tmp_path / "bad"))
    assert [t.answer for t in Topic.objects.all()] == [1, 0, -1]


def test_import_documents_only_docnos_listed_in_a_file(tmp_path: Path):
    make_campaign()
    (tmp_path / "docs.tsv").write_text("".join(f"d{i}\tText {i}\n" for i in range(20)))
    (tmp_path / "pool.txt").write_text("d3\nd7 extra columns ignored\n\n")
    out = call(
        "import_documents",
        "--campaign",
        "trec-x",
        "--only-docnos",
        str(tmp_path / "pool.txt"),
        str(tmp_path / "docs.tsv"),
    )
    assert "documents 2 created, 0 updated" in out
    assert sorted(Document.objects.values_list("docno", flat=True)) == ["d3", "d7"]


def test_import_runs_exit_status_and_stderr(tmp_path: Path):
    """The real process: errors on stderr, non-zero exit status, no traceback."""
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"1 Q0 d1 1 x t\n")
    env = {"WORKBENCH_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
    subprocess.run(
        [*manage, "create_campaign", "--slug", "c", "--name", "C"],
        env=env,
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    done = subprocess.run(
        [*manage, "import_runs", "--campaign", "c", str(bad)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"{bad}:1: score 'x' is not a number" in done.stderr
    assert f"{bad}:1: topic '1' is not a topic of this campaign" in done.stderr
    assert "Traceback" not in done.stderr
