from django.apps import AppConfig


class RaterappConfig(AppConfig):
    name = "raterapp"
    verbose_name = "ABCDE rater"

    def ready(self) -> None:
        # Every process of the product (web, workers, tests) computes with BLAS on one thread.
        from metrics_core.blas_threads import use_one_blas_thread

        use_one_blas_thread()
        # The Celery tasks, registered: services/scheduling.py starts them by name.
        from . import (
            signals,  # noqa: F401 - connects the receivers
            tasks,  # noqa: F401
        )
