"""make_* helpers for tests: small, explicit, no factories."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable

from django.contrib.auth.models import Group, User

from pooling import pool_services, run_services, services
from pooling.models import Campaign, Run
from workbench.roles import ORGANISER_GROUP

PASSWORD = "a-test-password"


def make_user(username: str, *, organiser: bool = False) -> User:
    user = User.objects.create_user(username, password=PASSWORD)
    if organiser:
        user.groups.add(Group.objects.get_or_create(name=ORGANISER_GROUP)[0])
    return user


def make_campaign(
    slug: str = "trec-x", *, topics: Iterable[str] = ("301", "302", "303"), **fields
) -> Campaign:
    campaign = services.campaign_create(name=fields.pop("name", slug.upper()), slug=slug, **fields)
    lines = [f"{t}\tTopic {t} title\tWhat about {t}?" for t in topics]
    if lines:
        services.topics_import(
            campaign=campaign, data=("\n".join(lines) + "\n").encode(), name="topics.tsv"
        )
    return campaign


def run_text(tag: str, rows: dict[str, list[str]]) -> bytes:
    """A run file: for each topic, its docnos in rank order with falling scores."""
    lines = []
    for topic, docnos in rows.items():
        for rank, docno in enumerate(docnos, start=1):
            lines.append(f"{topic} Q0 {docno} {rank} {100 - rank}.5 {tag}")
    return ("\n".join(lines) + "\n").encode()


def make_run(campaign: Campaign, tag: str, rows: dict[str, list[str]]) -> Run:
    upload = run_services.RunUpload(f"{tag}.txt", run_text(tag, rows))
    return run_services.runs_import(campaign=campaign, uploads=[upload])[0]


def make_team(campaign: Campaign, name: str, members: Iterable[User] = ()):
    from participation import services as team_services

    return team_services.team_create(campaign=campaign, name=name, members=members)


def make_team_run(team, tag: str, rows: dict[str, list[str]]) -> Run:
    """A run the team submits, checked and stored as its page and API do."""
    from participation import services as team_services

    upload = run_services.RunUpload(f"{tag}.txt", run_text(tag, rows))
    return team_services.team_run_submit(team=team, upload=upload)


def make_documents(campaign: Campaign, docnos: Iterable[str]) -> None:
    lines = [f"{d}\tTitle of {d}\tText of {d}." for d in docnos]
    services.documents_import(
        campaign=campaign, stream=io.BytesIO(("\n".join(lines) + "\n").encode()), name="docs.tsv"
    )


def make_pool(campaign: Campaign, entries: dict[str, list[str]], *, name: str = "pool"):
    """A pool whose queue for each topic is the given docnos, in that order.

    Built directly from entries (depth 1..n, all sampled), for tests that
    are about judging rather than pooling.
    """
    from pooling.models import Pool, PoolEntry

    pool = Pool.objects.create(campaign=campaign, name=name, spec={"depth": 100})
    topics = {t.topic_id: t for t in campaign.topics.all()}
    PoolEntry.objects.bulk_create(
        PoolEntry(
            pool=pool,
            topic=topics[topic_id],
            docno=docno,
            best_rank=rank,
            n_runs=1,
            stratum=1,
            inclusion_probability=1.0,
            sampled=True,
            order=rank,
        )
        for topic_id, docnos in entries.items()
        for rank, docno in enumerate(docnos, start=1)
    )
    return pool


def make_sampled_pool(slug: str = "sampled"):
    """A stratified pool being judged: topics 1 and 2, three runs of 100 documents,
    ranks 1-10 in full and 11-100 at 50%, the first 15 documents of each queue
    judged (ann has topic 1, ben topic 2)."""
    import random

    from judging import services as judging_services
    from pooling.core.spec import PoolSpec

    campaign = make_campaign(slug, topics=("1", "2"), judgment_budget=1000)
    for k in range(3):
        rng = random.Random(k)
        docnos = [f"d{n}" for n in range(200)]
        make_run(campaign, f"r{k}", {topic: rng.sample(docnos, 100) for topic in "12"})
    spec = PoolSpec.from_dict({"depth": 10, "strata": ["11-100:0.5"]})
    pool = pool_services.pool_build(campaign=campaign, spec=spec)
    assessors = [make_user("ann"), make_user("ben")]
    topics = list(campaign.topics.order_by("position"))
    for assignment in judging_services.assignments_create(
        pool=pool, topics=topics, assessors=assessors
    ):
        for docno in assignment.queue().values_list("docno", flat=True)[:15]:
            judging_services.judgment_submit(
                assignment=assignment, docno=docno, relevance=0, aspects={}
            )
    return pool


# Pool-entry values no date, time or id can contain, so finding one in an
# assessor's page or response means it leaked.
HIDDEN_ENTRY_VALUES = {
    "best_rank": 987654321,
    "n_runs": 123456789,
    "inclusion_probability": 0.123456789,
}
# What an assessor must never see: those values, the pool's vocabulary, and
# the docno and name of another assessor's work in these tests (d9, bob).
LEAK_MARKERS = (
    *(str(value) for value in HIDDEN_ENTRY_VALUES.values()),
    "stratum",
    "inclusion",
    "best_rank",
    "n_runs",
    "score",
    "d9",
    "bob",
)


def hide_values_in_pool_entries(pool) -> None:
    pool.entries.update(**HIDDEN_ENTRY_VALUES)


# Random per request (the CSP nonce, the CSRF token): a short marker such as "d9"
# turns up in them by chance, about one page in fifty. A browser's page.content()
# writes the hx-headers attribute back with &quot; for its quotes.
_RANDOM_TOKENS = re.compile(
    r'(nonce="|(?:"|&quot;)X-CSRFToken(?:"|&quot;): (?:"|&quot;)'
    r'|name="csrfmiddlewaretoken" value="|csrftoken=)[^";&]*'
)


def assert_nothing_leaks(text: str, *extra: str) -> None:
    shown = _RANDOM_TOKENS.sub(r"\1", text)
    for marker in (*LEAK_MARKERS, *extra):
        assert marker not in shown, f"{marker!r} is shown to an assessor"


# What a participant must never see (tests/participation/test_team_isolation.py): the hidden
# pool values, the pool's name, the pooled and judged docnos (docx-*: a team's pages
# show no docno at all), the assessors, the other team and its run, and any measure
# before the scores are released.
PARTICIPANT_LEAK_MARKERS = (
    *(str(value) for value in HIDDEN_ENTRY_VALUES.values()),
    "secret-pool",
    "docx-",
    "alice",
    "bob",
    "Rivals",
    "rivalrun",
    "stratum",
    "inclusion",
)
MEASURE_MARKERS = ("ndcg", "bpref", "recip_rank", "P.10", "P_10")


def assert_nothing_leaks_to_participants(text: str, *extra: str, released: bool = False) -> None:
    shown = _RANDOM_TOKENS.sub(r"\1", text)
    markers = (*PARTICIPANT_LEAK_MARKERS, *(() if released else MEASURE_MARKERS), *extra)
    for marker in markers:
        assert marker not in shown, f"{marker!r} is shown to a participant"


# --------------------------------------------------------------------------
# Task campaigns (CodiEsp, SciFact)

# CodiEsp D, the golden case hand_small: MAP 0.472, P 4/7, R 1 (tests/scoring/core/tasks/golden).
CODIESP_GOLD = b"a\tx1\na\tx2\na\tx3\nb\tx1\n"
CODIESP_CODES = b"x1\nx2\nX3\nx9\n"
CODIESP_RUN = b"a\tX3\nb\tx9\na\tx1\nb\tx1\na\tx9\na\tx2\na\tx3\nc\tx1\n"
SCIFACT_CLAIMS = (
    b'{"id": 4, "evidence": {"7": [{"sentences": [2, 3], "label": "SUPPORT"}, '
    b'{"sentences": [9], "label": "SUPPORT"}], "8": [{"sentences": [1], "label": "SUPPORT"}]}}\n'
    b'{"id": 5, "evidence": {}}\n'
)
SCIFACT_PREDICTIONS = (
    b'{"id": 4, "evidence": {"7": {"sentences": [3, 9, 14], "label": "SUPPORT"}}}\n'
    b'{"id": 5, "evidence": {"3": {"sentences": [0], "label": "CONTRADICT"}}}\n'
)


def make_task_campaign(slug: str = "codiesp", *, task_kind: str = "codiesp") -> Campaign:
    return services.campaign_create(name=slug.upper(), slug=slug, task_kind=task_kind)


def make_task_gold(
    campaign: Campaign,
    subtask: str = "D",
    gold: bytes = CODIESP_GOLD,
    codes: tuple[bytes, ...] = (CODIESP_CODES,),
):
    from scoring import services as scoring_services

    return scoring_services.task_gold_upload(
        campaign=campaign,
        subtask=subtask,
        gold=scoring_services.TaskUpload("gold.tsv", gold),
        codes=[scoring_services.TaskUpload(f"codes{i}.tsv", data) for i, data in enumerate(codes)],
    )


def make_submission(campaign: Campaign, name: str, data: bytes, subtask: str = "D"):
    from scoring import services as scoring_services

    return scoring_services.task_submission_upload(
        campaign=campaign,
        subtask=subtask,
        name=name,
        upload=scoring_services.TaskUpload(f"{name}.txt", data),
    )


# --------------------------------------------------------------------------
# Participants


def make_judged_team_campaign(participant: User) -> tuple[Campaign, object, object]:
    """A campaign with two teams and a judged pool, for what participants may see.

    Alpha (the participant) sent alpha1; Rivals (rita) sent rivalrun. The
    organiser's pool "secret-pool" (hidden entry values, docnos docx-*) is
    judged in full by alice, d(ocx-1) and docx-4 relevant. Returns the
    campaign, Alpha and the pool; the scores are not released.
    """
    from judging import services as judging_services
    from pooling.core.spec import PoolSpec
    from workbench.core.label_schema import SCHEMA_PRESETS

    campaign = make_campaign(label_schema=SCHEMA_PRESETS["binary"].schema(), topics=("301", "302"))
    make_documents(campaign, [f"docx-{n}" for n in range(1, 7)])
    alpha = make_team(campaign, "Alpha", [participant])
    make_team_run(alpha, "alpha1", {"301": ["docx-1", "docx-2"], "302": ["docx-4"]})
    rivals = make_team(campaign, "Rivals", [make_user("rita")])
    make_team_run(rivals, "rivalrun", {"301": ["docx-3", "docx-1"], "302": ["docx-5", "docx-6"]})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=10), name="secret-pool")
    hide_values_in_pool_entries(pool)
    assessor = User.objects.filter(username="alice").first() or make_user("alice")
    for assignment in judging_services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    ):
        for entry in pool.entries.filter(topic=assignment.topic):
            judging_services.judgment_submit(
                assignment=assignment,
                docno=entry.docno,
                relevance=int(entry.docno in ("docx-1", "docx-4")),
                aspects={},
            )
    return campaign, alpha, pool


# --------------------------------------------------------------------------
# A re-plan while judging


def make_replanned_assignments(assessor: User, *, judged: int = 8) -> dict:
    """`assessor` primary on topics 1 and 2 of a stratified pool (ranks 1-2 in full,
    3-30 at half, 16 to judge per topic), who judged the first `judged` documents of
    each queue, with a note on each, and set the next one past rank 2 aside; then a re-plan of
    both topics as an organiser makes it in the middle of a campaign: topic 1 at a
    quarter (judged documents leave the sample, still pooled), topic 2 to depth 2
    (they leave the pool).

    Returns, per topic id, {"assignment", "judged": docnos judged, "out": those of
    them the re-plan took out of the queue, "set_aside": the docno set aside,
    "dropped": whether the re-plan took that one out of the queue too}.
    """
    from judging import services as judging_services
    from pooling.core.spec import PoolSpec, parse_strata

    campaign = make_campaign(slug="replanned", topics=("1", "2"), judgment_budget=1000)
    docnos = [f"doc{rank:02d}" for rank in range(1, 31)]
    make_documents(campaign, docnos)
    make_run(campaign, "r", {"1": docnos, "2": docnos})
    pool = pool_services.pool_build(
        campaign=campaign, spec=PoolSpec(depth=2, strata=parse_strata("3-30:0.5"), seed=7)
    )
    result = {}
    for assignment in judging_services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[assessor]
    ):
        queue = list(assignment.queue().values_list("docno", flat=True))
        for docno in queue[:judged]:
            judging_services.judgment_submit(
                assignment=assignment,
                docno=docno,
                relevance=1,
                aspects={"effectiveness": 2, "credibility": 1},
                seconds=10,
            )
            judging_services.note_record(
                assessor=assessor, topic=assignment.topic, docno=docno, text=f"read {docno}"
            )
        # Past the depth judged in full: a document a re-plan may take out.
        aside = next(docno for docno in queue[judged:] if docno not in docnos[:2])
        judging_services.cannot_judge_record(assignment=assignment, docno=aside, reason="empty")
        result[assignment.topic.topic_id] = {
            "assignment": assignment,
            "judged": set(queue[:judged]),
            "set_aside": aside,
        }
    pool_services.pool_revise(
        pool=pool,
        spec=PoolSpec(depth=2, strata=parse_strata("3-30:0.25"), seed=7),
        topics=["1"],
        reason="the budget ran short",
    )
    pool_services.pool_revise(pool=pool, spec=PoolSpec(depth=2), topics=["2"], reason="cut")
    for mine in result.values():
        queue = set(mine["assignment"].queue().values_list("docno", flat=True))
        mine["out"] = mine["judged"] - queue
        mine["dropped"] = mine["set_aside"] not in queue
    return result


# --------------------------------------------------------------------------
# Who may be given work


def make_pool_with_outsiders(tmp_path) -> object:
    """A pool of two topics whose assessors are ann (primary on 1) and ben (on 2), and
    around it cat, an account new to judging; dora, an assessor of another campaign;
    and nist, the account `import_qrels` made for a qrels file (it cannot log in)."""
    from django.core.management import call_command

    from judging import services as judging_services

    ann, ben, _cat, dora = (make_user(name) for name in ("ann", "ben", "cat", "dora"))
    campaign = make_campaign(slug="ours", topics=("1", "2"))
    docnos = [f"d{n}" for n in range(10)]
    make_documents(campaign, docnos)
    pool = make_pool(campaign, {"1": docnos, "2": docnos})
    judging_services.assignments_create(
        pool=pool, topics=campaign.topics.all(), assessors=[ann, ben]
    )
    other = make_campaign(slug="theirs", topics=("9",))
    judging_services.assignments_create(
        pool=make_pool(other, {"9": ["x"]}), topics=other.topics.all(), assessors=[dora]
    )
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n2 0 d2 0\n")
    call_command("import_qrels", "--campaign", "ours", "--assessor", "nist", str(qrels))
    return pool


def make_release(pool, *, measure: str = "map", reason: str = "", released_by=None, **options):
    """Release the pool's results as they are now (the next version)."""
    from scoring import services as scoring_services

    return scoring_services.release_create(
        pool=pool, measure=measure, reason=reason, released_by=released_by, **options
    )


