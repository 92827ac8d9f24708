"""Draw order on the command line (abcde-spec §14; metrics-cli.md "Draw order", "Labelled prefix").

``sample`` writes ``batch`` and ``positions`` and sorts rows by first position; ``estimate``
reads them, estimates from each batch's labelled prefix and reports it; with every pair judged
the result is the one of the same file without them.
"""

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from tests.metrics_core.cli_run import run, run_json

BASE = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4]
EXP = [0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 4, 5]
WEIGHTS = np.round(np.exp(np.random.default_rng(5).normal(0.0, 1.0, len(BASE))), 3)
IDS = [f"x{k}" for k in range(len(BASE))]
NUMBERS = ("value", "stderr", "ci_low", "ci_high", "cs_low", "cs_high", "unsure_low", "unsure_high")


@pytest.fixture
def items(tmp_path):
    path = tmp_path / "items.csv"
    pd.DataFrame({"item_id": IDS, "base_cluster": BASE, "exp_cluster": EXP, "weight": WEIGHTS}).to_csv(
        path, index=False
    )
    return path


def sample(items, out, *, seed=3, batch=0, draws=300, scheme="jaccard"):
    args = ("sample", items, "--pairs", draws, "--seed", seed, "--batch", batch, "--scheme", scheme, "--out", out)
    done = run(*args)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    return pd.read_csv(out, dtype={"positions": str})


def truth(i, j):
    return "equivalent" if BASE[IDS.index(i)] == BASE[IDS.index(j)] else "not_equivalent"


def judgements_of(table, path, *, skip=()):
    """A verdict from the truth on every non-self pair of ``table`` (once per unordered pair), but ``skip``."""
    seen, rows = set(), []
    for i, j in zip(table["i"], table["j"], strict=True):
        key = frozenset((i, j))
        if i != j and key not in seen and key not in skip:
            seen.add(key)
            rows.append((i, j, truth(i, j)))
    pd.DataFrame(rows, columns=["i", "j", "verdict"]).to_csv(path, index=False)
    return rows


def positions_of(table):
    return [np.array(text.split(), dtype=np.int64) for text in table["positions"]]


def test_sample_writes_batch_and_positions_sorted_by_first_position(items, tmp_path):
    table = sample(items, tmp_path / "pairs.csv", batch=2)
    assert list(table.columns) == ["i", "j", "pair_class", "stratum", "draws", "scheme", "batch", "positions"]
    assert set(table["batch"]) == {2}
    positions = positions_of(table)
    assert [len(p) for p in positions] == table["draws"].tolist()
    assert all((np.diff(p) > 0).all() for p in positions)
    assert np.array_equal(np.sort(np.concatenate(positions)), np.arange(300))
    firsts = [p[0] for p in positions]
    assert firsts == sorted(firsts)
    # the positions are the library's: the batch's order stream over the sample's rows
    pop = mc.population_from_labels(BASE, EXP, WEIGHTS)
    drawn = mc.sample_pairs(pop, n_draws=300, rng=mc.batch_rng(seed=3, batch=2))
    expected = mc.draw_positions(drawn, rng=mc.batch_order_rng(seed=3, batch=2))
    offsets = np.concatenate(([0], np.cumsum(drawn.draws)))
    by_pair = {
        (IDS[a], IDS[b]): expected[offsets[r] : offsets[r + 1]].tolist()
        for r, (a, b) in enumerate(zip(drawn.i, drawn.j))
    }
    assert {(i, j): p.tolist() for i, j, p in zip(table["i"], table["j"], positions)} == by_pair


def estimates_equal(with_positions, without, tolerance=1e-12):
    assert with_positions.keys() == without.keys()
    for name, estimate in without.items():
        for key in NUMBERS + ("judged_draws", "drawn_draws"):
            got, want = with_positions[name][key], estimate[key]
            assert (got is None and want is None) or abs(got - want) <= tolerance, (name, key, got, want)


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
def test_with_every_pair_judged_positions_change_nothing(items, tmp_path, scheme):
    """Two batches concatenated (a pair may repeat), every pair judged: the estimates equal those of
    the same file without ``batch`` and ``positions``, to 1e-12, and every draw is labelled."""
    tables = [sample(items, tmp_path / f"b{b}.csv", batch=b, scheme=scheme) for b in (0, 1)]
    both = pd.concat(tables, ignore_index=True)
    both.to_csv(tmp_path / "pairs.csv", index=False)
    both.drop(columns=["batch", "positions"]).to_csv(tmp_path / "plain.csv", index=False)
    judgements_of(both, tmp_path / "judgements.csv")
    common = (tmp_path / "judgements.csv", "--n-boot", 50)
    ordered = run_json("estimate", items, tmp_path / "pairs.csv", *common)
    plain = run_json("estimate", items, tmp_path / "plain.csv", *common)
    assert list(plain) == ["scheme", "confidence", "exact", "estimates", "derived"]
    estimates_equal(ordered["estimates"], plain["estimates"])
    assert ordered["labelled"] == {
        "draws": 600,
        "waiting_verdicts": 0,
        "by_batch": [{"batch": 0, "prefix": 300, "draws": 300}, {"batch": 1, "prefix": 300, "draws": 300}],
    }
    for estimate in ordered["estimates"].values():
        assert estimate["labelled_draws"] == estimate["drawn_draws"]


