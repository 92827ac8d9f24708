"""The Django project and app of the ABCDE rater: the web side of the rating loop."""

from .celery import app as celery_app

__all__ = ["celery_app"]
