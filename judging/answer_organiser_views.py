"""Organiser pages of a generated-answers campaign: answer runs, each topic's nuggets
(written, edited as a new version, imported and exported in nuggetizer's JSONL), and
who judges which topic's answers."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from judging import answer_machine_services, answer_selectors, answer_services, answer_views
from judging.core import nugget_files
from judging.core.agreement import records, worst_first
from judging.forms import (
    AnswerAssignForm,
    GeneratedAnswersUploadForm,
    MachineAnswersForm,
    NuggetsEditForm,
    NuggetsImportForm,
    machines_option,
)
from judging.jobs import machine_nuggets_start
from judging.machine_client import EndpointError
from judging.machine_services import MachineError, machine_baseline
from judging.models import AnswerAssignment, MachineAssessor, NuggetList
from pooling import answer_services as answer_run_services
from pooling.models import Answer, AnswerRun, Campaign, Topic
from workbench import uploads
from workbench.core.problems import InputError
from workbench.http import attachment
from workbench.roles import assessor_accounts, organiser_required


def _get_answers_campaign(slug: str) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug)
    if not campaign.is_answers:
        raise Http404(f"{campaign.name} is not a generated-answers campaign")
    return campaign


def _assign_form(campaign: Campaign, data: Any = None) -> AnswerAssignForm:
    return AnswerAssignForm(
        data,
        topics=campaign.topics.all(),
        assessors=assessor_accounts().filter(is_active=True).order_by("username"),
    )


def _machines(campaign: Campaign) -> Any:
    return MachineAssessor.objects.filter(campaign=campaign).order_by("name")


def _machine_form(campaign: Campaign, data: Any = None) -> MachineAnswersForm:
    return MachineAnswersForm(data, machines=_machines(campaign), topics=campaign.topics.all())


def _page(
    request: HttpRequest, campaign: Campaign, status: int = 200, **extra: Any
) -> HttpResponse:
    context = {
        "campaign": campaign,
        "runs": campaign.answer_runs.select_related("team", "uploaded_by").order_by("tag"),
        "topics": answer_selectors.answers_overview(campaign),
        "upload_form": extra.pop("upload_form", None) or GeneratedAnswersUploadForm(),
        "import_form": extra.pop("import_form", None) or NuggetsImportForm(),
        "assign_form": extra.pop("assign_form", None) or _assign_form(campaign),
        "machine_form": extra.pop("machine_form", None) or _machine_form(campaign),
        "machines": _machines(campaign),
        **extra,
    }
    return render(request, "judging/answers_campaign.html", context, status=status)


@organiser_required
def answers_campaign(request: HttpRequest, slug: str) -> HttpResponse:
    return _page(request, _get_answers_campaign(slug))


def _uploaded_file(request: HttpRequest, form: Any) -> tuple[str, bytes] | int:
    """The form's file (name, bytes), or the status to answer with."""
    if uploads.refused(request):
        form.is_valid()
        form.add_error(None, uploads.limit_message(uploads.refused(request)))
        return 413
    if not form.is_valid():
        return 400
    upload = form.cleaned_data["file"]
    return upload.name, upload.read()


@organiser_required
@require_POST
def answers_upload(request: HttpRequest, slug: str) -> HttpResponse:
    """Store an answer file's runs (the organiser's), or refuse it with every problem."""
    campaign = _get_answers_campaign(slug)
    form = GeneratedAnswersUploadForm(request.POST, request.FILES)
    got = _uploaded_file(request, form)
    if isinstance(got, int):
        return _page(request, campaign, status=got, upload_form=form)
    name, data = got
    try:
        runs = answer_run_services.answer_runs_import(
            campaign=campaign,
            data=data,
            name=name,
            uploaded_by=request.user,
            pool_cited=form.cleaned_data["pool_cited"],
        )
    except InputError as error:
        return _page(request, campaign, status=400, upload_form=form, upload_error=error)
    n_answers = sum(run.answers.count() for run in runs)
    messages.success(
        request,
        f"Stored {len(runs)} run(s) of answers ({n_answers} answers): "
        + ", ".join(run.tag for run in runs),
    )
    return redirect("judging:answers_campaign", slug=campaign.slug)


