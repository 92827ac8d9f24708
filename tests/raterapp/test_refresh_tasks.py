"""A refresh whose experiment was deleted while it waited in the queue does nothing (issue 32: the
worker's tasks must not raise while the product runs)."""

from __future__ import annotations

import pytest

from raterapp.tasks import (
    derived_refresh_task,
    estimates_refresh_task,
    rater_agreement_refresh_task,
    rater_aware_refresh_task,
)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "task", [estimates_refresh_task, derived_refresh_task, rater_aware_refresh_task, rater_agreement_refresh_task]
)
def test_a_refresh_of_an_experiment_deleted_meanwhile_does_nothing(task, caplog):
    caplog.set_level("INFO", logger="raterapp.tasks")
    assert task.run(987_654_321) is None
    assert "skipped: it no longer exists" in caplog.text
