"""Load test of judging: assessors logging in and saving-and-next against gunicorn.

    python bench/load_judging.py                     # 50 assessors, 5-20 s per document, 120 s
    python bench/load_judging.py --saturate --duration 30  # no think time: the server's capacity
    python bench/load_judging.py --assessors 10 --think 0.2-1 --duration 5 --json out.json
    python bench/load_judging.py --assessors 6 --saves 25 --faults  # workers killed meanwhile

Builds a campaign in a PostgreSQL database of its own (created, and dropped
at the end unless --keep-database): one topic per assessor, each with
--documents documents of ~600 characters in its queue, every assessor
with the same password hashed by the production hasher. Starts gunicorn
(config/gunicorn.py, DEBUG off, bound to a socket on 127.0.0.1 that
this script opened) and one `db_worker`, then simulates the assessors:

- half judge through the HTML page as the browser does (an htmx POST of the
  judging form answers with the next document), the other half through the
  JSON API (PUT the judgment, GET the next document), alternately with a
  session and with an API token;
- everyone who uses the pages or a session logs in through the login form
  (CSRF token and all); logins are spread over the first --ramp seconds;
- a think time drawn from --think before each save (none with --saturate);
- a fraction (--revise) of saves revises a document judged earlier, with
  labels that may or may not differ.

Everything is bounded: requests go to 127.0.0.1 only, new requests stop
after --duration seconds (and at --max-requests), each request times out
after --timeout seconds, and the server processes are stopped at the end
whatever happens. Prints throughput, latency percentiles and errors by
status per kind of request, then checks the database against every save
the server acknowledged: one row per (assessor, topic, document) saved,
the last acknowledged labels stored, exactly one JudgmentEvent per change
(a chain whose `old` is the previous `new`), and the active seconds of the
saves that changed the labels summed (a save of the same labels adds none).
Exits 1 when the check fails, so that the test suite can run it.

With --faults, an organiser also uploads a collection of --fault-documents
documents through the API (imported by a job: WORKBENCH_UPLOAD_JOB_BYTES is
set low) and, once the job is under way, a gunicorn worker and the db_worker
are killed with SIGKILL; gunicorn starts a new worker and so does this
script (the jobs' lease is 3 s). The check then also requires that the job
ended done, run again after the kill, with every document of the collection
stored exactly once, and that no job and no task of django-tasks-db is left
waiting or running. A request cut by the killed web worker is no error: its
save, never acknowledged, may or may not be stored.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workbench.core.label_schema import LabelSchema  # noqa: E402  (a pure core: no Django)

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/workbench_load"
PASSWORD = "load-test-password-1957"
ORGANISER_TOKEN = "f" * 40  # the organiser's API token (--faults uploads with it)
FAULT_DOCNO = "F{:06d}"  # the documents of --faults' collection
FAULT_TEXT = ("A study of a treatment, imported while its worker was killed. " * 8).strip()
LOOPBACK = "127.0.0.1"
SCHEMA = LabelSchema.default()
SENTENCE = "The treatment was compared with a placebo in a randomised trial of adults. "

# Kinds of request, as reported. A save-and-next is one html_save, or one
# api_save followed by one api_next.
JUDGING_KINDS = ("html_save", "api_save", "api_next")


# --------------------------------------------------------------------------
# The database: created, filled, checked


def database_exists(url: str) -> bool:
    """Whether the PostgreSQL server of `url` answers (the database need not exist)."""
    import psycopg

    try:
        with psycopg.connect(_server_url(url), connect_timeout=3):
            return True
    except psycopg.OperationalError:
        return False


def _server_url(url: str) -> str:
    return url.rsplit("/", 1)[0] + "/postgres"


def create_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(_server_url(url), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def drop_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(_server_url(url), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def server_env(url: str, data_dir: Path, static_root: Path) -> dict[str, str]:
    """The environment of every process of the workbench under test: production
    settings (DEBUG off) over plain http on the loopback address."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env |= {
        "DATABASE_URL": url,
        "DEBUG": "false",
        "SECRET_KEY": "load-test-" + "k" * 50,
        "ALLOWED_HOSTS": LOOPBACK,
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "WORKBENCH_DATA_DIR": str(data_dir),
        "STATIC_ROOT": str(static_root),
        "PYTHONUNBUFFERED": "1",
    }
    return env


def fault_env(env: dict[str, str]) -> dict[str, str]:
    """What --faults changes: every upload imported by a job, and a short lease, so
    that the job of a killed worker is taken back within seconds."""
    return env | {"WORKBENCH_UPLOAD_JOB_BYTES": "1024", "WORKBENCH_JOB_LEASE_SECONDS": "3"}


def django_setup(env: dict[str, str]) -> None:
    """Configure Django in this process for the load database (building and checking)."""
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()


