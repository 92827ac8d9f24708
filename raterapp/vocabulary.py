"""The product's words, defined once: what each metric means in one line, the terms every page
uses (verdict, pair, draw, batch, …) and the names of the decisions.

Pages show a metric's line on hover or focus and link the glossary; the API returns the same
lines, so that a number never comes without what it means.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import models

# One line per metric name (the papers' names: JDD = "Decomposing the Jaccard Distance …",
# MQM = "More Clustering Quality Metrics for ABCDE").
METRIC_HELP: dict[str, str] = {
    "JaccardDistance": "Share of weighted item pairs whose togetherness the change altered (JDD §4).",
    "SplitDistance": "The part of JaccardDistance from pairs Exp split apart.",
    "MergeDistance": "The part of JaccardDistance from pairs Exp merged.",
    "JaccardIndex": "Weighted Jaccard similarity of Base and Exp: 1 − JaccardDistance.",
    "AffectedJaccardIndex": "The part of JaccardIndex contributed by the items the change affects.",
    "UnaffectedJaccardIndex": "The part of JaccardIndex contributed by the items the change leaves alone.",
    "AffectedWeightFraction": "Share of the total weight on items whose cluster changed.",
    "SplitRate": "Weighted share of an item's Base cluster that Exp split off (MQM eq 11).",
    "MergeRate": "Weighted share of an item's Exp cluster that Exp merged in (MQM eq 12).",
    "WeightFractionOfBaseCluster": "An affected item's weight over its Base cluster's weight (MQM eq 48).",
    "GoodSplitDistance": "Split pairs that were truly different: splits that fixed a mistake.",
    "BadSplitDistance": "Split pairs that were truly equivalent: splits that made a mistake.",
    "GoodMergeDistance": "Merged pairs that are truly equivalent: merges that fixed a mistake.",
    "BadMergeDistance": "Merged pairs that are truly different: merges that made a mistake.",
    "GoodDistance": "GoodSplitDistance + GoodMergeDistance: the part of the change that is an improvement.",
    "BadDistance": "BadSplitDistance + BadMergeDistance: the part of the change that is a regression.",
    "GoodMinusBadDistance": "GoodDistance − BadDistance: above zero, the change fixes more than it breaks.",
    "AffectedGoodIndex": "Pairs kept together around affected items that are truly equivalent.",
    "AffectedBadIndex": "Pairs kept together around affected items that are truly different.",
    "DeltaPrecision": "Precision of Exp minus Precision of Base (JDD §6): above zero, Exp's clusters are purer.",
    "DeltaRecall": "Recall of Exp minus Recall of Base (MQM §3): above zero, Exp gathers more true mates.",
    "IQ": "Improvement quotient (MQM §4): share of the change that moves towards the ideal, −1 to 1.",
    "GoodSplitRate": "SplitRate of splits that fixed a mistake (MQM §3).",
    "BadSplitRate": "SplitRate of splits that made a mistake (MQM §3).",
    "GoodMergeRate": "MergeRate of merges that fixed a mistake (MQM §3).",
    "BadMergeRate": "MergeRate of merges that made a mistake (MQM §3).",
}

# Display names where the paper's name is not what a reader scans for.
METRIC_LABELS: dict[str, str] = {
    "DeltaPrecision": "ΔPrecision",
    "DeltaRecall": "ΔRecall",
    "GoodMinusBadDistance": "Good − Bad distance",
}

# What the dashboard's "Stale since …" means (raterapp/selectors/staleness.py).
STALE_HELP = (
    "Estimates that lag the verdicts: some were given or undone after the latest recompute, longer "
    "ago than a recompute takes. The reconciler recomputes them once the worker is back."
)

# What the rater-aware card and the transitivity review say (abcde-spec §13).
RATER_AWARE_HELP = (
    "The same metrics with each rater's errors accounted for: a Dawid–Skene model learns every rater's "
    "sensitivity and specificity from replicated pairs and gold questions, and each pair counts with its "
    "probability of being equivalent; intervals from a bootstrap over pairs that refits the raters."
)
RATER_FIT_HELP = (
    "Sensitivity: how often the rater says equivalent when the pair is; specificity: how often they say not "
    "equivalent when it is not. Estimated by the Dawid–Skene model from the verdicts on replicated pairs and "
    "gold questions; unsure verdicts are left out."
)
TRANSITIVITY_HELP = (
    "Three items judged a ≡ b and a ≡ c but b ≢ c cannot all be right: an inconsistent triangle. Counted "
    "on each pair's majority verdict, and per rater on their own verdicts; lower is better."
)

# The words of the rating loop, as every page uses them.
TERMS: tuple[tuple[str, str], ...] = (
    (
        "Item",
        ("One record of the population: what a cluster holds (a product, a person, a story)."),
    ),
    (
        "Base and Exp",
        ("The clustering in production (Base) and the changed one (Experiment)."),
    ),
    (
        "Pair",
        ("Two items shown to a rater side by side. A sampled pair is a distinct pair the sample drew."),
    ),
    (
        "Draw",
        ("One pick of a pair by the sampler. A pair can be drawn several times; every draw counts in the estimates."),
    ),
    (
        "Batch",
        (
            "A set of draws added to the sample at once. Batch 0 is drawn when the experiment is prepared; "
            "more can follow."
        ),
    ),
    (
        "Verdict",
        (
            "A rater's answer on a pair: equivalent, not equivalent or unsure. One pair may get several "
            "verdicts (replication)."
        ),
    ),
    (
        "Judged draw",
        ("A draw whose pair has at least one verdict other than unsure. Estimates rest on judged draws."),
    ),
    (
        "Unsure",
        (
            "A verdict that says the rater cannot tell. Left out of the estimates; the sensitivity bounds "
            "show what it could change."
        ),
    ),
    (
        "Estimate",
        ("A quality metric computed from the judged draws, with its interval."),
    ),
    (
        "Quality metric",
        (
            "How much of the change is an improvement (ΔPrecision, good and bad splits and merges): it needs to "
            "know which items truly belong together, so it is estimated from verdicts. Impact metrics (how much "
            "changed) need none."
        ),
    ),
    (
        "Absolute quality",
        ("One clustering measured on its own: its Precision and how far its Recall is above MinimumRecall (MQM §5.1)."),
    ),
    (
        "Gold question",
        (
            "A pair with a known answer, mixed into raters' queues at the gold rate. It measures each rater's "
            "gold accuracy and counts in no estimate."
        ),
    ),
    (
        "Ground-truth clustering",
        (
            "An optional upload of each item's true cluster. It gives the exact value of every quality metric "
            "(the ground-truth metrics), against which the estimates are calibrated."
        ),
    ),
    (
        "Rater quality",
        (
            "How far a rater's verdicts can be trusted: gold accuracy, speed, agreement with other raters and "
            "the fitted sensitivity and specificity."
        ),
    ),
    ("Stale", STALE_HELP),
    (
        "Confidence interval",
        ("The range the metric lies in with the stated confidence, if you look once, at the end."),
    ),
    (
        "Confidence sequence",
        (
            "A wider range that holds at every moment at once: safe to watch live and to stop whenever it "
            "clears. The decision uses it."
        ),
    ),
    (
        "Model-assisted estimate",
        (
            "An estimate from a cheap score of every drawn pair (the built-in card similarity, or your own "
            "model's) corrected by the human verdicts: as valid as the human-only estimate from the verdicts "
            "alone, and narrower when the score predicts the verdicts. The headline decides on it unless the "
            "owner turns it off; cards of human-only estimates then say that they are."
        ),
    ),
    (
        "Equivalence margin",
        ("Changes smaller than this either way count as no meaningful difference."),
    ),
    (
        "Decision",
        (
            "Exp is better, worse, no meaningful difference, or not enough data yet: read from the deciding "
            "metric's confidence sequence."
        ),
    ),
    (
        "Fragile",
        (
            "The decision would change if the unsure verdicts had all gone one way: the note says which end of "
            "the confidence sequence would then cross the margin and what the headline would say. Look at those pairs."
        ),
    ),
    (
        "Replication",
        ("How many verdicts each pair wants, from different raters."),
    ),
    (
        "Budget",
        ("How many verdicts the experiment may pay for."),
    ),
)


# A new experiment's input files and parameters, as the create page and the API describe them.
INPUT_COLUMNS: dict[str, str] = {
    "items": "item_id, base_cluster, exp_cluster, and optionally weight",
    "base": "item_id, cluster_id",
    "exp": "item_id, cluster_id",
    "weights": "item_id, weight",
    "catalogue": "item_id, title; optionally description, image_url, url; any further column is a slice attribute",
    "ground_truth": "item_id, cluster_id — calibrates the estimates",
}
INPUT_FORMATS = ".csv or .parquet"
PARAMETER_HELP: dict[str, str] = {
    "scheme": (
        "Jaccard: pairs drawn as in the JaccardDistance decomposition (the usual choice). "
        "Stratified: a share of the draws from the pairs the change affects (diff), the rest from stable pairs. "
        "ΔPrecision: pairs drawn from the distribution ΔPrecision is defined on."
    ),
    "n_draws": "Pair draws, with replacement. Distinct pairs become tasks.",
    "diff_share": "Stratified scheme only: share of the draws from the diff stratum.",
    "replication": "Verdicts wanted per pair.",
    "seed": "Leave empty for a random seed; it is stored either way.",
    "confidence": "Confidence level of the intervals, e.g. 0.95.",
}


def input_help(kind: str) -> str:
    """What an input file holds: ``Columns: …. Formats: ….``"""
    return f"Columns: {INPUT_COLUMNS[kind]}. Formats: {INPUT_FORMATS}."


class QueueClosedReason(models.TextChoices):
    """Why a rater gets no pair of an experiment now: the next-pair API's ``reason``, the rater
    home's ``blocked`` and the judging services' ``QueueClosed.reason``."""

    QUEUE_EMPTY = "queue_empty", "No pair left for this rater now"
    QUOTA_DAILY = "quota_daily", "The rater's daily quota is reached"
    QUOTA_TOTAL = "quota_total", "The rater's total quota is reached"
    BUDGET_SPENT = "budget_spent", "The experiment's budget is spent"
    BUDGET_PAUSED = "budget_paused", "An admin paused rating of the experiment"
    RATER_PAUSED = "rater_paused", "An admin paused the rater"
    NOT_ASSIGNED = "not_assigned", "The experiment is assigned to other raters"


# What a rater reads when no pair of an experiment can be offered now, by reason: a status on the
# rater home, a title and a text on the judging page's end screen (which gets them through its
# configuration), and whether it passes by itself (then both pages look again, and the end screen
# says so).
PASSES_BY_ITSELF = "This page carries on by itself when there are pairs for you again."
RATER_BLOCKED_WORDS: dict[str, dict] = {
    QueueClosedReason.RATER_PAUSED: {
        "home": ("Your rating is paused", "An admin paused your rating. Ask them when you can continue."),
        "end": ("Your rating is paused", "An admin paused your rating for now."),
        "waits": True,
    },
    QueueClosedReason.NOT_ASSIGNED: {
        "home": (
            "Not assigned to you",
            "This experiment is now rated by the raters assigned to it. Your verdicts are kept.",
        ),
        "end": ("Not open to you", "This experiment is now rated by other raters. Pick another one from your list."),
        "waits": False,
    },
    QueueClosedReason.QUOTA_DAILY: {
        "home": ("Daily quota reached", "You have given today's quota of verdicts. Come back tomorrow."),
        "end": (
            "Daily quota reached",
            "You have given today's quota of verdicts. Come back tomorrow to rate more pairs.",
        ),
        "waits": False,
    },
    QueueClosedReason.QUOTA_TOTAL: {
        "home": ("Quota reached", "You have given all the verdicts your quota allows."),
        "end": ("Total quota reached", "You have given all the verdicts your quota allows."),
        "waits": False,
    },
    QueueClosedReason.BUDGET_PAUSED: {
        "home": ("Paused", "An admin paused rating of this experiment for now."),
        "end": ("Rating paused", "An admin paused rating of this experiment."),
        "waits": True,
    },
    QueueClosedReason.BUDGET_SPENT: {
        "home": ("Budget spent", "This experiment has all the verdicts its budget pays for."),
        "end": ("Budget spent", "This experiment has all the verdicts its budget pays for."),
        "waits": True,
    },
    QueueClosedReason.QUEUE_EMPTY: {
        "home": (
            "No pairs for you now",
            "You judged every pair still wanted, or other raters hold them; pairs come back when their holds expire.",
        ),
        "end": ("No pairs left for you", "This experiment needs no more verdicts from you right now."),
        "waits": True,
    },
}


def rater_end_screen_words() -> dict[str, tuple[str, str]]:
    """The judging page's end screen, by reason: its title and its whole text."""
    return {
        reason: (words["end"][0], f"{words['end'][1]} {PASSES_BY_ITSELF}" if words["waits"] else words["end"][1])
        for reason, words in RATER_BLOCKED_WORDS.items()
    }


DECISION_LABELS: dict[str, str] = {
    "better": "Exp is better",
    "worse": "Exp is worse",
    "no_meaningful_difference": "No meaningful difference",
    "not_enough_data": "Not enough data yet",
}


def metric_label(name: str) -> str:
    return METRIC_LABELS.get(name, name)


def stale_label(since: datetime) -> str:
    """'Stale since 16:40:12 UTC' (with the date unless today) for a timezone-aware ``since``."""
    since = since.astimezone(UTC)
    if since.date() == datetime.now(UTC).date():
        return f"Stale since {since:%H:%M:%S} UTC"
    return f"Stale since {since:%Y-%m-%d %H:%M:%S} UTC"
