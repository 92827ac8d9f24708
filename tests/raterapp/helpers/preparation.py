"""Experiments made from uploads and prepared by the pipeline, and the rows it stores."""

from django.core.files.storage import default_storage

from raterapp.models import Experiment, ImpactGroup, Item, PairTask, SampledPair
from raterapp.population_files import population_storage_name
from raterapp.services.preparation.pipeline import experiment_prepare
from tests.raterapp.services.files import experiment_made, tiny_files


def created(owner, *, files=None, checked=True, **params) -> Experiment:
    params = {"seed": 7, "n_draws": 50, **params}
    return experiment_made(owner=owner, name="change", files=files or tiny_files(), checked=checked, **params)


def prepared(owner, **kwargs) -> Experiment:
    experiment = created(owner, **kwargs)
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    return experiment


def rows_of(experiment: Experiment) -> dict:
    """Every row the preparation stores, by natural keys (primary keys differ between runs)."""
    mine = {"experiment": experiment}
    return {
        "items": list(
            Item.objects.filter(**mine)
            .order_by("position")
            .values_list(
                "item_id",
                "position",
                "title",
                "description",
                "image_url",
                "url",
                "attributes",
                "base_cluster",
                "exp_cluster",
                "weight",
            )
        ),
        "pairs": sorted(
            SampledPair.objects.filter(**mine).values_list(
                "vantage__item_id", "partner__item_id", "pair_class", "stratum", "draws", "task__rank"
            )
        ),
        "tasks": list(
            PairTask.objects.filter(**mine)
            .order_by("rank")
            .values_list("rank", "item_a__item_id", "item_b__item_id", "wanted", "verdicts")
        ),
        "groups": sorted(
            ImpactGroup.objects.filter(**mine).values_list(
                "dimension", "label", "items", "affected_items", "weight", "metrics"
            )
        ),
    }


def assert_nothing_left(experiment: Experiment) -> None:
    for model in (Item, SampledPair, PairTask, ImpactGroup):
        assert model.objects.filter(experiment=experiment).count() == 0, model.__name__
    assert not default_storage.exists(population_storage_name(experiment_id=experiment.pk))
    assert (experiment.population_file, experiment.items_count, experiment.dropped_items, experiment.impact) == (
        "",
        None,
        None,
        None,
    )
