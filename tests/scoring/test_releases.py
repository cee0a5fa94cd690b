"""Releases: a pool's results frozen once, versioned, compared, bundled and withdrawn."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.core.management.base import CommandError

from judging import services as judging_services
from judging.models import Judgment
from pooling import run_services
from pooling.errors import RunInUse
from scoring import export_selectors, leaderboard_selectors, release_selectors, selectors, services
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from scoring.core.exports import FORMATS
from scoring.models import Release, ReleaseRun
from tests.helpers import make_judged_team_campaign, make_release, make_run

pytestmark = pytest.mark.django_db

VENV_BIN = Path(sys.executable).parent


@pytest.fixture
def judged(participant):
    """Two teams' runs (alpha1, rivalrun) on a judged binary pool (docx-1, docx-4 relevant)."""
    return make_judged_team_campaign(participant)


def relabel(campaign, topic: str, docno: str, relevance: int) -> None:
    """alice, the pool's only assessor, changes her mind: the final label changes."""
    judging_services.judgment_record(
        assessor=User.objects.get(username="alice"),
        topic=campaign.topics.get(topic_id=topic),
        docno=docno,
        relevance=relevance,
        aspects={},
    )


def stored(release: Release, name: str) -> bytes:
    with default_storage.open(f"{release.directory}/{name}", "rb") as file:
        return file.read()


# --------------------------------------------------------------------------
# What a release holds


def test_a_release_holds_the_scores_and_leaderboard_the_live_pages_show(judged, organiser):
    _, _, pool = judged
    release = make_release(pool, measure="P.10", reason="first results", released_by=organiser)
    live = selectors.pool_scores(pool=pool, per_topic=True)
    frozen = release_selectors.released_scores(
        release, tags=["alpha1", "rivalrun"], per_topic=True
    ).scores
    key = ["run_id", "query_id", "measure"]
    assert (
        frozen.sort_values(key)
        .reset_index(drop=True)
        .equals(live.sort_values(key).reset_index(drop=True)[frozen.columns])
    )
    board, _ = leaderboard_selectors.pool_leaderboard(
        pool=pool, measure="P.10", options=LeaderboardOptions()
    )
    from scoring.core.analysis.render import to_json

    assert release.leaderboard == to_json(board)
    assert release.measures == ["map", "P.10", "ndcg_cut.10", "bpref", "recip_rank"]
    assert {item.tag: item.means["map"] for item in release.runs.all()} == {
        "alpha1": 1.0,
        "rivalrun": 0.25,
    }
    assert (release.version, release.reason, release.released_by) == (1, "first results", organiser)
    assert release.judged_topics == ["301", "302"]


def test_a_release_stores_every_qrels_layout_and_its_files_with_their_sha256(judged):
    _, _, pool = judged
    release = make_release(pool)
    for name, described in release.files.items():
        data = stored(release, name)
        assert hashlib.sha256(data).hexdigest() == described["sha256"], name
        assert len(data) == described["bytes"]
    for fmt in ("qrels", "relevance", "stratified", "infap"):
        [export, *_] = export_selectors.qrels_export(pool=pool, fmt=fmt)
        assert stored(release, FORMATS[fmt].file) == export.data
    assert "qrels_aspects.txt" not in release.files  # a binary schema has no aspects
    assert {"scores.tsv", "leaderboard.tsv", "leaderboard.json", "leaderboard.tex"} <= set(
        release.files
    )
    assert {"manifest.json", "reproduce.sh", "provenance.tsv", "inclusion.tsv"} <= set(
        release.files
    )
    assert release.label_policy == {
        "labels": "human",
        "steps": ["adjudicated", "primary", "majority", "maximum"],
        "disagreement_mode": "relevance_line",
    }
    manifest = json.loads(stored(release, "manifest.json"))
    assert manifest["files"]["qrels.txt"] == release.files["qrels.txt"]
    assert [run["sha256"] for run in manifest["runs"]] == [
        run.sha256 for run in pool.campaign.runs.order_by("tag")
    ]
    assert manifest["workbench"]["version"] == release.workbench["version"] is not None
    assert manifest["pool"]["spec"] == pool.spec


