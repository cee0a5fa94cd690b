"""Every workbench command exits with status 2 when it refuses its input."""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import pytest
from django.core.management import CommandError, get_commands, load_command_class

from pooling.commands import add_pool_spec_arguments, pool_spec_from_options
from pooling.core.spec import PoolSpec, Stratum
from workbench.commands import BAD_INPUT, WorkbenchCommand

OUR_APPS = ("workbench", "pooling", "judging", "scoring", "participation", "demo")


def our_commands() -> list[tuple[str, str]]:
    return sorted((name, app) for name, app in get_commands().items() if app in OUR_APPS)


@pytest.mark.parametrize(("name", "app"), our_commands())
def test_every_command_is_a_workbench_command(name, app):
    assert isinstance(load_command_class(app, name), WorkbenchCommand), (
        f"{app}.{name} would exit with Django's status 1 on bad input"
    )


def test_a_refusal_exits_with_status_2_unless_the_command_chose_another():
    class Refuses(WorkbenchCommand):
        def handle(self, *args, **options):
            raise CommandError("bad file")

    class Chooses(WorkbenchCommand):
        def handle(self, *args, **options):
            raise CommandError("failed", returncode=3)

    with pytest.raises(CommandError) as refused:
        Refuses().execute(skip_checks=True, no_color=True, force_color=False, stdout=None)
    assert refused.value.returncode == BAD_INPUT == 2
    with pytest.raises(CommandError) as chosen:
        Chooses().execute(skip_checks=True, no_color=True, force_color=False, stdout=None)
    assert chosen.value.returncode == 3


def test_the_apps_have_commands():
    found = {
        module.name
        for app in OUR_APPS
        for module in pkgutil.iter_modules(
            importlib.import_module(f"{app}.management.commands").__path__
        )
        if not module.name.startswith("_")
    }
    assert {name for name, _ in our_commands()} == found


def test_spec_parses_the_command_line_syntax():
    parser = argparse.ArgumentParser()
    add_pool_spec_arguments(parser)
    command_line = "--depth 20 --stratum 21-100:0.8 --stratum 101-500:0.5 --topic-depth 301:10"
    options = parser.parse_args(
        [*command_line.split(), "--seed", "9", "--order", "docno", "--allow-gaps"]
    )
    spec = pool_spec_from_options(vars(options))
    assert spec == PoolSpec(
        depth=20,
        strata=(Stratum(21, 100, 0.8), Stratum(101, 500, 0.5)),
        topic_depths={"301": 10},
        seed=9,
        order="docno",
        allow_gaps=True,
    )
    assert spec.strata_for("301")[0] == Stratum(1, 10, 1.0)
    assert spec.max_depth == 500
    assert pool_spec_from_options(vars(parser.parse_args(spec.to_args()))) == spec


# --------------------------------------------------------------------------
# manage.py jobs


@pytest.mark.django_db
def test_the_jobs_command_lists_retries_and_cancels_jobs(
    organiser, django_capture_on_commit_callbacks
):
    from io import StringIO

    from django.core.management import call_command

    from workbench.models import Job

    failed = Job.objects.create(
        kind="tests.workbench.test_jobs.counting_job",
        title="Counting",
        params={"n": 1},
        state=Job.FAILED,
        error="the worker running it stopped 3 times",
        attempts=3,
    )
    waiting = Job.objects.create(kind="x", title="Waiting")
    out = StringIO()
    call_command("jobs", "--state", "failed", stdout=out)
    assert out.getvalue().splitlines() == [
        "id\tstate\tattempts\tlast heartbeat\tcreated\ttitle",
        f"{failed.pk}\tfailed\t3/3\t-\t{failed.created_at.astimezone():%Y-%m-%d %H:%M:%S}\tCounting",
    ]
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("jobs", "--retry", str(failed.pk), stdout=out)
    assert out.getvalue() == f"job {failed.pk} queued again: Counting\n"
    failed.refresh_from_db()
    assert (failed.state, failed.attempts) == ("done", 1)
    out = StringIO()
    call_command("jobs", "--cancel", str(waiting.pk), stdout=out)
    assert out.getvalue() == f"job {waiting.pk} cancelled before it started\n"
    waiting.refresh_from_db()
    assert waiting.error.startswith("Cancelled by an operator at ")
    for refused, message in [
        (["--retry", str(failed.pk)], f"job {failed.pk} is done: only a failed job"),
        (["--cancel", "999"], "no job with id 999"),
    ]:
        with pytest.raises(CommandError, match=message) as error:
            call_command("jobs", *refused)
        assert error.value.returncode == BAD_INPUT