def test_with_a_pair_unjudged_the_prefix_stops_at_its_first_draw(items, tmp_path):
    table = sample(items, tmp_path / "pairs.csv", seed=4)
    non_self = table[table["i"] != table["j"]]
    gap = frozenset((non_self["i"].iloc[3], non_self["j"].iloc[3]))  # the 4th pair in task order
    # a pair with only unsure verdicts is resolved: it does not stop the prefix
    unsure = frozenset((non_self["i"].iloc[1], non_self["j"].iloc[1]))
    rows = judgements_of(table, tmp_path / "judgements.csv", skip={gap})
    rows = [(i, j, "unsure" if frozenset((i, j)) == unsure else v) for i, j, v in rows]
    pd.DataFrame(rows, columns=["i", "j", "verdict"]).to_csv(tmp_path / "judgements.csv", index=False)
    result = run_json("estimate", items, tmp_path / "pairs.csv", tmp_path / "judgements.csv", "--n-boot", 20)

    positions = positions_of(table)
    gap_rows = [r for r, (i, j) in enumerate(zip(table["i"], table["j"])) if frozenset((i, j)) == gap]
    prefix = min(positions[r][0] for r in gap_rows)
    counts = np.array([int((p < prefix).sum()) for p in positions])
    labelled_pairs = {frozenset((i, j)) for i, j, c in zip(table["i"], table["j"], counts) if c > 0}
    waiting = sum(1 for i, j, _ in rows if frozenset((i, j)) not in labelled_pairs)
    assert waiting > 0
    assert result["labelled"] == {
        "draws": int(prefix),
        "waiting_verdicts": waiting,
        "by_batch": [{"batch": 0, "prefix": int(prefix), "draws": 300}],
    }
    # the estimates are the library's on the labelled prefix
    pop = mc.population_from_labels(BASE, EXP, WEIGHTS)
    at = {name: k for k, name in enumerate(IDS)}
    drawn = mc.PairSample.from_columns(
        pop, scheme="jaccard", i=[at[x] for x in table["i"]], j=[at[x] for x in table["j"]], draws=table["draws"]
    )
    verdicts = mc.verdicts_from_judgements([at[r[0]] for r in rows], [at[r[1]] for r in rows], [r[2] for r in rows])
    want = mc.estimate_quality(pop, drawn, verdicts, labelled_draws=counts).as_dict()["estimates"]
    for name, estimate in want.items():
        for key in ("value", "ci_low", "ci_high", "judged_draws", "drawn_draws"):
            got = result["estimates"][name][key]
            assert (got is None and estimate[key] is None) or got == pytest.approx(estimate[key], abs=1e-12), (
                name,
                key,
            )
    split = counts[(table["pair_class"] == "split").to_numpy()].sum()
    assert result["estimates"]["GoodSplitRate"]["labelled_draws"] == split


def test_a_file_without_positions_keeps_todays_output(items, tmp_path):
    table = sample(items, tmp_path / "pairs.csv")
    table.drop(columns=["positions"]).to_csv(tmp_path / "no_positions.csv", index=False)
    judgements_of(table, tmp_path / "judgements.csv", skip={frozenset((table["i"].iloc[-1], table["j"].iloc[-1]))})
    result = run_json("estimate", items, tmp_path / "no_positions.csv", tmp_path / "judgements.csv", "--n-boot", 20)
    assert "labelled" not in result
    assert all("labelled_draws" not in e for e in result["estimates"].values())


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda t: t.assign(positions=t["positions"].where(t.index != 2, t["positions"][2] + " 299")),
            "line 4: positions has",
        ),
        (
            lambda t: t.assign(positions=t["positions"].where(t.index != 0, "5 1")).assign(
                draws=t["draws"].where(t.index != 0, 2)
            ),
            "line 2: positions are not strictly ascending",
        ),
        (
            # row 1's first position replaced by row 0's (0): still ascending, in range, a duplicate
            lambda t: t.assign(
                positions=t["positions"].where(t.index != 1, " ".join(["0", *t["positions"][1].split()[1:]]))
            ),
            "line 3: position 0 of batch 0 is also on line 2",
        ),
        (
            lambda t: t.assign(positions=t["positions"].where(t.index != 1, "1000000")).assign(
                draws=t["draws"].where(t.index != 1, 1)
            ),
            "line 3: position 1000000 is outside 0..",
        ),
        (
            lambda t: t.assign(positions=t["positions"].where(t.index != 1, "x")).assign(
                draws=t["draws"].where(t.index != 1, 1)
            ),
            "line 3: positions 'x' are not space-separated integers",
        ),
        (lambda t: t.assign(batch=t["batch"].where(t.index != 3, -1)), "line 5: batch -1 must be at least 0"),
    ],
)
def test_bad_positions_are_refused_naming_file_and_row(items, tmp_path, change, problem):
    table = change(sample(items, tmp_path / "pairs.csv"))
    table.to_csv(tmp_path / "bad.csv", index=False)
    judgements_of(table, tmp_path / "judgements.csv")
    done = run("estimate", items, tmp_path / "bad.csv", tmp_path / "judgements.csv", "--n-boot", 20)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"metrics_core: error: {tmp_path / 'bad.csv'}: {problem}")
    assert len(done.stderr.splitlines()) == 1
