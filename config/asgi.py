import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Arrow's own switch (docs/deployment.md): the C library's malloc keeps freed
# memory for the next import or pool build, where mimalloc returns it to the system.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
application = get_asgi_application()
