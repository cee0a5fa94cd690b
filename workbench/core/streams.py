"""Command-line output that ends quietly when its reader goes away. Pure, no Django.

Shared by the management commands of every app and by the scorer's console
scripts (`scoring.core.command_line`), which load neither Django nor the project
package.

`manage.py export_pool ... | head` closes the pipe early; the C tools that
organisers know stop silently then, so ours do too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any


def discard_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def quiet_on_closed_stdout[F: Callable[..., Any]](handle: F) -> F:
    """Wrap a command's `handle`: a closed stdout ends it quietly instead of a traceback."""

    @wraps(handle)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handle(*args, **kwargs)
        except BrokenPipeError:
            discard_stdout()
            return None

    return wrapper  # type: ignore[return-value]
