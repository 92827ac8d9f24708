"""Property-based tests of the built-in card similarity (``card_similarity``, abcde-spec §15).

Over generated catalogues (titles, descriptions and attributes of random text, empty and missing
values among them) and pairs: scores lie in [0, 1], are symmetric, 1 for an item with itself
and for two cards of the same text, depend on a pair and the catalogue only (not on the other
pairs scored with it, nor on the items' order), ignore ``image_url`` and ``url``, case,
punctuation and spacing; and equal a plain Python computation of the module docstring's
definition, 3-gram by 3-gram.
"""

import math
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import card_similarity
from metrics_core import similarity as module
from tests.metrics_core.strategies import PROPERTY_EXAMPLES

PROPERTIES = settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
# Letters with one lower case in both Python and Arrow, digits, spacing and punctuation.
ALPHABET = "abcdeABCDE019 ,.-'/éÉü"
TEXT = st.text(alphabet=ALPHABET, max_size=12)
VALUE = st.one_of(st.none(), TEXT, st.sampled_from(["", "same", "Same!", "x"]))


@st.composite
def catalogues(draw, max_items: int = 8):
    n = draw(st.integers(1, max_items))
    column = st.lists(VALUE, min_size=n, max_size=n)
    cards = {"title": draw(column)}
    if draw(st.booleans()):
        cards["description"] = draw(column)
    names = draw(st.lists(st.sampled_from(["postcode", "colour", "dob"]), unique=True, max_size=3))
    attributes = {name: draw(column) for name in names}
    n_pairs = draw(st.integers(0, 12))
    positions = st.lists(st.integers(0, n - 1), min_size=n_pairs, max_size=n_pairs)
    return cards, attributes, np.array(draw(positions), dtype=np.int64), np.array(draw(positions), dtype=np.int64)


@PROPERTIES
@given(catalogues())
def test_scores_are_bounded_symmetric_and_one_for_an_item_with_itself(case):
    cards, attributes, i, j = case
    score = card_similarity(cards=cards, attributes=attributes, i=i, j=j)
    assert score.dtype == np.float64 and score.shape == (len(i),)
    assert np.all((score >= 0.0) & (score <= 1.0))
    assert score.tolist() == card_similarity(cards=cards, attributes=attributes, i=j, j=i).tolist()
    items = np.arange(len(cards["title"]))
    assert card_similarity(cards=cards, attributes=attributes, i=items, j=items).tolist() == [1.0] * len(items)


@PROPERTIES
@given(catalogues(), st.data())
def test_a_pairs_score_does_not_depend_on_the_other_pairs_or_the_items_order(case, data):
    cards, attributes, i, j = case
    score = card_similarity(cards=cards, attributes=attributes, i=i, j=j)
    # Three pairs scored alone (each call hashes the catalogue again: every pair would cost a minute in CI).
    some = sorted(set(data.draw(st.lists(st.integers(0, max(len(i) - 1, 0)), max_size=3)))) if len(i) else []
    alone = [card_similarity(cards=cards, attributes=attributes, i=i[k : k + 1], j=j[k : k + 1])[0] for k in some]
    assert score[some].tolist() == alone
    n = len(cards["title"])
    order = np.array(data.draw(st.permutations(range(n))), dtype=np.int64)  # item order[k] is now at k
    where = np.argsort(order)
    moved = card_similarity(
        cards={name: [values[k] for k in order] for name, values in cards.items()},
        attributes={name: [values[k] for k in order] for name, values in attributes.items()},
        i=where[i],
        j=where[j],
    )
    np.testing.assert_allclose(moved, score, rtol=1e-12, atol=1e-15)  # the weights' sums may round apart


@PROPERTIES
@given(catalogues(), st.lists(st.one_of(st.none(), TEXT), min_size=8, max_size=8), st.data())
def test_urls_case_punctuation_and_spacing_do_not_count(case, urls, data):
    cards, attributes, i, j = case
    n = len(cards["title"])
    score = card_similarity(cards=cards, attributes=attributes, i=i, j=j)
    with_urls = {**cards, "image_url": urls[:n], "url": urls[::-1][:n]}
    assert card_similarity(cards=with_urls, attributes=attributes, i=i, j=j).tolist() == score.tolist()
    spacing = data.draw(st.sampled_from(["  ", " - ", "\t", ", ", "!"]))

    def restyled(value):
        return None if value is None else spacing + value.upper().replace(" ", spacing) + spacing

    attributes = {name: [restyled(v) for v in values] for name, values in attributes.items()}
    cards = {name: [restyled(v) for v in values] for name, values in cards.items()}
    again = card_similarity(cards=cards, attributes=attributes, i=i, j=j)
    np.testing.assert_allclose(again, score, rtol=1e-12, atol=1e-15)


@PROPERTIES
@given(catalogues(), st.integers(0, 7), st.integers(0, 7))
def test_two_cards_of_the_same_text_score_one(case, a, b):
    cards, attributes, _, _ = case
    n = len(cards["title"])
    a, b = a % n, b % n
    copied = {name: list(values) for name, values in cards.items()}
    copied_attributes = {name: list(values) for name, values in attributes.items()}
    for columns in (copied, copied_attributes):
        for values in columns.values():
            values[b] = values[a]
    score = card_similarity(cards=copied, attributes=copied_attributes, i=[a], j=[b])[0]
    assert score == 1.0 or (
        score == 0.0 and not any(normal(v[a]) for v in [*copied.values(), *copied_attributes.values()])
    )