@dataclass
class Account:
    username: str
    assignment: int
    mode: str  # "html", "api-session" or "api-token"
    token: str = ""


def build_campaign(assessors: int, documents: int) -> list[Account]:
    """One topic per assessor, `documents` documents in each queue, every account
    with PASSWORD hashed once by the production hasher."""
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from judging.models import Assignment
    from pooling.models import Campaign, Document, Pool, PoolEntry, Topic

    campaign = Campaign.objects.create(name="Load test", slug="load")
    topics = Topic.objects.bulk_create(
        Topic(
            campaign=campaign,
            topic_id=str(t),
            title=f"treatment {t} condition",
            description=f"Does treatment {t} help adults with the condition?",
            position=t,
        )
        for t in range(1, assessors + 1)
    )
    Document.objects.bulk_create(
        (
            Document(
                campaign=campaign,
                docno=f"D{t:03d}-{n:05d}",
                title=f"Study {n} of treatment {t}",
                text=SENTENCE * 8,
            )
            for t in range(1, assessors + 1)
            for n in range(documents)
        ),
        batch_size=5_000,
    )
    pool = Pool.objects.create(campaign=campaign, name="load", spec={"depth": documents})
    shuffle = random.Random(7)
    entries = []
    for t, topic in enumerate(topics, start=1):
        order = list(range(1, documents + 1))
        shuffle.shuffle(order)
        entries += [
            PoolEntry(
                pool=pool,
                topic=topic,
                docno=f"D{t:03d}-{n:05d}",
                best_rank=n + 1,
                n_runs=1,
                stratum=1,
                inclusion_probability=1.0,
                sampled=True,
                order=order[n],
            )
            for n in range(documents)
        ]
    PoolEntry.objects.bulk_create(entries, batch_size=5_000)
    hashed = make_password(PASSWORD)
    organiser = User.objects.create(username="organiser", password=hashed, is_staff=True)
    Token.objects.create(user=organiser, key=ORGANISER_TOKEN)
    users = User.objects.bulk_create(
        User(username=f"assessor{k:03d}", password=hashed) for k in range(assessors)
    )
    accounts = []
    for k, (user, topic) in enumerate(zip(users, topics, strict=True)):
        assignment = Assignment.objects.create(pool=pool, topic=topic, assessor=user)
        mode = "html" if k % 2 == 0 else ("api-session" if k % 4 == 1 else "api-token")
        token = Token.objects.create(user=user).key if mode == "api-token" else ""
        accounts.append(Account(user.username, assignment.pk, mode, token))
    # The statistics autovacuum gathers within a minute of a bulk load in
    # production; without them the planner may scan a topic's every entry per judgment.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return accounts


# --------------------------------------------------------------------------
# The server: gunicorn and a task worker, bound to a socket we opened


