"""An experiment's pair scores (abcde-spec §15) as the command line's SCORES file: ``estimate --scores``
on the exports reproduces the app's model-assisted estimates."""

from __future__ import annotations

import numpy as np

from raterapp.models import Experiment, SampledPair
from raterapp.selectors.draw_order import Labelled
from raterapp.selectors.samples import JudgedSample

SCORE_FIELDS = ("i", "j", "score", "score_source")


def pair_scores_rows(*, experiment: Experiment) -> list[dict]:
    """Every scored non-self sampled pair once (in either order a pair has one score), in stored
    order, with where its score comes from (``score_source``: ``built_in`` or ``uploaded``)."""
    rows = (
        SampledPair.objects.filter(experiment=experiment, score__isnull=False)
        .exclude(pair_class="self")
        .order_by("pk")
        .values_list("vantage__item_id", "partner__item_id", "score", "score_source")
    )
    seen, out = set(), []
    for i, j, score, source in rows:
        key = (i, j) if i < j else (j, i)
        if key not in seen:
            seen.add(key)
            out.append({"i": i, "j": j, "score": score, "score_source": source})
    return out


def model_assisted_scores(
    *, experiment: Experiment, judged: JudgedSample, labelled: Labelled | None
) -> np.ndarray | None:
    """Each sample row's score for the model-assisted estimates (abcde-spec §15), or None when the
    experiment has none: the owner's switch off, not in draw order, or a non-self pair unscored
    (self pairs need no score: 0, never read)."""
    if not experiment.model_assisted or labelled is None or judged.scores is None:
        return None
    sample = judged.sample
    if not (~np.isnan(judged.scores) | (sample.i == sample.j)).all():
        return None
    return np.where(np.isnan(judged.scores), 0.0, judged.scores)
