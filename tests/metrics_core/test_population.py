import numpy as np
import pyarrow as pa
import pytest

from metrics_core import population_from_labels


def test_cells_group_items_by_base_and_exp_cluster():
    pop = population_from_labels(["a", "a", "a", "b", "b"], [1, 1, 2, 2, 2], [1.0, 2.0, 3.0, 4.0, 5.0])
    cells = {(pop.base_labels[b], pop.exp_labels[e]) for b, e in zip(pop.cell_base, pop.cell_exp)}
    assert cells == {("a", 1), ("a", 2), ("b", 2)}
    by_cell = {
        (pop.base_labels[pop.cell_base[c]], pop.exp_labels[pop.cell_exp[c]]): pop.cell_weight[c]
        for c in range(len(pop.cell_weight))
    }
    assert by_cell == {("a", 1): 3.0, ("a", 2): 3.0, ("b", 2): 9.0}
    assert pop.base_weight.tolist() == [6.0, 9.0]
    assert pop.exp_weight.tolist() == [3.0, 12.0]
    assert pop.cell_affected().tolist() == [True, True, True]


def test_unchanged_cluster_is_unaffected_and_unit_weights_are_counts():
    pop = population_from_labels([7, 7, 9], [1, 1, 2])
    assert not pop.cell_affected().any()
    assert pop.unit_weights
    assert pop.cell_sets["split"].tolist() == [0.0, 0.0]
    assert pop.total_weight == 3.0


@pytest.mark.parametrize(
    "labels",
    [
        np.array([10**15, -3, 10**15, 5]),  # sparse integers: hashed
        np.array([3, 1, 3, 2]),  # dense integers: indexed
        np.array(["x", "y", "x", "z"]),
        np.array(["x", "y", "x", "z"], dtype=object),
        pa.array(["x", "y", "x", "z"]),
        pa.chunked_array([["x", "y"], ["x", "z"]]),
    ],
)
def test_every_label_kind_gives_the_same_partition(labels):
    pop = population_from_labels(labels, labels)
    assert pop.base[0] == pop.base[2]
    assert len({pop.base[0], pop.base[1], pop.base[3]}) == 3
    assert pop.base_labels[pop.base[3]] == labels[3].as_py() if hasattr(labels[3], "as_py") else labels[3]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"base": [1, 2], "exp": [1]}, "same length"),
        ({"base": [], "exp": []}, "at least one item"),
        ({"base": [1, 2], "exp": [1, 2], "weights": [1.0, 0.0]}, r"weights\[1\] = 0.0"),
        ({"base": [1, 2], "exp": [1, 2], "weights": [np.nan, 1.0]}, r"weights\[0\]"),
        ({"base": [1, 2], "exp": [1, 2], "weights": [1.0, np.inf]}, r"weights\[1\]"),
        ({"base": [1, 2], "exp": [1, 2], "weights": [1.0]}, "weights has 1 values"),
        ({"base": ["a", None], "exp": ["a", "b"]}, r"base\[1\] is missing"),
        ({"base": pa.array(["a", None]), "exp": ["a", "b"]}, r"base\[1\] is missing"),
    ],
)
def test_bad_input_names_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        population_from_labels(**kwargs)
