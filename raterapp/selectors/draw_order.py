"""An experiment's labelled prefix (abcde-spec §14): which draws its estimates may use now.

In draw order each sampled pair stores its positions in every batch that drew it
(``SampledPair.positions``); a pair is resolved once it has a verdict of any kind (*unsure*
included) or its task is retired (an excluded broken pair). The counts come from
``metrics_core.labelled_of_batches``; experiments created in random order have none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metrics_core import PAIR_CLASSES, labelled_of_batches, waiting_verdicts
from raterapp.models import Experiment, SampledPair
from raterapp.selectors.samples import JudgedSample

SELF = PAIR_CLASSES.index("self")


@dataclass(frozen=True)
class Labelled:
    """Each sample row's labelled draws (``labelled_draws=`` of metrics_core), and the snapshot's block."""

    counts: np.ndarray
    block: dict


def labelled_prefix_get(*, experiment: Experiment, judged: JudgedSample) -> Labelled | None:
    """The labelled draws of a draw-order experiment's sample rows (``judged.sample``, stored order);
    ``None`` in random order."""
    if experiment.task_order != Experiment.TaskOrder.DRAW:
        return None
    rows = list(
        SampledPair.objects.filter(experiment=experiment).order_by("pk").values_list("positions", "task__retired_at")
    )
    sample = judged.sample
    if len(rows) != len(sample) or any(positions is None for positions, _ in rows):
        return None  # not sampled in draw order (cannot happen for a "draw" experiment)
    n = judged.n_positions
    key = np.minimum(sample.i, sample.j).astype(np.int64) * n + np.maximum(sample.i, sample.j)
    judged_key = np.minimum(judged.i, judged.j).astype(np.int64) * n + np.maximum(judged.i, judged.j)
    retired = np.array([retired_at is not None for _, retired_at in rows], dtype=bool)
    resolved = np.isin(key, judged_key) | retired | (sample.pair_class == SELF)
    counts, by_batch = labelled_of_batches(sample, [positions for positions, _ in rows], resolved)
    waiting = waiting_verdicts(sample, counts, judged.i, judged.j)
    return Labelled(counts, {"draws": int(counts.sum()), "waiting_verdicts": waiting, "by_batch": by_batch})
