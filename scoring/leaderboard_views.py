"""The leaderboard page of a pool, its downloads and its pictures (organisers)."""

from __future__ import annotations

import io
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from pooling.models import Pool
from pooling.selectors import pool_or_404
from scoring import background, leaderboard_selectors, selectors
from scoring.core import plots
from scoring.core.analysis import render as board_render
from scoring.core.analysis.leaderboard import Leaderboard, ScoreTable
from scoring.forms import LeaderboardForm
from workbench.core.plots import Plot, PlotError
from workbench.http import attachment, plot_format_error, plot_response
from workbench.roles import organiser_required

PLOTS = {
    "box": "Per-topic values of each run",
    "median": "A run against the median, per topic",
    "matrix": "Significance of every pair",
    "pr": "Precision-recall (11 points, mean over topics)",
    "pr-topic": "Precision-recall on one topic (every recall level)",
}
DOWNLOADS = {"text": "text/plain", "tsv": "text/tab-separated-values", "json": "application/json"}
DOWNLOADS |= {"latex": "application/x-latex"}
DOWNLOAD_SUFFIX = {"text": "txt", "tsv": "tsv", "json": "json", "latex": "tex"}


class _Unavailable(Exception):
    """The page shows this instead of a leaderboard: a state of the campaign (200,
    nothing judged), a bad request (400), or not scored yet (409: a large pool
    whose job has not made the table of the current labels)."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _board(
    request: HttpRequest, pool: Pool, form: LeaderboardForm, context: dict[str, Any]
) -> tuple[Leaderboard, ScoreTable] | None:
    """The leaderboard and the table it rests on: scored here for a small pool; for
    a large one from the table a job stored on the current labels, or None while
    there is none (`background.job_result` says why in `context`). The statistics
    are worked out here either way, with the request's test and alpha."""
    if not form.is_valid():
        raise _Unavailable(form.error_text())
    measure = form.cleaned_data["measure"]
    try:
        choice = selectors.label_choice_of(pool, request.GET)
    except selectors.LabelChoiceError as error:
        raise _Unavailable(str(error)) from None
    context["labels_offer"] = selectors.label_offer(pool, choice)
    try:
        table = background.leaderboard_table(
            request, pool=pool, measure=measure, context=context, choice=choice
        )
        if table is None:
            return None
        return leaderboard_selectors.leaderboard_of(table, form.leaderboard_options()), table
    except selectors.NoRuns:
        raise _Unavailable(
            "No runs yet: the campaign has no run to rank. The leaderboard appears once "
            "runs are uploaded and documents of the pool have final labels.",
            status=200,
        ) from None
    except selectors.NothingJudged as state:
        raise _Unavailable(
            f"{str(state).capitalize()}. The leaderboard appears once documents of the pool "
            "have final labels.",
            status=200,
        ) from None
    except selectors.ScoringError as error:
        raise _Unavailable(str(error)) from None


NOT_SCORED = (
    "the leaderboard of the current labels is not scored yet: "
    "score it in the background on the leaderboard page"
)


@organiser_required
@require_http_methods(["GET", "POST"])
def pool_leaderboard(request: HttpRequest, pool_id: int) -> HttpResponse:
    """The runs ranked by one measure with confidence intervals, every pair tested,
    and the pictures; `?download=text|tsv|json|latex` gives the table as a file.
    A pool too large to score here is scored by a job, which a POST starts."""
    pool = pool_or_404(pool_id)
    form = LeaderboardForm(request.GET or {"measure": "map"})
    context: dict[str, Any] = {"pool": pool, "campaign": pool.campaign, "form": form}
    context["labels_offer"] = selectors.label_offer(pool)  # the request's, once it is read
    download = request.GET.get("download")
    if download and download not in DOWNLOADS:
        return HttpResponse(f"download: one of {', '.join(DOWNLOADS)}", status=400)
    try:
        scored = _board(request, pool, form, context)
        if scored is None and download:
            raise _Unavailable(NOT_SCORED, status=409)
    except _Unavailable as why:
        context["notice" if why.status == 200 else "error"] = str(why)
        return render(request, "scoring/pool_leaderboard.html", context, status=why.status)
    if request.method == "POST":  # a job is at it (or done): the page shows which
        return redirect(request.get_full_path())
    if scored is None:  # the page offers the job, or polls it
        return render(request, "scoring/pool_leaderboard.html", context)
    board, table = scored
    if download:
        out = io.StringIO()
        board_render.write_leaderboard(board, out, download)
        offer = context["labels_offer"]
        whose = "" if offer.choice.is_human else f"-{offer.choice.source}-{offer.choice.machine}"
        name = f"{pool.campaign.slug}-pool{pool.pk}-leaderboard{whose}.{DOWNLOAD_SUFFIX[download]}"
        return attachment(out.getvalue().encode(), name, DOWNLOADS[download])
    context |= _board_context(pool, board, table, request)
    return render(request, "scoring/pool_leaderboard.html", context)


