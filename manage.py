#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Arrow's own switch (docs/deployment.md): the C library's malloc keeps freed
    # memory for the next import or pool build, where mimalloc returns it to the system.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
