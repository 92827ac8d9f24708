"""The team's own pair scores (abcde-spec §15): an uploaded SCORES file (``i, j, score``) replaces the
built-in card similarity for the sampled pairs it covers; the others keep theirs, which the page says.

All or nothing: a file with any bad row is refused whole (naming the file, line and problem) and
nothing changes. Rows of pairs the sample does not hold are counted, not kept: a later batch's new
pairs get the built-in score until a file covering them is uploaded.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from metrics_core.io import InputError
from metrics_core.io.scores import read_scores
from raterapp.models import Experiment, Item, SampledPair
from raterapp.services.experiments.upload_checks import local_copies
from raterapp.services.scheduling import ESTIMATES_REFRESH

_BULK = 5000


def pair_scores_upload(*, experiment: Experiment, upload: Any) -> dict:
    """Store the uploaded scores of the experiment's sampled pairs; returns what it did:
    ``scored_pairs`` (distinct pairs now scored by the file), ``built_in_pairs`` (distinct pairs it
    left out, which keep the built-in score) and ``unmatched_rows`` (its rows of no sampled pair)."""
    with local_copies({"scores": upload}) as paths:
        try:
            table = read_scores(paths["scores"])
        except InputError as exc:
            raise ValidationError({"scores": str(exc).replace(paths["scores"], upload.name or "scores")}) from None
    item_of = dict(Item.objects.filter(experiment=experiment).values_list("item_id", "pk"))
    by_pair = {}
    for i, j, score in zip(table.i.to_pylist(), table.j.to_pylist(), table.score.tolist(), strict=True):
        a, b = item_of.get(str(i)), item_of.get(str(j))
        if a is not None and b is not None:
            by_pair[min(a, b), max(a, b)] = score
    with transaction.atomic():
        pairs = list(
            SampledPair.objects.select_for_update()
            .filter(experiment=experiment)
            .exclude(pair_class="self")
            .only("pk", "vantage_id", "partner_id")
        )
        scored, left, used = [], set(), set()
        for pair in pairs:
            key = (min(pair.vantage_id, pair.partner_id), max(pair.vantage_id, pair.partner_id))
            if key in by_pair:
                pair.score, pair.score_source = by_pair[key], SampledPair.ScoreSource.UPLOADED
                scored.append(pair)
                used.add(key)
            else:
                left.add(key)
        SampledPair.objects.bulk_update(scored, ["score", "score_source"], batch_size=_BULK)
        transaction.on_commit(lambda: ESTIMATES_REFRESH.schedule(experiment.pk))
    return {"scored_pairs": len(used), "built_in_pairs": len(left), "unmatched_rows": len(table) - len(used)}
