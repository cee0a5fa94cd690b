"""The pool page's pictures: the pure builders, and the page that serves them."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse

from pooling.core.pool_plots import depths_to_draw, judged_share_chart, pool_size_by_depth
from pooling.core.spec import PoolSpec
from workbench.core.plots import PlotError


def test_depths_to_draw_run_from_one_to_the_pool_depth():
    assert depths_to_draw(1) == [1]
    assert depths_to_draw(5) == [1, 2, 3, 5]
    many = depths_to_draw(100)
    assert many[0] == 1
    assert many[-1] == 100
    assert len(many) <= 21
    assert many == sorted(set(many))
    with pytest.raises(PlotError):
        depths_to_draw(0)


def test_pool_size_by_depth_keeps_its_numbers_in_the_csv():
    totals = pd.DataFrame({"depth": [10, 1], "candidates": [40, 6], "judged": [12, 6]})
    plot = pool_size_by_depth(totals, spec=PoolSpec(depth=10))
    assert plot.csv() == "depth,documents_pooled,judged\n1,6,6\n10,40,12\n"
    assert b"<title>Pool size by depth</title>" in plot.render("svg")


def test_pool_size_by_depth_names_a_stratified_pool_by_its_strata():
    """Issue 23: a 1-10 + 11-100 at 50% pool was called "depth 100"."""
    totals = pd.DataFrame(
        {"depth": [1, 10, 100], "candidates": [600, 4000, 19800], "judged": [6, 9, 9]}
    )
    spec = PoolSpec.from_dict({"depth": 10, "strata": ["11-100:0.5"]})
    svg = pool_size_by_depth(totals, spec=spec).render("svg").decode()
    assert "this pool: 1-10:1.0 11-100:0.5" in svg
    assert "depth 100" not in svg
    assert ">2,500<" in svg.replace("</text>", "<")  # round ticks, with thousands separators
    depth_only = pool_size_by_depth(totals, spec=PoolSpec(depth=10)).render("svg").decode()
    assert "this pool: depth 10" in depth_only


def test_the_pool_size_annotation_stays_inside_the_axes_at_the_last_depth():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    totals = pd.DataFrame({"depth": [1, 10, 100], "candidates": [6, 40, 300], "judged": [6, 9, 9]})
    spec = PoolSpec.from_dict({"depth": 10, "strata": ["11-100:0.5"]})
    plot = pool_size_by_depth(totals, spec=spec)
    figure = Figure(figsize=plot.size, layout="constrained")
    canvas = FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    plot.draw(axes)
    canvas.draw()
    renderer = canvas.get_renderer()
    [note] = axes.texts
    inside, box = axes.get_window_extent(renderer), note.get_window_extent(renderer)
    assert inside.x0 <= box.x0
    assert box.x1 <= inside.x1


def test_judged_share_chart_groups_each_runs_ks():
    shares = pd.DataFrame(
        {
            "run_id": ["a", "a", "b", "b"],
            "k": [10, 20, 10, 20],
            "documents": [10, 20, 10, 0],
            "judged": [5, 5, 10, 0],
            "share": [0.5, 0.25, 1.0, float("nan")],
        }
    )
    plot = judged_share_chart(shares)
    assert plot.csv().splitlines()[1:3] == ["a,10,10,5,0.5", "a,20,20,5,0.25"]
    assert plot.render("png").startswith(b"\x89PNG")
    with pytest.raises(PlotError):
        judged_share_chart(shares.iloc[0:0])


def test_a_run_tag_that_looks_like_mathtext_is_a_label_as_written():
    tag = "$\\immediate\\write18{id}$"
    shares = pd.DataFrame(
        {"run_id": [tag], "k": [10], "documents": [10], "judged": [5], "share": [0.5]}
    )
    assert f">{tag}</text>" in judged_share_chart(shares).render("svg").decode()


@pytest.fixture
def demo_pool(db):
    from pooling.models import Pool

    call_command("load_demo", stdout=io.StringIO())
    return Pool.objects.get()


def test_the_pool_page_shows_both_pictures_as_svg_png_and_csv(organiser_client, demo_pool):
    slug, pk = demo_pool.campaign.slug, demo_pool.pk
    page = organiser_client.get(reverse("pooling:pool_detail", args=[slug, pk])).content.decode()
    for kind in ("depth", "judged"):
        url = reverse("pooling:pool_plot", args=[slug, pk, kind])
        assert f'data-plot="{kind}"' in page
        assert url in page
        assert organiser_client.get(url)["Content-Type"] == "image/svg+xml"
        png = organiser_client.get(url + "?format=png&download=1")
        assert png["Content-Disposition"].endswith(f'pool{pk}-{kind}.png"')
        assert len(organiser_client.get(url + "?format=csv").content.splitlines()) > 1
    depth = organiser_client.get(
        reverse("pooling:pool_plot", args=[slug, pk, "depth"]) + "?format=csv"
    )
    rows = [line.split(",") for line in depth.content.decode().splitlines()[1:]]
    sizes = [int(size) for _, size, _ in rows]
    assert sizes == sorted(sizes)  # a deeper pool holds at least as many documents


def test_pool_pictures_refuse_bad_requests(organiser_client, demo_pool):
    slug, pk = demo_pool.campaign.slug, demo_pool.pk
    url = reverse("pooling:pool_plot", args=[slug, pk, "depth"])
    assert organiser_client.get(url + "?format=bmp").status_code == 400
    unknown = reverse("pooling:pool_plot", args=[slug, pk, "pie"])
    assert organiser_client.get(unknown).status_code == 404


def test_assessors_get_no_pool_picture(assessor_client, demo_pool):
    url = reverse("pooling:pool_plot", args=[demo_pool.campaign.slug, demo_pool.pk, "judged"])
    assert assessor_client.get(url).status_code == 403
