"""How many more verdicts an interval needs to reach a target precision.

A standard error shrinks like ``1/sqrt(n)`` in the number of judged draws, so an interval of
half-width ``h`` after ``n`` verdicts reaches ``h*`` after about ``n · (h/h*)²``. This
extrapolation assumes the verdicts to come look like those so far; like Eppo's progress bar
it is optimistic early on, when ``h`` itself is uncertain.

:func:`plan_to_half_width` turns that into judged draws, verdicts and money for the fixed
interval or for the confidence sequence (abcde-spec §9, §10), before the owner draws more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._validation import one_of, positive_int
from .results import Estimate, FlatResult
from .sequential import confidence_sequence_factor, judged_for_half_width


def judgements_to_target(*, half_width: float, judgements: int, target_half_width: float) -> float:
    """Further verdicts expected to bring an interval's half-width down to the target.

    ``0`` when it is already there; ``nan`` when there is nothing to extrapolate from
    (no verdict yet, or an undefined interval).

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
    return float(math.ceil(judgements * (half_width / target_half_width) ** 2 - judgements))


PLAN_KINDS: tuple[str, ...] = ("fixed", "sequence")


@dataclass(frozen=True)
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
        verdicts to come look like those so far.

    Examples
    --------
    >>> e = Estimate(0.1, 0.02, 0.06, 0.14, 400, 500)
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
        return Plan(math.nan, math.nan, math.nan, False)
    if half_width <= target_half_width:
        return Plan(0.0, 0.0, 0.0, True)
    if kind == "fixed":
        more = n * (half_width / target_half_width) ** 2 - n
    else:
        planned = estimate.drawn_draws if horizon is None else positive_int("horizon", horizon)
        if planned <= 0:
            return Plan(math.nan, math.nan, math.nan, False)
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
    return Plan(more, verdicts, verdicts * cost_per_verdict, False)


def _ceil(value: float) -> float:
    """Rounded up, but not for a rounding error: (0.04/0.02)² is 4.000000000000001."""
    return float(math.ceil(value * (1 - 1e-12)))
