"""manage.py reusability: files end to end in a subprocess, the pure `main` in
process, and --pool against the same collection given as files."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging import services as judging
from judging.core.judgment_files import ImportedJudgment
from pooling import pool_services
from pooling.core.spec import PoolSpec, Stratum
from scoring.core.analysis.reusability_cli import main, read_groups
from scoring.management.commands.reusability import load_pool
from tests.helpers import make_campaign, make_run, run_text

ROOT = Path(__file__).resolve().parents[4]
# The case of test_reusability: at depth 2, A alone pools d2 (not relevant),
# B alone pools d3 (relevant); C pools d3 too, when given.
QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n1 0 d4 0\n"
RUNS = {
    "A": "1 Q0 d1 1 3 A\n1 Q0 d2 2 2 A\n1 Q0 d4 3 1 A\n",
    "B": "1 Q0 d3 1 3 B\n1 Q0 d1 2 2 B\n",
}


@pytest.fixture
def files(tmp_path) -> list[str]:
    (tmp_path / "qrels").write_text(QRELS)
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    return ["--qrels", str(tmp_path / "qrels"), "--depth", "2", *(str(tmp_path / n) for n in RUNS)]


def _main(*arguments: str, **kwargs) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(arguments), out, err, stdin=io.BytesIO(), **kwargs)
    return status, out.getvalue(), err.getvalue()


def pool_main(*arguments: str) -> tuple[int, str, str]:
    """As `manage.py reusability --pool ...` runs it (call_command would take a
    leading option for one of Django's own)."""
    return _main(*arguments, load_pool=load_pool)


def test_json_end_to_end(files):
    command = [sys.executable, "manage.py", "reusability", *files, "--format", "json"]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert (completed.returncode, completed.stderr) == (0, "")
    data = json.loads(completed.stdout)
    assert (data["measure"], data["depth"], data["topics"], data["runs"]) == ("map", 2, 1, 2)
    assert data["pooled"] == 3
    [by_run] = data["leave_out"]
    assert by_run["unit"] == "run"
    assert [m["measure"] for m in by_run["measures"]] == ["map", "bpref", "map"]
    assert [m["judged_only"] for m in by_run["measures"]] == [False, False, True]
    assert by_run["measures"][0]["largest_drop"] == {
        "run": "B",
        "full": 1.0,
        "without": 0.5,
        "change": -0.5,
    }
    assert by_run["measures"][0]["tau"] is None  # the leave-out ranking is a tie
    assert by_run["measures"][0]["tau_ap"] == 0.0
    assert [u["removed"] for u in by_run["units"]] == [1, 1]
    b = by_run["runs"][0]  # ranked first by map
    assert (b["run"], b["unit"]) == ("B", "B")
    assert b["scores"][0] == {
        "measure": "map",
        "judged_only": False,
        "full": 1.0,
        "without": 0.5,
        "change": -0.5,
        "rank": 1,
        "rank_without": 2,
    }
    assert b["judged"]["10"] == {"full": 1.0, "without": 0.5}


def test_text_names_the_measures_and_the_largest_drop(files):
    status, out, err = _main(*files, "-m", "P.2")
    assert (status, err) == (0, "")
    assert (
        "Pool reusability: P_2, pooled to depth 2; 2 runs, 1 topic, 3 judged documents pooled."
        in out
    )
    assert "P_2 -J" in out
    assert "Leaving out each run" in out
    assert "-0.5000 B" in out  # B's P@2 falls from 1 to 0.5


def test_groups_leave_teams_out_together(files, tmp_path):
    (tmp_path / "C").write_text("1 Q0 d3 1 1 C\n")
    (tmp_path / "groups").write_text("# run\tteam\nA\tteam1\nB\tteam2\n\nC\tteam2\n")
    status, out, err = _main(
        *files, str(tmp_path / "C"), "--groups", str(tmp_path / "groups"), "--format", "json"
    )
    assert (status, err) == (0, "")
    by_run, by_group = json.loads(out)["leave_out"]
    assert [u["removed"] for u in by_run["units"]] == [1, 0, 0]
    assert by_group["unit"] == "group"
    assert by_group["units"] == [
        {"name": "team1", "runs": ["A"], "removed": 1, "removed_relevant": 0},
        {"name": "team2", "runs": ["B", "C"], "removed": 1, "removed_relevant": 1},
    ]
    status, out, _ = _main(*files, str(tmp_path / "C"), "--groups", str(tmp_path / "groups"))
    assert "Leaving out each group" in out
    assert "B, C" in out


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ("A\tteam1\nB team2\n", "groups:2: expected 'run_tag<TAB>group', got 'B team2'"),
        ("A\tteam1\nB\t\n", "groups:2: expected 'run_tag<TAB>group', got 'B\\t'"),
        ("A\tx\nB\ty\nA\tz\n", "groups:3: run 'A' is in group 'x' on line 1"),
        ("A\tx\n", "groups: no group for run 'B'"),
    ],
)
def test_a_bad_groups_file_is_one_line_and_status_2(files, tmp_path, groups, message):
    (tmp_path / "groups").write_text(groups)
    status, out, err = _main(*files, "--groups", str(tmp_path / "groups"))
    assert (status, out) == (2, "")
    assert err.startswith("reusability: ")
    assert message in err
    assert err.count("\n") == 1


