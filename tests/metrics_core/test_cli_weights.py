"""Weights of extreme magnitude on the command line (issue 32, item 5; metrics_core._validation).

Weights whose magnitude alone would underflow or overflow a pair weight w_i·w_j / (W·weight(U))
are rescaled exactly by a power of two: every command gives the numbers of the same ratios at
ordinary magnitude. Weights spanning more than 2**200 cannot be rescaled: exit 2, naming the line.
"""

import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metrics_core import external_measures, impact_metrics, population_from_labels
from tests.metrics_core.cli_run import approx, assert_refused, read_table, run, run_json, write
from tests.metrics_core.helpers import TINY_JUDGEMENTS

# The tiny example of test_cli.py with two more items, so that every class has several pairs.
LABELS = [("a", "B1", "E1"), ("b", "B1", "E1"), ("c", "B1", "E2"), ("d", "B2", "E2"), ("e", "B2", "E3"), ("f", "B3", "E3")]
RATIOS = [1, 2, 3, 1, 5, 1]


def items_csv(path, weights=None):
    if weights is None:
        return write(path, "item_id,base_cluster,exp_cluster\n" + "".join(f"{i},{b},{e}\n" for i, b, e in LABELS))
    rows = "".join(f"{i},{b},{e},{w}\n" for (i, b, e), w in zip(LABELS, weights))
    return write(path, "item_id,base_cluster,exp_cluster,weight\n" + rows)


def same_numbers(got, expected):
    """The same JSON structure, numbers equal to 1e-12 (nulls where nulls)."""
    if isinstance(expected, dict):
        assert list(got) == list(expected)
        for key in expected:
            same_numbers(got[key], expected[key])
    elif isinstance(expected, float):
        assert got == approx(expected)
    else:
        assert got == expected


@pytest.mark.parametrize("weight", ["1e-320", "5e-324", "1e-200", "1e300", "1.5e307"])
def test_equal_weights_of_any_magnitude_give_the_equal_weight_numbers(tmp_path, weight):
    extreme = run_json("impact", items_csv(tmp_path / "w.csv", [weight] * 6))
    equal = run_json("impact", items_csv(tmp_path / "eq.csv"))
    same_numbers(extreme["metrics"], equal["metrics"])
    assert extreme["total_weight"] == approx(6 * float(weight))  # in the file's units
    assert (extreme["items"], extreme["affected_items"]) == (6, equal["affected_items"])


@pytest.mark.parametrize("scale", ["e-320", "e-250", "e250", "e305"])
def test_weights_rescaled_keep_their_ratios(tmp_path, scale):
    scaled = run_json("impact", items_csv(tmp_path / "w.csv", [f"{r}{scale}" for r in RATIOS]))
    plain = run_json("impact", items_csv(tmp_path / "p.csv", RATIOS))
    same_numbers(scaled["metrics"], plain["metrics"])
    assert scaled["metrics"]["WeightFractionOfBaseCluster"] == approx(plain["metrics"]["WeightFractionOfBaseCluster"])
    assert scaled["total_weight"] == approx(sum(RATIOS) * float("1" + scale))


def test_per_cluster_weights_are_in_the_files_units(tmp_path):
    out = tmp_path / "clusters.csv"
    assert run("impact", items_csv(tmp_path / "w.csv", ["1e300"] * 6), "--per-cluster", out).returncode == 0
    table = read_table(out)
    assert [w / 1e300 for w in table["weight"]] == approx([3.0, 2.0, 1.0, 2.0, 2.0, 2.0])


def test_weights_within_the_band_are_used_as_given(tmp_path):
    weights = ["1e-30", "3e9", "7", "1e-30", "2e25", "0.25"]  # a span of 2e55
    result = run_json("impact", items_csv(tmp_path / "w.csv", weights))
    assert result["total_weight"] == approx(sum(map(float, weights)))
    pop = population_from_labels([b for _, b, _ in LABELS], [e for _, _, e in LABELS], np.array(weights, dtype=float))
    assert pop.weight_exponent == 0 and pop.weight.tolist() == list(map(float, weights))


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
def test_sample_and_estimate_with_tiny_weights_equal_those_of_equal_weights(tmp_path, scheme):
    judgements = write(tmp_path / "j.csv", TINY_JUDGEMENTS + "e,d,not_equivalent\nf,e,equivalent\nd,e,unsure\n")
    results = []
    for name, weights in (("tiny", ["1e-320"] * 6), ("equal", None)):
        items, pairs = items_csv(tmp_path / f"{name}.csv", weights), tmp_path / f"{name}.pairs.csv"
        assert run("sample", items, "--pairs", 300, "--seed", 4, "--scheme", scheme, "--out", pairs).returncode == 0
        results.append((pairs.read_bytes(), run_json("estimate", items, pairs, judgements)))
    (tiny_pairs, tiny), (equal_pairs, equal) = results
    assert tiny_pairs == equal_pairs  # the same draws
    assert tiny["exact"] == equal["exact"]
    same_numbers(tiny["estimates"], equal["estimates"])
    assert tiny["estimates"]["DeltaPrecision"]["judged_draws"] > 0


