"""Organiser pages of judging: assignments and progress, overlap, agreement,
adjudication, and a document's judgment history."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe

from judging import selectors, services
from judging.core.agreement import confusion_matrix, records, worst_first
from judging.core.highlight import highlight_html, query_terms
from judging.core.overlap import OverlapPlanError
from judging.forms import (
    HistoryLookupForm,
    MachineUseForm,
    OverlapForm,
    PolicyForm,
    machines_option,
)
from judging.models import Assignment, DocumentNote, Judgment, JudgmentEvent, PoolPolicy
from judging.status import campaign_status
from pooling.errors import OverBudget
from pooling.models import Document, Pool, PoolEntry, Topic
from pooling.selectors import campaign_budget, count_without_text, pool_or_404
from workbench.core.label_schema import LabelError
from workbench.http import ids_of
from workbench.roles import organiser_required


@organiser_required
def pool_assignments(request: HttpRequest, pool_id: int) -> HttpResponse:
    """Progress per topic and assessor, and the form to assign topics."""
    pool = pool_or_404(pool_id)
    if request.method == "POST":
        # Dealt in the order the page lists them: topics by position, assessors by name.
        topics = pool.campaign.topics.filter(
            pk__in=ids_of(request.POST.getlist("topics"))
        ).order_by("position")
        assessors = User.objects.filter(
            pk__in=ids_of(request.POST.getlist("assessors")), is_active=True
        ).order_by("username")
        try:
            created = services.assignments_create(pool=pool, topics=topics, assessors=assessors)
        except services.AssignmentError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, f"{len(created)} assignment(s) in place.")
        return redirect("judging:pool_assignments", pool.pk)
    return render(request, "judging/pool_assignments.html", _assignments_context(pool))


def _assignments_context(pool: Pool) -> dict[str, Any]:
    assignments = (
        pool.assignments.select_related("topic", "assessor")
        .order_by("topic__position", "kind", "assessor__username")
        .list_with_progress()
    )
    for assignment in assignments:
        assignment.percent = (
            round(100 * assignment.judged / assignment.total) if assignment.total else 100
        )
    assigned = {a.topic_id for a in assignments if a.kind == Assignment.PRIMARY}
    per_assessor: dict[str, list[int]] = {}
    for assignment in assignments:
        judged_total = per_assessor.setdefault(assignment.assessor.username, [0, 0])
        judged_total[0] += assignment.judged
        judged_total[1] += assignment.total
    return {
        "pool": pool,
        "campaign": pool.campaign,
        "assignments": assignments,
        "unassigned": [t for t in pool.campaign.topics.all() if t.pk not in assigned],
        "topics": pool.campaign.topics.all(),
        "assessors": list(selectors.eligible_assessors(pool.campaign)),
        "per_assessor": sorted(per_assessor.items()),
        "without_text": count_without_text(pool),
    }


@organiser_required
def document_history_lookup(request: HttpRequest) -> HttpResponse:
    """The history form's target: on to the history page of that topic and docno."""
    form = HistoryLookupForm(request.GET)
    if not form.is_valid():
        raise Http404("choose a topic and give a docno")
    return redirect(
        "judging:document_history", form.cleaned_data["topic"].pk, form.cleaned_data["docno"]
    )


@organiser_required
def document_history(request: HttpRequest, topic_id: int, docno: str) -> HttpResponse:
    """Every change ever made to any judgment of one document for one topic, and its
    adjudication: who decided, when and why. A docno the campaign has never seen is a 404."""
    topic = get_object_or_404(Topic.objects.select_related("campaign"), pk=topic_id)
    events = JudgmentEvent.objects.filter(topic=topic, docno=docno).select_related("assessor")
    judgments = Judgment.objects.filter(topic=topic, docno=docno).select_related("assessor")
    adjudication = topic.adjudications.filter(docno=docno).select_related("decided_by").first()
    document = Document.objects.filter(campaign=topic.campaign, docno=docno).first()
    pooled = PoolEntry.objects.filter(topic=topic, docno=docno).exists()
    if not (document or pooled or adjudication or events.exists() or judgments.exists()):
        raise Http404(
            f"no document {docno!r} in campaign {topic.campaign.slug}: not loaded, "
            f"not pooled and never judged for topic {topic.topic_id}"
        )
    return render(
        request,
        "judging/document_history.html",
        {
            "topic": topic,
            "docno": docno,
            "document": document,
            "events": events,
            "judgments": judgments,
            "notes": _notes(topic, docno),
            "adjudication": adjudication,
            "schema": topic.campaign.schema,
        },
    )


def _notes(topic: Topic, docno: str) -> QuerySet[DocumentNote]:
    """The assessors' notes and cannot-judge reasons on one document of a topic."""
    return DocumentNote.objects.filter(topic=topic, docno=docno).select_related("assessor")


# --------------------------------------------------------------------------
# Overlap


