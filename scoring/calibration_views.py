"""A machine assessor's calibration report on a pool (organisers): inline for a
pool scored in a request, else made by a background job the page starts."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from pooling.selectors import pool_or_404
from scoring import calibration_selectors, jobs, selectors
from workbench.roles import organiser_required


@organiser_required
@require_http_methods(["GET", "POST"])
def pool_calibration(request: HttpRequest, pool_id: int) -> HttpResponse:
    """`?machine=NAME&measure=M&measure=...`: GET shows the report (or the job making
    it); POST starts the job for a large pool."""
    pool = pool_or_404(pool_id)
    query = request.POST if request.method == "POST" else request.GET
    asked = [m for m in query.getlist("measure") if m.strip()]
    context: dict[str, Any] = {
        "pool": pool,
        "campaign": pool.campaign,
        "machines": [m.name for m in selectors.labelled_machines(pool)],
        "measures_text": " ".join(asked or calibration_selectors.DEFAULT_MEASURES),
        "reading": calibration_selectors.READING,
    }
    try:
        machine = calibration_selectors.calibration_machine(pool, query.get("machine") or None)
        measures = calibration_selectors.calibration_measures(
            [m for text in asked for m in text.split()]
        )
        context |= {"machine": machine, "measures": measures}
        if request.method == "POST":
            jobs.calibration_start(pool=pool, machine=machine, measures=measures, user=request.user)
            params = [("machine", machine.name), *(("measure", m) for m in measures)]
            return redirect(f"{request.path}?{urlencode(params)}")
        report, job = calibration_selectors.calibration_report(pool, machine, measures)
    except selectors.NothingJudged as state:
        context["notice"] = f"{str(state).capitalize()}."
        return render(request, "scoring/pool_calibration.html", context)
    except selectors.ScoringError as error:
        context["error"] = str(error)
        return render(request, "scoring/pool_calibration.html", context, status=400)
    context |= {"report": report, "job": job, "in_request": job is None and report is not None}
    return render(request, "scoring/pool_calibration.html", context)
