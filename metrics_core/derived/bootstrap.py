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

from ..estimation import Draws
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
class Columns:
    """The sums a replicate needs: the columns of ``A`` (rows × sums), by what each is.

    A row of class ``c`` is non-zero only in the columns of ``c`` (drawn, judged, ΔPrecision and,
    for splits and merges, the rate's), so ``A`` is never built: :meth:`values` gives the few
    columns of some rows of one class.
    """

    n_columns: int
    # (stratum, class) -> column of drawn draws, of judged draws, of Σ draws·label·share
    drawn: dict[tuple[int, int], int]
    judged: dict[tuple[int, int], int]
    precision: dict[tuple[int, int], int]
    # "split"/"merge" -> column of Σ draws·importance·share and of Σ draws·importance over judged rows
    rate_numerator: dict[str, int]
    rate_denominator: dict[str, int]
    scheme: str

    def values(self, draws: Draws, rows: np.ndarray) -> tuple[list[int], np.ndarray]:
        """The columns that rows of one (stratum, class) fill, and their values, (len(rows), columns)."""
        key = (int(draws.stratum[rows[0]]), int(draws.pair_class[rows[0]]))
        if key not in self.drawn:
            return [], np.zeros((len(rows), 0))
        equivalent = draws.equivalent[rows]
        judged = ~np.isnan(equivalent)
        share = np.where(judged, equivalent, 0.0)
        columns = [self.drawn[key], self.judged[key], self.precision[key]]
        values = [np.ones(len(rows)), judged.astype(np.float64), draws.precision_label[rows] * share]
        for kind, c, importance in (("split", SPLIT, draws.union_over_base), ("merge", MERGE, draws.union_over_exp)):
            if key[1] == c:
                weight = importance[rows] if self.scheme != "precision" else np.ones(len(rows))
                columns += [self.rate_numerator[kind], self.rate_denominator[kind]]
                values += [weight * share, np.where(judged, weight, 0.0)]
        return columns, np.column_stack(values)

    def weighted_sums(self, draws: Draws, rows: np.ndarray) -> np.ndarray:
        """Σ draws × column over ``rows`` (ascending), (columns,)."""
        sums = np.zeros(self.n_columns)
        bounds = np.searchsorted(rows, draws.row_bounds)
        for g in range(12):
            members = rows[bounds[g] : bounds[g + 1]]
            if len(members):
                columns, values = self.values(draws, members)
                sums[columns] += draws.draws[members].astype(np.float64) @ values
        return sums


def replicate_inputs(draws: Draws, scheme: str, *, n_boot: int, rng: np.random.Generator, within: str = "stratum"):
    """The four rates and ΔPrecision of T for ``n_boot`` bootstrap replicates.

    Returns a dict of arrays of shape (n_boot,), keyed by metric name; NaN where a
    replicate leaves a needed class without judged draws.
    """
    columns = _columns(draws, scheme)
    return inputs_from_sums(replicate_sums(draws, scheme, columns, n_boot, rng, within), draws, scheme, columns)


def replicate_sums(
    draws: Draws, scheme: str, columns: Columns, n_boot: int, rng: np.random.Generator, within: str
) -> np.ndarray:
    """The column sums of ``n_boot`` replicates, (n_boot, columns): :func:`replicate_inputs` before the
    estimators. ``columns`` may carry more sums than :func:`columns_of`' (a subclass's
    :meth:`Columns.values`): they are resampled with the draws of their rows; with only
    :func:`columns_of`' the generator is used as :func:`replicate_inputs` uses it."""
    prefix = _partial_prefix(draws)
    groups = _groups(draws, scheme, "class" if prefix else within)
    fixed = np.ones(len(draws.draws), dtype=bool)
    for rows in groups:
        fixed[rows] = False
    sums = np.broadcast_to(columns.weighted_sums(draws, np.flatnonzero(fixed)), (n_boot, columns.n_columns)).copy()
    judged = ~np.isnan(draws.equivalent)
    for rows in groups:
        sums += _group_sums(rows, draws, judged, columns, n_boot, rng)
    if prefix:
        _resample_class_shares(sums, draws, scheme, columns, rng)
    return sums


