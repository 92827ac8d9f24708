"""A class's judged units and the weighted means over them (spec §6, §14): what an estimate is made of."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from .draws import Draws


@dataclass(frozen=True, kw_only=True)
class Mean:
    """A weighted mean over judged draws, with what its interval and sequence need."""

    value: float
    n_eff: float
    judged_draws: int
    drawn_draws: int
    horizon: float  # planned judged draws of its classes (spec §9)
    stderr: float = math.nan
    # The judged draws that carry a verdict (self pairs are known, not judged: spec §14), and a
    # floor under SE(m)² from the smoothed share of each judged class (``normal`` means only).
    verdict_draws: int = 0
    floor: float = 0.0

    @property
    def floored_stderr(self) -> float:
        """The SE the sequence uses: at least the floor's (defined from the first verdict on)."""
        stderr = self.stderr
        floor = math.sqrt(self.floor)
        return floor if math.isnan(stderr) else max(stderr, floor)


@dataclass(frozen=True, kw_only=True)
class Unsettled:
    """A mean whose SE waits for its spread ``Σ v_u² k_u (x_u − m)²`` (spec §6): the dot products
    of each ``(v_u² k_u, (x_u − m)²)`` in ``terms``, then divided by ``total``, the sum of weights."""

    mean: Mean
    total: float
    terms: list[tuple[np.ndarray, np.ndarray]]

    def settled(self) -> Mean:
        judged = self.mean.judged_draws
        if judged <= 1:
            return self.mean
        spread = 0.0
        for vk, squares in self.terms:
            spread += float(np.dot(vk, squares))
        return replace(self.mean, stderr=math.sqrt(judged / (judged - 1) * spread) / self.total)


@dataclass(frozen=True)
class Frame:
    """The judged units of one (stratum, class), with the class's reweighting."""

    rows: slice
    units: slice
    drawn: int
    judged: int
    v: float  # drawn/judged
    q: float  # share of the class's distinct pairs (labelled pairs in a prefix) judged
    # In a labelled prefix (spec §14), the class's judged draws over its drawn draws; None otherwise.
    labelled: float | None
    present: np.ndarray | slice  # the class's units with a verdict (a slice when all are)
    unit_draws: np.ndarray  # draws of the present units
    share: np.ndarray  # share of equivalent verdicts of the present units

    @classmethod
    def build(cls, d: Draws, group: int) -> Frame:
        rows = slice(int(d.row_bounds[group]), int(d.row_bounds[group + 1]))
        units = slice(int(d.unit_bounds[group]), int(d.unit_bounds[group + 1]))
        share = d.unit_share[units]
        present = np.isnan(share)
        np.logical_not(present, out=present)
        if present.all():
            present = slice(None)  # views, not copies (self pairs; every pair judged)
        all_draws = d.unit_draws[units]
        unit_draws = all_draws[present]
        drawn = int(all_draws.sum()) if d.class_drawn is None else int(d.class_drawn[group])
        judged = int(unit_draws.sum())
        n_units = units.stop - units.start
        return cls(
            rows,
            units,
            drawn,
            judged,
            drawn / judged if judged else 0.0,
            len(unit_draws) / n_units if n_units else 0.0,
            None if d.class_drawn is None else (judged / drawn if drawn else 0.0),
            present,
            unit_draws,
            share[present],
        )

    @cached_property
    def k(self) -> np.ndarray:
        """The spec's ``k_u`` of each present unit: its draws and their within-unit pairs."""
        # unit_draws + (1 − q)·unit_draws·(unit_draws − 1), in place (products commute exactly)
        k = np.multiply(self.unit_draws, 1.0 - self.q)
        k *= self.unit_draws - 1.0
        k += self.unit_draws
        return k

    @cached_property
    def plain(self) -> Weights:
        """The unit weights without importance: every such mean over this class shares them."""
        return Weights(self, self.v * self.unit_draws)

    def unit_sums(self, d: Draws, values: np.ndarray) -> np.ndarray:
        """Σ draws·values over the rows of each present unit (``values`` of this class's rows)."""
        return d.unit_sums(values, self.rows, self.units)[self.present]


class Weights:
    """A class's weight of each present unit, and the spec's ``v_u² k_u`` (``v_u`` the unit's
    mean weight per draw) for the SE, with their sums."""

    def __init__(self, frame: Frame, unit_weight: np.ndarray):
        self.frame = frame
        self.unit_weight = unit_weight
        self.total = float(unit_weight.sum())

    @cached_property
    def vk(self) -> np.ndarray:
        vk = self.unit_weight / self.frame.unit_draws
        np.multiply(vk, vk, out=vk)
        vk *= self.frame.k
        return vk

    @cached_property
    def vk_total(self) -> float:
        return float(self.vk.sum())

    def split_terms(self, x: np.ndarray, m: float, class_mean: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """``v_u² k_u (x_u − m)²`` with ``k_u = q D_u + (1 − q) D_u²`` split in its two parts, the
        second (the variance of losing a pair's draws together) centred at the class's mean."""
        f = self.frame
        per_draw = self.unit_weight / f.unit_draws
        per_draw *= per_draw
        return [
            (per_draw * (f.q * f.unit_draws), np.square(x - m)),
            (per_draw * ((1.0 - f.q) * f.unit_draws * f.unit_draws), np.square(x - class_mean)),
        ]

    def prefix_terms(self, x: np.ndarray, m: float, class_mean: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """The same in a labelled prefix (spec §14), which is a simple random sample of the draws
        post-stratified by class: ``v_u² k_u`` centred at the class's mean (within the class), and
        the class's mean off the pooled one weighted as the class's share of all drawn draws varies,
        ``N_g (ȳ_g − m)²`` (``v_u² D_u`` summed times the labelled share ``n_g/N_g``). Centred at
        ``m`` as in §6, that term would be ``N_g²/n_g``: overstated by the unlabelled draws."""
        f = self.frame
        assert f.labelled is not None, "a class of a labelled prefix"
        per_draw = self.unit_weight / f.unit_draws
        per_draw *= per_draw
        between = f.labelled * float(np.dot(per_draw, f.unit_draws))
        return [(self.vk, np.square(x - class_mean)), (np.array([between]), np.array([(class_mean - m) ** 2]))]
