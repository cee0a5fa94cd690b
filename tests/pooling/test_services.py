"""Importing topics, documents and runs into a campaign."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError

from pooling import pool_services, run_services, selectors, services
from pooling.errors import RunInUse
from pooling.models import Document, Run, Topic
from tests.helpers import make_campaign, run_text
from workbench.core import run_files
from workbench.core.label_schema import SCHEMA_PRESETS
from workbench.core.problems import InputError

pytestmark = pytest.mark.django_db


def stored_files() -> list[Path]:
    return sorted(p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file())


def upload(tag: str, rows: dict[str, list[str]], name: str | None = None) -> run_services.RunUpload:
    return run_services.RunUpload(name or f"{tag}.txt", run_text(tag, rows))


# --------------------------------------------------------------------------
# Runs


def test_accepted_run_keeps_original_cache_and_summary():
    campaign = make_campaign()
    data = run_text("bm25", {"301": ["d1", "d2", "d3"], "302": ["d4"]})
    [run] = run_services.runs_import(
        campaign=campaign, uploads=[run_services.RunUpload("bm25.txt", data)]
    )
    assert (run.tag, run.line_count, run.topic_count, run.depth) == ("bm25", 4, 2, 3)
    assert run.documents_per_topic == {"301": 3, "302": 1}
    assert run.original_name == "bm25.txt"
    assert run.original_file.read() == data
    cached = run_files.read_run_cache(run.cache_file.path)
    assert cached.column("doc_id").to_pylist() == ["d1", "d2", "d3", "d4"]
    assert len(run.sha256) == 64


def test_rejected_batch_stores_nothing_and_reports_every_file():
    campaign = make_campaign()
    existing = run_services.runs_import(campaign=campaign, uploads=[upload("old", {"301": ["d1"]})])
    files_before = stored_files()
    good = upload("new", {"301": ["d1"]})
    bad = run_services.RunUpload("bad.txt", b"301 Q0 d1 1 x bad\n")
    with pytest.raises(InputError) as caught:
        run_services.runs_import(campaign=campaign, uploads=[good, bad])
    assert str(caught.value) == "bad.txt:1: score 'x' is not a number"
    assert list(Run.objects.all()) == existing
    assert stored_files() == files_before


def test_keep_valid_stores_the_good_files_and_reports_the_bad():
    campaign = make_campaign()
    good = upload("new", {"301": ["d1"]})
    bad = run_services.RunUpload("bad.txt", b"")
    with pytest.raises(run_services.RunsPartlyImported) as caught:
        run_services.runs_import(campaign=campaign, uploads=[good, bad], keep_valid=True)
    assert [r.tag for r in caught.value.stored] == ["new"]
    assert str(caught.value) == "bad.txt: empty file: no run lines"
    assert list(Run.objects.values_list("tag", flat=True)) == ["new"]


def test_two_files_of_a_batch_with_one_tag_are_rejected():
    campaign = make_campaign()
    first = upload("same", {"301": ["d1"]}, name="a.txt")
    second = upload("same", {"302": ["d1"]}, name="b.txt")
    with pytest.raises(InputError, match=r"b\.txt:1: run tag 'same' is already used"):
        run_services.runs_import(campaign=campaign, uploads=[first, second])
    assert not Run.objects.exists()


def test_tag_used_in_another_campaign_is_fine():
    run_services.runs_import(
        campaign=make_campaign("one"), uploads=[upload("bm25", {"301": ["d"]})]
    )
    run_services.runs_import(
        campaign=make_campaign("two"), uploads=[upload("bm25", {"301": ["d"]})]
    )
    assert Run.objects.filter(tag="bm25").count() == 2


def test_storage_is_cleaned_when_the_database_write_fails(monkeypatch):
    campaign = make_campaign()

    def fail(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(Run.objects, "bulk_create", fail)
    with pytest.raises(RuntimeError):
        run_services.runs_import(campaign=campaign, uploads=[upload("x", {"301": ["d1"]})])
    assert stored_files() == []


def test_run_delete_removes_its_files():
    campaign = make_campaign()
    [run] = run_services.runs_import(campaign=campaign, uploads=[upload("x", {"301": ["d1"]})])
    assert len(stored_files()) == 2
    run_services.run_delete(run=run)
    assert stored_files() == []
    assert not Run.objects.exists()


def test_a_pooled_run_can_be_neither_deleted_nor_replaced():
    from pooling.core.spec import PoolSpec

    campaign = make_campaign()
    [run] = run_services.runs_import(campaign=campaign, uploads=[upload("r", {"301": ["d1"]})])
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=1))
    with pytest.raises(RunInUse, match=f"run r is in pool {pool.pk}"):
        run_services.run_delete(run=run)
    with pytest.raises(RunInUse):
        run_services.run_replace(run=run, upload=upload("r", {"301": ["d2"]}))
    assert Run.objects.get().sha256 == run.sha256
    assert len(stored_files()) == 2


def test_run_replace_swaps_the_file_and_cache_keeping_or_changing_the_tag():
    campaign = make_campaign()
    [run] = run_services.runs_import(campaign=campaign, uploads=[upload("r", {"301": ["d1"]})])
    old_files = stored_files()
    new = run_services.run_replace(
        run=run, upload=upload("r", {"301": ["d1", "d2"], "302": ["d3"]})
    )
    assert (new.tag, new.line_count, new.topic_count) == ("r", 3, 2)
    assert list(Run.objects.values_list("tag", flat=True)) == ["r"]
    assert not set(old_files) & set(stored_files())
    assert len(stored_files()) == 2
    renamed = run_services.run_replace(run=new, upload=upload("r2", {"301": ["d1"]}))
    assert list(Run.objects.values_list("tag", flat=True)) == ["r2"]
    assert run_files.read_run_cache(renamed.cache_file.path).num_rows == 1


def test_a_rejected_replacement_changes_nothing():
    campaign = make_campaign()
    [run, _other] = run_services.runs_import(
        campaign=campaign, uploads=[upload("r", {"301": ["d1"]}), upload("s", {"301": ["d1"]})]
    )
    before = stored_files()
    with pytest.raises(
        InputError, match=r"fix\.txt:1: topic '999' is not a topic of this campaign"
    ):
        run_services.run_replace(
            run=run, upload=run_services.RunUpload("fix.txt", b"999 Q0 d1 1 1 r\n")
        )
    with pytest.raises(InputError, match="tag 's' is already used"):
        run_services.run_replace(run=run, upload=upload("s", {"301": ["d1"]}))
    assert sorted(Run.objects.values_list("tag", flat=True)) == ["r", "s"]
    assert stored_files() == before


def test_odd_tags_get_safe_file_names():
    campaign = make_campaign()
    [run] = run_services.runs_import(
        campaign=campaign, uploads=[upload("../x:y", {"301": ["d"]}, name="x.txt")]
    )
    assert run.tag == "../x:y"
    assert Path(run.original_file.path).parent == Path(settings.MEDIA_ROOT) / "runs" / "trec-x"


# --------------------------------------------------------------------------
# Topics


def test_topics_import_creates_then_updates_keeping_order():
    campaign = make_campaign(topics=())
    result = services.topics_import(campaign=campaign, data=b"10\tten\n9\tnine\n", name="t.tsv")
    assert (result.created, result.updated) == (2, 0)
    result = services.topics_import(
        campaign=campaign,
        data=b'{"id": "9", "title": "NINE", "answer": 1}\n{"id": "1", "title": "one"}\n',
        name="t.jsonl",
    )
    assert (result.created, result.updated) == (1, 1)
    topics = list(campaign.topics.values_list("topic_id", "title", "extra"))
    assert topics == [("10", "ten", {}), ("9", "NINE", {"answer": 1}), ("1", "one", {})]


def test_an_import_summary_writes_its_counts_with_thousands_separators():
    """The campaign page said "0 created, 18823 updated" beside "Documents 18,823"."""
    assert str(services.ImportResult(18_823, 1_200, 2_000)) == (
        "18,823 created, 1,200 updated, 2,000 skipped"
    )


def test_rejected_topic_file_changes_nothing():
    campaign = make_campaign(topics=("1",))
    before = list(Topic.objects.values_list("topic_id", "title"))
    with pytest.raises(InputError, match=r"t.tsv:3: topic '1' given twice \(first on line 1\)"):
        services.topics_import(
            campaign=campaign, data=b"1\tchanged\n2\tnew\n1\tagain\n", name="t.tsv"
        )
    assert list(Topic.objects.values_list("topic_id", "title")) == before


FULL_TOPICS = {
    "tsv": b"number\ttitle\tdescription\tnarrative\n1\tCats\tWhat about cats?\tAll cats.\n",
    "jsonl": b'{"number": "1", "title": "Cats", "description": "What about cats?", '
    b'"narrative": "All cats."}\n',
    "sgml": b"<top>\n<num> Number: 1\n<title> Cats\n<desc> Description:\nWhat about cats?\n"
    b"<narr> Narrative:\nAll cats.\n</top>\n",
    "xml": b'<topics><topic number="1"><title>Cats</title><description>What about cats?'
    b"</description><narrative>All cats.</narrative></topic></topics>\n",
}
# The same topic again with only a new title and an answer.
PARTIAL_TOPICS = {
    "tsv": b"number\tquery\tanswer\n1\tFelines\t1\n",
    "jsonl": b'{"number": "1", "query": "Felines", "answer": 1}\n',
    "sgml": b"<top>\n<num> Number: 1\n<title> Felines\n<answer> 1\n</top>\n",
    "xml": b'<topics><topic number="1"><title>Felines</title><answer>1</answer></topic></topics>\n',
}


@pytest.mark.parametrize("fmt", sorted(FULL_TOPICS))
def test_topics_import_again_changes_only_the_fields_the_file_gives(fmt):
    campaign = make_campaign(topics=())
    services.topics_import(campaign=campaign, data=FULL_TOPICS[fmt], name=f"t.{fmt}")
    result = services.topics_import(campaign=campaign, data=PARTIAL_TOPICS[fmt], name=f"t.{fmt}")
    assert (result.created, result.updated) == (0, 1)
    topic = campaign.topics.get()
    assert (topic.title, topic.description, topic.narrative) == (
        "Felines",
        "What about cats?",
        "All cats.",
    )
    assert topic.extra == {"answer": 1}
    assert topic.answer == 1


def test_topics_file_may_update_a_known_topic_without_giving_its_text():
    campaign = make_campaign(topics=("1",))
    services.topics_import(campaign=campaign, data=b"number\tanswer\n1\t-1\n", name="a.tsv")
    topic = campaign.topics.get()
    assert (topic.title, topic.answer, topic.answer_name) == ("Topic 1 title", -1, "not helpful")
    with pytest.raises(InputError, match="topic '2' has neither a title nor a description"):
        services.topics_import(campaign=campaign, data=b"number\tanswer\n2\t1\n", name="a.tsv")


def test_topic_answer_outside_minus_one_to_one_is_rejected_with_its_line():
    campaign = make_campaign(topics=("1",))
    with pytest.raises(
        InputError, match=r"t.tsv:3: topic '2': the answer must be -1 \(not helpful\)"
    ):
        services.topics_import(
            campaign=campaign, data=b"number\ttitle\tanswer\n1\tx\t1\n2\ty\thelpful\n", name="t.tsv"
        )
    assert campaign.topics.get().extra == {}


def test_answers_import_reads_nists_topics_efficacy_file():
    campaign = make_campaign(topics=("1", "2", "3"))
    services.topics_import(campaign=campaign, data=b"number\tanswer\n3\t0\n", name="a.tsv")
    result = services.topic_answers_import(
        campaign=campaign, data=b"# accepted answers\n1 1\n2\t-1\n3 0\n", name="topics_efficacy"
    )
    assert (result.set, result.changed) == (3, 2)
    assert dict(campaign.topics.values_list("topic_id", "extra")) == {
        "1": {"answer": 1},
        "2": {"answer": -1},
        "3": {"answer": 0},
    }


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"1 1\n9 0\n", "efficacy:2: topic '9' is not a topic of this campaign"),
        (
            b"1 2\n",
            "efficacy:1: topic '1': the answer must be -1 (not helpful), 0 (inconclusive), 1 (helpful); got '2'",
        ),
        (b"1 1 extra\n", "efficacy:1: expected 2 columns (topic answer), found 3"),
        (b"1 1\n1 0\n", "efficacy:2: topic '1' given twice (first on line 1)"),
        (b"# nothing\n", "efficacy: no answers found: expected `topic answer` lines"),
        (b"1 \xff\n", "efficacy:1: not UTF-8 (byte 0xff at column 3)"),
    ],
)
def test_rejected_answers_file_changes_nothing(data, problem):
    campaign = make_campaign(topics=("1", "2"))
    with pytest.raises(InputError) as caught:
        services.topic_answers_import(campaign=campaign, data=data, name="efficacy")
    assert problem in str(caught.value)
    assert [t.extra for t in campaign.topics.all()] == [{}, {}]


# --------------------------------------------------------------------------
# Documents


def docs_stream(lines: list[str]) -> io.BytesIO:
    return io.BytesIO(("\n".join(lines) + "\n").encode())


def test_documents_import_upserts_in_batches():
    campaign = make_campaign()
    batches: list[int] = []
    result = services.documents_import(
        campaign=campaign,
        stream=docs_stream([f"d{i}\tTitle {i}\tText {i}" for i in range(5)]),
        name="docs.tsv",
        batch_size=2,
        on_batch=batches.append,
    )
    assert (result.created, result.updated) == (5, 0)
    assert batches == [2, 2, 1]
    result = services.documents_import(
        campaign=campaign, stream=docs_stream(['{"docno": "d1", "text": "new"}']), name="more.jsonl"
    )
    assert (result.created, result.updated) == (0, 1)
    assert Document.objects.get(docno="d1").text == "new"


def test_rejected_document_file_rolls_back_every_batch():
    campaign = make_campaign()
    services.documents_import(campaign=campaign, stream=docs_stream(["d0\tkept"]), name="a.tsv")
    lines = [f"d{i}\tT\tnew text" for i in range(10)] + ["d3\tT\tagain"]
    with pytest.raises(InputError, match=r"b\.tsv:11: docno 'd3' given twice"):
        services.documents_import(
            campaign=campaign, stream=docs_stream(lines), name="b.tsv", batch_size=3
        )
    assert list(Document.objects.values_list("docno", "text")) == [("d0", "kept")]


def test_documents_import_can_load_only_a_pools_docnos():
    campaign = make_campaign()
    result = services.documents_import(
        campaign=campaign,
        stream=docs_stream([f"d{i}\tText {i}" for i in range(100)]),
        name="docs.tsv",
        only=frozenset({"d5", "d50", "missing"}),
    )
    assert (result.created, result.skipped) == (2, 1)
    assert sorted(Document.objects.values_list("docno", flat=True)) == ["d5", "d50"]


def test_campaign_create_validates_the_label_schema():
    with pytest.raises(ValidationError, match="'grades' must list at least two grades"):
        services.campaign_create(name="x", slug="x", label_schema={"relevance": {"grades": []}})


# --------------------------------------------------------------------------
# Editing a campaign


def edit(campaign, **changes):
    fields = {
        "name": campaign.name,
        "description": campaign.description,
        "guidelines": campaign.guidelines,
        "judgment_budget": campaign.judgment_budget,
        "label_schema": campaign.label_schema,
    }
    return services.campaign_update(campaign=campaign, **(fields | changes))


def judge(campaign, assessor) -> None:
    from judging import services as judging_services

    judging_services.judgment_record(
        assessor=assessor, topic=campaign.topics.first(), docno="d1", relevance=0, aspects={}
    )


def test_campaign_update_changes_every_field():
    campaign = make_campaign()
    binary = SCHEMA_PRESETS["binary"].schema()
    edit(
        campaign,
        name="Renamed",
        description="New description",
        guidelines="Read twice.",
        judgment_budget=300,
        label_schema=binary,
    )
    campaign.refresh_from_db()
    assert (campaign.name, campaign.description, campaign.guidelines) == (
        "Renamed",
        "New description",
        "Read twice.",
    )
    assert campaign.judgment_budget == 300
    assert campaign.label_schema == binary


def test_campaign_update_refuses_a_new_schema_once_judged(assessor):
    campaign = make_campaign()
    judge(campaign, assessor)
    assert "1 judgment" in selectors.campaign_schema_lock(campaign)
    with pytest.raises(ValidationError) as caught:
        edit(campaign, name="Renamed", label_schema=SCHEMA_PRESETS["binary"].schema())
    assert caught.value.message_dict == {
        "label_schema": [
            "TREC-X already has 1 judgment: its label schema can no longer change, "
            "since the values already stored might not fit a new one."
        ]
    }
    campaign.refresh_from_db()
    assert campaign.name == "TREC-X"
    assert campaign.label_schema == SCHEMA_PRESETS["decision"].data


def test_campaign_update_keeps_the_schema_of_a_judged_campaign_and_changes_the_rest(assessor):
    campaign = make_campaign()
    judge(campaign, assessor)
    edit(campaign, name="Renamed", label_schema=SCHEMA_PRESETS["decision"].schema())
    campaign.refresh_from_db()
    assert campaign.name == "Renamed"


def test_a_campaign_without_judgments_has_no_schema_lock(assessor):
    judged = make_campaign("judged")
    judge(judged, assessor)
    assert selectors.campaign_schema_lock(make_campaign()) == ""


def test_campaign_update_validates_like_create():
    campaign = make_campaign()
    with pytest.raises(ValidationError, match="'grades' must list at least two grades"):
        edit(campaign, label_schema={"relevance": {"grades": []}})
    with pytest.raises(ValidationError, match="name"):
        edit(campaign, name="")
    campaign.refresh_from_db()
    assert campaign.label_schema == SCHEMA_PRESETS["decision"].data


def test_a_long_multibyte_tag_is_stored_under_a_file_name_the_disk_takes():
    campaign = make_campaign()
    tag = "ü" * 200  # the longest tag allowed: 400 bytes as a file name
    data = run_text(tag, {"301": ["d1"]})
    [run] = run_services.runs_import(
        campaign=campaign, uploads=[run_services.RunUpload("r.txt", data)]
    )
    assert run.tag == tag
    assert run.original_file.read() == data
    assert len(Path(run.original_file.name).name.encode()) < 255


# --------------------------------------------------------------------------
# Task kinds


def test_the_task_kind_changes_until_the_campaign_holds_runs_or_task_files():
    from tests.helpers import make_run, make_task_gold

    campaign = make_campaign()
    assert campaign.task_kind == "ranked"
    campaign = edit(campaign, task_kind="codiesp")
    assert campaign.task_kind == "codiesp"
    make_task_gold(campaign)
    with pytest.raises(ValidationError, match="already has 1 gold file: its task kind"):
        edit(campaign, task_kind="ranked")
    ranked = make_campaign("trec-y")
    make_run(ranked, "bm25", {"301": ["d1"]})
    with pytest.raises(ValidationError, match="already has 1 run: its task kind"):
        edit(ranked, task_kind="scifact")
    assert edit(ranked, name="Renamed").task_kind == "ranked", "None leaves it as it is"


def test_a_task_campaign_takes_no_runs():
    campaign = services.campaign_create(name="CodiEsp", slug="codiesp", task_kind="codiesp")
    with pytest.raises(InputError) as error:
        run_services.runs_import(campaign=campaign, uploads=[upload("bm25", {"301": ["d1"]})])
    assert str(error.value) == (
        "bm25.txt: CodiEsp is a CodiEsp clinical coding campaign: it takes gold files and "
        "submissions on its task page, not runs"
    )
    assert not Run.objects.exists()
