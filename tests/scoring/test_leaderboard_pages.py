"""The leaderboard of a pool: page, downloads, pictures and API, equal to
`manage.py leaderboard` on the exported qrels and the runs' files."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pooling.models import Run
from scoring import export_selectors, leaderboard_selectors, selectors
from scoring.core.analysis.leaderboard import Options as LeaderboardOptions
from tests.helpers import make_campaign, make_pool
from tests.scoring.conftest import judged_pool_of_runs

pytestmark = pytest.mark.django_db


def leaderboard_url(pool, **params) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return reverse("scoring:pool_leaderboard", args=[pool.pk]) + (f"?{query}" if query else "")


def command_json(pool, tmp_path, *arguments: str) -> dict:
    """`manage.py leaderboard` on what an organiser would download: the qrels
    export and the runs as uploaded, scored as the page scores (-c)."""
    qrels = tmp_path / "qrels"
    qrels.write_text(export_selectors.qrels_export(pool=pool, fmt="qrels")[0].text)
    runs = []
    for run in Run.objects.order_by("tag"):
        path = tmp_path / run.tag
        path.write_bytes(run.original_file.read())
        runs.append(str(path))
    out = io.StringIO()
    call_command(
        "leaderboard", *runs, "--qrels", str(qrels), "-c", "--format", "json", *arguments,
        stdout=out,
    )  # fmt: skip
    return json.loads(out.getvalue())


def test_the_page_ranks_the_runs_as_the_command_does(organiser_client, pool, tmp_path):
    page = organiser_client.get(leaderboard_url(pool, measure="P.10", test="wilcoxon"))
    assert page.status_code == 200
    html = page.content.decode()
    expected = command_json(pool, tmp_path, "-m", "P.10", "--test", "wilcoxon")
    board = page.context["board"]
    assert [row.run for row in board.runs] == [row["run"] for row in expected["runs"]]
    assert [row.mean for row in board.runs] == pytest.approx(
        [row["mean"] for row in expected["runs"]], abs=1e-12
    )
    [table] = page.context["pair_tables"]
    assert [p.p_adjusted for p in table["pairs"]] == pytest.approx(
        [p["p_adjusted"] for p in expected["pairs"]], abs=1e-12
    )
    first = expected["runs"][0]
    assert f'data-run="{first["run"]}"' in html
    assert f"{first['mean']:.4f}" in html
    assert "Intervals at 95%:" in html
    # Every picture is on the page, served by our own view.
    for kind in ("box", "median", "matrix", "pr", "pr-topic"):
        assert f'data-plot="{kind}"' in html
        assert reverse("scoring:leaderboard_plot", args=[pool.pk, kind]) in html


def test_significance_marks_name_the_runs_beaten(organiser_client, pool):
    page = organiser_client.get(leaderboard_url(pool, measure="map", test="t"))
    rows = page.context["rows"]
    board = page.context["board"]
    keys = {row["row"].run: row["key"] for row in rows}
    for row in rows:
        beaten = board.beaten("t")[row["row"].run]
        assert row["beats"] == "".join(keys[run] for run in beaten)


def pair_tables(html: str) -> dict[str, str]:
    """Each test's table of pairs on the page, by test."""
    return dict(re.findall(r'<details data-test="(\w+)">(.*?)</details>', html, re.S))


def test_all_tests_show_every_tests_pairs_as_the_downloads_do(organiser_client, pool):
    html = organiser_client.get(leaderboard_url(pool, test="all")).content.decode()
    tables = pair_tables(html)
    assert list(tables) == ["t", "wilcoxon", "sign", "randomization", "tukey"]
    n = len(Run.objects.filter(campaign=pool.campaign))
    for test, label in [("t", "paired t-test"), ("tukey", "Tukey&#x27;s HSD")]:
        assert f"<summary>Every pair ({n * (n - 1) // 2}), {label}</summary>" in tables[test]
    assert "the first of the 5 tests; every test's pairs are below" in html
    tsv = organiser_client.get(leaderboard_url(pool, test="all", download="tsv")).content
    for test in tables:
        assert f"\t{test}\t".encode() in tsv


