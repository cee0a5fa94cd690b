"""The order an assessor sees a topic's generated answers in. Pure core, no Django.

Shuffled, so that the order says nothing about the runs (answers are stored run
by run), and seeded, so that the same assignment shows the same order on every
visit and on every machine: `random.Random` seeded with a string is the same
across platforms and Python versions (it hashes the string with SHA-512).
"""

from __future__ import annotations

import random
from collections.abc import Sequence


def shuffled[T](items: Sequence[T], *, seed: int, topic: str) -> list[T]:
    """`items` in the assignment's order: the same for the same seed and topic."""
    order = list(items)
    random.Random(f"answers:{seed}:{topic}").shuffle(order)
    return order
