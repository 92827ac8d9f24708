from django.apps import AppConfig


class RaterappConfig(AppConfig):
    name = "raterapp"
    verbose_name = "ABCDE rater"

    def ready(self) -> None:
        from . import signals  # noqa: F401 - connects the receivers
