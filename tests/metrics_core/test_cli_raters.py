"""``estimate --raters dawid-skene [--gold GOLD]`` and the optional ``rater`` column of JUDGEMENTS."""

import csv

import numpy as np
import pytest

import metrics_core as mc
from metrics_core.rater_aware import estimate_quality_rater_aware
from tests.metrics_core.cli_run import REPO, approx, assert_same_one_shot, run, run_json, write_csv
from tests.metrics_core.helpers import simulation_population

from .rater_simulation import judged_experiment

SEED = 7
N_BOOT = 60


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Items, a sample, verdicts of five raters (gold pairs' among them) and the gold file."""
    folder = tmp_path_factory.mktemp("raters")
    pop, ideal = simulation_population()
    ids = [f"it{k}" for k in range(pop.n_items)]
    items = write_csv(
        folder / "items.csv",
        ("item_id", "base_cluster", "exp_cluster", "weight"),
        [(ids[k], int(pop.base[k]), int(pop.exp[k]), repr(float(pop.weight[k]))) for k in range(pop.n_items)],
    )
    rng = np.random.default_rng(3)
    sample, (i, j, verdict, rater), (ga, gb, answer), _ = judged_experiment(
        rng, pop, ideal, draws=300, scheme="jaccard"
    )
    verdict = verdict.copy()
    verdict[::17] = "unsure"
    pairs = write_csv(
        folder / "pairs.csv",
        ("i", "j", "pair_class", "stratum", "draws", "scheme"),
        [
            (ids[a], ids[b], mc.PAIR_CLASSES[c], mc.STRATA[s], int(d), "jaccard")
            for a, b, c, s, d in zip(sample.i, sample.j, sample.pair_class, sample.stratum, sample.draws)
        ],
    )
    names = np.array(["ann", "bob", "=cy", "dee", "eve"])  # "=cy": a spreadsheet-safe export writes "'=cy"
    exported = ["'=cy" if n == "=cy" else n for n in names[rater]]
    with_rater = write_csv(
        folder / "judgements.csv",
        ("i", "j", "verdict", "rater"),
        [(ids[a], ids[b], v, r) for a, b, v, r in zip(i, j, verdict, exported)],
    )
    without_rater = write_csv(
        folder / "judgements_no_rater.csv",
        ("i", "j", "verdict"),
        [(ids[a], ids[b], v) for a, b, v in zip(i, j, verdict)],
    )
    gold = write_csv(
        folder / "gold.csv", ("i", "j", "answer"), [(ids[a], ids[b], v) for a, b, v in zip(ga, gb, answer)]
    )
    library = dict(pop=pop, sample=sample, i=i, j=j, verdict=verdict, rater=names[rater], gold=(ga, gb, answer))
    return {
        "items": items,
        "pairs": pairs,
        "with_rater": with_rater,
        "without_rater": without_rater,
        "gold": gold,
        "library": library,
        "folder": folder,
    }


def test_without_the_option_the_output_is_byte_identical(files):
    common = (files["items"], files["pairs"])
    tail = ("--seed", SEED, "--n-boot", N_BOOT)
    first = run("estimate", *common, files["with_rater"], *tail)
    second = run("estimate", *common, files["without_rater"], *tail)
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout == second.stdout
    assert "rater_aware" not in first.stdout


def test_raters_option_adds_the_rater_aware_estimates(files):
    out = run_json(
        "estimate",
        files["items"],
        files["pairs"],
        files["with_rater"],
        "--raters",
        "dawid-skene",
        "--gold",
        files["gold"],
        "--seed",
        SEED,
        "--n-boot",
        N_BOOT,
    )
    plain = run_json(
        "estimate", files["items"], files["pairs"], files["with_rater"], "--seed", SEED, "--n-boot", N_BOOT
    )
    # Everything else is as without the option, the derived metrics' bootstrap included.
    assert {k: v for k, v in out.items() if k != "rater_aware"} == plain
    aware = out["rater_aware"]
    assert aware["model"] == "dawid-skene" and aware["bootstrap_replicates"] == N_BOOT
    assert set(aware["estimates"]) == set(mc.metrics_for_scheme("jaccard"))
    lib = files["library"]
    want = estimate_quality_rater_aware(
        lib["pop"],
        lib["sample"],
        i=lib["i"],
        j=lib["j"],
        verdict=lib["verdict"],
        rater=lib["rater"],
        gold_i=lib["gold"][0],
        gold_j=lib["gold"][1],
        gold_answer=lib["gold"][2],
        rng=np.random.default_rng(np.random.SeedSequence(SEED).spawn(2)[1]),
        n_boot=N_BOOT,
    ).as_dict()
    assert [r["rater"] for r in aware["raters"]] == ["=cy", "ann", "bob", "dee", "eve"]
    for got, expected in zip(aware["raters"], want["raters"]):
        assert got["rater"] == expected["rater"]
        for key in ("sensitivity", "specificity"):
            assert got[key] == approx(expected[key])
        assert (got["verdicts"], got["unsure"]) == (expected["verdicts"], expected["unsure"])
    for name, estimate in aware["estimates"].items():
        for key, value in estimate.items():
            assert value == (None if want["estimates"][name][key] is None else approx(want["estimates"][name][key])), (
                name,
                key,
            )


def test_raters_option_needs_the_rater_column(files):
    done = run("estimate", files["items"], files["pairs"], files["without_rater"], "--raters", "dawid-skene")
    assert done.returncode == 2 and done.stdout == ""
    assert "judgements_no_rater.csv: missing column 'rater'" in done.stderr


def test_gold_needs_the_raters_option_and_known_items(files):
    done = run("estimate", files["items"], files["pairs"], files["with_rater"], "--gold", files["gold"])
    assert done.returncode == 2 and "--gold is only meaningful with --raters dawid-skene" in done.stderr
    bad = files["folder"] / "bad_gold.csv"
    write_csv(bad, ("i", "j", "answer"), [("it0", "nope", "equivalent")])
    done = run(
        "estimate", files["items"], files["pairs"], files["with_rater"], "--raters", "dawid-skene", "--gold", bad
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "bad_gold.csv: line 2: j 'nope' is not an item_id of" in done.stderr
    write_csv(bad, ("i", "j", "answer"), [("it0", "it1", "maybe")])
    done = run(
        "estimate", files["items"], files["pairs"], files["with_rater"], "--raters", "dawid-skene", "--gold", bad
    )
    assert done.returncode == 2 and "answer 'maybe' is not one of equivalent, not_equivalent" in done.stderr


def test_empty_rater_cells_are_refused_with_the_option(files):
    path = files["folder"] / "empty_rater.csv"
    write_csv(path, ("i", "j", "verdict", "rater"), [("it0", "it1", "equivalent", "")])
    done = run("estimate", files["items"], files["pairs"], path, "--raters", "dawid-skene")
    assert done.returncode == 2 and done.stdout == "" and "empty_rater.csv: line 2" in done.stderr


def test_an_unsure_row_without_a_rater_closes_its_pair_and_observes_no_rater(files):
    """The app's export closes a pair excluded without a verdict with an unsure row and no rater:
    read with the option, it changes no rater's counts and no rater-aware estimate."""
    with_closing = files["folder"] / "closing_row.csv"
    rows = list(csv.reader(open(files["with_rater"])))
    write_csv(with_closing, rows[0], rows[1:] + [[rows[1][0], rows[1][1], "unsure", ""]])
    common = ("--raters", "dawid-skene", "--seed", SEED, "--n-boot", N_BOOT)
    got = run_json("estimate", files["items"], files["pairs"], with_closing, *common)["rater_aware"]
    want = run_json("estimate", files["items"], files["pairs"], files["with_rater"], *common)["rater_aware"]
    assert got == want


def test_the_cli_reference_documents_the_option():
    text = (REPO / "docs" / "cli.md").read_text()
    for words in ("--raters dawid-skene", "--gold GOLD", '"rater_aware"', "optional\n`rater`", "`answer`"):
        assert words in text, words


def test_a_one_shot_process_gives_the_same_rater_aware_estimates_without_pandas(files):
    """Raters are Python strings, and a missing one is looked for without pandas; a refusal too."""
    tail = ("--raters", "dawid-skene", "--gold", files["gold"], "--seed", SEED, "--n-boot", N_BOOT)
    assert_same_one_shot("estimate", files["items"], files["pairs"], files["with_rater"], *tail)
    holes = files["folder"] / "one_shot_holes.csv"
    lines = files["with_rater"].read_text().splitlines()
    holes.write_text("\n".join([*lines[:5], lines[5].rsplit(",", 1)[0] + ",", *lines[6:]]) + "\n")
    assert_same_one_shot("estimate", files["items"], files["pairs"], holes, "--raters", "dawid-skene")
