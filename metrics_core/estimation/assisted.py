"""Model-assisted quality estimates (abcde-spec §15): every estimate of §14 with a pair score's help."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from .._validation import positive_int
from ..context import SampleContext
from ..judgements import PairVerdicts
from ..masses import SELF
from ..population import Population
from ..results import QualityEstimates, json_number
from ..sampling import PAIR_CLASSES, SCHEME_STRATA, STRATA, PairSample
from .assist import UNSURE_WARNING, Assist
from .draws import Draws
from .estimator import Estimator
from .labelled import METRIC_CLASSES
from .quality import quality_of_draws
from .schemes import STRATUM_OF, scheme_estimates
from .unsure import with_unsure_bounds


@dataclass(frozen=True, kw_only=True)
class AssistedClass:
    """One (stratum, class) of a model-assisted estimate: how much its score helped."""

    stratum: str
    pair_class: str
    judged_pairs: int
    rule: str  # "none" (λ = 0), "raw" (the raw score) or "calibrated" (spec §15's small-class rule)
    lam: float
    verdicts_saved: float  # SE₀²/SE² of the class's share at the same verdicts
    unsure_share: float  # share of the class's labelled pairs with only unsure verdicts

    def as_dict(self) -> dict:
        return {
            "stratum": self.stratum,
            "pair_class": self.pair_class,
            "judged_pairs": self.judged_pairs,
            "rule": self.rule,
            "lambda": json_number(self.lam),
            "verdicts_saved": json_number(self.verdicts_saved),
            "unsure_share": json_number(self.unsure_share),
            "unsure_warning": bool(self.unsure_share > UNSURE_WARNING),
        }


@dataclass(frozen=True)
class ModelAssistedEstimates:
    """The model-assisted estimates, each with its ``λ`` (one-class metrics; NaN for sums over
    classes) and ``verdicts_saved`` (SE₀²/SE² against the human-only estimate), the classes, and
    the human-only estimates of the same verdicts (``human``)."""

    quality: QualityEstimates
    human: QualityEstimates
    lambdas: Mapping[str, float] = field(default_factory=dict)
    verdicts_saved: Mapping[str, float] = field(default_factory=dict)
    classes: tuple[AssistedClass, ...] = ()
    # The fitted assistance (λ and calibrated scores), for ΔRecall and IQ of the same draws.
    assist: Assist | None = field(default=None, repr=False, compare=False)

    def __getitem__(self, name: str):
        return self.quality[name]

    def as_dict(self) -> dict:
        estimates = {
            name: e.as_dict()
            | {"lambda": json_number(self.lambdas[name]), "verdicts_saved": json_number(self.verdicts_saved[name])}
            for name, e in self.quality.estimates.items()
        }
        return {"estimates": estimates, "classes": [c.as_dict() for c in self.classes]}


def estimate_quality_assisted(
    population: Population | SampleContext,
    sample: PairSample,
    verdicts: PairVerdicts,
    scores: Any,
    *,
    confidence: float = 0.95,
    horizon: int | None = None,
    labelled_draws: Any = None,
    score_lambda: float | None = None,
) -> ModelAssistedEstimates:
    """:func:`~metrics_core.estimate_quality` assisted by a score of every sample row (abcde-spec §15).

    ``scores``: one finite number per sample row (a pair's two rows the same), higher meaning more
    likely equivalent: a probability, or any real scale. ``labelled_draws`` as for
    :func:`~metrics_core.estimate_quality`: model assistance needs draw order, and without it (or with
    every draw judged, or fewer than 20 judged pairs in a class) a class's estimate is the human-only
    one. ``score_lambda`` fixes ``λ`` in [0, 1] for every class (0: the human-only estimates).

    Examples
    --------
    With ``score_lambda=0`` the estimates are the human-only ones.

    >>> import numpy as np
    >>> from metrics_core import estimate_quality, population_from_labels, sample_pairs, verdicts_from_judgements
    >>> pop = population_from_labels([0, 0, 0], [0, 0, 1])
    >>> s = sample_pairs(pop, n_draws=200, rng=np.random.default_rng(0))
    >>> v = verdicts_from_judgements([0, 1], [2, 2], ["not_equivalent"] * 2)
    >>> q = estimate_quality_assisted(pop, s, v, np.ones(len(s)), score_lambda=0.0)
    >>> q["GoodSplitDistance"] == estimate_quality(pop, s, v)["GoodSplitDistance"]
    True
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if score_lambda is not None and not 0.0 <= score_lambda <= 1.0:
        raise ValueError(f"score_lambda must be within [0, 1], got {score_lambda!r}")
    horizon = sample.n_draws if horizon is None else positive_int("horizon", horizon)
    draws = Draws.build(population, sample, verdicts, None, labelled_draws)
    full = draws if labelled_draws is None else Draws.build(population, sample, verdicts, None, None)
    return assisted_of_draws(draws, full, sample, scores, confidence, horizon, score_lambda)


def assisted_of_draws(
    draws: Draws,
    full: Draws,
    sample: PairSample,
    scores: Any,
    confidence: float,
    horizon: int,
    score_lambda: float | None,
    human: QualityEstimates | None = None,
) -> ModelAssistedEstimates:
    """:func:`estimate_quality_assisted` of draws already built (``full``: every drawn draw), beside
    the ``human`` estimates of the same draws when they are at hand."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    scheme = sample.scheme
    if human is None:
        human = quality_of_draws(draws, scheme, confidence, horizon)
    assist = Assist(draws, full, sample, scores, score_lambda)
    estimator = Estimator(draws, z, confidence, horizon, assist=assist)
    estimates = with_unsure_bounds(scheme_estimates(estimator, scheme), estimator, scheme)
    ordered = {name: estimates[name] for name in human.estimates}
    quality = QualityEstimates(scheme=scheme, confidence=confidence, estimates=ordered)
    lambdas, saved = {}, {}
    for name, estimate in quality.estimates.items():
        classes = METRIC_CLASSES.get(name, ())
        share_of = STRATUM_OF[scheme]
        lambdas[name] = (
            assist.lambdas.get((4 * share_of[classes[0]] + classes[0], "share", None), 0.0)
            if len(classes) == 1 and not name.endswith("Rate")
            else math.nan
        )
        saved[name] = _saved(human[name].stderr, estimate.stderr)
    return ModelAssistedEstimates(quality, human, lambdas, saved, _classes(assist, scheme), assist)


def _saved(human: float, assisted: float) -> float:
    if not (math.isfinite(human) and math.isfinite(assisted)):
        return math.nan
    return (human / assisted) ** 2 if assisted > 0 else 1.0


def _classes(assist: Assist, scheme: str) -> tuple[AssistedClass, ...]:
    labelled = assist.judged_pairs + assist.unsure_pairs
    out = []
    for stratum, classes in SCHEME_STRATA[scheme].items():
        for c in classes:
            g = 4 * stratum + c
            if c == SELF:
                continue
            out.append(
                AssistedClass(
                    stratum=STRATA[stratum],
                    pair_class=PAIR_CLASSES[c],
                    judged_pairs=int(assist.judged_pairs[g]),
                    rule=str(assist.rules[g]),
                    lam=assist.lambdas.get((g, "share", None), 0.0),
                    verdicts_saved=assist.saved.get((g, "share", None), 1.0),
                    unsure_share=float(assist.unsure_pairs[g] / labelled[g]) if labelled[g] else 0.0,
                )
            )
    return tuple(out)
