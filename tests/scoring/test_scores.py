"""Scoring the campaign's runs against a pool: service, page, downloads and API."""

from __future__ import annotations

import io
import json
import re
import zipfile
from types import SimpleNamespace

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pooling.models import Pool, Run
from scoring import export_selectors, selectors
from scoring.core.qrels import STRATIFIED_QRELS, read_qrels
from scoring.core.trec_eval import main as trec_eval
from tests.helpers import make_campaign, make_pool
from tests.scoring.conftest import change_a_label, judged_pool_of_runs

pytestmark = pytest.mark.django_db


def trec_eval_map(pool, tmp_path, tag: str) -> str:
    (tmp_path / "qrels").write_text(export_selectors.qrels_export(pool=pool, fmt="qrels")[0].text)
    (tmp_path / "run").write_bytes(Run.objects.get(tag=tag).original_file.read())
    out = io.StringIO()
    trec_eval(
        ["-c", "-M", "1000", "-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")],
        out,
        io.StringIO(),
    )
    return out.getvalue().split()[-1]


def test_scores_equal_trec_eval_on_the_exported_qrels(pool, tmp_path):
    scores = selectors.pool_scores(pool=pool)
    assert set(scores["run_id"]) == {f"demo-run{i}" for i in range(1, 9)}
    # In trec_eval's order of measures, then the inferred ones.
    assert list(dict.fromkeys(scores["measure"])) == [
        "map",
        "bpref",
        "recip_rank",
        "P_10",
        "ndcg_cut_10",
        "infAP",
        "infNDCG",
    ]
    value = scores[(scores.run_id == "demo-run3") & (scores.measure == "map")]["value"].item()
    assert f"{value:.4f}" == trec_eval_map(pool, tmp_path, "demo-run3")


def test_per_topic_scores(pool):
    scores = selectors.pool_scores(pool=pool, measures=["P.5"], per_topic=True)
    assert set(scores["query_id"]) == {"1", "2", "3", "4", "5", "all"}


def test_bad_measure_and_empty_pool_are_explained(pool, organiser):
    with pytest.raises(selectors.ScoringError, match="unknown measure 'nosuch'"):
        selectors.pool_scores(pool=pool, measures=["nosuch"])
    empty = make_pool(make_campaign("other"), {"301": ["d1"]})
    with pytest.raises(selectors.ScoringError, match="nothing is judged"):
        selectors.pool_scores(pool=empty)


def test_scores_page_ranks_runs_by_the_first_measure(organiser_client, pool):
    page = organiser_client.get(
        reverse("scoring:pool_scores", args=[pool.pk]), {"measures": "map P.10"}
    ).content.decode()
    assert '<th class="num">map</th>' in page
    assert "infAP" in page
    scores = selectors.pool_scores(pool=pool, measures=["map"])
    best = scores[scores.measure == "map"].sort_values("value", ascending=False).iloc[0]["run_id"]
    assert page.index(best) < min(
        page.index(f"demo-run{i}") for i in range(1, 9) if f"demo-run{i}" != best
    )
    download = organiser_client.get(
        reverse("scoring:pool_scores", args=[pool.pk]), {"measures": "map", "download": "tsv"}
    )
    assert download.content.decode().splitlines()[0] == "run_id\tmap\tinfAP\tinfNDCG"


def test_scores_page_shows_errors(organiser_client, pool):
    page = organiser_client.get(
        reverse("scoring:pool_scores", args=[pool.pk]), {"measures": "nosuch"}
    ).content.decode()
    assert "unknown measure" in page


def test_qrels_and_bundle_downloads(organiser_client, pool):
    response = organiser_client.get(reverse("scoring:qrels_download", args=[pool.pk, "qrels"]))
    assert (
        response.content.decode() == export_selectors.qrels_export(pool=pool, fmt="qrels")[0].text
    )
    inclusion = organiser_client.get(reverse("scoring:qrels_download", args=[pool.pk, "inclusion"]))
    assert inclusion.content.decode().startswith("topic\tdocno\tstratum\tinclusion_probability\n")
    assert (
        organiser_client.get(reverse("scoring:qrels_download", args=[pool.pk, "xml"])).status_code
        == 404
    )
    bundle = organiser_client.get(
        reverse("scoring:bundle_download", args=[pool.pk]), {"formats": ["qrels", "infap"]}
    )
    assert sorted(zipfile.ZipFile(io.BytesIO(bundle.content)).namelist()) == [
        "manifest.json",
        "provenance.tsv",
        "qrels.txt",
        "qrels_infap.txt",
    ]


