from django.apps import AppConfig


class RaterappConfig(AppConfig):
    name = "raterapp"
    verbose_name = "ABCDE rater"

    def ready(self) -> None:
        # The Celery tasks, registered: services/scheduling.py starts them by name.
        from . import (
            signals,  # noqa: F401 - connects the receivers
            tasks,  # noqa: F401
        )
