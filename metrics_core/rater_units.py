"""The units (distinct pairs) of a rater-aware estimate: their verdicts, gold answers and sample rows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._sorting import unordered_pair_keys
from ._validation import as_1d, same_length
from .agreement import verdict_codes
from .context import SampleContext
from .dawid_skene import VerdictData, verdict_data
from .judgements import EQUIVALENT, NOT_EQUIVALENT, UNSURE, PairVerdicts
from .masses import INTERSECTION, MERGE, SELF, SPLIT
from .sampling import SCHEME_STRATA, PairSample

_GOLD_ANSWERS = {"equivalent": 1.0, "not_equivalent": 0.0}


@dataclass(frozen=True, eq=False)
class RaterUnits:
    """The distinct unordered pairs of the sample, the verdicts and the gold list.

    A unit's group is its (stratum, class) in the sample (codes 0..11), 12 for a gold pair
    outside the sample and 13 for any other judged pair; groups are the model's priors and the
    bootstrap's strata.

    With a labelled prefix (abcde-spec §14), the verdicts on a sampled pair without a labelled
    draw wait, as in the human-only estimates: the model does not see them (the pair stays a unit
    without verdicts, like a pair nobody judged), so pairs beyond the prefix influence nothing.
    """

    a: np.ndarray
    b: np.ndarray
    group: np.ndarray
    data: VerdictData
    unit_of_row: np.ndarray  # per sample row, its unit
    counts: np.ndarray  # (3, units): equivalent, not equivalent and unsure verdicts

    @classmethod
    def build(cls, sample, i, j, verdict, rater, gold_i, gold_j, gold_answer, labelled=None) -> RaterUnits:
        """``labelled``: each sample row's labelled draws (``labelled_counts``), or ``None`` for every draw."""
        i, j = as_1d("i", i).astype(np.int64), as_1d("j", j).astype(np.int64)
        codes = verdict_codes("verdict", verdict).astype(np.int64)
        rater = as_1d("rater", rater)
        same_length(i=i, j=j, verdict=codes, rater=rater)
        gold_i, gold_j = as_1d("gold_i", gold_i).astype(np.int64), as_1d("gold_j", gold_j).astype(np.int64)
        answers = as_1d("gold_answer", gold_answer)
        same_length(gold_i=gold_i, gold_j=gold_j, gold_answer=answers)
        truth_of_gold = np.array([_GOLD_ANSWERS.get(str(a), np.nan) for a in answers.tolist()], dtype=np.float64)
        if np.isnan(truth_of_gold).any():
            k = int(np.flatnonzero(np.isnan(truth_of_gold))[0])
            raise ValueError(f"gold_answer[{k}] = {answers.tolist()[k]!r}: must be equivalent or not_equivalent")
        n = (
            int(
                max(
                    np.max(sample.i, initial=-1),
                    np.max(sample.j, initial=-1),
                    np.max(i, initial=-1),
                    np.max(j, initial=-1),
                    np.max(gold_i, initial=-1),
                    np.max(gold_j, initial=-1),
                )
            )
            + 1
        )
        sample_keys, judged_keys, gold_keys = (
            unordered_pair_keys(x, y, n) for x, y in ((sample.i, sample.j), (i, j), (gold_i, gold_j))
        )
        keep = i != j
        keys, first = np.unique(np.concatenate([sample_keys, gold_keys, judged_keys[keep]]), return_index=True)
        unit_of_row = np.searchsorted(keys, sample_keys)
        n_units = len(keys)
        group = np.full(n_units, 13, dtype=np.int64)
        group[np.searchsorted(keys, gold_keys)] = 12
        group[unit_of_row] = sample.stratum.astype(np.int64) * 4 + sample.pair_class
        truth = np.full(n_units, np.nan)
        truth[np.searchsorted(keys, gold_keys)] = truth_of_gold
        truth[unit_of_row[sample.pair_class == SELF]] = 1.0  # self pairs: equivalent, never judged
        unit = np.searchsorted(keys, judged_keys[keep])
        rater, codes = rater[keep], codes[keep]
        if labelled is not None:
            waiting = np.bincount(unit_of_row, weights=labelled, minlength=n_units) == 0
            waiting[group >= 12] = False  # gold and other pairs outside the sample have no prefix
            heard = ~waiting[unit]
            unit, rater, codes = unit[heard], rater[heard], codes[heard]
        data = verdict_data(unit, rater, codes, truth, group, None)
        counts = np.stack([np.bincount(unit[codes == c], minlength=n_units) for c in range(3)])
        return cls(keys // n, keys % n, group, data, unit_of_row, counts)

    def posterior_verdicts(self, posterior: np.ndarray) -> PairVerdicts:
        """Verdict counts whose share of *equivalent* is the posterior: the sure verdicts split
        by it; unsure verdicts and pairs without sure verdicts as they were. Gold pairs with
        no verdict are left out, like the pairs nobody judged."""
        sure = (self.counts[EQUIVALENT] + self.counts[NOT_EQUIVALENT]).astype(np.float64)
        has = (sure + self.counts[UNSURE] > 0) & (self.a != self.b)
        p = np.nan_to_num(posterior)
        return PairVerdicts(
            self.a[has], self.b[has], (sure * p)[has], (sure * (1.0 - p))[has], self.counts[UNSURE][has].astype(float)
        )


@dataclass(frozen=True, eq=False)
class RaterLayout:
    """Per sample row what every estimate needs: its class, stratum, draws (and labelled draws) and
    unit, the ΔPrecision label, the rates' importances, and the exact totals (abcde-spec §4-6)."""

    scheme: str
    pair_class: np.ndarray
    stratum: np.ndarray
    draws: np.ndarray
    unit: np.ndarray
    label: np.ndarray
    union_over_base: np.ndarray
    union_over_exp: np.ndarray
    totals: np.ndarray  # (4,) class totals of the sampling weight
    rate_totals: np.ndarray  # (4,) SplitRate(T), MergeRate(T) at SPLIT, MERGE
    # Each row's draws in the labelled prefix (abcde-spec §14; ``labelled_counts``), the draws a
    # class's judged draws are counted from; ``None``: every draw.
    labelled: np.ndarray | None = None

    @classmethod
    def build(
        cls, context: SampleContext, sample: PairSample, unit_of_row: np.ndarray, labelled: np.ndarray | None = None
    ) -> RaterLayout:
        pair_class = sample.pair_class.astype(np.int64)
        union, base, exp = context.union, context.base, context.exp
        if sample.scheme == "precision":
            stable = np.sign(1.0 / exp - 1.0 / base)
            label = np.select([pair_class == MERGE, pair_class == SPLIT], [1.0, -1.0], stable)
        else:
            label = np.select(
                [pair_class == MERGE, pair_class == SPLIT], [union / exp, -union / base], union / exp - union / base
            )
        return cls(
            sample.scheme,
            pair_class,
            sample.stratum.astype(np.int64),
            sample.draws.astype(np.float64),
            unit_of_row,
            label,
            union / base,
            union / exp,
            np.asarray(context.totals, dtype=float),
            np.asarray(context.rate_totals, dtype=float),
            None if labelled is None else np.asarray(labelled, dtype=np.float64),
        )

    def estimates(self, x: np.ndarray, weight: np.ndarray) -> dict[str, np.ndarray]:
        """Every metric of the scheme for each row of ``x`` (B, rows): a pair's value (NaN where
        unjudged), with ``weight`` (B, rows) its pair's bootstrap multiplicity.

        With a labelled prefix, a class's judged draws are its labelled draws with a verdict and
        its drawn draws all its draws, as in :func:`~metrics_core.estimate_quality` (spec §14)."""
        strata = SCHEME_STRATA[self.scheme]
        stratum_of = {c: s for s, classes in strata.items() for c in classes}
        judged = ~np.isnan(x)
        value = np.where(judged, x, 0.0)
        w = weight * self.draws
        labelled = None if self.labelled is None else weight * self.labelled

        def share(classes: tuple[int, ...], v: np.ndarray, importance: np.ndarray | None = None) -> np.ndarray:
            """The mean of ``v`` over the judged draws of ``classes`` (one stratum), each class
            reweighted to its drawn draws (spec §5)."""
            total: float | np.ndarray = 0.0
            drawn_total: float | np.ndarray = 0.0
            for c in classes:
                rows = (self.pair_class == c) & (self.stratum == stratum_of[c])
                scale = 1.0 if importance is None else importance[rows]
                a = w[:, rows] * scale
                judged_a = np.where(judged[:, rows], a if labelled is None else labelled[:, rows] * scale, 0.0)
                drawn, judged_sum = np.sum(a, axis=1), np.sum(judged_a, axis=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    mean = np.sum(judged_a * v[:, rows], axis=1) / judged_sum
                ok = judged_sum > 0
                total = total + np.where(ok, drawn * np.nan_to_num(mean), 0.0)
                drawn_total = drawn_total + np.where(ok, drawn, 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(drawn_total > 0, total / drawn_total, np.nan)

        def scaled(multiplier: float, mean: np.ndarray) -> np.ndarray:
            """``multiplier × mean``; exactly 0 for a class the population does not have."""
            return np.zeros(len(x)) if multiplier == 0.0 else multiplier * mean

        def delta_precision() -> np.ndarray:
            parts = [scaled(float(self.totals[list(c)].sum()), share(c, self.label * value)) for c in strata.values()]
            return np.sum(parts, axis=0)

        split_rate, merge_rate = float(self.rate_totals[SPLIT]), float(self.rate_totals[MERGE])
        p_split, p_merge = share((SPLIT,), value), share((MERGE,), value)
        if self.scheme == "precision":
            return {
                "DeltaPrecision": delta_precision(),
                "GoodSplitRate": scaled(split_rate, 1.0 - p_split),
                "BadSplitRate": scaled(split_rate, p_split),
                "GoodMergeRate": scaled(merge_rate, p_merge),
                "BadMergeRate": scaled(merge_rate, 1.0 - p_merge),
            }
        t = self.totals
        # Self pairs are known, not judged (spec §14): the index is their exact total plus the
        # intersection's total times its own share, as in metrics_core.estimation.
        p_intersection = share((INTERSECTION,), value)
        rate_split = share((SPLIT,), value, self.union_over_base)
        rate_merge = share((MERGE,), value, self.union_over_exp)
        out = {
            "GoodSplitDistance": scaled(t[SPLIT], 1.0 - p_split),
            "BadSplitDistance": scaled(t[SPLIT], p_split),
            "GoodMergeDistance": scaled(t[MERGE], p_merge),
            "BadMergeDistance": scaled(t[MERGE], 1.0 - p_merge),
            "AffectedGoodIndex": t[SELF] + scaled(t[INTERSECTION], p_intersection),
            "AffectedBadIndex": scaled(t[INTERSECTION], 1.0 - p_intersection),
            "DeltaPrecision": delta_precision(),
            "GoodSplitRate": scaled(split_rate, 1.0 - rate_split),
            "BadSplitRate": scaled(split_rate, rate_split),
            "GoodMergeRate": scaled(merge_rate, rate_merge),
            "BadMergeRate": scaled(merge_rate, 1.0 - rate_merge),
        }
        out["GoodDistance"] = out["GoodSplitDistance"] + out["GoodMergeDistance"]
        out["BadDistance"] = out["BadSplitDistance"] + out["BadMergeDistance"]
        out["GoodMinusBadDistance"] = out["GoodDistance"] - out["BadDistance"]
        return out
