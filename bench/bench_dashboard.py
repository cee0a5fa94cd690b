"""The campaign dashboard and `campaign_status` on a campaign in full swing.

    python bench/bench_dashboard.py [--database-url URL] [--repeat N] [--reuse]

Builds the judging benchmark's 100,000-entry pool (50 topics x 2,000
documents) in a PostgreSQL database of its own, assigns the topics to 10
assessors (5 each, and 5 topics of overlap), and stores 50,000 judgments
spread over the last 14 days with their active time. Then times the
dashboard page as the organiser's browser asks for it (the whole page and
the refresh fragment, in the server process, with the query count), and
`python manage.py campaign_status` as a whole process, start-up included.
Targets: the page under 300 ms at the median; the command under 1 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_judging import build_pool, create_database, setup  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/workbench_bench_dashboard"
ASSESSORS, JUDGMENTS, DAYS = 10, 50_000, 14


def fill_campaign(assignment) -> None:
    """Assign every topic and store JUDGMENTS judgments, the first of each queue first."""
    from django.contrib.auth.models import User
    from django.utils import timezone

    from judging import services
    from judging.models import Assignment, Judgment, OverlapItem

    pool = assignment.pool
    topics = list(pool.campaign.topics.order_by("position"))
    assessors = [assignment.assessor] + [
        User.objects.create_user(f"assessor{k}", password="x") for k in range(1, ASSESSORS)
    ]
    Assignment.objects.all().delete()
    for k, assessor in enumerate(assessors):
        mine = topics[k::ASSESSORS]
        services.assignments_create(pool=pool, topics=mine, assessors=[assessor])
        overlap = Assignment.objects.create(
            pool=pool, topic=topics[(k + 1) % len(topics)], assessor=assessor, kind="overlap"
        )
        OverlapItem.objects.bulk_create(
            OverlapItem(assignment=overlap, entry=entry, position=n)
            for n, entry in enumerate(pool.entries.filter(topic=overlap.topic).order_by("order"))
        )
    now = timezone.now()
    queues = {
        a.pk: list(pool.entries.filter(topic=a.topic).order_by("order").values_list("docno"))
        for a in Assignment.objects.all()
    }
    rows = []
    assignments = list(Assignment.objects.select_related("topic", "assessor"))
    cursor = {a.pk: 0 for a in assignments}
    for n in range(JUDGMENTS):
        a = assignments[n % len(assignments)]
        (docno,) = queues[a.pk][cursor[a.pk]]
        cursor[a.pk] += 1
        rows.append(
            Judgment(
                assessor=a.assessor,
                topic=a.topic,
                docno=docno,
                relevance=n % 3,
                aspects={"effectiveness": 1, "credibility": 0} if n % 3 else {},
                seconds=5 + n % 40,
            )
        )
    Judgment.objects.bulk_create(rows, batch_size=5_000)
    # Spread them over the last DAYS days, oldest first.
    for day in range(DAYS):
        ids = Judgment.objects.order_by("id").values_list("id", flat=True)[
            day * JUDGMENTS // DAYS : (day + 1) * JUDGMENTS // DAYS
        ]
        Judgment.objects.filter(id__in=list(ids)).update(
            created_at=now - timedelta(days=DAYS - 1 - day)
        )


def time_page(slug: str, repeat: int, *, fragment: bool) -> tuple[list[float], int]:
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from workbench.roles import ORGANISER_GROUP

    organiser, _ = User.objects.get_or_create(username="boss")
    organiser.groups.add(Group.objects.get_or_create(name=ORGANISER_GROUP)[0])
    client = Client()
    client.force_login(organiser)
    url = reverse("judging:campaign_dashboard", args=[slug])
    headers = {"HX-Request": "true"} if fragment else {}
    times, queries = [], 0
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            start = time.perf_counter()
            response = client.get(url, headers=headers)
            times.append(time.perf_counter() - start)
        if response.status_code != 200:
            raise SystemExit(f"dashboard answered {response.status_code}")
        queries = len(captured)
    return times, queries


def time_command(url: str, slug: str, repeat: int, *, cold: bool) -> list[float]:
    """The whole process; `cold`: with the shared cache emptied first (as after a
    judgment changed: the agreement alerts are computed again)."""
    from django.core.cache import cache

    env = {**os.environ, "DATABASE_URL": url, "DEBUG": "false"}
    times = []
    for _ in range(repeat):
        if cold:
            cache.clear()
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "manage.py", "campaign_status", "--campaign", slug],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--reuse", action="store_true", help="time the database a previous run left as it is"
    )
    args = parser.parse_args()
    # Plain http on the loopback: no redirect to https (a TLS proxy does that in production).
    os.environ["SECURE_SSL_REDIRECT"] = "false"
    # The cache the server and the command share, away from the repository's data/.
    os.environ.setdefault("WORKBENCH_CACHE_DIR", tempfile.mkdtemp(prefix="bench-cache-"))
    if not args.reuse:
        create_database(args.database_url)
    setup(args.database_url)
    from django.core.management import call_command
    from django.db import connection

    from judging.models import Judgment
    from pooling.models import Campaign, PoolEntry

    call_command("collectstatic", interactive=False, verbosity=0)  # as a deployment does
    if not args.reuse:
        fill_campaign(build_pool()[0])
        with connection.cursor() as cursor:
            # The spread over days rewrote every judgment: clean up and refresh the
            # statistics, as autovacuum would have done on a live database.
            cursor.execute("VACUUM ANALYZE")
    slug = Campaign.objects.get().slug
    entries = PoolEntry.objects.count()
    print(f"pool entries: {entries:,}; judgments: {Judgment.objects.count():,} (PostgreSQL)")
    for fragment in (False, True):
        time_page(slug, 2, fragment=fragment)  # warm up
        times, queries = time_page(slug, args.repeat, fragment=fragment)
        ms = sorted(t * 1000 for t in times)
        name = "refresh fragment" if fragment else "dashboard page"
        print(
            f"{name}: median {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms, {queries} queries"
        )
    for cold in (False, True):
        command = sorted(time_command(args.database_url, slug, 5, cold=cold))
        print(
            f"campaign_status (whole process, {'cache emptied' if cold else 'cache warm'}): "
            f"median {statistics.median(command):.2f} s"
        )
    print("targets: page median < 300 ms; campaign_status < 1 s")


if __name__ == "__main__":
    main()
