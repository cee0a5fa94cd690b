from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from judging import answer_machine_services
from judging.machine_client import EndpointError
from judging.machine_services import MachineError
from pooling.models import Campaign
from workbench.commands import BarProgress, WorkbenchCommand


class Command(WorkbenchCommand):
    help = (
        "Machine help on a generated-answers campaign (a pre-fill humans post-edit): "
        "--propose makes each topic's next nugget version from the topic and its answers; "
        "--assign labels each answer against the topic's current nuggets (the machine's own "
        "labels, never scored). --machine names a machine of the campaign (set up on a pool's "
        "Machine assessors page or with machine_judge), or baseline for the lexical one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument("--machine", required=True, help="machine name, or baseline")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--propose", action="store_true", help="propose nuggets")
        action.add_argument("--assign", action="store_true", help="label the answers")
        parser.add_argument("--topics", nargs="+", metavar="T", help="only these topic ids")
        parser.add_argument(
            "--again", action="store_true", help="--assign: label answers labelled already too"
        )

    def handle(self, *args: object, **options: Any) -> None:
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"--campaign {options['campaign']}: no such campaign")
        if not campaign.is_answers:
            raise CommandError(f"--campaign {campaign.slug}: not a generated-answers campaign")
        try:
            machine = answer_machine_services.machine_named(
                campaign=campaign, name=options["machine"]
            )
            answer_machine_services.check_run(
                machine=machine, campaign=campaign, topics=options["topics"]
            )
            unit = " topics" if options["propose"] else " answers"
            with tqdm(desc=machine.name, unit=unit, disable=None, file=self.stderr) as bar:
                if options["propose"]:
                    result = answer_machine_services.machine_nuggets_propose(
                        machine=machine,
                        campaign=campaign,
                        topics=options["topics"],
                        progress=BarProgress(bar),
                    )
                else:
                    result = answer_machine_services.machine_answers_assign(
                        machine=machine,
                        campaign=campaign,
                        topics=options["topics"],
                        again=options["again"],
                        progress=BarProgress(bar),
                    )
        except (MachineError, EndpointError) as error:
            raise CommandError(str(error)) from None
        what = "proposed nuggets" if options["propose"] else "labelled answers"
        self.stdout.write(
            f"machine {machine.name} ({machine.model_label}) {what} in {campaign.slug}"
        )
        for line in result.lines():
            self.stdout.write(line)