# Run tags a spreadsheet would run as formulas; the last is a number, and stays one.
FORMULA_TAGS = ("=cmd|'/Ccalc'!A0", "+bm25", "@sum", "-1")


def test_the_scores_download_writes_formula_like_run_tags_as_text(organiser_client):
    pool = judged_pool_of_runs(*FORMULA_TAGS)
    download = organiser_client.get(
        reverse("scoring:pool_scores", args=[pool.pk]), {"measures": "map", "download": "tsv"}
    )
    rows = [line.split("\t") for line in download.content.decode().splitlines()]
    assert rows[0][:2] == ["run_id", "map"]
    assert sorted(row[0] for row in rows[1:]) == sorted(
        ["'=cmd|'/Ccalc'!A0", "'+bm25", "'@sum", "-1"]
    )
    # The scores are numbers as before: 1 for the runs ranking the relevant first.
    assert sorted(float(row[1]) for row in rows[1:]) == [0.75, 0.75, 0.75, 0.75]


def test_trec_files_keep_docnos_that_look_like_formulas_byte_exact(organiser_client):
    pool = judged_pool_of_runs("=run", docnos=("=d1", "-d2", "+e1", "@e2"))
    qrels = organiser_client.get(reverse("scoring:qrels_download", args=[pool.pk, "qrels"]))
    assert qrels.content == b"1 0 -d2 0\n1 0 =d1 1\n2 0 +e1 0\n2 0 @e2 1\n"
    assert Run.objects.get().original_file.read().split(b"\n")[0] == b"1 Q0 =d1 1 99.5 =run"


def test_an_export_that_cannot_be_made_is_409(organiser_client, pool):
    pool.campaign.topics.update(extra={})
    response = organiser_client.get(
        reverse("scoring:qrels_download", args=[pool.pk, "correctness"])
    )
    assert response.status_code == 409
    assert "accepted answer" in response.content.decode()


def test_qrels_page_links_every_format_and_the_pool_page_links_it(organiser_client, pool):
    pool_page = organiser_client.get(
        reverse("pooling:pool_detail", args=[pool.campaign.slug, pool.pk])
    ).content.decode()
    assert reverse("scoring:pool_qrels", args=[pool.pk]) in pool_page
    page = organiser_client.get(reverse("scoring:pool_qrels", args=[pool.pk])).content.decode()
    for fmt in (
        "qrels",
        "aspects",
        "correctness",
        "twoaspects",
        "threeaspects",
        "stratified",
        "infap",
    ):
        assert reverse("scoring:qrels_download", args=[pool.pk, fmt]) in page


def test_api_fetches_qrels_bundle_and_scores(organiser, pool):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=organiser).key}")
    qrels = api.get(f"/api/pools/{pool.pk}/qrels/aspects/")
    assert qrels.content.decode() == export_selectors.qrels_export(pool=pool, fmt="aspects")[0].text
    assert (
        api.get(f"/api/pools/{pool.pk}/bundle/", {"formats": "qrels"})["Content-Type"]
        == "application/zip"
    )
    scores = api.get(f"/api/pools/{pool.pk}/scores/", {"measure": ["map", "P.10"]}).json()
    assert {row["measure"] for row in scores} == {"map", "P_10", "infAP", "infNDCG"}
    assert all(row["query_id"] == "all" for row in scores)
    assert api.get(f"/api/pools/{pool.pk}/scores/", {"measure": "nosuch"}).status_code == 409


def test_assessors_cannot_fetch_qrels_or_scores(assessor, assessor_client, pool):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=assessor).key}")
    assert api.get(f"/api/pools/{pool.pk}/qrels/qrels/").status_code == 403
    assert api.get(f"/api/pools/{pool.pk}/scores/").status_code == 403
    assert assessor_client.get(reverse("scoring:pool_scores", args=[pool.pk])).status_code == 403
    assert assessor_client.get(reverse("scoring:pool_qrels", args=[pool.pk])).status_code == 403
    assert (
        assessor_client.get(reverse("scoring:qrels_download", args=[pool.pk, "qrels"])).status_code
        == 403
    )


