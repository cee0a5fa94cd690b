"""Benchmark a machine assessor's whole job against a local endpoint that answers at once.

    python bench/bench_machine.py                     # 1,000 and 4,000 documents, concurrency 16
    python bench/bench_machine.py --sizes 2000 8000 --concurrency 16

For each size, in a child process of its own (so that its peak memory is its own):
a fresh SQLite database (or --database-url), a campaign with one pool of SIZE
documents (distinct texts, so that nothing is cached), a chat machine at the given
concurrency against a loopback chat-completions server (tests/judging/chat_server.py,
a thread of the same process), and the whole run (`machine_judge_run`: prompts,
requests, parsing, storing batch by batch). Prints documents per second (target
>= 200 at concurrency 16) and the peak resident memory (ru_maxrss) of the
whole child and after making the data: what the run adds should stay flat in the
number of documents. A second run of the same pool prints the
cached rate (no request sent).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def child(size: int, concurrency: int, url: str | None) -> dict[str, float]:
    workdir = tempfile.mkdtemp(prefix="bench-machine-")
    os.environ["DATABASE_URL"] = url or f"sqlite:///{workdir}/db.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DEBUG"] = "false"
    os.environ.setdefault("SECRET_KEY", "benchmark")
    os.environ.setdefault("WORKBENCH_SHARED_DIR", workdir)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from judging import machine_services
    from judging.models import MachineJudgment
    from pooling.models import Campaign, Document, Pool, PoolEntry, Topic
    from tests.judging.chat_server import ChatServer

    campaign = Campaign.objects.create(name="bench", slug="bench-machine")
    topics = Topic.objects.bulk_create(
        Topic(campaign=campaign, topic_id=str(t), title=f"treatment {t}", position=t)
        for t in range(1, 11)
    )
    sentence = "The treatment was compared with a placebo in a randomised trial of adults. "
    Document.objects.bulk_create(
        (
            Document(campaign=campaign, docno=f"D{n:07d}", text=f"Study {n}. " + sentence * 20)
            for n in range(size)
        ),
        batch_size=5_000,
    )
    pool = Pool.objects.create(campaign=campaign, name="bench", spec={"depth": size})
    PoolEntry.objects.bulk_create(
        (
            PoolEntry(
                pool=pool,
                topic=topics[n % 10],
                docno=f"D{n:07d}",
                best_rank=n // 10 + 1,
                n_runs=1,
                stratum=1,
                inclusion_probability=1.0,
                sampled=True,
                order=n // 10 + 1,
            )
            for n in range(size)
        ),
        batch_size=5_000,
    )
    import gc

    gc.collect()
    setup_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with ChatServer(keep=False) as server:
        machine = machine_services.machine_create(
            campaign=campaign,
            name="bench",
            base_url=server.url,
            model="bench-model",
            concurrency=concurrency,
        )
        started = time.perf_counter()
        result = machine_services.machine_judge_run(machine=machine, pool=pool)
        elapsed = time.perf_counter() - started
        again = time.perf_counter()
        cached = machine_services.machine_judge_run(machine=machine, pool=pool, documents="all")
        cached_elapsed = time.perf_counter() - again
    assert result.judged == size, result.as_dict()
    assert cached.requests == 0
    assert cached.cached == size
    assert MachineJudgment.objects.count() == size
    return {
        "size": size,
        "seconds": elapsed,
        "per_second": size / elapsed,
        "cached_per_second": size / cached_elapsed,
        "requests": server.count,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "setup_peak_mib": setup_peak,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--database-url", help="default: a fresh SQLite file per size")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.concurrency, args.database_url)))
        return
    print(f"machine_judge_run against a loopback endpoint, concurrency {args.concurrency}")
    for size in args.sizes:
        command = [
            sys.executable,
            __file__,
            "--child",
            str(size),
            "--concurrency",
            str(args.concurrency),
        ]
        if args.database_url:
            command += ["--database-url", args.database_url]
        output = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
        row = json.loads(output.stdout.strip().splitlines()[-1])
        verdict = "ok" if row["per_second"] >= 200 else "BELOW TARGET (200/s)"
        print(
            f"{size:>7,} documents: {row['seconds']:6.2f} s, {row['per_second']:7.1f} docs/s "
            f"({verdict}); cached again {row['cached_per_second']:8.1f} docs/s, "
            f"requests {row['requests']:,}; peak RSS {row['peak_mib']:.0f} MiB "
            f"(after making the data: {row['setup_peak_mib']:.0f} MiB)"
        )


if __name__ == "__main__":
    main()