def test_two_identical_runs_are_said_identical_not_nan(organiser_client, pool):
    from pooling import run_services

    first = Run.objects.filter(campaign=pool.campaign).order_by("tag").first()
    twin = run_services.RunUpload(
        "twin.txt", first.original_file.read().replace(first.tag.encode(), b"twin")
    )
    run_services.runs_import(campaign=pool.campaign, uploads=[twin])
    html = organiser_client.get(leaderboard_url(pool, test="all")).content.decode()
    for test, table in pair_tables(html).items():
        rows = [row for row in table.split("<tr>") if "twin" in row and f">{first.tag}<" in row]
        assert len(rows) == 1, test
        assert "identical: the same value on every topic" in rows[0], test
        assert "nan" not in rows[0], test
    text = organiser_client.get(leaderboard_url(pool, download="text")).content.decode()
    [line] = [line for line in text.splitlines() if "twin" in line and first.tag in line]
    assert line.split()[2:5] == ["identical"] * 3


def test_downloads_are_the_command_formats(organiser_client, pool, tmp_path):
    as_json = organiser_client.get(leaderboard_url(pool, download="json"))
    assert as_json["Content-Disposition"].endswith('leaderboard.json"')
    data = json.loads(as_json.content)
    expected = command_json(pool, tmp_path)
    assert [r["run"] for r in data["runs"]] == [r["run"] for r in expected["runs"]]
    latex = organiser_client.get(leaderboard_url(pool, download="latex")).content.decode()
    assert "\\toprule" in latex
    assert "\\bottomrule" in latex
    assert organiser_client.get(leaderboard_url(pool, download="pdf")).status_code == 400


@pytest.mark.parametrize("kind", ["box", "median", "matrix", "pr", "pr-topic"])
def test_each_picture_comes_as_svg_png_and_csv(organiser_client, pool, kind):
    url = reverse("scoring:leaderboard_plot", args=[pool.pk, kind]) + "?measure=map"
    svg = organiser_client.get(url)
    assert svg["Content-Type"] == "image/svg+xml"
    text = svg.content.decode()
    assert "<title>" in text
    # Nothing to fetch: no linked image, font or style (XML namespaces are names).
    assert not re.search(r'href="https?:|url\(https?:|@import', text)
    png = organiser_client.get(url + "&format=png")
    assert png["Content-Type"] == "image/png"
    assert png.content.startswith(b"\x89PNG")
    table = organiser_client.get(url + "&format=csv").content.decode().splitlines()
    assert len(table) > 1
    header = table[0].split(",")
    if kind == "pr":
        assert header == ["run", "recall", "precision"]
        # 11 recall levels for each of the top five runs.
        assert len(table) == 1 + 11 * 5


def test_the_median_picture_is_of_the_chosen_run(organiser_client, pool):
    board = leaderboard_selectors.pool_leaderboard(
        pool=pool, measure="map", options=LeaderboardOptions()
    )[0]
    run = board.runs[-1].run
    url = reverse("scoring:leaderboard_plot", args=[pool.pk, "median"])
    table = organiser_client.get(url + f"?measure=map&run={run}&format=csv").content.decode()
    assert table.splitlines()[0] == f"topic,{run},median,difference"
    assert organiser_client.get(url + "?run=nosuch").status_code == 400


def test_the_precision_recall_picture_draws_the_chosen_runs(organiser_client, pool):
    url = leaderboard_url(pool, measure="map") + "&runs=demo-run8&runs=demo-run2&runs=nosuch"
    page = organiser_client.get(url)
    assert page.context["pr_runs"] == ["demo-run8", "demo-run2"]
    [pr] = [f for f in page.context["figures"] if f["kind"] == "pr"]
    table = organiser_client.get(pr["url"] + "&format=csv").content.decode().splitlines()
    assert {line.split(",")[0] for line in table[1:]} == {"demo-run8", "demo-run2"}


