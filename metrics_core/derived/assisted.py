"""Model-assisted ΔRecall and IQ (abcde-spec §7, §14, §15): the diagram of the model-assisted inputs.

The point value is the diagram (MQM §3.2, §4.2) at the model-assisted point estimates of its five
inputs, the four rates and ΔPrecision (:func:`~metrics_core.estimation.estimate_quality_assisted`);
the sequence and unsure bounds are propagated from theirs, and the interval is the union over the
``Recall_Base`` range of bootstrap percentile intervals, exactly as for the human-only ΔRecall and IQ
(:func:`~metrics_core.derived.derived_metrics`).

**The bootstrap (ours).** It resamples the model-assisted estimator itself, with each class's ``λ``
and calibrated scores ``h`` held fixed within the replicates (the calibration is not refitted: it
is a few coefficients fitted cross-fold, whose variability is second order next to the verdicts').
A class's model-assisted share is
``λ·Σ_all D·w·h / Σ_all D·w + Σ_J D·w·(y − λh) / Σ_J D·w`` (``w`` the rate's importance, or 1;
for ΔPrecision ``h`` times the label, and the classes pooled as §6 pools them), so it fits the
human bootstrap's column sums (:mod:`.bootstrap`) with more columns:

* ``Σ_J D·w·h`` over the judged draws, a column of the judged rows resampled with them, jointly
  with the verdicts (the correction ``y − λh`` is a difference of the same draws);
* the draws of the class that are not judged labelled draws (the draws beyond each batch's labelled
  prefix, which ``draws`` leaves out and ``full``, every drawn draw, has; and the unsure pairs'),
  resampled within the class with their number fixed, independently of the judged ones; with the
  judged draws' columns they make the all-draws mean ``Σ_all D·w·h / Σ_all D·w``.

Resampling the judged and the other draws of a class apart with their sizes fixed is the
conditional bootstrap of a simple random sample of the class's draws (the labelled prefix is one,
post-stratified by class): its variance is ``[σ_y² − 2λ(1−ρ)σ_yh + λ²(1−ρ)σ_h²]/n`` with ``ρ`` the
labelled share, which is spec §15's variance of the estimator, ``σ_y²/N + (1−ρ)σ_r²/n``,
``r = y − λh``. The classes' drawn draws vary as the human bootstrap varies them.

**The same random numbers.** A class with ``λ = 0`` adds no column and no resample, so with
``λ = 0`` everywhere (``score_lambda=0``, no draw order, too few judged pairs, a constant score)
the generator is used exactly as :func:`~metrics_core.derived.derived_metrics` uses it, and the
replicates, intervals and values equal the human-only ones for the same seed. The other
classes' extra resamples come after all the human ones.

``verdicts_saved`` is SE₀²/SE² of the bootstrap standard deviations at the value's
``Recall_Base`` (the human-only over the model-assisted), NaN when either is undefined or 0;
``lambda`` is NaN (several classes' ``λ`` enter the diagram). The fallback of rescaling the human
replicates by each input's SE ratio was not needed.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from ..context import SampleContext, exact_metrics
from ..estimation import Draws
from ..estimation.assist import Assist
from ..estimation.assisted import ModelAssistedEstimates
from ..estimation.estimator import Estimator
from ..estimation.schemes import STRATUM_OF, scheme_estimates
from ..estimation.unsure import with_unsure_bounds
from ..judgements import PairVerdicts
from ..masses import MERGE, SPLIT
from ..population import Population
from ..results import QualityEstimates, json_number
from ..sampling import PairSample
from .bootstrap import Columns, columns_of, fixed_size_sums, inputs_from_sums, replicate_sums
from .metrics import (
    DERIVED_METRICS,
    DerivedMetrics,
    RangeEstimate,
    derived_metrics,
    derived_of_replicates,
    derived_parameters,
)
from .ranges import DEFAULT_RECALL_BASE_RANGE

_RATES = (("split", SPLIT, "base"), ("merge", MERGE, "exp"))  # the rates' class and importance


@dataclass(frozen=True)
class AssistedDerivedMetrics:
    """Model-assisted ΔRecall and IQ (``derived``, as :class:`DerivedMetrics`) beside the human-only
    ones of the same verdicts (``human``), and SE₀²/SE² of their bootstraps (``verdicts_saved``)."""

    derived: DerivedMetrics
    human: DerivedMetrics
    verdicts_saved: Mapping[str, float]

    def __getitem__(self, name: str) -> RangeEstimate:
        estimate = self.derived.estimates[name]
        assert isinstance(estimate, RangeEstimate)
        return estimate

    def estimates_dict(self) -> dict:
        """The estimates as the CLI's ``model_assisted.estimates`` has them: with ``lambda`` (null) and
        ``verdicts_saved``."""
        return {
            name: e.as_dict() | {"lambda": None, "verdicts_saved": json_number(self.verdicts_saved[name])}
            for name, e in self.derived.estimates.items()
        }


def derived_metrics_assisted(
    population: Population | SampleContext,
    sample: PairSample,
    verdicts: PairVerdicts,
    scores: Any,
    *,
    rng: np.random.Generator,
    confidence: float = 0.95,
    recall_base: float | None = None,
    recall_base_range: tuple[float, float] = DEFAULT_RECALL_BASE_RANGE,
    precision_base: float | None = None,
    n_boot: int = 1000,
    recall_grid: Any = None,
    precision_grid: Any = None,
    resampling: str = "stratum",
    labelled_draws: Any = None,
    score_lambda: float | None = None,
    draws: Draws | None = None,
    full: Draws | None = None,
    human: DerivedMetrics | None = None,
    assisted: ModelAssistedEstimates | None = None,
    exact: Mapping[str, float] | None = None,
) -> AssistedDerivedMetrics:
    """ΔRecall and IQ of the model-assisted estimates (abcde-spec §15), with bootstrap intervals.

    Parameters as :func:`~metrics_core.derived_metrics`, and ``scores`` and ``score_lambda`` as
    :func:`~metrics_core.estimate_quality_assisted`. ``draws`` and ``full``: the draws already built
    (``Draws.build`` with ``labelled_draws``, and without); ``human``: the human-only
    :func:`~metrics_core.derived_metrics` of the same arguments, else computed here with a copy of
    ``rng`` as it was given (the same random numbers); ``assisted``: the model-assisted estimates of
    the same arguments at the default horizon (``assisted_of_draws``), whose fitted assistance is then
    not fitted again; ``exact``: ``impact_metrics(population).metrics``. The sequences are those at the
    default horizon.

    Examples
    --------
    With ``score_lambda=0`` they are the human-only ΔRecall and IQ.

    >>> import numpy as np
    >>> from metrics_core import derived_metrics, population_from_labels, sample_pairs, verdicts_from_judgements
    >>> pop = population_from_labels(["B1", "B1", "B1", "B2"], ["E1", "E1", "E2", "E2"])
    >>> s = sample_pairs(pop, n_draws=400, rng=np.random.default_rng(1))
    >>> v = verdicts_from_judgements([0, 0, 1, 2], [1, 2, 2, 3], ["equivalent", "not_equivalent",
    ...     "not_equivalent", "equivalent"])
    >>> a = derived_metrics_assisted(pop, s, v, np.ones(len(s)), rng=np.random.default_rng(0), n_boot=200,
    ...     score_lambda=0.0)
    >>> h = derived_metrics(pop, s, v, rng=np.random.default_rng(0), n_boot=200)
    >>> a["DeltaRecall"] == h["DeltaRecall"], a.verdicts_saved["DeltaRecall"]
    (True, 1.0)
    """
    human_rng = copy.deepcopy(rng) if human is None else None
    confidence, n_boot, rng, recall_base, recall_bases, precision_base = derived_parameters(
        confidence, n_boot, rng, recall_base, recall_base_range, precision_base, resampling
    )
    if score_lambda is not None and not 0.0 <= score_lambda <= 1.0:
        raise ValueError(f"score_lambda must be within [0, 1], got {score_lambda!r}")
    if draws is None:
        draws = Draws.build(population, sample, verdicts, None, labelled_draws)
    elif draws.verdicts is not verdicts:
        raise ValueError("draws must be built from these verdicts")
    if full is None:
        full = draws if draws.class_drawn is None else Draws.build(population, sample, verdicts, None, None)
    if assisted is not None and assisted.assist is not None:
        assist, quality = assisted.assist, assisted.quality
    else:
        assist = Assist(draws, full, sample, scores, score_lambda)
        z = NormalDist().inv_cdf(0.5 + confidence / 2)
        estimator = Estimator(draws, z, confidence, sample.n_draws, assist=assist)
        estimates = with_unsure_bounds(scheme_estimates(estimator, sample.scheme), estimator, sample.scheme)
        quality = QualityEstimates(scheme=sample.scheme, confidence=confidence, estimates=estimates)
    replicates = assisted_replicate_inputs(
        draws, full, assist, sample.scheme, n_boot=n_boot, rng=rng, within=resampling
    )
    exact = exact_metrics(population) if exact is None else exact
    derived = derived_of_replicates(
        quality,
        exact,
        replicates,
        scheme=sample.scheme,
        confidence=confidence,
        recall_base=recall_base,
        recall_bases=recall_bases,
        precision_base=precision_base,
        recall_grid=recall_grid,
        precision_grid=precision_grid,
        resampling=resampling,
    )
    if human is None:
        assert human_rng is not None
        human = derived_metrics(
            population,
            sample,
            verdicts,
            rng=human_rng,
            confidence=confidence,
            recall_base=recall_base,
            recall_base_range=recall_base_range,
            precision_base=precision_base,
            n_boot=n_boot,
            recall_grid=recall_grid,
            precision_grid=precision_grid,
            resampling=resampling,
            draws=draws,
            exact=exact,
        )
    saved = {name: _saved(human[name].stderr, derived[name].stderr) for name in DERIVED_METRICS}
    return AssistedDerivedMetrics(derived, human, saved)


def _saved(human: float, assisted: float) -> float:
    """SE₀²/SE², NaN when not meaningful (an SE undefined or 0)."""
    if not (math.isfinite(human) and math.isfinite(assisted)) or human <= 0 or assisted <= 0:
        return math.nan
    return (human / assisted) ** 2


@dataclass(frozen=True)
class _AssistedColumns(Columns):
    """The human bootstrap's columns and, per class with ``λ ≠ 0``, ``Σ D·w·h`` over its judged draws:
    ``scored`` maps ``(group, "precision" | "split" | "merge")`` to its column."""

    scored: dict[tuple[int, str], int]
    h_row: np.ndarray  # the score h of each sample row

    def values(self, draws: Draws, rows: np.ndarray) -> tuple[list[int], np.ndarray]:
        columns, values = super().values(draws, rows)
        group = 4 * int(draws.stratum[rows[0]]) + int(draws.pair_class[rows[0]])
        extra = [(column, kind) for (g, kind), column in self.scored.items() if g == group]
        if not extra:
            return columns, values
        judged = ~np.isnan(draws.equivalent[rows])
        h = np.where(judged, self.h_row[draws.sample_row[rows]], 0.0)
        more = [h * _weight(draws, rows, kind, self.scheme) for _, kind in extra]
        return columns + [column for column, _ in extra], np.column_stack([values, *more])


def _weight(d: Draws, rows: np.ndarray | slice, kind: str, scheme: str) -> np.ndarray:
    """The per-draw weight of ``h`` in a mean: ΔPrecision's label, a rate's importance (1 for ``precision``)."""
    if kind == "precision":
        return d.precision_label[rows]
    if scheme == "precision":
        return np.ones(len(d.draws[rows]))
    return (d.union_over_base if kind == "split" else d.union_over_exp)[rows]


def _lambdas(assist: Assist, scheme: str) -> dict[tuple[int, str], float]:
    """Each (group, mean) ``λ`` the point estimates used: ΔPrecision's per class, and the rates'."""
    out = {}
    for c, stratum in STRATUM_OF[scheme].items():
        g = 4 * stratum + c
        out[(g, "precision")] = assist.lambdas.get((g, "precision", None), 0.0)
    for kind, c, importance in _RATES:
        g = 4 * STRATUM_OF[scheme][c] + c
        out[(g, kind)] = assist.lambdas.get((g, "share", None if scheme == "precision" else importance), 0.0)
    return {key: lam for key, lam in out.items() if lam != 0.0}


def assisted_replicate_inputs(
    draws: Draws, full: Draws, assist: Assist, scheme: str, *, n_boot: int, rng: np.random.Generator, within: str
) -> dict[str, np.ndarray]:
    """The model-assisted rates and ΔPrecision of ``n_boot`` bootstrap replicates (module docstring);
    :func:`~metrics_core.derived.bootstrap.replicate_inputs`' exactly when every ``λ`` is 0.

    ``assist`` must have served the point estimates (an :class:`Estimator` of ``draws`` with it): their
    ``λ`` are the ones held fixed."""
    lambdas = _lambdas(assist, scheme)
    base = columns_of(draws, scheme)
    scored = {key: base.n_columns + k for k, key in enumerate(sorted(lambdas))}
    columns = _AssistedColumns(
        base.n_columns + len(scored),
        base.drawn,
        base.judged,
        base.precision,
        base.rate_numerator,
        base.rate_denominator,
        base.scheme,
        scored,
        assist.h_row,
    )
    sums = replicate_sums(draws, scheme, columns, n_boot, rng, within)
    out = inputs_from_sums(sums, draws, scheme, columns)
    if not lambdas:
        return out
    others = _other_draws(draws, full)
    with np.errstate(divide="ignore", invalid="ignore"):
        # ΔPrecision: each class's λ·(N_g·A_g − v_g·Σ_J D·label·h) added to its stratum's numerator.
        for stratum in sorted(set(STRATUM_OF[scheme].values())):
            total = float(draws.totals[stratum].sum())
            classes = [c for c in range(4) if STRATUM_OF[scheme][c] == stratum]
            keys = [(4 * stratum + c, "precision") for c in classes]
            if total == 0.0 or not any(key in lambdas for key in keys):
                continue
            correction, denominator = np.zeros(n_boot), np.zeros(n_boot)
            for c, key in zip(classes, keys, strict=True):
                drawn, judged = sums[:, base.drawn[(stratum, c)]], sums[:, base.judged[(stratum, c)]]
                has = judged > 0
                denominator += np.where(has, drawn, 0.0)
                if key in lambdas:
                    h_judged = sums[:, scored[key]]
                    h_all, n_all = _all_draws(full, others, key, scheme, assist.h_row, h_judged, judged, n_boot, rng)
                    term = drawn * (h_all / n_all) - drawn / judged * h_judged
                    correction += np.where(has, lambdas[key] * term, 0.0)
            out["DeltaPrecision"] = out["DeltaPrecision"] + total * correction / denominator
        for kind, c, _ in _RATES:
            key = (4 * STRATUM_OF[scheme][c] + c, kind)
            rate = draws.split_rate if kind == "split" else draws.merge_rate
            if key not in lambdas or rate == 0.0:
                continue
            numerator, weight = sums[:, base.rate_numerator[kind]], sums[:, base.rate_denominator[kind]]
            h_judged = sums[:, scored[key]]
            h_all, w_all = _all_draws(full, others, key, scheme, assist.h_row, h_judged, weight, n_boot, rng)
            share = lambdas[key] * h_all / w_all + (numerator - lambdas[key] * h_judged) / weight
            good, bad = ("GoodSplitRate", "BadSplitRate") if kind == "split" else ("GoodMergeRate", "BadMergeRate")
            equivalent, not_equivalent = rate * share, rate * (1.0 - share)
            out[good], out[bad] = (not_equivalent, equivalent) if kind == "split" else (equivalent, not_equivalent)
    return out


def _other_draws(draws: Draws, full: Draws) -> np.ndarray:
    """Each row of ``full``'s draws that are not judged labelled draws of ``draws``."""
    size = int(max(full.sample_row.max(initial=-1), draws.sample_row.max(initial=-1))) + 1
    judged_labelled = np.zeros(size, dtype=np.int64)
    judged = ~np.isnan(draws.equivalent)
    judged_labelled[draws.sample_row[judged]] = draws.draws[judged]
    return full.draws - judged_labelled[full.sample_row]


def _all_draws(
    full: Draws,
    others: np.ndarray,
    key: tuple[int, str],
    scheme: str,
    h_row: np.ndarray,
    h_judged: np.ndarray,
    w_judged: np.ndarray,
    n_boot: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """``Σ_all D·w·h`` and ``Σ_all D·w`` of the class in each replicate: the judged draws' resampled sums
    plus a resample of the class's other draws, as many as it has."""
    group, kind = key
    rows = slice(int(full.row_bounds[group]), int(full.row_bounds[group + 1]))
    counts = others[rows]
    total = int(counts.sum())
    if total == 0:
        return h_judged, w_judged
    weight = _weight(full, rows, kind, scheme)
    h = h_row[full.sample_row[rows]]
    values = np.column_stack([weight * h, np.ones(len(counts)) if kind == "precision" else weight])
    keep = counts > 0
    values, counts = values[keep], counts[keep].astype(np.int64)
    resampled = fixed_size_sums(values, counts, total, n_boot, rng)
    return h_judged + resampled[:, 0], w_judged + resampled[:, 1]
