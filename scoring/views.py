"""Organiser pages for a pool's qrels and the runs' scores."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from pooling.models import Pool
from scoring import services
from scoring.exports import FORMATS, INCLUSION_FILE, ExportError
from workbench.roles import organiser_required


def _pool(pool_id: int) -> Pool:
    return get_object_or_404(Pool.objects.select_related("campaign"), pk=pool_id)


def file_response(data: bytes, name: str, content_type: str) -> HttpResponse:
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def qrels_file(pool: Pool, fmt: str, two_aspect: str | None = None) -> services.ExportFile:
    """One download: a format's qrels, or `inclusion` for the stratified pool's probabilities."""
    wanted = "stratified" if fmt == "inclusion" else fmt
    if wanted not in FORMATS:
        raise Http404(f"no qrels format {fmt!r}")
    files = services.qrels_export(pool=pool, fmt=wanted, two_aspect=two_aspect)
    return next(f for f in files if f.name == INCLUSION_FILE) if fmt == "inclusion" else files[0]


@organiser_required
def qrels_download(request: HttpRequest, pool_id: int, fmt: str) -> HttpResponse:
    pool = _pool(pool_id)
    try:
        file = qrels_file(pool, fmt, request.GET.get("aspect"))
    except ExportError as error:
        return HttpResponse(
            f"Cannot export {fmt}: {error}\n", status=409, content_type="text/plain"
        )
    name = f"{pool.campaign.slug}-pool{pool.pk}-{file.name}"
    return file_response(file.data, name, "text/plain; charset=utf-8")


@organiser_required
def bundle_download(request: HttpRequest, pool_id: int) -> HttpResponse:
    pool = _pool(pool_id)
    formats = request.GET.getlist("formats") or None  # None: what the pool can produce
    try:
        data = services.qrels_bundle(pool=pool, formats=formats)
    except ExportError as error:
        return HttpResponse(f"Cannot export: {error}\n", status=409, content_type="text/plain")
    return file_response(data, f"{pool.campaign.slug}-pool{pool.pk}-qrels.zip", "application/zip")


@organiser_required
def pool_scores(request: HttpRequest, pool_id: int) -> HttpResponse:
    """The campaign's runs scored against the pool's current final labels."""
    pool = _pool(pool_id)
    text = request.GET.get("measures", "").strip()
    measures = text.split() if text else list(services.DEFAULT_MEASURES)
    context = {"pool": pool, "campaign": pool.campaign, "measures_text": " ".join(measures)}
    try:
        scores = services.pool_scores(pool=pool, measures=measures)
    except services.ScoringError as error:
        context["error"] = str(error)
        return render(request, "scoring/pool_scores.html", context)
    table = scores.pivot(index="run_id", columns="measure", values="value")
    columns = list(dict.fromkeys(scores["measure"]))
    table = table[columns].sort_values(columns[0], ascending=False)
    context |= {
        "columns": columns,
        "rows": [
            (run_id, list(values))
            for run_id, values in zip(table.index, table.to_numpy(), strict=True)
        ],
    }
    if request.GET.get("download") == "tsv":
        lines = ["run_id\t" + "\t".join(columns)]
        lines += [
            f"{run}\t" + "\t".join(f"{v:.4f}" for v in values) for run, values in context["rows"]
        ]
        data = ("\n".join(lines) + "\n").encode()
        return file_response(
            data, f"{pool.campaign.slug}-pool{pool.pk}-scores.tsv", "text/tab-separated-values"
        )
    return render(request, "scoring/pool_scores.html", context)