def test_qrels_page_greys_out_the_formats_the_pool_cannot_produce(organiser_client, graded_pool):
    page = organiser_client.get(
        reverse("scoring:pool_qrels", args=[graded_pool.pk])
    ).content.decode()
    # The bundle takes every available format, as docs/organisers.md says (issue 23: not relevance).
    for fmt in ("qrels", "relevance", "stratified", "infap"):
        assert reverse("scoring:qrels_download", args=[graded_pool.pk, fmt]) in page
        assert f'value="{fmt}" checked>' in page
    for fmt in ("aspects", "correctness", "twoaspects", "threeaspects"):
        assert reverse("scoring:qrels_download", args=[graded_pool.pk, fmt]) not in page
        assert f'value="{fmt}" disabled>' in page
    assert "Not available: <b>correctness</b> needs the aspects effectiveness and credibility" in (
        page
    )


def test_bundle_download_defaults_to_what_the_pool_can_produce(organiser_client, graded_pool):
    url = reverse("scoring:bundle_download", args=[graded_pool.pk])
    bundle = organiser_client.get(url)
    assert bundle.status_code == 200
    assert "qrels_infap.txt" in zipfile.ZipFile(io.BytesIO(bundle.content)).namelist()
    refused = organiser_client.get(url, {"formats": ["qrels", "aspects"]})
    assert refused.status_code == 409
    assert "aspects needs the aspects effectiveness and credibility" in refused.content.decode()


def test_api_bundle_defaults_to_what_the_pool_can_produce(organiser, graded_pool):
    api = APIClient()
    api.force_authenticate(organiser)
    url = f"/api/pools/{graded_pool.pk}/bundle/"
    assert api.get(url).status_code == 200
    refused = api.get(url, {"formats": "correctness"})
    assert refused.status_code == 409
    assert "correctness needs the aspects" in refused.json()["detail"]


def test_api_lists_the_formats_and_why_some_are_unavailable(organiser, graded_pool):
    api = APIClient()
    api.force_authenticate(organiser)
    formats = {f["name"]: f for f in api.get(f"/api/pools/{graded_pool.pk}/qrels/").json()}
    assert formats["qrels"]["available"]
    assert formats["qrels"]["in_default_bundle"]
    assert not formats["aspects"]["available"]
    assert "the schema has neither" in formats["aspects"]["unavailable"]


# --------------------------------------------------------------------------
# A qrels-only campaign: a published qrels file loaded, exported and scored

# Eight topics' set_P = k / n: exactly 1.31 in all, 1.3099999999999998 as C adds the doubles.
HALF_WAY_SET_P = [(3, 25), (3, 25), (1, 10), (0, 10), (16, 50), (2, 10), (12, 50), (21, 100)]
SCORED = ["set_P", "map", "P.10", "ndcg_cut.10", "bpref", "recip_rank"]


@pytest.fixture
def published(db, tmp_path):
    """A graded 0-3 campaign with one run, and a published qrels file (with a comment,
    unjudged -1 lines and a relevant document no run found) imported with --make-pool."""
    from tests.helpers import make_run
    from workbench.core.label_schema import SCHEMA_PRESETS

    topics = [str(t) for t in range(1, len(HALF_WAY_SET_P) + 1)]
    campaign = make_campaign(
        "dl", topics=topics, label_schema=SCHEMA_PRESETS["graded-0-3"].schema()
    )
    lines, ranked = ["# NIST judgments\n"], {}
    for topic, (relevant, retrieved) in zip(topics, HALF_WAY_SET_P, strict=True):
        ranked[topic] = [f"d{topic}-{i}" for i in range(retrieved)]
        lines += [
            f"{topic} 0 d{topic}-{i} {1 + i % 3 if i < relevant else 0}\n" for i in range(retrieved)
        ]
        lines += [f"{topic} 0 missed{topic} 2\n", f"{topic} 0 unjudged{topic} -1\n"]
    qrels = tmp_path / "published.qrels"
    qrels.write_text("".join(reversed(lines[1:])) + lines[0])  # not in any order
    run = make_run(campaign, "run1", ranked)
    (tmp_path / "run1").write_bytes(Run.objects.get(pk=run.pk).original_file.read())
    call_command(
        "import_qrels",
        "--campaign",
        "dl",
        "--assessor",
        "nist",
        "--make-pool",
        "published",
        str(qrels),
        stdout=io.StringIO(),
    )
    return SimpleNamespace(
        pool=Pool.objects.get(campaign=campaign, name="published"),
        qrels=qrels,
        run=tmp_path / "run1",
    )


