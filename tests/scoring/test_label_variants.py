"""Qrels variants (issue 25 item 6): human, machine and human-then-machine labels in
the qrels downloads and bundle, the scores, the leaderboard and releases."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from scoring import leaderboard_selectors, selectors
from tests.scoring.label_variant_helpers import (
    HUMAN,
    HUMAN_THEN_MACHINE,
    MACHINE,
    make_variant_pool,
    qrels_lines,
    store_machine_labels,
)

pytestmark = pytest.mark.django_db

EXPECTED = {
    "human": qrels_lines(HUMAN),
    "machine": qrels_lines(MACHINE),
    "human-then-machine": qrels_lines(HUMAN_THEN_MACHINE),
}
# recip_rank of each run under each source (see label_variant_helpers: run-a ranks
# d0 first, run-b d2 first).
RECIP_RANK = {
    "human": {"run-a": 1.0, "run-b": 1 / 3},
    "machine": {"run-a": 0.75, "run-b": 1.0},
    "human-then-machine": {"run-a": 1.0, "run-b": 1.0},
}


@pytest.fixture
def pool():
    return make_variant_pool()


@pytest.fixture
def api(organiser) -> APIClient:
    client = APIClient()
    client.force_authenticate(organiser)
    return client


def export(*args: str) -> str:
    out = io.StringIO()
    call_command("export_qrels", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_label_sources_have_one_definition():
    from judging.core import label_sources

    assert selectors.LABEL_SOURCES is label_sources.LABEL_SOURCES


@pytest.mark.parametrize("source", list(EXPECTED))
def test_export_qrels_writes_each_variant(pool, source):
    assert (
        export("--pool", str(pool.pk), "--format", "qrels", "--labels", source)
        == (EXPECTED[source])
    )


def test_export_qrels_defaults_to_human_and_names_the_only_machine(pool):
    assert export("--pool", str(pool.pk), "--format", "qrels") == EXPECTED["human"]
    named = export("--pool", str(pool.pk), "--format", "qrels", "--labels", "machine")
    assert named == export(
        "--pool", str(pool.pk), "--format", "qrels", "--labels", "machine", "--machine", "llm"
    )


def test_bad_label_choices_exit_2_naming_the_choices(pool):
    args = ["--pool", str(pool.pk), "--format", "qrels", "--labels"]
    with pytest.raises(CommandError, match="human-then-machine"):
        call_command("export_qrels", *args, "x")  # argparse's choices
    with pytest.raises(CommandError, match=r"no machine 'nobody'.*one of llm") as unknown:
        call_command("export_qrels", *args, "machine", "--machine", "nobody")
    assert unknown.value.returncode == 2
    store_machine_labels(pool.campaign, "second", MACHINE)
    with pytest.raises(CommandError, match="name the machine, one of llm, second") as several:
        call_command("export_qrels", *args, "machine")
    assert several.value.returncode == 2


def test_a_pool_without_machine_labels_refuses_a_machine_source():
    pool = make_variant_pool("nomachine", machine=False)
    with pytest.raises(selectors.LabelChoiceError, match="no machine has labels"):
        selectors.label_choice(pool, "machine")


def test_the_download_and_api_give_the_variant(organiser_client, api, pool):
    url = reverse("scoring:qrels_download", args=[pool.pk, "qrels"])
    for source, text in EXPECTED.items():
        page = organiser_client.get(url, {"labels": source})
        assert page.status_code == 200
        assert page.content.decode() == text
        answer = api.get(f"/api/pools/{pool.pk}/qrels/qrels/", {"labels": source})
        assert answer.status_code == 200
        assert b"".join(answer).decode() == text
    assert organiser_client.get(url, {"labels": "robot"}).status_code == 400
    bad = api.get(f"/api/pools/{pool.pk}/qrels/qrels/", {"labels": "machine", "machine": "x"})
    assert bad.status_code == 400
    assert "llm" in bad.json()["detail"]


def test_the_bundle_records_the_source_and_machine_in_the_manifest(organiser_client, api, pool):
    answer = api.get(f"/api/pools/{pool.pk}/bundle/", {"labels": "human-then-machine"})
    assert answer.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(answer)))
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["labels"]["labels"] == "human-then-machine"
    assert manifest["labels"]["machine"]["name"] == "llm"
    assert manifest["labels"]["machine"]["model"] == "llm-model"
    assert archive.read("qrels.txt").decode() == EXPECTED["human-then-machine"]
    provenance = archive.read("provenance.tsv").decode()
    assert "301\t301-d2\t2\tmachine\t1\tmachine.variants.llm" in provenance
    human = zipfile.ZipFile(io.BytesIO(b"".join(api.get(f"/api/pools/{pool.pk}/bundle/"))))
    assert json.loads(human.read("manifest.json"))["labels"] == {
        "labels": "human",
        "steps": manifest["labels"]["steps"],
        "disagreement_mode": manifest["labels"]["disagreement_mode"],
    }
    page = organiser_client.get(
        reverse("scoring:bundle_download", args=[pool.pk]), {"labels": "machine"}
    )
    assert (
        zipfile.ZipFile(io.BytesIO(page.content)).read("qrels.txt").decode()
        == (EXPECTED["machine"])
    )


def test_the_qrels_page_offers_the_choice_only_with_machine_labels(organiser_client, pool):
    page = organiser_client.get(
        reverse("scoring:pool_qrels", args=[pool.pk]), {"labels": "machine"}
    )
    text = page.content.decode()
    assert 'name="labels"' in text
    assert "labels=machine&amp;machine=llm" in text
    bare = make_variant_pool("bare", machine=False)
    text = organiser_client.get(reverse("scoring:pool_qrels", args=[bare.pk])).content.decode()
    assert 'name="labels"' not in text
    assert "no machine labels on this pool" in text


@pytest.mark.parametrize("source", list(RECIP_RANK))
def test_the_scores_api_and_page_score_on_the_variant(organiser_client, api, pool, source):
    answer = api.get(f"/api/pools/{pool.pk}/scores/", {"measure": "recip_rank", "labels": source})
    assert answer.status_code == 200
    got = {row["run_id"]: row["value"] for row in answer.json()}
    assert got == pytest.approx(RECIP_RANK[source])
    page = organiser_client.get(
        reverse("scoring:pool_scores", args=[pool.pk]),
        {"measures": "recip_rank", "labels": source, "download": "tsv"},
    )
    rows = dict(line.split("\t") for line in page.content.decode().splitlines()[1:])
    values = {run: float(value) for run, value in rows.items()}
    assert values == pytest.approx(RECIP_RANK[source], abs=1e-4)


def test_the_scores_refuse_a_bad_choice_with_a_400(organiser_client, api, pool):
    assert api.get(f"/api/pools/{pool.pk}/scores/", {"labels": "nope"}).status_code == 400
    page = organiser_client.get(reverse("scoring:pool_scores", args=[pool.pk]), {"labels": "nope"})
    assert page.status_code == 400
    assert "unknown label source" in page.content.decode()


def test_the_leaderboard_ranks_on_the_variant_and_its_links_carry_it(organiser_client, api, pool):
    human = api.get(f"/api/pools/{pool.pk}/leaderboard/", {"measure": "recip_rank"}).json()
    machine = api.get(
        f"/api/pools/{pool.pk}/leaderboard/", {"measure": "recip_rank", "labels": "machine"}
    ).json()
    assert [r["run"] for r in human["runs"]] == ["run-a", "run-b"]
    assert [r["run"] for r in machine["runs"]] == ["run-b", "run-a"]
    bad = api.get(f"/api/pools/{pool.pk}/leaderboard/", {"labels": "machine", "machine": "zz"})
    assert bad.status_code == 400
    page = organiser_client.get(
        reverse("scoring:pool_leaderboard", args=[pool.pk]),
        {"measure": "recip_rank", "labels": "machine", "machine": "llm"},
    )
    text = page.content.decode()
    assert page.status_code == 200
    assert "labels=machine&amp;machine=llm&amp;download=json" in text
    assert "labels=machine&amp;machine=llm" in text.split("Pictures")[1]
    download = organiser_client.get(
        reverse("scoring:pool_leaderboard", args=[pool.pk]),
        {"measure": "recip_rank", "labels": "machine", "machine": "llm", "download": "json"},
    )
    assert [r["run"] for r in json.loads(download.content)["runs"]] == ["run-b", "run-a"]
    assert "leaderboard-machine-llm.json" in download["Content-Disposition"]
    plot = organiser_client.get(
        reverse("scoring:leaderboard_plot", args=[pool.pk, "pr"]),
        {"measure": "recip_rank", "labels": "machine", "format": "csv"},
    )
    assert plot.status_code == 200


def test_the_cache_and_job_keys_keep_the_sources_apart(pool):
    human = selectors.HUMAN_CHOICE
    machine = selectors.label_choice(pool, "machine")
    both = selectors.label_choice(pool, "human-then-machine")
    versions = {selectors.scores_version(pool, ["map"], c) for c in (human, machine, both)}
    assert len(versions) == 3
    assert selectors.scores_version(pool, ["map"]) == selectors.scores_version(pool, ["map"], human)
    params = leaderboard_selectors.leaderboard_job(pool, "map", machine)["params"]
    assert params["labels"] == "machine"
    assert params["machine"] == "llm"
    assert "labels" not in leaderboard_selectors.leaderboard_job(pool, "map")["params"]
    # The human table cached first is never served for the machine's labels.
    cache.clear()
    table = leaderboard_selectors.pool_score_table(pool=pool, measure="recip_rank")
    other = leaderboard_selectors.pool_score_table(pool=pool, measure="recip_rank", choice=machine)
    assert table.values.tolist() != other.values.tolist()
    # New machine labels make a new version.
    before = selectors.scores_version(pool, ["map"], machine)
    store_machine_labels(pool.campaign, "llm", {("301", "301-d0"): 2})
    assert selectors.scores_version(pool, ["map"], machine) != before
    assert selectors.scores_version(pool, ["map"]) == selectors.scores_version(pool, ["map"])


def test_a_release_on_machine_labels_records_the_machine(pool):
    out = io.StringIO()
    call_command(
        "release",
        *("--pool", str(pool.pk), "--measure", "recip_rank", "--labels", "machine"),
        *("--machine", "llm"),
        stdout=out,
        stderr=io.StringIO(),
    )
    release = pool.releases.get()
    assert release.label_policy["labels"] == "machine"
    assert release.label_policy["machine"]["name"] == "llm"
    assert [row["run"] for row in release.leaderboard["runs"]] == ["run-b", "run-a"]
    with pytest.raises(CommandError, match="ghost") as refused:
        call_command(
            "release",
            *("--pool", str(pool.pk), "--measure", "map", "--labels", "machine"),
            *("--machine", "ghost"),
            stderr=io.StringIO(),
        )
    assert refused.value.returncode == 2


def test_the_bundle_job_of_the_page_keeps_the_choice(
    organiser_client, pool, django_capture_on_commit_callbacks
):
    from django.core.files.storage import default_storage

    from workbench.models import Job

    url = reverse("scoring:bundle_job", args=[pool.pk])
    with django_capture_on_commit_callbacks(execute=True):
        posted = organiser_client.post(
            url, {"formats": ["qrels"], "labels": "machine", "machine": "llm"}
        )
    assert posted.status_code == 302
    job = Job.objects.get(kind="scoring.jobs.qrels_bundle")
    assert job.state == Job.DONE, job.error
    assert job.params["labels"] == "machine"
    with default_storage.open(job.result["file"]) as stored:
        archive = zipfile.ZipFile(io.BytesIO(stored.read()))
    assert archive.read("qrels.txt").decode() == EXPECTED["machine"]
    refused = organiser_client.post(
        url, {"formats": ["qrels"], "labels": "machine", "machine": "x"}
    )
    assert refused.status_code == 400


def test_a_large_pool_scores_each_source_in_its_own_job(
    organiser_client, pool, settings, django_capture_on_commit_callbacks
):
    from workbench.models import Job

    settings.WORKBENCH_SYNC_SCORING_CELLS = 1
    url = reverse("scoring:pool_leaderboard", args=[pool.pk])
    human = {"measure": "recip_rank"}
    machine = {"measure": "recip_rank", "labels": "machine", "machine": "llm"}
    with django_capture_on_commit_callbacks(execute=True):
        organiser_client.post(url + "?measure=recip_rank")
    # The human table's job is done; the machine's page has none yet (no table served).
    assert Job.objects.filter(kind=leaderboard_selectors.LEADERBOARD_JOB).count() == 1
    page = organiser_client.get(url, machine)
    assert "Score the leaderboard" in page.content.decode()
    assert organiser_client.get(url, {**machine, "download": "json"}).status_code == 409
    with django_capture_on_commit_callbacks(execute=True):
        organiser_client.post(url + "?measure=recip_rank&labels=machine&machine=llm")
    assert Job.objects.filter(kind=leaderboard_selectors.LEADERBOARD_JOB).count() == 2
    runs = json.loads(organiser_client.get(url, {**machine, "download": "json"}).content)["runs"]
    assert [r["run"] for r in runs] == ["run-b", "run-a"]
    runs = json.loads(organiser_client.get(url, {**human, "download": "json"}).content)["runs"]
    assert [r["run"] for r in runs] == ["run-a", "run-b"]


def test_the_release_api_takes_the_labels_and_the_machine(api, pool):
    url = f"/api/pools/{pool.pk}/releases/"
    made = api.post(
        url,
        {"measure": "recip_rank", "labels": "human-then-machine", "machine": "llm"},
        format="json",
    )
    assert made.status_code == 201, made.json()
    assert made.json()["label_policy"]["labels"] == "human-then-machine"
    assert made.json()["label_policy"]["machine"]["name"] == "llm"
    refused = api.post(
        url, {"measure": "map", "labels": "machine", "machine": "ghost"}, format="json"
    )
    assert refused.status_code == 400
    assert "ghost" in refused.json()["detail"]