def test_machine_labels_are_refused_on_a_pool_no_machine_labelled(judged):
    _, _, pool = judged
    with pytest.raises(release_selectors.ReleaseError, match="no machine has labels on pool"):
        make_release(pool, labels="machine")
    with pytest.raises(release_selectors.ReleaseError, match="unknown label source 'robot'"):
        make_release(pool, labels="robot")
    assert not Release.objects.exists()


def test_a_measure_the_pool_cannot_score_is_refused_and_stores_nothing(judged):
    _, _, pool = judged
    with pytest.raises(release_selectors.ReleaseError, match="nosuch"):
        make_release(pool, measure="nosuch")
    with pytest.raises(release_selectors.ReleaseError, match="score a sampled pool"):
        make_release(pool, measure="infAP")
    assert not Release.objects.exists()
    assert not default_storage.exists("releases")


# --------------------------------------------------------------------------
# Frozen and versioned


def test_a_label_changed_after_the_release_leaves_the_release_as_it_was(judged):
    campaign, _, pool = judged
    release = make_release(pool)
    files = {name: stored(release, name) for name in release.files}
    means = {item.tag: item.means for item in release.runs.all()}
    relabel(campaign, "301", "docx-1", 0)
    again = Release.objects.get(pk=release.pk)
    assert {name: stored(again, name) for name in again.files} == files
    assert {item.tag: item.means for item in again.runs.all()} == means
    assert selectors.pool_scores(pool=pool).query("run_id == 'alpha1' and measure == 'map'")[
        "value"
    ].item() == pytest.approx(0.5)  # the live scores moved


def test_a_second_release_is_version_2_and_shows_what_changed(judged, organiser):
    campaign, _, pool = judged
    first = make_release(pool, reason="first")
    live_before = selectors.pool_scores(pool=pool)
    relabel(campaign, "301", "docx-1", 0)  # a relevant document judged again, not relevant
    relabel(campaign, "302", "docx-5", 1)  # rivalrun's first document on 302, now relevant
    live_after = selectors.pool_scores(pool=pool)
    second = make_release(pool, reason="after adjudication", released_by=organiser)
    assert (first.version, second.version) == (1, 2)
    comparison = release_selectors.release_comparison(first, second)
    assert comparison.labels.to_dict("records") == [
        {"query_id": "301", "doc_id": "docx-1", "old": 1, "new": 0, "change": "changed"},
        {"query_id": "302", "doc_id": "docx-5", "old": 0, "new": 1, "change": "changed"},
    ]
    moved_live = {
        (run, measure)
        for (run, measure, before), after in zip(
            live_before[["run_id", "measure", "value"]].itertuples(index=False),
            live_after["value"],
            strict=True,
        )
        if before != after
    }
    assert {(c.run, c.measure) for c in comparison.scores} == moved_live
    [alpha_map] = [c for c in comparison.scores if (c.run, c.measure) == ("alpha1", "map")]
    assert (alpha_map.old, alpha_map.new) == (1.0, 0.25)  # 301: none relevant; 302: 1 of 2
    assert comparison.measures[0] == "map"  # the leaderboard's first
    assert comparison.flips == []  # two runs over two topics: no pair is significant
    # Both versions stay readable and downloadable.
    assert release_selectors.release_or_none(pool, 1).reason == "first"
    out = io.BytesIO()
    release_selectors.release_bundle(first, out)
    assert zipfile.ZipFile(out).read("qrels.txt") == stored(first, "qrels.txt")


def test_labels_added_and_removed_show_in_the_comparison(judged):
    campaign, _, pool = judged
    first = make_release(pool)
    Judgment.objects.filter(topic__topic_id="302", docno="docx-6").delete()
    second = make_release(pool)
    changes = release_selectors.release_comparison(first, second).labels
    assert changes.to_dict("records") == [
        {"query_id": "302", "doc_id": "docx-6", "old": 0, "new": None, "change": "removed"}
    ]
    back = release_selectors.release_comparison(second, make_release_after_relabel(campaign, pool))
    assert back.labels.to_dict("records") == [
        {"query_id": "302", "doc_id": "docx-6", "old": None, "new": 1, "change": "added"}
    ]


def make_release_after_relabel(campaign, pool) -> Release:
    relabel(campaign, "302", "docx-6", 1)
    return make_release(pool)


