"""Who may call each endpoint of the API: one table, every operation of the schema.

Anonymous callers get 401 everywhere; assessors and participants get 403 from
every organiser endpoint, which answer organisers as they should (a request
without a body is a 400, never a 401 or 403; a build or re-plan with no body
takes the defaults, as the pages' forms start from them). A team's endpoints
answer its members only (404 to anyone else). A test checks the table against
the schema, so a new endpoint cannot be left out of it.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from judging import answer_services, machine_services
from judging import services as judging_services
from pooling import pool_services
from pooling.core.spec import PoolSpec
from tests.helpers import (
    CODIESP_RUN,
    make_answer_campaign,
    make_campaign,
    make_documents,
    make_nuggets,
    make_release,
    make_run,
    make_submission,
    make_task_campaign,
    make_task_gold,
    make_team,
)
from workbench.core.label_schema import SCHEMA_PRESETS
from workbench.models import Job

pytestmark = pytest.mark.django_db

ORGANISERS, ASSESSORS, ANYONE = "organisers", "assessors", "anyone logged in"
PARTICIPANTS = "the team's members"


class Call(NamedTuple):
    method: str
    path: str  # the schema's template; {placeholders} are filled from the world
    who: str
    organiser: int  # what an organiser gets (an empty body where there is one)
    assessor: int | None = None  # for endpoints assessors may call
    multipart: bool = False  # an upload: the empty body is a form
    participant: int | None = None  # for endpoints a team member may call


CALLS = [
    Call("get", "/api/campaigns/", ORGANISERS, 200),
    Call("post", "/api/campaigns/", ORGANISERS, 400),
    Call("get", "/api/campaigns/{slug}/", ORGANISERS, 200),
    Call("patch", "/api/campaigns/{slug}/", ORGANISERS, 200),
    Call("get", "/api/campaigns/{slug}/status/", ORGANISERS, 200),
    Call("get", "/api/campaigns/{slug}/topics/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{slug}/topics/", ORGANISERS, 400, multipart=True),
    Call("get", "/api/campaigns/{slug}/topics/{topic_id}/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{slug}/answers/", ORGANISERS, 400, multipart=True),
    Call("get", "/api/campaigns/{slug}/documents/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{slug}/documents/", ORGANISERS, 400, multipart=True),
    Call("get", "/api/campaigns/{slug}/documents/{docno}/", ORGANISERS, 200),
    Call("get", "/api/campaigns/{slug}/runs/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{slug}/runs/", ORGANISERS, 400, multipart=True),
    Call("get", "/api/campaigns/{slug}/runs/{run_id}/", ORGANISERS, 200),
    Call("delete", "/api/campaigns/{slug}/runs/{run_id}/", ORGANISERS, 409),
    Call("post", "/api/campaigns/{slug}/runs/{run_id}/replace/", ORGANISERS, 400, multipart=True),
    Call("post", "/api/campaigns/{slug}/judgments/", ORGANISERS, 400, multipart=True),
    Call("get", "/api/campaigns/{slug}/pools/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{slug}/pools/", ORGANISERS, 202),
    Call("get", "/api/campaigns/{slug}/pools/whatif/", ORGANISERS, 200),
    Call("get", "/api/campaigns/{slug}/teams/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{slug}/teams/", ORGANISERS, 400),
    Call("put", "/api/campaigns/{slug}/team-settings/", ORGANISERS, 400),
    Call("get", "/api/pools/{pool_id}/", ORGANISERS, 200),
    Call("get", "/api/campaigns/{slug}/machines/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{slug}/machines/", ORGANISERS, 400),
    Call("get", "/api/campaigns/{slug}/machines/{machine_id}/", ORGANISERS, 200),
    Call("patch", "/api/campaigns/{slug}/machines/{machine_id}/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{slug}/machines/{machine_id}/runs/", ORGANISERS, 400),
    Call("get", "/api/pools/{pool_id}/machine-labels/", ORGANISERS, 200),
    Call("get", "/api/pools/{pool_id}/entries/", ORGANISERS, 200),
    Call("post", "/api/pools/{pool_id}/runs/", ORGANISERS, 400),
    Call("get", "/api/pools/{pool_id}/strategies/", ORGANISERS, 404),
    Call("post", "/api/pools/{pool_id}/strategies/", ORGANISERS, 400),
    Call("post", "/api/pools/{pool_id}/budget/", ORGANISERS, 400),
    Call("get", "/api/pools/{pool_id}/replan/", ORGANISERS, 200),
    Call("post", "/api/pools/{pool_id}/replan/", ORGANISERS, 202),
    Call("post", "/api/pools/{pool_id}/retire/", ORGANISERS, 200),
    Call("post", "/api/pools/{pool_id}/reopen/", ORGANISERS, 200),
    Call("get", "/api/pools/{pool_id}/assignments/", ORGANISERS, 200),
    Call("post", "/api/pools/{pool_id}/assignments/", ORGANISERS, 400),
    Call("delete", "/api/pools/{pool_id}/assignments/{assignment_id}/", ORGANISERS, 204),
    Call("get", "/api/pools/{pool_id}/overlap/", ORGANISERS, 400),
    Call("post", "/api/pools/{pool_id}/overlap/", ORGANISERS, 400),
    Call("get", "/api/pools/{pool_id}/judgments/", ORGANISERS, 200),
    Call("get", "/api/pools/{pool_id}/agreement/", ORGANISERS, 200),
    Call("get", "/api/pools/{pool_id}/adjudication/", ORGANISERS, 200),
    Call("post", "/api/pools/{pool_id}/adjudication/", ORGANISERS, 400),
    Call("get", "/api/pools/{pool_id}/policy/", ORGANISERS, 200),
    Call("put", "/api/pools/{pool_id}/policy/", ORGANISERS, 400),
    Call("get", "/api/pools/{pool_id}/qrels/", ORGANISERS, 200),
    Call("get", "/api/pools/{pool_id}/qrels/{fmt}/", ORGANISERS, 200),
    Call("get", "/api/pools/{pool_id}/bundle/", ORGANISERS, 200),
    Call("get", "/api/pools/{pool_id}/scores/", ORGANISERS, 200),
    Call("post", "/api/pools/{pool_id}/scores/", ORGANISERS, 200),  # small: no job
    Call("get", "/api/pools/{pool_id}/leaderboard/", ORGANISERS, 200),
    Call("post", "/api/pools/{pool_id}/leaderboard/", ORGANISERS, 200),  # small: no job
    Call("get", "/api/pools/{pool_id}/releases/", ORGANISERS, 200),
    Call("post", "/api/pools/{pool_id}/releases/", ORGANISERS, 201),  # small: no job
    Call("get", "/api/pools/{pool_id}/releases/compare/", ORGANISERS, 400),  # from and to
    Call("get", "/api/pools/{pool_id}/releases/{version}/", ORGANISERS, 200),
    Call("post", "/api/pools/{pool_id}/releases/{version}/withdraw/", ORGANISERS, 400),  # why?
    Call("get", "/api/pools/{pool_id}/releases/{version}/bundle/", ORGANISERS, 200),
    Call("get", "/api/pools/{pool_id}/releases/{version}/files/{name}", ORGANISERS, 200),
    Call("get", "/api/pools/{pool_id}/reusability/", ORGANISERS, 404),
    Call("post", "/api/pools/{pool_id}/reusability/", ORGANISERS, 202),
    # The world's machine has no label on the pool: an organiser's call gets to the 400.
    Call("get", "/api/pools/{pool_id}/calibration/", ORGANISERS, 400),
    Call("post", "/api/pools/{pool_id}/calibration/", ORGANISERS, 400),
    Call("get", "/api/campaigns/{task}/gold/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{task}/gold/", ORGANISERS, 400, multipart=True),
    Call("get", "/api/campaigns/{task}/submissions/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{task}/submissions/", ORGANISERS, 400, multipart=True),
    Call("get", "/api/campaigns/{task}/submissions/{submission_id}/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{task}/submissions/{submission_id}/", ORGANISERS, 200),  # small
    Call(
        "post",
        "/api/campaigns/{task}/submissions/{submission_id}/replace/",
        ORGANISERS,
        400,
        multipart=True,
    ),
    Call("delete", "/api/campaigns/{task}/submissions/{submission_id}/", ORGANISERS, 204),
    Call("get", "/api/campaigns/{task}/scores/{subtask}/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{task}/scores/{subtask}/", ORGANISERS, 200),  # small: no job
    Call("get", "/api/campaigns/{answers}/answer-runs/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{answers}/answer-runs/", ORGANISERS, 400, multipart=True),
    Call("get", "/api/campaigns/{answers}/nuggets/", ORGANISERS, 200),
    Call("post", "/api/campaigns/{answers}/nuggets/", ORGANISERS, 400, multipart=True),
    Call("get", "/api/campaigns/{answers}/answer-agreement/", ORGANISERS, 200),
    Call("get", "/api/campaigns/{answers}/nugget-scores/", ORGANISERS, 200),
    Call("get", "/api/campaigns/{answers}/citation-scores/", ORGANISERS, 200),
    Call("get", "/api/answer-assignments/", ASSESSORS, 200, assessor=200),
    Call("get", "/api/answer-assignments/{answer_assignment_id}/next/", ASSESSORS, 404, 200),
    Call(
        "put",
        "/api/answer-assignments/{answer_assignment_id}/answers/{answer_id}/",
        ASSESSORS,
        404,
        400,
    ),
    Call("get", "/api/assignments/", ASSESSORS, 200, assessor=200),
    Call("get", "/api/assignments/{assignment_id}/next/", ASSESSORS, 404, assessor=200),
    Call("get", "/api/assignments/{assignment_id}/judgments/", ASSESSORS, 404, assessor=200),
    Call("put", "/api/assignments/{assignment_id}/judgments/{docno}/", ASSESSORS, 404, 400),
    Call("get", "/api/assignments/{assignment_id}/notes/", ASSESSORS, 404, assessor=200),
    Call("put", "/api/assignments/{assignment_id}/notes/{docno}/", ASSESSORS, 404, 204),
    # A team's endpoints answer only its members: others see no team (404).
    Call("get", "/api/teams/", ANYONE, 200, assessor=200, participant=200),
    Call("get", "/api/teams/{team_id}/runs/", PARTICIPANTS, 404, 404, participant=200),
    Call("post", "/api/teams/{team_id}/runs/", PARTICIPANTS, 404, 404, True, 400),
    # The world's run is the organiser's: not the team's to withdraw (404 to its members too).
    Call("delete", "/api/teams/{team_id}/runs/{run_id}/", PARTICIPANTS, 404, 404, participant=404),
    Call("put", "/api/teams/{team_id}/precedence/", PARTICIPANTS, 404, 404, participant=400),
    Call("get", "/api/teams/{team_id}/releases/", PARTICIPANTS, 404, 404, participant=200),
    # The world's release holds no run of the team's (409), and ranks the runs it has.
    Call("get", "/api/teams/{team_id}/scores/", PARTICIPANTS, 404, 404, participant=409),
    Call("get", "/api/teams/{team_id}/leaderboard/", PARTICIPANTS, 404, 404, participant=200),
    Call("get", "/api/jobs/{job_id}/", ANYONE, 200, assessor=200, participant=404),  # not theirs
    Call("post", "/api/jobs/{job_id}/cancel/", ORGANISERS, 200),  # the world's job waits
    Call("post", "/api/jobs/{job_id}/retry/", ORGANISERS, 409),  # it has not failed
    Call("get", "/api/token/", ANYONE, 200, assessor=200, participant=200),
    Call("post", "/api/token/", ANYONE, 201, assessor=201, participant=201),
    Call("delete", "/api/token/", ANYONE, 204, assessor=204, participant=204),
]


@pytest.fixture
def world(organiser, assessor, participant) -> dict[str, object]:
    """One of everything an endpoint names, and judgments to score."""
    campaign = make_campaign(topics=("301", "302"), label_schema=SCHEMA_PRESETS["binary"].schema())
    make_documents(campaign, ["d1", "d2"])
    run = make_run(campaign, "bm25", {"301": ["d1", "d2"], "302": ["d1"]})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=2))
    [assignment] = judging_services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )
    judging_services.judgment_submit(assignment=assignment, docno="d1", relevance=1, aspects={})
    task = make_task_campaign()
    make_task_gold(task)
    submission = make_submission(task, "sub", CODIESP_RUN)
    job = Job.objects.create(kind="pooling.jobs.pool_build", title="t", created_by=assessor)
    team = make_team(campaign, "uni-x", members=[participant])
    release = make_release(pool)
    answers = make_answer_campaign("rag-world", topics=("1",))
    answer_topic = answers.topics.get()
    make_nuggets(answer_topic)
    answer_assignment = answer_services.answer_assignment_create(
        topic=answer_topic, assessor=assessor
    )
    machine = machine_services.machine_baseline(campaign=campaign)
    return {
        "machine_id": machine.pk,
        "answers": answers.slug,
        "answer_assignment_id": answer_assignment.pk,
        "answer_id": answer_topic.generated_answers.first().pk,
        "slug": campaign.slug,
        "topic_id": "301",
        "docno": "d2",
        "run_id": run.pk,
        "pool_id": pool.pk,
        "assignment_id": assignment.pk,
        "fmt": "qrels",
        "task": task.slug,
        "submission_id": submission.pk,
        "subtask": "D",
        "job_id": job.pk,
        "team_id": team.pk,
        "version": release.version,
        "name": "qrels.txt",
    }


def call(client: APIClient, entry: Call, world: dict[str, object]):
    path = entry.path.format(**world)
    if entry.method in ("get", "delete"):
        return getattr(client, entry.method)(path)
    return getattr(client, entry.method)(
        path, {}, format="multipart" if entry.multipart else "json"
    )


@pytest.mark.parametrize("entry", CALLS, ids=lambda c: f"{c.method.upper()} {c.path}")
def test_who_may_call(entry: Call, world, organiser, assessor, participant):
    assert call(APIClient(), entry, world).status_code == 401

    client = APIClient()
    client.force_authenticate(assessor)
    response = call(client, entry, world)
    expected = 403 if entry.who == ORGANISERS else entry.assessor
    assert response.status_code == expected, response.content[:300]

    client = APIClient()
    client.force_authenticate(organiser)
    response = call(client, entry, world)
    assert response.status_code == entry.organiser, response.content[:300]

    client = APIClient()
    client.force_authenticate(participant)
    response = call(client, entry, world)
    # A participant is neither an organiser nor an assessor: no assignment is theirs.
    expected = {ORGANISERS: 403, ASSESSORS: 404 if "assignment_id}" in entry.path else 200}
    assert response.status_code == expected.get(entry.who, entry.participant), response.content[
        :300
    ]


def test_the_table_covers_every_operation_of_the_schema(organiser_client):
    schema = organiser_client.get("/api/schema/", headers={"Accept": "application/json"}).json()
    operations = {
        (method, path)
        for path, item in schema["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }
    table = {
        (c.method, c.path.replace("{task}", "{slug}").replace("{answers}", "{slug}")) for c in CALLS
    }
    assert table == operations


def test_uploads_answer_anonymous_callers_401_before_reading_the_file(world):
    upload = SimpleUploadedFile("t.tsv", b"1\tx\n")
    response = APIClient().post(
        f"/api/campaigns/{world['slug']}/topics/", {"file": upload}, format="multipart"
    )
    assert response.status_code == 401