def _partial_prefix(draws: Draws) -> bool:
    """Whether the draws are a labelled prefix short of some class's drawn draws (spec §14)."""
    if draws.class_drawn is None:
        return False
    labelled = np.bincount(draws.stratum * 4 + draws.pair_class, weights=draws.draws, minlength=12)[:12]
    return bool(np.any(labelled < draws.class_drawn))


def _resample_class_shares(
    sums: np.ndarray, draws: Draws, scheme: str, columns: Columns, rng: np.random.Generator
) -> None:
    """A labelled prefix is a simple random sample of the draws, post-stratified by class: its
    replicates resample each class's labelled draws (``within="class"``) and, apart, the classes'
    drawn draws of each stratum, a multinomial over all its drawn draws (which the point estimate
    reweights to). Resampling the prefix alone would centre the replicates on the prefix's class
    shares and vary them as if only the labelled draws had been drawn."""
    class_drawn = draws.class_drawn
    assert class_drawn is not None, "a labelled prefix keeps its classes' drawn draws"
    stratum_of = _STRATUM_OF[scheme]
    for stratum in sorted(set(stratum_of.values())):
        classes = [c for c in range(4) if stratum_of[c] == stratum]
        drawn = np.array([class_drawn[stratum * 4 + c] for c in classes], dtype=np.float64)
        total = drawn.sum()
        if total == 0:
            continue
        resampled = rng.multinomial(int(total), drawn / total, size=len(sums))
        for k, c in enumerate(classes):
            sums[:, columns.drawn[(stratum, c)]] = resampled[:, k]


def _group_sums(
    rows: np.ndarray, draws: Draws, judged: np.ndarray, columns: Columns, n_boot: int, rng: np.random.Generator
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
    present = np.flatnonzero(np.bincount(category, minlength=8))
    code = np.zeros(8, dtype=np.int64)
    code[present] = np.arange(len(present))
    category = code[category]
    category_draws = np.bincount(category, weights=counts, minlength=len(present))
    total = category_draws.sum()
    per_category = rng.multinomial(int(total), category_draws / total, size=n_boot)
    sums = np.zeros((n_boot, columns.n_columns))
    for k in range(len(present)):
        in_category = category == k
        members = rows[in_category]
        where, values = columns.values(draws, members)
        if not where:
            continue
        m = per_category[:, k].astype(np.float64)
        if np.all(values == values[0]):
            sums[:, where] += m[:, None] * values[0]
        elif category_draws[k] <= EXACT_DRAWS:
            sums[:, where] += _exact_sums(values, counts[in_category], per_category[:, k], rng)
        else:
            sums[:, where] += _normal_sums(values, counts[in_category].astype(np.float64), m, rng)
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


def inputs_from_sums(sums: np.ndarray, draws: Draws, scheme: str, columns: Columns) -> dict[str, np.ndarray]:
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


def columns_of(draws: Draws, scheme: str) -> Columns:
    """The columns the human-only replicates sum (:mod:`.assisted` adds its own after them)."""
    return _columns(draws, scheme)


def fixed_size_sums(
    values: np.ndarray, counts: np.ndarray, size: int, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Column sums of ``n_boot`` resamples of ``size`` draws of the rows of ``values`` (with replacement,
    ∝ ``counts``), (n_boot, columns): exact up to :data:`EXACT_DRAWS` draws, else their normal limit."""
    if size <= EXACT_DRAWS:
        return _exact_sums(values, counts, np.full(n_boot, size, dtype=np.int64), rng)
    return _normal_sums(values, counts.astype(np.float64), np.full(n_boot, float(size)), rng)


def _columns(draws: Draws, scheme: str) -> Columns:
    stratum_of = _STRATUM_OF[scheme]
    count = iter(range(1000))
    drawn_col, judged_col, precision_col = {}, {}, {}
    for c, stratum in stratum_of.items():
        key = (stratum, c)
        drawn_col[key], judged_col[key], precision_col[key] = next(count), next(count), next(count)
    numerator, denominator = {}, {}
    for kind in ("split", "merge"):
        numerator[kind], denominator[kind] = next(count), next(count)
    return Columns(next(count), drawn_col, judged_col, precision_col, numerator, denominator, scheme)


def _groups(draws: Draws, scheme: str, within: str) -> list[np.ndarray]:
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
