"""Rater-aware estimates, each rater's fitted sensitivity and specificity, and the transitivity
review list: read from what the worker stored (:mod:`raterapp.services.refresh.rater_aware`).

Nothing is recomputed here; raters stored as user ids are given their user names, and each
pair of a triangle the link that opens it in the pair explorer.
"""

from __future__ import annotations

from typing import cast

from django.contrib.auth import get_user_model
from django.urls import reverse

from metrics_core import metrics_for_scheme
from raterapp.models import Experiment, Judgement, RaterAwareEstimate, Verdict
from raterapp.selectors.derived import estimate_reading
from raterapp.selectors.experiments import newest_first
from raterapp.vocabulary import RATER_AWARE_HELP, TRANSITIVITY_HELP

VERDICT_LABELS = dict(Verdict.choices)


def rater_aware_latest(*, experiment: Experiment) -> RaterAwareEstimate | None:
    return newest_first(RaterAwareEstimate, experiment=experiment).first()


def rater_aware_latest_id(*, experiment: Experiment) -> int | None:
    return newest_first(RaterAwareEstimate, experiment=experiment).values_list("pk", flat=True).first()


def rater_aware_panel_get(*, experiment: Experiment, raw: dict | None = None) -> dict | None:
    """The rater-aware estimates beside the raw-verdict ones (``raw``: a snapshot's estimates,
    by name), the raters' sensitivity and specificity and the transitivity counts; None until
    first computed."""
    stored = rater_aware_latest(experiment=experiment)
    if stored is None:
        return None
    usernames = _usernames(_rater_ids(stored))
    panel = {
        "id": stored.pk,
        "created_at": stored.created_at.isoformat(),
        "judgements": stored.judgements,
        "seconds": stored.seconds,
        "help": RATER_AWARE_HELP,
        "error": stored.error or None,
        "estimates": None,
        "raters": [],
        "model": None,
        "transitivity": _counts(stored.transitivity, usernames),
    }
    if stored.payload is None:
        return panel
    p = stored.payload
    raw = raw or {}
    panel["estimates"] = [
        {
            "metric": name,
            **estimate_reading(name, p["estimates"][name]),
            "raw_value": (raw.get(name) or {}).get("value"),
        }
        for name in metrics_for_scheme(experiment.scheme)
        if name in p["estimates"]
    ]
    panel["raters"] = [{**row, "username": usernames.get(row["rater"], str(row["rater"]))} for row in p["raters"]]
    panel["model"] = {
        key: p[key] for key in ("model", "iterations", "converged", "bootstrap_replicates", "converged_replicates")
    }
    return panel


def experiment_rater_fits_get(*, experiment: Experiment) -> list[dict]:
    """Each rater's sensitivity and specificity from the latest fit, by user name; empty without one."""
    stored = RaterAwareEstimate.objects.filter(experiment=experiment, payload__isnull=False).order_by(
        "-created_at", "-pk"
    )
    latest = stored.values_list("payload__raters", flat=True).first()
    if not latest:
        return []
    usernames = _usernames({row["rater"] for row in latest})
    return sorted(
        ({**row, "username": usernames.get(row["rater"], str(row["rater"]))} for row in latest),
        key=lambda row: row["username"],
    )


def experiment_transitivity_get(*, experiment: Experiment) -> dict | None:
    """Counts of inconsistent triangles (the experiment's and each rater's) and every
    inconsistent triangle with its three pairs, verdicts and raters; None until first computed."""
    stored = rater_aware_latest(experiment=experiment)
    if stored is None:
        return None
    t = stored.transitivity
    usernames = _usernames(_rater_ids(stored))
    explorer = reverse("experiment-pairs", args=[experiment.pk])
    triangles = [
        {
            "items": triangle["items"],
            "pairs": [
                {
                    **pair,
                    "verdict_label": VERDICT_LABELS[pair["verdict"]],
                    "votes": [
                        {"rater": r, "username": usernames.get(r, str(r)), "verdict": v, "label": VERDICT_LABELS[v]}
                        for r, v in zip(pair["raters"], pair["verdicts"], strict=True)
                    ],
                    "explorer_url": f"{explorer}#pair-{pair['sampled_pair']}" if pair.get("sampled_pair") else None,
                }
                for pair in triangle["pairs"]
            ],
        }
        for triangle in t["triangles"]
    ]
    return {
        "experiment": experiment.pk,
        "computed_at": stored.created_at.isoformat(),
        "judgements": stored.judgements,
        "help": TRANSITIVITY_HELP,
        **_counts(t, usernames),
        "triangles": triangles,
    }


def experiment_rater_quality_rows(*, panel: dict | None, transitivity: dict | None) -> list[dict]:
    """One row per rater of either report: their fitted sensitivity and specificity (None
    where the model has no fit) beside their own inconsistent and closed triangles."""
    fits = {row["rater"]: row for row in (panel or {}).get("raters", [])}
    counts = {row["rater"]: row for row in (transitivity or {}).get("raters", [])}
    rows = []
    for rater in sorted(fits.keys() | counts.keys(), key=lambda r: (fits.get(r) or counts[r])["username"]):
        fit, count = fits.get(rater, {}), counts.get(rater, {})
        rows.append(
            {
                "rater": rater,
                "username": (fit or count)["username"],
                **{k: fit.get(k) for k in ("sensitivity", "specificity", "verdicts", "unsure")},
                **{k: count.get(k) for k in ("inconsistent_triangles", "closed_triangles")},
            }
        )
    return rows


def rater_confusion_list(*, rater) -> list[dict]:
    """The rater's fitted sensitivity and specificity in each experiment whose latest
    rater-aware fit includes them, newest experiment first."""
    rows = []
    experiments = Judgement.objects.filter(rater=rater).values("task__experiment")
    latest = RaterAwareEstimate.objects.filter(payload__isnull=False, experiment__in=experiments)
    seen: set[int] = set()
    for stored in latest.select_related("experiment").order_by("-experiment__created_at", "-created_at", "-pk"):
        if stored.experiment_id in seen:
            continue
        seen.add(stored.experiment_id)
        for row in cast(dict, stored.payload)["raters"]:  # payload__isnull=False
            if row["rater"] == rater.pk:
                rows.append(
                    {
                        "experiment": stored.experiment_id,
                        "experiment_name": stored.experiment.name,
                        "computed_at": stored.created_at.isoformat(),
                        **{k: row[k] for k in ("sensitivity", "specificity", "verdicts", "unsure")},
                    }
                )
    return rows


def _counts(t: dict, usernames: dict[int, str]) -> dict:
    return {
        "inconsistent_triangles": t["inconsistent_triangles"],
        "closed_triangles": t["closed_triangles"],
        "inconsistent_share": t["inconsistent_share"],
        "raters": [{**row, "username": usernames.get(row["rater"], str(row["rater"]))} for row in t["raters"]],
    }


def _rater_ids(stored: RaterAwareEstimate) -> set[int]:
    ids = {row["rater"] for row in stored.transitivity["raters"]}
    if stored.payload is not None:
        ids |= {row["rater"] for row in stored.payload["raters"]}
    return ids


def _usernames(ids: set[int]) -> dict[int, str]:
    return dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username"))
