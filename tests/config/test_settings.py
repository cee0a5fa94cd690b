"""settings.py reads the deployment's choices from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STRONG_KEY = "k" * 20 + "-fSg4m9Q2zX7vB1nL8pR3tY6wE0uI5oA"


def environment(tmp_path: Path, **env: str) -> dict[str, str]:
    """This process's environment without the project's settings, plus `env`."""
    ours = ("WORKBENCH_", "SECURE_", "SESSION_", "CSRF_", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    clean.pop("DATABASE_URL", None)
    # Set by the browser tests' Playwright fixture for this test process only.
    clean.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return {**clean, "WORKBENCH_DATA_DIR": str(tmp_path), **env}


def read_settings(tmp_path: Path, names: list[str], **env: str) -> dict:
    """The named settings, as a fresh process with only this environment sees them."""
    code = (
        "import json, sys; from django.conf import settings; "
        "print(json.dumps({n: getattr(settings, n) for n in sys.argv[1:]}, default=str))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *names],
        cwd=ROOT,
        env=environment(tmp_path, DJANGO_SETTINGS_MODULE="config.settings", **env),
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


LOCKOUT = ["AXES_FAILURE_LIMIT", "AXES_COOLOFF_TIME"]


def test_the_login_lockout_defaults(tmp_path):
    assert read_settings(tmp_path, LOCKOUT) == {
        "AXES_FAILURE_LIMIT": 10,
        "AXES_COOLOFF_TIME": "0:15:00",
    }


def test_the_login_lockout_comes_from_the_environment(tmp_path):
    values = read_settings(
        tmp_path,
        LOCKOUT,
        WORKBENCH_LOGIN_FAILURE_LIMIT="5",
        WORKBENCH_LOGIN_COOLOFF_MINUTES="60",
    )
    assert values == {"AXES_FAILURE_LIMIT": 5, "AXES_COOLOFF_TIME": "1:00:00"}


# --------------------------------------------------------------------------
# Deployment: DEBUG off behind the TLS proxy passes `check --deploy`

PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": STRONG_KEY,
    "ALLOWED_HOSTS": "judging.example.org",
    "WORKBENCH_BEHIND_TLS_PROXY": "true",
}


def check_deploy(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=environment(tmp_path, **env),
        capture_output=True,
        text=True,
    )


def test_check_deploy_passes_in_production(tmp_path):
    result = check_deploy(tmp_path, **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_notices_what_the_environment_turns_off(tmp_path):
    result = check_deploy(tmp_path, **PRODUCTION, SECURE_SSL_REDIRECT="false")
    assert result.returncode != 0
    assert "security.W008" in result.stderr


SECURITY = [
    "SECURE_PROXY_SSL_HEADER",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
]


def test_production_defaults(tmp_path):
    assert read_settings(tmp_path, SECURITY, **PRODUCTION) == {
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": False,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
    }


def test_without_the_proxy_setting_no_forwarded_header_is_trusted(tmp_path):
    env = {**PRODUCTION, "WORKBENCH_BEHIND_TLS_PROXY": "false"}
    assert read_settings(tmp_path, ["SECURE_PROXY_SSL_HEADER"], **env) == {
        "SECURE_PROXY_SSL_HEADER": None
    }


def test_the_environment_overrides_each_choice(tmp_path):
    env = {
        **PRODUCTION,
        "SECURE_HSTS_SECONDS": "3600",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": "false",
        "SECURE_HSTS_PRELOAD": "true",
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
    }
    values = read_settings(tmp_path, SECURITY, **env)
    assert values["SECURE_HSTS_SECONDS"] == 3600
    assert values["SECURE_HSTS_PRELOAD"] is True
    for name in ("SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_SSL_REDIRECT"):
        assert values[name] is False, name
    for name in ("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"):
        assert values[name] is False, name


def test_local_development_stays_on_plain_http(tmp_path):
    values = read_settings(tmp_path, SECURITY)
    assert values == {
        "SECURE_PROXY_SSL_HEADER": None,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": False,
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
    }


def test_served_by_gunicorn_each_worker_keeps_its_database_connection(tmp_path):
    """With DEBUG off a connection lives 60 s, checked before reuse; runserver (DEBUG on)
    starts a thread per request, where it would only linger."""
    production = read_settings(
        tmp_path,
        ["DATABASES"],
        DEBUG="false",
        SECRET_KEY=STRONG_KEY,
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/workbench",
    )["DATABASES"]["default"]
    assert (production["CONN_MAX_AGE"], production["CONN_HEALTH_CHECKS"]) == (60, True)
    development = read_settings(tmp_path, ["DATABASES"])["DATABASES"]["default"]
    assert development["CONN_MAX_AGE"] == 0
    given = read_settings(
        tmp_path, ["DATABASES"], DEBUG="false", SECRET_KEY=STRONG_KEY, CONN_MAX_AGE="5"
    )
    assert given["DATABASES"]["default"]["CONN_MAX_AGE"] == 5


def test_gunicorn_runs_two_sync_workers_per_core_and_two_more_with_the_app_preloaded():
    code = "import json, config.gunicorn as g; print(json.dumps([g.workers, g.worker_class, g.threads, g.preload_app, g.bind]))"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEB_", "WORKBENCH_"))}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    cores = len(os.sched_getaffinity(0))
    assert json.loads(out.stdout) == [2 * cores + 2, "sync", 1, True, ["127.0.0.1:8000"]]
