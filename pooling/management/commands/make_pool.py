import sys

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from pooling.commands import add_pool_spec_arguments, spec_or_error
from pooling.core.ranking import PoolInputError
from pooling.core.strategies import pool_from_run_files, write_pool_tsv
from workbench.commands import WorkbenchCommand, existing_file
from workbench.core.problems import InputError
from workbench.core.streams import quiet_on_closed_stdout


class Command(WorkbenchCommand):
    help = (
        "Pool run files without the database and write the pool as TSV "
        "(topic docno best_rank n_runs stratum inclusion_probability sampled order)."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("runs", nargs="+", metavar="RUN_FILE")
        parser.add_argument("--out", help="write here instead of standard output")
        add_pool_spec_arguments(parser)

    @quiet_on_closed_stdout
    def handle(self, *args: object, **options: object) -> None:
        spec = spec_or_error(options)
        paths = [existing_file(path) for path in options["runs"]]
        with tqdm(
            total=len(paths), desc="reading runs", unit=" files", disable=None, file=self.stderr
        ) as bar:
            try:
                pool = pool_from_run_files(paths, spec, progress=bar.update)
            except InputError as error:
                raise CommandError(f"rejected:\n{error}") from None
            except PoolInputError as error:
                raise CommandError(str(error)) from None
        if options["out"]:
            rows = write_pool_tsv(pool, options["out"])
            self.stderr.write(f"wrote {rows:,} entries to {options['out']}")
        else:
            write_pool_tsv(pool, sys.stdout)
