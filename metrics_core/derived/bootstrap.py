"""Bootstrap replicates of the five ABCDE estimates the diagram needs (abcde-spec §7, ours).

Every estimate the diagram uses (the four rates and ΔPrecision, abcde-spec §6) is a
ratio of sums over the sample's rows of ``draws × (a per-row number)``, with the
class reweighting drawn/judged on top. A replicate only changes the draw count of
each row, so a replicate is one row of a count matrix ``N`` (replicates × rows), and
every sum the estimators need for all replicates is one product ``N @ A`` with a
fixed column per sum. No replicate goes through the estimator's Python code.

What is resampled (the design of the sample): for ``jaccard`` and ``precision`` all
draws of the sample, for ``stratified`` the draws of each stratum (its size is fixed
by the design), with replacement and in proportion to their draw counts, judged or
not. Each replicate then drops its unjudged draws and reweights each class by its own
drawn/judged, as the estimator does. With ``within="class"`` the judged draws of each
class (and stratum) are resampled instead, keeping every class's drawn and judged
counts; this is the conditional bootstrap given the class counts.

How it is drawn: a resample of a group's draws is a multinomial over its rows, drawn in two
exact stages of the same law, the draws of each class (× judged) and then the rows within each
class. A class of more than :data:`EXACT_DRAWS` draws has its resampled column sums drawn from
their normal limit (exact mean and covariance), so the cost is O(rows + replicates) instead of
O(replicates × draws) at 10^6 judged pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..estimation import _Draws
from ..masses import INTERSECTION, MERGE, SELF, SPLIT
from ..sampling import ALL, DIFF, STABLE

RESAMPLING = ("stratum", "class")
_CELLS_PER_CHUNK = 4_000_000  # replicates × rows per count matrix (32 MB)
# A category with more draws has its resampled sums drawn from their normal limit.
EXACT_DRAWS = 20_000

# The stratum of each class under each scheme (abcde-spec §4).
_STRATUM_OF = {
    "jaccard": {c: ALL for c in (SELF, SPLIT, MERGE, INTERSECTION)},
    "precision": {c: ALL for c in (SELF, SPLIT, MERGE, INTERSECTION)},
    "stratified": {SPLIT: DIFF, MERGE: DIFF, SELF: STABLE, INTERSECTION: STABLE},
}


@dataclass(frozen=True)
class _Columns:
    """The fixed matrix ``A`` (rows × sums) and what each column is."""

    matrix: np.ndarray
    # (stratum, class) -> column of drawn draws, of judged draws, of Σ draws·label·share
    drawn: dict[tuple[int, int], int]
    judged: dict[tuple[int, int], int]
    precision: dict[tuple[int, int], int]
    # "split"/"merge" -> column of Σ draws·importance·share and of Σ draws·importance over judged rows
    rate_numerator: dict[str, int]
    rate_denominator: dict[str, int]


def replicate_inputs(draws: _Draws, scheme: str, *, n_boot: int, rng: np.random.Generator, within: str = "stratum"):
    """The four rates and ΔPrecision of T for ``n_boot`` bootstrap replicates.

    Returns a dict of arrays of shape (n_boot,), keyed by metric name; NaN where a
    replicate leaves a needed class without judged draws.
    """
    columns = _columns(draws, scheme)
    groups = _groups(draws, scheme, within)
    fixed = draws.draws.astype(np.float64)
    for rows in groups:
        fixed[rows] = 0.0
    sums = np.broadcast_to(fixed @ columns.matrix, (n_boot, columns.matrix.shape[1])).copy()
    judged = ~np.isnan(draws.equivalent)
    for rows in groups:
        sums += _group_sums(rows, draws, judged, columns.matrix, n_boot, rng)
    return inputs_from_sums(sums, draws, scheme, columns)


def _group_sums(
    rows: np.ndarray, draws: _Draws, judged: np.ndarray, matrix: np.ndarray, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Column sums of ``n_boot`` resamples of a group's draws, (n_boot, columns).

    A resample takes the group's draws with replacement, in proportion to each row's draw
    count: a multinomial over its rows. Drawn as two exact stages with the same law: the
    draws of each category (class × judged, whose rows differ only in their continuous
    columns), a multinomial over a handful of categories; then each category's own rows. The
    second stage is exact (its draws picked one by one) up to :data:`EXACT_DRAWS` draws; above,
    the sum of ``m`` i.i.d. rows is drawn from its normal limit, with the exact mean ``m·μ``
    and covariance ``m·Σ`` of one draw (central limit theorem): O(rows) instead of
    O(n_boot × draws), the difference between seconds and minutes at 10^6 judged pairs.
    """
    counts = draws.draws[rows]
    category = draws.pair_class[rows].astype(np.int64) * 2 + judged[rows]
    present, category = np.unique(category, return_inverse=True)
    category_draws = np.bincount(category, weights=counts, minlength=len(present))
    total = category_draws.sum()
    per_category = rng.multinomial(int(total), category_draws / total, size=n_boot)
    sums = np.zeros((n_boot, matrix.shape[1]))
    for k in range(len(present)):
        members = rows[category == k]
        values, weights = matrix[members], counts[category == k].astype(np.float64)
        m = per_category[:, k].astype(np.float64)
        if np.all(values == values[0]):
            sums += m[:, None] * values[0]
        elif category_draws[k] <= EXACT_DRAWS:
            sums += _exact_sums(values, counts[category == k], per_category[:, k], rng)
        else:
            sums += _normal_sums(values, weights, m, rng)
    return sums


