"""Memory of a large run upload imported by a background job.

    python bench/bench_upload_memory.py [--megabytes 300] [--jobs 2]

Generates a run file of about --megabytes MB (200 topics, well-formed, as a
large submission is), keeps it where an upload waiting for its job is kept,
and runs the import job (`pooling.jobs.runs_import`, through
`workbench.jobs.run_job` as `db_worker` does) --jobs times in one process,
on a SQLite database of its own. Prints the process's resident memory
before, at its peak during each job, and after each job: the peak is what
parsing the file costs, and what stays after a job should come back to
where it started, so that a worker's memory stays flat from job to job.
For comparison it then imports the same bytes the way a request does for a
small upload (`run_services.runs_import` on the file read into memory, parsed
whole). On 2 cores, 319 MB: each job +512 MiB at its peak, 9 MiB left after;
the whole-bytes import +1.3 GiB, 687 MiB left until release_memory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TOPICS = 200


def write_run(path: Path, megabytes: int) -> int:
    """A well-formed run of ~`megabytes` MB: TOPICS topics, depth to fit. Returns lines."""
    import numpy as np

    line_bytes = len("301 Q0 clueweb12-0000tw-00-00000 1 12.3456 bigrun\n")
    depth = max(1, megabytes * 1_000_000 // line_bytes // TOPICS)
    with path.open("w") as out:
        for topic in range(1, TOPICS + 1):
            ranks = np.arange(1, depth + 1)
            docs = np.char.zfill(np.random.default_rng(topic).permutation(depth).astype(str), 5)
            scores = np.round(100.0 - ranks / depth * 90, 4)
            out.writelines(
                f"{topic} Q0 clueweb12-{topic:04d}tw-00-{doc} {rank} {score:.4f} bigrun\n"
                for doc, rank, score in zip(docs, ranks, scores, strict=True)
            )
    return TOPICS * depth


def memory() -> dict[str, int]:
    """VmRSS (now) and VmHWM (peak since the last reset), in bytes."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return fields


def reset_peak() -> None:
    """Start VmHWM again from the current RSS (Linux: clear_refs 5)."""
    Path("/proc/self/clear_refs").write_text("5")


def mib(n: int) -> str:
    return f"{n / 2**20:8.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-upload-"))
    try:
        os.environ.pop("DATABASE_URL", None)
        os.environ["WORKBENCH_DATA_DIR"] = str(work)
        os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
        import django

        django.setup()
        from django.core.files.storage import default_storage
        from django.core.management import call_command

        from pooling import run_services
        from pooling.models import Campaign, Run, Topic
        from workbench.jobs import release_memory, run_job
        from workbench.models import Job

        call_command("migrate", verbosity=0)
        campaign = Campaign.objects.create(name="Big", slug="big")
        Topic.objects.bulk_create(
            Topic(campaign=campaign, topic_id=str(t), position=t) for t in range(1, TOPICS + 1)
        )
        source = work / "bigrun.txt"
        started = time.perf_counter()
        lines = write_run(source, args.megabytes)
        size = source.stat().st_size
        print(
            f"run file: {size / 1e6:.0f} MB, {lines:,} lines, {TOPICS} topics "
            f"(written in {time.perf_counter() - started:.0f} s); "
            f"Arrow allocator: {os.environ['ARROW_DEFAULT_MEMORY_POOL']}"
        )
        release_memory()
        start = memory()["VmRSS"]
        print(f"before the first job: RSS {mib(start)}")
        for n in range(1, args.jobs + 1):
            pending = f"uploads/pending/bench{n}/bigrun.txt"
            Path(default_storage.path(pending)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, default_storage.path(pending))
            job = Job.objects.create(
                kind="pooling.jobs.runs_import",
                title="bench",
                params={"campaign": "big", "files": [{"path": pending, "name": "bigrun.txt"}]},
            )
            reset_peak()
            before = memory()["VmRSS"]
            started = time.perf_counter()
            run_job.call(job.pk)
            seconds = time.perf_counter() - started
            job.refresh_from_db()
            after = memory()
            print(
                f"job {n}: {job.state} in {seconds:.1f} s; RSS before {mib(before)}, "
                f"peak {mib(after['VmHWM'])} (+{mib(after['VmHWM'] - before).strip()}, "
                f"{(after['VmHWM'] - before) / size:.1f}x the file), "
                f"after {mib(after['VmRSS'])} "
                f"(+{mib(after['VmRSS'] - start).strip()} since the start)"
            )
            if job.state != "done":
                raise SystemExit(job.error)
            Run.objects.all().delete()
        # The request's way, for small uploads: the whole file read into memory first.
        reset_peak()
        before = memory()["VmRSS"]
        run_services.runs_import(
            campaign=campaign, uploads=[run_services.RunUpload("bigrun.txt", source.read_bytes())]
        )
        after = memory()
        release_memory()
        print(
            f"in-request import of the same bytes: peak {mib(after['VmHWM'])} "
            f"(+{mib(after['VmHWM'] - before).strip()}), after it {mib(after['VmRSS'])}, "
            f"after release_memory {mib(memory()['VmRSS'])}"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
