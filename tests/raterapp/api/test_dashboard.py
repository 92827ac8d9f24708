"""The engineer's dashboard API: its numbers against metrics_core (and the command line on the
exported files), the status badge rules, live polling with ETags, convergence, slices, the
precision target and closing rating."""

import json
import math
from datetime import timedelta

import numpy as np
import pyarrow.parquet as pq
import pytest
from django.conf import settings
from django.core.files.storage import default_storage

import metrics_core as mc
from metrics_core.agreement import agreement_summary
from raterapp.models import EstimateSnapshot, Experiment, ExperimentBudget, Judgement
from raterapp.selectors.dashboard import MIN_JUDGED_DRAWS
from raterapp.services.refresh.derived import derived_refresh
from raterapp.services.refresh.estimates import estimates_refresh
from tests.metrics_core.cli_run import run_json
from tests.raterapp.helpers.dashboard import GOLD, judge, raters
from tests.raterapp.prepared import BASE, EXP, experiment_prepared, sample_of


def url(experiment, tail=""):
    return f"/api/experiments/{experiment.pk}/{tail}"


@pytest.fixture
def judged(people):
    """An experiment with slices, every pair judged by two raters, and its estimates."""
    experiment = experiment_prepared(owner=people["owner"], replication=2, slices=True, confidence=0.9)
    submitted = judge(experiment, raters(2))
    estimates_refresh(experiment_id=experiment.pk)
    return experiment, submitted


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
def test_dashboard_numbers_equal_the_command_line_on_the_exported_files(client_of, people, tmp_path, scheme):
    experiment = experiment_prepared(owner=people["owner"], scheme=scheme, replication=2, confidence=0.9)
    judge(experiment, raters(2))
    estimates_refresh(experiment_id=experiment.pk)
    derived_refresh(experiment_id=experiment.pk)
    client = client_of("owner")
    body = client.get(url(experiment, "dashboard/")).json()

    population = pq.read_table(default_storage.path(experiment.population_file)).to_pandas()
    population.to_csv(tmp_path / "items.csv", index=False)
    for name in ("pairs", "judgements"):
        (tmp_path / f"{name}.csv").write_bytes(client.get(url(experiment, f"exports/{name}/?format=csv")).content)
    cli = run_json("estimate", tmp_path / "items.csv", tmp_path / "pairs.csv", tmp_path / "judgements.csv",
                   "--confidence", "0.9", "--seed", str(experiment.seed),
                   "--n-boot", str(settings.DERIVED_BOOTSTRAP_REPLICATES))

    # The scheme's estimates, and ΔRecall and IQ in their own panel, with the same bootstrap.
    assert list(body["estimates"]) == list(mc.metrics_for_scheme(scheme))
    for name in mc.DERIVED_METRICS:
        expected, shown = cli["estimates"][name], body["derived"]["estimates"][name]
        for key, value in expected.items():
            assert shown[key] == (None if value is None else pytest.approx(value, rel=1e-12, abs=1e-15)), (name, key)
    assert body["derived"]["curve"] == cli["derived"]["curve"]
    assert body["derived"]["heat_map"] == cli["derived"]["heat_map"]
    assert (body["derived"]["variant"], body["derived"]["recall_base"]) == (
        cli["derived"]["variant"], cli["derived"]["recall_base"],
    )
    for name in mc.metrics_for_scheme(scheme):
        expected, shown = cli["estimates"][name], body["estimates"][name]
        for key, value in expected.items():
            assert shown[key] == (None if value is None else pytest.approx(value, rel=1e-12, abs=1e-15)), (name, key)
        assert shown["half_width"] == pytest.approx((expected["ci_high"] - expected["ci_low"]) / 2, rel=1e-12)
    for name, value in cli["exact"].items():
        assert body["impact"]["metrics"][name] == pytest.approx(value, rel=1e-12), name

    # The page embeds the very same numbers it then keeps up to date.
    page = client_of("owner")
    page.force_login(people["owner"])
    html = page.get(f"/experiments/{experiment.pk}/").content.decode()
    start = html.index('<script id="dashboard-data" type="application/json">') + len(
        '<script id="dashboard-data" type="application/json">'
    )
    embedded = json.loads(html[start : html.index("</script>", start)])
    assert embedded == body


