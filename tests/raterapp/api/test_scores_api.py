"""Pair scores through the API (abcde-spec §15): the team's own scores uploaded (all or nothing, the
built-in score kept for the pairs they leave out), every pair's score exported as the command line's
SCORES file, and ``estimate --scores`` on the exports giving the app's model-assisted estimates."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from metrics_core.cli import main as metrics_core_main
from raterapp.models import SampledPair
from raterapp.selectors.dashboard import experiment_dashboard_get
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.helpers.exports import csv_rows, export
from tests.raterapp.helpers.scored import BASE, EXP, IDEAL, judge, scored_experiment

pytestmark = pytest.mark.usefixtures("media")


@pytest.fixture
def judged(people):
    experiment, _, _ = scored_experiment(people["owner"])
    judge(experiment, 150)
    estimates_refresh(experiment_id=experiment.pk)
    return experiment


def _upload(client, experiment, text: str, name: str = "scores.csv"):
    url = f"/api/experiments/{experiment.pk}/scores/"
    return client.post(url, {"scores": SimpleUploadedFile(name, text.encode())}, format="multipart")


def test_the_command_line_reproduces_the_model_assisted_estimates_from_the_exports(client_of, judged, tmp_path, capsys):
    client = client_of("owner")
    items = tmp_path / "items.csv"
    items.write_text(
        "item_id,base_cluster,exp_cluster\n"
        + "".join(f"item-{k:03d},b{b},e{e}\n" for k, (b, e) in enumerate(zip(BASE, EXP)))
    )
    for kind in ("pairs", "judgements", "scores"):
        (tmp_path / f"{kind}.csv").write_bytes(export(client, judged, kind, "csv").content)
    rows = csv_rows(export(client, judged, "scores", "csv"))
    assert {row["score_source"] for row in rows} == {"built_in"} and len(
        {frozenset((r["i"], r["j"])) for r in rows}
    ) == len(rows)
    capsys.readouterr()
    paths = [str(tmp_path / f"{kind}.csv") for kind in ("pairs", "judgements")]
    status = metrics_core_main(["estimate", str(items), *paths, "--scores", str(tmp_path / "scores.csv")])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    from_cli = json.loads(out)["model_assisted"]
    snapshot = client.get(f"/api/experiments/{judged.pk}/estimates/").json()["model_assisted"]
    assert len(from_cli["classes"]) == len(snapshot["classes"])
    for ours, theirs in zip(from_cli["classes"], snapshot["classes"], strict=True):
        for key, value in theirs.items():
            assert ours[key] == (pytest.approx(value, rel=1e-9) if isinstance(value, float) else value), key
    assert any(c["rule"] == "calibrated" for c in snapshot["classes"])
    for name, estimate in snapshot["estimates"].items():
        for key, value in estimate.items():
            expected = pytest.approx(value, rel=1e-9, abs=1e-12) if isinstance(value, float) else value
            assert from_cli["estimates"][name][key] == expected, (name, key)


def test_uploaded_scores_replace_the_built_in_ones_for_the_pairs_they_cover(client_of, judged):
    pairs = list(
        SampledPair.objects.filter(experiment=judged).exclude(pair_class="self").select_related("vantage", "partner")
    )
    once = {frozenset((p.vantage_id, p.partner_id)): p for p in pairs}  # a pair drawn both ways: one row
    covered = list(once.values())[: len(once) // 2]
    lines = "".join(
        f"{p.partner.item_id},{p.vantage.item_id},{1.0 if IDEAL[p.vantage.position] == IDEAL[p.partner.position] else 0.0}\n"
        for p in covered
    )  # written j, i: a pair in either order
    unordered = {frozenset((p.vantage_id, p.partner_id)) for p in covered}
    response = _upload(client_of("owner"), judged, "i,j,score\n" + lines + "item-nope,item-000,0.5\n")
    assert response.status_code == 200, response.content
    every = {frozenset((p.vantage_id, p.partner_id)) for p in pairs}
    assert response.json() == {
        "scored_pairs": len(unordered),
        "built_in_pairs": len(every - unordered),
        "unmatched_rows": 1,
    }
    for pair in SampledPair.objects.filter(experiment=judged).exclude(pair_class="self"):
        inside = frozenset((pair.vantage_id, pair.partner_id)) in unordered
        assert pair.score_source == ("uploaded" if inside else "built_in")
    estimates_refresh(experiment_id=judged.pk)
    panel = experiment_dashboard_get(experiment=judged)["model_assisted"]
    assert panel["state"] == "on" and panel["source"].startswith("your uploaded scores, and the built-in")


def test_a_bad_scores_file_is_refused_whole_naming_its_line(client_of, judged):
    before = list(SampledPair.objects.filter(experiment=judged).order_by("pk").values_list("score", "score_source"))
    pair = (
        SampledPair.objects.filter(experiment=judged).exclude(pair_class="self").select_related("vantage", "partner")[0]
    )
    text = f"i,j,score\n{pair.vantage.item_id},{pair.partner.item_id},0.9\n{pair.partner.item_id},item-001,high\n"
    response = _upload(client_of("owner"), judged, text, name="model_scores.csv")
    assert response.status_code == 400
    message = json.dumps(response.json())
    assert "model_scores.csv" in message and "line 3" in message, message
    assert (
        list(SampledPair.objects.filter(experiment=judged).order_by("pk").values_list("score", "score_source"))
        == before
    )


def test_a_rater_is_never_shown_a_score(client_of, judged):
    """The score would bias the verdict (abcde-spec §15): neither the pair a rater gets nor its cards carry it."""
    judged.open_to_all_raters = True
    judged.save(update_fields=["open_to_all_raters"])
    response = client_of("rater").post(f"/api/experiments/{judged.pk}/next-pair/", {}, format="json")
    assert response.status_code == 200, response.content
    text = response.content.decode()
    assert "score" not in text.lower()
    scores = {str(round(s, 6)) for s in SampledPair.objects.filter(experiment=judged).values_list("score", flat=True)}
    assert not any(value in text for value in scores if len(value) > 4)


def test_the_estimates_export_holds_the_model_assisted_estimates_beside_the_human_only_ones(client_of, judged, settings):
    """The JSON is the command line's output: ΔRecall and IQ join both ``estimates`` and
    ``model_assisted.estimates`` (the latter were missing); the CSV has a row per metric and
    estimator, each saying which it is, so the headline's numbers are in the file too."""
    from raterapp.services.refresh.derived import derived_refresh

    settings.DERIVED_BOOTSTRAP_REPLICATES = 200
    derived = derived_refresh(experiment_id=judged.pk).payload
    client = client_of("owner")
    body = export(client, judged, "estimates", "json").json()
    snapshot = client.get(f"/api/experiments/{judged.pk}/estimates/").json()
    for name in ("DeltaRecall", "IQ"):
        assert body["estimates"][name]["value"] == derived["estimates"][name]["value"]
        assert body["model_assisted"]["estimates"][name]["value"] == derived["model_assisted"]["estimates"][name]["value"]
        assert body["model_assisted"]["estimates"][name]["assumption"] == body["estimates"][name]["assumption"]
    assert body["model_assisted"]["estimates"]["DeltaRecall"]["value"] != body["estimates"]["DeltaRecall"]["value"]
    assert "DeltaRecall" not in snapshot["model_assisted"]["estimates"]  # the export's copy, not the snapshot

    rows = csv_rows(export(client, judged, "estimates", "csv"))
    by = {(row["estimator"], row["metric"]): row for row in rows}
    assert len(by) == len(rows) == len(body["estimates"]) + len(body["model_assisted"]["estimates"])
    assert [row["estimator"] for row in rows] == sorted(row["estimator"] for row in rows)  # human-only first
    for estimator, part in (("human_only", body), ("model_assisted", body["model_assisted"])):
        for name, estimate in part["estimates"].items():
            row = by[(estimator, name)]
            assert float(row["value"]) == pytest.approx(estimate["value"], rel=1e-12, abs=1e-15), (estimator, name)
            expected_saved = estimate.get("verdicts_saved")
            assert (row["verdicts_saved"] == "") == (expected_saved is None), (estimator, name)
    merge = by[("model_assisted", "GoodMergeDistance")]
    assert float(merge["lambda"]) == body["model_assisted"]["estimates"]["GoodMergeDistance"]["lambda"]
    assert by[("human_only", "GoodMergeDistance")]["lambda"] == ""
