"""Every route of the pages and the API, asked with hostile input by every role: never a 5xx.

The routes are read from the URLconf (`get_resolver()`), so a new route is swept
without editing this file; Django's admin is left out (it is Django's, not ours).
Each route is asked, for every method it allows, by an anonymous client, an
assessor, a participant and an organiser:

- with each hostile value in each of its path segments in turn (the others valid);
- with each hostile value under every query parameter name the views read at
  once, and under each name alone (a value refused early would hide the others);
  the names are collected from the code (`query_names`), not listed by hand;
- a write (POST, PUT, PATCH) also carries the hostile value in its body, under
  every name, as a form on the pages and as JSON on the API.

The values are those that broke something once: NUL (PostgreSQL refuses it in
text), 2^64 and 10,000 digits (past any integer column), -1, NaN, `..`, a bidi
control and `$x$` (mathtext). Run it on PostgreSQL too:
`DATABASE_URL=postgres://... pytest tests/config/test_hostile_requests.py -s`.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from django import forms
from django.test import Client
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve
from rest_framework import serializers
from rest_framework.views import APIView

from tests.helpers import (
    CODIESP_RUN,
    make_judged_team_campaign,
    make_release,
    make_submission,
    make_task_campaign,
    make_task_gold,
    make_user,
)

# WORKBENCH_HOSTILE_SWEEP=full asks everything of every role (20,000 requests,
# minutes); the suite samples (every route, method, path segment and role, the
# values and names in turn).
FULL = os.environ.get("WORKBENCH_HOSTILE_SWEEP") == "full"
HOSTILE = (
    "x\x00y",
    str(2**64),
    "-1",
    "NaN",
    "..",
    "9" * 10_000,
    "\u202eexe.txt",
    "$x$",
)
ROLES = ("anonymous", "assessor", "participant", "organiser")
APPS = ("workbench", "pooling", "judging", "scoring", "participation", "demo", "config")
WRITES = ("post", "put", "patch")
# Destructive methods last, so that a deleted run does not hide the routes after it.
METHOD_ORDER = ("get", "head", "options", "post", "put", "patch", "delete")
_PARAMETER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")
_LIST_PARAMETERS = ("limit", "offset", "format", "download")
_READS = re.compile(r"""(?:GET|query_params|params|data)\.(?:get|getlist)\(\s*["'](\w+)["']""")


@dataclass(frozen=True)
class Route:
    pattern: str  # "api/pools/<int:pool_id>/", as the URLconf writes it
    callback: object

    @property
    def parameters(self) -> list[str]:
        return [match["name"] for match in _PARAMETER.finditer(self.pattern)]

    def path(self, values: dict[str, str]) -> str:
        return "/" + _PARAMETER.sub(lambda m: quote(values[m["name"]], safe=""), self.pattern)

    def methods(self) -> list[str]:
        view_class = getattr(self.callback, "cls", None) or getattr(
            self.callback, "view_class", None
        )
        if view_class is None:  # a function view: what it refuses it answers 405
            return ["get", "post"]
        allowed = [m for m in view_class.http_method_names if hasattr(view_class, m)]
        return sorted(set(allowed) - {"options", "head"}, key=METHOD_ORDER.index)


def routes() -> list[Route]:
    found: list[Route] = []

    def walk(resolver: URLResolver, prefix: str) -> None:
        for entry in resolver.url_patterns:
            pattern = prefix + str(entry.pattern)
            if isinstance(entry, URLResolver):
                if not pattern.startswith("admin/"):
                    walk(entry, pattern)
            elif isinstance(entry, URLPattern):
                found.append(Route(pattern, entry.callback))

    walk(get_resolver(), "")
    return found


def query_names() -> list[str]:
    """Every query (and body) parameter name the views read: the names our code
    reads with `.get("...")`, the fields of every form and serializer of our apps,
    and the list parameters of the API."""
    get_resolver().url_patterns  # noqa: B018 - imports every view, form and serializer
    names = set(_LIST_PARAMETERS)
    root = Path(__file__).resolve().parents[2]
    for app in APPS:
        for source in (root / app).rglob("*.py"):
            names.update(_READS.findall(source.read_text(encoding="utf-8")))
    for base in (forms.BaseForm, serializers.Serializer):
        for cls in _subclasses(base):
            if cls.__module__.split(".")[0] in APPS:
                names.update(_fields(cls))
    names.update(_view_filters())
    return sorted(names)


def route_names(route: Route) -> list[str]:
    """The names the route's own module reads: its `.get("...")`s, the fields of the
    forms and serializers it uses, its views' filters, and the list parameters."""
    view = getattr(route.callback, "cls", None) or getattr(route.callback, "view_class", None)
    module = inspect.getmodule(view or route.callback)
    names = set(_LIST_PARAMETERS) | set(getattr(view, "filters", {}))
    if module is None or module.__name__.split(".")[0] not in APPS:
        return sorted(names)
    names.update(_READS.findall(inspect.getsource(module)))
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, forms.BaseForm | serializers.Serializer):
            names.update(_fields(value))
    return sorted(names)


def _fields(cls: type) -> set[str]:
    return set(getattr(cls, "base_fields", {})) | set(getattr(cls, "_declared_fields", {}))


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _view_filters() -> set[str]:
    return {
        name
        for view in _subclasses(APIView)
        if view.__module__.split(".")[0] in APPS
        for name in getattr(view, "filters", {})
    }


# --------------------------------------------------------------------------
# The world: one of everything a path can name


@pytest.fixture
def world(db):
    organiser = make_user("olivia", organiser=True)
    participant = make_user("pat")
    campaign, team, pool = make_judged_team_campaign(participant)
    assessor = pool.assignments.first().assessor
    assignment = pool.assignments.filter(assessor=assessor).first()
    entry = pool.entries.filter(topic=assignment.topic).first()
    from judging.models import DocumentNote
    from workbench.models import Job

    note = DocumentNote.objects.create(
        assessor=assessor, topic=assignment.topic, docno=entry.docno, cannot_judge="empty"
    )
    make_release(pool, released_by=organiser)
    task = make_task_campaign("codiesp")
    make_task_gold(task)
    submission = make_submission(task, "team-a", CODIESP_RUN)
    job = Job.objects.create(
        kind="pooling.jobs.pool_build", params={}, created_by=organiser, state="failed"
    )
    from judging.machine_services import machine_baseline

    machine = machine_baseline(campaign=campaign)
    valid = {
        "machine_id": str(machine.pk),
        "slug": campaign.slug,
        "pool_id": str(pool.pk),
        "run_id": str(team.runs.first().pk),
        "team_id": str(team.pk),
        "assignment_id": str(assignment.pk),
        # Answer campaigns: no answer in this world, so these ids name nothing (404).
        "answer_id": "1",
        "answer_assignment_id": "1",
        "position": "1",
        "topic_id": str(assignment.topic.pk),
        "docno": entry.docno,
        "version": "1",
        "name": "qrels.txt",
        "fmt": "trec",
        "kind": "depth",
        "job_id": str(job.pk),
        "note_id": str(note.pk),
        "user_id": str(organiser.pk),
        "submission_id": str(submission.pk),
        "subtask": "D",
        "uidb64": "MQ",
        "token": "x",
    }
    task_valid = {**valid, "slug": task.slug}
    return {
        "users": {"assessor": assessor, "participant": participant, "organiser": organiser},
        "valid": valid,
        "task_valid": task_valid,
        "topic_text_id": assignment.topic.topic_id,
    }


def _valid_for(route: Route, world: dict) -> dict[str, str]:
    task_route = any(
        word in route.pattern for word in ("tasks/", "gold/", "submissions/", "<str:subtask>")
    )
    values = dict(world["task_valid"] if task_route else world["valid"])
    if "<path:topic_id>" in route.pattern:
        values["topic_id"] = world["topic_text_id"]
    return values


# --------------------------------------------------------------------------
# The sweep


def _requests(route: Route, valid: dict[str, str], names: list[str], full: bool) -> Iterator[tuple]:
    """(method, path, query, body, each_name) of the route's hostile requests;
    `each_name` marks those of one name alone, asked of a role only when the route
    lets it in (a refused role is refused before anything is read).

    In full, every value in every path segment and under every name at once, and
    every name of the route alone (with a value in turn). Sampled, two values in
    each segment and at once, and three of the route's names alone, chosen in turn
    from the route's place, so that the routes of one module share out its names."""
    clean = route.path(valid)
    own_names = route_names(route)
    turn = zlib.crc32(route.pattern.encode())
    values = HOSTILE if full else [HOSTILE[(turn + k) % len(HOSTILE)] for k in (0, 3)]
    for method in route.methods():
        for parameter in route.parameters:
            for value in values:
                yield method, route.path({**valid, parameter: value}), {}, None, False
        for value in values:
            every = dict.fromkeys(names, value)
            yield method, clean, every, every if method in WRITES else None, False
        alone = own_names if full else [own_names[(turn + k) % len(own_names)] for k in range(3)]
        for index, name in enumerate(dict.fromkeys(alone)):
            value = HOSTILE[(index + turn) % len(HOSTILE)]
            yield method, clean, {name: value}, None, True


def _ask(client: Client, method: str, path: str, query: dict, body: dict | None, api: bool):
    url = f"{path}?{urlencode(query)}" if query else path
    if body is None:
        response = getattr(client, method)(url)
    elif api:
        response = getattr(client, method)(url, json.dumps(body), content_type="application/json")
    elif method == "post":
        response = client.post(url, body)
    else:
        response = getattr(client, method)(
            url, urlencode(body), "application/x-www-form-urlencoded"
        )
    if response.streaming:
        b"".join(response.streaming_content)
    return response


@pytest.mark.django_db(transaction=True)
def test_no_route_answers_a_hostile_request_with_a_server_error(world, record_property):
    names = query_names()
    clients: dict[str, Client] = {}
    for role in ROLES:
        clients[role] = Client(raise_request_exception=False)
        if role != "anonymous":
            clients[role].force_login(world["users"][role])
    swept = routes()
    admitted = {
        (route.pattern, role): _admits(clients[role], route.path(_valid_for(route, world)))
        for route in swept
        for role in ROLES
    }
    plan = [
        (route, request)
        for route in swept
        for request in _requests(route, _valid_for(route, world), names, FULL)
    ]
    plan.sort(key=lambda item: METHOD_ORDER.index(item[1][0]))
    made, failures = 0, []
    for turn, (route, (method, path, query, body, each_name)) in enumerate(plan):
        try:
            resolve(path)
        except Resolver404:
            roles: tuple[str, ...] = ROLES[:1]  # no view: the same answer for everyone
        else:
            roles = tuple(role for role in ROLES if admitted[route.pattern, role] or not each_name)
        if not FULL and roles:
            roles = (roles[turn % len(roles)],)  # sampled: the roles take turns
        for role in roles:
            client = clients[role]
            try:
                status = _ask(
                    client, method, path, query, body, path.startswith("/api/")
                ).status_code
            except Exception as error:
                status = f"{type(error).__name__}: {error}"[:200]
            made += 1
            if not isinstance(status, int) or status >= 500:
                shown = {k: v[:20] for k, v in query.items()} if len(query) < 3 else "*"
                failures.append(f"{role} {method.upper()} {path[:120]} {shown}: {status}")
            if role != "anonymous" and "logout" in route.pattern:
                client.force_login(world["users"][role])
    record_property("hostile_requests", made)
    record_property("server_errors", len(failures))
    mode = "full" if FULL else "sampled"
    print(f"\nhostile sweep ({mode}): {made:,} requests, {len(swept)} routes, {len(failures)} 5xx")
    assert not failures, (
        f"{len(failures)} of {made:,} hostile requests answered 5xx:\n" + "\n".join(failures[:300])
    )


def _admits(client: Client, path: str) -> bool:
    """Whether the route lets the client's role in: a GET not refused for want of a
    login or a role (a POST-only view answers 405, and is let in)."""
    response = client.get(path)
    if response.status_code in (401, 403):
        return False
    return not (response.status_code == 302 and "login" in response.get("Location", ""))


def test_the_sweep_covers_every_route_and_the_names_the_views_read():
    swept = {route.pattern for route in routes()}
    assert "api/pools/<int:pool_id>/judgments/" in swept
    assert "judge/history/<int:topic_id>/<docno:docno>/" in swept
    assert not any(pattern.startswith("admin/") for pattern in swept)
    names = query_names()
    for name in ("topic", "assessor", "relevance", "run", "measure", "depth", "strata", "limit"):
        assert name in names


def test_a_function_view_is_asked_with_get_and_post_and_a_drf_view_with_its_own_methods():
    by_pattern = {route.pattern: route for route in routes()}
    assert by_pattern["judge/"].methods() == ["get", "post"]
    assert (
        "put" in by_pattern["api/assignments/<int:assignment_id>/judgments/<path:docno>/"].methods()
    )
    assert inspect.isfunction(by_pattern["judge/"].callback)