def test_the_every_level_curve_is_the_runs_ranking_of_the_topic(organiser_client, pool):
    from scoring.core.analysis.pr_curve import precision_recall

    url = reverse("scoring:leaderboard_plot", args=[pool.pk, "pr-topic"])
    table = organiser_client.get(url + "?topic=2&runs=demo-run3&format=csv").content.decode()
    points = [line.split(",") for line in table.splitlines()[1:]]
    labels = selectors.pool_state(pool).labels
    relevant = set(labels[(labels.query_id == "2") & (labels.relevance >= 1)].doc_id)
    run = next(t for tag, t in selectors.campaign_runs(pool) if tag == "demo-run3")
    rows = run.to_pandas().query("query_id == '2'")
    curve = precision_recall(list(rows.doc_id), rows.score.to_numpy(), relevant)
    assert [float(r) for _, r, _ in points] == pytest.approx(curve.recall.tolist())
    assert [float(p) for _, _, p in points] == pytest.approx(curve.precision.tolist())
    assert organiser_client.get(url + "?topic=nosuch").status_code == 400


def test_bad_requests_are_4xx_with_the_reason(organiser_client, pool):
    for params, reason in [
        ({"alpha": "2"}, "alpha"),
        ({"test": "chi2"}, "test"),
        ({"measure": "nosuch"}, "nosuch"),
    ]:
        page = organiser_client.get(leaderboard_url(pool, **params))
        assert page.status_code == 400
        assert reason in page.context["error"]
    plot = reverse("scoring:leaderboard_plot", args=[pool.pk, "box"])
    assert organiser_client.get(plot + "?format=gif").status_code == 400
    assert (
        organiser_client.get(reverse("scoring:leaderboard_plot", args=[pool.pk, "pie"])).status_code
        == 404
    )


def test_nothing_judged_is_a_notice_not_an_error(organiser_client):
    campaign = make_campaign()
    pool = make_pool(campaign, {"301": ["d1"]})
    page = organiser_client.get(leaderboard_url(pool))
    assert page.status_code == 200
    assert "nothing is judged" in page.context["notice"].lower()


def test_a_pool_with_no_runs_says_no_runs_yet_on_the_page_and_the_api(
    organiser_client, organiser, tmp_path
):
    """A pool of judgments imported from a qrels file, in a campaign without runs."""
    campaign = make_campaign()
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("301 0 d1 1\n301 0 d2 0\n")
    call_command(
        "import_qrels", "--campaign", campaign.slug, "--assessor", "nist", "--make-pool",
        "nist", str(qrels), stdout=io.StringIO(),
    )  # fmt: skip
    pool = campaign.pools.get()
    page = organiser_client.get(leaderboard_url(pool))
    assert page.status_code == 200
    assert page.context["notice"].startswith("No runs yet")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=organiser).key}")
    answer = api.get(f"/api/pools/{pool.pk}/leaderboard/", {"measure": "map"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["detail"].startswith("no runs yet")
    assert (body["measure"], body["runs"], body["pairs"]) == ("map", [], [])


def test_the_api_gives_the_command_json(organiser, assessor, pool, tmp_path):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=organiser).key}")
    url = f"/api/pools/{pool.pk}/leaderboard/"
    data = api.get(url, {"measure": "map", "test": "sign", "correction": "bonferroni"}).json()
    expected = command_json(pool, tmp_path, "--test", "sign", "--correction", "bonferroni")
    assert [(r["run"], r["n_topics"]) for r in data["runs"]] == [
        (r["run"], r["n_topics"]) for r in expected["runs"]
    ]
    assert [r["ci_low"] for r in data["runs"]] == pytest.approx(
        [r["ci_low"] for r in expected["runs"]]
    )
    assert [(p["a"], p["b"]) for p in data["pairs"]] == [
        (p["a"], p["b"]) for p in expected["pairs"]
    ]
    assert [p["p_adjusted"] for p in data["pairs"]] == pytest.approx(
        [p["p_adjusted"] for p in expected["pairs"]]
    )
    assert api.get(url, {"test": "chi2"}).status_code == 400
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=assessor).key}")
    assert stranger.get(url).status_code == 403


