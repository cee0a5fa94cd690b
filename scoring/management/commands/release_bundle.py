from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from pooling.commands import pool_or_error
from scoring import release_selectors
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = (
        "Write a release's bundle: qrels.txt (and the pool's other qrels layouts), runs/<tag> "
        "as submitted, scores.tsv, the leaderboard (TSV, JSON, LaTeX), manifest.json (hashes "
        "of every file, run and the workbench version) and reproduce.sh, whose wb-trec-eval "
        "commands print scores.tsv again from the bundle's files."
    )

    def add_base_argument(self, parser: CommandParser, *args: Any, **kwargs: Any) -> None:
        # --version is the release's here, not Django's (manage.py version says that).
        if args != ("--version",):
            super().add_base_argument(parser, *args, **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        parser.add_argument("--version", type=int, required=True, help="release version")
        parser.add_argument("--out", type=Path, required=True, help="the zip file to write")

    def handle(self, *args: object, **options: object) -> None:
        pool = pool_or_error(options["pool"])
        release = release_selectors.release_or_none(pool, int(options["version"]))
        if release is None:
            versions = ", ".join(str(r.version) for r in release_selectors.pool_releases(pool))
            raise CommandError(
                f"pool {pool.pk} has no release {options['version']}"
                + (f" (its releases: {versions})" if versions else " (none released yet)")
            )
        out = Path(str(options["out"]))
        if not out.parent.is_dir():
            raise CommandError(f"{out.parent}: no such folder")
        partial = out.with_name(f".{out.name}.partial")
        try:
            with partial.open("wb") as file:
                release_selectors.release_bundle(release, file)
            partial.replace(out)
        except release_selectors.ReleaseError as error:
            raise CommandError(str(error)) from None
        finally:
            partial.unlink(missing_ok=True)
        self.stderr.write(f"wrote {out} ({out.stat().st_size:,} bytes)")