def _trec_eval_summary(qrels, run, measures: list[str]) -> dict[str, str]:
    out = io.StringIO()
    arguments = ["-c", "-M", "1000", *(f"-m{m}" for m in measures), str(qrels), str(run)]
    assert trec_eval(arguments, out, io.StringIO()) == 0
    return {line.split()[0]: line.split()[2] for line in out.getvalue().splitlines()}


def test_a_published_qrels_file_is_exported_in_every_available_layout(published):
    judged = sorted(
        (line.split()[0], line.split()[2], int(line.split()[3]))
        for line in published.qrels.read_text().splitlines()
        if not line.startswith("#") and int(line.split()[3]) >= 0
    )
    choices = export_selectors.qrels_format_choices(pool=published.pool)
    available = [c.name for c in choices if c.available]
    assert available == ["qrels", "relevance", "stratified", "infap"]
    texts = {
        fmt: export_selectors.qrels_export(pool=published.pool, fmt=fmt)[0].text
        for fmt in available
    }
    for fmt in ("qrels", "relevance", "infap"):  # every entry judged: nothing is -1
        exported = read_qrels(texts[fmt].encode(), name=fmt)
        assert sorted(exported.itertuples(index=False, name=None)) == judged
    stratified = read_qrels(texts["stratified"].encode(), name="s", layout=STRATIFIED_QRELS)
    assert set(stratified["stratum"]) == {1}
    assert (
        sorted(stratified[["query_id", "doc_id", "relevance"]].itertuples(index=False, name=None))
        == judged
    )
    inclusion = export_selectors.qrels_export(pool=published.pool, fmt="stratified")[1].text
    assert {line.split("\t")[3] for line in inclusion.splitlines()[1:]} == {"1.0"}
    bundle = zipfile.ZipFile(io.BytesIO(export_selectors.qrels_bundle(pool=published.pool)))
    manifest = json.loads(bundle.read("manifest.json"))
    assert manifest["pool"]["spec"]["source"].startswith("qrels file published.qrels")
    assert manifest["counts"]["total"] == {
        "pooled": len(judged),
        "sampled": len(judged),
        "judged": len(judged),
        "unjudged": 0,
    }


def test_runs_score_against_a_published_qrels_as_trec_eval_scores_the_file(
    published, organiser, organiser_client
):
    expected = _trec_eval_summary(published.qrels, published.run, SCORED)
    scores = selectors.pool_scores(pool=published.pool, measures=SCORED)
    ours = {m: f"{v:6.4f}" for m, v in zip(scores["measure"], scores["value"], strict=True)}
    assert ours == {m: v for m, v in expected.items() if m in ours}
    assert set(ours) == {"set_P", "map", "P_10", "ndcg_cut_10", "bpref", "recip_rank"}
    assert expected["set_P"] == "0.1637"  # C's left-to-right sum; pairwise gives 0.1638
    page = organiser_client.get(
        reverse("scoring:pool_scores", args=[published.pool.pk]), {"measures": "set_P"}
    ).content.decode()
    assert f'<td class="num">{expected["set_P"]}</td>' in page
    api = APIClient()
    api.force_authenticate(organiser)
    rows = api.get(f"/api/pools/{published.pool.pk}/scores/", {"measure": "set_P"}).json()
    assert [f"{row['value']:6.4f}" for row in rows] == [expected["set_P"]]


def test_scores_page_ranks_by_the_first_measure_asked_with_rank_numbers(organiser_client, pool):
    page = organiser_client.get(
        reverse("scoring:pool_scores", args=[pool.pk]), {"measures": "P.10 map"}
    ).content.decode()
    header = page[page.index("<thead>") : page.index("</thead>")]
    assert header.index(">P_10<") < header.index(">map<")  # asked first, shown first
    scores = selectors.pool_scores(pool=pool, measures=["P.10"])
    p10 = scores[scores.measure == "P_10"].sort_values(
        ["value", "run_id"], ascending=[False, True], kind="stable"
    )
    shown = re.findall(r'<tr><td class="num">(\d+)</td><td class="mono">([^<]+)</td>', page)
    assert [run for _, run in shown] == p10["run_id"].tolist()
    expected_ranks = p10["value"].rank(method="min", ascending=False).astype(int).tolist()
    assert [int(rank) for rank, _ in shown] == expected_ranks


