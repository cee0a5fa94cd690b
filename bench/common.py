"""What the benchmark scripts share: the workload's run files and best-of timing."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pooling.arrow_memory import use_system_allocator  # noqa: E402

# Measure the workbench as its processes run: PoolingConfig.ready() makes the
# same call at startup (and ARROW_DEFAULT_MEMORY_POOL overrides it in both).
ARROW_MEMORY_POOL = use_system_allocator()


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
