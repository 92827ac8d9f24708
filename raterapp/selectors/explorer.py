"""The pair explorer of the engineer's dashboard: from the numbers down to the sampled pairs.

Three reads, for experiments that passed ``access_experiment_for_engineer``:

- ``explorer_pairs_list``: the sampled pairs with titles, each row's contribution to
  JaccardDistance (JDD §4.5, ``metrics_core.jaccard_contributions`` over the whole sample),
  verdict counts and a verdict summary, filtered and ordered;
- ``explorer_pair_get`` (``selectors/explorer_pair.py``): one pair with both items' cards,
  each item's Base and Exp cluster (size, weight, first members) and the pair's verdicts;
- ``explorer_clusters_list``: the Base or Exp clusters that carry most of the overall
  JaccardDistance, from the stored ``ImpactGroup`` rows (``metrics_core.group_contribution``).

Self pairs (j = i) have no task, are never judged and contribute nothing to JaccardDistance:
the list leaves them out unless ``include_self`` is set or ``pair_class`` or ``verdict`` is
``self``; their verdict summary is ``self``. Cluster membership is for engineers only: no rater endpoint
reads this module.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import cast

import numpy as np
from django.db.models import Count, Q, QuerySet

from metrics_core import group_contribution
from raterapp.models import Experiment, ImpactGroup, Judgement, ReusedVerdict, SampledPair, Verdict, sampled_q
from raterapp.population_files import population_attribute_names
from raterapp.selectors.samples import sample_contributions_get
from raterapp.selectors.slices import slice_labels_heaviest

VERDICTS = tuple(Verdict.values)  # equivalent, not_equivalent, unsure
SELF = "self"
VERDICT_SUMMARIES = ("unjudged", *VERDICTS, "mixed", SELF)
PAIR_CLASS_ORDER = ("split", "merge", "intersection", SELF)  # the diff first (abcde-spec §3)
ORDERINGS = ("-jaccard_contribution", "jaccard_contribution", "-draws", "draws", "-score", "score", "pair_class")
CLUSTER_SIDES = ("base", "exp")
MEMBERS_SHOWN = 50
# The columns of the list and of its CSV download: ids and numbers exact, titles free text.
EXPLORER_PAIR_FIELDS = (
    "id",
    "i",
    "j",
    "i_title",
    "j_title",
    "pair_class",
    "stratum",
    "draws",
    "jaccard_contribution",
    "task",
    *VERDICTS,
    "wanted",
    "agreement",
    "verdict",
    "score",
    "score_source",
)


@dataclass(frozen=True)
class PairFilters:
    """Which sampled pairs to list; ``None`` means "any". ``value`` goes with ``attribute``
    (the vantage item's attribute; '' matches items without it); ``side`` narrows ``cluster``
    to Base or Exp labels."""

    pair_class: str | None = None
    verdict: str | None = None
    attribute: str | None = None
    value: str | None = None
    cluster: str | None = None
    side: str | None = None
    q: str | None = None
    include_self: bool = False


def explorer_pairs_list(
    *, experiment: Experiment, filters: PairFilters | None = None, ordering: str = "-jaccard_contribution"
) -> list[dict]:
    """The sampled pairs that pass ``filters``, in ``ordering`` (ties by pair id)."""
    filters = filters or PairFilters()
    if ordering not in ORDERINGS:
        raise ValueError(f"ordering must be one of {', '.join(ORDERINGS)}; got {ordering!r}")
    pairs = _filtered(SampledPair.objects.filter(experiment=experiment), filters)
    rows = explorer_rows(experiment, pairs, attribute=filters.attribute)
    if filters.attribute is not None:
        wanted = filters.value or ""
        rows = [row for row in rows if row.pop("_attribute") == wanted]
    if filters.verdict:
        rows = [row for row in rows if row["verdict"] == filters.verdict]
    return sorted(rows, key=_ORDER_KEYS[ordering])


def explorer_clusters_list(*, experiment: Experiment, side: str, limit: int = 10) -> dict:
    """The ``limit`` clusters of one side with the largest share of the overall JaccardDistance.

    Only the clusters the preparation stored are ranked (the top ``TOP_CLUSTERS`` of each side by
    that same share, ``raterapp/services/preparation/impact_groups.py``), so the first ``limit`` are exact.
    """
    if side not in CLUSTER_SIDES:
        raise ValueError(f"side must be one of {', '.join(CLUSTER_SIDES)}; got {side!r}")
    impact = experiment.impact or {}
    overall = (impact.get("metrics") or {}).get("JaccardDistance")
    total_weight = impact.get("total_weight")
    groups = list(
        ImpactGroup.objects.filter(experiment=experiment, dimension=side).values(
            "label", "items", "affected_items", "weight", "metrics"
        )
    )
    if not groups or not total_weight:
        return {"side": side, "jaccard_distance": overall, "clusters": []}
    distances = [_number(group["metrics"].get("JaccardDistance")) for group in groups]
    shares = group_contribution(
        metric=np.nan_to_num(np.asarray(distances, dtype=float)),
        weight=[group["weight"] for group in groups],
        total_weight=total_weight,
    )
    clusters = [
        {
            "label": group["label"],
            "items": group["items"],
            "affected_items": group["affected_items"],
            "weight": group["weight"],
            "JaccardDistance": group["metrics"].get("JaccardDistance"),
            "SplitDistance": group["metrics"].get("SplitDistance"),
            "MergeDistance": group["metrics"].get("MergeDistance"),
            "contribution": float(share),
        }
        for group, share in zip(groups, cast(np.ndarray, shares).tolist(), strict=True)
    ]
    clusters.sort(key=lambda c: (-c["contribution"], c["label"]))
    return {"side": side, "jaccard_distance": overall, "clusters": clusters[:limit]}


def explorer_slices_list(*, experiment: Experiment, values_per_slice: int = 200) -> dict[str, list[str]]:
    """The slice attributes of the experiment, each with its heaviest values, for the filter bar.

    Every attribute column of the population file is listed; the values are those the impact
    breakdown stored (none for an attribute with too many distinct values to be a slice).
    """
    slices: dict[str, list[str]] = {}
    if experiment.population_file:
        slices = {name: [] for name in population_attribute_names(experiment)}
    slices.update(slice_labels_heaviest(experiment=experiment, per_slice=values_per_slice))
    return slices


# ---------------------------------------------------------------------------- rows


def _filtered(pairs: QuerySet[SampledPair], filters: PairFilters) -> QuerySet[SampledPair]:
    if filters.pair_class:
        pairs = pairs.filter(pair_class=filters.pair_class)
    if not filters.include_self and SELF not in (filters.pair_class, filters.verdict):
        pairs = pairs.exclude(pair_class=SELF)
    if filters.cluster:
        sides = (filters.side,) if filters.side else CLUSTER_SIDES
        match = Q()
        for side in sides:
            for item in ("vantage", "partner"):
                match |= Q(**{f"{item}__{side}_cluster": filters.cluster})
        pairs = pairs.filter(match)
    if filters.q:
        match = Q()
        for item in ("vantage", "partner"):
            match |= Q(**{f"{item}__item_id__icontains": filters.q}) | Q(**{f"{item}__title__icontains": filters.q})
        pairs = pairs.filter(match)
    return pairs


def explorer_rows(
    experiment: Experiment, pairs: QuerySet[SampledPair], *, attribute: str | None = None, task_ids=None
) -> list[dict]:
    fields = [
        "pk",
        "vantage__item_id",
        "partner__item_id",
        "vantage__title",
        "partner__title",
        "pair_class",
        "stratum",
        "draws",
        "task",
        "task__wanted",
        "score",
        "score_source",
    ]
    if attribute is not None:
        fields.append("vantage__attributes")
    values = list(pairs.order_by("pk").values(*fields))
    if not values:
        return []
    contributions = sample_contributions_get(experiment=experiment)
    counts = _verdict_counts(experiment, task_ids=task_ids)
    rows = []
    for value in values:
        task = value["task"]
        given = counts.get(task, {}) if task is not None else {}
        row = {
            "id": value["pk"],
            "i": value["vantage__item_id"],
            "j": value["partner__item_id"],
            "i_title": value["vantage__title"],
            "j_title": value["partner__title"],
            "pair_class": value["pair_class"],
            "stratum": value["stratum"],
            "draws": value["draws"],
            "jaccard_contribution": contributions[value["pk"]],
            "task": task,
            **{verdict: given.get(verdict, 0) for verdict in VERDICTS},
            "wanted": value["task__wanted"],
        }
        row["agreement"], row["verdict"] = _agreement(row, is_self=value["pair_class"] == SELF)
        row["score"], row["score_source"] = value["score"], value["score_source"] or None
        if attribute is not None:
            row["_attribute"] = _attribute_text(value["vantage__attributes"], attribute)
        rows.append(row)
    return rows


def _verdict_counts(experiment: Experiment, *, task_ids=None) -> dict[int, dict[str, int]]:
    """Per task, its verdicts by value: its own and those reused from the workspace (§11)."""
    judgements = Judgement.objects.filter(sampled_q("task__"), task__experiment=experiment)
    reused = ReusedVerdict.objects.filter(experiment=experiment)
    if task_ids is not None:
        wanted = [t for t in task_ids if t is not None]
        judgements, reused = judgements.filter(task__in=wanted), reused.filter(task__in=wanted)
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for rows in (
        judgements.values_list("task", "verdict").annotate(n=Count("pk")).order_by(),
        reused.values_list("task", "source__verdict").annotate(n=Count("pk")).order_by(),
    ):
        for task, verdict, n in rows:
            counts[task][verdict] = counts[task].get(verdict, 0) + n
    return counts


def _agreement(row: dict, *, is_self: bool) -> tuple[float | None, str]:
    """The majority verdict's share of the pair's verdicts, and the pair's verdict summary."""
    if is_self:
        return None, SELF
    given = {verdict: row[verdict] for verdict in VERDICTS if row[verdict]}
    total = sum(given.values())
    if not total:
        return None, "unjudged"
    summary = next(iter(given)) if len(given) == 1 else "mixed"
    return max(given.values()) / total, summary


def _attribute_text(attributes, name: str) -> str:
    """An attribute's value as the slice filter compares it ('' when missing)."""
    value = attributes.get(name) if isinstance(attributes, dict) else None
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _class_rank(pair_class: str) -> int:
    return PAIR_CLASS_ORDER.index(pair_class) if pair_class in PAIR_CLASS_ORDER else len(PAIR_CLASS_ORDER)


_ORDER_KEYS = {
    "-jaccard_contribution": lambda r: (-r["jaccard_contribution"], r["id"]),
    "jaccard_contribution": lambda r: (r["jaccard_contribution"], r["id"]),
    "-draws": lambda r: (-r["draws"], r["id"]),
    "draws": lambda r: (r["draws"], r["id"]),
    # Unscored pairs (self pairs, a sample stored before scores) last either way.
    "-score": lambda r: (r["score"] is None, -(r["score"] or 0.0), r["id"]),
    "score": lambda r: (r["score"] is None, r["score"] or 0.0, r["id"]),
    "pair_class": lambda r: (_class_rank(r["pair_class"]), -r["jaccard_contribution"], r["id"]),
}


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) else float("nan")


def explorer_page_get(*, experiment: Experiment) -> dict:
    """What the explorer page needs before its script runs: whether there is a sample to
    explore, and the slice attributes with their values for the filter bar."""
    return {
        "has_sample": SampledPair.objects.filter(experiment=experiment).exists(),
        "slices": explorer_slices_list(experiment=experiment),
    }
