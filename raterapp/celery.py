"""The Celery app: Redis as broker in production, a file-system broker for the embedded demo."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "raterapp.settings")

app = Celery("raterapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["raterapp"])
