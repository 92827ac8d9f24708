"""Experiments prepared on Dask (issue #8): items from a Parquet location or a large upload, the
preparation on a Dask cluster (a LocalCluster's scheduler address, as DASK_SCHEDULER_ADDRESS), and
estimates from the stored sample context equal to metrics_core's on the whole population."""

import uuid

import dask
import numpy as np
import pandas as pd
import pytest
from django.core.exceptions import ValidationError

import metrics_core as mc
from raterapp.models import Experiment, ImpactGroup, Item, PairTask, SampledPair
from raterapp.selectors.explorer_pair import explorer_pair_get
from raterapp.selectors.samples import sampled_pairs_rows
from raterapp.selectors.slices import experiment_slices_get
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.preparation.dask_engine import dask_session
from raterapp.services.preparation.pipeline import experiment_prepare
from raterapp.services.refresh.derived import derived_refresh
from raterapp.services.refresh.estimates import estimates_refresh
from tests.metrics_core.dask_run import write_parts
from tests.raterapp.factories import make_raters
from tests.raterapp.services.files import experiment_made, parquet_bytes, upload

Status = Experiment.Status
pytestmark = pytest.mark.usefixtures("media")
N = 400


@pytest.fixture
def scheduler(dask_cluster_client):
    """A real Dask scheduler with two workers (the module's), reached by address as a deployment would."""
    return dask_cluster_client.scheduler.address