def test_estimate_with_weights_1e300_keeps_their_ratios(tmp_path):
    judgements = write(tmp_path / "j.csv", TINY_JUDGEMENTS + "e,d,not_equivalent\nf,e,equivalent\n")
    results = []
    for name, weights in (("huge", [f"{r}e300" for r in RATIOS]), ("plain", RATIOS)):
        items, pairs = items_csv(tmp_path / f"{name}.csv", weights), tmp_path / f"{name}.pairs.csv"
        assert run("sample", items, "--pairs", 300, "--seed", 8, "--out", pairs).returncode == 0
        results.append((read_table(pairs), run_json("estimate", items, pairs, judgements)))
    (huge_pairs, huge), (plain_pairs, plain) = results
    assert huge_pairs == plain_pairs
    same_numbers(huge["estimates"], plain["estimates"])
    assert all(math.isfinite(e["value"]) for e in huge["estimates"].values() if e["value"] is not None)


def test_compare_with_weights_1e300_keeps_their_ratios(tmp_path):
    def files(name, weights):
        truth = write(tmp_path / f"{name}.truth.csv", "item_id,cluster_id,weight\n" + "".join(
            f"{i},{b},{w}\n" for (i, b, _), w in zip(LABELS, weights)))
        pred = write(tmp_path / f"{name}.pred.csv", "item_id,cluster_id\n" + "".join(f"{i},{e}\n" for i, _, e in LABELS))
        return run_json("compare", truth, pred)

    huge, plain = files("huge", [f"{r}e300" for r in RATIOS]), files("plain", RATIOS)
    same_numbers(huge["metrics"], plain["metrics"])
    assert huge["metrics"]["PairwisePrecision"] is not None


SPAN = "2**200 (about 1.6e60)"
WHY = "the pair weights would underflow float64 at any scale"


@pytest.mark.parametrize(
    "weights, message",
    [
        (["1", "1", "1e308", "1", "1", "1"], f"line 4: weight '1e308' is more than {SPAN} times the weight '1' on line 2"),
        (["1", "1", "1", "1", "1e-320", "1"], f"line 6: weight '1e-320' is less than the weight '1' on line 2 divided by {SPAN}"),
        (["1e-300", "1e300", "1e-300", "1e300", "1e-300", "1e300"],
         f"line 2: weight '1e-300' is less than the weight '1e300' on line 3 divided by {SPAN}"),
    ],
)
def test_weights_spanning_too_wide_a_range_are_refused_naming_the_line(tmp_path, weights, message):
    items = items_csv(tmp_path / "items.csv", weights)
    pairs, out = tmp_path / "pairs.csv", tmp_path / "out.csv"
    assert_refused(run("impact", items, "--per-item", out), f"{items}: {message}: {WHY}", out)
    assert_refused(run("sample", items, "--pairs", 10, "--seed", 1, "--out", pairs), f"{items}: {message}: {WHY}", pairs)
    good = items_csv(tmp_path / "good.csv")
    assert run("sample", good, "--pairs", 10, "--seed", 1, "--out", pairs).returncode == 0
    judgements = write(tmp_path / "j.csv", TINY_JUDGEMENTS)
    assert_refused(run("estimate", items, pairs, judgements), f"{items}: {message}: {WHY}")


def test_compare_refuses_weights_spanning_too_wide_a_range(tmp_path):
    truth = tmp_path / "truth.parquet"
    pq.write_table(pa.table({"item_id": ["a", "b", "c"], "cluster_id": [1, 1, 2], "weight": [1.0, 2.0, 1e-310]}), truth)
    pred = write(tmp_path / "pred.csv", "item_id,cluster_id\na,1\nb,2\nc,2\n")
    message = f"{truth}: row 3: weight 1e-310 is less than the weight 2.0 on row 2 divided by {SPAN}: {WHY}"
    assert_refused(run("compare", truth, pred), message)


def test_the_api_rescales_exactly_and_refuses_the_same_spans():
    base, exp = [b for _, b, _ in LABELS], [e for _, _, e in LABELS]
    ratios = np.array(RATIOS, dtype=float)
    # Powers of two apart: the two populations hold the very same (rescaled) weights.
    low, high = population_from_labels(base, exp, np.ldexp(ratios, -1070)), population_from_labels(base, exp, ratios)
    assert low.weight_exponent != 0 and high.weight_exponent == 0
    assert np.array_equal(np.ldexp(low.weight, -low.weight_exponent), np.ldexp(ratios, -1070))
    assert impact_metrics(low).metrics == impact_metrics(high).metrics
    assert impact_metrics(low).total_weight == math.ldexp(13.0, -1070)
    assert external_measures(base, exp, weights=ratios * 1e300) == pytest.approx(external_measures(base, exp, weights=ratios))
    with pytest.raises(ValueError, match=rf"^weights\[2\] = 1e\+308 is more than 2\*\*200 .* weights\[0\] = 1.0: {WHY}$"):
        population_from_labels(base, exp, [1.0, 1.0, 1e308, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="weights add up to more than a float64 holds"):
        population_from_labels(base, exp, [1e308] * 6)
