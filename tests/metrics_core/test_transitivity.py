"""Inconsistent triangles (abcde-spec §13): by hand, and against brute force on random verdict graphs."""

from itertools import combinations

import numpy as np
import pytest

from metrics_core.transitivity import transitivity_report

VERDICTS = ("equivalent", "not_equivalent", "unsure")


def brute_force(rows):
    """Every triple of items, each pair decided by the majority of its sure verdicts."""
    votes = {}
    for a, b, verdict, _ in rows:
        if a != b:
            votes.setdefault(frozenset((a, b)), []).append(verdict)
    decided = {}
    for pair, vs in votes.items():
        eq, ne = vs.count("equivalent"), vs.count("not_equivalent")
        if eq != ne:
            decided[pair] = "equivalent" if eq > ne else "not_equivalent"
    items = sorted({x for pair in votes for x in pair})
    closed, bad = 0, set()
    for a, b, c in combinations(items, 3):
        edges = [frozenset(e) for e in ((a, b), (a, c), (b, c))]
        if not all(e in decided for e in edges):
            continue
        closed += 1
        labels = [decided[e] for e in edges]
        if labels.count("equivalent") == 2:
            (x, y) = tuple(sorted(edges[labels.index("not_equivalent")]))
            (apex,) = {a, b, c} - {x, y}
            bad.add((apex, x, y))
    return bad, closed


def random_rows(rng, n_items, n_rows, n_raters):
    rows = []
    for _ in range(n_rows):
        a, b = (int(v) for v in rng.integers(0, n_items, 2))
        rows.append((a, b, VERDICTS[rng.choice(3, p=[0.5, 0.4, 0.1])], f"r{rng.integers(n_raters)}"))
    return rows


def report_of(rows, with_raters=True):
    i, j, v, r = (list(col) for col in zip(*rows))
    return transitivity_report(i=i, j=j, verdict=v, rater=r if with_raters else None)


def as_set(triangles):
    return {(t.apex, t.x, t.y) for t in triangles}


@pytest.mark.parametrize("seed", range(40))
def test_counts_equal_brute_force_on_random_verdict_graphs(seed):
    rng = np.random.default_rng(seed)
    rows = random_rows(rng, n_items=int(rng.integers(4, 14)), n_rows=int(rng.integers(5, 80)), n_raters=3)
    report = report_of(rows)
    bad, closed = brute_force(rows)
    assert as_set(report.triangles) == bad
    assert len(report.triangles) == len(bad)
    assert report.closed_triangles == closed
    for rater in {r for *_, r in rows}:
        own = [row for row in rows if row[3] == rater]
        rater_bad, rater_closed = brute_force(own)
        assert as_set(report.per_rater[rater]) == rater_bad, rater
        assert report.closed_per_rater[rater] == rater_closed, rater


def test_rows_order_and_pair_orientation_do_not_matter():
    rng = np.random.default_rng(5)
    rows = random_rows(rng, n_items=10, n_rows=70, n_raters=2)
    flipped = [(b, a, v, r) for a, b, v, r in reversed(rows)]
    first, second = report_of(rows), report_of(flipped)
    assert [t.as_dict() for t in first.triangles] == [
        {
            **t.as_dict(),
            "pairs": [
                {**p, "verdicts": p["verdicts"][::-1], "raters": p["raters"][::-1]} for p in t.as_dict()["pairs"]
            ],
        }
        for t in second.triangles
    ]
    assert first.counts_dict() == second.counts_dict()


def test_a_triangle_lists_its_three_pairs_with_verdicts_and_raters():
    rows = [
        ("a", "b", "equivalent", "ann"),
        ("b", "a", "equivalent", "bob"),
        ("c", "b", "equivalent", "ann"),
        ("a", "c", "not_equivalent", "cy"),
        ("a", "c", "unsure", "ann"),
        ("c", "d", "equivalent", "ann"),  # an open wedge: no triangle
    ]
    report = report_of(rows)
    assert report.closed_triangles == 1
    (triangle,) = report.triangles
    assert triangle.as_dict() == {
        "items": ["b", "a", "c"],
        "pairs": [
            {
                "a": "a",
                "b": "b",
                "verdict": "equivalent",
                "verdicts": ["equivalent", "equivalent"],
                "raters": ["ann", "bob"],
            },
            {"a": "b", "b": "c", "verdict": "equivalent", "verdicts": ["equivalent"], "raters": ["ann"]},
            {
                "a": "a",
                "b": "c",
                "verdict": "not_equivalent",
                "verdicts": ["not_equivalent", "unsure"],
                "raters": ["cy", "ann"],
            },
        ],
    }
    counts = report.counts_dict()
    assert counts["inconsistent_triangles"] == 1 and counts["inconsistent_share"] == 1.0
    # Ann judged a-b, b-c and a-c, but called a-c unsure: her triangle is open.
    assert [(r["rater"], r["inconsistent_triangles"], r["closed_triangles"]) for r in counts["raters"]] == [
        ("ann", 0, 0),
        ("bob", 0, 0),
        ("cy", 0, 0),
    ]


def test_a_rater_who_contradicts_themself_is_counted():
    rows = [(0, 1, "equivalent", 7), (1, 2, "equivalent", 7), (0, 2, "not_equivalent", 7), (0, 2, "equivalent", 8)]
    report = report_of(rows)
    # Overall a-c is a tie (one each way): undecided, so no triangle; rater 7 has one.
    assert report.triangles == [] and report.closed_triangles == 0
    assert as_set(report.per_rater[7]) == {(1, 0, 2)}
    assert report.closed_per_rater == {7: 1, 8: 0}


def test_consistent_verdicts_have_no_triangle_and_no_raters_means_no_per_rater_part():
    labels = [0, 0, 0, 1, 1, 2]
    rows = [
        (a, b, "equivalent" if labels[a] == labels[b] else "not_equivalent", "r") for a, b in combinations(range(6), 2)
    ]
    report = report_of(rows, with_raters=False)
    assert report.triangles == [] and report.closed_triangles == 20
    assert report.per_rater == {} and report.inconsistent_share == 0.0


def test_bad_input_is_refused_naming_the_argument():
    with pytest.raises(ValueError, match="verdict"):
        transitivity_report(i=[1], j=[2], verdict=["maybe"])
    with pytest.raises(ValueError, match="same length"):
        transitivity_report(i=[1, 2], j=[2], verdict=["equivalent"])
