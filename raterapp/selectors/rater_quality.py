"""Rater quality as admins and engineers see it: gold questions, gold accuracy and reported pairs."""

from __future__ import annotations

from django.db.models import Count, F, Q, QuerySet

from metrics_core.proportions import proportion_interval
from raterapp.models import Experiment, Judgement, PairReport, PairTask, Verdict, sampled_q


def gold_pairs_list(*, experiment: Experiment) -> QuerySet[PairTask]:
    return (
        PairTask.objects.filter(experiment=experiment)
        .gold()
        .select_related("item_a", "item_b")
        .annotate(
            judged=Count("judgements"), correct=Count("judgements", filter=Q(judgements__verdict=F("gold_answer")))
        )
        .order_by("pk")
    )


def gold_accuracy_list(*, experiment: Experiment) -> list[dict]:
    """Per rater who answered gold questions of the experiment: answers, unsure, correct,
    accuracy among sure answers and its Wilson interval at the experiment's confidence."""
    rows = (
        Judgement.objects.filter(task__experiment=experiment)
        .exclude(sampled_q("task__"))
        .values("rater", "rater__username")
        .annotate(
            answered=Count("pk"),
            unsure=Count("pk", filter=Q(verdict=Verdict.UNSURE)),
            correct=Count("pk", filter=Q(verdict=F("task__gold_answer"))),
        )
        .order_by("rater__username")
    )
    return [
        {
            "rater": row["rater"],
            "username": row["rater__username"],
            **gold_accuracy_row(
                answered=row["answered"], unsure=row["unsure"], correct=row["correct"], confidence=experiment.confidence
            ),
        }
        for row in rows
    ]


def gold_accuracy_row(*, answered: int, unsure: int, correct: int, confidence: float) -> dict:
    """Gold answers, unsure, correct, the accuracy among sure answers and its Wilson
    interval (``None`` without a sure answer)."""
    sure = answered - unsure
    interval = proportion_interval(correct, sure, confidence)
    return {
        "answered": answered,
        "unsure": unsure,
        "correct": correct,
        "accuracy": correct / sure if sure else None,
        "ci_low": interval[0] if interval else None,
        "ci_high": interval[1] if interval else None,
    }


def pair_reports_list(*, experiment: Experiment) -> QuerySet[PairReport]:
    """Reports of broken pairs, newest first, with the pair's items and the reporter."""
    return (
        PairReport.objects.filter(task__experiment=experiment)
        .select_related("task__item_a", "task__item_b", "rater")
        .order_by("-created_at", "-pk")
    )


def pair_reports_inbox(*, resolved: bool = False) -> QuerySet[PairReport]:
    """Reports of every experiment, open ones (or resolved ones) newest first, with the pair's
    items, the experiment, the reporter and who resolved it."""
    return (
        PairReport.objects.filter(resolved_at__isnull=not resolved)
        .select_related("task__item_a", "task__item_b", "task__experiment", "rater", "resolved_by")
        .order_by("-resolved_at" if resolved else "-created_at", "-pk")
    )
