"""The services behind the admin console: gold questions of any two items (and their answer,
retirement and restoration), resolving broken-pair reports, password links, pool names, and
archiving experiments. A refused action changes nothing."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile

from raterapp.models import BudgetPool, Experiment, Item, Judgement, Lease, PairReport, PairTask, UploadedFile
from raterapp.selectors.experiments import experiment_list
from raterapp.selectors.judging import rater_progress_get
from raterapp.services.accounts.password_links import rater_password_link
from raterapp.services.accounts.raters import rater_deactivate
from raterapp.services.experiments.budgets import pool_create
from raterapp.services.experiments.control import experiment_archive, experiment_rating_reopen, experiment_unarchive
from raterapp.services.judging import assignment_next, judgement_submit, pair_report_create
from raterapp.services.judging.gold import gold_answer_set, gold_pair_create, gold_restore, gold_retire
from raterapp.services.judging.report_resolution import pair_report_resolve
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.django_db

CATALOGUE = "item_id,title,description\n" + "".join(f"item-{k:03d},Person {k},Record {k}\n" for k in range(12))


@pytest.fixture
def admin():
    return UserFactory(username="boss", roles=["admin"])


@pytest.fixture
def rater():
    return UserFactory(username="rita", roles=["rater"])


@pytest.fixture
def experiment(media):
    """Few draws: some items of the population have no card yet; the catalogue has them all."""
    experiment = experiment_prepared(owner=UserFactory(roles=["engineer"]), n_draws=3)
    upload = UploadedFile(experiment=experiment, kind="catalogue", original_name="catalogue.csv", size=len(CATALOGUE))
    upload.file.save("catalogue.csv", ContentFile(CATALOGUE.encode()), save=False)
    upload.save()
    return experiment


def _uncarded(experiment) -> list[str]:
    carded = set(Item.objects.filter(experiment=experiment).values_list("item_id", flat=True))
    return [f"item-{k:03d}" for k in range(12) if f"item-{k:03d}" not in carded]


def test_a_gold_pair_of_any_two_items_reads_their_cards_from_the_catalogue(experiment, admin):
    first, second = _uncarded(experiment)[:2]
    items_before = Item.objects.filter(experiment=experiment).count()
    task = gold_pair_create(experiment=experiment, actor=admin, item_a=second, item_b=first, answer="not_equivalent")
    assert (task.item_a.item_id, task.item_b.item_id) == (first, second)  # ordered by position
    assert task.gold_answer == "not_equivalent" and task.created_by == admin and task.wanted == 0
    assert Item.objects.filter(experiment=experiment).count() == items_before + 2
    card = Item.objects.get(experiment=experiment, item_id=first)
    k = int(first.split("-")[1])
    assert (card.title, card.description, card.position) == (f"Person {k}", f"Record {k}", k)
    assert card.base_cluster == f"b{[0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2][k]}"


def test_an_unknown_item_is_refused_by_name_and_nothing_is_added(experiment, admin):
    first = _uncarded(experiment)[0]
    before = (Item.objects.count(), PairTask.objects.count())
    with pytest.raises(ValidationError) as refused:
        gold_pair_create(experiment=experiment, actor=admin, item_a=first, item_b="item-999", answer="equivalent")
    assert refused.value.message_dict == {"item_b": ["No item 'item-999' in this experiment."]}
    assert (Item.objects.count(), PairTask.objects.count()) == before


def test_gold_answer_retire_and_restore_by_admins_only(experiment, admin, rater):
    sampled = PairTask.objects.filter(experiment=experiment).first()
    task = gold_pair_create(
        experiment=experiment,
        actor=admin,
        item_a=sampled.item_a.item_id,
        item_b=sampled.item_b.item_id,
        answer="equivalent",
    )
    engineer = experiment.owner
    for call in (
        lambda: gold_answer_set(task=task, actor=engineer, answer="not_equivalent"),
        lambda: gold_retire(task=task, actor=rater),
    ):
        with pytest.raises(PermissionDenied):
            call()
    task.refresh_from_db()
    assert (task.gold_answer, task.retired_at) == ("equivalent", None)
    with pytest.raises(ValidationError):
        gold_answer_set(task=task, actor=admin, answer="unsure")
    gold_answer_set(task=task, actor=admin, answer="not_equivalent")
    gold_retire(task=task, actor=admin)
    task.refresh_from_db()
    assert task.gold_answer == "not_equivalent" and task.retired_at is not None and task.retired_by == admin
    with pytest.raises(ValidationError):
        gold_retire(task=sampled, actor=admin)  # not a gold question
    gold_restore(task=task, actor=admin)
    task.refresh_from_db()
    assert task.retired_at is None and task.retired_by is None


def test_a_retired_gold_question_is_served_to_no_rater(experiment, admin, rater):
    experiment.gold_rate = 1.0
    experiment.save()
    sampled = PairTask.objects.filter(experiment=experiment).first()
    task = gold_pair_create(
        experiment=experiment,
        actor=admin,
        item_a=sampled.item_a.item_id,
        item_b=sampled.item_b.item_id,
        answer="equivalent",
    )
    gold_retire(task=task, actor=admin)
    served = []
    while (next_task := assignment_next(experiment=experiment, rater=rater)) is not None:
        served.append(next_task.pk)
        judgement_submit(task=next_task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())
    assert task.pk not in served
    assert len(served) == PairTask.objects.filter(experiment=experiment, gold_answer="").count()


def _reported(experiment, rater):
    task = assignment_next(experiment=experiment, rater=rater)
    report, _ = pair_report_create(task=task, rater=rater, reason="unreadable", note="garbled title")
    return report


def test_excluding_a_reported_pair_stops_serving_it_and_keeps_its_verdicts(experiment, admin, rater):
    PairTask.objects.filter(experiment=experiment).update(wanted=2)
    other = UserFactory(roles=["rater"])
    first = assignment_next(experiment=experiment, rater=other)
    judgement_submit(task=first, rater=other, verdict="equivalent", client_id=uuid.uuid4())
    held = assignment_next(experiment=experiment, rater=other)
    assert held.pk != first.pk
    report = _reported(experiment, rater)
    assert report.task_id == first.pk  # the rater's first pair: the one `other` judged first too
    remaining = rater_progress_get(experiment=experiment, rater=rater)["remaining"]
    resolved = pair_report_resolve(report=report, actor=admin, resolution="excluded", note="  Title is mojibake.  ")
    assert (resolved.resolution, resolved.resolution_note, resolved.resolved_by) == (
        "excluded",
        "Title is mojibake.",
        admin,
    )
    task = PairTask.objects.get(pk=first.pk)
    assert task.retired_at is not None and task.retired_by == admin
    assert Judgement.objects.filter(task=task).count() == 1
    assert rater_progress_get(experiment=experiment, rater=rater)["remaining"] == remaining - 1  # 2 wanted, 1 given
    third = UserFactory(roles=["rater"])
    served = []
    while (t := assignment_next(experiment=experiment, rater=third)) is not None:
        served.append(t.pk)
        judgement_submit(task=t, rater=third, verdict="equivalent", client_id=uuid.uuid4())
    assert first.pk not in served and served
    assert Lease.objects.filter(task=task).count() == 0


def test_a_reported_pair_made_gold_gets_a_gold_question_with_the_answer(experiment, admin, rater):
    report = _reported(experiment, rater)
    pair_report_resolve(report=report, actor=admin, resolution="gold", answer="not_equivalent", note="Two people.")
    gold = PairTask.objects.exclude(gold_answer="").get(experiment=experiment)
    assert (gold.item_a_id, gold.item_b_id, gold.gold_answer) == (
        report.task.item_a_id,
        report.task.item_b_id,
        "not_equivalent",
    )
    assert PairTask.objects.get(pk=report.task_id).retired_at is None  # the sampled pair is still judged


def test_a_refused_resolution_changes_nothing(experiment, admin, rater):
    report = _reported(experiment, rater)
    for kwargs, field in (
        ({"resolution": "gold", "answer": "", "note": "x"}, "answer"),
        ({"resolution": "burn", "note": "x"}, "resolution"),
        ({"resolution": "kept", "note": "  "}, "note"),
    ):
        with pytest.raises(ValidationError) as refused:
            pair_report_resolve(report=report, actor=admin, **kwargs)
        assert field in refused.value.message_dict
    with pytest.raises(PermissionDenied):
        pair_report_resolve(report=report, actor=experiment.owner, resolution="kept", note="fine")
    report.refresh_from_db()
    assert report.resolved_at is None and report.resolution == ""
    assert PairTask.objects.exclude(gold_answer="").count() == 0
    pair_report_resolve(report=report, actor=admin, resolution="kept", note="Readable to me.")
    with pytest.raises(ValidationError, match="resolved already"):
        pair_report_resolve(report=report, actor=admin, resolution="excluded", note="again")
    assert PairTask.objects.get(pk=report.task_id).retired_at is None


def test_resolving_one_report_resolves_every_open_report_of_the_pair(experiment, admin, rater):
    report = _reported(experiment, rater)
    second = UserFactory(roles=["rater"])
    Lease.objects.create(task=report.task, rater=second, expires_at=report.created_at.replace(year=2100))
    other, _ = pair_report_create(task=report.task, rater=second, reason="missing_data")
    pair_report_resolve(report=report, actor=admin, resolution="kept", note="Both fine.")
    assert set(PairReport.objects.values_list("pk", "resolution")) == {(report.pk, "kept"), (other.pk, "kept")}


def test_a_password_link_is_for_an_active_rater_and_made_by_an_admin(admin, rater):
    path = rater_password_link(actor=admin, rater=rater)
    uid, token = path.rstrip("/").split("/")[-2:]
    assert default_token_generator.check_token(rater, token)
    with pytest.raises(PermissionDenied):
        rater_password_link(actor=UserFactory(roles=["engineer"]), rater=rater)
    with pytest.raises(ValidationError):
        rater_password_link(actor=admin, rater=UserFactory(roles=["engineer"]))
    rater_deactivate(actor=admin, rater=rater)
    with pytest.raises(ValidationError, match="Reactivate"):
        rater_password_link(actor=admin, rater=rater)


def test_pool_names_are_unique_whatever_their_case(admin):
    pool_create(actor=admin, name="Q3 rating", max_verdicts=100, reason="plan", via="page")
    with pytest.raises(ValidationError) as refused:
        pool_create(actor=admin, name=" q3 RATING ", max_verdicts=5, reason="again", via="page")
    assert refused.value.message_dict == {"name": ["A pool with this name exists already."]}
    assert BudgetPool.objects.count() == 1


def test_only_finished_or_failed_experiments_are_archived_and_the_list_hides_them(experiment, admin):
    with pytest.raises(ValidationError):
        experiment_archive(experiment=experiment)  # in rating
    assert Experiment.objects.get(pk=experiment.pk).archived_at is None
    Experiment.objects.filter(pk=experiment.pk).update(status=Experiment.Status.DONE)
    experiment.refresh_from_db()
    tasks = PairTask.objects.filter(experiment=experiment).count()
    experiment_archive(experiment=experiment)
    assert experiment.archived_at is not None
    assert list(experiment_list(user=admin)) == []
    assert list(experiment_list(user=admin, archived=True)) == [experiment]
    assert list(experiment_list(user=admin, archived=None)) == [experiment]
    assert PairTask.objects.filter(experiment=experiment).count() == tasks
    experiment_unarchive(experiment=experiment)
    assert list(experiment_list(user=admin)) == [experiment]
    experiment_archive(experiment=experiment)
    experiment_rating_reopen(experiment=experiment)  # rating again: back in the list
    assert experiment.archived_at is None and experiment.status == Experiment.Status.RATING
    assert list(experiment_list(user=admin)) == [experiment]
