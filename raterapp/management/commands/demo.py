"""``python manage.py demo``: the Febrl demo experiment, its users, and optionally simulated raters."""

import time

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from raterapp.models import Experiment
from raterapp.services.demo import (
    DEMO_PASSWORD,
    SIMULATED_RATERS,
    demo_experiment_ensure,
    demo_raters_simulate,
    demo_users_ensure,
)

# Every `make demo` shows the same minute: unseeded, one run in twenty put an unsure verdict on the
# demo's 25th pair in draw order, the first that ΔRecall and IQ need, and they came 80 verdicts later.
SIMULATED_RATERS_SEED = 1


class Command(BaseCommand):
    help = "Create the demo users and the Febrl 3 demo experiment; --simulate lets simulated raters judge it."

    def add_arguments(self, parser):
        parser.add_argument(
            "--password", default=DEMO_PASSWORD, help="password of the demo users made now (earlier ones keep theirs)"
        )
        parser.add_argument("--draws", type=int, default=600, help="pair draws of the demo experiment")
        parser.add_argument("--replication", type=int, default=1)
        parser.add_argument("--simulate", action="store_true", help="simulated raters answer from the truth")
        parser.add_argument("--pace", type=float, default=0.5, help="seconds between simulated verdicts")
        parser.add_argument(
            "--seed", type=int, default=SIMULATED_RATERS_SEED, help="seed of the simulated raters' unsure verdicts"
        )
        parser.add_argument("--wait", type=float, default=300, help="seconds to wait for the worker to prepare")

    def handle(self, *args, **options):
        users = demo_users_ensure(password=options["password"])
        experiment, created = demo_experiment_ensure(
            owner=users["engineer"],
            folder=settings.DATA_DIR / "demo",
            n_draws=options["draws"],
            replication=options["replication"],
            opened_by=users["admin"],
        )
        self.stdout.write(f"{'Created' if created else 'Found'} experiment {experiment.pk}: {experiment.name}")
        self.stdout.write(
            f"Users engineer, admin and rater (judge at /rate/); password {options['password']!r}. "
            f"Simulated raters: {', '.join(SIMULATED_RATERS)}."
        )
        if not options["simulate"]:
            return
        experiment = self._wait_until_ready(experiment, options["wait"])
        raters = [users[name] for name in SIMULATED_RATERS]
        count = demo_raters_simulate(
            experiment=experiment, raters=raters, rng=np.random.default_rng(options["seed"]), pace=options["pace"]
        )
        self.stdout.write(f"Simulated raters submitted {count} verdicts.")

    def _wait_until_ready(self, experiment, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            experiment.refresh_from_db()
            if experiment.status == Experiment.Status.RATING:
                return experiment
            if experiment.status == Experiment.Status.FAILED:
                raise CommandError(f"the demo experiment failed: {experiment.error}")
            time.sleep(1)
        raise CommandError("the worker did not prepare the demo experiment in time: is it running?")