def test_dashboard_arranges_metrics_core_results(client_of, judged):
    experiment, submitted = judged
    body = client_of("owner").get(url(experiment, "dashboard/")).json()
    population, sample = sample_of(experiment)
    a, b, verdict = (list(c) for c in zip(*submitted))
    quality = mc.estimate_quality(population, sample, mc.verdicts_from_judgements(a, b, verdict), confidence=0.9)

    for name, shown in body["estimates"].items():
        direction = mc.metric_direction(name)
        assert shown["reading"] == mc.interval_reading(quality[name], direction=direction)
        assert shown["direction"] == ("higher_is_better" if direction > 0 else "lower_is_better")
    situation = mc.affected_item_situation(quality, exact=mc.impact_metrics(population).metrics)
    assert body["situation"] == json.loads(json.dumps(situation.as_dict()))
    assert body["agreement"] == agreement_summary(
        unit=[f"{min(x, y)}-{max(x, y)}" for x, y in zip(a, b)], verdict=verdict
    ).as_dict()
    assert body["agreement"]["replicated_pairs"] == experiment.tasks.count()

    progress = body["progress"]
    tasks = experiment.tasks.count()
    assert (progress["tasks"], progress["wanted"], progress["verdicts"], progress["remaining"]) == (
        tasks, 2 * tasks, len(submitted), 0
    )
    assert progress["judged_draws"] == quality["DeltaPrecision"].judged_draws
    assert progress["drawn_draws"] == quality["DeltaPrecision"].drawn_draws == experiment.n_draws
    assert progress["half_width"] == pytest.approx(quality["DeltaPrecision"].half_width, rel=1e-12)
    assert progress["more_judgements"] == mc.judgements_to_target(
        half_width=quality["DeltaPrecision"].half_width, judgements=len(submitted), target_half_width=0.01
    )
    assert body["snapshot"]["judgements"] == len(submitted)
    assert (progress["budget_max_verdicts"], progress["budget_left"]) == (None, None)  # no limit
    ExperimentBudget.objects.filter(experiment=experiment).update(max_verdicts=len(submitted) + 7)
    progress = client_of("owner").get(url(experiment, "dashboard/")).json()["progress"]
    assert (progress["budget_max_verdicts"], progress["budget_left"]) == (len(submitted) + 7, 7)
    assert (progress["budget_spent"], progress["budget_spent_cost"]) == (len(submitted), 0.0)


def test_the_precision_scheme_has_no_situation_picture(client_of, people):
    experiment = experiment_prepared(owner=people["owner"], scheme="precision")
    judge(experiment, raters(1))
    estimates_refresh(experiment_id=experiment.pk)
    body = client_of("owner").get(url(experiment, "dashboard/")).json()
    assert body["situation"] is None
    assert list(body["estimates"]) == list(mc.metrics_for_scheme("precision"))


def test_badge_follows_the_rules(client_of, people, settings):
    experiment = experiment_prepared(owner=people["owner"], replication=1)
    client = client_of("owner")
    badge = lambda: client.get(url(experiment, "dashboard/")).json()["badge"]  # noqa: E731
    assert badge()["key"] == "rating"
    assert "No ΔPrecision interval yet." in badge()["reasons"]

    judge(experiment, raters(1), limit=3)
    estimates_refresh(experiment_id=experiment.pk)
    first = badge()
    assert first["key"] == "rating"
    assert any(f"of at least {MIN_JUDGED_DRAWS} judged draws" in reason for reason in first["reasons"])

    judge(experiment, raters(1))  # every pair has its verdict
    estimates_refresh(experiment_id=experiment.pk)
    assert badge() == {
        "key": "enough_data",
        "label": "Enough data",
        "reasons": ["Every sampled pair has all the verdicts it wants."],
    }
    assert client.post(url(experiment, "close/")).status_code == 200
    assert badge()["key"] == "done"
    Experiment.objects.filter(pk=experiment.pk).update(status=Experiment.Status.FAILED)
    assert badge()["key"] == "failed"
    Experiment.objects.filter(pk=experiment.pk).update(status=Experiment.Status.SAMPLING)
    assert badge()["key"] == "preparing"


