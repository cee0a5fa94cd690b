"""make_* helpers for tests: small, explicit, no factories."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable

from django.contrib.auth.models import Group, User

from pooling import services
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
    upload = services.RunUpload(f"{tag}.txt", run_text(tag, rows))
    return services.runs_import(campaign=campaign, uploads=[upload])[0]


def make_team(campaign: Campaign, name: str, members: Iterable[User] = ()):
    from participation import services as team_services

    return team_services.team_create(campaign=campaign, name=name, members=members)


def make_team_run(team, tag: str, rows: dict[str, list[str]]) -> Run:
    """A run the team submits, checked and stored as its page and API do."""
    from participation import services as team_services

    upload = services.RunUpload(f"{tag}.txt", run_text(tag, rows))
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
# turns up in them by chance, about one page in fifty.
_RANDOM_TOKENS = re.compile(
    r'(nonce="|"X-CSRFToken": "|name="csrfmiddlewaretoken" value="|csrftoken=)[^";]*'
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
    pool = services.pool_build(campaign=campaign, spec=PoolSpec(depth=10), name="secret-pool")
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


def make_release(pool, *, measure: str = "map", reason: str = "", released_by=None, **options):
    """Release the pool's results as they are now (the next version)."""
    from scoring import services as scoring_services

    return scoring_services.release_create(
        pool=pool, measure=measure, reason=reason, released_by=released_by, **options
    )
