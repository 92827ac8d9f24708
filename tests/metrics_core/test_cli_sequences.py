"""``estimate`` prints every estimate's confidence sequence and unsure range (metrics-cli.md):
the Python API's numbers, ``--horizon`` moves the sequences and nothing else."""

import pandas as pd

import metrics_core as mc
from tests.metrics_core.cli_run import run, run_json, write

ITEMS = "item_id,base_cluster,exp_cluster\na,B1,E1\nb,B1,E1\nc,B1,E2\nd,B2,E2\ne,B3,E3\nf,B3,E4\ng,B4,E4\n"
JUDGEMENTS = (
    "i,j,verdict\na,b,equivalent\nc,a,not_equivalent\nb,c,unsure\nd,c,equivalent\nd,c,unsure\n"
    "e,f,not_equivalent\nf,g,unsure\n"
)
NEW_KEYS = ("cs_low", "cs_high", "unsure_low", "unsure_high")


def api_estimates(tmp_path, pairs, horizon=None):
    pop = mc.population_from_labels(["B1", "B1", "B1", "B2", "B3", "B3", "B4"], ["E1", "E1", "E2", "E2", "E3", "E4", "E4"])
    position = {name: k for k, name in enumerate("abcdefg")}
    table = pd.read_csv(pairs)
    sample = mc.PairSample.from_columns(
        pop, scheme=table["scheme"][0], i=table["i"].map(position), j=table["j"].map(position), draws=table["draws"]
    )
    judged = pd.read_csv(tmp_path / "judgements.csv")
    verdicts = mc.verdicts_from_judgements(judged["i"].map(position), judged["j"].map(position), judged["verdict"])
    return mc.estimate_quality(pop, sample, verdicts, horizon=horizon).as_dict()["estimates"]


def unordered(pairs):
    """The PAIRS file without its draw order (``batch``, ``positions``): a sample judged in no
    particular order, estimated from every draw as the API's default (draw order: test_cli_draw_order)."""
    pd.read_csv(pairs).drop(columns=["batch", "positions"]).to_csv(pairs, index=False)


def test_estimate_prints_the_api_sequences_and_unsure_ranges(tmp_path):
    items = write(tmp_path / "items.csv", ITEMS)
    write(tmp_path / "judgements.csv", JUDGEMENTS)
    for scheme in mc.SCHEMES:
        pairs = tmp_path / f"{scheme}.csv"
        assert run("sample", items, "--pairs", 500, "--seed", 3, "--scheme", scheme, "--out", pairs).returncode == 0
        unordered(pairs)
        got = run_json("estimate", items, pairs, tmp_path / "judgements.csv", "--n-boot", 20)["estimates"]
        want = api_estimates(tmp_path, pairs)
        assert list(want) == list(mc.metrics_for_scheme(scheme))
        assert {name: got[name] for name in want} == want
        for name in want:
            e = got[name]
            assert all(e[k] is not None for k in NEW_KEYS), (scheme, name)
            assert e["cs_low"] <= e["ci_low"] <= e["ci_high"] <= e["cs_high"], (scheme, name)
        # Unsure verdicts on a merge pair ({c,d}) and the only verdict on {b,c} and {f,g}: ranges open up.
        dp = got["DeltaPrecision"]
        assert dp["unsure_low"] < dp["unsure_high"]


def test_horizon_moves_the_sequences_only(tmp_path):
    items = write(tmp_path / "items.csv", ITEMS)
    write(tmp_path / "judgements.csv", JUDGEMENTS)
    pairs = tmp_path / "pairs.csv"
    assert run("sample", items, "--pairs", 400, "--seed", 8, "--out", pairs).returncode == 0
    unordered(pairs)
    judgements = tmp_path / "judgements.csv"
    default = run_json("estimate", items, pairs, judgements, "--n-boot", 20)["estimates"]
    same = run_json("estimate", items, pairs, judgements, "--n-boot", 20, "--horizon", 400)["estimates"]
    later = run_json("estimate", items, pairs, judgements, "--n-boot", 20, "--horizon", 40000)["estimates"]
    assert same == default
    assert {k: v for k, v in later.items() if k in mc.ESTIMATED_METRICS} == api_estimates(tmp_path, pairs, horizon=40000)
    moved = 0
    for name, e in later.items():
        unchanged = ("value", "stderr", "ci_low", "ci_high", "judged_draws", "drawn_draws", "unsure_low", "unsure_high")
        assert {k: e[k] for k in unchanged} == {k: default[name][k] for k in unchanged}, name
        moved += (e["cs_low"], e["cs_high"]) != (default[name]["cs_low"], default[name]["cs_high"])
    assert moved >= 8
    done = run("estimate", items, pairs, judgements, "--horizon", "0")
    assert (done.returncode, done.stdout) == (2, "")
    assert "argument --horizon: must be a positive integer, got '0'" in done.stderr


def test_help_describes_batches_and_horizon():
    sample_help = run("sample", "--help").stdout
    estimate_help = run("estimate", "--help").stdout
    assert "--batch B" in sample_help and "independent" in sample_help
    assert "--horizon H" in estimate_help and "confidence sequences" in estimate_help