def test_assessors_see_no_leaderboard_or_picture(assessor_client, pool):
    assert assessor_client.get(leaderboard_url(pool)).status_code == 403
    plot = reverse("scoring:leaderboard_plot", args=[pool.pk, "box"])
    assert assessor_client.get(plot).status_code == 403


def test_a_run_tag_that_looks_like_mathtext_is_drawn_as_written(organiser_client):
    tag = "$\\immediate\\write18{id}$"
    pool = judged_pool_of_runs(tag, "bm25")
    page = organiser_client.get(leaderboard_url(pool, measure="map"))
    assert page.status_code == 200
    for figure in page.context["figures"]:
        svg = organiser_client.get(figure["url"])
        assert svg.status_code == 200, figure["kind"]
        texts = re.findall(r">([^<]*)</text>", svg.content.decode())
        assert any(tag in text for text in texts), figure["kind"]
        assert organiser_client.get(figure["url"] + "&format=png").status_code == 200


def test_the_leaderboard_tsv_and_picture_csvs_write_formula_like_tags_as_text(organiser_client):
    pool = judged_pool_of_runs("=cmd|'/Ccalc'!A0", "+bm25", "-1")
    tsv = organiser_client.get(leaderboard_url(pool, measure="map", download="tsv"))
    runs_table = tsv.content.decode().split("\n\n")[0].splitlines()
    header = runs_table[0].split("\t")
    runs = {row.split("\t")[header.index("run")] for row in runs_table[1:]}
    assert runs == {"'=cmd|'/Ccalc'!A0", "'+bm25", "-1"}
    assert all(float(row.split("\t")[header.index("mean")]) == 0.75 for row in runs_table[1:])
    page = organiser_client.get(leaderboard_url(pool, measure="map"))
    for figure in page.context["figures"]:
        table = organiser_client.get(figure["url"] + "&format=csv").content.decode()
        cells = {cell for line in table.splitlines() for cell in line.split(",")}
        assert not cells & {"=cmd|'/Ccalc'!A0", "+bm25"}, figure["kind"]
        assert cells & {"'=cmd|'/Ccalc'!A0", "'+bm25"}, figure["kind"]


@pytest.mark.parametrize(
    ("measure", "reason"),
    [
        ("P.99999999999999999999", "past the largest"),
        ("ndcg_cut.99999999999999999999", "past the largest"),
        ("success.18446744073709551616", "past the largest"),
        ("P.1e400", "is not a whole number"),
        ("recall.1,2", "names 2 values (recall_1, recall_2): name one"),
    ],
)
def test_a_measure_past_any_ranking_or_naming_several_values_is_refused_with_the_reason(
    organiser_client, pool, measure, reason
):
    page = organiser_client.get(leaderboard_url(pool, measure=measure))
    assert page.status_code == 400
    assert reason in page.content.decode()
    api = organiser_client.get(f"/api/pools/{pool.pk}/leaderboard/", {"measure": measure})
    assert api.status_code == 400
    assert reason in json.dumps(api.json())
    if measure != "recall.1,2":  # the scores list every value of every measure
        scores = organiser_client.get(f"/api/pools/{pool.pk}/scores/", {"measure": measure})
        assert 400 <= scores.status_code < 500
        assert reason in json.dumps(scores.json())


def test_a_measure_as_trec_eval_prints_it_ranks_the_leaderboard(organiser_client, pool):
    by_printed = organiser_client.get(f"/api/pools/{pool.pk}/leaderboard/", {"measure": "P_10"})
    by_argument = organiser_client.get(f"/api/pools/{pool.pk}/leaderboard/", {"measure": "P.10"})
    assert by_printed.status_code == 200
    assert by_printed.json() == by_argument.json()
