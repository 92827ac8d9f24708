"""How much of a second experiment verdict reuse answers (issue 19 part 1, abcde-spec §11), on the
demo data (Febrl 3, 5,000 records): the demo experiment (Base: strict rules, Exp: looser rules)
is judged in full; a second experiment in its workspace keeps Base and changes Exp's rules for
a share of the records (``--changed``, default 20%): for those records Exp's third rule, "same
date of birth and street number", becomes "same date of birth and postcode". Both samples are
drawn as the app draws them (metrics_core ``sample_pairs`` with ``batch_rng`` of their seeds,
tasks from ``pairs_for_judgement``), and pairs are matched by the app's key
(``raterapp.reuse_keys.pair_key`` of the item ids). The figure: the share of the second
experiment's pairs (tasks) that the first experiment's verdicts answer, with the second sample
drawn independently (``independent``, the sampler before issue 19's coupling) and coupled to the
first as the app now draws it (``coupled``: metrics_core ``sample_coupled`` with ``coupling_rng``).

Independent samples share a pair only if both drew it, so small samples of a large diff overlap
little whatever the clusterings share; the coupled one keeps 1 − TV of the first's draws
(bench/results/reuse.md).

Run:  .venv/bin/python bench/bench_reuse.py [--draws 5000] [--changed 0.2] [--seeds 7 8]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics_core import (  # noqa: E402
    PairSample,
    batch_order_rng,
    batch_rng,
    couple_sample,
    coupling_rng,
    pairs_for_judgement,
    population_from_labels,
    sample_pairs,
)
from raterapp.reuse_keys import pair_key  # noqa: E402
from raterapp.services.demo import _components, _key, demo_clusterings, febrl_records  # noqa: E402

EXP_RULES = [("soc_sec_id",), ("given_name", "surname"), ("date_of_birth", "street_number")]
CHANGED_RULE = ("date_of_birth", "postcode")


def changed_exp(records, *, share: float, rng: np.random.Generator) -> np.ndarray:
    """Exp's clustering with its third rule replaced by ``CHANGED_RULE`` for ``share`` of the records."""
    keys = [_key(records, fields) for fields in EXP_RULES]
    moved = rng.random(len(records)) < share
    new = _key(records, CHANGED_RULE)
    third = keys[2].copy()
    third[moved] = None
    # A record under the changed rule links by the new key only to other changed records.
    changed_key = np.where(moved, new, None)
    return _components(len(records), [keys[0], keys[1], third, changed_key])


def items_changed(exp: np.ndarray, exp2: np.ndarray) -> int:
    """Items whose Exp cluster is not the same set of items in both clusterings."""
    cell = np.unique(np.stack([exp, exp2]), axis=1, return_inverse=True)[1].ravel()
    size = lambda labels: np.bincount(np.unique(labels, return_inverse=True)[1].ravel())[  # noqa: E731
        np.unique(labels, return_inverse=True)[1].ravel()
    ]
    return int(((size(exp) != size(cell)) | (size(exp2) != size(cell))).sum())


def task_keys(ids: np.ndarray, sample: PairSample, *, seed: int) -> set[str]:
    a, b = pairs_for_judgement(sample, rng=batch_order_rng(seed=seed, batch=0))
    return {pair_key(ids[i], ids[j]) for i, j in zip(a.tolist(), b.tolist())}


def reuse_figures(first: set[str], second: set[str]) -> dict:
    reused = len(first & second)
    return {
        "second_pairs": len(second),
        "reused_pairs": reused,
        "reused_share": round(reused / len(second), 4),
        "new_tasks": len(second) - reused,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=5000, help="Draws of each experiment.")
    parser.add_argument("--changed", type=float, default=0.2, help="Share of records whose Exp rule changes.")
    parser.add_argument("--seeds", type=int, nargs=2, default=(7, 8), help="Seeds of the first and second sample.")
    parser.add_argument("--rule-seed", type=int, default=0, help="Seed choosing the changed records.")
    args = parser.parse_args()

    records = febrl_records()
    ids = np.asarray(records["rec_id"].to_pylist(), dtype=object)
    base, exp = demo_clusterings(records)
    exp2 = changed_exp(records, share=args.changed, rng=np.random.default_rng(args.rule_seed))
    population, population2 = population_from_labels(base, exp), population_from_labels(base, exp2)
    seed, seed2 = args.seeds
    draw = dict(n_draws=args.draws, scheme="jaccard")
    first_sample = sample_pairs(population, rng=batch_rng(seed=seed, batch=0), **draw)
    independent = sample_pairs(population2, rng=batch_rng(seed=seed2, batch=0), **draw)
    started = time.perf_counter()
    coupled = couple_sample(
        population2,
        rng=coupling_rng(seed=seed2, batch=0, source=1),  # the first experiment's id, say 1
        source_population=population,
        source_sample=first_sample,
        item_ids=ids,
        source_item_ids=ids,
        **draw,
    )
    seconds = time.perf_counter() - started
    first = task_keys(ids, first_sample, seed=seed)
    print(
        json.dumps(
            {
                "draws": args.draws,
                "changed_records": args.changed,
                "exp_items_changed": items_changed(exp, exp2),
                "first_pairs": len(first),
                "independent": reuse_figures(first, task_keys(ids, independent, seed=seed2)),
                "coupled": {
                    **reuse_figures(first, task_keys(ids, coupled.sample, seed=seed2)),
                    "kept_draws": coupled.kept,
                    "kept_share": round(coupled.kept / args.draws, 4),
                    "seconds": round(seconds, 3),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
