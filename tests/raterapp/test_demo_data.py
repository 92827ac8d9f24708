import numpy as np

from metrics_core import impact_metrics, population_from_labels, quality_from_gold
from raterapp.services.demo import demo_clusterings, febrl_records


def test_febrl3_records_and_their_true_entities():
    records = febrl_records()
    assert records.num_rows == 5000
    assert records["rec_id"][0].as_py() == "rec-1496-org"
    assert records["entity"][0].as_py() == "1496"
    assert len(set(records["entity"].to_pylist())) == 2000


def test_the_demo_change_has_good_and_bad_splits_and_merges():
    records = febrl_records()
    base, exp = demo_clusterings(records)
    population = population_from_labels(base, exp)
    truth = quality_from_gold(population, np.array(records["entity"].to_pylist()))
    for name in ("GoodSplitDistance", "BadSplitDistance", "GoodMergeDistance", "BadMergeDistance"):
        assert truth[name] > 0.001, name
    assert 0.1 < impact_metrics(population).metrics["JaccardDistance"] < 0.3
