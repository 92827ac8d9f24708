"""Rater-aware estimates and transitivity in the app: the worker stores exactly what metrics_core
gives on the experiment's verdicts, rater ids and gold answers; the selectors arrange it (raters
by name, explorer links) without computing anything; the derived refresh schedules it."""

from unittest import mock

import numpy as np
import pytest

from metrics_core import estimate_quality_rater_aware, transitivity_report
from raterapp.models import Judgement, PairTask, RaterAwareEstimate, SampledPair
from raterapp.selectors.rater_aware import (
    experiment_rater_quality_rows,
    experiment_transitivity_get,
    rater_aware_panel_get,
    rater_confusion_list,
)
from raterapp.services.judging.gold import gold_pair_create
from raterapp.services.outbox import EFFECTS, Kind
from raterapp.services.refresh.rater_aware import rater_aware_refresh
from raterapp.tasks import rater_aware_refresh_task
from tests.raterapp.factories import make_raters
from tests.raterapp.helpers.judging import GOLD, judge_with_errors
from tests.raterapp.prepared import experiment_prepared, sample_of

pytestmark = pytest.mark.usefixtures("no_pending_keys", "media")


@pytest.fixture
def judged(users, settings):
    settings.RATER_AWARE_BOOTSTRAP_REPLICATES = 60
    experiment = experiment_prepared(owner=users["engineer"], replication=3, n_draws=200)
    experiment.gold_rate = 0.2
    experiment.save()
    for task in PairTask.objects.filter(experiment=experiment).order_by("rank")[:3]:
        answer = "equivalent" if GOLD[task.item_a.position] == GOLD[task.item_b.position] else "not_equivalent"
        gold_pair_create(
            experiment=experiment,
            actor=users["admin"],
            item_a=task.item_a.item_id,
            item_b=task.item_b.item_id,
            answer=answer,
        )
    raters = make_raters(3)
    return experiment, raters, judge_with_errors(experiment, raters)


def _column(rows, name, dtype=object):
    return np.array([r[name] for r in rows], dtype=dtype)


def test_refresh_stores_what_metrics_core_gives_on_the_verdicts_raters_and_gold(judged):
    experiment, raters, submitted = judged
    gold_rows = [r for r in submitted if r["gold"]]
    assert len(gold_rows) >= 3 and any(r["verdict"] == "equivalent" for r in submitted)
    stored = rater_aware_refresh(experiment_id=experiment.pk)

    population, sample = sample_of(experiment)
    gold = {(r["a"], r["b"]): r["gold"] for r in gold_rows}
    expected = estimate_quality_rater_aware(
        population,
        sample,
        i=_column(submitted, "a", np.int64),
        j=_column(submitted, "b", np.int64),
        verdict=_column(submitted, "verdict"),
        rater=_column(submitted, "rater", np.int64),
        gold_i=np.array([p[0] for p in gold], dtype=np.int64),
        gold_j=np.array([p[1] for p in gold], dtype=np.int64),
        gold_answer=np.array(list(gold.values()), dtype=object),
        rng=np.random.default_rng(experiment.seed),
        n_boot=60,
        confidence=experiment.confidence,
    )
    assert stored.payload == expected.as_dict()
    assert stored.error == ""
    assert stored.judgements == len(submitted) - len(gold_rows)
    assert sorted(r["rater"] for r in stored.payload["raters"]) == sorted(r.pk for r in raters)
    # Raters who err are seen to err: nobody is fitted as perfect both ways.
    assert all(min(r["sensitivity"], r["specificity"]) < 0.999 for r in stored.payload["raters"])
    # Seeded: the same verdicts give the same intervals.
    assert rater_aware_refresh(experiment_id=experiment.pk).payload == stored.payload


def test_transitivity_counts_and_triangles_are_metrics_core_s_on_the_sampled_pairs(judged):
    experiment, raters, submitted = judged
    stored = rater_aware_refresh(experiment_id=experiment.pk)
    sampled = [r for r in submitted if not r["gold"]]
    expected = transitivity_report(
        i=_column(sampled, "item_a"),
        j=_column(sampled, "item_b"),
        verdict=_column(sampled, "verdict"),
        rater=_column(sampled, "rater", np.int64),
    )
    counts = expected.counts_dict()
    assert len(expected.triangles) > 0, "the seeded errors must make inconsistent triangles"
    for key in ("inconsistent_triangles", "closed_triangles", "inconsistent_share", "raters"):
        assert stored.transitivity[key] == counts[key]
    without_links = [
        {"items": t["items"], "pairs": [{k: v for k, v in p.items() if k != "sampled_pair"} for p in t["pairs"]]}
        for t in stored.transitivity["triangles"]
    ]
    assert without_links == [t.as_dict() for t in expected.triangles]

    review = experiment_transitivity_get(experiment=experiment)
    names = {r.pk: r.username for r in raters}
    assert review["inconsistent_triangles"] == len(expected.triangles)
    assert [row["username"] for row in review["raters"]] == [names[r] for r in expected.per_rater]
    first, expected_first = review["triangles"][0], expected.triangles[0]
    for pair, want in zip(first["pairs"], expected_first.pairs, strict=True):
        assert (pair["a"], pair["b"], pair["verdict"]) == (want.a, want.b, want.verdict)
        assert [v["username"] for v in pair["votes"]] == [names[r] for r in want.raters]
        assert [v["verdict"] for v in pair["votes"]] == list(want.verdicts)
        sampled_pair = SampledPair.objects.get(pk=int(pair["explorer_url"].rsplit("-", 1)[1]))
        assert {sampled_pair.vantage.item_id, sampled_pair.partner.item_id} == {want.a, want.b}
        assert pair["explorer_url"].startswith(f"/experiments/{experiment.pk}/pairs/#pair-")


