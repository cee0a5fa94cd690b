"""The leaderboard of a generated-answers campaign: its runs ranked by any nugget or
citation support measure, with the intervals, paired tests and pictures of the
pools' leaderboard (the same core, `scoring.core.analysis`), from a score table of
the campaign's judged answers (`answer_selectors.answer_score_table`)."""

from __future__ import annotations

import io
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from pooling.models import Campaign
from scoring import answer_selectors, leaderboard_selectors, selectors
from scoring.answer_views import answers_campaign_or_404
from scoring.core import plots
from scoring.core.analysis import render as board_render
from scoring.core.analysis.leaderboard import Leaderboard, ScoreTable
from scoring.forms import LeaderboardForm
from scoring.leaderboard_views import DOWNLOAD_SUFFIX, DOWNLOADS
from workbench.core.plots import PlotError
from workbench.http import attachment, plot_format_error, plot_response
from workbench.roles import organiser_required

PLOTS = {
    "box": "Per-topic values of each run",
    "median": "A run against the median, per topic",
    "matrix": "Significance of every pair",
}


def _scored(campaign: Campaign, form: LeaderboardForm) -> tuple[Leaderboard, ScoreTable]:
    """The leaderboard and its table; ValueError (shown as a 400) when there is none."""
    if not form.is_valid():
        raise ValueError(form.error_text())
    table = answer_selectors.answer_score_table(campaign, form.cleaned_data["measure"])
    if not table.runs:
        raise ValueError("no answer is judged yet: the leaderboard appears once some are")
    try:
        return leaderboard_selectors.leaderboard_of(table, form.leaderboard_options()), table
    except selectors.ScoringError as error:
        raise ValueError(str(error)) from None


def _form(request: HttpRequest) -> LeaderboardForm:
    return LeaderboardForm(request.GET or {"measure": "all"})


@organiser_required
def answer_leaderboard(request: HttpRequest, slug: str) -> HttpResponse:
    """`?measure=` one of the nugget or citation measures; `?download=text|tsv|json|latex`."""
    campaign = answers_campaign_or_404(slug)
    form = _form(request)
    context: dict[str, Any] = {
        "campaign": campaign,
        "form": form,
        "measures": answer_selectors.ANSWER_MEASURES,
    }
    download = request.GET.get("download")
    if download and download not in DOWNLOADS:
        return HttpResponse(f"download: one of {', '.join(DOWNLOADS)}", status=400)
    try:
        board, table = _scored(campaign, form)
    except ValueError as why:
        context["error"] = str(why)
        return render(request, "scoring/answer_leaderboard.html", context, status=400)
    if download:
        out = io.StringIO()
        board_render.write_leaderboard(board, out, download)
        name = f"{campaign.slug}-answers-leaderboard.{DOWNLOAD_SUFFIX[download]}"
        return attachment(out.getvalue().encode(), name, DOWNLOADS[download])
    test = board.options.tests[0]
    keys = board_render.run_keys(len(board.runs))
    key_of = {row.run: key for row, key in zip(board.runs, keys, strict=True)}
    beaten = board.beaten(test)
    query = {
        k: v for k, v in request.GET.items() if k in {"measure", "test", "correction", "alpha"}
    }
    query.setdefault("measure", board.measure)
    chosen = request.GET.get("run") if request.GET.get("run") in table.runs else board.runs[0].run
    url = reverse("scoring:answer_leaderboard_plot", args=[campaign.slug, "KIND"])
    context |= {
        "board": board,
        "test_label": LeaderboardForm.TEST_LABELS[test],
        "confidence": f"{100 * (1 - board.options.alpha):g}",
        "rows": [
            {
                "rank": rank,
                "key": key_of[row.run],
                "row": row,
                "beats": "".join(key_of[r] for r in beaten[row.run]),
            }
            for rank, row in enumerate(board.runs, start=1)
        ],
        "pair_tables": [
            {
                "test": each,
                "label": LeaderboardForm.TEST_LABELS[each],
                "pairs": [p for p in board.pairs if p.test == each],
            }
            for each in board.options.tests
        ],
        "downloads": list(DOWNLOADS),
        "query": urlencode(query),
        "median_run": chosen,
        "figures": [
            {
                "kind": kind,
                "title": title,
                "url": url.replace("KIND", kind)
                + "?"
                + urlencode({**query, **({"run": chosen} if kind == "median" else {})}),
            }
            for kind, title in PLOTS.items()
        ],
    }
    return render(request, "scoring/answer_leaderboard.html", context)


@organiser_required
def answer_leaderboard_plot(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    """One picture: `?format=svg` (default), `png`, or `csv` for its numbers."""
    if kind not in PLOTS:
        raise Http404(f"no picture {kind!r}")
    campaign = answers_campaign_or_404(slug)
    fmt = request.GET.get("format", "svg")
    refused = plot_format_error(fmt)
    if refused:
        return refused
    try:
        board, table = _scored(campaign, _form(request))
        if kind == "box":
            plot = plots.box_plot(board, table)
        elif kind == "median":
            plot = plots.difference_from_median(
                board, table, request.GET.get("run") or board.runs[0].run
            )
        else:
            plot = plots.significance_matrix(board, board.options.tests[0])
    except (ValueError, PlotError) as why:
        return HttpResponse(str(why), status=400, content_type="text/plain; charset=utf-8")
    name = f"{campaign.slug}-answers-{kind}"
    return plot_response(plot, fmt, name, download=bool(request.GET.get("download")))
