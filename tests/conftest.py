"""Shared fixtures: personas (an organiser, two assessors, a participant) and isolated storage.

The pure-core tests also run without Django (`-p no:django`), so nothing
here may require pytest-django unless its plugin is active.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.core.signals import setting_changed
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

# Failing examples Hypothesis finds are kept in the repository, so that a case
# found once (by anyone, or by CI) is tried again in every later run.
settings.register_profile(
    "workbench",
    database=DirectoryBasedExampleDatabase(Path(__file__).parent / "hypothesis-examples"),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
# HYPOTHESIS_PROFILE=long searches harder (before a release, or after changing a reader).
settings.register_profile("long", parent=settings.get_profile("workbench"), max_examples=3000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "workbench"))

# Hashing a password the production way takes about half a second, and the
# suite makes hundreds of accounts: tests use a fast hasher (HackSoft's test settings).
FAST_PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("django"):
        from django.conf import settings

        settings.PASSWORD_HASHERS = FAST_PASSWORD_HASHERS
        # A cache of each test process's own: the deployment's is a directory the
        # parallel workers would share, and every test starts by clearing it.
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
        # Jobs run inside the request (tests/workbench/test_jobs.py also runs
        # them the production way, with a worker process).
        settings.TASKS = {
            "default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}
        }
        _reset_task_backends(setting="TASKS")  # in case a module made one at import


@pytest.fixture(autouse=True)
def _isolated_media(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Uploaded files go to a temporary directory, never to ./data."""
    if request.config.pluginmanager.hasplugin("django"):
        settings = request.getfixturevalue("settings")
        settings.MEDIA_ROOT = tmp_path_factory.mktemp("media")


def _reset_task_backends(*, setting: str, **kwargs) -> None:
    """Django 6 caches its task backends and has no receiver for TASKS: a test that
    changes TASKS (the real-worker test) would leave its backend to the tests after it."""
    if setting == "TASKS":
        from django.tasks import task_backends
        from django.utils.connection import Local

        task_backends.__dict__.pop("settings", None)
        task_backends._settings = None
        task_backends._connections = Local(task_backends.thread_critical)


setting_changed.connect(_reset_task_backends)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty cache: ids repeat across rolled-back tests."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def organiser(db):
    from tests.helpers import make_user

    return make_user("olivia", organiser=True)


@pytest.fixture
def assessor(db):
    from tests.helpers import make_user

    return make_user("alice")


@pytest.fixture
def assessor2(db):
    from tests.helpers import make_user

    return make_user("bob")


@pytest.fixture
def participant(db):
    from tests.helpers import make_user

    return make_user("pat")


@pytest.fixture
def participant_client(client, participant):
    client.force_login(participant)
    return client


@pytest.fixture
def organiser_client(client, organiser):
    client.force_login(organiser)
    return client


@pytest.fixture
def assessor_client(client, assessor):
    client.force_login(assessor)
    return client
