"""Active times stored before they were validated: NaN, infinite or negative become 0.

Such a value broke every JSON answer that listed the judgment.
"""

import math

from django.db import migrations


def clean_seconds(apps, schema_editor):
    for name in ("Judgment", "JudgmentEvent"):
        model = apps.get_model("judging", name)
        bad = [
            pk
            for pk, seconds in model.objects.values_list("pk", "seconds").iterator()
            if not (math.isfinite(seconds) and seconds >= 0)
        ]
        model.objects.filter(pk__in=bad).update(seconds=0.0)


class Migration(migrations.Migration):
    dependencies = [("judging", "0002_adjudication_policy")]

    operations = [migrations.RunPython(clean_seconds, migrations.RunPython.noop)]
