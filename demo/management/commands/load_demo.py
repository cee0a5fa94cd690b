from demo.services import demo_load
from judging.models import MachineJudgment
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Create (or refresh) the demo campaign and the demo users, and print the logins."

    def handle(self, *args: object, **options: object) -> None:
        summary = demo_load()
        campaign = summary.campaign
        self.stdout.write(
            f"Demo campaign '{campaign.slug}': {campaign.topics.count()} topics, "
            f"{campaign.documents.count()} documents, {campaign.runs.count()} runs "
            f"({summary.new_runs} new)."
        )
        pool = summary.pool
        self.stdout.write(
            f"Pool {pool.pk} ({pool.name}): {pool.entries.filter(sampled=True).count()} documents "
            f"to judge; topics 1-3 for assessor1, 4-5 for assessor2, 20% judged by both."
        )
        machine_labels = MachineJudgment.objects.filter(topic__campaign=campaign).count()
        self.stdout.write(
            f"Machine assessor 'baseline' (lexical, offline): {machine_labels:,} labels of pool "
            f"{pool.pk}, kept apart from the assessors' (Pool > Machine assessors)."
        )
        answers = summary.answers
        self.stdout.write(
            f"Demo campaign '{answers.slug}': {answers.answer_runs.count()} runs of generated "
            f"answers to {answers.topics.count()} topics, with nuggets; topics 1-2 judged."
        )
        self.stdout.write("Demo logins (local use only):")
        for username, password in summary.users.items():
            self.stdout.write(f"  {username:<10} password: {password}")