def population_frame(seed=3):
    rng = np.random.default_rng(seed)
    gold = np.arange(N) // 4
    base = np.where(rng.random(N) < 0.2, gold + 1000, gold // 2)
    exp = np.where(rng.random(N) < 0.5, gold + 5000, base)
    frame = pd.DataFrame(
        {
            "item_id": [f"p{k:04d}" for k in range(N)],
            "base_cluster": base,
            "exp_cluster": exp,
            "weight": rng.uniform(0.5, 2.0, N),
            "shop": [f"s{k % 3}" for k in range(N)],
        }
    )
    return frame, gold


def catalogue(frame):
    text = "item_id,title\n" + "".join(f"{item},Item {item}\n" for item in frame["item_id"])
    return upload("catalogue.csv", text)


def judge_all(experiment, gold):
    rater = make_raters(1)[0]
    position = {item: k for k, item in enumerate(population_frame()[0]["item_id"])}
    while (task := assignment_next(experiment=experiment, rater=rater)) is not None:
        same = gold[position[task.item_a.item_id]] == gold[position[task.item_b.item_id]]
        judgement_submit(
            task=task, rater=rater, verdict="equivalent" if same else "not_equivalent", client_id=uuid.uuid4()
        )


@pytest.mark.slow
def test_an_experiment_from_a_location_is_prepared_on_the_dask_cluster(engineer, settings, tmp_path, scheduler):
    frame, gold = population_frame()
    folder = write_parts(frame, tmp_path / "data" / "items", 4)
    settings.DATA_LOCATIONS = [str(tmp_path / "data") + "/"]
    settings.DASK_SCHEDULER_ADDRESS = scheduler
    experiment = experiment_made(
        owner=engineer,
        name="big",
        files={"catalogue": catalogue(frame)},
        items_location=str(folder),
        n_draws=800,
        seed=5,
    )
    assert experiment.engine == Experiment.Engine.DASK
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert experiment.status == Status.RATING, experiment.error
    assert (experiment.items_count, experiment.population_file) == (N, "")

    population = mc.population_from_labels(frame["base_cluster"], frame["exp_cluster"], frame["weight"])
    assert experiment.impact["metrics"] == pytest.approx(mc.impact_metrics(population).as_dict()["metrics"], rel=1e-12)
    shops = ImpactGroup.objects.filter(experiment=experiment, dimension="shop")
    assert sorted(shops.values_list("label", flat=True)) == ["s0", "s1", "s2"]
    assert ImpactGroup.objects.filter(experiment=experiment, dimension="base").exists()
    # Only the sampled items are stored, with their clusters and weights.
    items = Item.objects.filter(experiment=experiment)
    stored = frame.set_index("item_id").loc[list(items.values_list("item_id", flat=True))]
    assert sorted(items.values_list("weight", flat=True)) == sorted(stored["weight"].tolist())
    assert items.count() < N
    assert not SampledPair.objects.filter(experiment=experiment, vantage_union__isnull=True).exists()
    assert PairTask.objects.filter(experiment=experiment).count() > 0

    judge_all(experiment, gold)
    snapshot = estimates_refresh(experiment_id=experiment.pk)
    # The estimates are metrics_core's on the whole population and the stored sample.
    position = {item: k for k, item in enumerate(frame["item_id"])}
    pairs = pd.DataFrame(sampled_pairs_rows(experiment=experiment))
    sample = mc.PairSample.from_columns(
        population,
        scheme=experiment.scheme,
        i=pairs["i"].map(position),
        j=pairs["j"].map(position),
        draws=pairs["draws"],
        pair_class=pairs["pair_class"],
        stratum=pairs["stratum"],
    )
    a = sample.i[sample.pair_class != 0]
    b = sample.j[sample.pair_class != 0]
    verdicts = mc.verdicts_from_judgements(a, b, np.where(gold[a] == gold[b], "equivalent", "not_equivalent"))
    expected = mc.estimate_quality(population, sample, verdicts).as_dict()["estimates"]
    for name, estimate in expected.items():
        for key, value in estimate.items():
            assert snapshot.estimates["estimates"][name][key] == (
                None if value is None else pytest.approx(value, rel=1e-9, abs=1e-12)
            ), (name, key)
    contributions = mc.jaccard_contributions(population, sample)
    assert pairs["jaccard_contribution"].to_numpy() == pytest.approx(contributions, rel=1e-9)
    settings.DERIVED_BOOTSTRAP_REPLICATES = 50
    assert derived_refresh(experiment_id=experiment.pk).payload["estimates"]["DeltaRecall"]["value"] is not None
    slices = experiment_slices_get(experiment=experiment, attribute="shop")
    assert slices["estimated_values"] == 0 and "Dask" in slices["note"]
    # The pair explorer shows each item's clusters as far as the sample knows them.
    pair = SampledPair.objects.filter(experiment=experiment, pair_class="split").select_related("vantage", "partner")[0]
    shown = explorer_pair_get(experiment=experiment, pair=pair)
    base = shown["items"][0]["base_cluster"]
    assert base["complete"] is False and base["members"][0]["item_id"] == pair.vantage.item_id
    members = frame[frame["base_cluster"].astype(str) == base["label"]]["item_id"]
    assert {m["item_id"] for m in base["members"]} <= set(members)


def test_a_large_parquet_upload_is_prepared_on_dask_in_the_worker(engineer, settings):
    frame, _ = population_frame(seed=4)
    settings.DASK_SCHEDULER_ADDRESS = ""
    settings.DASK_THRESHOLD_BYTES = 1000  # this upload is "large"
    files = {"items": upload("items.parquet", parquet_bytes(frame.to_dict("list"))), "catalogue": catalogue(frame)}
    experiment = experiment_made(owner=engineer, name="large", files=files, n_draws=300, seed=2)
    assert experiment.engine == Experiment.Engine.DASK
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert experiment.status == Status.RATING, experiment.error
    settings.DASK_THRESHOLD_BYTES = 10**12
    small = experiment_made(owner=engineer, name="small", files=files, n_draws=300, seed=2)
    assert small.engine == Experiment.Engine.MEMORY


def test_a_bad_location_fails_with_its_problem_and_leaves_nothing(engineer, settings, tmp_path):
    frame, _ = population_frame()
    frame.loc[7, "weight"] = -1.0
    folder = write_parts(frame, tmp_path / "data" / "items", 2)
    settings.DATA_LOCATIONS = [str(tmp_path / "data")]
    experiment = experiment_made(
        owner=engineer, name="bad", files={"catalogue": catalogue(frame)}, items_location=str(folder)
    )
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert experiment.status == Status.FAILED
    assert experiment.error == f"{folder}: item_id 'p0007': weight -1.0 must be greater than 0"  # as in memory
    assert not Item.objects.filter(experiment=experiment).exists()


def test_locations_are_refused_unless_allowed(engineer, settings, tmp_path):
    frame, _ = population_frame()
    settings.DATA_LOCATIONS = []
    with pytest.raises(ValidationError) as raised:
        experiment_made(owner=engineer, name="x", files={"catalogue": catalogue(frame)}, items_location="/etc")
    assert raised.value.message_dict["items_location"] == [
        "reading from a location is not enabled on this server (DATA_LOCATIONS)"
    ]
    settings.DATA_LOCATIONS = [str(tmp_path) + "/"]
    for location in ("/etc/passwd", f"{tmp_path}/../etc"):
        with pytest.raises(ValidationError) as raised:
            experiment_made(owner=engineer, name="x", files={"catalogue": catalogue(frame)}, items_location=location)
        assert raised.value.message_dict["items_location"] == [f"must be under one of: {tmp_path}/"]
    with pytest.raises(ValidationError) as raised:
        experiment_made(
            owner=engineer,
            name="x",
            files={"catalogue": catalogue(frame), "ground_truth": upload("gold.csv", "item_id,cluster_id\na,1\n")},
            items_location=f"{tmp_path}/items",
        )
    assert "ground-truth clustering needs the in-memory engine" in raised.value.message_dict["files"][0]
    assert not Experiment.objects.exists()


def catalogue_parts(frame, folder, *, extra_rows=0):
    """A Parquet catalogue of every item (and ``extra_rows`` of items not in the population), in 3 parts."""
    ids = list(frame["item_id"]) + [f"other{k}" for k in range(extra_rows)]
    table = pd.DataFrame({"item_id": ids, "title": [f"Title {i}" for i in ids], "colour": ["red"] * len(ids)})
    return write_parts(table, folder, 3)


def test_the_catalogue_can_come_from_a_location_too(engineer, settings, tmp_path):
    frame, _ = population_frame(seed=6)
    items = write_parts(frame, tmp_path / "data" / "items", 2)
    cards = catalogue_parts(frame, tmp_path / "data" / "catalogue", extra_rows=500)
    settings.DATA_LOCATIONS = [str(tmp_path / "data") + "/"]
    experiment = experiment_made(
        owner=engineer, name="both", files={}, items_location=str(items), catalogue_location=str(cards), n_draws=200
    )
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert experiment.status == Status.RATING, experiment.error
    stored = Item.objects.filter(experiment=experiment)
    assert stored.count() > 0
    assert all(item.title == f"Title {item.item_id}" for item in stored)
    assert all(item.attributes["colour"] == "red" and item.attributes["shop"].startswith("s") for item in stored)


def test_a_catalogue_location_without_a_sampled_item_fails_naming_it(engineer, settings, tmp_path):
    frame, _ = population_frame(seed=6)
    items = write_parts(frame, tmp_path / "data" / "items", 2)
    cards = catalogue_parts(frame.iloc[1:], tmp_path / "data" / "catalogue")
    bad = write_parts(pd.DataFrame({"item_id": ["a"], "name": ["A"]}), tmp_path / "data" / "bad", 1)
    settings.DATA_LOCATIONS = [str(tmp_path / "data") + "/"]
    created = [
        experiment_made(
            owner=engineer,
            name=f"e{k}",
            files={},
            items_location=str(items),
            catalogue_location=str(c),
            n_draws=3000,
            seed=1,
        )
        for k, c in enumerate((cards, bad))
    ]
    for experiment in created:
        experiment_prepare(experiment_id=experiment.pk)
        experiment.refresh_from_db()
        assert experiment.status == Status.FAILED
    assert created[0].error == f"{cards}: no row for item_id 'p0000' of {items}"
    assert created[1].error == f"{bad}: missing column 'title' (columns found: 'item_id', 'name')"
    assert not Item.objects.exists()


def test_a_catalogue_location_needs_an_items_location_and_no_upload(engineer, settings, tmp_path):
    frame, _ = population_frame()
    settings.DATA_LOCATIONS = [str(tmp_path) + "/"]
    files = {"items": upload("items.csv", "item_id,base_cluster,exp_cluster\na,1,1\n"), "catalogue": catalogue(frame)}
    with pytest.raises(ValidationError) as raised:
        experiment_made(owner=engineer, name="x", files=files, catalogue_location=f"{tmp_path}/cards")
    assert raised.value.message_dict["catalogue_location"] == [
        "a catalogue location goes with an items location",
        "give the catalogue either as a location or as an uploaded file, not both",
    ]
    with pytest.raises(ValidationError) as raised:
        experiment_made(
            owner=engineer, name="x", files={}, items_location=f"{tmp_path}/items", catalogue_location="/etc/cards"
        )
    assert raised.value.message_dict["catalogue_location"] == [f"must be under one of: {tmp_path}/"]


def test_without_a_scheduler_address_a_preparation_computes_on_local_threads(dask_cluster_client, settings):
    """Even where the process holds a default client of another cluster (the module's here): the
    preparation's data must not go to a cluster nobody configured."""
    settings.DASK_SCHEDULER_ADDRESS = ""
    with dask_session() as client:
        assert client is None
        assert dask.base.get_scheduler() is dask.threaded.get
    settings.DASK_SCHEDULER_ADDRESS = dask_cluster_client.scheduler.address
    with dask_session() as client:
        assert dask.base.get_scheduler() == client.get
