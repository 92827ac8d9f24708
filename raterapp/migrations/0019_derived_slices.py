"""The quality estimates per slice move from the snapshot to the derived step that follows it
(the snapshot must stay fast): the snapshots' copies go, and the next derived step computes them."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('raterapp', '0018_reuse'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='estimatesnapshot',
            name='slices',
        ),
        migrations.AddField(
            model_name='derivedestimate',
            name='slices',
            field=models.JSONField(blank=True, help_text='Quality estimates per slice value (attribute → value → metric, contribution); null on rows from before they were computed here.', null=True),
        ),
    ]
