"""Organiser pages for pools: choose a strategy against the budget, build, inspect, export."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from pooling import jobs, pool_services, selectors
from pooling.core.budget import judged_share, run_contributions, run_overlap, whatif
from pooling.core.pool_plots import depths_to_draw, judged_share_chart, pool_size_by_depth
from pooling.core.spec import LIVE_STRATEGIES, PRESETS, PoolSpec, spec_label
from pooling.core.strategies import order_tsv_lines, pool_tsv_lines
from pooling.errors import OverBudget, PoolBuildError
from pooling.forms import BudgetForm, PoolSpecForm, ReplanForm
from pooling.models import Campaign, Pool
from workbench.core.charts import Frame
from workbench.core.flags import truthy
from workbench.http import ids_of, plot_format_error, plot_response, streamed_attachment
from workbench.roles import organiser_required


def _campaign(slug: str) -> Campaign:
    return get_object_or_404(Campaign, slug=slug)


def _pool(slug: str, pool_id: int) -> Pool:
    return get_object_or_404(
        Pool.objects.select_related("campaign"), pk=pool_id, campaign__slug=slug
    )


@organiser_required
def pool_new(request: HttpRequest, slug: str) -> HttpResponse:
    """Choose a strategy, see its cost against the budget, and build the pool."""
    campaign = _campaign(slug)
    form = PoolSpecForm.for_request(
        request.POST if request.method == "POST" else request.GET, campaign
    )
    over_budget = ""
    whatif = _whatif_context(campaign, form)
    if request.method == "POST" and form.is_valid() and not whatif.get("whatif_error"):
        confirmed = form.cleaned_data["confirm_over_budget"]
        name = form.cleaned_data["name"] or spec_label(form.spec)
        if whatif.get("over_by") and not confirmed:
            needed = int(whatif["chosen"]["needed"])
            over_budget = str(OverBudget(whatif["budget_state"], needed, f"building pool {name}"))
        else:
            # The build reads every run file: a job, with its progress on its own page.
            job = jobs.pool_build_start(
                campaign=campaign,
                spec=form.spec,
                name=form.cleaned_data["name"],
                confirm_over_budget=confirmed,
                runs_per_team=form.pooled_per_team,
                created_by=request.user,
            )
            response = redirect("job_detail", job_id=job.pk)
            if request.htmx:
                response = HttpResponse(status=204, headers={"HX-Redirect": response.url})
            return response
    context = {
        "campaign": campaign,
        "form": form,
        "presets": PRESETS.values(),
        "live_strategies": LIVE_STRATEGIES,
        "over_budget_error": over_budget,
    }
    context |= whatif
    return render(request, "pooling/pool_new.html", context, status=409 if over_budget else 200)


@organiser_required
def pool_whatif(request: HttpRequest, slug: str) -> HttpResponse:
    """The what-if panel alone, refreshed by htmx as the strategy fields change."""
    campaign = _campaign(slug)
    form = PoolSpecForm.for_request(request.GET, campaign)
    context = {"campaign": campaign, "form": form} | _whatif_context(campaign, form)
    return render(request, "pooling/pool_new.html#whatif", context)


def _whatif_context(campaign: Campaign, form: PoolSpecForm) -> dict[str, Any]:
    if not campaign.runs.exists():
        return {"whatif_error": "Upload runs first: a pool is built from them."}
    if not form.is_valid():
        return {"whatif_error": form.error_text()}
    try:
        result = selectors.pool_whatif(campaign, form.spec, runs_per_team=form.pooled_per_team)
    except PoolBuildError as error:
        return {"whatif_error": str(error)}
    budget = result.budget
    context: dict[str, Any] = {
        "n_runs": result.n_runs,
        "rows": result.rows,
        "chosen": result.chosen,
        "budget_state": result.budget_state,
        "budget": budget,
        "over_by": result.over_by,
        "left_after": result.left_after,
        "chart": _chart(
            [int(row["depth"]) for row in result.rows],
            [int(row["needed"]) for row in result.rows],
            budget=budget,
            chosen=result.needed,
        ),
    }
    if budget is not None:
        context["fit_depth"] = result.fit_depth
        context["fits_everything"] = result.fits_everything
        context["deepest_rank"] = result.deepest_rank
        if form.spec.strata and not form.spec.is_depth_only:
            context["fit_scale"] = result.fit_scale
            context["scale_judges_all"] = result.scale_judges_all
    return context


def _chart(
    depths: list[int], sizes: list[int], *, budget: int | None, chosen: int
) -> dict[str, Any]:
    """Coordinates for the pool-size-by-depth SVG: a polyline, ticks and guide lines."""
    frame = Frame(depths[0], depths[-1], max([*sizes, chosen, budget or 0]))
    return {
        **frame.box(),
        "points": frame.points(zip(depths, sizes, strict=True)),
        "dots": [
            {"x": frame.x(d), "y": frame.y(s), "depth": d, "size": s}
            for d, s in zip(depths, sizes, strict=True)
        ],
        "x_ticks": [frame.x_tick(d, d) for d in depths],
        "budget_y": frame.y(budget) if budget is not None else None,
        "chosen_y": frame.y(chosen),
    }


@organiser_required
def pool_detail(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    pool = _pool(slug, pool_id)
    spec = PoolSpec.from_dict(pool.spec)
    runs = list(pool.runs.all())
    contributions, overlap = [], None
    if runs:
        ranked = selectors.ranked_runs_cached(pool.campaign, max_depth=spec.max_depth, runs=runs)
        contributions = run_contributions(ranked, depth=spec.max_depth).to_dict(orient="records")
        jaccard = run_overlap(ranked, depth=spec.max_depth).jaccard
        overlap = {
            "runs": list(jaccard.index),
            "rows": [
                (run, list(values))
                for run, values in zip(jaccard.index, jaccard.to_numpy(), strict=True)
            ],
        }
    late = pool.campaign.runs.exclude(pk__in=[run.pk for run in runs])
    topics = selectors.pool_topic_stats(pool)
    to_judge = sum(topic.to_judge for topic in topics)
    judged_share = sum(topic.judged for topic in topics) / to_judge if to_judge else 0.0
    return render(
        request,
        "pooling/pool_detail.html",
        {
            "campaign": pool.campaign,
            "pool": pool,
            "spec": spec,
            "topics": topics,
            "judged_share": judged_share,
            # Leaving runs out says little while most of the pool is unjudged.
            "reusability_ready": judged_share >= REUSABILITY_READY and not spec.source,
            "samples": selectors.pool_samples(pool),
            "without_text": selectors.count_without_text(pool),
            "to_judge_docnos": pool.entries.filter(sampled=True, retired=False)
            .values("docno")
            .distinct()
            .count(),
            "contributions": contributions,
            "overlap": overlap,
            "plots": POOL_PLOTS if runs and not spec.source else {},
            "late_runs": late if spec.accepts_late_runs else [],
            "revisions": [
                _with_label(revision) for revision in pool.revisions.select_related("created_by")
            ],
            "additions": pool.additions.prefetch_related("runs").annotate(
                n_entries=Count("entries")
            ),
            "command": ""
            if spec.source
            else " ".join(
                [
                    "python manage.py build_pool --campaign",
                    pool.campaign.slug,
                    *spec.to_args(),
                    *(["--runs-per-team", str(pool.runs_per_team)] if pool.runs_per_team else []),
                ]
            ),
        },
    )


# The share of the pool judged from which the pool page offers the reusability report.
REUSABILITY_READY = 0.9

POOL_PLOTS = {"depth": "Pool size by depth", "judged": "How much of each run's top k is judged"}


@organiser_required
def pool_plot(request: HttpRequest, slug: str, pool_id: int, kind: str) -> HttpResponse:
    """A picture of the pool page: `?format=svg` (default), `png`, or `csv` for its numbers."""
    if kind not in POOL_PLOTS:
        raise Http404(f"no picture {kind!r}")
    pool = _pool(slug, pool_id)
    fmt = request.GET.get("format", "svg")
    refused = plot_format_error(fmt)
    if refused:
        return refused
    spec = PoolSpec.from_dict(pool.spec)
    runs = list(pool.runs.all())
    if spec.source or not runs:
        raise Http404("this pool was not built from runs")
    ranked = selectors.ranked_runs_cached(pool.campaign, max_depth=spec.max_depth, runs=runs)
    judged = selectors.judged_pairs(pool.campaign)
    if kind == "depth":
        depths = depths_to_draw(spec.max_depth)
        totals = whatif(ranked, depths=depths, judged=judged).totals
        plot = pool_size_by_depth(totals, spec=spec)
    else:
        ks = sorted({k for k in (10, spec.max_depth) if k <= spec.max_depth})
        plot = judged_share_chart(judged_share(ranked, judged, ks=ks))
    name = f"{pool.campaign.slug}-pool{pool.pk}-{kind}"
    return plot_response(plot, fmt, name, download=bool(request.GET.get("download")))


@organiser_required
def pool_export(request: HttpRequest, slug: str, pool_id: int, kind: str) -> HttpResponse:
    """The pool as TSV, each topic's documents in presentation order, or the docnos to
    judge that have no text (one a line)."""
    pool = _pool(slug, pool_id)
    if kind == "without-text":
        lines = [f"{docno}\n" for docno in selectors.docnos_without_text(pool)]
        name = f"{pool.campaign.slug}-pool-{pool.pk}-without-text.txt"
        return streamed_attachment(lines, name, "text/plain; charset=utf-8")
    if kind not in ("tsv", "order"):
        raise Http404(f"no export {kind!r}: use tsv, order or without-text")
    entries = selectors.pool_entries_frame(pool)
    topic = request.GET.get("topic")
    if topic:
        entries = entries[entries["query_id"] == topic]
    lines = pool_tsv_lines(entries) if kind == "tsv" else order_tsv_lines(entries)
    suffix = f"-topic-{topic}" if topic else ""
    name = (
        f"{pool.campaign.slug}-pool-{pool.pk}{suffix}-{'entries' if kind == 'tsv' else 'order'}.tsv"
    )
    return streamed_attachment(lines, name, "text/tab-separated-values; charset=utf-8")


@organiser_required
@require_POST
def pool_add_runs(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    pool = _pool(slug, pool_id)
    runs = list(pool.campaign.runs.filter(pk__in=ids_of(request.POST.getlist("runs"))))
    try:
        addition = pool_services.pool_add_runs(
            pool=pool,
            runs=runs,
            created_by=request.user,
            confirm_over_budget=truthy(request.POST.get("confirm_over_budget")),
        )
    except OverBudget as error:
        messages.error(
            request, f"{error} Tick 'past the budget' beside the runs to add them anyway."
        )
    except PoolBuildError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request, f"Added {addition.entries.count()} entries from {len(runs)} run(s)."
        )
    return redirect("pooling:pool_detail", slug=slug, pool_id=pool.pk)


@organiser_required
@require_POST
def pool_retire(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    pool = pool_services.pool_retire(pool=_pool(slug, pool_id), retired_by=request.user)
    messages.success(
        request,
        f"Pool {pool.pk} retired: its topics left the assessors' lists; its judgments stay.",
    )
    return redirect("pooling:pool_detail", slug=slug, pool_id=pool.pk)


@organiser_required
@require_POST
def pool_reopen(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    pool = pool_services.pool_reopen(pool=_pool(slug, pool_id))
    messages.success(request, f"Pool {pool.pk} reopened: its assignments are back.")
    return redirect("pooling:pool_detail", slug=slug, pool_id=pool.pk)


@organiser_required
def pool_replan(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    """Re-plan topics of a pool being judged: preview what changes, then apply it as a job."""
    pool = _pool(slug, pool_id)
    base = PoolSpec.from_dict(pool.spec)
    if base.is_adaptive:
        return _replan_budget(request, pool, base)
    topics = list(pool.campaign.topics.values_list("topic_id", flat=True))
    unfinished = selectors.unfinished_topics(pool)
    data = request.POST if request.method == "POST" else request.GET
    form = ReplanForm(
        data if "which" in data else None,
        base=base,
        topics=topics,
        unfinished=unfinished,
        initial={"depth": base.depth or "", "strata": " ".join(str(s) for s in base.strata)},
    )
    context: dict[str, Any] = {
        "campaign": pool.campaign,
        "pool": pool,
        "form": form,
        "unfinished": unfinished,
        "budget_state": selectors.campaign_budget(pool.campaign),
    }
    if base.source:
        context["error"] = "A pool of imported judgments is not built from runs: it has no plan."
        return render(request, "pooling/pool_replan.html", context, status=409)
    if not form.is_bound:
        return render(request, "pooling/pool_replan.html", context)
    if not form.is_valid():
        return render(request, "pooling/pool_replan.html", context, status=400)
    try:
        preview = selectors.pool_revision_preview(
            pool, spec=form.spec, topics=form.cleaned_data["chosen"]
        )
    except PoolBuildError as error:
        context["error"] = str(error)
        return render(request, "pooling/pool_replan.html", context, status=400)
    over_by = context["budget_state"].over_by(preview.cost)
    keep = ("depth", "strata", "allow_gaps", "which", "topics", "reason")
    fields = [(name, value) for name in keep for value in data.getlist(name)]
    context |= {"preview": preview, "over_by": over_by, "fields": fields}
    if request.method == "POST":
        if over_by and not form.cleaned_data["confirm_over_budget"]:
            context["error"] = (
                "Tick 'past the budget' to apply a plan that costs more than is left."
            )
            return render(request, "pooling/pool_replan.html", context, status=409)
        job = jobs.pool_revise_start(
            pool=pool,
            spec=form.spec,
            topics=form.cleaned_data["chosen"],
            reason=form.cleaned_data["reason"],
            confirm_over_budget=form.cleaned_data["confirm_over_budget"],
            created_by=request.user,
        )
        return redirect("job_detail", job_id=job.pk)
    advice = selectors.pool_revision_advice(
        pool, spec=form.spec, topics=form.cleaned_data["chosen"], revision=preview
    )
    context["advice"] = advice
    if advice.keeping is not None:
        query = QueryDict(mutable=True)
        query.setlist("depth", [str(advice.keeping.depth or "")])
        query.setlist("strata", [" ".join(str(s) for s in advice.keeping.strata)])
        if advice.keeping.allow_gaps or form.cleaned_data["allow_gaps"]:
            query["allow_gaps"] = "on"
        for name in ("which", "topics", "reason"):
            query.setlist(name, data.getlist(name))
        context["keeping_query"] = query.urlencode()
    return render(request, "pooling/pool_replan.html", context)


def _replan_budget(request: HttpRequest, pool: Pool, base: PoolSpec) -> HttpResponse:
    """An adaptive pool's re-plan, its budget (as POST /api/pools/<id>/budget/):
    GET previews the change against the campaign's budget and the forecast, POST
    sets it through `pool_budget_set`, with the service's reasons when it refuses."""
    data = request.POST if request.method == "POST" else request.GET
    form = BudgetForm(
        data if "budget" in data else None, base=base, initial={"budget": base.budget}
    )
    context: dict[str, Any] = {
        "campaign": pool.campaign,
        "pool": pool,
        "adaptive": True,
        "budget_form": form,
        "budget_state": selectors.campaign_budget(pool.campaign),
    }
    if not form.is_bound:
        return render(request, "pooling/pool_replan.html", context)
    if not form.is_valid():
        return render(request, "pooling/pool_replan.html", context, status=400)
    budget = form.cleaned_data["budget"]
    change = selectors.pool_budget_preview(pool, budget=budget)
    context |= {"change": change, "over_by": context["budget_state"].over_by(change.cost)}
    if request.method == "POST":
        try:
            pool_services.pool_budget_set(
                pool=pool,
                budget=budget,
                created_by=request.user,
                confirm_over_budget=form.cleaned_data["confirm_over_budget"],
            )
        except OverBudget as error:
            context["error"] = str(error)
            return render(request, "pooling/pool_replan.html", context, status=409)
        except PoolBuildError as error:
            context["error"] = str(error)
            return render(request, "pooling/pool_replan.html", context, status=400)
        messages.success(
            request, f"Pool {pool.pk}: judging budget {change.old:,} -> {budget:,} judgments."
        )
        return redirect("pooling:pool_detail", slug=pool.campaign.slug, pool_id=pool.pk)
    return render(request, "pooling/pool_replan.html", context)


def _with_label(revision: Any) -> Any:
    revision.label = spec_label(PoolSpec.from_dict(revision.spec))
    return revision
