"""settings.py reads the deployment's choices from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STRONG_KEY = "k" * 20 + "-fSg4m9Q2zX7vB1nL8pR3tY6wE0uI5oA"


def read_settings(tmp_path: Path, names: list[str], **env: str) -> dict:
    """The named settings, as a fresh process with only this environment sees them."""
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_", "SECURE", "DEBUG"))
    }
    clean.pop("SECRET_KEY", None)
    clean.pop("DATABASE_URL", None)
    clean.update(
        {"WORKBENCH_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "workbench.settings"}
    )
    clean.update(env)
    code = (
        "import json, sys; from django.conf import settings; "
        "print(json.dumps({n: getattr(settings, n) for n in sys.argv[1:]}, default=str))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *names], cwd=ROOT, env=clean, capture_output=True, text=True
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
