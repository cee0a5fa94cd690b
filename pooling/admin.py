from django.contrib import admin

from pooling.models import Campaign, Document, Run, Topic
from workbench.admin_site import OrganiserModelAdmin


@admin.register(Campaign)
class CampaignAdmin(OrganiserModelAdmin):
    list_display = ["name", "slug", "task_kind", "judgment_budget", "created_at"]
    prepopulated_fields = {"slug": ["name"]}
    search_fields = ["name", "slug"]
    # Changed on the campaign's edit page only, which refuses the schema once there are
    # judgments and the task kind once there are runs, gold files or submissions; the
    # release of scores on its teams page, which checks the pool is the campaign's.
    readonly_fields = ["label_schema", "task_kind"]


@admin.register(Topic)
class TopicAdmin(OrganiserModelAdmin):
    list_display = ["topic_id", "title", "campaign"]
    list_filter = ["campaign"]
    search_fields = ["topic_id", "title"]


@admin.register(Document)
class DocumentAdmin(OrganiserModelAdmin):
    list_display = ["docno", "title", "campaign"]
    list_filter = ["campaign"]
    search_fields = ["docno", "title"]
    show_full_result_count = False


@admin.register(Run)
class RunAdmin(OrganiserModelAdmin):
    list_display = ["tag", "campaign", "topic_count", "line_count", "depth", "uploaded_at"]
    list_filter = ["campaign"]
    search_fields = ["tag"]
    readonly_fields = [
        "original_file",
        "cache_file",
        "sha256",
        "line_count",
        "topic_count",
        "depth",
        "documents_per_topic",
        # A team's run, its precedence and late mark come from the team's submission.
        "team",
        "precedence",
        "late",
    ]