def test_scores_page_says_which_topics_are_averaged_and_which_left_out(organiser_client, published):
    from pooling import services as pooling
    from tests.helpers import make_run

    campaign = published.pool.campaign
    pooling.topics_import(campaign=campaign, data=b"9\tNine\tNine?\n", name="more.tsv")
    make_run(campaign, "partial", {"1": ["d1-0"], "2": ["d2-0"]})
    page = organiser_client.get(
        reverse("scoring:pool_scores", args=[published.pool.pk]), {"measures": "map"}
    ).content.decode()
    assert "over the 8 topics with judgments (1, 2, 3, 4, 5, 6, 7, 8)" in page
    assert "Left out, nothing judged yet: topic 9." in page
    assert "3, 4, 5, 6, 7, 8 (scored 0)" in page  # what the partial run lacks


def test_nothing_judged_is_a_neutral_notice_not_an_error(organiser_client):
    empty = make_pool(make_campaign("other"), {"301": ["d1"]})
    page = organiser_client.get(reverse("scoring:pool_scores", args=[empty.pk])).content.decode()
    assert '<p class="notice" role="status">Nothing is judged in this pool yet.' in page
    assert 'class="errors"' not in page


def test_scores_page_rounds_values_as_trec_eval_prints_them(organiser_client, pool, monkeypatch):
    # 0.99945 is stored as 0.99944999...: C's printf gives 0.9994, Django's floatformat 0.9995.
    report = selectors.PoolScores(
        scores=pd.DataFrame(
            {"run_id": ["r"], "query_id": ["all"], "measure": ["map"], "value": [0.99945]}
        ),
        judged_topics=["1"],
        left_out=[],
        missing={},
    )
    monkeypatch.setattr(selectors, "pool_scores_report", lambda **kwargs: report)
    page = organiser_client.get(reverse("scoring:pool_scores", args=[pool.pk])).content.decode()
    assert f'<td class="num">{0.99945:6.4f}</td>' in page
    assert '<td class="num">0.9994</td>' in page


