"""``estimate --scores`` (metrics-cli.md, abcde-spec §15): the ``model_assisted`` block, the library's
numbers, ``--score-lambda 0`` as the human-only estimates, CSV and Parquet alike, and refusals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.estimation import estimate_quality_assisted
from tests.metrics_core.cli_run import assert_same_one_shot, run, run_json

N = 400
RNG = np.random.default_rng(8)
IDEAL = np.repeat(np.arange(80), 5)
BASE = np.where(RNG.uniform(size=N) < 0.15, IDEAL + 100, IDEAL)
EXP = np.where(RNG.uniform(size=N) < 0.15, IDEAL + 200, IDEAL // 2)
IDS = [f"it{k}" for k in range(N)]


def scored_files(tmp_path, unsure_every: int | None = None):
    """ITEMS, PAIRS (in draw order), the first 250 pairs judged from Ideal (with ``unsure_every``, every
    such pair *unsure*), and a good SCORES file of every pair."""
    items = tmp_path / "items.csv"
    pd.DataFrame({"item_id": IDS, "base_cluster": BASE, "exp_cluster": EXP}).to_csv(items, index=False)
    pairs = tmp_path / "pairs.csv"
    done = run("sample", items, "--pairs", 3000, "--seed", 4, "--out", pairs)
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(pairs, dtype={"positions": str})
    first = {}
    for i, j in zip(table["i"], table["j"]):
        if i != j:
            first.setdefault(frozenset((i, j)), (i, j))
    tasks = list(first.values())[:250]  # the first 250 pairs in draw order (the file is in that order)
    judged = [
        (i, j, "unsure" if unsure_every and k % unsure_every == unsure_every - 1 else _verdict(i, j))
        for k, (i, j) in enumerate(tasks)
    ]
    judgements = tmp_path / "judgements.csv"
    pd.DataFrame(judged, columns=["i", "j", "verdict"]).to_csv(judgements, index=False)
    noise = np.random.default_rng(3).normal(size=len(first))
    scores = tmp_path / "scores.csv"
    rows = [
        (j, i, 1 / (1 + math.exp(-(1.5 * (1 if _verdict(i, j) == "equivalent" else -1) + e))))
        for (i, j), e in zip(first.values(), noise)
    ]  # written j, i: a pair matches in either order
    pd.DataFrame(rows, columns=["i", "j", "score"]).to_csv(scores, index=False)
    return items, pairs, judgements, scores


def _verdict(i: str, j: str) -> str:
    return "equivalent" if IDEAL[IDS.index(i)] == IDEAL[IDS.index(j)] else "not_equivalent"


@pytest.fixture
def files(tmp_path):
    return scored_files(tmp_path)


@pytest.fixture
def files_with_unsure(tmp_path):
    return scored_files(tmp_path, unsure_every=10)


def library_estimates(items, pairs, judgements, scores, **kw):
    """What the library gives for the same files: the command line's arithmetic is the library's."""
    table = pd.read_csv(pairs, dtype={"positions": str})
    position = {item: k for k, item in enumerate(IDS)}
    pop = mc.population_from_labels(BASE, EXP)
    sample = mc.PairSample.from_columns(
        pop,
        scheme="jaccard",
        i=[position[x] for x in table["i"]],
        j=[position[x] for x in table["j"]],
        draws=table["draws"],
    )
    verdicts_table = pd.read_csv(judgements)
    verdicts = mc.verdicts_from_judgements(
        [position[x] for x in verdicts_table["i"]],
        [position[x] for x in verdicts_table["j"]],
        verdicts_table["verdict"],
    )
    score_table = pd.read_csv(scores)
    by_pair = {frozenset((a, b)): s for a, b, s in zip(score_table["i"], score_table["j"], score_table["score"])}
    row_scores = np.array([by_pair.get(frozenset((a, b)), 0.0) for a, b in zip(table["i"], table["j"])])
    positions = [np.array(text.split(), dtype=np.int64) for text in table["positions"]]
    resolved = np.array(
        [
            a == b or frozenset((a, b)) in {frozenset(p) for p in zip(verdicts_table["i"], verdicts_table["j"])}
            for a, b in zip(table["i"], table["j"])
        ]
    )
    flat = np.empty(int(table["draws"].sum()), dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(table["draws"])))
    for r, p in enumerate(positions):
        flat[offsets[r] : offsets[r + 1]] = p
    counts, _ = mc.labelled_prefix(sample, flat, resolved)
    return estimate_quality_assisted(pop, sample, verdicts, row_scores, labelled_draws=counts, **kw)


def test_estimate_with_scores_adds_the_model_assisted_block_the_library_computes(files):
    items, pairs, judgements, scores = files
    out = run_json("estimate", items, pairs, judgements, "--scores", scores)
    plain = run_json("estimate", items, pairs, judgements)
    assert out["estimates"] == plain["estimates"]  # "estimates" stays the human-only result
    block = out["model_assisted"]
    assert set(block) == {"estimates", "classes"}
    library = library_estimates(items, pairs, judgements, scores)
    assert {"DeltaRecall", "IQ"} <= set(block["estimates"])  # from the model-assisted inputs: test_derived_assisted.py
    for name, e in block["estimates"].items():
        if name in mc.DERIVED_METRICS:
            continue
        assert e["value"] == pytest.approx(library[name].value, abs=1e-12), name
        assert e["stderr"] == pytest.approx(library[name].stderr, abs=1e-12), name
        assert {"lambda", "verdicts_saved", "labelled_draws", "cs_low", "unsure_low"} <= set(e)
    merge = next(c for c in block["classes"] if c["pair_class"] == "merge")
    assert merge["rule"] in ("raw", "calibrated") and merge["lambda"] > 0 and merge["verdicts_saved"] > 1
    assert set(merge) == {
        "stratum",
        "pair_class",
        "judged_pairs",
        "rule",
        "lambda",
        "verdicts_saved",
        "unsure_share",
        "unsure_warning",
    }


def test_score_lambda_zero_gives_the_human_only_estimates(files):
    items, pairs, judgements, scores = files
    out = run_json("estimate", items, pairs, judgements, "--scores", scores, "--score-lambda", "0")
    for name, e in out["model_assisted"]["estimates"].items():
        human = out["estimates"][name]
        for key in ("value", "stderr", "ci_low", "ci_high", "cs_low", "cs_high", "unsure_low", "unsure_high"):
            assert e[key] == pytest.approx(human[key], abs=1e-12), (name, key)


def test_parquet_scores_give_the_same_result(files, tmp_path):
    items, pairs, judgements, scores = files
    parquet = tmp_path / "scores.parquet"
    pd.read_csv(scores).to_parquet(parquet, index=False)
    assert run_json("estimate", items, pairs, judgements, "--scores", parquet) == run_json(
        "estimate", items, pairs, judgements, "--scores", scores
    )


def test_a_pair_without_a_score_and_a_lambda_without_scores_are_refused(files, tmp_path):
    items, pairs, judgements, scores = files
    short = tmp_path / "short.csv"
    pd.read_csv(scores).iloc[1:].to_csv(short, index=False)
    done = run("estimate", items, pairs, judgements, "--scores", short)
    assert (done.returncode, done.stdout) == (2, "")
    assert "no score for pair" in done.stderr and str(short) in done.stderr and done.stderr.count("\n") == 1
    table = pd.read_csv(pairs)
    missing = pd.read_csv(scores).iloc[0]
    line = next(
        k + 2 for k, (i, j) in enumerate(zip(table["i"], table["j"])) if {i, j} == {missing["i"], missing["j"]}
    )  # the pair's first row of PAIRS (line 1 is the header)
    assert f"line {line} of {pairs}" in done.stderr, done.stderr
    done = run("estimate", items, pairs, judgements, "--score-lambda", "0")
    assert done.returncode == 2 and "--score-lambda is only meaningful with --scores" in done.stderr
    done = run("estimate", items, pairs, judgements, "--scores", scores, "--score-lambda", "1.5")
    assert done.returncode == 2 and "must be in [0, 1]" in done.stderr


def test_concatenated_batches_take_one_score_per_pair(files, tmp_path):
    """Two batches in one PAIRS file repeat pairs: each gets its one score (λ = 0 is still human-only)."""
    items, pairs, judgements, scores = files
    second = tmp_path / "batch1.csv"
    assert run("sample", items, "--pairs", 3000, "--seed", 4, "--batch", 1, "--out", second).returncode == 0
    both = tmp_path / "both.csv"
    table = pd.concat([pd.read_csv(pairs, dtype={"positions": str}), pd.read_csv(second, dtype={"positions": str})])
    table.to_csv(both, index=False)
    known = {frozenset(p) for p in zip(pd.read_csv(scores)["i"], pd.read_csv(scores)["j"])}
    extra = {frozenset((i, j)) for i, j in zip(table["i"], table["j"]) if i != j} - known
    more = pd.DataFrame([sorted(p) + [0.5] for p in extra], columns=["i", "j", "score"])
    all_scores = tmp_path / "all_scores.csv"
    pd.concat([pd.read_csv(scores), more]).to_csv(all_scores, index=False)
    assert len(table) > len({(i, j) for i, j in zip(table["i"], table["j"])})  # pairs repeat across batches
    out = run_json("estimate", items, both, judgements, "--scores", all_scores, "--score-lambda", "0")
    for name, e in out["model_assisted"]["estimates"].items():
        assert e["value"] == pytest.approx(out["estimates"][name]["value"], abs=1e-12), name
    tuned = run_json("estimate", items, both, judgements, "--scores", all_scores)
    assert any(c["lambda"] for c in tuned["model_assisted"]["classes"])


# ΔRecall and IQ of the model-assisted inputs (metrics_core/derived/assisted.py; test_derived_assisted.py)
def test_cli_model_assisted_block_has_delta_recall_and_iq_from_its_own_inputs(files_with_unsure):
    items, pairs, judgements, scores = files_with_unsure
    out = run_json("estimate", items, pairs, judgements, "--scores", scores, "--seed", 5)
    assert out == run_json("estimate", items, pairs, judgements, "--scores", scores, "--seed", 5)  # seeded
    block = out["model_assisted"]["estimates"]
    for name in mc.DERIVED_METRICS:
        human, assisted = out["estimates"][name], block[name]
        assert set(assisted) == set(human) | {"lambda", "verdicts_saved"}
        assert assisted["lambda"] is None
        assert assisted["verdicts_saved"] > 1.2, name  # a good score: the bootstrap's SE₀²/SE²
        assert (assisted["recall_base_low"], assisted["recall_base_high"]) == (0.4, 0.8)
        assert (
            assisted["cs_low"] <= assisted["ci_low"] <= assisted["value"] <= assisted["ci_high"] <= assisted["cs_high"]
        )
        assert assisted["unsure_low"] <= assisted["value"] <= assisted["unsure_high"]
        assert assisted["unsure_low"] < assisted["unsure_high"]  # unsure verdicts: a range
        assert assisted["labelled_draws"] == human["labelled_draws"]
        assert assisted["ci_high"] - assisted["ci_low"] < human["ci_high"] - human["ci_low"], name
    # At a given Recall_Base the value is the diagram of the model-assisted inputs.
    fixed = run_json("estimate", items, pairs, judgements, "--scores", scores, "--recall-base", 0.6)
    inputs = fixed["model_assisted"]["estimates"]
    exact = fixed["exact"]
    diagram = mc.affected_item_diagram(
        affected_weight_fraction=exact["AffectedWeightFraction"],
        good_split_rate=inputs["GoodSplitRate"]["value"],
        bad_split_rate=inputs["BadSplitRate"]["value"],
        good_merge_rate=inputs["GoodMergeRate"]["value"],
        bad_merge_rate=inputs["BadMergeRate"]["value"],
        delta_precision=inputs["DeltaPrecision"]["value"],
        weight_fraction_of_base_cluster=exact["WeightFractionOfBaseCluster"],
        jaccard_distance=exact["JaccardDistance"],
        recall_base=0.6,
    )
    assert inputs["DeltaRecall"]["value"] == pytest.approx(diagram.delta_recall, abs=1e-12)
    assert inputs["IQ"]["value"] == pytest.approx(diagram.iq, abs=1e-12)
    assert inputs["DeltaRecall"]["value"] != fixed["estimates"]["DeltaRecall"]["value"]


def test_cli_score_lambda_zero_gives_the_human_only_delta_recall_and_iq(files_with_unsure):
    items, pairs, judgements, scores = files_with_unsure
    out = run_json("estimate", items, pairs, judgements, "--scores", scores, "--score-lambda", 0, "--seed", 9)
    for name in mc.DERIVED_METRICS:
        human, assisted = out["estimates"][name], out["model_assisted"]["estimates"][name]
        for key, value in human.items():
            assert assisted[key] == pytest.approx(value, abs=1e-12), (name, key)
        assert assisted["verdicts_saved"] == 1.0 and assisted["lambda"] is None


def test_a_one_shot_process_gives_the_same_model_assisted_estimates_without_pandas(files):
    items, pairs, judgements, scores = files
    assert_same_one_shot("estimate", items, pairs, judgements, "--scores", scores, "--n-boot", 50)
