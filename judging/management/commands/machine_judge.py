from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from judging import machine_services
from judging.machine_client import EndpointError
from judging.models import MachineAssessor
from pooling.models import Pool
from workbench.commands import BarProgress, WorkbenchCommand


class Command(WorkbenchCommand):
    help = (
        "Label a pool's documents with a machine assessor: an OpenAI-compatible "
        "chat-completions endpoint (POST <endpoint>/chat/completions), or with --lexical the "
        "built-in BM25 baseline (no network). The machine is made on first use (named after "
        "the model unless --name) and its settings updated from the options. Cached samples "
        "send no request; a run again goes on where the last stopped. Prints judged, cached, "
        "failed (reasons counted), tokens and cost."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        parser.add_argument("--endpoint", help="base URL, e.g. http://localhost:8000/v1")
        parser.add_argument("--model", help="model name the endpoint knows")
        parser.add_argument("--name", help="machine name (default: the model's, or baseline)")
        parser.add_argument("--api-key-env", help="NAME of the environment variable with the key")
        parser.add_argument("--topics", nargs="+", metavar="T", help="only these topic ids")
        parser.add_argument("--documents", choices=("unjudged", "all"), default="unjudged")
        parser.add_argument("--samples", type=int, help="samples per document (majority)")
        parser.add_argument("--concurrency", type=int, help="most concurrent requests")
        parser.add_argument("--lexical", action="store_true", help="the BM25 baseline")

    def handle(self, *args: object, **options: Any) -> None:
        pool = Pool.objects.select_related("campaign").filter(pk=options["pool"]).first()
        if pool is None:
            raise CommandError(f"--pool {options['pool']}: no such pool")
        try:
            machine = self._machine(pool, options)
            with tqdm(desc="labelling", unit=" docs", disable=None, file=self.stderr) as bar:
                result = machine_services.machine_judge_run(
                    machine=machine,
                    pool=pool,
                    topics=options["topics"],
                    documents=options["documents"],
                    progress=BarProgress(bar),
                )
        except (machine_services.MachineError, EndpointError) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"machine {machine.name} ({machine.model_label}) on pool {pool.pk}")
        for line in result.lines():
            self.stdout.write(line)

    def _machine(self, pool: Pool, options: dict[str, Any]) -> MachineAssessor:
        if options["lexical"]:
            if options["endpoint"] or options["model"]:
                raise CommandError("--lexical takes no --endpoint or --model")
            return machine_services.machine_baseline(campaign=pool.campaign)
        if not options["endpoint"] or not options["model"]:
            raise CommandError("--endpoint and --model are required (or --lexical)")
        name = options["name"] or _name_of(options["model"])
        settings: dict[str, Any] = {"base_url": options["endpoint"], "model": options["model"]}
        for option in ("api_key_env", "samples", "concurrency"):
            if options[option] is not None:
                settings[option] = options[option]
        machine = MachineAssessor.objects.filter(campaign=pool.campaign, name=name).first()
        if machine is None:
            return machine_services.machine_create(campaign=pool.campaign, name=name, **settings)
        if machine.is_baseline:
            raise CommandError(f"{name} is the lexical baseline: use --lexical or another --name")
        return machine_services.machine_update(machine=machine, **settings)


def _name_of(model: str) -> str:
    """A machine name from a model name: "meta-llama/Llama-3.1-8B" -> "Llama-3.1-8B"."""
    tail = model.rsplit("/", 1)[-1]
    name = "".join(c if c.isalnum() or c in "._-" else "-" for c in tail).strip("-._")
    return name[:60] or "machine"
