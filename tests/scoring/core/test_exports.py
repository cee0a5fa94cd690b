"""qrels exports of a judged demo pool, read back by the scorer's readers and commands."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest
from django.core.management import CommandError, call_command

from demo import content as demo_content
from judging import services as judging
from judging.models import Adjudication, Judgment
from pooling.models import Pool, Run
from scoring import export_selectors, selectors
from scoring.core import exports
from scoring.core.exports import NOT_SAMPLED, ExportError
from scoring.core.qrels import (
    STRATIFIED_QRELS,
    THREE_ASPECT_QRELS,
    TREC_QRELS,
    TWO_ASPECT_QRELS,
    read_qrels,
)
from scoring.core.sample_eval import main as sample_eval
from scoring.core.trec_eval import main as trec_eval

pytestmark = pytest.mark.django_db


def export(pool: Pool, fmt: str, **kwargs) -> str:
    return export_selectors.qrels_export(pool=pool, fmt=fmt, **kwargs)[0].text


def run_files(tmp_path) -> list[str]:
    paths = []
    for run in Run.objects.order_by("tag"):
        path = tmp_path / f"{run.tag}.txt"
        path.write_bytes(run.original_file.read())
        paths.append(str(path))
    return paths


def score(tool, *argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert tool(list(argv), out, err) == 0, err.getvalue()
    return out.getvalue()


def test_qrels_round_trip_through_trec_eval(pool, tmp_path):
    text = export(pool, "qrels")
    (tmp_path / "qrels.txt").write_text(text)
    qrels = read_qrels(text.encode(), name="qrels.txt", layout=TREC_QRELS)
    final = selectors.pool_state(pool).labels
    assert len(qrels) == len(final) == pool.entries.filter(sampled=True).count()
    assert export(pool, "relevance") == text
    output = score(
        trec_eval, "-m", "map", "-m", "ndcg", str(tmp_path / "qrels.txt"), *run_files(tmp_path)
    )
    assert output.count("map") == 8


def test_aspect_formats_round_trip_through_the_multi_aspect_measures(pool, tmp_path):
    aspects = export(pool, "aspects")
    assert export(pool, "threeaspects") == aspects
    frame = read_qrels(aspects.encode(), name="aspects", layout=THREE_ASPECT_QRELS)
    assert ((frame["relevance"] == 0) == (frame["aspect_2"] == -1)).all()
    assert ((frame["relevance"] == 0) == (frame["aspect_3"] == -1)).all()
    (tmp_path / "aspects.txt").write_text(aspects)
    output = score(
        trec_eval,
        "-R",
        "qrels_threeaspects",
        "-m",
        "cam_three_ndcg",
        "-m",
        "nwcs_three",
        str(tmp_path / "aspects.txt"),
        *run_files(tmp_path),
    )
    assert output.count("cam_three_ndcg") == 8
    two = export(pool, "twoaspects")
    read_qrels(two.encode(), name="two", layout=TWO_ASPECT_QRELS)
    (tmp_path / "two.txt").write_text(two)
    assert (
        score(
            trec_eval,
            "-R",
            "qrels_twoaspects",
            "-m",
            "cam",
            str(tmp_path / "two.txt"),
            *run_files(tmp_path),
        ).count("cam")
        == 8
    )


def test_correctness_maps_effectiveness_against_each_topics_answer(pool):
    answers = {t.topic_id: t.answer for t in demo_content.TOPICS}
    correct_for = {1: 3, 0: 2, -1: 1}
    raw = {}
    for line in export(pool, "aspects").splitlines():
        topic, _, docno, rel, eff, cred = line.split()
        raw[topic, docno] = (rel, eff, cred)
    checked = 0
    for line in export(pool, "correctness").splitlines():
        topic, _, docno, rel, correct, cred = line.split()
        raw_rel, eff, raw_cred = raw[topic, docno]
        assert (rel, cred) == (raw_rel, raw_cred)
        if int(eff) < 0:
            assert correct == eff
        else:
            assert int(correct) == int(int(eff) == correct_for[answers[topic]])
            checked += 1
    assert checked > 10


def test_correctness_without_answers_is_refused(pool):
    pool.campaign.topics.filter(topic_id="2").update(extra={})
    with pytest.raises(ExportError, match="missing for topic 2"):
        export(pool, "correctness")


def test_stratified_and_infap_list_every_pooled_document(pool, tmp_path):
    stratified = export(pool, "stratified")
    frame = read_qrels(stratified.encode(), name="stratified", layout=STRATIFIED_QRELS)
    assert len(frame) == pool.entries.count()
    unsampled = set(pool.entries.filter(sampled=False).values_list("docno", flat=True))
    assert set(frame.loc[frame["relevance"] == NOT_SAMPLED, "doc_id"]) == unsampled
    inclusion = export_selectors.qrels_export(pool=pool, fmt="stratified")[1]
    assert inclusion.name == "inclusion.tsv"
    assert len(inclusion.text.splitlines()) == pool.entries.count() + 1
    (tmp_path / "stratified.txt").write_text(stratified)
    output = score(sample_eval, str(tmp_path / "stratified.txt"), *run_files(tmp_path))
    assert output.count("infAP") == 8
    infap = export(pool, "infap")
    assert len(infap.splitlines()) == pool.entries.count()
    (tmp_path / "infap.txt").write_text(infap)
    assert (
        score(trec_eval, "-m", "infAP", str(tmp_path / "infap.txt"), *run_files(tmp_path)).count(
            "infAP"
        )
        == 8
    )


def test_sampled_but_unjudged_documents_export_as_not_sampled(pool):
    entry = pool.entries.filter(sampled=True).first()
    Judgment.objects.filter(topic=entry.topic, docno=entry.docno).delete()
    line = next(
        line
        for line in export(pool, "infap").splitlines()
        if line.split()[2] == entry.docno and line.split()[0] == entry.topic.topic_id
    )
    assert line.split()[3] == str(NOT_SAMPLED)
    bundle = zipfile.ZipFile(
        io.BytesIO(export_selectors.qrels_bundle(pool=pool, formats=["qrels"]))
    )
    counts = json.loads(bundle.read("manifest.json"))["counts"]
    assert counts["total"]["unjudged"] == 1
    assert counts["topics"][entry.topic.topic_id]["unjudged"] == 1


def test_adjudication_changes_the_exported_label_and_its_provenance(pool, organiser):
    disputed = selectors.pool_state(pool).labels
    item = disputed[disputed["n_judgments"] > 1].iloc[0]
    topic = pool.campaign.topics.get(topic_id=item["query_id"])
    new_relevance = 0 if item["relevance"] else 2
    aspects = {} if new_relevance == 0 else {"effectiveness": 3, "credibility": 1}
    judging.adjudication_record(
        pool=pool,
        topic=topic,
        docno=item["doc_id"],
        relevance=new_relevance,
        aspects=aspects,
        reason="both\tread it\nwrong",
        decided_by=organiser,
    )
    qrels_line = f"{item['query_id']} 0 {item['doc_id']} {new_relevance}"
    assert qrels_line in export(pool, "qrels").splitlines()
    bundle = zipfile.ZipFile(
        io.BytesIO(export_selectors.qrels_bundle(pool=pool, formats=["qrels"]))
    )
    provenance = bundle.read("provenance.tsv").decode().splitlines()
    header = provenance[0].split("\t")
    assert header[-3:] == ["decided_by", "decided_at", "reason"]
    row = dict(
        zip(
            header,
            next(
                r.split("\t")
                for r in provenance
                if r.split("\t")[:2] == [item["query_id"], item["doc_id"]]
            ),
            strict=True,
        )
    )
    adjudication = Adjudication.objects.get()
    assert (row["relevance"], row["provenance"]) == (str(new_relevance), "adjudicated")
    assert row["decided_by"] == organiser.username
    assert row["decided_at"] == adjudication.decided_at.isoformat(timespec="seconds")
    assert row["reason"] == "both read it wrong"
    judged = next(r.split("\t") for r in provenance[1:] if "\tadjudicated\t" not in r)
    assert judged[-2:] == ["", ""]


def test_bundle_manifest_and_determinism(pool):
    formats = ["qrels", "aspects", "correctness", "stratified", "infap", "twoaspects"]
    first = zipfile.ZipFile(io.BytesIO(export_selectors.qrels_bundle(pool=pool, formats=formats)))
    second = zipfile.ZipFile(io.BytesIO(export_selectors.qrels_bundle(pool=pool, formats=formats)))
    names = sorted(first.namelist())
    assert names == sorted(
        [
            "manifest.json",
            "provenance.tsv",
            "qrels.txt",
            "qrels_aspects.txt",
            "qrels_correctness.txt",
            "qrels_stratified.txt",
            "inclusion.tsv",
            "qrels_infap.txt",
            "qrels_twoaspects.txt",
        ]
    )
    for name in names:
        if name != "manifest.json":
            assert first.read(name) == second.read(name)
    manifest = json.loads(first.read("manifest.json"))
    again = json.loads(second.read("manifest.json"))
    manifest.pop("exported_at")
    again.pop("exported_at")
    assert manifest == again
    for name, info in manifest["files"].items():
        assert hashlib.sha256(first.read(name)).hexdigest() == info["sha256"]
    assert manifest["pool"]["spec"]["seed"] == 2019
    assert manifest["tie_rule"].startswith("score descending, then docno descending")
    assert manifest["label_policy"] == {"steps": ["adjudicated", "primary", "majority", "maximum"]}
    assert [r["tag"] for r in manifest["runs"]] == [f"demo-run{i}" for i in range(1, 9)]
    assert all(len(r["sha256"]) == 64 for r in manifest["runs"])
    assert manifest["counts"]["total"]["unjudged"] == 0
    assert manifest["agreement"]["pairs"]
    assert manifest["twoaspects_aspect"] == "credibility"
    assert "answer 1 (helpful)" in manifest["correctness_mapping"]


def test_export_command_writes_qrels_and_inclusion(pool, tmp_path):
    call_command(
        "export_qrels",
        "--pool",
        str(pool.pk),
        "--format",
        "stratified",
        "--out",
        str(tmp_path / "s.txt"),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    assert (tmp_path / "s.txt").read_text() == export(pool, "stratified")
    assert (tmp_path / "inclusion.tsv").exists()
    call_command(
        "export_qrels",
        "--pool",
        str(pool.pk),
        "--bundle",
        str(tmp_path / "b.zip"),
        "--formats",
        "qrels,infap",
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    assert "qrels_infap.txt" in zipfile.ZipFile(tmp_path / "b.zip").namelist()


def test_unknown_bundle_format_is_an_error(pool):
    with pytest.raises(ExportError, match="choose formats among"):
        export_selectors.qrels_bundle(pool=pool, formats=["qrels", "nope"])


def test_the_default_bundle_holds_the_formats_a_graded_campaign_can_produce(graded_pool):
    bundle = zipfile.ZipFile(io.BytesIO(export_selectors.qrels_bundle(pool=graded_pool)))
    assert sorted(bundle.namelist()) == [  # every format docs/organisers.md lists for TREC DL
        "inclusion.tsv",
        "manifest.json",
        "provenance.tsv",
        "qrels.txt",
        "qrels_infap.txt",
        "qrels_relevance.txt",
        "qrels_stratified.txt",
    ]
    assert bundle.read("qrels.txt").decode().splitlines()[0] == "1 0 d1 3"
    with pytest.raises(ExportError, match="correctness needs the aspects effectiveness"):
        export_selectors.qrels_bundle(pool=graded_pool, formats=["qrels", "correctness"])


def test_format_choices_say_why_a_format_is_unavailable(pool, graded_pool):
    choices = {c.name: c for c in export_selectors.qrels_format_choices(pool=graded_pool)}
    assert [c.name for c in choices.values()] == list(exports.FORMATS)
    assert not choices["aspects"].available
    assert "the schema has neither" in choices["aspects"].unavailable
    assert "the schema has 0" in choices["threeaspects"].unavailable
    assert [c.name for c in choices.values() if c.in_default_bundle] == [
        "qrels",
        "relevance",
        "stratified",
        "infap",
    ]
    pool.campaign.topics.filter(topic_id="2").update(extra={})
    demo = {c.name: c for c in export_selectors.qrels_format_choices(pool=pool)}
    assert "missing for topic 2" in demo["correctness"].unavailable
    assert [name for name, c in demo.items() if not c.available] == ["correctness"]


def test_export_command_bundles_the_available_formats_and_refuses_others(graded_pool, tmp_path):
    bundle = tmp_path / "b.zip"
    export = ["export_qrels", "--pool", str(graded_pool.pk), "--bundle", str(bundle)]
    call_command(*export, stdout=io.StringIO(), stderr=io.StringIO())
    assert "qrels_stratified.txt" in zipfile.ZipFile(bundle).namelist()
    bundle.unlink()
    with pytest.raises(CommandError, match="correctness needs the aspects") as refused:
        call_command(*export, "--formats", "qrels,correctness", stderr=io.StringIO())
    assert refused.value.returncode == 2
    assert not bundle.exists()
