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

OUR_APPS = ("pooling", "judging", "scoring", "participation", "demo")


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
