"""An experiment whose cards tell people apart, in draw order and scored (abcde-spec §15): what the
model-assisted tests judge. Verdicts come from the true people (``IDEAL``)."""

import uuid

import numpy as np

from raterapp.services.judging import assignment_next, judgement_submit
from tests.raterapp.factories import make_raters
from tests.raterapp.prepared import draw_order_experiment

RNG = np.random.default_rng(3)
IDEAL = np.repeat(np.arange(40), 5)
BASE = np.where(RNG.uniform(size=200) < 0.3, IDEAL + 100, IDEAL).tolist()
EXP = (IDEAL // 2).tolist()  # merges pairs of people: half its merges are wrong
NAMES = [
    f"{first} {last}"
    for first in ("ann", "bob", "cyd", "dee", "eve")
    for last in ("ng", "ito", "roe", "ames", "ortiz", "lau", "kay", "bly")
]


def title(position: int) -> str:
    """The item's person, with a typo on some cards: alike for one person, unlike across people."""
    name = NAMES[IDEAL[position]]
    return name if position % 3 else name[:-1] + "x"


def scored_experiment(owner):
    return draw_order_experiment(owner, base=BASE, exp=EXP, n_draws=1500, seed=5, title=title)


def judge(experiment, tasks: int) -> None:
    rater = make_raters(1)[0]
    for _ in range(tasks):
        task = assignment_next(experiment=experiment, rater=rater)
        a, b = task.item_a.position, task.item_b.position
        verdict = "equivalent" if IDEAL[a] == IDEAL[b] else "not_equivalent"
        judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
