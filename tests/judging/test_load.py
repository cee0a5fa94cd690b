"""The load test, short: ten assessors saving and revising through gunicorn on PostgreSQL.

Runs `bench/load_judging.py` as a whole (its own database, gunicorn and a
db_worker, logins, the HTML form and the JSON API): eight saves each with a
short think time, a few seconds' work, and asserts what it found in the database afterwards:
every acknowledged save stored once, the last value kept, one event per
change. It asserts no speed: the machine may be busy with anything else.

Then the fault test: the same load with `--faults`, a gunicorn worker and the
db_worker killed with SIGKILL in the middle of an import job, and the database
checked the same way, and for the job: run again and done, its collection
stored once, no job or task left waiting or running.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = os.environ.get("WORKBENCH_LOAD_POSTGRES", "postgres://postgres@127.0.0.1:5432")

pytestmark = pytest.mark.load


def postgres_answers() -> bool:
    import psycopg

    try:
        with psycopg.connect(f"{SERVER}/postgres", connect_timeout=3):
            return True
    except psycopg.OperationalError:
        return False


def run_load(tmp_path_factory, *extra: str) -> dict:
    if not postgres_answers():
        pytest.skip(f"the load test needs PostgreSQL, which does not answer at {SERVER}")
    out = tmp_path_factory.mktemp("load") / "load.json"
    done = subprocess.run(
        [
            sys.executable,
            "bench/load_judging.py",
            "--assessors=10",
            "--documents=60",
            "--think=0.05-0.3",
            # A fixed amount of work, however busy the machine: 8 saves each,
            # within at most 300 s.
            "--saves=8",
            "--duration=300",
            "--ramp=1",
            "--revise=0.25",
            "--workers=3",
            "--timeout=60",
            f"--database-url={SERVER}/workbench_load_{os.getpid()}",
            f"--json={out}",
            *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.exists(), done.stdout + done.stderr
    return {
        "exit": done.returncode,
        "output": done.stdout + done.stderr,
        **json.loads(out.read_text()),
    }


@pytest.fixture(scope="module")
def load_run(tmp_path_factory) -> dict:
    return run_load(tmp_path_factory)


@pytest.fixture(scope="module")
def fault_run(tmp_path_factory) -> dict:
    # Six assessors, 25 saves each: the load lasts while the job is killed and run again.
    return run_load(tmp_path_factory, "--faults", "--assessors=6", "--saves=25")


def test_every_acknowledged_save_is_stored_once_with_its_last_value(load_run):
    check = load_run["check"]
    assert check["problems"] == [], load_run["output"]
    assert check["ok"], load_run["output"]
    assert load_run["exit"] == 0, load_run["output"]
    assert check["saves_acknowledged"] == check["saves_sent"] == 10 * 8
    assert check["rows_stored"] == check["distinct_documents_saved"]
    assert check["events_stored"] == check["changes_sent"]
    assert check["revisions_sent"] > 0, "some saves revise an earlier document"


def test_no_request_failed(load_run):
    summary = load_run["summary"]
    for kind in ("html_save", "api_save", "api_next", "login"):
        assert summary[kind]["requests"] > 0, f"no {kind} request was made"
    assert {kind: row["errors"] for kind, row in summary.items() if row["errors"]} == {}


def test_killed_workers_lose_nothing_duplicate_nothing_and_leave_no_job_running(fault_run):
    check, jobs = fault_run["check"], fault_run["check"]["jobs"]
    assert check["problems"] == [], fault_run["output"]
    assert fault_run["exit"] == 0, fault_run["output"]
    assert jobs["job_when_killed"]["state"] == "running", "killed in the middle of the job"
    assert jobs["web_worker_killed"]
    assert jobs["task_worker_killed"]
    assert jobs["import_attempts"] == 2
    assert jobs["documents_stored"] == jobs["documents_sent"] == 20_000
    assert jobs["jobs"] == {"done": 1}
    assert jobs["tasks"] == {"FAILED": 1, "SUCCESSFUL": 1}, "the killed worker's task is ended"
    # The judgments: every acknowledged save stored once, with its last value (an
    # assessor whose request the killed worker cut may stop early: no quota here).
    assert check["rows_stored"] == check["distinct_documents_saved"]
    assert check["saves_acknowledged"] > 0
