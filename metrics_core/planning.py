"""How many more verdicts an interval needs to reach a target precision.

A standard error shrinks like ``1/sqrt(n)`` in the number of judged draws, so an interval of
half-width ``h`` after ``n`` verdicts reaches ``h*`` after about ``n · (h/h*)²``. This
extrapolation assumes the verdicts to come look like those so far; like Eppo's progress bar
it is optimistic early on, when ``h`` itself is uncertain.

:func:`plan_to_half_width` turns that into judged draws, verdicts and money for the fixed
interval or for the confidence sequence (abcde-spec §9, §10), before the owner draws more.

:func:`settle_plan` forecasts the verdicts that settle a decision (§9): not the draws at which
the sequence, centred on today's estimate, would clear the margin (optimistic when the estimate
is near the margin, and blind to the verdicts spent on the metric's other classes), but the
median over futures the data allow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import one_of, positive_int
from .results import Estimate, FlatResult
from .sequential import confidence_sequence_factor, judged_for_half_width


def judgements_to_target(*, half_width: float, judgements: int, target_half_width: float) -> float:
    """Further verdicts expected to bring an interval's half-width down to the target.

    ``0`` when it is already there; ``nan`` when there is nothing to extrapolate from
    (no verdict yet, or an undefined interval); ``inf`` when the number passes float64.

    >>> judgements_to_target(half_width=0.04, judgements=500, target_half_width=0.02)
    1500.0
    >>> judgements_to_target(half_width=0.01, judgements=500, target_half_width=0.02)
    0.0
    """
    if not target_half_width > 0:
        raise ValueError(f"target_half_width must be positive, got {target_half_width!r}")
    if judgements < 0:
        raise ValueError(f"judgements must be non-negative, got {judgements!r}")
    if judgements == 0 or not math.isfinite(half_width):
        return math.nan
    if half_width <= target_half_width:
        return 0.0
    return _ceil_or_inf(judgements * _squared_ratio(half_width, target_half_width) - judgements)


PLAN_KINDS: tuple[str, ...] = ("fixed", "sequence")


@dataclass(frozen=True, kw_only=True)
class Plan(FlatResult):
    """What reaching a target half-width is expected to take (abcde-spec §10).

    ``judged_draws`` more judged draws, ``verdicts`` more verdicts (draws per distinct pair and
    replication taken into account) and their ``cost``; ``reached`` when the estimate is already
    there (everything 0). ``nan`` where there is nothing to extrapolate from.
    """

    judged_draws: float
    verdicts: float
    cost: float
    reached: bool


def plan_to_half_width(
    *,
    estimate: Estimate,
    target_half_width: float,
    draws_per_pair: float,
    replication: int,
    cost_per_verdict: float = 0.0,
    kind: str = "fixed",
    horizon: int | None = None,
    confidence: float = 0.95,
) -> Plan:
    """The judged draws, verdicts and money expected to bring an estimate to a target half-width.

    Parameters
    ----------
    estimate : Estimate
        Today's estimate, with ``n = judged_draws``.
    target_half_width : float
        The half-width ``h`` wanted (> 0).
    draws_per_pair : float
        Judged draws a new pair brings (spec §10: today's draws per distinct pair). Pairs are
        drawn again more and more often as the sample grows, so today's ratio overstates the
        new pairs to come; the Good–Turing rate ``draws / pairs drawn once`` (the inverse of
        the chance that a draw is new, :mod:`metrics_core.growth`) is closer: within 25% of a
        simulation where the ratio so far was 30% high (tests/metrics_core/test_planning.py).
    replication : int
        Verdicts wanted per pair.
    cost_per_verdict : float
        Money per verdict (default 0).
    kind : {"fixed", "sequence"}
        ``fixed``: the fixed interval, ``n·(hw/h)² − n`` more judged draws (spec §10).
        ``sequence``: the confidence sequence (spec §9), its formula solved for ``t`` with ``σ̂``
        held at today's value and ρ fixed by ``horizon``.
    horizon : int, optional
        The estimate's own planned judged draws, which fix its sequence's ρ (``sequence``
        only): the experiment's horizon times the share of the estimate's classes. Default:
        the estimate's drawn draws (that share of today's sample, when the horizon is the
        sample's draws).
    confidence : float
        The level the sequence was computed at (``sequence`` only).

    Returns
    -------
    Plan
        ``verdicts = judged_draws / draws_per_pair × replication``, ``cost = verdicts ×
        cost_per_verdict``, the draws and verdicts rounded up. The extrapolation assumes the
        verdicts to come look like those so far. ``inf`` (all three) when the target is out of
        reach: the sequence, ``σ̂`` held, is still wider after e³⁰ judged draws, or the draws pass
        float64.

    Examples
    --------
    >>> e = Estimate(value=0.1, stderr=0.02, ci_low=0.06, ci_high=0.14, judged_draws=400, drawn_draws=500)
    >>> plan_to_half_width(estimate=e, target_half_width=0.02, draws_per_pair=1.25, replication=2,
    ...                    cost_per_verdict=0.1)
    Plan(judged_draws=1200.0, verdicts=1920.0, cost=192.0, reached=False)
    """
    if not target_half_width > 0:
        raise ValueError(f"target_half_width must be positive, got {target_half_width!r}")
    if not draws_per_pair >= 1:
        raise ValueError(f"draws_per_pair must be at least 1, got {draws_per_pair!r}")
    replication = positive_int("replication", replication)
    if not cost_per_verdict >= 0:
        raise ValueError(f"cost_per_verdict must be non-negative, got {cost_per_verdict!r}")
    one_of("kind", kind, PLAN_KINDS)
    n = int(estimate.judged_draws)
    half_width = estimate.half_width if kind == "fixed" else estimate.cs_half_width
    if n == 0 or not math.isfinite(half_width):
        return Plan(judged_draws=math.nan, verdicts=math.nan, cost=math.nan, reached=False)
    if half_width <= target_half_width:
        return Plan(judged_draws=0.0, verdicts=0.0, cost=0.0, reached=True)
    if kind == "fixed":
        more = n * _squared_ratio(half_width, target_half_width) - n
    else:
        planned = estimate.drawn_draws if horizon is None else positive_int("horizon", horizon)
        if planned <= 0:
            return Plan(judged_draws=math.nan, verdicts=math.nan, cost=math.nan, reached=False)
        factor = confidence_sequence_factor(judged=n, horizon=planned, confidence=confidence)
        sigma = half_width / factor * math.sqrt(n)  # σ̂_t of the spec: sqrt(t) · SE
        more = (
            judged_for_half_width(
                sigma=sigma, target_half_width=target_half_width, horizon=planned, confidence=confidence
            )
            - n
        )
    more = _ceil(max(more, 0.0))
    verdicts = _ceil(more / draws_per_pair * replication)
    if math.isinf(verdicts):  # out of reach (or past float64): no finite plan
        return Plan(judged_draws=math.inf, verdicts=math.inf, cost=math.inf, reached=False)
    return Plan(judged_draws=more, verdicts=verdicts, cost=verdicts * cost_per_verdict, reached=False)


def _ceil(value: float) -> float:
    """Rounded up, but not for a rounding error: (0.04/0.02)² is 4.000000000000001; ``inf`` stays ``inf``."""
    return _ceil_or_inf(value * (1 - 1e-12))


def _ceil_or_inf(value: float) -> float:
    """``math.ceil`` as a float, ``inf`` for ``inf`` (which ``math.ceil`` refuses)."""
    return value if math.isinf(value) else float(math.ceil(value))


def _squared_ratio(half_width: float, target_half_width: float) -> float:
    """``(half_width / target_half_width)²``, ``inf`` past float64 (Python's ``**`` raises there)."""
    ratio = half_width / target_half_width
    return ratio * ratio


# The futures of :func:`settle_plan`: enough paths for a median to ~2%, on a log grid to 10⁴·n.
SETTLE_PATHS, SETTLE_STEPS, SETTLE_SPAN = 2000, 400, 1e4


def settle_plan(
    *,
    estimate: Estimate,
    margin: float,
    horizon: int,
    draws_per_pair: float,
    replication: int,
    class_share: float = 1.0,
    cost_per_verdict: float = 0.0,
    confidence: float = 0.95,
    pending_pairs: int = 0,
    pending_draws_per_pair: float = 1.0,
) -> Plan:
    """The judged draws, verdicts and money expected to settle a decision (abcde-spec §9, §10).

    The decision settles at the first look whose sequence lies above ``δ``, below ``−δ`` or
    inside ``[−δ, δ]`` (:func:`metrics_core.decide`). Where that happens depends on the truth,
    which today's estimate ``m`` knows only to within ``σ̂/sqrt(n)``: an estimate one standard
    error from the margin may be on either side of it. The forecast is the median, over
    ``SETTLE_PATHS`` futures, of the judged draws at which the sequence first settles, each
    future drawing its true value from ``N(m, σ̂²/n)`` and its running mean as a Brownian path
    from today's; the half-width follows the sequence's own boundary
    (:func:`~metrics_core.sequential.confidence_sequence_factor`, ρ fixed by ``horizon``), not
    ``1/sqrt(n)``. ``σ̂`` is the sequence's (``cs_half_width / factor · sqrt(n)``), held.
    Deterministic: the futures come from a fixed seed.

    Parameters
    ----------
    estimate : Estimate
        Today's estimate of the deciding metric, with its sequence.
    margin : float
        The equivalence margin ``δ ≥ 0``.
    horizon : int
        The metric's planned judged draws, which fix its sequence's ρ.
    draws_per_pair : float
        Judged draws a verdicted pair of a new batch brings (≥ 1).
    pending_pairs, pending_draws_per_pair : int, float
        Pairs already drawn and waiting for a verdict, judged first, and the draws each brings
        (in draw order, the sample's draws over its pairs): the verdicts count these before
        any pair of a new batch.
    replication : int
        Verdicts wanted per pair.
    class_share : float
        The metric's share of the sample's draws (its ``drawn_draws`` over the sample's draws),
        in (0, 1]: a verdict on a pair of another class does not move the metric.
    cost_per_verdict, confidence
        As in :func:`plan_to_half_width`.

    Returns
    -------
    Plan
        ``judged_draws``: more judged draws of the sample (the metric's, divided by
        ``class_share``); ``verdicts`` and ``cost`` from them as in :func:`plan_to_half_width`.
        ``reached`` (all 0) when today's sequence already decides; ``nan`` with nothing to
        extrapolate from; ``inf`` when fewer than half the futures settle within 10⁴ times
        today's judged draws (the truth may sit on the margin).

    Examples
    --------
    >>> e = Estimate(value=0.05, stderr=0.02, ci_low=0.01, ci_high=0.09, judged_draws=400, drawn_draws=500,
    ...              cs_low=-0.02, cs_high=0.12)
    >>> plan = settle_plan(estimate=e, margin=0.0, horizon=500, draws_per_pair=1.25, replication=1)
    >>> plan
    Plan(judged_draws=296.0, verdicts=237.0, cost=0.0, reached=False)

    When the metric holds half of the sample's draws, twice the judged draws:

    >>> half = settle_plan(estimate=e, margin=0.0, horizon=500, draws_per_pair=1.25, replication=1, class_share=0.5)
    >>> round(half.judged_draws / plan.judged_draws, 2)
    2.0
    """
    margin = float(margin)
    if not (margin >= 0 and math.isfinite(margin)):
        raise ValueError(f"margin must be a non-negative number, got {margin!r}")
    if not draws_per_pair >= 1:
        raise ValueError(f"draws_per_pair must be at least 1, got {draws_per_pair!r}")
    if not 0 < class_share <= 1:
        raise ValueError(f"class_share must be in (0, 1], got {class_share!r}")
    replication = positive_int("replication", replication)
    horizon = positive_int("horizon", horizon)
    if not cost_per_verdict >= 0:
        raise ValueError(f"cost_per_verdict must be non-negative, got {cost_per_verdict!r}")
    n = int(estimate.judged_draws)
    value, half_width = estimate.value, estimate.cs_half_width
    if n == 0 or not (math.isfinite(value) and math.isfinite(half_width)):
        return Plan(judged_draws=math.nan, verdicts=math.nan, cost=math.nan, reached=False)
    if _settled(np.array([value]), np.array([half_width]), margin)[0]:
        return Plan(judged_draws=0.0, verdicts=0.0, cost=0.0, reached=True)
    sigma = half_width / confidence_sequence_factor(judged=n, horizon=horizon, confidence=confidence) * math.sqrt(n)
    metric_draws = _median_settle(value, sigma, n, margin, horizon, confidence) - n
    if not math.isfinite(metric_draws):
        return Plan(judged_draws=math.inf, verdicts=math.inf, cost=math.inf, reached=False)
    more = _ceil(max(metric_draws, 1.0) / class_share)
    pending_rate = max(float(pending_draws_per_pair), 1.0)
    pending = min(max(int(pending_pairs), 0) * pending_rate, more)
    pairs = pending / pending_rate + (more - pending) / draws_per_pair
    verdicts = _ceil(pairs * replication)
    if math.isinf(verdicts):  # a class share so small that its draws pass float64
        return Plan(judged_draws=math.inf, verdicts=math.inf, cost=math.inf, reached=False)
    return Plan(judged_draws=more, verdicts=verdicts, cost=verdicts * cost_per_verdict, reached=False)


def _median_settle(value: float, sigma: float, n: int, margin: float, horizon: int, confidence: float) -> float:
    """The median judged draws at which the futures' sequences first settle (``inf`` past the grid)."""
    rng = np.random.default_rng(20240917)
    t = n * np.exp(np.linspace(0.0, math.log(SETTLE_SPAN), SETTLE_STEPS + 1)[1:])
    steps = np.diff(t, prepend=float(n))
    path = np.cumsum(rng.standard_normal((SETTLE_PATHS, SETTLE_STEPS)) * np.sqrt(steps), axis=1)
    truth = value + sigma / math.sqrt(n) * rng.standard_normal((SETTLE_PATHS, 1))
    mean = (n * value + (t - n) * truth + sigma * path) / t
    half_width = sigma * confidence_sequence_factor(judged=t, horizon=horizon, confidence=confidence) / np.sqrt(t)
    settled = _settled(mean, np.broadcast_to(half_width, mean.shape), margin)
    first = np.where(settled.any(axis=1), t[np.argmax(settled, axis=1)], math.inf)
    return float(np.median(first))


def _settled(value: np.ndarray, half_width: np.ndarray, margin: float) -> np.ndarray:
    """Whether ``value ± half_width`` decides (:func:`metrics_core.decide`'s outcomes)."""
    low, high = value - half_width, value + half_width
    inside = (-margin <= low) & (high <= margin) if margin > 0 else np.zeros(value.shape, dtype=bool)
    return (low > margin) | (high < -margin) | inside