def answer_line(run: str, topic: str, sentences: list[tuple[str, list[int]]], refs=None) -> str:
    """One line of a TREC 2024 RAG answer file; `refs` default to seg-0..seg-4."""
    import json

    from pooling.core.answer_files import response_words

    references = refs if refs is not None else [f"seg-{i}" for i in range(5)]
    return json.dumps(
        {
            "run_id": run,
            "topic_id": topic,
            "topic": f"question {topic}",
            "references": references,
            "response_length": response_words(text for text, _ in sentences),
            "answer": [{"text": text, "citations": cited} for text, cited in sentences],
        }
    )


def answer_file(runs: Iterable[str] = ("run-a", "run-b", "run-c"), topics=("1", "2")) -> bytes:
    """Answers of each run to each topic: two sentences, citing segments 0 and 1, 2."""
    lines = [
        answer_line(run, topic, [(f"{run} says one thing.", [0]), ("And another.", [1, 2])])
        for run in runs
        for topic in topics
    ]
    return ("\n".join(lines) + "\n").encode()


def make_answer_campaign(slug: str = "rag", *, topics=("1", "2"), runs=("run-a", "run-b", "run-c")):
    """An answers campaign with topics, the segments' texts and each run's answers."""
    from pooling import answer_services

    campaign = make_campaign(slug, topics=topics, task_kind="answers")
    make_documents(campaign, [f"seg-{i}" for i in range(5)])
    if runs:
        answer_services.answer_runs_import(
            campaign=campaign, data=answer_file(runs, topics), name="answers.jsonl"
        )
    return campaign


def make_nuggets(topic, nuggets=(("vital", "First fact"), ("okay", "Second fact"))):
    from judging import answer_services
    from judging.core.nugget_files import NuggetText

    return answer_services.nugget_list_save(
        topic=topic, nuggets=[NuggetText(text, importance) for importance, text in nuggets]
    )
