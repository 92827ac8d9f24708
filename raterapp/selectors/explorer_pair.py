"""One sampled pair of the pair explorer: its list row, both items' cards with their Base and
Exp clusters (label, size, weight, first members), and its verdicts.

In memory the clusters are read from the population (every item, ``complete``); on Dask only
as far as the sampled items show them.
"""

from __future__ import annotations

import numpy as np

from metrics_core import Population
from raterapp.models import Experiment, ImpactGroup, Item, Judgement, ReusedVerdict, SampledPair
from raterapp.population_files import population_for_experiment
from raterapp.selectors.explorer import CLUSTER_SIDES, MEMBERS_SHOWN, explorer_rows


def explorer_pair_get(*, experiment: Experiment, pair: SampledPair) -> dict:
    """One sampled pair: its list row, both items with their Base and Exp clusters, its verdicts."""
    (row,) = explorer_rows(experiment, SampledPair.objects.filter(pk=pair.pk), task_ids=[pair.task_id])
    items = [pair.vantage, pair.partner]
    if experiment.engine == Experiment.Engine.DASK:
        return {
            "pair": row,
            "items": _items_shown(items, _sampled_clusters(experiment, items)),
            "verdicts": _verdicts_of(pair),
        }
    ids, population = population_for_experiment(experiment)
    shown = {
        (item.position, side): _members_shown(population, item.position, side)
        for item in items
        for side in CLUSTER_SIDES
    }
    member_ids = {str(ids[p]) for positions in shown.values() for p in positions.tolist()}
    titles = dict(Item.objects.filter(experiment=experiment, item_id__in=member_ids).values_list("item_id", "title"))
    clusters = {
        (item.position, side): _cluster(ids, population, titles, item.position, shown[item.position, side], side)
        for item in items
        for side in CLUSTER_SIDES
    }
    return {"pair": row, "items": _items_shown(items, clusters), "verdicts": _verdicts_of(pair)}


def _items_shown(items: list[Item], clusters: dict) -> list[dict]:
    return [
        {
            "role": role,
            "item_id": item.item_id,
            "title": item.title,
            "description": item.description,
            "image_url": item.image_url,
            "url": item.url,
            "attributes": item.attributes if isinstance(item.attributes, dict) else {},
            "weight": item.weight,
            **{f"{side}_cluster": clusters[item.position, side] for side in CLUSTER_SIDES},
        }
        for role, item in zip(("vantage", "partner"), items, strict=True)
    ]


def _sampled_clusters(experiment: Experiment, items: list[Item]) -> dict:
    """Dask engine: the items' clusters as far as the sample shows them (the population stays on
    the cluster). Size and weight come from the stored impact rows when the cluster is among them."""
    clusters = {}
    for item in items:
        for side in CLUSTER_SIDES:
            label = item.base_cluster if side == "base" else item.exp_cluster
            other = "exp_cluster" if side == "base" else "base_cluster"
            members = list(
                Item.objects.filter(experiment=experiment, **{f"{side}_cluster": label})
                .order_by("position")
                .values_list("position", "item_id", "title", other)[: MEMBERS_SHOWN * 4]
            )
            members.sort(key=lambda m: m[0] != item.position)  # the item first
            group = ImpactGroup.objects.filter(experiment=experiment, dimension=side, label=label).first()
            clusters[item.position, side] = {
                "side": side,
                "label": label,
                "items": group.items if group else None,
                "weight": group.weight if group else None,
                "complete": False,
                "members": [
                    {"item_id": member_id, "title": title, "shared": value == getattr(item, other)}
                    for _, member_id, title, value in members[:MEMBERS_SHOWN]
                ],
            }
    return clusters


def _codes(population: Population, side: str) -> tuple[np.ndarray, np.ndarray]:
    """Each item's cluster code on ``side``, and on the other side."""
    return (population.base, population.exp) if side == "base" else (population.exp, population.base)


def _members_shown(population: Population, position: int, side: str) -> np.ndarray:
    """Positions of the first members of the item's cluster on ``side``, the item first, then
    the others in population order."""
    codes, _ = _codes(population, side)
    members = np.flatnonzero(codes == codes[position])
    return np.concatenate([[position], members[members != position][: MEMBERS_SHOWN - 1]]).astype(np.int64)


def _cluster(
    ids: np.ndarray, population: Population, titles: dict[str, str], position: int, shown: np.ndarray, side: str
) -> dict:
    """The item's cluster on ``side``: label, size, weight and the ``shown`` members, each with
    its title (when it has an Item row) and ``shared``: whether it is in the item's cluster of
    the other side too.

    Read from the experiment's population (the Parquet file, loaded once and cached for the
    contributions), so it covers every item, not only the sampled ones.
    """
    codes, other = _codes(population, side)
    labels, sizes, weights = (
        (population.base_labels, population.base_size, population.base_weight)
        if side == "base"
        else (population.exp_labels, population.exp_size, population.exp_weight)
    )
    code = codes[position]
    shared = other[shown] == other[position]
    return {
        "side": side,
        "label": str(labels[code]),
        "items": int(sizes[code]),
        "weight": float(weights[code]),
        "complete": True,
        "members": [
            {"item_id": str(ids[p]), "title": titles.get(str(ids[p])), "shared": bool(s)}
            for p, s in zip(shown.tolist(), shared.tolist(), strict=True)
        ],
    }


def _verdicts_of(pair: SampledPair) -> list[dict]:
    """The pair's verdicts, oldest first: those reused from another experiment of the workspace
    (abcde-spec §11) with the experiment that asked for them, then its own."""
    if pair.task_id is None:
        return []
    fields = ("verdict", "rater__username", "comment", "created_at")
    reused = (
        ReusedVerdict.objects.filter(task_id=pair.task_id)
        .order_by("source__created_at", "source_id")
        .values(*(f"source__{f}" for f in fields), "source__task__experiment_id")
    )
    own = Judgement.objects.filter(task_id=pair.task_id).order_by("created_at", "pk").values(*fields)
    rows = [({f: r[f"source__{f}"] for f in fields}, r["source__task__experiment_id"]) for r in reused]
    rows += [(r, None) for r in own]
    return [
        {
            "verdict": r["verdict"],
            "rater": r["rater__username"],
            "comment": r["comment"],
            "created_at": r["created_at"],
            "source_experiment": source,
        }
        for r, source in rows
    ]
