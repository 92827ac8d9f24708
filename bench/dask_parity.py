"""Dask against the in-memory engine on one population (issue 37): a batch drawn and a coupled second
experiment, ``bench_dask.py --parity``.

On N generated items (``bench_dask.generate``: Base clusters of about 3 items, Exp moving 10% of them
and merging 2% of the clusters) and a second clustering of the same items moving another 5% (the
"new" experiment), seeded:

* **batch**: batches 0 and 1 of the earlier experiment drawn on Dask (``batch_rng(seed, b)``), batch 1
  drawn twice (the same draws), each batch's draw order (``batch_order_rng``); the estimates of their
  union from the Dask context (``dask_backend.sample_context``) against the in-memory engine's
  (``estimate_quality`` on the population in memory), with the same verdicts;
* **coupled**: the new experiment's batch 0 coupled on Dask to the earlier batch 0
  (``dask_backend.coupling.couple_sample``), against the in-memory coupling rule
  (``coupled_stratum_draws``) over the populations in memory given the same proposals; the pair
  probabilities of both engines on its pairs; and its estimates, as for the batch.

The verdicts come from a fixed truth (each item's Base cluster, every tenth item its Exp cluster's).
The in-memory engine's own ordinary sampler lays its draws out otherwise than Dask's (cells by code,
not by a hash of their ids), so the ordinary proposals of the two engines are different i.i.d.
draws of the same distribution; the kept share of a coupling from the in-memory sampler is printed
beside Dask's for that reason.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import metrics_core as mc
from metrics_core import dask_backend as dk
from metrics_core.dask_backend.coupling import couple_sample, ordinary_draws
from metrics_core.dask_backend.coupling import pair_probabilities as dask_probabilities
from metrics_core.dask_backend.sampling import pairs_table
from metrics_core.sampling import SCHEME_STRATA, allocate_draws
from metrics_core.sampling.coupling import CouplingLaws, coupled_stratum_draws


def new_variant(earlier: Path, new: Path, seed: int = 1) -> None:
    """The earlier items with another 5% of them moved to a random Exp cluster, file by file."""
    rng = np.random.default_rng(seed)
    new.mkdir(parents=True)
    for path in sorted(earlier.glob("*.parquet")):
        table = pq.read_table(path).to_pandas()
        moved = rng.random(len(table)) < 0.05
        exp = table["exp_cluster"].to_numpy().copy()
        exp[moved] = rng.integers(0, exp.max() + 1, int(moved.sum()))
        table["exp_cluster"] = exp
        pq.write_table(pa.Table.from_pandas(table, preserve_index=False), new / path.name)


def in_memory(folder: Path) -> tuple[mc.Population, np.ndarray]:
    table = pq.read_table(folder).to_pandas()
    ids = table["item_id"].to_numpy()
    assert (ids == np.arange(len(ids))).all(), "item ids are positions here"
    population = mc.population_from_labels(table["base_cluster"], table["exp_cluster"], table["weight"])
    return population, table["base_cluster"].to_numpy()


def truth_of(base: np.ndarray, population: mc.Population) -> np.ndarray:
    exp = population.exp_labels[population.exp]
    tenth = np.arange(len(base)) % 10 == 0
    return np.where(tenth, exp + base.max() + 1, base)


def as_sample(population: mc.Population, table: pd.DataFrame, scheme: str) -> mc.PairSample:
    return mc.PairSample.from_columns(
        population,
        scheme=scheme,
        i=table["i"],
        j=table["j"],
        draws=table["draws"],
        pair_class=table["pair_class"],
        stratum=table["stratum"],
        repeated=True,
    )


def estimate_gap(items, population, table, truth, scheme) -> tuple[float, int]:
    """The largest relative difference of any estimate field, Dask context against memory, and the verdicts."""
    sample = as_sample(population, table, scheme)
    a, b = mc.pairs_for_judgement(sample, rng=np.random.default_rng(0))
    verdicts = mc.verdicts_from_judgements(a, b, np.where(truth[a] == truth[b], "equivalent", "not_equivalent"))
    context = dk.sample_context(items, pd.DataFrame({**{c: getattr(sample, c) for c in ("i", "j", "draws")},
                                                     "pair_class": np.asarray(mc.PAIR_CLASSES)[sample.pair_class],
                                                     "stratum": np.asarray(mc.STRATA)[sample.stratum],
                                                     "scheme": scheme}))  # fmt: skip
    ours = mc.estimate_quality(context, sample, verdicts).as_dict()["estimates"]
    theirs = mc.estimate_quality(population, sample, verdicts).as_dict()["estimates"]
    gap = 0.0
    for name, fields in theirs.items():
        for field, value in fields.items():
            if isinstance(value, float) and np.isfinite(value):
                gap = max(gap, abs(ours[name][field] - value) / max(abs(value), 1e-12))
    return gap, len(a)


def memory_rule(pop_new, pop_source, items_new, source, scheme, n_draws, rng, *, dask_proposals=True):
    """The in-memory coupling rule over the populations in memory; proposals Dask's (or memory's own)."""
    from metrics_core.sampling.draw import draw_rows

    stratum_of = np.array([mc.STRATA.index(s) for s in source["stratum"]])
    parts, kept = [], 0
    for code, count in allocate_draws(scheme, n_draws, 0.5).items():
        rows = np.flatnonzero(stratum_of == code)
        classes = SCHEME_STRATA[scheme][code]

        def propose(size, generator, code=code, classes=classes):
            if dask_proposals:
                return ordinary_draws(items_new, scheme=scheme, stratum=code, size=size, rng=generator)
            return draw_rows(pop_new, scheme, classes, size, generator)

        laws = CouplingLaws(
            source_probabilities=lambda i, j, c=code: mc.pair_probabilities(
                pop_source, scheme=scheme, stratum=c, i=i, j=j
            ),
            new_probabilities=lambda i, j, c=code: mc.pair_probabilities(pop_new, scheme=scheme, stratum=c, i=i, j=j),
            to_new=lambda x: x,
            to_source=lambda y: y,
            classes_of=lambda i, j: mc.pair_classes_of(pop_new, i, j),
            propose=propose,
        )
        i, j, pair_class, n_kept, _ = coupled_stratum_draws(
            earlier_i=source["i"].to_numpy()[rows], earlier_j=source["j"].to_numpy()[rows],
            earlier_draws=source["draws"].to_numpy()[rows], count=count, rng=rng, laws=laws,
        )  # fmt: skip
        parts.append(pd.DataFrame({"i": i, "j": j, "pair_class": pair_class, "stratum": code}))
        kept += n_kept
    draws = pd.concat(parts, ignore_index=True)
    return pairs_table(scheme, draws.assign(draw=np.arange(len(draws)))), kept


def parity(data: Path, n_items: int, n_draws: int, scheme: str, seed: int = 7) -> dict:
    """Everything above on ``n_items`` items; the figures as a dict."""
    from bench_dask import generate  # the bench's generator (same folder)

    earlier_folder, new_folder = data / f"parity-{n_items}" / "earlier", data / f"parity-{n_items}" / "new"
    if not earlier_folder.exists():
        generate(earlier_folder, n_items)
        new_variant(earlier_folder, new_folder)
    out: dict = {"items": n_items, "draws": n_draws, "scheme": scheme, "seed": seed}
    earlier, new = dk.read_items(str(earlier_folder)), dk.read_items(str(new_folder))
    pop_earlier, base = in_memory(earlier_folder)
    pop_new, _ = in_memory(new_folder)
    truth = truth_of(base, pop_earlier)

    started = time.perf_counter()
    batches = [
        dk.sample_pairs(earlier, n_draws=n_draws, scheme=scheme, rng=mc.batch_rng(seed=seed, batch=b))
        for b in (0, 1, 1)
    ]
    out["batch_seconds"] = round((time.perf_counter() - started) / 3, 1)
    out["batch_1_again_identical"] = bool(batches[1].equals(batches[2]))
    out["batch_1_rows"], out["batches_shared_rows"] = len(batches[1]), len(batches[0].merge(batches[1], on=["i", "j"]))
    positions = [mc.draw_positions(as_sample(pop_earlier, t, scheme), rng=mc.batch_order_rng(seed=seed, batch=b))
                 for b, t in enumerate(batches[:2])]  # fmt: skip
    out["positions_are_permutations"] = all(sorted(p.tolist()) == list(range(n_draws)) for p in positions)
    union = pd.concat(batches[:2], ignore_index=True)
    out["batch_estimate_max_rel_gap"], out["batch_verdicts"] = estimate_gap(earlier, pop_earlier, union, truth, scheme)

    started = time.perf_counter()
    rng_of = lambda: mc.coupling_rng(seed=seed + 1, batch=0, source=1)  # noqa: E731
    coupled = couple_sample(
        new, n_draws=n_draws, scheme=scheme, rng=rng_of(), source_items=earlier, source_pairs=batches[0]
    )
    out["coupled_seconds"] = round(time.perf_counter() - started, 1)
    expected, kept = memory_rule(pop_new, pop_earlier, new, batches[0], scheme, n_draws, rng_of())
    merged = coupled.pairs.merge(
        expected, on=["i", "j", "stratum"], how="outer", suffixes=("", "_memory"), indicator=True
    )
    out["coupled_rows"], out["coupled_kept"], out["memory_rule_kept"] = len(coupled.pairs), coupled.kept, kept
    out["coupled_rows_differing"] = int(
        ((merged["_merge"] != "both") | (merged["draws"] != merged["draws_memory"])).sum()
    )
    out["coupled_identical"] = bool(coupled.pairs.equals(expected))
    gaps = []
    for name, rows in coupled.pairs.groupby("stratum"):
        i, j, stratum = rows["i"].to_numpy(), rows["j"].to_numpy(), mc.STRATA.index(name)
        p_dask = dask_probabilities(new, scheme=scheme, stratum=stratum, i=i, j=j)
        p_memory = mc.pair_probabilities(pop_new, scheme=scheme, stratum=stratum, i=i, j=j)
        gaps.append(float(np.max(np.abs(p_dask - p_memory) / p_memory)))
    out["probability_max_rel_gap"] = max(gaps)
    gap, verdicts = estimate_gap(new, pop_new, coupled.pairs, truth, scheme)
    out["coupled_estimate_max_rel_gap"], out["coupled_verdicts"] = gap, verdicts
    own, own_kept = memory_rule(pop_new, pop_earlier, new, batches[0], scheme, n_draws, rng_of(), dask_proposals=False)
    both = coupled.pairs.merge(own, on=["i", "j", "stratum"], suffixes=("", "_memory"))
    out["memory_sampler_kept"] = own_kept
    out["memory_sampler_common_draws"] = int(np.minimum(both["draws"], both["draws_memory"]).sum())
    return out


def markdown(result: dict, command: str) -> str:
    r = result
    rows = [
        ("batch 1 drawn again", f"the same draws: {r['batch_1_again_identical']}", "",
         f"{r['batch_1_rows']:,} rows, {r['batches_shared_rows']:,} also in batch 0"),
        ("draw order of batches 0, 1", f"`batch_order_rng` permutations: {r['positions_are_permutations']}",
         "the same function", ""),
        (f"estimates of batches 0 + 1 ({r['batch_verdicts']:,} verdicts)", "from the Dask context",
         "on the population", f"largest relative gap {r['batch_estimate_max_rel_gap']:.1e}"),
        ("coupled batch 0 of the new experiment", f"{r['coupled_rows']:,} rows, {r['coupled_kept']:,} draws kept",
         f"the in-memory rule, same proposals: {r['memory_rule_kept']:,} kept",
         f"rows differing: {r['coupled_rows_differing']} (identical: {r['coupled_identical']})"),
        ("pair probabilities of its pairs", "`dask_backend.coupling.pair_probabilities`", "`pair_probabilities`",
         f"largest relative gap {r['probability_max_rel_gap']:.1e}"),
        (f"its estimates ({r['coupled_verdicts']:,} verdicts)", "from the Dask context", "on the population",
         f"largest relative gap {r['coupled_estimate_max_rel_gap']:.1e}"),
        ("coupled with the in-memory sampler's proposals", "", f"{r['memory_sampler_kept']:,} kept",
         f"{r['memory_sampler_common_draws']:,} of {r['draws']:,} draws in common with Dask's"),
    ]  # fmt: skip
    table = "\n".join(f"| {' | '.join(row)} |" for row in rows)
    return f"""
## Dask and the in-memory engine on one population: a batch and a coupled experiment (issue 37)

    {command}

{r["items"]:,} items, {r["draws"]:,} {r["scheme"]} draws a batch, seed {r["seed"]} (the new experiment: seed
{r["seed"] + 1}, another 5% of the items moved). Dask: a LocalCluster of 2 single-threaded worker processes.

| check | Dask | in memory | |
|---|---|---|---|
{table}

Seconds on Dask: a batch {r["batch_seconds"]}, the coupled batch {r["coupled_seconds"]} (the earlier batch given).
"""