def test_read_groups_repeats_and_comments(tmp_path):
    (tmp_path / "groups").write_text("# tag\tgroup\r\nA\tt1\r\nA\tt1\r\nB\tt2")
    assert read_groups(str(tmp_path / "groups")) == {"A": "t1", "B": "t2"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (["--depth", "0"], "--depth must be at least 1, not 0"),
        (["-m", "P"], "-m P has 9 values"),
        (["-m", "map", "--pool", "3"], "--pool reads the pool's qrels, runs and depth"),
        (["--format", "latex"], "argument --format: invalid choice"),
    ],
)
def test_bad_options_are_one_line_and_status_2(files, change, message):
    status, out, err = _main(*files, *change)
    assert (status, out) == (2, "")
    assert message in err
    assert err.count("\n") == 1


def test_what_is_missing_is_named(tmp_path, files):
    qrels, run_a = files[1], files[4]
    assert "give the depth" in _main("--qrels", qrels, run_a)[2]
    assert "give the qrels" in _main("--depth", "2", run_a)[2]
    assert "give the run files" in _main("--qrels", qrels, "--depth", "2")[2]
    assert "run manage.py reusability" in _main("--pool", "1")[2]


def test_a_bad_input_line_is_named(files, tmp_path):
    (tmp_path / "bad").write_text("1 Q0 d1 1 3 bad\n1 Q0 d2 2 high bad\n")
    status, _, err = _main(*files, str(tmp_path / "bad"))
    assert status == 2
    assert err.startswith(f"reusability: {tmp_path / 'bad'}:2: ")


def test_a_run_with_no_qrels_topic_is_named_by_its_file(files, tmp_path):
    (tmp_path / "other").write_text("2 Q0 d1 1 3 other\n")
    status, _, err = _main(*files, str(tmp_path / "other"))
    assert status == 2
    assert err == f"reusability: {tmp_path / 'other'}: no topic of run 'other' is in the qrels\n"


def test_two_files_with_one_tag_are_refused(files, tmp_path):
    (tmp_path / "again").write_text(RUNS["A"])
    status, _, err = _main(*files, str(tmp_path / "again"))
    assert status == 2
    assert err == f"reusability: {tmp_path / 'again'}: two runs have the tag 'A'\n"


# --------------------------------------------------------------------------
# --pool

POOL_RUNS = {
    "A": {"301": ["d1", "d2", "d4"], "302": ["e1", "e2"]},
    "B": {"301": ["d3", "d1"], "302": ["e2", "e3", "e1"]},
    "C": {"301": ["d5", "d1"], "302": ["e3"]},
}
LABELS = {
    ("301", "d1"): 1,
    ("301", "d2"): 0,
    ("301", "d3"): 1,
    ("301", "d5"): 1,
    ("302", "e1"): 0,
    ("302", "e2"): 1,
    ("302", "e3"): 1,
}


def judged_pool(spec: PoolSpec):
    campaign = make_campaign(topics=("301", "302"))
    for tag, rows in POOL_RUNS.items():
        make_run(campaign, tag, rows)
    pool = pool_services.pool_build(campaign=campaign, spec=spec)
    rows = [ImportedJudgment("nist", t, d, rel) for (t, d), rel in LABELS.items()]
    judging.judgments_import(campaign=campaign, rows=rows, create_assessors=True)
    return pool


@pytest.mark.django_db
def test_a_stored_pool_reports_as_its_files_do(tmp_path):
    pool = judged_pool(PoolSpec(depth=2))
    status, out, err = pool_main("--pool", str(pool.pk), "--format", "json")
    assert (status, err) == (0, "")
    from_pool = json.loads(out)
    (tmp_path / "qrels").write_text("".join(f"{t} 0 {d} {r}\n" for (t, d), r in LABELS.items()))
    names = []
    for tag, rows in POOL_RUNS.items():
        (tmp_path / tag).write_bytes(run_text(tag, rows))
        names.append(str(tmp_path / tag))
    # A pool's runs are scored as its scores page scores them: -c.
    status, from_files, err = _main(
        "--qrels", str(tmp_path / "qrels"), "--depth", "2", "-c", "--format", "json", *names
    )
    assert (status, err) == (0, "")
    assert from_pool["depth"] == {"301": 2, "302": 2}
    assert from_pool == {**json.loads(from_files), "depth": {"301": 2, "302": 2}}
    # A alone pools d2 and e1, B d3, C d5.
    assert [u["removed"] for u in from_pool["leave_out"][0]["units"]] == [2, 1, 1]


@pytest.mark.django_db
def test_a_pool_with_gaps_or_no_pool_is_refused():
    pool = judged_pool(PoolSpec(depth=1, strata=(Stratum(3, 3, 1.0),), allow_gaps=True))
    status, _, err = pool_main("--pool", str(pool.pk))
    assert status == 2
    assert "topic 301 of pool" in err
    assert "leaves ranks out (1-1:1.0 3-3:1.0)" in err
    assert pool_main("--pool", "999")[1:] == ("", "reusability: no pool with id 999\n")


def test_call_command_takes_the_arguments_after_a_run(files):
    args = [*files[4:], *files[:4], "--format", "json"]
    out = io.StringIO()
    call_command("reusability", *args, stdout=out)
    assert json.loads(out.getvalue())["pooled"] == 3
    with pytest.raises(CommandError):
        call_command("reusability", *args, "-m", "P", stderr=io.StringIO())