@organiser_required
def pool_overlap(request: HttpRequest, pool_id: int) -> HttpResponse:
    """Plan overlap judgments: preview their cost against the budget, then assign them."""
    pool = pool_or_404(pool_id)
    topics = pool.campaign.topics.all()
    data = request.POST if request.method == "POST" else request.GET
    form = OverlapForm(
        data if "k" in data else None,
        topics=[t.topic_id for t in topics],
        assessors=list(selectors.eligible_assessors(pool.campaign)),
        pool_assessors=list(selectors.pool_assessors(pool)),
    )
    context: dict[str, Any] = {
        "pool": pool,
        "campaign": pool.campaign,
        "topics": topics,
        "form": form,
        "current": selectors.policy_of(pool).overlap_spec,
        "budget_state": campaign_budget(pool.campaign),
    }
    if not form.is_bound or not form.is_valid():
        return render(request, "judging/pool_overlap.html", context)
    assessors = form.chosen_assessors()
    try:
        if request.method == "POST":
            plan = services.overlap_assign(
                pool=pool,
                spec=form.spec,
                assessors=assessors,
                confirm_over_budget=form.cleaned_data["confirm_over_budget"],
                user=request.user,
            )
            messages.success(request, f"Assigned {plan.cost.total} overlap judgments.")
            return redirect("judging:pool_assignments", pool.pk)
        context["plan"] = services.overlap_plan(pool=pool, spec=form.spec, assessors=assessors)
    except OverBudget as error:
        context["plan"] = services.overlap_plan(pool=pool, spec=form.spec, assessors=assessors)
        context["over_budget_error"] = str(error)
        return render(request, "judging/pool_overlap.html", context, status=409)
    except (OverlapPlanError, services.AssignmentError) as error:
        context["error"] = str(error)
    if "plan" in context:
        # The topics in the campaign's order, as every other page lists them (the
        # cost counts them in string order: 1037798 before 19335).
        per_topic = context["plan"].cost.per_topic
        context["topic_costs"] = [
            (t.topic_id, per_topic[t.topic_id]) for t in topics if t.topic_id in per_topic
        ]
        extra, state = context["plan"].cost.total, context["budget_state"]
        context["over_by"] = state.over_by(extra)
        # What "fits" means: the work the campaign's plan still needs, these included.
        after = campaign_status(pool.campaign).forecast_with(extra)
        context["after"] = after
        if state.remaining is not None:
            context["plan_over_by"] = max(after.remaining_work - state.remaining, 0)
    return render(request, "judging/pool_overlap.html", context)


# --------------------------------------------------------------------------
# Agreement


@organiser_required
def pool_agreement(request: HttpRequest, pool_id: int) -> HttpResponse:
    """Agreement per topic and per assessor pair, worst first; a pair's confusion matrix.
    Machine assessors take part as assessors (`?machines=0` leaves them out), with the
    humans' final labels by each machine's labels."""
    pool = pool_or_404(pool_id)
    machines = machines_option(request.GET.get("machines"))
    report = selectors.agreement_report(pool, machines=machines)
    names = [a.name for a in report.aspects]
    aspect_name = request.GET.get("aspect") if request.GET.get("aspect") in names else names[0]
    statistic = request.GET.get("statistic", "cohen_kappa")
    pairs = report.pairs
    context: dict[str, Any] = {
        "pool": pool,
        "campaign": pool.campaign,
        "aspect_names": names,
        "aspect": aspect_name,
        "statistic": statistic,
        "statistics": [
            "cohen_kappa",
            "cohen_kappa_linear",
            "cohen_kappa_quadratic",
            "observed_agreement",
        ],
        "n_labels": len(report.labels),
        "campaign_groups": _rows(report.groups[(report.groups.scope == "campaign")]),
        "topic_groups": _rows(
            _worst(report.groups, aspect_name, "krippendorff_alpha_nominal", scope="topic")
        ),
        "campaign_pairs": _named(report, _worst(pairs, aspect_name, statistic, scope="campaign")),
        "topic_pairs": _named(report, _worst(pairs, aspect_name, statistic, scope="topic")),
        "assessors": _rows(report.assessors),
        "overlap": _named(report, _worst(pairs, "relevance", "voorhees_overlap", scope="campaign")),
        "machines": report.machines,
        "machines_available": report.machines_available,
        "machines_shown": bool(report.machines),
        "machines_param": "" if machines is None else ("1" if machines else "0"),
        "human_machine": [
            m | {"table": list(zip(m["values"], m["counts"], strict=True))}
            for m in selectors.human_machine_matrices(pool, report, aspect=aspect_name)
        ],
    }
    a, b = request.GET.get("a"), request.GET.get("b")
    if a and b:
        matrix = _confusion(report, aspect_name, a, b, request.GET.get("topic") or None)
        context["confusion"] = {
            "a": report.display_name(a),
            "b": report.display_name(b),
            "topic": request.GET.get("topic"),
            "matrix": matrix,
        }
    return render(request, "judging/pool_agreement.html", context)


def _named(report: Any, frame: Any) -> list[dict[str, Any]]:
    """Pair rows with each side's display name and whether it is a machine."""
    rows = _rows(frame)
    for row in rows:
        for side in ("a", "b"):
            who = row[f"assessor_{side}"]
            row[f"name_{side}"] = report.display_name(who)
            row[f"is_machine_{side}"] = report.is_machine(who)
    return rows


