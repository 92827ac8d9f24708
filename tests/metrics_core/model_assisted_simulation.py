"""Model-assisted estimates simulated (abcde-spec §15): scores of a known quality for the draw-order runs
of draw_order_simulation, shared by the coverage tests and bench/bench_model_assisted.py.

A pair's score is ``sigmoid(a·(±1) + ε)``, ``+1`` for a pair Ideal puts together, ``ε ~ N(0, 1)``
drawn once per pair: the binormal model, whose AUC is ``Φ(a·√2)``. ``a = 1.163`` gives AUC 0.95,
``0.595`` AUC 0.80; ``random`` is ``sigmoid(ε)``; ``inverted`` the AUC-0.95 score negated;
``inverted_merge`` negated in the merge class only.
"""

from __future__ import annotations

import numpy as np

import metrics_core as mc
from tests.metrics_core.draw_order_simulation import World, demo_world

SCORE_KINDS = ("auc95", "auc80", "random", "inverted", "inverted_merge")
_SEPARATION = {"auc95": 1.163, "auc80": 0.595, "random": 0.0, "inverted": -1.163, "inverted_merge": 1.163}
MERGE = mc.PAIR_CLASSES.index("merge")


def simulated_scores(world: World, sample: mc.PairSample, kind: str, seed: int) -> np.ndarray:
    """A score per sample row of the given ``kind`` (module docstring); a pair's two rows share it."""
    same = world.ideal[sample.i] == world.ideal[sample.j]
    low, high = np.minimum(sample.i, sample.j), np.maximum(sample.i, sample.j)
    _, pair = np.unique(low.astype(np.int64) * (int(high.max()) + 1) + high, return_inverse=True)
    noise = np.random.default_rng(seed).normal(size=int(pair.max()) + 1)[pair]
    separation = np.full(len(sample), _SEPARATION[kind])
    if kind == "inverted_merge":
        separation[sample.pair_class == MERGE] *= -1.0
    return 1.0 / (1.0 + np.exp(-(separation * np.where(same, 1.0, -1.0) + noise)))


def demo_card_scores():
    """The demo's world (Febrl 3) and a function giving a sample's built-in card similarity of the
    demo's catalogue, per row (what the worker stores for the demo's pairs)."""
    from raterapp.services.demo import demo_catalogue, febrl_records

    w = demo_world()
    catalogue = demo_catalogue(febrl_records())
    cards = {"title": catalogue["title"], "description": catalogue["description"]}
    attributes = {name: catalogue[name] for name in ("date_of_birth", "soc_sec_id", "state")}

    def scores(sample: mc.PairSample) -> np.ndarray:
        return mc.card_similarity(cards=cards, attributes=attributes, i=sample.i, j=sample.j)

    return w, scores