def unpacked(bundle: bytes) -> dict[str, object]:
    """A bundle's files, the manifest without its export time (which alone may differ)."""
    archive = zipfile.ZipFile(io.BytesIO(bundle))
    files: dict[str, object] = {name: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(files.pop("manifest.json"))
    manifest.pop("exported_at")
    return files | {"manifest.json": manifest}


def test_the_page_exports_the_bundle_as_a_job_with_a_download(
    organiser_client, client, assessor, pool, django_capture_on_commit_callbacks
):
    from workbench.models import Job

    page = organiser_client.get(reverse("scoring:pool_qrels", args=[pool.pk])).content.decode()
    assert reverse("scoring:bundle_job", args=[pool.pk]) in page
    with django_capture_on_commit_callbacks(execute=True):
        response = organiser_client.post(
            reverse("scoring:bundle_job", args=[pool.pk]), {"formats": ["qrels", "infap"]}
        )
    job = Job.objects.get()
    assert response.url == reverse("job_detail", args=[job.pk])
    assert job.state == Job.DONE
    detail = organiser_client.get(response.url).content.decode()
    assert reverse("job_file", args=[job.pk]) in detail
    download = organiser_client.get(reverse("job_file", args=[job.pk]))
    data = b"".join(download.streaming_content)
    direct = export_selectors.qrels_bundle(pool=pool, formats=["qrels", "infap"])
    assert unpacked(data) == unpacked(direct)  # the synchronous export's files
    assert download["Content-Disposition"].endswith(f'filename="{job.result["name"]}"')
    # Assessors see neither the job nor its file.
    client.force_login(assessor)
    assert client.get(reverse("job_file", args=[job.pk])).status_code == 404


def test_a_bundle_job_with_a_bad_format_is_refused_and_queues_nothing(organiser_client, pool):
    from workbench.models import Job

    response = organiser_client.post(
        reverse("scoring:bundle_job", args=[pool.pk]), {"formats": ["qrels", "xml"]}
    )
    assert response.status_code == 400
    assert "Select a valid choice. xml is not one of the available choices." in (
        response.content.decode()
    )
    assert not Job.objects.exists()


def test_a_bundle_job_the_pool_cannot_make_fails_with_the_reason(
    organiser_client, pool, django_capture_on_commit_callbacks
):
    from workbench.models import Job

    pool.campaign.topics.update(extra={})  # no accepted answers: no correctness qrels
    with django_capture_on_commit_callbacks(execute=True):
        organiser_client.post(
            reverse("scoring:bundle_job", args=[pool.pk]), {"formats": ["correctness"]}
        )
    job = Job.objects.get()
    assert job.state == Job.FAILED
    assert "correctness" in job.error
    assert job.result is None


def test_a_large_scoring_runs_as_a_job_and_the_page_shows_its_table(
    organiser_client, pool, settings, django_capture_on_commit_callbacks
):
    from workbench.models import Job

    settings.WORKBENCH_SYNC_SCORING_CELLS = 1
    url = reverse("scoring:pool_scores", args=[pool.pk])
    query = {"measures": "map P.10"}
    small = organiser_client.get(url, query).content.decode()
    assert "it runs in the background" in small
    assert not Job.objects.exists()  # nothing is started by a GET
    with django_capture_on_commit_callbacks(execute=True):
        started = organiser_client.post(f"{url}?measures=map+P.10")
    assert started.status_code == 302
    job = Job.objects.get()
    assert job.state == Job.DONE
    assert (job.done, job.total) == (9, 9)  # progress: each of 8 runs read, then scored
    page = organiser_client.get(url, query).content.decode()
    assert "Scored in the background by" in page
    settings.WORKBENCH_SYNC_SCORING_CELLS = 10**9
    direct = organiser_client.get(url, query).content.decode()
    table = re.compile(r"<tbody>.*?</tbody>", re.S)
    assert table.findall(page) == table.findall(direct)  # the same table as scored in place
    assert "demo-run" in page
    # A new label is a new state: the stored scores are not served for it.
    settings.WORKBENCH_SYNC_SCORING_CELLS = 1
    change_a_label(pool)
    stale = organiser_client.get(url, query).content.decode()
    assert "it runs in the background" in stale
    assert "data-superseded" in stale  # says the stored table is out of date
    assert reverse("job_detail", args=[job.pk]) in stale


def test_a_failed_scoring_job_says_why_and_offers_another(
    organiser_client, pool, settings, django_capture_on_commit_callbacks
):
    from workbench.models import Job

    settings.WORKBENCH_SYNC_SCORING_CELLS = 1
    measures = ["map"]
    params = {
        "pool": pool.pk,
        "measures": measures,
        "version": selectors.scores_version(pool, measures),
    }
    Job.objects.create(
        kind="scoring.jobs.pool_scores",
        title="t",
        params=params,
        state=Job.FAILED,
        error="it broke",
    )
    url = reverse("scoring:pool_scores", args=[pool.pk]) + "?measures=map"
    page = organiser_client.get(url).content.decode()
    assert "The last attempt failed: it broke" in page
    assert "Score them" in page  # not polling a job that will never finish
    with django_capture_on_commit_callbacks(execute=True):
        organiser_client.post(url)
    assert Job.objects.filter(state=Job.DONE).count() == 1


def test_a_bad_measure_is_said_before_any_job(organiser_client, pool, settings):
    from workbench.models import Job

    settings.WORKBENCH_SYNC_SCORING_CELLS = 1
    url = reverse("scoring:pool_scores", args=[pool.pk])
    response = organiser_client.post(f"{url}?measures=mapp")
    assert "unknown measure" in response.content.decode()
    assert not Job.objects.exists()


def test_the_api_scores_a_large_pool_in_a_job_as_the_page_does(
    organiser, pool, settings, django_capture_on_commit_callbacks
):
    from workbench.models import Job

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=organiser).key}")
    url = f"/api/pools/{pool.pk}/scores/"
    query = {"measure": ["map", "P.10"], "per_topic": "true"}
    direct = api.get(url, query).json()  # small enough: scored in the request
    settings.WORKBENCH_SYNC_SCORING_CELLS = 1
    waiting = api.get(url, query)
    assert waiting.status_code == 404
    assert "POST to make one" in waiting.json()["detail"]
    assert not Job.objects.exists()  # a GET starts nothing
    assert api.post(f"{url}?measure=nosuch").status_code == 409  # said before any job
    assert not Job.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(f"{url}?measure=map&measure=P.10&per_topic=true")
    assert started.status_code == 202
    job = Job.objects.get()
    assert started.json()["job"] == job.pk
    assert job.params["per_topic"] is True
    stored = api.get(url, query)
    assert stored.status_code == 200
    assert stored.json() == direct  # per topic too, the same rows
    assert api.post(f"{url}?measure=map&measure=P.10&per_topic=true").json()["job"] == job.pk
    # The means only are another job's work: the page's, found by the same params.
    assert api.get(url, {"measure": ["map", "P.10"]}).status_code == 404