@organiser_required
@require_POST
def answer_run_delete(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    campaign = _get_answers_campaign(slug)
    run = get_object_or_404(AnswerRun, pk=run_id, campaign=campaign)
    if not request.POST.get("confirm"):
        messages.error(request, f"Run {run.tag} not deleted: tick the box to confirm.")
        return redirect("judging:answers_campaign", slug=campaign.slug)
    answer_run_services.answer_run_delete(run=run)
    messages.success(request, f"Run {run.tag} deleted, with the labels of its answers.")
    return redirect("judging:answers_campaign", slug=campaign.slug)


@organiser_required
def nuggets_edit(request: HttpRequest, slug: str, topic_id: int) -> HttpResponse:
    """A topic's nuggets, one a line; saving makes the next version (judgments made
    against an earlier one keep it)."""
    campaign = _get_answers_campaign(slug)
    topic = get_object_or_404(Topic, pk=topic_id, campaign=campaign)
    current = answer_services.current_nuggets(topic)
    form = NuggetsEditForm(
        request.POST if request.method == "POST" else None,
        initial={"text": nugget_files.as_lines(answer_selectors.nugget_texts(current))},
    )
    error = None
    if form.is_bound and form.is_valid():
        try:
            nuggets = nugget_files.parse_lines(form.cleaned_data["text"], name="nuggets")
        except InputError as problem:
            error = problem
        else:
            saved = answer_services.nugget_list_save(
                topic=topic,
                nuggets=nuggets,
                created_by=request.user,
                note=form.cleaned_data["note"],
            )
            said = (
                "unchanged"
                if current and saved.pk == current.pk
                else f"saved as version {saved.version}"
            )
            messages.success(request, f"Nuggets of topic {topic.topic_id}: {said}.")
            return redirect("judging:nuggets_edit", slug=campaign.slug, topic_id=topic.pk)
    versions = topic.nugget_lists.select_related("created_by").prefetch_related("nuggets")
    machine_names = answer_selectors.machine_accounts(campaign)
    context = {
        "campaign": campaign,
        "topic": topic,
        "machines": _machines(campaign),
        "machine_names": machine_names,
        "current_by_machine": bool(
            current and current.created_by and current.created_by.username in machine_names
        ),
        "form": form,
        "error": error,
        "current": current,
        "versions": versions,
    }
    status = 400 if form.is_bound else 200
    return render(request, "judging/nuggets_edit.html", context, status=status)


@organiser_required
@require_POST
def nuggets_import(request: HttpRequest, slug: str) -> HttpResponse:
    """Topics' nuggets from nuggetizer's JSONL, each topic's next version; nothing on a problem."""
    campaign = _get_answers_campaign(slug)
    form = NuggetsImportForm(request.POST, request.FILES)
    got = _uploaded_file(request, form)
    if isinstance(got, int):
        return _page(request, campaign, status=got, import_form=form)
    name, data = got
    known = set(campaign.topics.values_list("topic_id", flat=True))
    try:
        read = nugget_files.read_nuggets(data, name=name, known_topics=known)
    except InputError as error:
        return _page(request, campaign, status=400, import_form=form, import_error=error)
    saved = answer_services.nuggets_import(campaign=campaign, read=read, created_by=request.user)
    messages.success(request, f"Nuggets of {len(saved)} topic(s) from {name}.")
    return redirect("judging:answers_campaign", slug=campaign.slug)


@organiser_required
def nuggets_export(request: HttpRequest, slug: str) -> HttpResponse:
    """Every topic's current nuggets in nuggetizer's JSONL (topics without nuggets left out)."""
    campaign = _get_answers_campaign(slug)
    lines = []
    for topic in campaign.topics.all():
        current = answer_services.current_nuggets(topic)
        if current is not None:
            query = topic.title or topic.description
            lines.append(
                nugget_files.nugget_record(
                    topic.topic_id, query, answer_selectors.nugget_texts(current)
                )
            )
    data = "".join(f"{line}\n" for line in lines).encode()
    return attachment(data, f"{campaign.slug}-nuggets.jsonl", "application/jsonl")


@organiser_required
@require_POST
def answer_assign(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _get_answers_campaign(slug)
    form = _assign_form(campaign, request.POST)
    if not form.is_valid():
        return _page(request, campaign, status=400, assign_form=form)
    data = form.cleaned_data
    for topic in data["topics"]:
        answer_services.answer_assignment_create(
            topic=topic, assessor=data["assessor"], task=data["task"], seed=data["seed"] or 0
        )
    messages.success(
        request, f"{data['assessor'].username} judges {len(data['topics'])} topic(s)' answers."
    )
    return redirect("judging:answers_campaign", slug=campaign.slug)


STATISTICS = ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic", "observed_agreement")


@organiser_required
def answers_agreement(request: HttpRequest, slug: str) -> HttpResponse:
    """Agreement on the answers' labels (`?task=nuggets|citations`), pooled over the
    campaign and per topic, with the relevance agreement's statistics."""
    campaign = _get_answers_campaign(slug)
    task = request.GET.get("task") if request.GET.get("task") == "citations" else "nuggets"
    report = answer_selectors.answer_agreement(
        campaign, task, machines=machines_option(request.GET.get("machines"))
    )
    with_machines = bool(report.machines)
    names = [a.name for a in report.aspects]
    aspect = request.GET.get("aspect") if request.GET.get("aspect") in names else names[0]
    statistic = request.GET.get("statistic")
    statistic = statistic if statistic in STATISTICS else STATISTICS[0]

    def worst(frame: Any, chosen: str, scope: str) -> list[dict[str, Any]]:
        rows = worst_first(frame, aspect=aspect, statistic=chosen)
        return records(rows[rows.scope == scope])

    context = {
        "campaign": campaign,
        "task": task,
        "tasks": AnswerAssignment.TASKS,
        "aspect_names": names,
        "aspect": aspect,
        "statistic": statistic,
        "statistics": STATISTICS,
        "n_labels": len(report.labels),
        "campaign_groups": records(report.groups[report.groups.scope == "campaign"]),
        "topic_groups": worst(report.groups, "krippendorff_alpha_nominal", "topic"),
        "campaign_pairs": worst(report.pairs, statistic, "campaign"),
        "topic_pairs": worst(report.pairs, statistic, "topic"),
        "with_machines": with_machines,
        "machine_accounts": report.machines,
        "confusion": report.confusion,
        "n_machines": len(answer_selectors.machine_accounts(campaign)),
    }
    return render(request, "judging/answers_agreement.html", context)


def _task(request: HttpRequest) -> str:
    return "citations" if request.GET.get("task") == "citations" else "nuggets"


@organiser_required
def answers_adjudication(request: HttpRequest, slug: str) -> HttpResponse:
    """The answers whose assessors disagree, each with its adjudication if decided."""
    campaign = _get_answers_campaign(slug)
    task = _task(request)
    disagreements = answer_selectors.answer_disagreements(campaign, task)
    context = {
        "campaign": campaign,
        "task": task,
        "tasks": AnswerAssignment.TASKS,
        "disagreements": disagreements,
        "decided": sum(d.adjudication is not None for d in disagreements),
    }
    return render(request, "judging/answers_adjudication.html", context)


@organiser_required
def answer_adjudicate(request: HttpRequest, slug: str, answer_id: int) -> HttpResponse:
    """One answer's labels by each assessor beside a form for the final ones (the
    run is not shown: the organiser decides blind too)."""
    campaign = _get_answers_campaign(slug)
    answer = get_object_or_404(Answer, pk=answer_id, run__campaign=campaign)
    task = _task(request)
    nugget_list = None
    if task == AnswerAssignment.NUGGETS:
        version = request.GET.get("version") or request.POST.get("version")
        nugget_list = get_object_or_404(
            NuggetList, pk=version if str(version).isdigit() else 0, topic=answer.topic
        )
    error = ""
    if request.method == "POST":
        labels = answer_views.posted_labels(request.POST, task, answer, nugget_list)
        try:
            answer_services.answer_adjudicate(
                answer=answer,
                task=task,
                labels=labels,
                nugget_list=nugget_list,
                reason=request.POST.get("reason", "")[:2000],
                decided_by=request.user,
            )
        except answer_services.AnswerLabelError as problem:
            error = f"Not saved: {problem}"
        else:
            messages.success(request, "Final labels saved.")
            return redirect(
                f"{reverse('judging:answers_adjudication', args=[campaign.slug])}?task={task}"
            )
    judgments = list(
        answer.judgments.filter(task=task, nugget_list=nugget_list)
        .exclude(assessor__machine__isnull=False)  # people's labels: a machine's is no vote
        .select_related("assessor")
    )
    adjudication = answer.adjudications.filter(task=task, nugget_list=nugget_list).first()
    items = answer_views.label_items(answer, task, nugget_list)
    for index, item in enumerate(items):
        item["by"] = [
            (j.assessor.username, answer_views.item_label(j.labels, task, index, answer))
            for j in judgments
        ]
        item["chosen"] = (
            request.POST.get(item["name"])
            if request.method == "POST"
            else answer_views.item_label(adjudication.labels, task, index, answer)
            if adjudication
            else None
        )
    context = {
        "campaign": campaign,
        "answer": answer,
        "task": task,
        "nugget_list": nugget_list,
        "items": items,
        "sentences": list(answer.sentences.prefetch_related("citations")),
        "choices": answer_views.choices_of(task),
        "adjudication": adjudication,
        "error": error,
        "is_nuggets": task == AnswerAssignment.NUGGETS,
    }
    return render(request, "judging/answer_adjudicate.html", context, status=400 if error else 200)


# --------------------------------------------------------------------------
# Machine help (issue 27 item 6): proposals, machine labels, pre-fill


def _run_machine(
    request: HttpRequest, machine: MachineAssessor, action: str, topics: list[str] | None
) -> str:
    """Inline for the lexical baseline, else a background job; what to tell the user."""
    if not machine.is_baseline:
        job = machine_nuggets_start(
            machine=machine, action=action, topics=topics, created_by=request.user
        )
        return f"Started: {job.title} (job {job.pk})."
    run = (
        answer_machine_services.machine_nuggets_propose
        if action == "propose"
        else answer_machine_services.machine_answers_assign
    )
    result = run(machine=machine, campaign=machine.campaign, topics=topics)
    if action == "propose":
        made = ", ".join(f"topic {t} version {v}" for t, v in result.versions.items())
        return (
            f"{machine.name} proposed nuggets: {made or 'no new version'}"
            f" ({result.unchanged} unchanged, {result.failed} failed)."
        )
    return (
        f"{machine.name} labelled {result.done} answer(s) ({result.unchanged} labelled before"
        + (
            f"; topics without nuggets: {' '.join(result.skipped_topics)}"
            if result.skipped_topics
            else ""
        )
        + ")."
    )


@organiser_required
@require_POST
def nuggets_propose(request: HttpRequest, slug: str, topic_id: int) -> HttpResponse:
    """Propose the topic's nuggets with a machine: its next version, made by the
    machine (the baseline inline, a chat machine as a job); then edit as usual."""
    campaign = _get_answers_campaign(slug)
    topic = get_object_or_404(Topic, pk=topic_id, campaign=campaign)
    name = request.POST.get("machine", "")
    try:
        machine = (
            machine_baseline(campaign=campaign)
            if name == "baseline"
            else get_object_or_404(MachineAssessor, campaign=campaign, pk=int(name or 0))
            if name.isdigit()
            else None
        )
        if machine is None:
            raise MachineError("choose a machine")
        messages.success(request, _run_machine(request, machine, "propose", [topic.topic_id]))
    except (MachineError, EndpointError) as error:
        messages.error(request, f"Nothing proposed: {error}")
    return redirect("judging:nuggets_edit", slug=campaign.slug, topic_id=topic.pk)


@organiser_required
@require_POST
def answers_machine(request: HttpRequest, slug: str) -> HttpResponse:
    """`action=assign`: the machine labels the topics' answers against their current
    nuggets; `action=prefill`: the topics' nugget assignments start from the
    machine's labels (no machine: pre-fill off)."""
    campaign = _get_answers_campaign(slug)
    form = _machine_form(campaign, request.POST)
    action = request.POST.get("action")
    if action not in ("assign", "prefill", "propose") or not form.is_valid():
        if action not in ("assign", "prefill", "propose"):
            form.is_valid()
            form.add_error(None, "choose propose, assign or prefill")
        return _page(request, campaign, status=400, machine_form=form)
    machine, topics = form.cleaned_data["machine"], list(form.cleaned_data["topics"])
    if action == "prefill":
        changed = answer_machine_services.answer_prefill_set(
            campaign=campaign, machine=machine, topics=topics or None
        )
        said = f"pre-filled by {machine.name}" if machine else "not pre-filled"
        messages.success(request, f"{changed} nugget assignment(s) {said}.")
        return redirect("judging:answers_campaign", slug=campaign.slug)
    if machine is None:
        form.add_error("machine", "choose a machine")
        return _page(request, campaign, status=400, machine_form=form)
    try:
        said = _run_machine(request, machine, action, [t.topic_id for t in topics] or None)
    except (MachineError, EndpointError) as error:
        form.add_error(None, str(error))
        return _page(request, campaign, status=400, machine_form=form)
    messages.success(request, said)
    return redirect("judging:answers_campaign", slug=campaign.slug)
