from django.core.management.base import BaseCommand

from workbench.demo import demo_load


class Command(BaseCommand):
    help = "Create (or refresh) the demo campaign and the demo users, and print the logins."

    def handle(self, *args: object, **options: object) -> None:
        summary = demo_load()
        campaign = summary.campaign
        self.stdout.write(
            f"Demo campaign '{campaign.slug}': {campaign.topics.count()} topics, "
            f"{campaign.documents.count()} documents, {campaign.runs.count()} runs "
            f"({summary.new_runs} new)."
        )
        self.stdout.write("Demo logins (local use only):")
        for username, password in summary.users.items():
            self.stdout.write(f"  {username:<10} password: {password}")
