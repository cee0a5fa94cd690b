"""Nugget judging latency: save an answer's nugget labels and render the next answer.

    python bench/bench_nugget_judging.py [--database-url URL] [--answers N]

Builds a generated-answers campaign in a PostgreSQL database of its own
(created if missing, emptied first): 20 topics, each answered by 300 runs
(6,000 answers of 8 sentences with 2 citations each, a ~200-word answer), 15
nuggets a topic. Assigns one topic to an assessor and posts N answers' labels
through Django's test client as the page does (htmx request, every nugget
labelled), timing each request in the server process and counting its
queries. Target: median < 30 ms (as bench_judging.py for relevance).
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench_judging import analyze, create_database, setup

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/wb_answers_bench"
TOPICS, RUNS, SENTENCES, NUGGETS = 20, 300, 8, 15


def build_campaign():
    from django.contrib.auth.models import User

    from judging import answer_services
    from judging.core.nugget_files import NuggetText
    from pooling.models import Answer, AnswerRun, AnswerSentence, Campaign, Citation, Topic

    campaign = Campaign.objects.create(name="bench", slug="bench", task_kind="answers")
    topics = Topic.objects.bulk_create(
        Topic(campaign=campaign, topic_id=str(t), title=f"question {t}", position=t)
        for t in range(1, TOPICS + 1)
    )
    runs = AnswerRun.objects.bulk_create(
        AnswerRun(campaign=campaign, tag=f"run-{r:03d}", original_name="a.jsonl", sha256="0")
        for r in range(RUNS)
    )
    refs = [f"msmarco_v2.1_doc_{i}#0_{i}" for i in range(20)]
    answers = Answer.objects.bulk_create(
        (
            Answer(run=run, topic=topic, references=refs, response_length=200, line=1)
            for run in runs
            for topic in topics
        ),
        batch_size=5_000,
    )
    text = "The treatment was compared with a placebo in a randomised trial of adults today."
    sentences = AnswerSentence.objects.bulk_create(
        (
            AnswerSentence(answer=a, position=s, text=text)
            for a in answers
            for s in range(SENTENCES)
        ),
        batch_size=5_000,
    )
    Citation.objects.bulk_create(
        (
            Citation(sentence=s, position=c, reference=c, segment=refs[c])
            for s in sentences
            for c in range(2)
        ),
        batch_size=10_000,
    )
    for topic in topics:
        answer_services.nugget_list_save(
            topic=topic,
            nuggets=[
                NuggetText(f"Fact {n} about the question", "vital" if n % 3 == 0 else "okay")
                for n in range(NUGGETS)
            ],
        )
    assessor = User.objects.create_user("assessor", password="x")
    assignment = answer_services.answer_assignment_create(
        topic=topics[0], assessor=assessor, seed=1
    )
    analyze()
    return assignment, len(answers)


def measure(assignment, n: int) -> tuple[list[float], list[int]]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from judging.answer_services import current_nuggets

    client = Client()
    client.force_login(assignment.assessor)
    version = current_nuggets(assignment.topic).pk
    cycle = ("support", "partial_support", "not_support")
    times, queries = [], []
    for position in range(1, n + 1):
        url = reverse("judging:answer_judge", args=[assignment.pk, position])
        data = {f"n{k + 1}": cycle[(k + position) % 3] for k in range(NUGGETS)}
        data |= {"nugget_list": version, "seconds": "12.5"}
        with CaptureQueriesContext(connection) as captured:
            start = time.perf_counter()
            response = client.post(url, data, headers={"HX-Request": "true"})
            times.append(time.perf_counter() - start)
        if response.status_code != 200 or f"Answer <strong>{position + 1}</strong>" not in (
            response.content.decode()
        ):
            raise SystemExit(f"unexpected response at position {position}: {response.status_code}")
        queries.append(len(captured))
    return times, queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--answers", type=int, default=250)
    args = parser.parse_args()
    create_database(args.database_url)
    setup(args.database_url)
    assignment, n_answers = build_campaign()
    measure(assignment, 20)  # warm up connections, templates and caches
    from judging.models import AnswerJudgment, AnswerJudgmentEvent

    AnswerJudgment.objects.all().delete()
    AnswerJudgmentEvent.objects.all().delete()
    times, queries = measure(assignment, min(args.answers, RUNS - 1))
    ms = sorted(t * 1000 for t in times)
    p95 = ms[int(0.95 * (len(ms) - 1))]
    print(
        f"answers: {n_answers:,} ({RUNS} in the topic judged); saves posted: {len(ms)} (PostgreSQL)"
    )
    median = statistics.median(ms)
    print(f"save + render next: median {median:.1f} ms, p95 {p95:.1f} ms, max {ms[-1]:.1f} ms")
    print(f"queries per request: median {statistics.median(queries):.0f}, max {max(queries)}")
    print("target: median < 30 ms")


if __name__ == "__main__":
    main()
