"""The budget row is made once, by ``experiment_create``; nothing else (no signal, no read) makes it."""

import pytest
from django.core.exceptions import ValidationError

from raterapp.models import Experiment, ExperimentBudget
from tests.raterapp.services.files import experiment_made, tiny_files

pytestmark = pytest.mark.rating_loop


@pytest.mark.parametrize("setting", [0, 25, None])
def test_experiment_create_makes_the_budget_row_the_setting_says(engineer, media, settings, setting):
    settings.NEW_EXPERIMENT_BUDGET = setting
    experiment = experiment_made(owner=engineer, name="e", files=tiny_files())
    assert list(ExperimentBudget.objects.values_list("experiment", "max_verdicts", "spent")) == [
        (experiment.pk, setting, 0)
    ]


def test_a_refused_experiment_leaves_no_budget_row(engineer, media):
    with pytest.raises(ValidationError):
        experiment_made(owner=engineer, name="e", files=tiny_files(), n_draws=0)
    assert (Experiment.objects.count(), ExperimentBudget.objects.count()) == (0, 0)


def test_saving_an_experiment_elsewhere_makes_no_budget_row(engineer):
    Experiment.objects.create(name="raw", owner=engineer)
    assert ExperimentBudget.objects.count() == 0