def _worst(frame: Any, aspect: str, statistic: str, *, scope: str) -> Any:
    chosen = worst_first(frame, aspect=aspect, statistic=statistic)
    return chosen[chosen.scope == scope]


def _rows(frame: Any) -> list[dict[str, Any]]:
    return records(frame)


def _confusion(report: Any, aspect: str, a: str, b: str, topic: str | None) -> dict[str, Any]:
    matrix = confusion_matrix(
        report.labels, aspect=report.aspect(aspect), assessor_a=a, assessor_b=b, query_id=topic
    )
    return {
        "values": list(matrix.columns),
        "rows": [
            (index, list(row)) for index, row in zip(matrix.index, matrix.to_numpy(), strict=True)
        ],
    }


# --------------------------------------------------------------------------
# Adjudication


@organiser_required
def pool_adjudication(request: HttpRequest, pool_id: int) -> HttpResponse:
    """The queue of disagreements, and the stored policy that makes final labels."""
    pool = pool_or_404(pool_id)
    policy = selectors.policy_of(pool)
    if request.method == "POST" and request.POST.get("form") == "machine_use":
        use = MachineUseForm(request.POST)
        if use.is_valid():
            services.policy_machine_use_update(pool=pool, **use.cleaned_data)
            messages.success(request, "Queue order and post-edit saved.")
        else:
            messages.error(request, f"Not changed: {use.errors.as_text()}")
        return redirect("judging:pool_adjudication", pool.pk)
    if request.method == "POST":
        form = PolicyForm(request.POST)
        try:
            if not form.is_valid():
                raise ValueError(form.errors.as_text())
            services.policy_update(
                pool=pool,
                steps=form.cleaned_data["policy"],
                disagreement_mode=form.cleaned_data["mode"] or policy.disagreement_mode,
            )
        except ValueError as error:
            messages.error(request, f"Policy not changed: {error}")
        else:
            messages.success(request, "Policy saved.")
        return redirect("judging:pool_adjudication", pool.pk)
    queue = selectors.disagreements(pool)
    topics = dict(pool.campaign.topics.values_list("topic_id", "pk"))
    items = (
        [{**row, "topic_pk": topics[row["query_id"]]} for row in _rows(queue)] if len(queue) else []
    )
    schema = pool.campaign.schema
    question_names = {q.id: q.name for q in (schema.relevance, *schema.aspects)}
    for item in items:  # what each assessor said, and where they differ, by the schema's names
        item["given"] = [
            f"{who}: {schema.relevance.value_name(value)}"
            for who, value in zip(item["assessors"], item["relevance_values"], strict=True)
        ]
        item["differs"] = [question_names.get(q, q) for q in item["disagrees_on"]]
    return render(
        request,
        "judging/pool_adjudication.html",
        {
            "pool": pool,
            "campaign": pool.campaign,
            "policy": policy,
            "policy_text": ", ".join(policy.label_policy["steps"]),
            "modes": PoolPolicy.DISAGREEMENT_MODES,
            "queue_orders": PoolPolicy.QUEUE_ORDERS,
            "adaptive": bool(pool.spec.get("strategy")),
            "items": items,
            "adjudicated": selectors.adjudicated_count(pool),
        },
    )


@organiser_required
def adjudicate(request: HttpRequest, pool_id: int, topic_id: int, docno: str) -> HttpResponse:
    """One item: the topic, the document and every assessor's label; record the final one."""
    pool = pool_or_404(pool_id)
    topic = get_object_or_404(Topic, pk=topic_id, campaign=pool.campaign)
    try:
        services.adjudication_check(pool=pool, topic=topic, docno=docno)
    except services.AdjudicationError as refused:  # the reason, as the API gives it
        return HttpResponse(str(refused), status=404, content_type="text/plain; charset=utf-8")
    schema = pool.campaign.schema
    error = ""
    if request.method == "POST":
        aspects = {a.id: request.POST.get(a.id) for a in schema.aspects if a.id in request.POST}
        try:
            services.adjudication_record(
                pool=pool,
                topic=topic,
                docno=docno,
                relevance=request.POST.get("relevance"),
                aspects=aspects,
                reason=request.POST.get("reason", ""),
                decided_by=request.user,
            )
        except LabelError as exc:
            error = str(exc)
        else:
            messages.success(request, f"Final label of {docno} recorded.")
            return redirect("judging:pool_adjudication", pool.pk)
    document = Document.objects.filter(campaign=pool.campaign, docno=docno).first()
    terms = query_terms(topic.title)
    judgments = Judgment.objects.filter(topic=topic, docno=docno).select_related("assessor")
    return render(
        request,
        "judging/adjudicate.html",
        {
            "pool": pool,
            "campaign": pool.campaign,
            "topic": topic,
            "docno": docno,
            "document": document,
            "text_html": mark_safe(highlight_html(document.text, terms)) if document else "",
            "judgments": judgments,
            "notes": _notes(topic, docno),
            "adjudication": topic.adjudications.filter(docno=docno).first(),
            "questions": (schema.relevance, *schema.aspects),
            "schema": schema,
            "error": error,
        },
    )
