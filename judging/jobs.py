"""The judging app's long work, run as jobs (see `workbench.jobs`).

`machine_judge` departs on purpose from "a kind stores nothing unless it
finishes": it stores batch by batch (each batch in one transaction), so that a
cancelled or interrupted run keeps the labels it paid for and the next run goes
on from there; its result is recorded in the transaction that ends it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction

from judging import machine_services
from judging.models import MachineAssessor
from pooling.models import Pool
from workbench.jobs import JobProgress, job_start
from workbench.models import Job


def machine_judge(job: Job, progress: JobProgress) -> dict[str, Any]:
    """Label a pool's documents with a machine assessor: params machine (id), pool
    (id), topics (list or null), documents (unjudged|all). Progress counts documents."""
    params = job.params
    machine = MachineAssessor.objects.select_related("campaign").get(pk=params["machine"])
    pool = Pool.objects.select_related("campaign").get(pk=params["pool"])
    progress.note(f"machine {machine.name} ({machine.model_label}) on pool {pool.pk}")
    result = machine_services.machine_judge_run(
        machine=machine,
        pool=pool,
        topics=params.get("topics") or None,
        documents=params.get("documents", "unjudged"),
        progress=progress,
    )
    for line in result.lines():
        progress.note(line)
    with transaction.atomic():
        progress.stored(result.as_dict())
    return result.as_dict()


def machine_judge_start(
    *,
    machine: MachineAssessor,
    pool: Pool,
    topics: Sequence[str] | None = None,
    documents: str = "unjudged",
    created_by: Any = None,
) -> Job:
    """Check the run (the plan and the key) and start its job (`machine_judge`)."""
    machine_services.machine_judge_plan(
        machine=machine, pool=pool, topics=topics, documents=documents
    )
    if not machine.is_baseline:
        machine_services.api_key_of(machine)
    return job_start(
        kind=machine_judge,
        title=f"Machine {machine.name} labels pool {pool.name}",
        params={
            "machine": machine.pk,
            "pool": pool.pk,
            "topics": list(topics or []),
            "documents": documents,
        },
        campaign=pool.campaign,
        created_by=created_by,
    )


def machine_nuggets(job: Job, progress: JobProgress) -> dict[str, Any]:
    """A machine's help on a generated-answers campaign: params machine (id), campaign
    (id), action (propose|assign), topics (list or null). Stores topic by topic (each
    in one transaction), as `machine_judge` does batch by batch: a run again goes on."""
    from judging import answer_machine_services

    params = job.params
    machine = MachineAssessor.objects.select_related("campaign").get(pk=params["machine"])
    run = (
        answer_machine_services.machine_nuggets_propose
        if params["action"] == "propose"
        else answer_machine_services.machine_answers_assign
    )
    progress.note(f"machine {machine.name} ({machine.model_label}): {params['action']}")
    result = run(
        machine=machine,
        campaign=machine.campaign,
        topics=params.get("topics") or None,
        progress=progress,
    )
    for line in result.lines():
        progress.note(line)
    with transaction.atomic():
        progress.stored(result.as_dict())
    return result.as_dict()


def machine_nuggets_start(
    *,
    machine: MachineAssessor,
    action: str,
    topics: Sequence[str] | None = None,
    created_by: Any = None,
) -> Job:
    """Check the run (topics, the key) and start its job (`machine_nuggets`)."""
    from judging import answer_machine_services

    if action not in ("propose", "assign"):
        raise machine_services.MachineError(f"action must be propose or assign; got {action!r}")
    answer_machine_services.check_run(machine=machine, campaign=machine.campaign, topics=topics)
    what = "proposes nuggets" if action == "propose" else "labels answers"
    return job_start(
        kind=machine_nuggets,
        title=f"Machine {machine.name} {what}",
        params={
            "machine": machine.pk,
            "action": action,
            "topics": list(topics or []),
        },
        campaign=machine.campaign,
        created_by=created_by,
    )
