from datetime import timedelta

import numpy as np
import pyarrow.parquet as pq
import pytest
from django.core.files.storage import default_storage

from metrics_core.io import read_items
from raterapp.models import Experiment
from raterapp.population_files import (
    POPULATION_COLUMNS,
    BoundedCache,
    ExperimentCache,
    population_attributes,
    population_delete,
    population_for_experiment,
    population_write,
)
from tests.raterapp.factories import ExperimentFactory

POPULATION_FIELDS = ("base", "exp", "cell", "weight", "base_labels", "exp_labels", "cell_base", "cell_exp", "base_weight", "exp_weight", "cell_weight")


@pytest.fixture
def experiment(db, media, tmp_path):
    items = tmp_path / "items.csv"
    items.write_text("item_id,base_cluster,exp_cluster,weight\na,B1,E1,1\nb,B1,E1,2\nc,B1,E2,1\nd,B2,E2,0.5\n")
    table = read_items(str(items))
    experiment = ExperimentFactory()
    columns = {"item_id": table.item_id, "base_cluster": table.base_cluster, "exp_cluster": table.exp_cluster, "weight": table.weight}
    experiment.population_file = population_write(experiment_id=experiment.pk, columns={**columns, "shop": ["s1", "s2", None, "s1"]})
    experiment.save()
    experiment.items_path = str(items)
    return experiment


def test_the_population_file_has_the_columns_in_order(experiment):
    schema = pq.read_schema(default_storage.path(experiment.population_file))
    assert schema.names == [*POPULATION_COLUMNS, "shop"]
    assert experiment.population_file == f"experiments/{experiment.pk}/population.parquet"


def test_population_for_experiment_is_the_population_metrics_core_reads_from_the_upload(experiment):
    ids, population = population_for_experiment(experiment)
    expected = read_items(experiment.items_path).to_population()
    assert ids.tolist() == ["a", "b", "c", "d"]
    assert not ids.flags.writeable
    for field in POPULATION_FIELDS:
        np.testing.assert_array_equal(getattr(population, field), getattr(expected, field), err_msg=field)


def test_population_for_experiment_is_cached_until_the_file_changes(experiment):
    first = population_for_experiment(experiment)
    assert population_for_experiment(experiment) is first
    population_write(experiment_id=experiment.pk, columns={"item_id": ["x"], "base_cluster": ["1"], "exp_cluster": ["2"], "weight": [1.0]})
    ids, _ = population_for_experiment(experiment)
    assert ids.tolist() == ["x"]


def test_attributes_of_every_item_or_of_some(experiment):
    assert {name: values.to_pylist() for name, values in population_attributes(experiment).items()} == {"shop": ["s1", "s2", None, "s1"]}
    chosen = population_attributes(experiment, positions=np.array([3, 1]))
    assert chosen["shop"].to_pylist() == ["s1", "s2"]


def test_an_experiment_without_population_file_is_refused(db, media):
    experiment = ExperimentFactory()
    with pytest.raises(ValueError, match=f"experiment {experiment.pk} has no population file yet"):
        population_for_experiment(experiment)


def test_delete_removes_the_file_and_tolerates_its_absence(experiment):
    population_delete(experiment_id=experiment.pk)
    assert not default_storage.exists(experiment.population_file)
    population_delete(experiment_id=experiment.pk)


def test_the_bounded_cache_keeps_the_most_recently_used_entries():
    cache = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c"), len(cache)) == (1, None, 3, 2)
    cache.pop("a")
    cache.pop("missing")
    assert cache.keys() == ["c"]
    with pytest.raises(ValueError, match="maxsize"):
        BoundedCache(0)


def test_the_sample_cache_of_the_selectors_is_bounded(experiment, monkeypatch):
    """However many experiments a process reads, it keeps the samples of a few."""
    from raterapp.selectors import samples

    monkeypatch.setattr(samples, "_FIXED", ExperimentCache(samples.SAMPLE_CACHE_SIZE))
    experiment.status = experiment.Status.RATING
    for version in range(samples.SAMPLE_CACHE_SIZE + 3):
        experiment.sample_version = version
        samples.judged_sample_get(experiment=experiment)
    assert len(samples._FIXED) == 1  # one experiment: its older versions make way
    others = [ExperimentFactory(population_file=experiment.population_file, status="rating") for _ in range(12)]
    for other in others:
        samples.judged_sample_get(experiment=other)
    assert len(samples._FIXED) == samples.SAMPLE_CACHE_SIZE
    assert set(samples._FIXED.experiments()) == {other.pk for other in others[-samples.SAMPLE_CACHE_SIZE :]}


def test_the_experiment_cache_reads_again_when_a_version_changes_and_keeps_one_entry(db):
    cache = ExperimentCache(2)
    experiment = ExperimentFactory()
    reads = []

    def read(value):
        return lambda: reads.append(value) or value

    assert cache.get_or_read(experiment, 1, read("a")) == "a"
    assert cache.get_or_read(experiment, 1, read("b")) == "a"  # kept
    assert cache.get_or_read(experiment, 2, read("c")) == "c"  # another version: read again
    assert cache.get_or_read(experiment, 1, read("d")) == "d"  # the old one was replaced
    assert (reads, len(cache)) == (["a", "c", "d"], 1)
    assert cache.get_or_read(experiment, 3, read("e"), keep=False) == "e"
    assert cache.get_or_read(experiment, 1, read("f")) == "d"  # not kept: the entry stays
    reused = Experiment(pk=experiment.pk, created_at=experiment.created_at + timedelta(seconds=1))
    # SQLite may reuse a rolled-back row's id
    assert cache.get_or_read(reused, 1, read("g")) == "g"
