"""docs/api.md, run as written: its shell steps through manage.py, then its Python
blocks in order against a live server, on the database `make run` leaves (migrated,
the demo loaded), to a qrels bundle."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest
from django.core.management import call_command

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
# The commands that start the server and the worker: the test's live server stands
# in for the one, and jobs run inside the request here (tests/conftest.py).
SERVING = {"runserver", "db_worker"}


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def run_shell_line(line: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """One `[VAR=value ...] python manage.py ...` line of the doc; what it printed."""
    words = shlex.split(line, comments=True)
    with monkeypatch.context() as env:
        while words and "=" in words[0]:
            name, value = words.pop(0).split("=", 1)
            env.setenv(name, value)
        assert words[:2] == ["python", "manage.py"], line
        if words[2] in SERVING:
            return ""
        out = io.StringIO()
        call_command(*words[2:], stdout=out)
        return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_walkthrough_runs_as_written_after_make_run(live_server, monkeypatch, tmp_path, capsys):
    call_command("load_demo", stdout=io.StringIO())  # as `make run` does, before serving
    keys: dict[str, str] = {}
    exported = set()
    for block in code_blocks("sh"):
        for line in block.splitlines():
            if line.startswith("export "):
                exported.add(line.split()[1].split("=")[0])
            elif line.strip():
                printed = run_shell_line(line.rstrip(" &"), monkeypatch)
                keys |= {
                    user: key for key, user in re.findall(r"token (\w+) for user (\w+)", printed)
                }
    assert exported == {"WORKBENCH_URL", "WORKBENCH_TOKEN", "ALICE_TOKEN"}
    monkeypatch.setenv("WORKBENCH_URL", live_server.url)
    monkeypatch.setenv("WORKBENCH_TOKEN", keys["olivia"])
    monkeypatch.setenv("ALICE_TOKEN", keys["alice"])
    monkeypatch.chdir(tmp_path)

    namespace: dict[str, object] = {"__name__": "walkthrough"}
    blocks = code_blocks("python")
    assert len(blocks) >= 10
    for number, block in enumerate(blocks, start=1):
        exec(compile(block, f"{DOC.name} python block {number}", "exec"), namespace)

    printed = capsys.readouterr().out
    assert "Documents from docs.tsv: 6 created, 0 updated." in printed
    assert "expected 6 columns (topic Q0 docno rank score tag), found 4" in printed
    assert (tmp_path / "coffee-tea-qrels.zip").exists()
    # Alice judged both topics to the end; bob's second opinion left two to settle.
    assert "('401', 'alice', 4, 4), ('402', 'alice', 4, 4)" in printed
    assert "401 D2 {'alice': 2, 'bob': 0}" in printed
