"""The pool's "Machine assessors" page (organisers): the campaign's machines, marked
as machines (the lexical one named baseline), a form to add or edit one (never
showing a key), a run on this pool with its job and progress, the last results,
and the prompt (the default and the override)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import Count, Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from judging import machine_selectors, machine_services
from judging.core import machine_prompt
from judging.forms import MachineForm, MachineRunForm
from judging.jobs import machine_judge, machine_judge_start
from judging.models import MachineAssessor
from pooling.selectors import pool_or_404
from workbench.jobs import job_kind
from workbench.models import Job
from workbench.roles import organiser_required


@organiser_required
def pool_machines(request: HttpRequest, pool_id: int) -> HttpResponse:
    pool = pool_or_404(pool_id)
    campaign = pool.campaign
    machines = machine_selectors.machines_of(campaign)
    by_id = {m.pk: m for m in machines}
    editing = by_id.get(_int(request.GET.get("edit")))
    form = MachineForm(initial=_initial(editing)) if editing else MachineForm()
    run_form = MachineRunForm()
    if request.method == "POST" and request.POST.get("action") == "run":
        run_form = MachineRunForm(request.POST)
        if run_form.is_valid():
            machine = by_id.get(run_form.cleaned_data["machine"])
            if machine is None:
                run_form.add_error("machine", "no such machine in this campaign")
            else:
                try:
                    job = machine_judge_start(
                        machine=machine,
                        pool=pool,
                        topics=run_form.cleaned_data["topics"] or None,
                        documents=run_form.cleaned_data["documents"],
                        created_by=request.user,
                    )
                except machine_services.MachineError as error:
                    run_form.add_error(None, str(error))
                else:
                    messages.success(request, f"Started: {job.title}.")
                    return redirect("judging:pool_machines", pool.pk)
    elif request.method == "POST":
        form = MachineForm(request.POST)
        editing = by_id.get(_int(request.POST.get("machine")))
        if form.is_valid():
            data = dict(form.cleaned_data)
            name = data.pop("name")
            try:
                if editing is not None:
                    machine_services.machine_update(machine=editing, **data)
                else:
                    machine_services.machine_create(campaign=campaign, name=name, **data)
            except machine_services.MachineError as error:
                form.add_error(None, str(error))
            else:
                messages.success(request, f"Machine {name} saved.")
                return redirect("judging:pool_machines", pool.pk)
    shown = by_id.get(_int(request.GET.get("prompt")))
    schema = campaign.schema
    context: dict[str, Any] = {
        "pool": pool,
        "campaign": campaign,
        "rows": [_row(machine, pool) for machine in machines],
        "form": form,
        "editing": editing,
        "run_form": run_form,
        "spend": machine_selectors.machine_spend(campaign, pool=pool),
        "prompt_machine": shown,
        "default_template": machine_prompt.DEFAULT_TEMPLATE,
        "system_text": machine_prompt.SYSTEM,
        "default_version": machine_prompt.prompt_version(schema),
        "override_version": (
            machine_prompt.prompt_version(schema, shown.prompt_override)
            if shown is not None and shown.prompt_override
            else ""
        ),
        "grades_text": machine_prompt.grades_text(schema),
        "placeholders": sorted(machine_prompt.PLACEHOLDERS),
    }
    status = 400 if form.errors or run_form.errors else 200
    return render(request, "judging/machine_assessors.html", context, status=status)


def _int(value: Any) -> int | None:
    try:
        number = int(str(value))
    except ValueError:
        return None
    return number if 0 < number < 2**31 else None


def _initial(machine: MachineAssessor) -> dict[str, Any]:
    fields = ("name", *machine_services._FIELDS)
    return {name: getattr(machine, name) for name in fields}


def _row(machine: MachineAssessor, pool: Any) -> dict[str, Any]:
    job = (
        Job.objects.filter(
            kind=job_kind(machine_judge), params__machine=machine.pk, params__pool=pool.pk
        )
        .order_by("-created_at", "-id")
        .first()
    )
    labels = machine.judgments.filter(topic__campaign=pool.campaign_id).aggregate(
        n=Count("pk"), last=Max("updated_at")
    )
    # Labels made by the command or the demo have no job of this page: say when.
    return {"machine": machine, "job": job, "labels": labels["n"], "last_labelled": labels["last"]}
