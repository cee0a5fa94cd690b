"""import_judgments and import_qrels: every line checked, then stored in bulk, or nothing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from judging import services
from judging.core.judgment_files import read_judgments_tsv
from judging.models import Judgment, JudgmentEvent
from pooling.core.spec import PoolSpec
from pooling.models import Pool
from tests.helpers import make_campaign, make_pool
from workbench.core.label_schema import SCHEMA_PRESETS, LabelSchema
from workbench.core.problems import InputError

pytestmark = pytest.mark.django_db


def call(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def stored() -> list[tuple]:
    return sorted(
        Judgment.objects.values_list(
            "assessor__username", "topic__topic_id", "docno", "relevance", "aspects"
        )
    )


def test_tsv_judgments_are_imported_with_events(tmp_path: Path, assessor):
    make_campaign()
    (tmp_path / "j.tsv").write_text(
        "assessor\ttopic\tdocno\trel\teff\tcred\n"
        "alice\t301\td1\t2\t3\t1\n"
        "alice\t301\td2\t0\t-1\t-1\n"
        "alice\t302\td3\t0\n"
        "alice\t302\td4\t1\t-2\t0\n"
    )
    assert call("import_judgments", "--campaign", "trec-x", str(tmp_path / "j.tsv")).endswith(
        "judgments 4 created, 0 updated, 0 unchanged\n"
    )
    assert stored() == [
        ("alice", "301", "d1", 2, {"effectiveness": 3, "credibility": 1}),
        ("alice", "301", "d2", 0, {"effectiveness": -1, "credibility": -1}),
        ("alice", "302", "d3", 0, {"effectiveness": -1, "credibility": -1}),
        ("alice", "302", "d4", 1, {"effectiveness": -2, "credibility": 0}),
    ]
    assert JudgmentEvent.objects.filter(action="create").count() == 4
    (tmp_path / "again.tsv").write_text("alice\t301\td1\t2\t3\t1\nalice\t301\td2\t1\t0\t0\n")
    assert call("import_judgments", "--campaign", "trec-x", str(tmp_path / "again.tsv")).endswith(
        "judgments 0 created, 1 updated, 1 unchanged\n"
    )
    update = JudgmentEvent.objects.get(action="update")
    assert (update.old["relevance"], update.new["relevance"]) == (0, 1)


def test_a_bad_file_stores_nothing_and_names_each_line(tmp_path: Path, assessor):
    make_campaign()
    call_command(
        "import_judgments",
        "--campaign",
        "trec-x",
        str(_write(tmp_path, "ok.tsv", "alice\t301\tkeep\t1\t1\t1\n")),
        stdout=io.StringIO(),
    )
    before = stored()
    path = _write(
        tmp_path,
        "bad.tsv",
        "alice\t301\td1\t2\t3\t1\n"
        "nobody\t301\td2\t0\n"
        "alice\t999\td3\t0\n"
        "alice\t301\td4\t7\n"
        "alice\t301\td5\t1\t3\n"
        "alice\t301\td1\t1\t1\t1\n"
        "alice\t301\n",
    )
    with pytest.raises(CommandError) as caught:
        call("import_judgments", "--campaign", "trec-x", str(path))
    lines = str(caught.value).splitlines()
    assert lines[0] == "rejected, nothing stored:"
    assert lines[1:] == [
        f"{path}:2: no assessor named 'nobody'",
        f"{path}:3: topic '999' is not a topic of this campaign",
        f"{path}:4: Relevance must be one of 0 (Not relevant), 1 (Relevant), 2 (Highly relevant); got 7",
        f"{path}:5: Credibility is required when Relevance is 1",
        f"{path}:6: alice judged docno 'd1' of topic '301' twice (first on line 1)",
        f"{path}:7: expected 6 tab-separated columns (assessor topic docno rel effectiveness credibility), found 2",
    ]
    assert stored() == before


def test_unknown_assessors_can_get_accounts(tmp_path: Path):
    make_campaign()
    out = call(
        "import_judgments",
        "--campaign",
        "trec-x",
        "--create-assessors",
        str(_write(tmp_path, "j.tsv", "nist7\t301\td1\t0\n")),
    )
    assert out.endswith("new assessor accounts: nist7\n")
    assert not User.objects.get(username="nist7").has_usable_password()


def test_import_qrels_as_one_assessors_judgments(tmp_path: Path):
    make_campaign()
    path = _write(
        tmp_path, "qrels.txt", "# from NIST\n301 0 d1 2\n301 0 d2 0\n302 0 d3 -1\n302 0 d4 1\n"
    )
    out = call("import_qrels", "--campaign", "trec-x", "--assessor", "nist", str(path))
    assert out.endswith(
        "judgments 3 created, 0 updated, 0 unchanged; new assessor accounts: nist; 1 unjudged lines skipped\n"
    )
    # Plain qrels carry no aspects: a relevant document's aspects are "not judged".
    assert ("nist", "301", "d1", 2, {"effectiveness": -2, "credibility": -2}) in stored()


def test_import_aspect_qrels(tmp_path: Path):
    make_campaign()
    path = _write(tmp_path, "raw.txt", "301 0 d1 2 3 1\n301 0 d2 0 -1 -1\n302 0 d3 1 -2 0\n")
    call(
        "import_qrels",
        "--campaign",
        "trec-x",
        "--assessor",
        "nist",
        "--format",
        "aspects",
        str(path),
    )
    assert stored() == [
        ("nist", "301", "d1", 2, {"effectiveness": 3, "credibility": 1}),
        ("nist", "301", "d2", 0, {"effectiveness": -1, "credibility": -1}),
        ("nist", "302", "d3", 1, {"effectiveness": -2, "credibility": 0}),
    ]


def test_import_qrels_of_nists_six_columns_says_which_flag_reads_them(tmp_path: Path):
    make_campaign()
    lines = "".join(f"30{t} 0 d{d} 1 2 0\n" for t in (1, 2) for d in range(2000))
    path = _write(tmp_path, "qrels_raw", lines)
    with pytest.raises(CommandError) as caught:
        call("import_qrels", "--campaign", "trec-x", "--assessor", "nist", str(path))
    assert str(caught.value) == (
        f"rejected, nothing stored:\n{path}:1: every line has 6 columns, not the 4 of qrels "
        "(topic iter docno rel); 6 columns are qrels_threeaspects (topic iter docno a1 a2 a3): "
        "read it with --format aspects"
    )
    assert not User.objects.filter(username="nist").exists()
    call(
        "import_qrels",
        "--campaign",
        "trec-x",
        "--assessor",
        "nist",
        "--format",
        "aspects",
        str(path),
    )
    assert Judgment.objects.count() == 4000


def test_bad_qrels_store_nothing_with_file_and_line(tmp_path: Path):
    make_campaign()
    path = _write(tmp_path, "qrels.txt", "301 0 d1 2\n\n999 0 d2 1\n301 0 d3 5\n")
    with pytest.raises(CommandError) as caught:
        call("import_qrels", "--campaign", "trec-x", "--assessor", "nist", str(path))
    assert f"{path}:3: topic '999' is not a topic of this campaign" in str(caught.value)
    assert f"{path}:4: Relevance must be one of" in str(caught.value)
    malformed = _write(tmp_path, "m.txt", "301 0 d1\n")
    with pytest.raises(CommandError, match=r"m\.txt:1:"):
        call("import_qrels", "--campaign", "trec-x", "--assessor", "nist", str(malformed))
    huge = _write(tmp_path, "h.txt", "301 0 d1 1\n301 0 d2 1000000000000000000\n")
    with pytest.raises(
        CommandError, match=r"h\.txt:2: relevance 1000000000000000000 is out of range"
    ):
        call("import_qrels", "--campaign", "trec-x", "--assessor", "nist", str(huge))
    assert not Judgment.objects.exists()
    assert not User.objects.filter(username="nist").exists()


def test_reader_accepts_any_assessor_when_accounts_will_be_made():
    rows, log = read_judgments_tsv(
        b"x\t301\td1\t0\n",
        name="f",
        schema=LabelSchema.default(),
        known_topics={"301"},
        known_assessors=None,
    )
    assert log.ok
    assert rows[0].assessor == "x"


def test_service_refuses_unknown_assessors_without_permission():
    campaign = make_campaign()
    rows, _ = read_judgments_tsv(
        b"ghost\t301\td1\t0\n",
        name="f",
        schema=campaign.schema,
        known_topics={"301"},
        known_assessors=None,
    )
    with pytest.raises(services.JudgmentError, match="no assessor account named ghost"):
        services.judgments_import(campaign=campaign, rows=rows)
    assert not Judgment.objects.exists()


def _write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def test_import_qrels_can_make_the_pool_its_judgments_form(tmp_path: Path):
    campaign = make_campaign(label_schema=SCHEMA_PRESETS["graded-0-3"].schema())
    path = _write(tmp_path, "nist.qrels", "302 0 d9 3\n301 0 d2 0\n301 0 d1 2\n302 0 d3 -1\n")
    out = call(
        "import_qrels",
        "--campaign",
        "trec-x",
        "--assessor",
        "nist",
        "--make-pool",
        "nist",
        str(path),
    )
    pool = Pool.objects.get(campaign=campaign)
    assert f"pool {pool.pk} 'nist' made of the judged documents" in out
    assert pool.name == "nist"
    spec = PoolSpec.from_dict(pool.spec)
    assert spec.source == "qrels file nist.qrels, imported by import_qrels as nist"
    entries = pool.entries.order_by("topic__position", "order").values_list(
        "topic__topic_id", "docno", "order", "stratum", "inclusion_probability", "sampled"
    )
    assert list(entries) == [
        ("301", "d1", 1, 1, 1.0, True),
        ("301", "d2", 2, 1, 1.0, True),
        ("302", "d9", 1, 1, 1.0, True),
    ]


def test_import_judgments_can_make_the_pool_its_judgments_form(tmp_path: Path, assessor):
    campaign = make_campaign()
    path = _write(tmp_path, "j.tsv", "alice\t301\td1\t0\nalice\t302\td3\t1\t3\t1\n")
    call("import_judgments", "--campaign", "trec-x", "--make-pool", "old", str(path))
    pool = Pool.objects.get(campaign=campaign, name="old")
    assert PoolSpec.from_dict(pool.spec).source.startswith("judgments file j.tsv")
    assert sorted(pool.entries.values_list("topic__topic_id", "docno")) == [
        ("301", "d1"),
        ("302", "d3"),
    ]


def test_an_import_that_cannot_make_its_pool_stores_nothing(tmp_path: Path):
    campaign = make_campaign()
    make_pool(campaign, {"301": ["d1"]}, name="taken")
    path = _write(tmp_path, "qrels.txt", "301 0 d1 2\n")
    import_qrels = ["import_qrels", "--campaign", "trec-x", "--assessor", "nist", str(path)]
    with pytest.raises(CommandError, match="already has a pool named 'taken'") as caught:
        call(*import_qrels, "--make-pool", "taken")
    assert caught.value.returncode == 2
    bad = _write(tmp_path, "bad.txt", "301 0 d1 2\n999 0 d2 1\n")
    with pytest.raises(CommandError, match=r"bad\.txt:2: topic '999'") as caught:
        call(
            "import_qrels",
            "--campaign",
            "trec-x",
            "--assessor",
            "nist",
            "--make-pool",
            "new",
            str(bad),
        )
    assert caught.value.returncode == 2
    assert not Judgment.objects.exists()
    assert not User.objects.filter(username="nist").exists()
    assert list(Pool.objects.values_list("name", flat=True)) == ["taken"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("nist\t1\t" + "d" * 501 + "\t0\t\t\n", "j.tsv:2: docno of 501 characters"),
        ("n" * 151 + "\t1\td1\t0\t\t\n", "j.tsv:2: assessor name of 151 characters"),
        ("nist\t1\td\x001\t0\t\t\n", "j.tsv:2: a field contains a NUL character"),
        ("nist\t1\td\x1b1\t0\t\t\n", "j.tsv:2: docno 'd\\x1b1' holds U+001B (ESC)"),
        ("ni\u202est\t1\td1\t0\t\t\n", "j.tsv:2: assessor name 'ni\\u202est' holds U+202E"),
    ],
)
def test_judgment_files_with_ids_too_long_or_nul_are_rejected(line, problem):
    from judging.core.judgment_files import read_judgments_tsv
    from workbench.core.label_schema import LabelSchema

    data = ("assessor\ttopic\tdocno\trel\teff\tcred\n" + line).encode()
    _, log = read_judgments_tsv(
        data, name="j.tsv", schema=LabelSchema.default(), known_topics={"1"}, known_assessors=None
    )
    assert any(str(p).startswith(problem) for p in log.sorted()), log.summary_lines()


def test_judgments_import_file_checks_every_line_then_stores_or_names_each_problem(assessor):
    campaign = make_campaign()
    bad = b"alice\t301\td1\t0\nalice\t999\td2\t0\nbob\t301\td3\t0\n"
    with pytest.raises(InputError) as refused:
        services.judgments_import_file(campaign=campaign, data=bad, name="j.tsv")
    assert [(p.file, p.line, p.reason) for p in refused.value.problems] == [
        ("j.tsv", 2, "topic '999' is not a topic of this campaign"),
        ("j.tsv", 3, "no assessor named 'bob'"),
    ]
    assert stored() == []
    good = b"alice\t301\td1\t0\nbob\t302\td3\t0\n"
    result = services.judgments_import_file(
        campaign=campaign, data=good, name="j.tsv", create_assessors=True
    )
    assert (result.created, result.new_assessors) == (2, ("bob",))
    assert [row[:4] for row in stored()] == [("alice", "301", "d1", 0), ("bob", "302", "d3", 0)]
