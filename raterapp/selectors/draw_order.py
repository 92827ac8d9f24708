"""An experiment's labelled prefix (abcde-spec §14): which draws its estimates may use now.

In draw order each sampled pair stores its positions in every batch that drew it
(``SampledPair.positions``); a pair is resolved once it has a verdict of any kind (*unsure*
included) or its task is retired (an excluded broken pair). The counts come from
``metrics_core.labelled_of_batches``; experiments created in random order have none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from metrics_core import PAIR_CLASSES, labelled_of_batches, waiting_verdicts
from raterapp.models import Experiment, Judgement, PairTask, ReusedVerdict, SampledPair
from raterapp.selectors.samples import PAIR_FIELDS, JudgedSample, judgements_rows, sampled_pairs_rows

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
    counts, by_batch = labelled_of_batches(sample, [cast(dict, positions) for positions, _ in rows], resolved)
    waiting = waiting_verdicts(sample, counts, judged.i, judged.j)
    return Labelled(counts, {"draws": int(counts.sum()), "waiting_verdicts": waiting, "by_batch": by_batch})


def pairs_export_fields(*, experiment: Experiment) -> tuple[str, ...]:
    """The pairs export's columns: ``positions`` in draw order only (a PAIRS file without it is a
    sample judged in no particular order, metrics-cli.md)."""
    return (*PAIR_FIELDS, "positions") if experiment.task_order == Experiment.TaskOrder.DRAW else PAIR_FIELDS


def pairs_export_rows(*, experiment: Experiment) -> list[dict]:
    """The sampled pairs as the command line's PAIRS file. In random order, the rows of /pairs/. In
    draw order, one row per batch that drew a pair (stored order, batches ascending), with that
    batch's ``draws``, ``batch`` and ``positions`` (abcde-spec §14): ``python -m metrics_core
    estimate`` adds a pair's rows up again and estimates from each batch's labelled prefix, as the
    app does. A row's ``jaccard_contribution`` is its share of the pair's."""
    rows = sampled_pairs_rows(experiment=experiment)
    if experiment.task_order != Experiment.TaskOrder.DRAW:
        return rows
    stored = SampledPair.objects.filter(experiment=experiment).order_by("pk").values_list("positions", flat=True)
    out = []
    for row, by_batch in zip(rows, stored, strict=True):
        for batch in sorted(by_batch or {}, key=int):
            positions = cast(dict, by_batch)[batch]
            share = row["jaccard_contribution"] * len(positions) / row["draws"]
            out.append(row | {"draws": len(positions), "jaccard_contribution": share, "batch": int(batch),
                              "positions": " ".join(str(p) for p in positions)})  # fmt: skip
    return out


# The comment of a judgements export row that closes an excluded pair without a verdict.
CLOSED_WITHOUT_VERDICT = "no verdict: excluded after a report (closes the pair for the labelled prefix)"


def judgements_export_rows(*, experiment: Experiment) -> list[dict]:
    """The verdicts as the command line's JUDGEMENTS file (:func:`judgements_rows`). In draw order,
    then one row per sampled pair excluded after a report (its task retired) without any verdict:
    the app counts such a pair as resolved (abcde-spec §14), and the command line counts a pair as
    resolved when JUDGEMENTS has a row on it, a pair with only *unsure* rows resolved but without a
    usable verdict (metrics-cli.md). So the row says ``unsure``, with no rater, the retirement's
    time and :data:`CLOSED_WITHOUT_VERDICT` as its comment: ``estimate`` then finds the app's
    labelled prefix. (Its §12 bounds count the pair as unsure, which the app's do not, and beyond
    the prefix the row counts as a waiting verdict: the contract has no other way to close a pair.)"""
    rows = judgements_rows(experiment=experiment)
    if experiment.task_order != Experiment.TaskOrder.DRAW:
        return rows
    closed = (
        PairTask.objects.sampled()
        .filter(experiment=experiment, retired_at__isnull=False)
        .exclude(pk__in=Judgement.objects.filter(task__experiment=experiment).values("task_id"))
        .exclude(pk__in=ReusedVerdict.objects.filter(experiment=experiment).values("task_id"))
        .order_by("retired_at", "pk")
        .values("pk", "item_a__item_id", "item_b__item_id", "retired_at")
    )
    return rows + [
        {
            "i": task["item_a__item_id"],
            "j": task["item_b__item_id"],
            "verdict": Judgement.Verdict.UNSURE.value,
            "task": task["pk"],
            "rater": None,
            "comment": CLOSED_WITHOUT_VERDICT,
            "created_at": task["retired_at"],
            "reused": False,
            "source_experiment": None,
        }
        for task in closed
    ]
