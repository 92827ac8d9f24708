"""What a rater sees of a task: two item cards and nothing that tells which clusters they are in."""

from __future__ import annotations

from raterapp.models import Item, PairTask

CARD_FIELDS = ("title", "description", "image_url", "url", "attributes")


def item_card_get(*, item: Item) -> dict:
    """The item as a rater sees it: no item id, no cluster ids, no weight (blind judging)."""
    return {field: getattr(item, field) for field in CARD_FIELDS}


def task_cards_get(*, task: PairTask) -> tuple[dict, dict]:
    """The task's two cards as ``(left, right)``.

    The side is random per lease (from its random token), so it stays put while the rater
    reloads the page and differs between raters and between the rank order and the
    screen.
    """
    a, b = item_card_get(item=task.item_a), item_card_get(item=task.item_b)
    return (a, b) if task.lease.token.int & 1 else (b, a)
