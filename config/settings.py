"""Settings, driven by environment variables.

SECRET_KEY, DEBUG, ALLOWED_HOSTS and DATABASE_URL come from the environment;
without them the project runs locally on SQLite under ./data with no set-up.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.utils.csp import CSP

from workbench.core.flags import truthy

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("WORKBENCH_DATA_DIR", BASE_DIR / "data"))


def _env_bool(name: str, default: bool) -> bool:
    return truthy(os.environ.get(name, str(default)))


DEBUG = _env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise RuntimeError("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "insecure-development-key-do-not-use-in-production"
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

# HTTPS. With DEBUG off every default below is the safe one (`manage.py check
# --deploy` passes); with DEBUG on they stay off so runserver works over http.
# Behind one TLS-terminating proxy that sets X-Forwarded-Proto and appends the
# client's address to X-Forwarded-For (nginx: proxy_set_header X-Forwarded-Proto
# $scheme; proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for), set
# WORKBENCH_BEHIND_TLS_PROXY=true: without it the SSL redirect would loop.
# Never set it when clients reach gunicorn directly: they could claim https.
WORKBENCH_BEHIND_TLS_PROXY = _env_bool("WORKBENCH_BEHIND_TLS_PROXY", False)
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if WORKBENCH_BEHIND_TLS_PROXY else None
)
SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = _env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = _env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", 0 if DEBUG else 365 * 24 * 3600))
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
# Preloading asks browsers' built-in lists to require HTTPS for the whole domain,
# which is hard to undo: the domain's owner opts in with SECURE_HSTS_PRELOAD=true.
SECURE_HSTS_PRELOAD = _env_bool("SECURE_HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

# Every page: scripts, styles, images, fonts and requests from our own origin
# only (nothing comes from a CDN), in development too so that what breaks
# breaks early. Inline <script> and <style> run only with the response's nonce
# (templates: nonce="{{ csp_nonce }}"); inline event handlers and style
# attributes never do, so templates have none (tests/workbench/test_csp.py).
# data: images are Swagger UI's icons and our empty favicon.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

INSTALLED_APPS = [
    "workbench.admin_site.WorkbenchAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    # Before django_tasks_db: its db_worker command (which also reclaims the jobs of
    # workers that stopped) is the one `manage.py db_worker` runs.
    "workbench",
    "django_tasks_db",
    "pooling",
    "judging",
    "scoring",
    "participation",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # A NUL or control character in the address, a path integer past bigint: 400/404 once.
    "workbench.middleware.RefuseUnreadableRequests",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: turns a locked-out login into workbench.lockout's 429.
    "axes.middleware.AxesMiddleware",
]

if not DEBUG:
    # Serves the collected static files in production; runserver serves them in development.
    MIDDLEWARE.insert(1, "whitenoise.middleware.WhiteNoiseMiddleware")

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
                "workbench.roles.roles_context",
            ],
        },
    },
]

if "DATABASE_URL" not in os.environ:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
# Served by gunicorn (DEBUG off), each worker thread keeps its database
# connection for CONN_MAX_AGE seconds instead of opening one per request: a new
# PostgreSQL connection forks a server process and warms its caches, which cost
# more than the judging request itself. Checked before reuse, so a restarted
# database costs one retry, not an error. runserver (DEBUG on) starts a thread
# per request, where a kept connection would only linger: 0 there.
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{DATA_DIR / 'workbench.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0" if DEBUG else "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets assessors read while another request writes; the busy timeout
    # makes a concurrent writer wait instead of failing with "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # Tests use a file too: an in-memory database shares one cache with table
    # locks that ignore the busy timeout, so concurrent writers could not be tested.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-workbench.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Failed logins (login pages, API tokens) are throttled by django-axes, per
# account and address together (bad tokens per address): after
# WORKBENCH_LOGIN_FAILURE_LIMIT failures, that account from that address gets
# 429 until WORKBENCH_LOGIN_COOLOFF_MINUTES have passed since the last failure;
# a valid token always works. Counts live in the database, so every web
# worker sees them. See workbench/lockout.py.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("WORKBENCH_LOGIN_FAILURE_LIMIT", "10"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("WORKBENCH_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = "workbench.lockout.lockout_parameters"
AXES_CLIENT_IP_CALLABLE = "workbench.lockout.client_address"
AXES_LOCKOUT_CALLABLE = "workbench.lockout.lockout_response"
# No row per successful login: we throttle failures, we do not audit logins.
AXES_DISABLE_ACCESS_LOG = True

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
MEDIA_ROOT = DATA_DIR / "media"
MEDIA_URL = "media/"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Uploads larger than this are streamed to a temporary file, not held in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# The form fields of a request besides its files (files have their own limit below).
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# The largest file accepted through the web (page or API), per file: a larger one
# is cut off as it arrives (workbench/uploads.py) and answered 413. A proxy in
# front should allow request bodies at least this large (nginx: client_max_body_size).
WORKBENCH_MAX_UPLOAD_BYTES = int(os.environ.get("WORKBENCH_MAX_UPLOAD_BYTES", 512 * 1024 * 1024))
# Run uploads larger than this (the files of one request together) are imported by
# a background job, answered 202 with the job's address; smaller ones in the request.
WORKBENCH_UPLOAD_JOB_BYTES = int(os.environ.get("WORKBENCH_UPLOAD_JOB_BYTES", 16 * 1024 * 1024))
FILE_UPLOAD_HANDLERS = [
    "workbench.uploads.SizeLimitedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
# Runs x topics the scores page scores inside the request; more runs as a background job.
WORKBENCH_SYNC_SCORING_CELLS = int(os.environ.get("WORKBENCH_SYNC_SCORING_CELLS", "4000"))
# How often the campaign dashboard asks for fresh numbers while it is open.
WORKBENCH_DASHBOARD_REFRESH_SECONDS = int(
    os.environ.get("WORKBENCH_DASHBOARD_REFRESH_SECONDS", "10")
)

# One cache for every process of a deployment (web workers, the task worker,
# the commands): a ranked campaign and the dashboard's agreement alerts are
# computed once, not once per process (`campaign_status` in a shell loop would
# load pandas on every call). Several machines: point it at shared storage.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": os.environ.get("WORKBENCH_CACHE_DIR", str(DATA_DIR / "cache")),
        "TIMEOUT": 3600,
        "OPTIONS": {"MAX_ENTRIES": 2000},
    }
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "workbench.lockout.LockoutTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PARSER_CLASSES": [
        "workbench.api.JSONParser",
        "rest_framework.parsers.MultiPartParser",
        "rest_framework.parsers.FormParser",
    ],
    "EXCEPTION_HANDLER": "workbench.api.handle_exception",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Judging workbench API",
    "DESCRIPTION": "Upload runs, judge documents, fetch qrels and scores.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema for logged-in users only (urls.py sends people to log in for the docs).
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI and Redoc from our static files, never from a CDN: /api/docs/ works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No validator badge: it is an image fetched from validator.swagger.io.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    # Every operation documents the 400, 401, 403 and 404 DRF can answer for it.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "workbench.api.document_errors",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# Long work (imports, pool builds and revisions, bundles) runs as jobs
# (workbench.jobs) on django-tasks-db: tasks are rows of the database, and
# `python manage.py db_worker` (one or more, on any machine sharing the
# database) runs them. WORKBENCH_TASKS=immediate runs them in the request
# instead (the test suite's default; no worker needed).
TASKS = {
    "default": {
        "BACKEND": "django.tasks.backends.immediate.ImmediateBackend"
        if os.environ.get("WORKBENCH_TASKS") == "immediate"
        else "django_tasks_db.DatabaseBackend",
    }
}
# A worker holds a lease on the job it runs and renews it (a heartbeat) several
# times per lease; a job whose lease has run out (its worker was killed, or its
# machine stopped) is run again by another worker, at most WORKBENCH_JOB_ATTEMPTS
# times in all, then failed with the reason (workbench.jobs).
WORKBENCH_JOB_LEASE_SECONDS = float(os.environ.get("WORKBENCH_JOB_LEASE_SECONDS", "60"))
WORKBENCH_JOB_ATTEMPTS = int(os.environ.get("WORKBENCH_JOB_ATTEMPTS", "3"))
if not WORKBENCH_JOB_LEASE_SECONDS > 0 or WORKBENCH_JOB_ATTEMPTS < 1:
    raise RuntimeError(
        "WORKBENCH_JOB_LEASE_SECONDS must be more than 0 and WORKBENCH_JOB_ATTEMPTS 1 or more"
    )