@dataclass
class Server:
    """gunicorn and the db_worker serving the load: where, and the processes."""

    base: str
    gunicorn: subprocess.Popen
    workers: list[subprocess.Popen]  # db_worker processes, the last one running
    env: dict[str, str]
    root: Path
    log_dir: Path

    def web_workers(self) -> list[int]:
        """The gunicorn master's worker processes."""
        children = Path(f"/proc/{self.gunicorn.pid}/task/{self.gunicorn.pid}/children")
        return [int(pid) for pid in children.read_text().split()]

    def kill_web_worker(self) -> int:
        """SIGKILL one gunicorn worker (the master starts another); its pid."""
        pid = self.web_workers()[0]
        os.kill(pid, signal.SIGKILL)
        return pid

    def kill_task_worker(self) -> int:
        worker = self.workers[-1]
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        return worker.pid

    def start_task_worker(self) -> None:
        log = open(self.log_dir / f"db_worker{len(self.workers)}.log", "w")  # noqa: SIM115
        self.workers.append(
            subprocess.Popen(
                [sys.executable, "manage.py", "db_worker", "--no-reload"],
                cwd=self.root,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )


@contextmanager
def serving(env: dict[str, str], *, log_dir: Path, root: Path = ROOT) -> Iterator[Server]:
    """Run gunicorn (and one db_worker) until the block ends; yields the Server.
    WEB_CONCURRENCY and WORKBENCH_GUNICORN_* in `env` tune gunicorn."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((LOOPBACK, 0))
    listener.listen(2048)
    port = listener.getsockname()[1]
    fd = listener.fileno()
    gunicorn_log = open(log_dir / "gunicorn.log", "w")  # noqa: SIM115
    gunicorn = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "python:config.gunicorn",
            "--bind",
            f"fd://{fd}",
            "config.wsgi",
        ],
        cwd=root,
        env=env,
        pass_fds=[fd],
        stdout=gunicorn_log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = Server(f"http://{LOOPBACK}:{port}", gunicorn, [], env, root, log_dir)
    server.start_task_worker()
    try:
        _wait_until_up(server.base, gunicorn, log_dir / "gunicorn.log")
        yield server
    finally:
        processes = [gunicorn, *server.workers]
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        listener.close()
        gunicorn_log.close()


def _wait_until_up(base: str, process: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{base}/accounts/login/", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"gunicorn did not answer within {timeout:.0f} s:\n{log.read_text()}")


@dataclass
class CpuSample:
    """CPU seconds used so far: by the machine (busy and in all), gunicorn,
    this database's PostgreSQL server processes, and this script."""

    at: float
    busy: float
    total: float
    gunicorn: float
    postgres: float
    client: float


def cpu_sample(database: str) -> CpuSample:
    ticks = os.sysconf("SC_CLK_TCK")
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    gunicorn = postgres = 0.0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"config.gunicorn" in cmdline:
                kind = "gunicorn"
            elif cmdline.startswith(b"postgres: ") and f" {database} ".encode() in cmdline:
                kind = "postgres"  # a server process of this database (a kept connection)
            else:
                continue
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used = (int(stat[11]) + int(stat[12])) / ticks
        if kind == "gunicorn":
            gunicorn += used
        else:
            postgres += used
    own = resource.getrusage(resource.RUSAGE_SELF)
    return CpuSample(
        time.monotonic(),
        (sum(fields) - idle) / ticks,
        sum(fields) / ticks,
        gunicorn,
        postgres,
        own.ru_utime + own.ru_stime,
    )


# --------------------------------------------------------------------------
# The assessors


@dataclass
class Sample:
    kind: str
    start: float
    seconds: float
    status: str  # the HTTP status, or the exception's name


@dataclass
class Save:
    """One judgment sent: what the server must have kept if it acknowledged it."""

    username: str
    docno: str
    labels: dict[str, int]
    seconds: float
    acknowledged: bool
    revision: bool


@dataclass
class Load:
    think: tuple[float, float]
    deadline: float
    revise: float
    max_requests: int
    timeout: float
    saves_each: int = 0  # stop an assessor after this many saves (0: no limit)
    started: float = field(default_factory=time.monotonic)
    database: str = ""
    samples: list[Sample] = field(default_factory=list)
    saves: list[Save] = field(default_factory=list)
    cpu: list[CpuSample] = field(default_factory=list)
    faults: dict[str, Any] = field(default_factory=dict)  # what --faults did

    def more(self) -> bool:
        return time.monotonic() < self.deadline and len(self.samples) < self.max_requests


_CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
_FORM_ACTION = re.compile(r'hx-post="/judge/a/(\d+)/(\d+)/"')
_DOCNO = re.compile(r'<p class="docno mono">([^<·]+)')


def _labels(rng: random.Random) -> dict[str, Any]:
    relevance = rng.choice([0, 0, 1, 2])
    if relevance == 0:
        return {"relevance": relevance}
    return {
        "relevance": relevance,
        "effectiveness": rng.randint(0, 3),
        "credibility": rng.randint(0, 1),
    }


def _stored_form(labels: dict[str, Any]) -> dict[str, int]:
    rel, aspects = SCHEMA.clean(
        labels["relevance"], {k: v for k, v in labels.items() if k != "relevance"}
    )
    return {"relevance": rel, **aspects}


class Assessor:
    def __init__(self, account: Account, base: str, load: Load, seed: int) -> None:
        import httpx

        self.account, self.load = account, load
        self.rng = random.Random(seed)
        self.client = httpx.AsyncClient(
            base_url=base,
            timeout=load.timeout,
            follow_redirects=False,
            headers={"Authorization": f"Token {account.token}"} if account.token else {},
        )
        self.judged: dict[str, int] = {}  # docno judged -> its position (0 on the API)
        self.finished = False
        self.saved = 0  # saves sent

    async def request(self, kind: str, method: str, url: str, **kwargs: Any) -> Any:
        import httpx

        start = time.monotonic()
        try:
            response = await self.client.request(method, url, **kwargs)
        except httpx.HTTPError as error:
            self.load.samples.append(
                Sample(kind, start, time.monotonic() - start, type(error).__name__)
            )
            return None
        self.load.samples.append(
            Sample(kind, start, time.monotonic() - start, str(response.status_code))
        )
        return response

    def more(self) -> bool:
        """Whether this assessor saves again: the run goes on and its own quota is not met."""
        quota = self.load.saves_each
        return self.load.more() and (not quota or self.saved < quota)

    async def think(self) -> None:
        low, high = self.load.think
        if high > 0:
            await asyncio.sleep(self.rng.uniform(low, high))

    async def run(self, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
            if self.account.mode != "api-token" and not await self.log_in():
                return
            if self.account.mode == "html":
                await self.judge_pages()
            else:
                await self.judge_api()
        finally:
            await self.client.aclose()

    async def log_in(self) -> bool:
        page = await self.request("login_page", "GET", "/accounts/login/")
        if page is None or page.status_code != 200:
            return False
        token = _CSRF_INPUT.search(page.text)
        data = {"username": self.account.username, "password": PASSWORD, "next": "/judge/"}
        data["csrfmiddlewaretoken"] = token.group(1) if token else ""
        done = await self.request("login", "POST", "/accounts/login/", data=data)
        return done is not None and done.status_code == 302

    # The HTML page, as htmx drives it

    async def judge_pages(self) -> None:
        assignment = self.account.assignment
        first = await self.request("html_page", "GET", f"/judge/a/{assignment}/")
        if first is None or first.status_code != 302:
            return
        page = await self.request("html_page", "GET", first.headers["location"])
        if page is None or page.status_code != 200:
            return
        csrf = _CSRF_INPUT.search(page.text)
        state = self._page_state(page.text)
        if csrf is None:
            return
        while self.more():
            await self.think()
            if not self.load.more():
                break
            revising = (self.finished or self.rng.random() < self.load.revise) and self.judged
            if not revising and state is None:
                return
            docno, position = (
                self.rng.choice(list(self.judged.items())) if revising else state[::-1]  # type: ignore[index]
            )
            labels = _labels(self.rng)
            seconds = round(self.rng.uniform(1, 30), 3)
            response = await self.request(
                "html_save",
                "POST",
                f"/judge/a/{assignment}/{position}/",
                data={**labels, "seconds": seconds, "csrfmiddlewaretoken": csrf.group(1)},
                headers={"HX-Request": "true"},
            )
            ok = response is not None and response.status_code == 200
            self._record_save(docno, labels, seconds, ok, bool(revising))
            if ok:
                self.judged[docno] = position
                state = self._page_state(response.text)  # type: ignore[union-attr]
                self.finished = state is None

    @staticmethod
    def _page_state(text: str) -> tuple[int, str] | None:
        action, docno = _FORM_ACTION.search(text), _DOCNO.search(text)
        if action is None or docno is None:
            return None
        return int(action.group(2)), html.unescape(docno.group(1).strip())

    # The JSON API

    async def judge_api(self) -> None:
        assignment = self.account.assignment
        headers = {}
        if self.account.mode == "api-session":
            headers["X-CSRFToken"] = self.client.cookies.get("csrftoken", "")
        nxt = await self.next_document()
        while self.more():
            await self.think()
            if not self.load.more():
                break
            revising = (self.finished or self.rng.random() < self.load.revise) and self.judged
            if not revising and nxt is None:
                return
            docno = self.rng.choice(list(self.judged)) if revising else nxt
            labels = _labels(self.rng)
            body = {
                "relevance": labels["relevance"],
                "aspects": {k: v for k, v in labels.items() if k != "relevance"},
                "seconds": round(self.rng.uniform(1, 30), 3),
            }
            response = await self.request(
                "api_save",
                "PUT",
                f"/api/assignments/{assignment}/judgments/{docno}/",
                json=body,
                headers=headers,
            )
            ok = response is not None and response.status_code == 200
            self._record_save(docno, labels, body["seconds"], ok, bool(revising))  # type: ignore[arg-type]
            if ok:
                self.judged[docno] = 0  # type: ignore[index]
                nxt = await self.next_document()

    async def next_document(self) -> str | None:
        response = await self.request(
            "api_next", "GET", f"/api/assignments/{self.account.assignment}/next/"
        )
        if response is None or response.status_code != 200:
            self.finished = response is not None and response.status_code == 204
            return None
        return response.json()["docno"]

    def _record_save(
        self, docno: str, labels: dict[str, Any], seconds: float, ok: bool, revision: bool
    ) -> None:
        self.saved += 1
        self.load.saves.append(
            Save(self.account.username, docno, _stored_form(labels), seconds, ok, revision)
        )


async def warm_up(base: str, requests: int = 32) -> None:
    """Let every gunicorn worker load its views before the clock starts."""
    import httpx

    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        await asyncio.gather(*(client.get("/accounts/login/") for _ in range(requests)))


async def simulate(
    accounts: list[Account],
    server: Server,
    load: Load,
    ramp: float,
    seed: int,
    fault_documents: int = 0,
) -> None:
    """The assessors at work; with `fault_documents`, the faults (`inject_faults`) too."""
    base = server.base
    await warm_up(base)
    load.deadline += time.monotonic() - load.started
    rng = random.Random(seed)
    assessors = [Assessor(a, base, load, seed=rng.randrange(1 << 30)) for a in accounts]
    meter = asyncio.create_task(measure_cpu(load))
    faults = [inject_faults(server, load, fault_documents)] if fault_documents else []
    await asyncio.gather(*(a.run(rng.uniform(0, ramp)) for a in assessors), *faults)
    meter.cancel()
    load.cpu.append(cpu_sample(load.database))


def fault_collection(documents: int) -> bytes:
    return "".join(
        json.dumps({"docno": FAULT_DOCNO.format(n), "title": f"Study {n}", "text": FAULT_TEXT})
        + "\n"
        for n in range(documents)
    ).encode()


async def inject_faults(server: Server, load: Load, documents: int) -> None:
    """Upload a collection as the organiser (a job imports it); once the job has read
    part of it, SIGKILL a gunicorn worker and the db_worker, and start a new db_worker.
    What happened goes to `load.faults`."""
    import httpx

    faults = load.faults
    faults["problems"] = []
    headers = {"Authorization": f"Token {ORGANISER_TOKEN}"}
    async with httpx.AsyncClient(base_url=server.base, timeout=120, headers=headers) as client:
        upload = await client.post(
            "/api/campaigns/load/documents/",
            files={"file": ("faults.jsonl", fault_collection(documents), "application/jsonl")},
        )
        if upload.status_code != 202:
            faults["problems"].append(f"the upload answered {upload.status_code}: {upload.text}")
            return
        faults["job"] = job = upload.json()["job"]
        state: dict[str, Any] = {}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                state = (await client.get(f"/api/jobs/{job}/")).json()
            except (httpx.HTTPError, ValueError):
                state = {}
            # Under way: part of the file read (over already: the check says so).
            if state.get("state") in ("done", "failed") or state.get("done"):
                break
            await asyncio.sleep(0.05)
    faults["job_when_killed"] = {k: state.get(k) for k in ("state", "done", "total")}
    faults["web_worker_killed"] = server.kill_web_worker()
    faults["task_worker_killed"] = server.kill_task_worker()
    faults["killed_after_seconds"] = round(time.monotonic() - load.started, 1)
    server.start_task_worker()


def settle_jobs(timeout: float = 180) -> None:
    """Wait until no job and no task of the database backend is waiting or running."""
    from django_tasks_db.models import DBTaskResult

    from workbench.models import Job

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = Job.objects.filter(state__in=[Job.QUEUED, Job.RUNNING]).exists()
        if not jobs and not DBTaskResult.objects.filter(status__in=["READY", "RUNNING"]).exists():
            return
        time.sleep(0.2)


def verify_jobs(faults: dict[str, Any], documents: int) -> dict[str, Any]:
    """After --faults: the import job done, and run again after its worker was killed;
    every document of its collection stored once, whole; no job or task left waiting
    or running."""
    from django_tasks_db.models import DBTaskResult

    from pooling.models import Document
    from workbench.models import Job

    problems = list(faults.get("problems", []))
    for pk, state, error in Job.objects.exclude(state=Job.DONE).values_list("pk", "state", "error"):
        problems.append(f"job {pk} is {state}" + (f": {error}" if error else ""))
    tasks = Counter(DBTaskResult.objects.values_list("status", flat=True))
    for status in ("READY", "RUNNING"):
        if tasks[status]:
            problems.append(f"{tasks[status]} task row(s) of django-tasks-db left {status}")
    job = Job.objects.filter(pk=faults.get("job")).first()
    attempts = job.attempts if job else 0
    if job is not None and job.state == Job.DONE and attempts < 2:
        problems.append(
            f"the import job ran {attempts} time(s): its worker was not killed in the middle "
            f"of it ({faults.get('job_when_killed')})"
        )
    stored = Document.objects.filter(campaign__slug="load", docno__startswith="F")
    docnos = sorted(stored.values_list("docno", flat=True))
    if docnos != [FAULT_DOCNO.format(n) for n in range(documents)]:
        problems.append(
            f"{len(docnos)} documents of the collection stored ({len(set(docnos))} distinct), "
            f"{documents} sent"
        )
    wrong = stored.exclude(text=FAULT_TEXT).count()
    if wrong:
        problems.append(f"{wrong} documents of the collection stored with another text")
    return {
        **{k: v for k, v in faults.items() if k != "problems"},
        "jobs": dict(Counter(Job.objects.values_list("state", flat=True))),
        "import_attempts": attempts,
        "tasks": dict(tasks),
        "documents_sent": documents,
        "documents_stored": len(docnos),
        "problems": problems,
        "ok": not problems,
    }


async def measure_cpu(load: Load, every: float = 0.5) -> None:
    while True:
        load.cpu.append(cpu_sample(load.database))
        await asyncio.sleep(every)


# --------------------------------------------------------------------------
# Figures


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1), linearly interpolated; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarise(samples: list[Sample]) -> dict[str, Any]:
    """Per kind and for all judging requests together: count, rate, percentiles (ms), errors."""
    groups: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        groups[sample.kind].append(sample)
        if sample.kind in JUDGING_KINDS:
            groups["judging"].append(sample)
    logins = [s.start + s.seconds for s in samples if s.kind == "login"]
    if logins:
        after = max(logins)
        groups["judging_after_logins"] = [s for s in groups["judging"] if s.start >= after]
    result = {}
    for kind, rows in groups.items():
        if not rows:
            continue
        start = min(r.start for r in rows)
        end = max(r.start + r.seconds for r in rows)
        ms = [r.seconds * 1000 for r in rows]
        result[kind] = {
            "start": start,
            "end": end,
            "requests": len(rows),
            "per_second": len(rows) / (end - start) if end > start else math.nan,
            "p50_ms": percentile(ms, 0.50),
            "p95_ms": percentile(ms, 0.95),
            "p99_ms": percentile(ms, 0.99),
            "max_ms": max(ms),
            "errors": dict(Counter(r.status for r in rows if not r.status.startswith(("2", "3")))),
        }
    return result


def cpu_use(load: Load, kind: str, summary: dict[str, Any]) -> dict[str, float]:
    """CPU used while the requests of `kind` ran: the machine's share busy, and
    per request: gunicorn's, this database's PostgreSQL processes' (kept
    connections only) and the load generator's, in milliseconds."""
    rows = summary.get(kind)
    if not rows or len(load.cpu) < 2:
        return {}
    start, end = rows["start"], rows["end"]
    first = max((c for c in load.cpu if c.at <= start), key=lambda c: c.at, default=load.cpu[0])
    last = min((c for c in load.cpu if c.at >= end), key=lambda c: c.at, default=load.cpu[-1])
    n = rows["requests"]
    per_request = (
        last.gunicorn - first.gunicorn + last.postgres - first.postgres + last.client - first.client
    ) / n
    return {
        # What this machine's cores would sustain doing nothing else (PostgreSQL counted
        # only through kept connections: with a connection per request it is in other).
        "capacity_per_second": (os.cpu_count() or 1) / per_request if per_request else math.nan,
        "machine_busy_percent": 100
        * (last.busy - first.busy)
        / max(last.total - first.total, 1e-9),
        "gunicorn_ms_per_request": 1000 * (last.gunicorn - first.gunicorn) / n,
        "postgres_ms_per_request": 1000 * (last.postgres - first.postgres) / n,
        "client_ms_per_request": 1000 * (last.client - first.client) / n,
        "other_cores": (
            (last.busy - first.busy)
            - (last.gunicorn - first.gunicorn)
            - (last.postgres - first.postgres)
            - (last.client - first.client)
        )
        / max(last.at - first.at, 1e-9),
    }


def print_summary(summary: dict[str, Any], extra: dict[str, Any]) -> None:
    columns = ("n", "per s", "p50 ms", "p95 ms", "p99 ms", "max ms")
    print(f"{'request':<20} " + " ".join(f"{c:>8}" for c in columns) + "  errors")
    order = ["judging", "judging_after_logins", *JUDGING_KINDS, "html_page", "login_page", "login"]
    for kind in [k for k in order if k in summary]:
        row = summary[kind]
        errors = (
            ", ".join(f"{status}: {n}" for status, n in sorted(row["errors"].items())) or "none"
        )
        print(
            f"{kind:<20} {row['requests']:>8} {row['per_second']:>8.1f} {row['p50_ms']:>8.1f} "
            f"{row['p95_ms']:>8.1f} {row['p99_ms']:>8.1f} {row['max_ms']:>8.1f}  {errors}"
        )
    for key, value in extra.items():
        print(f"{key}: {value}")


# --------------------------------------------------------------------------
# The check: what the server acknowledged is what the database holds


def verify(saves: list[Save]) -> dict[str, Any]:
    """Compare the saves with the judgments and events stored (Django set up here)."""
    from judging.models import Judgment, JudgmentEvent
    from judging.services import active_seconds

    by_key: dict[tuple[str, str], list[Save]] = defaultdict(list)
    for save in saves:
        by_key[(save.username, save.docno)].append(save)
    stored = {
        (j.assessor.username, j.docno): j
        for j in Judgment.objects.filter(topic__campaign__slug="load").select_related("assessor")
    }
    events: dict[tuple[str, str], list[JudgmentEvent]] = defaultdict(list)
    for event in (
        JudgmentEvent.objects.filter(topic__campaign__slug="load")
        .select_related("assessor")
        .order_by("id")
    ):
        events[(event.assessor.username, event.docno)].append(event)
    problems: list[str] = []
    acknowledged = {key for key, rows in by_key.items() if any(s.acknowledged for s in rows)}
    uncertain = 0
    for key in sorted(set(stored) - set(by_key)):
        problems.append(f"{key}: stored but never sent")
    for key, rows in sorted(by_key.items()):
        judgment = stored.get(key)
        certain = all(s.acknowledged for s in rows)
        if not certain:
            uncertain += 1
        if judgment is None:
            if key in acknowledged:
                problems.append(f"{key}: acknowledged but not stored (lost)")
            continue
        labels = {"relevance": judgment.relevance, **judgment.aspects}
        acked = [s for s in rows if s.acknowledged]
        last_acked = acked[-1].labels if acked else None
        later = (
            [s.labels for s in rows[rows.index(acked[-1]) + 1 :]]
            if acked
            else [s.labels for s in rows]
        )
        if labels != last_acked and labels not in later:
            problems.append(f"{key}: stores {labels}, the last value acknowledged was {last_acked}")
        chain = events.get(key, [])
        for before, after in zip([None, *chain], chain, strict=False):
            if (before.new if before else None) != after.old:
                problems.append(
                    f"{key}: event {after.pk} starts from {after.old}, not {before and before.new}"
                )
        if not chain or chain[-1].new != labels:
            problems.append(f"{key}: the last event does not hold the stored labels")
        if certain:
            changing = [s for i, s in enumerate(rows) if i == 0 or s.labels != rows[i - 1].labels]
            if [e.new for e in chain] != [s.labels for s in changing]:
                problems.append(f"{key}: {len(chain)} events for {len(changing)} changes")
            # A save of the labels already stored changes nothing, its time included.
            spent = sum(active_seconds(s.seconds) for s in changing)
            if not math.isclose(judgment.seconds, spent, rel_tol=1e-9, abs_tol=1e-6):
                problems.append(f"{key}: {judgment.seconds} s stored, {spent} s sent")
    changes_expected = sum(
        sum(1 for i, s in enumerate(rows) if i == 0 or s.labels != rows[i - 1].labels)
        for rows in by_key.values()
    )
    return {
        "saves_sent": len(saves),
        "saves_acknowledged": sum(s.acknowledged for s in saves),
        "revisions_sent": sum(s.revision for s in saves),
        "distinct_documents_saved": len(by_key),
        "rows_stored": len(stored),
        "events_stored": sum(len(chain) for chain in events.values()),
        "changes_sent": changes_expected,
        "documents_with_unacknowledged_saves": uncertain,
        "problems": problems[:50],
        "problem_count": len(problems),
        "ok": not problems,
    }


# --------------------------------------------------------------------------


def parse_think(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    values = float(low), float(high or low)
    if not 0 <= values[0] <= values[1]:
        raise argparse.ArgumentTypeError(f"think time must be LOW-HIGH seconds, not {text!r}")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assessors", type=int, default=50)
    parser.add_argument(
        "--think",
        type=parse_think,
        default=(5.0, 20.0),
        help="LOW-HIGH seconds before each save (default 5-20)",
    )
    parser.add_argument("--saturate", action="store_true", help="no think time")
    parser.add_argument(
        "--duration", type=float, default=120.0, help="seconds of load after the first login"
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=None,
        help="logins spread over this many seconds (default: a quarter of the run, at most 30)",
    )
    parser.add_argument(
        "--revise", type=float, default=0.1, help="share of saves that revise an earlier document"
    )
    parser.add_argument(
        "--documents", type=int, default=2_000, help="documents per assessor's queue"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="gunicorn workers (default: config/gunicorn.py's)",
    )
    parser.add_argument("--threads", type=int, default=None, help="threads per gunicorn worker")
    parser.add_argument(
        "--worker-class", default=None, help="gunicorn worker class (sync, gthread)"
    )
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument(
        "--saves",
        type=int,
        default=0,
        help="each assessor stops after this many saves (a fixed amount of work, whatever "
        "the speed; --duration still bounds the run)",
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds before a request counts as failed"
    )
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--server-root",
        type=Path,
        default=ROOT,
        help="serve from this checkout instead (to measure the code before a change)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures and the check here")
    parser.add_argument(
        "--faults",
        action="store_true",
        help="kill a gunicorn worker and the db_worker in the middle of an import job",
    )
    parser.add_argument(
        "--fault-documents",
        type=int,
        default=20_000,
        help="documents in the collection --faults imports (default 20000)",
    )
    args = parser.parse_args(argv)
    if args.saturate:
        args.think = (0.0, 0.0)
    ramp = args.ramp if args.ramp is not None else min(30.0, args.duration / 4)
    host = args.database_url.split("@")[-1].split("/")[0].split(":")[0]
    if host not in (LOOPBACK, "localhost"):
        raise SystemExit("the load test's database must be on this machine (127.0.0.1)")
    if not database_exists(args.database_url):
        raise SystemExit(f"PostgreSQL does not answer at {_server_url(args.database_url)}")

    work = Path(tempfile.mkdtemp(prefix="load-judging-"))
    env = server_env(args.database_url, work / "data", work / "static")
    if args.faults:
        env = fault_env(env)
    if args.workers:
        env["WEB_CONCURRENCY"] = str(args.workers)
    if args.threads:
        env["WORKBENCH_GUNICORN_THREADS"] = str(args.threads)
    if args.worker_class:
        env["WORKBENCH_GUNICORN_WORKER_CLASS"] = args.worker_class
    started = time.monotonic()
    passed = False
    create_database(args.database_url)
    try:
        for command in (["migrate", "-v0"], ["collectstatic", "--noinput", "-v0"]):
            subprocess.run(
                [sys.executable, "manage.py", *command], cwd=args.server_root, env=env, check=True
            )
        django_setup(env)
        accounts = build_campaign(args.assessors, args.documents)
        pages = sum(a.mode == "html" for a in accounts)
        print(
            f"{args.assessors} assessors ({pages} on the page, {args.assessors - pages} on the "
            f"API), {args.documents} documents each; think {args.think[0]:g}-{args.think[1]:g} s, "
            f"{args.duration:g} s, logins over {ramp:g} s; set up in "
            f"{time.monotonic() - started:.0f} s"
        )
        from django.db import connections

        connections.close_all()
        with serving(env, log_dir=work, root=args.server_root) as server:
            load = Load(
                think=args.think,
                deadline=time.monotonic() + args.duration,
                revise=args.revise,
                max_requests=args.max_requests,
                saves_each=args.saves,
                timeout=args.timeout,
                database=args.database_url.rsplit("/", 1)[1],
            )
            documents = args.fault_documents if args.faults else 0
            # The faults wait for the import job to get under way: up to 120 s more.
            bound = args.duration + ramp + 2 * args.timeout + 10 + (120 if documents else 0)
            asyncio.run(
                asyncio.wait_for(
                    simulate(accounts, server, load, ramp, args.seed, documents), timeout=bound
                )
            )
            if args.faults:
                settle_jobs()
        summary = summarise(load.samples)
        steady = "judging_after_logins" if "judging_after_logins" in summary else "judging"
        cpu = cpu_use(load, steady, summary)
        extra = {f"CPU during {steady}": ", ".join(f"{k} {v:.1f}" for k, v in cpu.items())}
        print_summary(summary, extra)
        check = verify(load.saves)
        if args.faults:
            jobs = verify_jobs(load.faults, args.fault_documents)
            check["jobs"] = jobs
            check["problems"] += jobs["problems"]
            check["problem_count"] += len(jobs["problems"])
            check["ok"] = check["ok"] and jobs["ok"]
            print(
                f"faults: web worker {jobs.get('web_worker_killed')} and db_worker "
                f"{jobs.get('task_worker_killed')} killed after "
                f"{jobs.get('killed_after_seconds')} s (the import job then "
                f"{jobs.get('job_when_killed')}); the job ran {jobs['import_attempts']} times, "
                f"{jobs['documents_stored']} of {jobs['documents_sent']} documents stored; "
                f"jobs {jobs['jobs']}, tasks {jobs['tasks']}"
            )
        passed = check["ok"]
        print(
            f"database: {check['saves_sent']} saves sent ({check['saves_acknowledged']} "
            f"acknowledged, {check['revisions_sent']} revisions) to "
            f"{check['distinct_documents_saved']} documents; {check['rows_stored']} judgments "
            f"stored, {check['events_stored']} events for {check['changes_sent']} changes; "
            f"{check['problem_count']} problems"
        )
        for problem in check["problems"]:
            print(f"  {problem}")
        if not passed:
            print(f"the server's log: {work / 'gunicorn.log'}")
        if args.json:
            args.json.write_text(
                json.dumps(
                    {
                        "args": {k: v for k, v in vars(args).items() if k != "json"},
                        "summary": summary,
                        "check": check,
                        "cpu": cpu,
                        "accounts": [asdict(a) for a in accounts],
                    },
                    indent=2,
                    default=str,
                )
            )
        return 0 if check["ok"] else 1
    finally:
        if not args.keep_database:
            from django.db import connections

            connections.close_all()
            drop_database(args.database_url)
        # The server's log stays for a look when something went wrong.
        shutil.rmtree(work if passed else work / "static", ignore_errors=True)
        shutil.rmtree(work / "data", ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