def test_panel_puts_each_rater_aware_estimate_beside_the_raw_one_and_names_the_raters(judged):
    experiment, raters, _ = judged
    stored = rater_aware_refresh(experiment_id=experiment.pk)
    raw = {"GoodSplitDistance": {"value": 0.25}}
    panel = rater_aware_panel_get(experiment=experiment, raw=raw)
    by_metric = {row["metric"]: row for row in panel["estimates"]}
    assert by_metric["GoodSplitDistance"]["raw_value"] == 0.25
    assert by_metric["BadMergeDistance"]["raw_value"] is None
    for name, row in by_metric.items():
        assert row["value"] == stored.payload["estimates"][name]["value"]
        assert row["ci_low"] == stored.payload["estimates"][name]["ci_low"]
    assert {r["username"] for r in panel["raters"]} == {r.username for r in raters}
    assert panel["model"]["bootstrap_replicates"] == 60
    rows = experiment_rater_quality_rows(panel=panel, transitivity=experiment_transitivity_get(experiment=experiment))
    assert [r["username"] for r in rows] == sorted(r.username for r in raters)
    fit = {r["rater"]: r for r in stored.payload["raters"]}
    assert all(r["sensitivity"] == fit[r["rater"]]["sensitivity"] for r in rows)

    listed = rater_confusion_list(rater=raters[0])
    assert listed == [
        {
            "experiment": experiment.pk,
            "experiment_name": experiment.name,
            "computed_at": stored.created_at.isoformat(),
            **{k: fit[raters[0].pk][k] for k in ("sensitivity", "specificity", "verdicts", "unsure")},
        }
    ]


def test_before_any_verdict_the_error_is_stored_and_reads_write_nothing(users, settings):
    experiment = experiment_prepared(owner=users["engineer"])
    assert rater_aware_panel_get(experiment=experiment) is None
    assert experiment_transitivity_get(experiment=experiment) is None
    assert RaterAwareEstimate.objects.count() == 0
    stored = rater_aware_refresh(experiment_id=experiment.pk)
    assert stored.payload is None and stored.error == "No verdicts yet." and stored.judgements == 0
    assert stored.transitivity["inconsistent_triangles"] == 0 and stored.transitivity["triangles"] == []
    panel = rater_aware_panel_get(experiment=experiment)
    assert panel["error"] == "No verdicts yet." and panel["estimates"] is None
    assert RaterAwareEstimate.objects.count() == 1 and Judgement.objects.count() == 0


def test_with_one_verdict_per_pair_and_no_gold_nothing_is_fitted(users, settings):
    experiment = experiment_prepared(owner=users["engineer"], replication=1)
    submitted = judge_with_errors(experiment, make_raters(1))
    assert len(submitted) > 10 and not any(r["gold"] for r in submitted)
    stored = rater_aware_refresh(experiment_id=experiment.pk)
    assert stored.payload is None
    assert stored.error.startswith("Rater-aware estimates need replicated pairs or gold questions")
    # The transitivity counts do not need the model.
    sampled = [r for r in submitted if not r["gold"]]
    expected = transitivity_report(
        i=_column(sampled, "item_a"), j=_column(sampled, "item_b"), verdict=_column(sampled, "verdict")
    )
    assert stored.transitivity["closed_triangles"] == expected.closed_triangles


def test_the_derived_refresh_effect_schedules_the_rater_aware_refresh_once(users):
    experiment = experiment_prepared(owner=users["engineer"])
    with mock.patch.object(rater_aware_refresh_task, "apply_async") as scheduled:
        with mock.patch("raterapp.services.scheduling.DERIVED_REFRESH"):
            EFFECTS[Kind.DERIVED_REFRESH](experiment.pk)
            EFFECTS[Kind.DERIVED_REFRESH](experiment.pk)
    assert scheduled.call_count == 1
    assert scheduled.call_args.kwargs["args"] == [experiment.pk]
