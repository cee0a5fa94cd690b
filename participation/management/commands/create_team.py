from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from participation import services as team_services
from pooling.commands import campaign_or_error
from pooling.errors import TeamError
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = (
        "Register a team of participants in a campaign (or set the members of the team "
        "of that name); --accept-late N accepts N more runs from it after the deadline."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign slug")
        parser.add_argument("--name", required=True, help="the team's name")
        parser.add_argument(
            "--member", action="append", default=[], help="username (repeat for several)"
        )
        parser.add_argument(
            "--accept-late", type=int, default=0, metavar="N", help="late runs to accept"
        )

    def handle(self, *args: object, **options: object) -> None:
        campaign = campaign_or_error(options["campaign"])
        names = list(options["member"])
        members = list(get_user_model().objects.filter(username__in=names))
        unknown = sorted(set(names) - {m.username for m in members})
        if unknown:
            raise CommandError(f"no account named {', '.join(unknown)}")
        team = campaign.teams.filter(name=options["name"].strip()).first()
        try:
            if team is None:
                team = team_services.team_create(
                    campaign=campaign, name=options["name"], members=members
                )
                action = "registered"
            else:
                team = team_services.team_members_set(team=team, members=members)
                action = "updated"
            if options["accept_late"]:
                team = team_services.team_late_runs_accept(team=team, count=options["accept_late"])
        except TeamError as error:
            raise CommandError(str(error)) from None
        usernames = ", ".join(sorted(m.username for m in team.members.all())) or "no member"
        self.stdout.write(
            f"team {team.name} {action} in {campaign.slug}: {usernames}; "
            f"{team.late_runs_accepted} late run(s) accepted"
        )
