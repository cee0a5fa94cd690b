"""How the workbench's processes start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = "import pyarrow as pa; print(pa.default_memory_pool().backend_name)"
ENTRIES = {
    "manage.py": ["manage.py", "shell", "-c", PROBE],
    "wsgi": ["-c", f"import config.wsgi; {PROBE}"],
    "asgi": ["-c", f"import config.asgi; {PROBE}"],
}


def backend(entry: str, pool: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if pool:
        env["ARROW_DEFAULT_MEMORY_POOL"] = pool
    done = subprocess.run(
        [sys.executable, *ENTRIES[entry]], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1]


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_workbench_processes_allocate_arrow_memory_with_malloc_unless_told(entry):
    """manage.py, wsgi and asgi default ARROW_DEFAULT_MEMORY_POOL to the C library's
    malloc (docs/deployment.md); an explicit setting is left alone."""
    assert backend(entry, None) == "system"
    assert backend(entry, "mimalloc") == "mimalloc"