def test_enough_data_once_the_interval_reaches_the_target(client_of, people):
    rng = np.random.default_rng(5)
    base = np.arange(300) // 6
    exp = np.where(rng.random(300) < 0.3, rng.integers(0, 50, 300), base)
    experiment = experiment_prepared(owner=people["owner"], base=base.tolist(), exp=exp.tolist(), n_draws=2000)
    judge(experiment, raters(1), limit=MIN_JUDGED_DRAWS, gold=(np.arange(300) // 3).tolist())
    snapshot = estimates_refresh(experiment_id=experiment.pk)
    estimate = snapshot.estimates["estimates"]["DeltaPrecision"]
    half_width = (estimate["ci_high"] - estimate["ci_low"]) / 2
    client = client_of("owner")
    assert client.get(url(experiment, "dashboard/")).json()["badge"]["key"] == "rating"
    assert client.put(url(experiment, "target/"), {"target_half_width": half_width * 1.01}, format="json").status_code == 200
    body = client.get(url(experiment, "dashboard/")).json()
    assert body["badge"]["key"] == "enough_data"
    assert body["progress"]["more_judgements"] == 0


def test_rate_comes_from_the_snapshots_of_the_last_hour(client_of, people):
    experiment = experiment_prepared(owner=people["owner"])
    now = EstimateSnapshot.objects.create(experiment=experiment, judgements=0, judged_pairs=0, estimates={}).created_at
    for minutes_ago, judgements in ((90, 10), (60, 40), (30, 70), (0, 100)):
        EstimateSnapshot.objects.create(
            experiment=experiment, judgements=judgements, judged_pairs=judgements, estimates={"estimates": {}, "scheme": "jaccard", "confidence": 0.95}
        )
        EstimateSnapshot.objects.filter(pk=EstimateSnapshot.objects.latest("pk").pk).update(
            created_at=now - timedelta(minutes=minutes_ago)
        )
    EstimateSnapshot.objects.filter(judgements=0).delete()
    body = client_of("owner").get(url(experiment, "dashboard/")).json()
    assert body["progress"]["rate_per_hour"] == pytest.approx(60.0)  # 100 - 40 verdicts in the last hour


def test_polling_answers_304_until_something_changes(client_of, judged):
    experiment, _ = judged
    client = client_of("owner")
    first = client.get(url(experiment, "dashboard/"))
    etag = first["ETag"]
    assert first.status_code == 200 and etag
    again = client.get(url(experiment, "dashboard/"), HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b""
    estimates_refresh(experiment_id=experiment.pk)  # a new snapshot
    moved = client.get(url(experiment, "dashboard/"), HTTP_IF_NONE_MATCH=etag)
    assert moved.status_code == 200 and moved["ETag"] != etag
    derived_refresh(experiment_id=experiment.pk)  # new derived metrics
    derived = client.get(url(experiment, "dashboard/"), HTTP_IF_NONE_MATCH=moved["ETag"])
    assert derived.status_code == 200 and derived.json()["derived"]["judgements"] > 0
    moved = derived
    client.put(url(experiment, "target/"), {"target_half_width": 0.05}, format="json")  # an edit
    edited = client.get(url(experiment, "dashboard/"), HTTP_IF_NONE_MATCH=moved["ETag"])
    assert edited.status_code == 200 and edited.json()["experiment"]["target_half_width"] == 0.05
    budgeted = client_of("admin").patch(url(experiment, "budget/"), {"max_verdicts": 99, "reason": "r"}, format="json")
    assert budgeted.status_code == 200
    after_budget = client.get(url(experiment, "dashboard/"), HTTP_IF_NONE_MATCH=edited["ETag"])
    assert after_budget.status_code == 200 and after_budget.json()["progress"]["budget_max_verdicts"] == 99


def test_convergence_lists_the_snapshots_evenly(client_of, judged):
    experiment, _ = judged
    for _ in range(6):
        estimates_refresh(experiment_id=experiment.pk)
    snapshots = list(EstimateSnapshot.objects.filter(experiment=experiment).order_by("created_at", "pk"))
    client = client_of("owner")
    body = client.get(url(experiment, "estimates/convergence/")).json()
    assert body["metrics"] == list(mc.metrics_for_scheme("jaccard"))
    assert [p["snapshot"] for p in body["points"]] == [s.pk for s in snapshots]
    point = body["points"][-1]["estimates"]["DeltaPrecision"]
    stored = snapshots[-1].estimates["estimates"]["DeltaPrecision"]
    assert point == {k: stored[k] for k in ("value", "ci_low", "ci_high", "cs_low", "cs_high")}
    few = client.get(url(experiment, "estimates/convergence/?points=3")).json()["points"]
    assert [p["snapshot"] for p in few] == [snapshots[0].pk, snapshots[3].pk, snapshots[-1].pk]
    csv = client.get(url(experiment, "estimates/convergence/?format=csv")).content.decode().splitlines()
    assert csv[0] == "snapshot,created_at,judgements,metric,value,ci_low,ci_high,cs_low,cs_high"
    assert len(csv) == 1 + len(snapshots) * len(body["metrics"])
    assert client.get(url(experiment, "estimates/convergence/?points=x")).status_code == 400


def test_slices_give_each_values_impact_and_metrics_core_estimates(client_of, judged):
    experiment, submitted = judged
    derived_refresh(experiment_id=experiment.pk)  # the step that computes the slices' estimates
    client = client_of("owner")
    assert client.get(url(experiment, "slices/")).json() == {"attributes": ["colour"]}
    body = client.get(url(experiment, "slices/?attribute=colour")).json()
    assert [row["label"] for row in body["rows"]] == ["blue", "red"]  # equal weight: by label
    assert (body["values"], body["estimated_values"], body["scheme"]) == (2, 2, "jaccard")

    population, sample = sample_of(experiment)
    a, b, verdict = (list(c) for c in zip(*submitted))
    codes = np.array([0 if k % 2 == 0 else 1 for k in range(population.n_items)])
    expected = mc.estimate_quality_by_slice(
        population, sample, mc.verdicts_from_judgements(a, b, verdict), slice_of_item=codes, labels=["blue", "red"],
        confidence=0.9,
    )
    for row, slice_quality in zip(body["rows"], expected):
        assert row["items"] == slice_quality.items == 6
        assert row["weight_fraction"] == pytest.approx(slice_quality.weight_fraction)
        for name, estimate in slice_quality.metric.estimates.items():
            assert row["metric"][name]["value"] == pytest.approx(estimate.value, nan_ok=True)
            assert row["contribution"][name]["ci_high"] == pytest.approx(
                slice_quality.contribution[name].ci_high, nan_ok=True
            )
        mask = codes == expected.index(slice_quality)
        exact = mc.impact_by_group(population, np.where(mask, 0, 1))
        assert row["impact"]["JaccardDistance"] == pytest.approx(float(exact.metrics["JaccardDistance"][0]))

    csv = client.get(url(experiment, "slices/?attribute=colour&format=csv")).content.decode().splitlines()
    header = csv[0].split(",")
    assert header[:5] == ["label", "items", "affected_items", "weight", "weight_fraction"]
    assert "DeltaPrecision_ci_low" in header and "DeltaPrecision_contribution" in header
    assert [line.split(",")[0] for line in csv[1:]] == ["blue", "red"]
    assert client.get(url(experiment, "slices/?attribute=base")).status_code == 404
    assert client.get(url(experiment, "slices/?attribute=size")).status_code == 404


def test_target_and_rating_switch_belong_to_the_owner_and_admins(client_of, people, judged):
    experiment, _ = judged
    experiment.shared_with.add(people["other"])
    other = client_of("other")
    assert other.get(url(experiment, "dashboard/")).status_code == 200  # granted: reads
    refused = other.put(url(experiment, "target/"), {"target_half_width": 0.2}, format="json")
    assert refused.status_code == 403
    assert other.post(url(experiment, "close/")).status_code == 403
    experiment.refresh_from_db()
    assert (experiment.target_half_width, experiment.status) == (0.01, Experiment.Status.RATING)

    owner = client_of("owner")
    assert owner.put(url(experiment, "target/"), {"target_half_width": 0}, format="json").status_code == 400
    assert owner.put(url(experiment, "target/"), {"target_half_width": 2}, format="json").status_code == 400
    assert owner.put(url(experiment, "target/"), {"target_half_width": 0.02}, format="json").json() == {
        "target_half_width": 0.02
    }
    assert owner.post(url(experiment, "reopen/")).status_code == 400  # not closed
    assert owner.post(url(experiment, "close/")).json()["status"] == "done"
    verdicts = Judgement.objects.count()
    assert client_of("rater").post(url(experiment, "next-pair/")).status_code == 404  # closed to raters
    assert Judgement.objects.count() == verdicts
    assert client_of("admin").post(url(experiment, "reopen/")).json()["status"] == "rating"
    experiment.refresh_from_db()
    assert (experiment.target_half_width, experiment.status) == (0.02, Experiment.Status.RATING)


def test_experiment_list_shows_badges_progress_and_headlines(people, judged):
    from django.test import Client

    experiment, submitted = judged
    other = experiment_prepared(owner=people["owner"], name="not judged yet")
    client = Client()
    client.force_login(people["owner"])
    html = client.get("/experiments/").content.decode()
    estimate = experiment.snapshots.latest().estimates["estimates"]["DeltaPrecision"]
    half_width = (estimate["ci_high"] - estimate["ci_low"]) / 2
    assert f"{estimate['value']:.4f} ± {half_width:.4f}" in html
    assert f"{experiment.impact['metrics']['JaccardDistance']:.4f}" in html
    assert f"{len(submitted)} / {len(submitted)} verdicts" in html
    assert 'badge--enough_data">Enough data' in html
    assert f"0 / {other.tasks.count()} verdicts" in html
    assert 'badge--rating">Rating' in html
    assert not math.isnan(half_width)
    assert BASE and EXP  # the prepared population


def test_impact_table_downloads_as_csv_and_json(client_of, people):
    experiment = experiment_prepared(owner=people["owner"])
    client = client_of("owner")
    csv = client.get(url(experiment, "exports/impact/?format=csv"))
    assert csv["Content-Disposition"] == f'attachment; filename="experiment-{experiment.pk}-impact.csv"'
    lines = csv.content.decode().splitlines()
    assert lines[0] == "metric,value"
    metrics = experiment.impact["metrics"]
    assert lines[1:] == [f"{name},{metrics[name]}" for name in mc.IMPACT_METRICS]
    assert client.get(url(experiment, "exports/impact/?format=json")).json() == experiment.impact
    queued = Experiment.objects.create(name="q", owner=people["owner"])
    assert client.get(url(queued, "exports/impact/?format=csv")).status_code == 404


def test_derived_panels_arrange_the_stored_derived_metrics(client_of, judged, settings):
    """ΔRecall and IQ with readings and meanings, the curve and heat map, as stored by the worker."""
    experiment, _ = judged
    client = client_of("owner")
    assert client.get(url(experiment, "dashboard/")).json()["derived"] is None
    assert client.get(url(experiment, "derived/")).status_code == 404
    settings.DERIVED_BOOTSTRAP_REPLICATES = 100
    stored = derived_refresh(experiment_id=experiment.pk)
    panel = client.get(url(experiment, "dashboard/")).json()["derived"]
    for name in ("DeltaRecall", "IQ"):
        estimate = mc.Estimate.from_dict(stored.payload["estimates"][name])
        assert panel["estimates"][name]["reading"] == mc.interval_reading(estimate, direction=1)
        assert panel["estimates"][name]["value"] == stored.payload["estimates"][name]["value"]
        assert panel["meanings"][name]
    assert panel["curve"] == stored.payload["curve"] and panel["heat_map"] == stored.payload["heat_map"]
    assert panel["clips"] == stored.payload["diagram"]["clips"]
    assert panel["plausibility"]["JaccardDistance"] == experiment.impact["metrics"]["JaccardDistance"]
    full = client.get(url(experiment, "derived/")).json()
    assert full["diagram"] == stored.payload["diagram"] and full["judgements"] == stored.judgements


def test_calibration_puts_each_estimate_beside_its_exact_ground_truth_value(client_of, judged, settings):
    experiment, _ = judged
    population, _ = sample_of(experiment)
    experiment.ground_truth_metrics = {
        "quality": {k: float(v) for k, v in mc.quality_from_gold(population, GOLD).items()},
        "truth": mc.truth_from_gold(population, GOLD),
    }
    experiment.save()
    settings.DERIVED_BOOTSTRAP_REPLICATES = 100
    derived_refresh(experiment_id=experiment.pk)
    body = client_of("owner").get(url(experiment, "dashboard/")).json()
    rows = {row["metric"]: row for row in body["calibration"]["quality"]}
    assert list(rows) == list(body["estimates"])  # every estimate, in report order
    for name, row in rows.items():
        shown = body["estimates"][name]
        assert (row["value"], row["exact"]) == (shown["value"], experiment.ground_truth_metrics["quality"][name])
        assert row["covered"] == (shown["ci_low"] <= row["exact"] <= shown["ci_high"])
    assert {row["covered"] for row in rows.values()} <= {True, False}
    derived_rows = {row["metric"]: row for row in body["calibration"]["derived"]}
    assert derived_rows["DeltaRecall"]["exact"] == pytest.approx(experiment.ground_truth_metrics["truth"]["DeltaRecall"])
    assert body["calibration"]["calibration"]["matching_recall_base"] is not None


def test_absolute_quality_reads_precision_and_recall_above_the_minimum(client_of, people, settings):
    singletons = list(range(len(BASE)))
    experiment = experiment_prepared(owner=people["owner"], exp=singletons, confidence=0.9)
    Experiment.objects.filter(pk=experiment.pk).update(kind=Experiment.Kind.ABSOLUTE)
    judge(experiment, raters(1))
    estimates_refresh(experiment_id=experiment.pk)
    client = client_of("owner")
    before = client.get(url(experiment, "dashboard/")).json()
    delta_precision = before["estimates"]["DeltaPrecision"]
    assert before["absolute"]["Precision"]["value"] == pytest.approx(1 - delta_precision["value"])
    assert before["absolute"]["Precision"]["ci_low"] == pytest.approx(1 - delta_precision["ci_high"])
    assert "RecallAboveMinimum" not in before["absolute"]  # until the derived metrics are in
    settings.DERIVED_BOOTSTRAP_REPLICATES = 100
    derived_refresh(experiment_id=experiment.pk)
    after = client.get(url(experiment, "dashboard/")).json()
    delta_recall = after["derived"]["estimates"]["DeltaRecall"]
    assert delta_recall["value"] <= 0  # splitting everything never adds recall
    assert after["absolute"]["RecallAboveMinimum"]["value"] == pytest.approx(-delta_recall["value"])
    assert after["absolute"]["RecallAboveMinimum"]["ci_high"] == pytest.approx(-delta_recall["ci_low"])
    change = experiment_prepared(owner=people["owner"], name="a change")
    assert client.get(url(change, "dashboard/")).json()["absolute"] is None
