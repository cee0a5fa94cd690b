"""The reusability report of a pool (organisers): computed by a background job,
since leaving 80 runs out in turn takes seconds; the page shows the report of
the current labels once a job has made it."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from pooling.selectors import pool_or_404
from scoring import jobs, reusability_selectors, selectors
from workbench.models import Job
from workbench.roles import organiser_required


@organiser_required
def pool_reusability(request: HttpRequest, pool_id: int) -> HttpResponse:
    """GET shows the report of the current labels (or the job making it); POST
    starts a job when there is none."""
    pool = pool_or_404(pool_id)
    measure = (request.POST.get("measure") or request.GET.get("measure") or "").strip()
    measure = measure or reusability_selectors.reusability_default_measure(pool)
    context: dict[str, Any] = {"pool": pool, "campaign": pool.campaign, "measure": measure}
    try:
        reusability_selectors.reusability_measure(measure, pool=pool)
        reusability_selectors.reusability_refusal(pool)
    except selectors.NothingJudged as state:
        context["notice"] = f"{str(state).capitalize()}."
        return render(request, "scoring/pool_reusability.html", context)
    except selectors.ScoringError as error:
        context["error"] = str(error)
        return render(request, "scoring/pool_reusability.html", context, status=400)
    job = reusability_selectors.reusability_job(pool, measure)
    if request.method == "POST":  # starts one unless a job is at it or done with it
        jobs.reusability_start(pool=pool, measure=measure, user=request.user)
        return redirect(f"{request.path}?measure={measure}")
    context["job"] = job
    if job is not None and job.state == Job.DONE:
        context["report"] = job.result["report"]
    return render(request, "scoring/pool_reusability.html", context)
