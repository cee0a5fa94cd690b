"""The API against its own OpenAPI schema, with requests Schemathesis generates from it.

Every GET, and a few writes that change nothing an organiser could not change
back (a new campaign, a campaign's fields, an adjudication, the policy), is
called with a handful of generated requests as an organiser, through the WSGI
application: no answer may be a 5xx, nor contradict the schema (its status,
content type or body). Each case is sent twice: with the path parameters
Schemathesis made up (mostly 404s), and with those of a campaign and pool that
exist, so that real answers are checked too.

Deselect with `-m "not schemathesis"`; it takes about half a minute.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from schemathesis import Case
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from config.wsgi import application
from judging import services as judging_services
from pooling import pool_services
from pooling.core.spec import PoolSpec
from tests.helpers import make_campaign, make_documents, make_release, make_run, make_user
from workbench.core.label_schema import SCHEMA_PRESETS
from workbench.models import Job

pytestmark = [pytest.mark.schemathesis, pytest.mark.django_db]

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# Writes that change nothing an organiser could not change back: never the token
# (the test's own), nor a delete, an upload, a build or an assignment.
SAFE_WRITES = [
    ("POST", "/api/campaigns/"),
    ("PATCH", "/api/campaigns/{slug}/"),
    ("POST", "/api/pools/{pool_id}/adjudication/"),
    ("PUT", "/api/pools/{pool_id}/policy/"),
]


@pytest.fixture
def world(settings) -> dict[str, object]:
    """A campaign with documents, a run, a pool, an assignment and a judgment."""
    settings.ALLOWED_HOSTS = ["*"]
    organiser = make_user("olivia", organiser=True)
    assessor = make_user("alice")
    campaign = make_campaign(
        topics=("301", "302"), label_schema=SCHEMA_PRESETS["graded-0-2"].schema()
    )
    make_documents(campaign, ["d1", "d2"])
    run = make_run(campaign, "bm25", {"301": ["d1", "d2"], "302": ["d1"]})
    pool = pool_services.pool_build(campaign=campaign, spec=PoolSpec(depth=2))
    [assignment] = judging_services.assignments_create(
        pool=pool, topics=campaign.topics.filter(topic_id="301"), assessors=[assessor]
    )
    judging_services.judgment_submit(assignment=assignment, docno="d1", relevance=1, aspects={})
    job = Job.objects.create(kind="pooling.jobs.pool_build", title="t", created_by=organiser)
    release = make_release(pool)
    return {
        "token": Token.objects.create(user=organiser).key,
        "path": {
            "slug": campaign.slug,
            "topic_id": "301",
            "docno": "d1",
            "run_id": run.pk,
            "pool_id": pool.pk,
            "assignment_id": assignment.pk,
            "job_id": job.pk,
            "fmt": "qrels",
            "version": release.version,
            "name": "scores.tsv",
        },
    }


@pytest.fixture
def _connection_kept():
    """The WSGI handler closes the database connection after each request, which
    would drop the test's database; Django's test client keeps it open so."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(world, _connection_kept):
    headers = {"Authorization": f"Token {world['token']}"}
    return schemathesis.openapi.from_wsgi("/api/schema/?format=json", application, headers=headers)


def _safe(operation) -> bool:
    method = operation.method.upper()
    return method == "GET" or (method, operation.path) in SAFE_WRITES


def test_the_api_keeps_to_its_schema(api_schema, world):
    """Each operation in turn; the failures of all of them are reported together.

    (Schemathesis' own pytest loader for schemas made by a fixture does not run
    under pytest 9, so the operations are walked here, each with Hypothesis.)
    """
    headers = {"Authorization": f"Token {world['token']}"}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    chosen = [operation for operation in operations if _safe(operation)]
    assert len(chosen) >= 39, [op.label for op in chosen]
    failures: list[str] = []
    for operation in chosen:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=10,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
            derandomize=True,
        )
        def check(case: Case) -> None:
            case.call_and_validate(headers=headers, checks=CHECKS)
            known = {
                name: world["path"][name]
                for name in case.path_parameters or {}
                if name in world["path"]
            }
            if known:
                case.path_parameters = {**case.path_parameters, **known}
                case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            check()
        except (Exception, BaseExceptionGroup) as error:  # checks' failures, minimal cases
            failures.append(f"{operation.label}:\n{error}")
    assert not failures, "\n\n".join(failures)
