"""Verdicts from a fixed truth for the tests of verdict reuse and coupled sampling (the ``truth``
fixture is in ``tests/raterapp/services/conftest.py``)."""

from raterapp.models import Judgement, PairTask
from raterapp.reuse_keys import pair_key


def verdict_of(truth, a: int, b: int) -> str:
    return "equivalent" if truth[a] == truth[b] else "not_equivalent"


def judge_all(experiment, rater, truth, *, start: int = 0) -> int:
    """One verdict of ``rater`` on every task that still wants one; the count given."""
    tasks = list(PairTask.objects.filter(experiment=experiment, wanted__gt=0).select_related("item_a", "item_b"))
    Judgement.objects.bulk_create(
        Judgement(
            task=t,
            rater=rater,
            client_id=f"00000000-0000-0000-0000-{start + k:012d}",
            verdict=verdict_of(truth, t.item_a.position, t.item_b.position),
        )
        for k, t in enumerate(tasks)
    )
    PairTask.objects.filter(pk__in=[t.pk for t in tasks]).update(verdicts=1)
    return len(tasks)


def keys_of(experiment) -> set[str]:
    return {
        pair_key(a, b)
        for a, b in PairTask.objects.filter(experiment=experiment).values_list("item_a__item_id", "item_b__item_id")
    }
