"""Judging latency: save a judgment and render the next document.

    python bench/bench_judging.py [--database-url URL] [--judgments N]

Builds a 100,000-entry pool (50 topics x 2,000 documents, each with a
~600-character text) in a PostgreSQL database of its own (created if
missing, emptied first), assigns one topic to an assessor and posts N
judgments through Django's test client the way the judging page does
(htmx request, keyboard-complete labels), timing each request in the
server process and counting its queries. Targets: median < 30 ms,
p95 < 80 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/workbench_bench"
TOPICS, PER_TOPIC = 50, 2_000


def create_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    server = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(server, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if exists:
            connection.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def setup(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Production settings (DEBUG off); static files are not collected for this.
    os.environ["DEBUG"] = "false"
    # Plain http from the test client: no redirect to https.
    os.environ["SECURE_SSL_REDIRECT"] = "false"
    warnings.filterwarnings("ignore", message="No directory at")
    os.environ.setdefault("SECRET_KEY", "benchmark")
    import django
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    django.setup()
    setup_test_environment()
    call_command("migrate", verbosity=0)


def build_pool():
    from django.contrib.auth.models import User

    from judging import services
    from pooling.models import Campaign, Document, Pool, PoolEntry, Topic

    campaign = Campaign.objects.create(name="bench", slug="bench")
    topics = Topic.objects.bulk_create(
        Topic(campaign=campaign, topic_id=str(t), title=f"treatment {t} condition", position=t)
        for t in range(1, TOPICS + 1)
    )
    sentence = "The treatment was compared with a placebo in a randomised trial of adults. "
    Document.objects.bulk_create(
        (
            Document(campaign=campaign, docno=f"D{n:06d}", title=f"Study {n}", text=sentence * 8)
            for n in range(TOPICS * PER_TOPIC)
        ),
        batch_size=5_000,
    )
    pool = Pool.objects.create(campaign=campaign, name="bench", spec={"depth": PER_TOPIC})
    PoolEntry.objects.bulk_create(
        (
            PoolEntry(
                pool=pool,
                topic=topic,
                docno=f"D{t * PER_TOPIC + i:06d}",
                best_rank=i + 1,
                n_runs=1,
                stratum=1,
                inclusion_probability=1.0,
                sampled=True,
                order=i + 1,
            )
            for t, topic in enumerate(topics)
            for i in range(PER_TOPIC)
        ),
        batch_size=5_000,
    )
    assessor = User.objects.create_user("assessor", password="x")
    [assignment] = services.assignments_create(pool=pool, topics=topics[:1], assessors=[assessor])
    analyze()
    return assignment, PoolEntry.objects.filter(pool=pool).count()


def analyze() -> None:
    """Give the planner the statistics autovacuum gathers within a minute of a bulk
    load in production; without them it may join judgments to the pool's entries
    by scanning every entry of the topic for each judgment."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def measure(assignment, n: int) -> tuple[list[float], list[int]]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    client = Client()
    client.force_login(assignment.assessor)
    labels = [
        {"relevance": "2", "effectiveness": "3", "credibility": "1"},
        {"relevance": "0"},
        {"relevance": "1", "effectiveness": "1", "credibility": "0"},
    ]
    times, queries = [], []
    for position in range(1, n + 1):
        url = reverse("judging:judge", args=[assignment.pk, position])
        data = {**labels[position % len(labels)], "seconds": "4.2"}
        with CaptureQueriesContext(connection) as captured:
            start = time.perf_counter()
            response = client.post(url, data, headers={"HX-Request": "true"})
            times.append(time.perf_counter() - start)
        if response.status_code != 200 or f"Document <strong>{position + 1}</strong>" not in (
            response.content.decode()
        ):
            raise SystemExit(f"unexpected response at position {position}: {response.status_code}")
        queries.append(len(captured))
    return times, queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--judgments", type=int, default=300)
    args = parser.parse_args()
    create_database(args.database_url)
    setup(args.database_url)
    assignment, entries = build_pool()
    measure(assignment, 20)  # warm up connections, templates and caches
    from judging.models import Judgment, JudgmentEvent

    Judgment.objects.all().delete()
    JudgmentEvent.objects.all().delete()
    times, queries = measure(assignment, args.judgments)
    ms = sorted(t * 1000 for t in times)
    p95 = ms[int(0.95 * (len(ms) - 1))]
    print(f"pool entries: {entries:,}; judgments posted: {len(ms)} (PostgreSQL)")
    median = statistics.median(ms)
    print(f"save + render next: median {median:.1f} ms, p95 {p95:.1f} ms, max {ms[-1]:.1f} ms")
    print(f"queries per request: median {statistics.median(queries):.0f}, max {max(queries)}")
    print("targets: median < 30 ms, p95 < 80 ms")


if __name__ == "__main__":
    main()