@PROPERTIES
@given(catalogues())
def test_scores_equal_the_definition_computed_gram_by_gram(case):
    cards, attributes, i, j = case
    score = card_similarity(cards=cards, attributes=attributes, i=i, j=j)
    expected = reference_similarity({**cards, **attributes}, i, j)
    np.testing.assert_allclose(score, expected, rtol=1e-12, atol=1e-12)


def test_wrong_arguments_are_named():
    with pytest.raises(ValueError, match="cards has no 'title'"):
        card_similarity(cards={"description": ["a"]}, i=[0], j=[0])
    with pytest.raises(ValueError, match="description has 1 values, title 2"):
        card_similarity(cards={"title": ["a", "b"], "description": ["a"]}, i=[0], j=[0])
    with pytest.raises(ValueError, match="j holds position 2, outside the 2 items"):
        card_similarity(cards={"title": ["a", "b"]}, i=[0], j=[2])
    with pytest.raises(ValueError, match="i and j differ in length"):
        card_similarity(cards={"title": ["a", "b"]}, i=[0, 1], j=[1])
    with pytest.raises(ValueError, match="'title' is both a card field and an attribute"):
        card_similarity(cards={"title": ["a"]}, attributes={"title": ["b"]}, i=[0], j=[0])
    with pytest.raises(ValueError, match="cards has 'colour': the card fields are title, description, image_url, url"):
        card_similarity(cards={"title": ["a"], "colour": ["b"]}, i=[0], j=[0])
    with pytest.raises(ValueError, match="price has type binary; expected text"):
        card_similarity(cards={"title": ["a"]}, attributes={"price": [b"1"]}, i=[0], j=[0])
    # Numbers compare as their text; a field the same on every card weighs WEIGHT_FLOOR of its base weight.
    score = card_similarity(cards={"title": ["a", "b"]}, attributes={"price": [1.5, 1.5]}, i=[0], j=[1])
    assert score.tolist() == [pytest.approx(0.05 / 2.05, rel=1e-12)]


def test_parts_and_blocks_give_the_scores_of_one_pass(monkeypatch):
    """Not timed: pairs gathered in blocks, items hashed in blocks, and pairs scored in parts when
    they use many items, give the scores of one pass."""
    rng = np.random.default_rng(2)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", ""], dtype=object)
    n = 3000
    cards = {"title": [" ".join(rng.choice(words, 3)) for _ in range(n)]}
    attributes = {"code": rng.integers(0, 50, n).astype(str)}
    i, j = rng.integers(0, n, 20_000), rng.integers(0, n, 20_000)
    one_pass = card_similarity(cards=cards, attributes=attributes, i=i, j=j)
    monkeypatch.setattr(module, "PAIR_BLOCK", 999)
    monkeypatch.setattr(module, "ITEM_BLOCK", 77)
    monkeypatch.setattr(module, "ITEMS_AT_ONCE", 500)
    assert card_similarity(cards=cards, attributes=attributes, i=i, j=j).tolist() == one_pass.tolist()


# ---------------------------------------------------------------------------- the definition in Python


def normal(value):
    text = "".join(c if c.isalnum() else " " for c in (value or "").lower())
    return " ".join(text.split())


def reference_similarity(columns, i, j):
    """The module docstring's score, in plain Python (hashed 3-grams of UTF-8 bytes, as the module)."""
    fields = []
    for name, values in columns.items():
        if name in module.IGNORED_CARD_FIELDS:
            continue
        texts = [normal(v) for v in values]
        present = [t for t in texts if t]
        if not present:
            continue
        base = module.TITLE_WEIGHT if name == "title" else 1.0
        n = len(present)
        chance = sum((c / n) ** 2 for c in Counter(present).values())
        weight = (
            base if n == 1 or chance <= 1 / n else base * max(module.WEIGHT_FLOOR, math.log(chance) / math.log(1 / n))
        )
        mean = sum(len(t.encode()) for t in present) / n
        wanted = 1 << math.ceil(math.log2(max(mean, 1.0) * module.BITS_PER_GRAM))
        bits = min(module.MAX_BITS, max(module.MIN_BITS, wanted))
        fields.append((weight, [hashed_grams(t, bits) for t in texts]))
    out = []
    for a, b in zip(i.tolist(), j.tolist()):
        total = weight_sum = 0.0
        for weight, sets in fields:
            if sets[a] and sets[b]:
                total += weight * len(sets[a] & sets[b]) / math.sqrt(len(sets[a]) * len(sets[b]))
                weight_sum += weight
        out.append(1.0 if a == b else total / weight_sum if weight_sum else 0.0)
    return np.array(out)


def hashed_grams(text, bits):
    data = f" {text} ".encode()
    shift = 32 - int(math.log2(bits))
    return (
        {
            ((((data[k] << 16) | (data[k + 1] << 8) | data[k + 2]) * 0x9E3779B1) & 0xFFFFFFFF) >> shift
            for k in range(len(data) - 2)
        }
        if text
        else set()
    )


def test_the_reference_normalises_as_the_module():
    assert normal("  Red-WOOL,  jumper! ") == "red wool jumper" and re.fullmatch(r"[a-zéü0-9 ]*", normal(ALPHABET))
