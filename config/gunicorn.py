"""gunicorn's settings for the workbench (docs/deployment.md):

    gunicorn -c python:config.gunicorn config.wsgi

Options on the command line win over these; the environment tunes them:
WEB_CONCURRENCY (worker processes), WORKBENCH_GUNICORN_WORKER_CLASS and
WORKBENCH_GUNICORN_THREADS, WORKBENCH_BIND (default 127.0.0.1:8000, where
the TLS proxy forwards to).

Sync workers, two per core and two more (bench/load_judging.py, 2 cores):
- a judging request waits on PostgreSQL for about half its time (round trips
  and the commit's flush to disk), so more workers than cores keep the cores
  busy: 6 sync workers sustain ~100 save-and-next requests/s where 4 gave ~75;
- a login hashes its password for ~0.4 s of CPU (PBKDF2, Django's default
  strength) in the worker that serves it: with two spare workers, a login or
  two never hold every worker, and logins are served in the order they arrive.
  gthread workers (2 x 16 threads) judged as fast but hashed a burst of logins
  all at once, each at a fraction of a core: under saturation their median
  login took ~5.7 s against ~1.8 s here.
"""

import os

bind = [os.environ.get("WORKBENCH_BIND", "127.0.0.1:8000")]
workers = int(os.environ.get("WEB_CONCURRENCY", 2 * len(os.sched_getaffinity(0)) + 2))
worker_class = os.environ.get("WORKBENCH_GUNICORN_WORKER_CLASS", "sync")
threads = int(os.environ.get("WORKBENCH_GUNICORN_THREADS", "1"))
# Django, the views and their libraries are imported once, before the fork
# (config/wsgi.py): workers start warm and share those pages.
preload_app = True
# A request (an upload that goes to the background included) ends well within this.
timeout = 60
graceful_timeout = 30
