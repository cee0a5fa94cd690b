"""export_judgments writes what import_judgments reads: human and machine labels
round-trip."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging import machine_services, services
from judging.machine_selectors import machine_labels_frame
from judging.models import MachineJudgment
from judging.selectors import judgments_frame
from pooling.models import Pool
from tests.judging.chat_server import ChatServer, Reply
from tests.judging.machine_helpers import fast, make_chat_machine, make_machine_pool

pytestmark = pytest.mark.django_db


def test_judgments_round_trip_through_export_and_import(tmp_path, assessor):
    campaign, pool = make_machine_pool(docs=2)
    [assignment] = services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )
    services.judgment_submit(assignment=assignment, docno="301-d0", relevance=0, aspects={})
    services.judgment_submit(
        assignment=assignment,
        docno="301-d1",
        relevance=2,
        aspects={"effectiveness": 3, "credibility": 1},
    )
    replies = iter(
        ['{"relevance": 0}'] + ['{"relevance": 1, "effectiveness": 2, "credibility": 0}'] * 3
    )
    with ChatServer(lambda body: Reply(content=next(replies))) as server:
        machine = make_chat_machine(campaign, server.url, concurrency=1)
        machine_services.machine_judge_run(machine=machine, pool=pool, endpoint=fast(machine))
    humans, machines = judgments_frame(pool), machine_labels_frame(pool)
    out = tmp_path / "judgments.tsv"
    stdout = StringIO()
    call_command("export_judgments", "--pool", str(pool.pk), "--out", str(out), stdout=stdout)
    assert "6 judgments" in stdout.getvalue()
    text = out.read_text()
    assert text.splitlines()[0] == "assessor\ttopic\tdocno\trel\teffectiveness\tcredibility"
    assert f"{machine.account.username}\t301\t301-d0\t0\t-1\t-1" in text

    MachineJudgment.objects.all().delete()
    assessor.judgments.all().delete()
    stdout = StringIO()
    call_command(
        "import_judgments",
        "--campaign",
        campaign.slug,
        "--make-pool",
        "again",
        str(out),
        stdout=stdout,
    )
    assert "4 machine labels (provenance imported)" in stdout.getvalue()
    fresh = Pool.objects.get(name="again")
    assert judgments_frame(fresh)[["assessor", "query_id", "doc_id", "relevance"]].equals(
        humans[["assessor", "query_id", "doc_id", "relevance"]]
    )
    assert machine_labels_frame(fresh).equals(machines)
    assert set(MachineJudgment.objects.values_list("provenance", flat=True)) == {"imported"}


def test_one_assessor_only_and_bad_input(tmp_path):
    _campaign, pool = make_machine_pool(docs=1)
    out = tmp_path / "j.tsv"
    with pytest.raises(CommandError, match="no such pool") as error:
        call_command("export_judgments", "--pool", "999", "--out", str(out))
    assert error.value.returncode == 2
    with pytest.raises(CommandError, match="--assessor nobody: no judgments"):
        call_command(
            "export_judgments", "--pool", str(pool.pk), "--assessor", "nobody", "--out", str(out)
        )
