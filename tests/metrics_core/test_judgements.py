import numpy as np
import pytest

from metrics_core import verdicts_from_judgements


def test_verdicts_merge_both_orders_and_count_raters():
    v = verdicts_from_judgements(
        [5, 2, 2, 2, 4], [2, 5, 5, 4, 4], ["equivalent", "equivalent", "not_equivalent", "unsure", "not_equivalent"]
    )
    assert list(zip(v.a.tolist(), v.b.tolist())) == [(2, 4), (2, 5)]
    assert v.equivalent.tolist() == [0, 2]
    assert v.not_equivalent.tolist() == [0, 1]
    assert v.unsure.tolist() == [1, 0]


def test_equivalent_share_is_a_soft_label_and_unsure_only_is_unjudged():
    v = verdicts_from_judgements([1, 1, 1, 3], [2, 2, 2, 4], [0, 0, 1, 2])
    share = v.equivalent_share(np.array([2, 1, 3, 7, 6]), np.array([1, 2, 4, 7, 8]))
    assert share[:2].tolist() == [pytest.approx(2 / 3)] * 2
    assert np.isnan(share[2])  # only unsure
    assert share[3] == 1.0  # self pair
    assert np.isnan(share[4])  # never judged


def test_no_judgements_at_all():
    v = verdicts_from_judgements([], [], [])
    assert len(v) == 0
    assert np.isnan(v.equivalent_share(np.array([0]), np.array([1]))).all()


def test_unknown_verdict_is_named():
    with pytest.raises(ValueError, match=r"verdict\[1\] = 'maybe'"):
        verdicts_from_judgements([0, 0], [1, 2], ["equivalent", "maybe"])
