"""More draws for an experiment prepared on Dask (abcde-spec §10): what :mod:`.batches` appends.

The batch is drawn where the items are (:mod:`.dask_coupled`); the worker reads only the rows of the
batch's items and the cells of its vantage items. Items no earlier batch drew get the positions after
the stored ones (positions index the experiment's sampled items: it has no population file), and
each new pair stores its vantage cell's weights, as the preparation's pairs do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core import PairSample
from metrics_core import dask_backend as dk
from metrics_core.dask_backend.context import cells_of
from metrics_core.dask_backend.items import KEYS
from metrics_core.io import InputError
from raterapp.models import Experiment, Item
from raterapp.services.experiments.uploads import upload_message_for_user, uploads_local_open
from raterapp.services.preparation.catalogue import catalogue_read
from raterapp.services.preparation.dask_engine import dask_sampled_items, dask_session, pairs_sample
from raterapp.services.preparation.sampled_rows import sampled_item_rows
from raterapp.services.sampling.dask_coupled import dask_batch_sample_draw, dask_items_open


@dataclass(frozen=True, eq=False)
class DaskBatch:
    """A batch drawn on Dask: its sample (item positions), the Item rows of its new items, per sample
    row the vantage cell's ``union``, ``base`` and ``exp`` weights, and its coupling."""

    sample: PairSample
    new_items: list[Item]
    vantage_sets: dict[str, np.ndarray]
    coupled_to_id: int | None
    kept: int | None


def dask_batch_build(*, experiment: Experiment, batch: int, n_draws: int) -> DaskBatch:
    """Draw batch ``batch`` of ``n_draws`` draws on Dask and build what the sample gains."""
    with (
        dask_session(),
        uploads_local_open(experiment=experiment) as uploads,
        dask_items_open(experiment, uploads=uploads) as items,
    ):
        drawn = dask_batch_sample_draw(experiment=experiment, items=items, batch=batch, n_draws=n_draws)
        pairs = drawn.pairs
        rows = dk.items_rows(items, pd.concat([pairs["i"], pairs["j"]]))
        known = dict(Item.objects.filter(experiment=experiment).values_list("item_id", "position"))
        new = ~rows["item_id"].astype(str).isin(known).to_numpy()
        start = max(known.values(), default=-1) + 1
        positions = np.arange(start, start + int(new.sum()), dtype=np.int64)
        position = {**known, **dict(zip(rows["item_id"][new].astype(str), positions.tolist()))}
        vantage = rows.set_index("item_id").loc[pairs["i"].to_numpy(), KEYS].reset_index(drop=True)
        cells = cells_of(items, vantage)
        new_items: list[Item] = []
        if new.any():
            location = experiment.items_location or uploads["items"].path

            def catalogue_get():
                try:
                    return catalogue_read(path=uploads["catalogue"].path)
                except InputError as exc:
                    raise InputError(exc.path, upload_message_for_user(message=str(exc), uploads=uploads)) from None

            sampled = dask_sampled_items(
                experiment=experiment,
                rows=rows[new].reset_index(drop=True),
                positions=positions,
                location=location,
                catalogue_get=catalogue_get,
            )
            new_items = sampled_item_rows(
                experiment=experiment, catalogue=sampled.catalogue, items=sampled.items, items_path=location
            )
    return DaskBatch(
        sample=pairs_sample(experiment, pairs, position),
        new_items=new_items,
        vantage_sets={
            "union": cells["set_union"].to_numpy(float),
            "base": cells["base_weight"].to_numpy(float),
            "exp": cells["exp_weight"].to_numpy(float),
        },
        coupled_to_id=None if drawn.coupled_to is None else drawn.coupled_to.pk,
        kept=drawn.kept,
    )
