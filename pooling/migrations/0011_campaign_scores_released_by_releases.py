"""Teams now see releases (`scoring.models.Release`: frozen snapshots, versioned per
pool), not a pool's live labels: the campaign's pointer to a pool is gone. A
campaign whose scores were released the old way shows none to its teams until
an organiser makes a release (Pool page > Releases), which freezes them."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("pooling", "0010_ids_hold_no_control_characters"),
    ]

    operations = [
        migrations.RemoveField(
            model_name="campaign",
            name="scores_pool",
        ),
        migrations.RemoveField(
            model_name="campaign",
            name="scores_released_at",
        ),
    ]