def _board_context(
    pool: Pool, board: Leaderboard, table: ScoreTable, request: HttpRequest
) -> dict[str, Any]:
    test = board.options.tests[0]
    keys = board_render.run_keys(len(board.runs))
    key_of = {row.run: key for row, key in zip(board.runs, keys, strict=True)}
    beaten = board.beaten(test)
    query = {
        k: v
        for k, v in request.GET.items()
        if k in {"measure", "test", "correction", "alpha", "labels", "machine"}
    }
    if query.get("labels", "human") == "human":  # the links carry a machine only with its labels
        query.pop("machine", None)
    first = board.runs[0].run
    chosen = request.GET.get("run") if request.GET.get("run") in table.runs else first
    asked = [run for run in request.GET.getlist("runs") if run in table.runs]
    most = selectors.runs_in_request(pool)  # the curves score their runs here
    pr_runs = (asked or [row.run for row in board.runs[:5]])[:most]
    topic = request.GET.get("topic") if request.GET.get("topic") in board.topics else None
    topic = topic or board.topics[0]
    return {
        "board": board,
        "test": test,
        "test_label": LeaderboardForm.TEST_LABELS[test],
        "confidence": f"{100 * (1 - board.options.alpha):g}",
        "rows": [
            {
                "rank": rank,
                "key": key_of[row.run],
                "row": row,
                "beats": "".join(key_of[run] for run in beaten[row.run]),
            }
            for rank, row in enumerate(board.runs, start=1)
        ],
        "pair_tables": [
            {
                "test": each,
                "label": LeaderboardForm.TEST_LABELS[each],
                "pairs": [pair for pair in board.pairs if pair.test == each],
            }
            for each in board.options.tests
        ],
        "downloads": list(DOWNLOADS),
        "query": urlencode(query),
        "median_run": chosen,
        "pr_runs": pr_runs,
        "pr_runs_most": most if len(asked) > most else None,
        "pr_topic": topic,
        "figures": [
            {
                "kind": kind,
                "title": title,
                "url": _plot_url(pool, kind, query, chosen, pr_runs, topic),
            }
            for kind, title in PLOTS.items()
        ],
    }


def _plot_url(
    pool: Pool, kind: str, query: dict[str, str], run: str, runs: list[str], topic: str
) -> str:
    params = dict(query)
    if kind == "median":
        params["run"] = run
    if kind == "pr-topic":
        params["topic"] = topic
    items = list(params.items()) + ([("runs", r) for r in runs] if kind.startswith("pr") else [])
    return reverse("scoring:leaderboard_plot", args=[pool.pk, kind]) + "?" + urlencode(items)


@organiser_required
def leaderboard_plot(request: HttpRequest, pool_id: int, kind: str) -> HttpResponse:
    """One picture of the leaderboard: `?format=svg` (default), `png`, or `csv` for
    its numbers."""
    if kind not in PLOTS:
        raise Http404(f"no picture {kind!r}")
    pool = pool_or_404(pool_id)
    fmt = request.GET.get("format", "svg")
    refused = plot_format_error(fmt)
    if refused:
        return refused
    form = LeaderboardForm(request.GET or {"measure": "map"})
    try:
        scored = _board(request, pool, form, {})
        if scored is None:
            raise _Unavailable(NOT_SCORED, status=409)
        plot = _plot(pool, kind, *scored, request, selectors.label_choice_of(pool, request.GET))
    except (_Unavailable, PlotError, selectors.ScoringError) as why:
        status = 409 if isinstance(why, _Unavailable) and why.status == 409 else 400
        return HttpResponse(str(why), status=status, content_type="text/plain; charset=utf-8")
    name = f"{pool.campaign.slug}-pool{pool.pk}-{kind}"
    return plot_response(plot, fmt, name, download=bool(request.GET.get("download")))


def _plot(
    pool: Pool,
    kind: str,
    board: Leaderboard,
    table: ScoreTable,
    request: HttpRequest,
    choice: selectors.LabelChoice,
) -> Plot:
    match kind:
        case "box":
            return plots.box_plot(board, table)
        case "median":
            return plots.difference_from_median(
                board, table, request.GET.get("run") or board.runs[0].run
            )
        case "matrix":
            return plots.significance_matrix(board, board.options.tests[0])
        case "pr-topic":
            runs = request.GET.getlist("runs") or [row.run for row in board.runs[:5]]
            topic = request.GET.get("topic") or board.topics[0]
            on_topic = leaderboard_selectors.pool_precision_recall_on_topic(
                pool=pool, runs=runs, topic=topic, choice=choice
            )
            return plots.precision_recall_on_topic(on_topic, topic)
        case _:
            runs = request.GET.getlist("runs") or [row.run for row in board.runs[:5]]
            curves = leaderboard_selectors.pool_precision_recall(
                pool=pool, runs=runs, choice=choice
            )
            return plots.precision_recall(curves, leaderboard_selectors.RECALL_LEVELS)
