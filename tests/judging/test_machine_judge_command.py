"""manage.py machine_judge: what it prints, and exit 2 on bad input."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from judging.models import MachineAssessor, MachineJudgment
from tests.judging.chat_server import ChatServer, Reply
from tests.judging.machine_helpers import make_machine_pool

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    from io import StringIO

    out, err = StringIO(), StringIO()
    call_command("machine_judge", *args, stdout=out, stderr=err)
    return out.getvalue()


def test_the_command_labels_the_pool_and_prints_what_it_did():
    _, pool = make_machine_pool(docs=2)
    with ChatServer() as server:
        server.queue = [Reply(content="no idea"), Reply(content="still no idea")]
        out = run(
            "--pool",
            str(pool.pk),
            "--endpoint",
            server.url,
            "--model",
            "org/Small-1B",
            "--concurrency",
            "1",
        )
        again = run(
            "--pool",
            str(pool.pk),
            "--endpoint",
            server.url,
            "--model",
            "org/Small-1B",
            "--documents",
            "all",
        )
    machine = MachineAssessor.objects.get()
    assert machine.name == "Small-1B"
    assert "judged: 3" in out
    assert "failed: 1 samples (not JSON: 1)" in out
    assert "tokens in/out: 500/25" in out
    assert "cost: unknown (no price set)" in out
    assert "cached: 3 samples (no request)" in again
    assert "judged: 4" in again  # the failed one is asked again
    assert len(server.requests) == 6


def test_the_lexical_baseline_needs_no_endpoint():
    _, pool = make_machine_pool(docs=2)
    out = run("--pool", str(pool.pk), "--lexical")
    assert "machine baseline (lexical-bm25)" in out
    assert "judged: 4" in out
    assert MachineJudgment.objects.count() == 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pool", "999", "--lexical"], "--pool 999: no such pool"),
        (["--model", "m"], "--endpoint and --model are required"),
        (["--endpoint", "ftp://x", "--model", "m"], "must be an http:// or https:// URL"),
        (["--endpoint", "http://x/v1", "--model", "m", "--topics", "999"], "unknown topics: 999"),
        (["--endpoint", "http://x/v1", "--model", "m", "--samples", "0"], "samples must be 1"),
        (
            ["--endpoint", "http://x/v1", "--model", "m", "--api-key-env", "WB_NOT_SET_EVER"],
            "WB_NOT_SET_EVER",
        ),
    ],
)
def test_bad_input_exits_2_with_the_reason(args, message):
    _, pool = make_machine_pool(docs=1)
    if args[:2] != ["--pool", "999"]:
        args = ["--pool", str(pool.pk), *args]
    with pytest.raises(CommandError, match=message) as error:
        call_command("machine_judge", *args)
    assert error.value.returncode == 2
    assert not MachineJudgment.objects.exists()


def test_an_unreachable_endpoint_exits_2_and_stores_nothing():
    _, pool = make_machine_pool(docs=1)
    with ChatServer() as server:
        url = server.url
    with pytest.raises(CommandError, match="cannot reach") as error:
        call_command("machine_judge", "--pool", str(pool.pk), "--endpoint", url, "--model", "m")
    assert error.value.returncode == 2
    assert not MachineJudgment.objects.exists()
