from django.contrib.auth.models import User
from django.core.management.base import CommandError, CommandParser

from judging import services
from pooling.commands import pool_or_error
from workbench.commands import WorkbenchCommand


class Command(WorkbenchCommand):
    help = (
        "Make assessors the primary assessors of topics of a pool. With several "
        "assessors the topics are dealt out in turn."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, required=True, help="pool id")
        parser.add_argument(
            "--topic", action="append", default=[], help="topic id (repeat, or 'all')"
        )
        parser.add_argument(
            "--assessor", action="append", required=True, help="username (repeat for several)"
        )

    def handle(self, *args: object, **options: object) -> None:
        pool = pool_or_error(options["pool"])
        wanted = options["topic"]
        if not wanted:
            raise CommandError("give at least one --topic (or --topic all)")
        topics = pool.campaign.topics.all()
        if wanted != ["all"]:
            topics = topics.filter(topic_id__in=wanted)
            missing = sorted(set(wanted) - set(topics.values_list("topic_id", flat=True)))
            if missing:
                raise CommandError(
                    f"not topics of campaign {pool.campaign.slug}: {', '.join(missing)}"
                )
        names = options["assessor"]
        assessors = list(User.objects.filter(username__in=names, is_active=True))
        unknown = sorted(set(names) - {a.username for a in assessors})
        if unknown:
            raise CommandError(f"no active user named {', '.join(unknown)}")
        assessors.sort(key=lambda a: names.index(a.username))
        try:
            assignments = services.assignments_create(pool=pool, topics=topics, assessors=assessors)
        except services.AssignmentError as error:
            raise CommandError(str(error)) from None
        for assignment in assignments:
            self.stdout.write(f"topic {assignment.topic.topic_id}: {assignment.assessor.username}")
