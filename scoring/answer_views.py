"""The scores page of a generated-answers campaign, and its exports (the same JSON
and table `manage.py nugget_scores` prints, from the same core)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from pooling.models import Campaign
from scoring import answer_selectors, answer_services
from scoring.core.tasks import citations, nuggets
from workbench.http import attachment
from workbench.roles import organiser_required


def answers_campaign_or_404(slug: str) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug)
    if not campaign.is_answers:
        raise Http404(f"{campaign.name} is not a generated-answers campaign")
    return campaign


@organiser_required
def answer_scores(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = answers_campaign_or_404(slug)
    scored = answer_selectors.nugget_scores(campaign)
    support = answer_selectors.citation_scores(campaign)
    measures = nuggets.MEASURES
    context = {
        "campaign": campaign,
        "measures": measures,
        "runs": [
            {
                "run": run.run,
                "n_topics": run.n_topics,
                "unjudged": scored.unjudged.get(run.run, 0),
                "values": [run.scores[m] for m in measures],
            }
            for run in scored.result.runs
        ],
        "not_scored": sorted(
            (run, n)
            for run, n in scored.unjudged.items()
            if run not in {r.run for r in scored.result.runs}
        ),
        "per_topic": [
            {"run": row.run, "topic": row.topic, "values": [row.scores[m] for m in measures]}
            for row in scored.result.per_topic
        ],
        "releases": campaign.answer_scores_releases.select_related("released_by"),
        "support_measures": citations.MEASURES,
        "support_runs": [
            {
                "run": run,
                "n": n,
                "unjudged": support.unjudged.get(run, 0),
                "values": [means[m] for m in citations.MEASURES],
            }
            for run, n, means in support.runs
        ],
    }
    return render(request, "scoring/answer_scores.html", context)


@organiser_required
def answer_scores_export(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    """`json`: the command's --format json; `tsv`: its table with each answer's scores (-q)."""
    campaign = answers_campaign_or_404(slug)
    result = answer_selectors.nugget_scores(campaign).result
    if fmt == "json":
        data = json.dumps(nuggets.as_json(result), indent=2, allow_nan=False) + "\n"
        return attachment(data.encode(), f"{campaign.slug}-nugget-scores.json", "application/json")
    if fmt == "tsv":
        lines = nuggets.text_lines(result, per_topic=True) if result.runs else []
        data = "".join(f"{line}\n" for line in lines)
        return attachment(
            data.encode(), f"{campaign.slug}-nugget-scores.tsv", "text/tab-separated-values"
        )
    raise Http404(f"no export {fmt!r}: json or tsv")


@organiser_required
@require_POST
def answer_scores_release(request: HttpRequest, slug: str) -> HttpResponse:
    """Release the current scores to the teams (a new version; earlier ones stay)."""
    campaign = answers_campaign_or_404(slug)
    release = answer_services.answer_scores_release(
        campaign=campaign, reason=request.POST.get("reason", "")[:2000], released_by=request.user
    )
    messages.success(request, f"Scores released to the teams as version {release.version}.")
    return redirect("scoring:answer_scores", slug=campaign.slug)