def test_two_releases_at_once_get_two_versions(judged):
    _, _, pool = judged
    releases = [make_release(pool), make_release(pool), make_release(pool)]
    assert [r.version for r in releases] == [1, 2, 3]
    assert len({r.directory for r in releases}) == 3


def test_a_release_that_fails_on_the_way_stores_nothing(judged):
    _, _, pool = judged

    def fail(release: Release) -> None:
        assert default_storage.exists(f"{release.directory}/scores.tsv")  # written by now
        raise RuntimeError("the worker stopped")

    with pytest.raises(RuntimeError, match="the worker stopped"):
        services.release_create(pool=pool, measure="map", before_commit=fail)
    assert not Release.objects.exists()
    assert not ReleaseRun.objects.exists()
    assert default_storage.listdir(f"releases/{pool.campaign.slug}/pool{pool.pk}/v1")[1] == []
    assert make_release(pool).version == 1  # and it can be made again


def test_a_released_run_stays_as_it_was_scored(judged):
    campaign, _, pool = judged
    unpooled = make_run(campaign, "late-organiser-run", {"301": ["docx-2"]})
    make_release(pool)
    with pytest.raises(RunInUse, match="kept by release 1 of pool"):
        run_services.run_delete(run=unpooled)
    with pytest.raises(RunInUse, match="kept by release 1 of pool"):
        run_services.run_replace(
            run=unpooled,
            upload=run_services.RunUpload("x.txt", b"301 Q0 docx-3 1 1.0 late-organiser-run\n"),
        )
    assert campaign.runs.get(tag="late-organiser-run").sha256 == unpooled.sha256


def test_a_run_file_changed_on_disk_is_not_bundled(judged):
    campaign, _, pool = judged
    release = make_release(pool)
    run = campaign.runs.get(tag="alpha1")
    Path(run.original_file.path).write_bytes(b"301 Q0 docx-9 1 1.0 alpha1\n")
    with pytest.raises(release_selectors.ReleaseError, match="alpha1's file is not the one"):
        release_selectors.release_bundle(release, io.BytesIO())


# --------------------------------------------------------------------------
# Withdrawn


def test_a_withdrawn_release_stays_in_the_record_with_why_who_and_when(judged, organiser):
    _, _, pool = judged
    release = make_release(pool)
    with pytest.raises(release_selectors.ReleaseError, match="say why"):
        services.release_withdraw(release=release, reason="  ")
    withdrawn = services.release_withdraw(
        release=release, reason="a run was scored on the wrong pool", withdrawn_by=organiser
    )
    assert withdrawn.withdrawn
    assert (withdrawn.withdrawal.reason, withdrawn.withdrawal.withdrawn_by) == (
        "a run was scored on the wrong pool",
        organiser,
    )
    assert withdrawn.files == release.files  # nothing of it changed
    with pytest.raises(release_selectors.ReleaseError, match="withdrawn already"):
        services.release_withdraw(release=withdrawn, reason="again")
    assert release_selectors.release_or_none(pool, 1) is not None


# --------------------------------------------------------------------------
# The bundle a reader can check


def _unpacked(release: Release, folder: Path) -> Path:
    out = folder / "bundle.zip"
    call_command(
        "release_bundle",
        "--pool",
        release.pool_id,
        "--version",
        release.version,
        "--out",
        out,
        stderr=io.StringIO(),
    )
    target = folder / "unpacked"
    with zipfile.ZipFile(out) as archive:
        archive.extractall(target)
    (target / "reproduce.sh").chmod(0o755)
    return target


def test_the_bundles_commands_reproduce_its_scores_byte_for_byte(pool, tmp_path):
    """The demo pool samples its strata: wb-trec-eval and wb-sample-eval both run."""
    release = make_release(pool, measure="ndcg_cut.10")
    bundle = _unpacked(release, tmp_path)
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "reproduce.sh"], cwd=bundle, env=env, capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    scores = (bundle / "scores.tsv").read_bytes()
    assert done.stdout == scores
    assert b"\tinfAP\tall\t" in scores  # sample_eval's rows too
    manifest = json.loads((bundle / "manifest.json").read_text())
    for name, described in manifest["files"].items():
        assert hashlib.sha256((bundle / name).read_bytes()).hexdigest() == described["sha256"]
    for run in manifest["runs"]:
        data = (bundle / run["file"]).read_bytes()
        original = pool.campaign.runs.get(tag=run["tag"]).original_file
        assert data == Path(original.path).read_bytes()  # as submitted
        assert hashlib.sha256(data).hexdigest() == run["sha256"]
    board = json.loads((bundle / "leaderboard.json").read_text())
    means = {
        line.split("\t")[0]: float(line.split("\t")[3])
        for line in scores.decode().splitlines()[1:]
        if line.split("\t")[1:3] == ["ndcg_cut_10", "all"]
    }
    assert {row["run"]: row["mean"] for row in board["runs"]} == means
    assert (bundle / "leaderboard.tex").read_text().startswith("% needs \\usepackage{booktabs}")


