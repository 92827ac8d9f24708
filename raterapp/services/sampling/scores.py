"""Scores of an experiment's sampled pairs (abcde-spec §15): the built-in card similarity.

Every drawn pair is scored when it is drawn, in the transaction that stores it, from the cards of
its two items (metrics_core's ``card_similarity``): the model-assisted estimates need a score for
every drawn pair, judged or not. A pair that already has one (an uploaded score) keeps it. The
score is data of the experiment, never shown to raters (it would bias their verdicts).
"""

from __future__ import annotations

import logging

import numpy as np

from metrics_core import card_similarity
from raterapp.models import Experiment, Item, SampledPair

logger = logging.getLogger(__name__)

_BULK = 5000


def builtin_scores_fill(*, experiment: Experiment) -> int:
    """Score every sampled pair of ``experiment`` that has no score yet; returns how many were scored.

    Runs inside the caller's transaction. A card the similarity cannot read leaves the pairs
    unscored, logged: the estimates are then the human-only ones, which the page says.
    """
    pairs = list(
        SampledPair.objects.filter(experiment=experiment, score__isnull=True).values_list("pk", "vantage", "partner")
    )
    if not pairs:
        return 0
    cards_of = Item.objects.filter(experiment=experiment).order_by("pk")
    items = list(cards_of.values_list("pk", "title", "description", "attributes"))
    item_pk = np.array([row[0] for row in items], dtype=np.int64)
    names = sorted({name for row in items for name in (row[3] or {})})
    attributes = {name: [_text((row[3] or {}).get(name)) for row in items] for name in names}
    cards = {"title": [row[1] for row in items], "description": [row[2] for row in items]}
    pair_pk, vantage, partner = (np.array(column, dtype=np.int64) for column in zip(*pairs))
    try:
        scores = card_similarity(
            cards=cards,
            attributes=attributes,
            i=np.searchsorted(item_pk, vantage),
            j=np.searchsorted(item_pk, partner),
        )
    except ValueError:
        logger.warning("experiment %s: its cards could not be scored; its estimates stay human-only", experiment.pk)
        return 0
    SampledPair.objects.bulk_update(
        [
            SampledPair(pk=pk, score=score, score_source=SampledPair.ScoreSource.BUILT_IN)
            for pk, score in zip(pair_pk.tolist(), scores.tolist())
        ],
        ["score", "score_source"],
        batch_size=_BULK,
    )
    return len(pairs)


def _text(value) -> str | None:
    """An attribute's value as text (the catalogue keeps attributes as text; JSON may hold numbers)."""
    return None if value is None else str(value)
