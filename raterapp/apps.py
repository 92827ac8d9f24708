from django.apps import AppConfig


class RaterappConfig(AppConfig):
    name = "raterapp"
    verbose_name = "ABCDE rater"
