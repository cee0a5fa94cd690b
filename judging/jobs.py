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
