"""What each adaptive strategy would have found: the pooling simulator
(`scoring.core.pool_simulation`) replayed on a pool's runs, with the labels of a
chosen earlier pool or of an uploaded qrels file as the truth. Made by a job
(`scoring.jobs.strategy_replay`); the pool page, its pictures and the API find
the job again by its params (`replay_params`)."""

from __future__ import annotations

import hashlib
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from pooling.core.spec import PoolSpec
from pooling.models import Pool
from workbench.jobs import job_start_once
from workbench.models import Job

REPLAY_JOB = "scoring.jobs.strategy_replay"
REPLAY_STRATEGIES = ("depth", "mtf", "hedge", "bandit", "thompson", "active")
DEFAULT_DEPTH = 100


class ReplayError(ValueError):
    """A replay that cannot be made: the message says why (file:line for a bad qrels)."""


def replay_budgets(text: str) -> list[int]:
    """ "500, 1000" -> [500, 1000]; ReplayError for anything but positive integers."""
    budgets = []
    for part in text.replace(",", " ").split():
        if not part.isdigit() or int(part) < 1:
            raise ReplayError(f"budget {part!r}: give positive numbers of judgments")
        budgets.append(int(part))
    if not budgets:
        raise ReplayError("give at least one budget (judgments), e.g. 500,1000")
    return sorted(set(budgets))


def replay_depth(pool: Pool) -> int:
    """The candidates' depth: the pool's deepest rank, else DEFAULT_DEPTH."""
    spec = PoolSpec.from_dict(pool.spec)
    return spec.max_depth if not spec.source and spec.max_depth else DEFAULT_DEPTH


def replay_source_pool(pool: Pool, source_id: Any) -> Pool:
    """An earlier pool of the same campaign whose final labels are the truth."""
    try:
        source = pool.campaign.pools.get(pk=int(source_id))
    except (Pool.DoesNotExist, TypeError, ValueError):
        raise ReplayError(f"no pool {source_id!r} in campaign {pool.campaign.slug}") from None
    return source


def replay_store_qrels(data: bytes, name: str) -> str:
    """Check an uploaded qrels file (ReplayError naming file, line and reason) and
    store it for the job; returns its storage path (named by its digest)."""
    from scoring.core.qrels import read_qrels
    from workbench.core.problems import InputError

    try:
        read_qrels(data, name=name)
    except InputError as error:
        raise ReplayError(str(error)) from None
    digest = hashlib.sha256(data).hexdigest()
    path = f"replays/{digest}.qrels"
    if not default_storage.exists(path):
        default_storage.save(path, ContentFile(data))
    return path


def replay_params(
    pool: Pool,
    *,
    budgets: list[int],
    source_pool: int | None = None,
    qrels: str = "",
    seed: int = 0,
) -> dict[str, Any]:
    """The job's params: which pool's runs, which truth, the budgets and seed."""
    return {
        "pool": pool.pk,
        "source_pool": source_pool,
        "qrels": qrels,
        "budgets": budgets,
        "seed": seed,
        "depth": replay_depth(pool),
    }


def replay_start(*, pool: Pool, params: dict[str, Any], user: Any = None) -> Job:
    truth = f"pool {params['source_pool']}" if params["source_pool"] else "uploaded qrels"
    return job_start_once(
        kind=REPLAY_JOB,
        title=f"What each strategy would have found on pool {pool.pk} ({truth})",
        params=params,
        campaign=pool.campaign,
        created_by=user,
    )


def replay_latest(pool: Pool) -> Job | None:
    """The newest replay of the pool's runs, whatever its truth and budgets."""
    return Job.objects.filter(kind=REPLAY_JOB, params__pool=pool.pk).order_by("-id").first()


def replay_job(pool: Pool, job_id: Any) -> Job | None:
    """The pool's replay job of that id; None for an id that is no database id."""
    text = str(job_id)
    if not text.isdigit() or int(text[:20]) > 2**63 - 1:
        return None
    return Job.objects.filter(kind=REPLAY_JOB, params__pool=pool.pk, pk=job_id).first()


def replay_run(params: dict[str, Any], progress: Any = None) -> dict[str, Any]:
    """Replay every strategy (the job's work): the simulator's JSON report, and the
    relevant-found curves for the pictures."""
    from judging.selectors import final_labels
    from scoring.core.analysis.arguments import one_number
    from scoring.core.measures.catalog import TREC
    from scoring.core.pool_simulation import Settings, SimulationError, simulate
    from scoring.core.pool_simulation_cli import curves, to_json
    from scoring.core.qrels import read_qrels
    from workbench.core.run_files import read_run_cache

    pool = Pool.objects.select_related("campaign").get(pk=params["pool"])
    if params["source_pool"]:
        labels = final_labels(Pool.objects.get(pk=params["source_pool"]))
        qrels = labels[["query_id", "doc_id", "relevance"]]
        if qrels.empty:
            raise ReplayError(f"pool {params['source_pool']} has no final label yet")
    else:
        with default_storage.open(params["qrels"], "rb") as file:
            qrels = read_qrels(file.read(), name="uploaded qrels")
    runs = [read_run_cache(run.cache_file.path) for run in pool.runs.order_by("tag")]
    if not runs:
        raise ReplayError(f"pool {pool.pk} was built from no runs: there is nothing to replay")
    settings = Settings(
        strategies=REPLAY_STRATEGIES,
        budgets=tuple(params["budgets"]),
        measure=one_number(TREC.select(["map"]), "map"),
        seed=params["seed"],
        depth=params["depth"],
    )
    total = len(REPLAY_STRATEGIES) * max(params["budgets"])
    if progress is not None:
        progress(done=0, total=total)
    done = [0]

    def advance(n: int) -> None:
        done[0] += n
        if progress is not None:
            progress(done=min(done[0], total), total=total)

    try:
        simulation = simulate(qrels, runs, settings, progress=advance)
    except SimulationError as error:
        raise ReplayError(str(error)) from None
    drawn = {
        name: [at.tolist(), found.tolist()] for name, (at, found) in curves(simulation).items()
    }
    return {"report": to_json(simulation), "curves": drawn}


def replay_plot(job: Job, fmt: str) -> tuple[bytes, str]:
    """The relevant-found picture of a done replay: (content, content type)."""
    import numpy as np

    from scoring.core.plots import relevant_found

    result = job.result
    drawn = {
        name: (np.array(at), np.array(found)) for name, (at, found) in result["curves"].items()
    }
    plot = relevant_found(
        drawn, result["report"]["relevant"], "Relevant documents found (equal allocation)"
    )
    if fmt == "csv":
        return plot.csv().encode(), "text/csv; charset=utf-8"
    types = {"svg": "image/svg+xml", "png": "image/png"}
    return plot.render(fmt), types[fmt]