def _exact_sums(values: np.ndarray, counts: np.ndarray, picks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sums of ``picks[b]`` rows of ``values`` drawn with replacement ∝ ``counts``, one replicate each."""
    expanded = np.repeat(np.arange(len(values)), counts)
    n_boot, most = len(picks), int(picks.max(initial=0))
    sums = np.zeros((n_boot, values.shape[1]))
    chunk = max(1, _CELLS_PER_CHUNK // max(1, most, len(values)))
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        picked = expanded[rng.integers(0, len(expanded), size=(size, most))]
        keep = np.arange(most) < picks[start : start + size, None]
        picked += (np.arange(size) * len(values))[:, None]
        times = np.bincount(picked[keep], minlength=size * len(values)).reshape(size, len(values))
        sums[start : start + size] = times @ values
    return sums


def _normal_sums(values: np.ndarray, weights: np.ndarray, picks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sums of ``picks[b]`` i.i.d. rows (∝ ``weights``) from their normal limit, one replicate each."""
    p = weights / weights.sum()
    mean = p @ values
    centred = values - mean
    covariance = (centred * p[:, None]).T @ centred
    eigenvalues, eigenvectors = np.linalg.eigh(covariance)
    root = eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))
    noise = rng.standard_normal((len(picks), values.shape[1])) @ root.T
    return picks[:, None] * mean + np.sqrt(picks)[:, None] * noise


def identity_inputs(draws: _Draws, scheme: str) -> dict[str, np.ndarray]:
    """The same statistics on the sample itself (one replicate with the original counts)."""
    columns = _columns(draws, scheme)
    sums = draws.draws.astype(np.float64)[None, :] @ columns.matrix
    return inputs_from_sums(sums, draws, scheme, columns)


def inputs_from_sums(sums: np.ndarray, draws: _Draws, scheme: str, columns: _Columns) -> dict[str, np.ndarray]:
    stratum_of = _STRATUM_OF[scheme]
    n = len(sums)
    delta_precision = np.zeros(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        for stratum in sorted(set(stratum_of.values())):
            total = float(draws.totals[stratum].sum())
            if total == 0.0:
                continue
            classes = [c for c in range(4) if stratum_of[c] == stratum]
            numerator, denominator = np.zeros(n), np.zeros(n)
            for c in classes:
                drawn = sums[:, columns.drawn[(stratum, c)]]
                judged = sums[:, columns.judged[(stratum, c)]]
                has = judged > 0
                numerator += np.where(has, drawn / judged * sums[:, columns.precision[(stratum, c)]], 0.0)
                denominator += np.where(has, drawn, 0.0)
            delta_precision += total * np.where(denominator > 0, numerator / denominator, np.nan)
        out = {"DeltaPrecision": delta_precision}
        for kind, rate, good, bad in (
            ("split", draws.split_rate, "GoodSplitRate", "BadSplitRate"),
            ("merge", draws.merge_rate, "GoodMergeRate", "BadMergeRate"),
        ):
            share = sums[:, columns.rate_numerator[kind]] / sums[:, columns.rate_denominator[kind]]
            if rate == 0.0:
                share = np.zeros(n)
            # Splits are good when not equivalent, merges when equivalent.
            equivalent, not_equivalent = rate * share, rate * (1.0 - share)
            out[good], out[bad] = (not_equivalent, equivalent) if kind == "split" else (equivalent, not_equivalent)
    return out


def _columns(draws: _Draws, scheme: str) -> _Columns:
    stratum_of = _STRATUM_OF[scheme]
    judged = ~np.isnan(draws.equivalent)
    share = np.where(judged, draws.equivalent, 0.0)
    columns: list[np.ndarray] = []

    def add(values: np.ndarray) -> int:
        columns.append(values.astype(np.float64))
        return len(columns) - 1

    drawn_col, judged_col, precision_col = {}, {}, {}
    for c, stratum in stratum_of.items():
        in_class = (draws.pair_class == c) & (draws.stratum == stratum)
        key = (stratum, c)
        drawn_col[key] = add(in_class)
        judged_col[key] = add(in_class & judged)
        precision_col[key] = add(np.where(in_class & judged, draws.precision_label * share, 0.0))
    numerator, denominator = {}, {}
    for kind, c, importance in (("split", SPLIT, draws.union_over_base), ("merge", MERGE, draws.union_over_exp)):
        weight = importance if scheme != "precision" else np.ones(len(share))
        rows = (draws.pair_class == c) & (draws.stratum == stratum_of[c]) & judged
        numerator[kind] = add(np.where(rows, weight * share, 0.0))
        denominator[kind] = add(np.where(rows, weight, 0.0))
    matrix = np.column_stack(columns) if columns else np.zeros((len(share), 0))
    return _Columns(matrix, drawn_col, judged_col, precision_col, numerator, denominator)


def _groups(draws: _Draws, scheme: str, within: str) -> list[np.ndarray]:
    """Row indices resampled together; rows in no group keep their draw counts."""
    stratum_of = _STRATUM_OF[scheme]
    judged = ~np.isnan(draws.equivalent)
    groups = []
    if within == "stratum":
        for stratum in sorted(set(stratum_of.values())):
            groups.append(np.flatnonzero(draws.stratum == stratum))
    else:
        for c, stratum in stratum_of.items():
            groups.append(np.flatnonzero((draws.pair_class == c) & (draws.stratum == stratum) & judged))
    return [rows for rows in groups if len(rows) and draws.draws[rows].sum() > 0]
