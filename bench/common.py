"""What the benchmark scripts share: the workload's run files and best-of timing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Measure the workbench as its processes run: manage.py and wsgi.py default
# Arrow's allocator to the C library's malloc (an explicit setting wins in both).
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
import pyarrow as pa  # noqa: E402

ARROW_MEMORY_POOL = pa.default_memory_pool().backend_name


def run_files(workload: Path) -> list[Path]:
    """The workload's run files, generating the default workload there if it is missing."""
    if not (workload / "runs").is_dir():
        generator = ROOT / "bench" / "gen_workload.py"
        subprocess.run([sys.executable, str(generator), "--out", str(workload)], check=True)
    files = sorted((workload / "runs").glob("*.txt"))
    if not files:
        raise SystemExit(f"no run files in {workload / 'runs'}")
    return files


def best_time(job: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` wall-clock timings of `job`, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return min(times)
