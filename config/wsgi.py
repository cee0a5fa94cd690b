import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Arrow's own switch (docs/deployment.md): the C library's malloc keeps freed
# memory for the next import or pool build, where mimalloc returns it to the system.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
application = get_wsgi_application()

# Import every view now, not on each worker's first request: gunicorn loads this
# module once before forking its workers (preload_app in config/gunicorn.py),
# so they start warm and share those pages of memory. Opens no database connection.
from django.urls import get_resolver  # noqa: E402

get_resolver().url_patterns  # noqa: B018
