"""Re-planning a stratified pool being judged, as the organiser's page does it.

    python bench/bench_replan.py [--database-url URL] [--strata SPEC] [--repeat N]

Builds, in a PostgreSQL database of its own (created if missing, emptied
first), a campaign the size of issue 23's: 43 topics, a 20,000-document
collection, five runs of 1,000 documents per topic, and a pool of them with
ranks 1-10 in full and 11-100 at 50% (about 20,000 entries), assigned to two
assessors who have judged the first 30 documents of every queue. Then it
re-plans every topic the way the re-plan page does: the preview (GET), then
the POST that starts the job, run here in the request (the immediate task
backend) so that the time is the whole job's: reading the runs, the new
plan, the revision, and storing it. Each repetition starts from the pool as
built (the revision is undone in the database between runs).

Prints the pool's size, the preview's and the job's wall time (best of
--repeat), and the queries each issued. Target: the job under 5 s. With
--reference, also the same job storing the entries with Django's
`QuerySet.bulk_update` (as before issue 23: about 50 s), and the ratio.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_judging import analyze, create_database, setup  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/workbench_bench_replan"
TOPICS, DOCUMENTS, RUNS, RUN_DEPTH, JUDGED = 43, 20_000, 5, 1_000, 30
BUILD_SPEC = {"depth": 10, "strata": ["11-100:0.5"]}


def run_file(tag: str, seed: int) -> bytes:
    """A run ranking RUN_DEPTH documents per topic: each topic's 150 likely documents
    first, in a run-specific order, then the rest of the collection at random."""
    rng = random.Random(seed)
    lines = []
    for topic in range(1, TOPICS + 1):
        likely = random.Random(topic).sample(range(DOCUMENTS), 150)
        rng.shuffle(likely)
        chosen, seen = [], set()
        for docno in likely[:25] + rng.sample(range(DOCUMENTS), RUN_DEPTH):
            if docno not in seen:
                seen.add(docno)
                chosen.append(docno)
        for rank, docno in enumerate(chosen[:RUN_DEPTH], start=1):
            lines.append(f"{topic} Q0 D{docno:05d} {rank} {RUN_DEPTH - rank}.5 {tag}")
    return ("\n".join(lines) + "\n").encode()


def build_campaign():
    from django.contrib.auth.models import Group, User

    from judging import services as judging
    from judging.models import Judgment
    from pooling import pool_services, run_services, services
    from pooling.core.spec import PoolSpec
    from workbench.roles import ORGANISER_GROUP

    campaign = services.campaign_create(name="Re-plan bench", slug="replan", judgment_budget=6000)
    topics = "".join(f"{t}\tTopic {t}\tWhat about {t}?\n" for t in range(1, TOPICS + 1))
    services.topics_import(campaign=campaign, data=topics.encode(), name="topics.tsv")
    uploads = [run_services.RunUpload(f"run{k}.txt", run_file(f"run{k}", k)) for k in range(RUNS)]
    run_services.runs_import(campaign=campaign, uploads=uploads)
    pool = pool_services.pool_build(
        campaign=campaign, spec=PoolSpec.from_dict(BUILD_SPEC), confirm_over_budget=True
    )
    organiser = User.objects.create_user("boss", password="x")
    organiser.groups.add(Group.objects.get_or_create(name=ORGANISER_GROUP)[0])
    assessors = [User.objects.create_user(name, password="x") for name in ("alice", "bob")]
    assignments = judging.assignments_create(
        pool=pool, topics=list(campaign.topics.order_by("position")), assessors=assessors
    )
    judgments = [
        Judgment(assessor=a.assessor, topic=a.topic, docno=docno, relevance=n % 3, seconds=20)
        for a in assignments
        for n, docno in enumerate(a.queue().values_list("docno", flat=True)[:JUDGED])
    ]
    Judgment.objects.bulk_create(judgments, batch_size=5_000)
    analyze()
    return pool, organiser, len(judgments)


def snapshot(pool) -> list[tuple]:
    from pooling.models import PoolEntry

    return list(PoolEntry.objects.filter(pool=pool).values_list())


def restore(pool, rows: list[tuple]) -> None:
    """Put the pool back as built: its entries as they were, no revision."""
    from django.db import transaction

    from pooling.models import PoolEntry

    fields = [field.attname for field in PoolEntry._meta.concrete_fields]
    with transaction.atomic():
        pool.revisions.filter(number__gt=1).delete()
        PoolEntry.objects.filter(pool=pool).delete()
        PoolEntry.objects.bulk_create(
            (PoolEntry(**dict(zip(fields, row, strict=True))) for row in rows), batch_size=5_000
        )
    analyze()


def replan(pool, organiser, strata: str) -> tuple[float, int, float, int]:
    """The preview, then the applied revision, as the page asks for them."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from workbench.models import Job

    client = Client()
    client.force_login(organiser)
    url = reverse("pooling:pool_replan", args=[pool.campaign.slug, pool.pk])
    form = {"depth": "10", "strata": strata, "which": "all", "reason": "bench"}
    with CaptureQueriesContext(connection) as preview_queries:
        start = time.perf_counter()
        response = client.get(url, form)
        preview = time.perf_counter() - start
    if response.status_code != 200 or b"What this revision does" not in response.content:
        raise SystemExit(f"the preview answered {response.status_code}")
    form["confirm_over_budget"] = "on"
    with CaptureQueriesContext(connection) as job_queries:
        start = time.perf_counter()
        response = client.post(url, form)
        applied = time.perf_counter() - start
    job = Job.objects.latest("id")
    if response.status_code != 302 or job.state != Job.DONE:
        raise SystemExit(f"the re-plan answered {response.status_code}; job: {job.error}")
    return preview, len(preview_queries), applied, len(job_queries)


