"""Transitivity of verdicts: triangles that cannot all be right (abcde-spec §13).

Equivalence is transitive, so three items whose pairs were judged *equivalent*, *equivalent*
and *not equivalent* hold at least one wrong verdict: an **inconsistent triangle**.

Conventions (ours):

- Per experiment, a pair's verdict is the majority of its sure verdicts (*unsure* does not
  count, as in §5): *equivalent* when more than half say so, *not equivalent* when fewer than
  half do; a tie, or only *unsure*, leaves the pair out.
- Per rater, the same with that rater's verdicts only: the triangles a rater contradicts
  themself on, all three pairs judged by them.
- A **closed** triangle has all three pairs decided; the share of closed triangles that are
  inconsistent is the consistency measure (lower is better), NaN without closed triangles.
- Items are any hashable ids (positions or item ids); triangles are reported with their items
  sorted where they can be, so that results do not depend on the order of the rows.

Counting visits each decided pair once and intersects its ends' neighbours, so it costs
O(Σ over pairs of the smaller degree), without listing every triple of items.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import as_1d, same_length
from .agreement import verdict_codes
from .judgements import EQUIVALENT, NOT_EQUIVALENT, VERDICTS


@dataclass(frozen=True)
class JudgedPair:
    """One pair of a triangle: its items, decided verdict, and every verdict and rater on it."""

    a: Hashable
    b: Hashable
    verdict: str
    verdicts: tuple[str, ...]
    raters: tuple[Hashable, ...]

    def as_dict(self) -> dict:
        return {
            "a": _plain(self.a),
            "b": _plain(self.b),
            "verdict": self.verdict,
            "verdicts": list(self.verdicts),
            "raters": [_plain(r) for r in self.raters],
        }


@dataclass(frozen=True)
class InconsistentTriangle:
    """Items ``apex``, ``x``, ``y``: ``apex`` ≡ ``x`` and ``apex`` ≡ ``y`` were judged
    *equivalent* and ``x``, ``y`` *not equivalent*. ``pairs`` are (apex, x), (apex, y), (x, y)."""

    apex: Hashable
    x: Hashable
    y: Hashable
    pairs: tuple[JudgedPair, JudgedPair, JudgedPair]

    def as_dict(self) -> dict:
        return {
            "items": [_plain(self.apex), _plain(self.x), _plain(self.y)],
            "pairs": [p.as_dict() for p in self.pairs],
        }


@dataclass(frozen=True)
class TransitivityReport:
    """Inconsistent triangles of the experiment and of each rater.

    Attributes
    ----------
    triangles : list of InconsistentTriangle
        The experiment's, from each pair's majority verdict.
    closed_triangles : int
        The experiment's triangles with all three pairs decided.
    per_rater : dict
        Rater → that rater's own inconsistent triangles (their verdicts only).
    closed_per_rater : dict
        Rater → their closed triangles.
    """

    triangles: list[InconsistentTriangle]
    closed_triangles: int
    per_rater: dict[Hashable, list[InconsistentTriangle]]
    closed_per_rater: dict[Hashable, int]

    @property
    def inconsistent_share(self) -> float:
        return len(self.triangles) / self.closed_triangles if self.closed_triangles else float("nan")

    def counts_dict(self) -> dict:
        """JSON-ready counts: the experiment's and each rater's (raters in the report's order)."""
        share = lambda bad, closed: bad / closed if closed else None  # noqa: E731
        return {
            "inconsistent_triangles": len(self.triangles),
            "closed_triangles": self.closed_triangles,
            "inconsistent_share": share(len(self.triangles), self.closed_triangles),
            "raters": [
                {
                    "rater": _plain(rater),
                    "inconsistent_triangles": len(found),
                    "closed_triangles": self.closed_per_rater[rater],
                    "inconsistent_share": share(len(found), self.closed_per_rater[rater]),
                }
                for rater, found in self.per_rater.items()
            ],
        }


def transitivity_report(*, i: Any, j: Any, verdict: Any, rater: Any = None) -> TransitivityReport:
    """Find the inconsistent triangles of an experiment's verdicts, overall and per rater.

    Parameters
    ----------
    i, j : array-like of hashable
        The items of each verdict's pair (either order; ``i == j`` rows are ignored).
    verdict : array-like
        Names from :data:`~metrics_core.judgements.VERDICTS`, or their codes 0, 1, 2.
    rater : array-like of hashable, optional
        Who gave each verdict; without it there is no per-rater part.

    Returns
    -------
    TransitivityReport

    Examples
    --------
    Ann says a ≡ b and b ≡ c, Bob says a ≢ c: the experiment has one inconsistent triangle
    with apex b, and neither rater contradicts themself.

    >>> report = transitivity_report(
    ...     i=["a", "b", "a"], j=["b", "c", "c"],
    ...     verdict=["equivalent", "equivalent", "not_equivalent"], rater=["ann", "ann", "bob"],
    ... )
    >>> [(t.apex, t.x, t.y) for t in report.triangles], report.closed_triangles
    ([('b', 'a', 'c')], 1)
    >>> {r: len(found) for r, found in report.per_rater.items()}
    {'ann': 0, 'bob': 0}
    """
    i, j = as_1d("i", i), as_1d("j", j)
    codes = verdict_codes("verdict", verdict)
    raters = None if rater is None else as_1d("rater", rater)
    if raters is None:
        same_length(i=i, j=j, verdict=codes)
    else:
        same_length(i=i, j=j, verdict=codes, rater=raters)
    rows = [
        (_ordered(a, b), int(code), None if raters is None else raters[k])
        for k, (a, b, code) in enumerate(zip(i.tolist(), j.tolist(), codes.tolist()))
        if a != b
    ]
    triangles, closed = _triangles(rows)
    per_rater, closed_per_rater = {}, {}
    if raters is not None:
        by_rater: dict[Hashable, list] = {_plain(name): [] for name in raters.tolist()}
        for row in rows:
            by_rater[_plain(row[2])].append(row)
        for name in _sorted(by_rater):
            per_rater[name], closed_per_rater[name] = _triangles(by_rater[name])
    return TransitivityReport(triangles, closed, per_rater, closed_per_rater)


def _triangles(rows: list[tuple[tuple[Hashable, Hashable], int, Any]]) -> tuple[list[InconsistentTriangle], int]:
    """The inconsistent triangles among the decided pairs of ``rows``, and the closed ones' count."""
    votes: dict[tuple[Hashable, Hashable], list] = defaultdict(list)
    for pair, code, rater in rows:
        votes[pair].append((code, rater))
    decided = {pair: _majority(v) for pair, v in votes.items()}
    decided = {pair: d for pair, d in decided.items() if d is not None}
    equivalent_of: dict[Hashable, set] = defaultdict(set)
    neighbours: dict[Hashable, set] = defaultdict(set)
    for (a, b), d in decided.items():
        neighbours[a].add(b)
        neighbours[b].add(a)
        if d == EQUIVALENT:
            equivalent_of[a].add(b)
            equivalent_of[b].add(a)
    closed = sum(len(_common(neighbours, a, b)) for a, b in decided) // 3
    found = []
    for (x, y), d in decided.items():
        if d != NOT_EQUIVALENT:
            continue
        for apex in _sorted(_common(equivalent_of, x, y)):
            with_x, with_y, opposite = (
                _judged(_ordered(p, q), decided, votes) for p, q in ((apex, x), (apex, y), (x, y))
            )
            found.append(InconsistentTriangle(apex, x, y, (with_x, with_y, opposite)))
    found.sort(key=lambda t: _sort_key((t.x, t.y, t.apex)))
    return found, closed


def _majority(votes: list[tuple[int, Any]]) -> int | None:
    equivalent = sum(code == EQUIVALENT for code, _ in votes)
    not_equivalent = sum(code == NOT_EQUIVALENT for code, _ in votes)
    if equivalent > not_equivalent:
        return EQUIVALENT
    if not_equivalent > equivalent:
        return NOT_EQUIVALENT
    return None


def _common(adjacency: dict[Hashable, set], a: Hashable, b: Hashable) -> set:
    first, second = adjacency.get(a, set()), adjacency.get(b, set())
    return first & second if len(first) <= len(second) else second & first


def _judged(pair: tuple[Hashable, Hashable], decided: dict, votes: dict) -> JudgedPair:
    return JudgedPair(
        pair[0],
        pair[1],
        VERDICTS[decided[pair]],
        tuple(VERDICTS[code] for code, _ in votes[pair]),
        tuple(_plain(rater) for _, rater in votes[pair]),
    )


def _ordered(a: Any, b: Any) -> tuple[Any, Any]:
    """``(a, b)`` in order: by value when the two compare (ids of one type), else by their repr."""
    try:
        return (a, b) if a <= b else (b, a)
    except TypeError:
        return (a, b) if repr(a) <= repr(b) else (b, a)


def _sorted(values: Iterable[Hashable]) -> list:
    return sorted(values, key=_sort_key)


def _sort_key(value: Any) -> Any:
    # Mixed types (an int id beside a text one) sort by their text rather than failing.
    if isinstance(value, tuple):
        return tuple(_sort_key(v) for v in value)
    return (type(value).__name__, value) if isinstance(value, (int, float, str)) else ("~", repr(value))


def _plain(value: Any) -> Any:
    """numpy scalars as Python values, so that reports compare and serialise plainly."""
    return value.item() if isinstance(value, np.generic) else value