def test_the_same_release_always_bundles_to_the_same_bytes(judged, tmp_path):
    _, _, pool = judged
    release = make_release(pool)
    first, second = io.BytesIO(), io.BytesIO()
    release_selectors.release_bundle(release, first)
    release_selectors.release_bundle(Release.objects.get(pk=release.pk), second)
    assert first.getvalue() == second.getvalue()
    names = zipfile.ZipFile(first).namelist()
    assert names == sorted(names)
    assert {"qrels.txt", "runs/alpha1", "runs/rivalrun", "scores.tsv", "reproduce.sh"} <= set(names)


# --------------------------------------------------------------------------
# Commands


def test_release_command_prints_the_version(judged, organiser):
    _, _, pool = judged
    out = io.StringIO()
    call_command(
        "release",
        "--pool",
        pool.pk,
        "--measure",
        "P.10",
        "--reason",
        "why",
        "--by",
        organiser.username,
        stdout=out,
        stderr=io.StringIO(),
    )
    assert out.getvalue() == "version 1\n"
    call_command("release", "--pool", pool.pk, "--measure", "map", stdout=out, stderr=io.StringIO())
    assert out.getvalue() == "version 1\nversion 2\n"
    first = Release.objects.get(version=1)
    assert (first.reason, first.released_by, first.measure) == ("why", organiser, "P.10")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--pool", "999", "--measure", "map"], "no pool with id 999"),
        (["--measure", "nosuch"], "nosuch"),
        (["--measure", "map", "--alpha", "2"], "alpha must be between 0 and 1"),
        (["--measure", "map", "--by", "nobody"], "no account named nobody"),
    ],
)
def test_release_command_refusals_exit_2(judged, arguments, message):
    _, _, pool = judged
    if "--pool" not in arguments:
        arguments = ["--pool", str(pool.pk), *arguments]
    with pytest.raises(CommandError, match=message) as raised:
        call_command("release", *arguments, stdout=io.StringIO(), stderr=io.StringIO())
    assert raised.value.returncode == 2
    assert not Release.objects.exists()


def test_release_bundle_command_refusals_exit_2(judged, tmp_path):
    _, _, pool = judged
    make_release(pool)
    cases = [
        (["--pool", pool.pk, "--version", 2, "--out", tmp_path / "b.zip"], "its releases: 1"),
        (["--pool", 999, "--version", 1, "--out", tmp_path / "b.zip"], "no pool with id 999"),
        (["--pool", pool.pk, "--version", 1, "--out", tmp_path / "no" / "b.zip"], "no such"),
    ]
    for arguments, message in cases:
        with pytest.raises(CommandError, match=message) as raised:
            call_command("release_bundle", *arguments, stderr=io.StringIO())
        assert raised.value.returncode == 2
    assert not (tmp_path / "b.zip").exists()


def test_release_bundle_reads_version_as_the_releases_not_djangos():
    from scoring.management.commands.release_bundle import Command

    parser = Command().create_parser("manage.py", "release_bundle")
    options = parser.parse_args(["--pool", "1", "--version", "3", "--out", "x.zip"])
    assert (options.pool, options.version) == (1, 3)


def test_releasing_a_pool_nobody_judged_is_refused():
    from tests.helpers import make_campaign, make_pool

    campaign = make_campaign(topics=("1",))
    make_run(campaign, "r", {"1": ["d1"]})
    pool = make_pool(campaign, {"1": ["d1"]})
    with pytest.raises(selectors.NothingJudged):
        services.release_start(pool=pool, measure="map")
