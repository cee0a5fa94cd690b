"""The pool page's "what would each strategy have found": the simulator replayed on
the pool's runs, with an earlier pool's labels or uploaded qrels, by a job."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from pooling.selectors import pool_or_404
from scoring import replay_selectors as replay
from workbench.models import Job
from workbench.roles import organiser_required

PLOT_FORMATS = ("svg", "png", "csv")


def replay_request(request: Any, pool: Any) -> dict[str, Any]:
    """The job params of a page's or the API's request; ReplayError says what is wrong."""
    # A DRF request has .data; a page's request only .POST (empty when nothing was sent).
    data = request.data if hasattr(request, "data") else request.POST
    budgets = replay.replay_budgets(str(data.get("budgets", "")))
    seed_text = str(data.get("seed") or "0")
    if not seed_text.isdigit() or len(seed_text) > 18:
        raise replay.ReplayError(
            f"seed {seed_text!r}: give a non-negative integer of at most 18 digits"
        )
    upload = request.FILES.get("qrels")
    source = data.get("source_pool")
    if upload is not None:
        path = replay.replay_store_qrels(upload.read(), upload.name)
        return replay.replay_params(pool, budgets=budgets, qrels=path, seed=int(seed_text))
    if not source:
        raise replay.ReplayError("choose an earlier pool, or upload qrels")
    source_pool = replay.replay_source_pool(pool, source)
    return replay.replay_params(
        pool, budgets=budgets, source_pool=source_pool.pk, seed=int(seed_text)
    )


@organiser_required
def pool_strategy_replay(request: HttpRequest, pool_id: int) -> HttpResponse:
    """GET shows the form and the newest replay (or `?job=`); POST starts one."""
    pool = pool_or_404(pool_id)
    context: dict[str, Any] = {
        "pool": pool,
        "campaign": pool.campaign,
        "pools": pool.campaign.pools.exclude(pk=pool.pk).order_by("-created_at"),
        "formats": PLOT_FORMATS,
    }
    if request.method == "POST":
        try:
            params = replay_request(request, pool)
        except replay.ReplayError as error:
            context["error"] = str(error)
            return render(request, "scoring/pool_strategy_replay.html", context, status=400)
        job = replay.replay_start(pool=pool, params=params, user=request.user)
        return redirect(f"{request.path}?job={job.pk}")
    job_id = request.GET.get("job")
    job = replay.replay_job(pool, job_id) if job_id else replay.replay_latest(pool)
    context["job"] = job
    if job is not None and job.state == Job.DONE:
        context["report"] = job.result["report"]
    return render(request, "scoring/pool_strategy_replay.html", context)


@organiser_required
def pool_strategy_replay_plot(
    request: HttpRequest, pool_id: int, job_id: int, fmt: str
) -> HttpResponse:
    """The relevant-found curves of a done replay, as the leaderboard's pictures."""
    pool = pool_or_404(pool_id)
    job = replay.replay_job(pool, job_id)
    if job is None or job.state != Job.DONE or fmt not in PLOT_FORMATS:
        raise Http404("no such replay")
    content, content_type = replay.replay_plot(job, fmt)
    response = HttpResponse(content, content_type=content_type)
    if fmt == "csv":
        response["Content-Disposition"] = f'attachment; filename="pool{pool.pk}-strategies.csv"'
    return response
