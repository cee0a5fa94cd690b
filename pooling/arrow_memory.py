"""The memory pool Arrow allocates from in the workbench. Pure core, no Django.

pyarrow's default pool (mimalloc) gives the pages of large freed buffers
back to the system, so work that allocates and frees a few hundred MiB
again and again pays for fresh pages every time. Building a depth-100 pool
from 80 run files (bench/bench_pool.py) took ~55,000 page faults and
~150 ms of system time per build with mimalloc, and ~2,000 faults and
~40 ms with the C library's malloc, which keeps freed memory for reuse. In
three paired runs of bench_pool the wall-time ratio fell by 3 to 9%. The
price is some peak memory: 200 MiB either way at 30 x 80, ~330 MiB
instead of ~260 MiB for 10 M run lines.
"""

from __future__ import annotations

import os

import pyarrow as pa

ENVIRONMENT_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"  # Arrow's own switch: honoured if set


def use_system_allocator() -> str:
    """Make the C library's malloc Arrow's default pool, unless
    ARROW_DEFAULT_MEMORY_POOL names one; returns the pool's backend name."""
    if not os.environ.get(ENVIRONMENT_VARIABLE):
        pa.set_memory_pool(pa.system_memory_pool())
    return pa.default_memory_pool().backend_name
