"""Organiser pages for a pool's qrels and the runs' scores."""

from __future__ import annotations

import pandas as pd
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from pooling.selectors import pool_or_404
from scoring import background, export_selectors, jobs, selectors, stability_selectors
from scoring.core.exports import ExportError
from scoring.core.measures.catalog import TREC, MeasureError
from scoring.core.measures.params import ParamError
from scoring.forms import BundleForm, StabilityForm
from workbench.core.spreadsheets import tsv_text
from workbench.http import attachment
from workbench.roles import organiser_required


@organiser_required
def qrels_download(request: HttpRequest, pool_id: int, fmt: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    if fmt not in export_selectors.QRELS_FILES:
        raise Http404(f"no qrels format {fmt!r}")
    try:
        choice = selectors.label_choice_of(pool, request.GET)
    except selectors.LabelChoiceError as error:
        return HttpResponse(
            f"Cannot export {fmt}: {error}\n", status=400, content_type="text/plain"
        )
    try:
        file = export_selectors.qrels_file(
            pool=pool,
            fmt=fmt,
            two_aspect=request.GET.get("aspect"),
            labels=choice.source,
            machine=choice.machine or None,
        )
    except ExportError as error:
        return HttpResponse(
            f"Cannot export {fmt}: {error}\n", status=409, content_type="text/plain"
        )
    name = f"{pool.campaign.slug}-pool{pool.pk}-{file.name}"
    return attachment(file.data, name, "text/plain; charset=utf-8")


@organiser_required
def pool_qrels(request: HttpRequest, pool_id: int) -> HttpResponse:
    """The pool's final labels in every layout the scorers read, and the bundle; of
    the humans' labels, or (`?labels=&machine=`) a machine's or both."""
    pool = pool_or_404(pool_id)
    status, error = 200, ""
    try:
        choice = selectors.label_choice_of(pool, request.GET)
    except selectors.LabelChoiceError as refused:
        choice, status, error = selectors.HUMAN_CHOICE, 400, str(refused)
    context = {
        "pool": pool,
        "campaign": pool.campaign,
        "formats": export_selectors.qrels_format_choices(pool=pool),
        "labels_offer": selectors.label_offer(pool, choice),
        "error": error,
    }
    return render(request, "scoring/pool_qrels.html", context, status=status)


@organiser_required
@require_POST
def bundle_job(request: HttpRequest, pool_id: int) -> HttpResponse:
    """Export the bundle in the background: the job's page offers the file when done."""
    pool = pool_or_404(pool_id)
    form = BundleForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(e for errors in form.errors.values() for e in errors)
        return HttpResponse(f"Cannot export: {errors}\n", status=400, content_type="text/plain")
    try:
        choice = selectors.label_choice_of(pool, request.POST)
    except selectors.LabelChoiceError as error:
        return HttpResponse(f"Cannot export: {error}\n", status=400, content_type="text/plain")
    job = jobs.qrels_bundle_start(
        pool=pool,
        formats=form.cleaned_data["formats"] or None,
        created_by=request.user,
        choice=choice,
    )
    return redirect("job_detail", job_id=job.pk)


@organiser_required
def bundle_download(request: HttpRequest, pool_id: int) -> HttpResponse:
    pool = pool_or_404(pool_id)
    formats = request.GET.getlist("formats") or None  # None: what the pool can produce
    try:
        choice = selectors.label_choice_of(pool, request.GET)
    except selectors.LabelChoiceError as error:
        return HttpResponse(f"Cannot export: {error}\n", status=400, content_type="text/plain")
    try:
        data = export_selectors.qrels_bundle(
            pool=pool, formats=formats, labels=choice.source, machine=choice.machine or None
        )
    except ExportError as error:
        return HttpResponse(f"Cannot export: {error}\n", status=409, content_type="text/plain")
    return attachment(data, f"{pool.campaign.slug}-pool{pool.pk}-qrels.zip", "application/zip")


@organiser_required
def pool_scores(request: HttpRequest, pool_id: int) -> HttpResponse:
    """The campaign's runs scored against the pool's current final labels, best first."""
    pool = pool_or_404(pool_id)
    text = request.GET.get("measures", "").strip()
    measures = text.split() if text else list(selectors.DEFAULT_MEASURES)
    context = {"pool": pool, "campaign": pool.campaign, "measures_text": " ".join(measures)}
    try:
        choice = selectors.label_choice_of(pool, request.GET)
    except selectors.LabelChoiceError as error:
        context |= {"error": str(error), "labels_offer": selectors.label_offer(pool)}
        return render(request, "scoring/pool_scores.html", context, status=400)
    context["labels_offer"] = selectors.label_offer(pool, choice)
    try:
        report = background.pool_scores(
            request, pool=pool, measures=measures, context=context, choice=choice
        )
    except selectors.NothingJudged as state:
        context["notice"] = f"{str(state).capitalize()}."
        return render(request, "scoring/pool_scores.html", context)
    except selectors.ScoringError as error:
        context["error"] = str(error)
        return render(request, "scoring/pool_scores.html", context)
    if report is None:  # scored in the background: the page offers it, then polls
        if request.method == "POST":
            return redirect(request.get_full_path())
        return render(request, "scoring/pool_scores.html", context)
    scores = report.scores
    table = scores.pivot(index="run_id", columns="measure", values="value")
    for column in table:  # runid's text makes the values objects; numbers rank
        numbers = pd.to_numeric(table[column], errors="coerce")
        if numbers.notna().sum() == table[column].notna().sum():
            table[column] = numbers
    columns = _in_requested_order(list(dict.fromkeys(scores["measure"])), measures)
    ranking = next((c for c in columns if pd.api.types.is_numeric_dtype(table[c])), None)
    if ranking is not None:  # best first; ties in run order, sharing their rank
        table = table.sort_values(ranking, ascending=False, kind="stable")
        ranks = table[ranking].rank(method="min", ascending=False).fillna(len(table))
    else:
        ranks = pd.Series(range(1, len(table) + 1), index=table.index)
    context |= {
        "columns": columns,
        "ranking": ranking,
        "rows": [
            (int(rank), run_id, [_value(v) for v in values], report.missing.get(run_id, []))
            for rank, run_id, values in zip(
                ranks, table.index, table[columns].to_numpy(), strict=True
            )
        ],
        "judged_topics": report.judged_topics,
        "left_out": report.left_out,
    }
    if request.GET.get("download") == "tsv":
        rows = ([run, *values] for _, run, values, _ in context["rows"])
        data = tsv_text(["run_id", *columns], rows).encode()
        whose = "" if choice.is_human else f"-{choice.source}-{choice.machine}"
        return attachment(
            data,
            f"{pool.campaign.slug}-pool{pool.pk}-scores{whose}.tsv",
            "text/tab-separated-values",
        )
    return render(request, "scoring/pool_scores.html", context)


def _in_requested_order(columns: list[str], measures: list[str]) -> list[str]:
    """The output columns in the order the measures were asked for (the first ranks the
    runs), each measure's own columns as trec_eval orders them, the inferred ones last."""
    order: dict[str, int] = {}
    for position, measure in enumerate(measures):
        try:
            names = [name for requested in TREC.select([measure]) for name in requested.names]
        except (MeasureError, ParamError):
            continue
        for name in names:
            order.setdefault(name, position)
    return sorted(columns, key=lambda column: order.get(column, len(measures)))


def _value(value: object) -> str:
    """A value as trec_eval prints it: rounded from the double with 4 decimals, as C's
    printf rounds (Django's floatformat rounds the shortest decimal text, which differs
    at about half of all halves)."""
    return f"{value:.4f}" if isinstance(value, float) else str(value)


@organiser_required
def pool_stability(request: HttpRequest, pool_id: int) -> HttpResponse:
    """How the ranking of the runs settles as judging proceeds (a dashboard panel)."""
    pool = pool_or_404(pool_id)
    form = StabilityForm(request.GET or None)
    measure = form.cleaned_data["measure"] if form.is_valid() else StabilityForm.DEFAULT
    context: dict = {"pool": pool, "campaign": pool.campaign, "form": form, "measure": measure}
    if form.errors:
        context["error"] = "; ".join(e for errors in form.errors.values() for e in errors)
    else:
        try:
            report = stability_selectors.pool_ranking_stability(pool=pool, measure=measure)
        except selectors.NothingJudged as state:
            context["notice"] = f"{str(state).capitalize()}."
        else:
            context |= _stability_context(report)
    template = (
        "scoring/pool_stability.html#panel" if request.htmx else "scoring/pool_stability.html"
    )
    return render(request, template, context, status=400 if form.errors else 200)


def _stability_context(report: stability_selectors.StabilityReport) -> dict:
    stability = report.stability
    now = stability.now.scores
    middle = stability.checkpoints[len(stability.checkpoints) // 2]
    ranked = sorted(now, key=lambda run: (-now[run], run))
    return {
        "report": report,
        "checkpoints": stability.checkpoints,
        "settled": stability.settled_at(),
        "middle": middle,
        "runs": [
            {
                "rank": position,
                "run": run,
                "now": now[run],
                "middle": middle.scores.get(run),
                "inferred": report.inferred.get(run),
            }
            for position, run in enumerate(ranked, start=1)
        ],
    }