def bulk_update(model, rows, fields) -> int:
    """What the re-plan stored its entries with before: QuerySet.bulk_update."""
    objects = [model(pk=row[0], **dict(zip(fields, row[1:], strict=True))) for row in rows]
    return model.objects.bulk_update(objects, fields, batch_size=2000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument(
        "--strata", default="11-100:0.25", help="the new plan's strata (depth stays 10)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--reference", action="store_true", help="also time the job with QuerySet.bulk_update"
    )
    args = parser.parse_args()
    # The job runs in the request, as the test suite runs jobs: its time is the job's.
    os.environ["WORKBENCH_TASKS"] = "immediate"
    data_dir = Path(tempfile.mkdtemp(prefix="bench-replan-"))
    os.environ["WORKBENCH_DATA_DIR"] = str(data_dir)
    create_database(args.database_url)
    setup(args.database_url)
    from django.conf import settings

    # Pages name their static files unhashed: nothing is collected for this.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    pool, organiser, judged = build_campaign()
    rows = snapshot(pool)
    sampled = sum(1 for entry in pool.entries.all() if entry.sampled)
    print(
        f"pool: {pool.campaign.topics.count()} topics, {len(rows):,} entries "
        f"({sampled:,} drawn), {judged:,} judgments (PostgreSQL)"
    )
    best = None
    for _ in range(args.repeat):
        restore(pool, rows)
        timing = replan(pool, organiser, args.strata)
        best = timing if best is None else tuple(map(min, best, timing))
    preview, preview_queries, applied, job_queries = best
    print(f"re-plan to 1-10 + {args.strata} (best of {args.repeat}):")
    print(f"  preview page: {preview:6.2f} s, {preview_queries} queries")
    print(f"  apply (job):  {applied:6.2f} s, {job_queries} queries")
    if args.reference:
        restore(pool, rows)
        with mock.patch("pooling.pool_services.update_by_pk", bulk_update):
            reference = replan(pool, organiser, args.strata)[2]
        print(f"  apply with bulk_update (reference, once): {reference:6.2f} s")
        print(f"  ratio: {applied / reference:.3f} of the reference")
    print("target: the job under 5 s")
    shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
