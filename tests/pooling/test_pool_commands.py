"""build_pool, make_pool, pool_whatif, pool_add_runs, export_pool."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from judging import services as judging_services
from pooling.models import BudgetOverrun, Document, Pool
from tests.helpers import make_campaign, make_run, run_text

pytestmark = pytest.mark.django_db


def call(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def campaign():
    campaign = make_campaign(topics=("1", "2"), judgment_budget=5)
    make_run(campaign, "a", {"1": ["d1", "d2", "d3", "d4"], "2": ["e1", "e2"]})
    make_run(campaign, "b", {"1": ["d3", "d5", "d6"], "2": ["e2", "e3", "e4"]})
    return campaign


def test_build_pool_past_the_budget_needs_the_flag(campaign):
    with pytest.raises(CommandError) as caught:
        call("build_pool", "--campaign", "trec-x", "--depth", "2")
    assert str(caught.value) == (
        "building pool 1-2:1.0 asks for 7 new judgments and the budget 5: 0 spent, 5 left: "
        "2 over. Confirm to go past the budget. (--confirm-over-budget)"
    )
    assert not Pool.objects.exists()
    call("build_pool", "--campaign", "trec-x", "--depth", "2", "--confirm-over-budget")
    assert Pool.objects.count() == 1
    assert BudgetOverrun.objects.get().cost == 7


def test_build_pool_stores_the_spec(campaign):
    out = call(
        "build_pool",
        "--confirm-over-budget",
        "--campaign",
        "trec-x",
        "--depth",
        "2",
        "--stratum",
        "3-4:0.5",
        "--seed",
        "9",
        "--order",
        "docno",
    )
    pool = Pool.objects.get()
    assert (
        out
        == f"pool {pool.pk} (1-2:1.0 3-4:0.5): 10 entries over 2 topics, 9 to judge, from 2 runs\n"
    )
    assert pool.spec["seed"] == 9
    assert pool.spec["order"] == "docno"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--depth", "0"], "depth must be at least 1, not 0"),
        (["--stratum", "1-10:1.5"], "stratum 1-10:1.5: the rate must be between 0 and 1"),
        (["--stratum", "1-10:0.5", "--stratum", "5-20:0.5"], "overlap"),
        (["--stratum", "20-10:0.5"], "20-10"),
        (["--stratum", "abc"], "abc"),
        (
            ["--depth", "5", "--topic-depth", "1:3", "--stratum", "6-25:0.3"],
            "depth of topic '1' 3 and stratum 6-25:0.3 leave ranks 4-5 out of the pool",
        ),
    ],
)
def test_bad_specs_build_nothing(campaign, args, message):
    with pytest.raises(CommandError, match=message):
        call("build_pool", "--campaign", "trec-x", *args)
    assert not Pool.objects.exists()


def test_build_pool_without_runs_is_an_error():
    make_campaign()
    with pytest.raises(CommandError, match="campaign trec-x has no runs to pool"):
        call("build_pool", "--campaign", "trec-x", "--depth", "10")


def test_make_pool_writes_the_tsv_without_the_database(tmp_path: Path):
    (tmp_path / "a.txt").write_bytes(run_text("a", {"1": ["d1", "d2"]}))
    (tmp_path / "b.txt").write_bytes(run_text("b", {"1": ["d2", "d3"]}))
    call(
        "make_pool",
        str(tmp_path / "a.txt"),
        str(tmp_path / "b.txt"),
        "--depth",
        "1",
        "--order",
        "docno",
        "--out",
        str(tmp_path / "pool.tsv"),
    )
    assert (tmp_path / "pool.tsv").read_text() == (
        "topic\tdocno\tbest_rank\tn_runs\tstratum\tinclusion_probability\tsampled\torder\n"
        "1\td1\t1\t1\t1\t1.0\t1\t1\n"
        "1\td2\t1\t1\t1\t1.0\t1\t2\n"
    )


def test_make_pool_reports_every_bad_file(tmp_path: Path):
    (tmp_path / "a.txt").write_bytes(b"1 Q0 d1 1 x a\n")
    (tmp_path / "b.txt").write_bytes(b"")
    with pytest.raises(CommandError) as caught:
        call("make_pool", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--depth", "5")
    assert f"{tmp_path}/a.txt:1: score 'x' is not a number" in str(caught.value)
    assert f"{tmp_path}/b.txt: empty file: no run lines" in str(caught.value)


def test_whatif_prints_sizes_needed_and_the_budget_fit(campaign):
    out = call("pool_whatif", "--campaign", "trec-x", "--depths", "1,2,3")
    assert out.splitlines() == [
        "scheme   pool_size  judged  needed",
        "depth 1          4       0       4",
        "depth 2          7       0       7",
        "depth 3          9       0       9",
        "budget 5: 0 spent, 5 left",
        "5 left: largest depth that fits is 1 (4 in the pool, 4 still to judge)",
    ]


def test_whatif_fits_what_the_budget_has_left(campaign, assessor):
    judging_services.judgment_record(
        assessor=assessor,
        topic=campaign.topics.get(topic_id="1"),
        docno="d1",
        relevance=0,
        aspects={},
    )
    out = call("pool_whatif", "--campaign", "trec-x", "--depths", "1,2,3")
    assert out.splitlines()[-2:] == [
        "budget 5: 1 spent, 4 left",
        "4 left: largest depth that fits is 1 (4 in the pool, 3 still to judge)",
    ]
    out = call("pool_whatif", "--campaign", "trec-x", "--depths", "1,2,3", "--budget", "6")
    assert (
        out.splitlines()[-1]
        == "6 left: largest depth that fits is 2 (7 in the pool, 6 still to judge)"
    )


def test_whatif_bad_depths_are_explained(campaign):
    with pytest.raises(CommandError, match="--depths must be comma-separated integers"):
        call("pool_whatif", "--campaign", "trec-x", "--depths", "10,x")


def test_add_runs_and_export(campaign):
    call("build_pool", "--campaign", "trec-x", "--depth", "1")
    pool = Pool.objects.get()
    make_run(campaign, "late", {"1": ["d9"]})
    assert (
        call("pool_add_runs", "--pool", str(pool.pk), "--run", "late")
        == f"pool {pool.pk}: added 1 entries\n"
    )
    order = call("export_pool", "--pool", str(pool.pk), "--format", "order", "--topic", "1")
    lines = order.splitlines()
    assert lines[0] == "topic\torder\tdocno"
    assert lines[-1] == "1\t3\td9"
    with pytest.raises(CommandError, match="no run tagged nope"):
        call("pool_add_runs", "--pool", str(pool.pk), "--run", "nope")
    with pytest.raises(CommandError, match="has no entries for topic '7'"):
        call("export_pool", "--pool", str(pool.pk), "--topic", "7")


def test_import_documents_only_those_of_a_pool(campaign, tmp_path: Path):
    call("build_pool", "--campaign", "trec-x", "--depth", "1")
    pool = Pool.objects.get()
    (tmp_path / "docs.tsv").write_text(
        "".join(f"{d}\ttext\n" for d in ("d1", "d2", "d3", "e1", "e2", "zz"))
    )
    call(
        "import_documents",
        "--campaign",
        "trec-x",
        "--only-pool",
        str(pool.pk),
        str(tmp_path / "docs.tsv"),
    )
    assert sorted(Document.objects.values_list("docno", flat=True)) == ["d1", "d3", "e1", "e2"]
