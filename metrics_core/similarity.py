"""The built-in card similarity of two items: a score for model-assisted estimates (abcde-spec §15).

A pair's score says how alike the two items' cards read, in [0, 1]: 1 for the same text, near 0
for unrelated text; higher means more likely equivalent. It needs no training and no verdict.

**Fields.** The card's ``title``, its ``description`` and every attribute are compared field by
field; ``image_url`` and ``url`` are not (an address tells nothing of the thing it points at, and
two equivalent items often have different ones). Each attribute is a field of its own rather than
a part of one long text: in record-linkage data a postcode, a date of birth or an id number
either agrees or not, and within one concatenated string that agreement drowns in the rest of the
text (and a value moved to another column would count as agreeing). A field empty on either card
is left out of that pair's average (missing is no evidence either way, as in Fellegi and
Sunter's record linkage); a pair with no field on both cards scores 0, and an item with itself 1.

**Text.** Each field is lowercased (Unicode), every run of characters that are not letters or
digits becomes one space, and the ends are trimmed; the text, with a space added at either end,
is the set of its 3-grams of UTF-8 bytes (``" gr"``, ``"gre"``, ...: a word's start and end
count, and a typo costs three grams of a dozen rather than the whole word).

**Similarity of a field.** The cosine of the two binary 3-gram vectors, ``|A ∩ B| / sqrt(|A| |B|)``,
with the grams hashed into a bitset per item (``popcount(a & b)``): numpy alone, one gather of a few
machine words per pair and field, no per-row Python. A bitset has about 32 bits per gram of the
field's average text (64 to 4096 bits), so two unrelated texts share a spurious bit now and then
(about |A||B|/bits: a few hundredths of similarity).

**Weights.** The title counts twice, the description and each attribute once, and every field is
scaled by how much agreement on it tells: ``log(1 / u) / log(n)``, with ``u`` the chance that two
of the ``n`` cards agree on the field (the sum of its values' squared shares): Fellegi and Sunter's
agreement weight, scaled so that a field whose every card differs weighs 1 and one that takes 8
values among 5,000 cards (a state) about a quarter. A field with the same value on every card
still weighs a twentieth (so that two cards alike in it alone score 1), and one with a single
card weighs 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._validation import as_1d

__all__ = ["CARD_FIELDS", "IGNORED_CARD_FIELDS", "card_similarity"]

CARD_FIELDS = ("title", "description")
IGNORED_CARD_FIELDS = ("image_url", "url")
TITLE_WEIGHT = 2.0
# The least a field weighs, as a share of its base weight (module docstring).
WEIGHT_FLOOR = 0.05
# A field's bitset: this many bits per gram of its average text, a power of two in the bounds.
BITS_PER_GRAM = 32
MIN_BITS, MAX_BITS = 64, 4096
# Pairs gathered at a time (a few MiB of words per field); items hashed at a time, likewise.
PAIR_BLOCK = 1 << 16
ITEM_BLOCK = 1 << 15
# More items used than this: the pairs are scored in parts, each hashing its own items only.
ITEMS_AT_ONCE = 1 << 20


@dataclass(frozen=True)
class _Plan:
    """How a field is compared: its weight and the size of its bitsets, the same for every pair."""

    weight: float
    bits: int


@dataclass(frozen=True)
class _Field:
    """One field of the items: each item's 3-gram bitset (rows of uint64 words) and its popcount."""

    words: np.ndarray
    grams: np.ndarray
    weight: float


def card_similarity(
    *, cards: Mapping[str, Any], attributes: Mapping[str, Any] | None = None, i: Any, j: Any
) -> np.ndarray:
    """The card similarity of items ``i[k]`` and ``j[k]``, in [0, 1], for each pair ``k`` (float64).

    Parameters
    ----------
    cards : mapping of str to array-like of str
        The card fields of every item, by position: ``title`` (required), ``description``
        (optional); ``image_url`` and ``url`` may be given and are ignored. Missing values
        (``None``) and empty text are absent fields.
    attributes : mapping of str to array-like, optional
        Further columns of the items (their text is compared; numbers are compared as text).
    i, j : array-like of int
        Positions of the two items of each pair among the items (0-based).

    Returns
    -------
    numpy.ndarray
        One similarity per pair; symmetric (``(i, j)`` scores as ``(j, i)``), 1.0 for an item
        with itself. The module docstring describes the fields, the text and the weights.

    Raises
    ------
    ValueError
        A column of another length than ``title``, a field that is not text, no ``title``,
        or a position outside the items.

    Examples
    --------
    >>> cards = {"title": ["Mitchell Green", "Mitchel Green", "Harley Mccarthy"]}
    >>> attributes = {"postcode": ["2119", "2119", "3165"]}
    >>> card_similarity(cards=cards, attributes=attributes, i=[0, 0, 1], j=[1, 2, 1]).round(2).tolist()
    [0.91, 0.0, 1.0]
    """
    columns = _columns(cards, attributes or {})
    n_items = len(columns["title"])
    i = _positions("i", i, n_items)
    j = _positions("j", j, n_items)
    if len(i) != len(j):
        raise ValueError(f"i and j differ in length ({len(i)} and {len(j)})")
    plans = {name: _plan(text, TITLE_WEIGHT if name == "title" else 1.0) for name, text in columns.items()}
    present = {name: text for name, text in columns.items() if plans[name].weight > 0}
    return _scores(present, plans, n_items, i, j)


def _scores(
    columns: dict[str, pa.Array], plans: dict[str, _Plan], n_items: int, i: np.ndarray, j: np.ndarray
) -> np.ndarray:
    """The pairs' scores, hashing the text of the items they use only (in parts past ITEMS_AT_ONCE items)."""
    used = np.unique(np.concatenate([i, j]))
    if len(used) > ITEMS_AT_ONCE and len(i) > 1:
        half = len(i) // 2
        return np.concatenate(
            [
                _scores(columns, plans, n_items, i[:half], j[:half]),
                _scores(columns, plans, n_items, i[half:], j[half:]),
            ]
        )
    taken = pa.array(used)
    fields = [_field(text.take(taken), plans[name]) for name, text in columns.items()]
    if n_items <= 4 * len(used) + 1024:
        at = np.zeros(n_items, dtype=np.int64)
        at[used] = np.arange(len(used))
        return _pair_scores(fields, at[i], at[j])
    return _pair_scores(fields, np.searchsorted(used, i), np.searchsorted(used, j))


def _positions(name: str, values: Any, n_items: int) -> np.ndarray:
    array = as_1d(name, values)
    if len(array) == 0:
        return np.zeros(0, dtype=np.int64)
    if array.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer positions, got dtype {array.dtype}")
    low, high = int(array.min()), int(array.max())
    if low < 0 or high >= n_items:
        bad = low if low < 0 else high
        raise ValueError(f"{name} holds position {bad}, outside the {n_items} items")
    return array.astype(np.int64, copy=False)


def _columns(cards: Mapping[str, Any], attributes: Mapping[str, Any]) -> dict[str, pa.Array]:
    if "title" not in cards:
        raise ValueError("cards has no 'title'")
    named = {name: values for name, values in cards.items() if name not in IGNORED_CARD_FIELDS}
    unknown = [name for name in named if name not in CARD_FIELDS]
    if unknown:
        raise ValueError(
            f"cards has {unknown[0]!r}: the card fields are {', '.join(CARD_FIELDS + IGNORED_CARD_FIELDS)}"
        )
    both = [name for name in attributes if name in cards]
    if both:
        raise ValueError(f"{both[0]!r} is both a card field and an attribute")
    texts = {name: _text(name, values) for name, values in {**named, **attributes}.items()}
    n_items = len(texts["title"])
    for name, values in texts.items():
        if len(values) != n_items:
            raise ValueError(f"{name} has {len(values)} values, title {n_items}")
    # Every field normalised in one pass: Arrow compiles the pattern once a call, which costs more
    # than the text itself on a small catalogue.
    if any(pa.types.is_large_string(values.type) for values in texts.values()):
        texts = {name: values.cast(pa.large_string()) for name, values in texts.items()}
    normalised = _normalised(pa.concat_arrays(list(texts.values())))
    return {name: normalised.slice(k * n_items, n_items) for k, name in enumerate(texts)}


def _text(name: str, values: Any) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        array = np.asarray(values)
        values = pa.array(array.astype(object) if array.dtype.kind in "OUS" else array)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if pa.types.is_null(values.type):
        return pa.array([""] * len(values), type=pa.string())
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        if pa.types.is_binary(values.type) or pa.types.is_nested(values.type):
            raise ValueError(f"{name} has type {values.type}; expected text")
        try:
            values = pc.cast(values, pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise ValueError(f"{name} has type {values.type}; expected text") from None
    return pc.fill_null(values, "")


def _normalised(values: pa.Array) -> pa.Array:
    """Lowercase, runs of anything but letters and digits as one space, trimmed."""
    text = pc.replace_substring_regex(pc.utf8_lower(values), pattern=r"[^\p{L}\p{N}]+", replacement=" ")
    return pc.utf8_trim(text, characters=" ")


def _plan(text: pa.Array, base: float) -> _Plan:
    """A field's weight (``base`` times how much agreement on it tells; 0 for a field empty on every
    card) and its bitsets' size, from its normalised text on every card (module docstring)."""
    present = pc.filter(text, pc.not_equal(text, ""))
    n = len(present)
    if n == 0:
        return _Plan(0.0, MIN_BITS)
    mean_grams = float(pc.sum(pc.binary_length(present)).as_py()) / n  # a text of L bytes has L 3-grams, padded
    wanted = 1 << int(np.ceil(np.log2(max(mean_grams, 1.0) * BITS_PER_GRAM)))
    bits = int(min(MAX_BITS, max(MIN_BITS, wanted)))
    if n == 1:
        return _Plan(base, bits)
    shares = pc.value_counts(present).field("counts").to_numpy(zero_copy_only=False) / n
    chance = float(np.sum(shares * shares))
    if chance <= 1.0 / n:
        return _Plan(base, bits)
    return _Plan(base * max(WEIGHT_FLOOR, float(np.log(chance) / np.log(1.0 / n))), bits)


def _field(text: pa.Array, plan: _Plan) -> _Field:
    """The 3-gram bitsets of one field's (normalised) text, an item a row."""
    padded = pc.binary_join_element_wise(" ", text, " ", "")
    offset_type = np.int64 if pa.types.is_large_string(padded.type) else np.int32
    offsets = np.frombuffer(padded.buffers()[1], dtype=offset_type)[padded.offset : padded.offset + len(padded) + 1]
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(padded.buffers()[2], dtype=np.uint8) if len(padded) else np.zeros(0, np.uint8)
    words = np.zeros((len(padded), plan.bits // 64), dtype=np.uint64)
    for start in range(0, len(padded), ITEM_BLOCK):
        stop = min(start + ITEM_BLOCK, len(padded))
        words[start:stop] = _bitsets(data, offsets[start : stop + 1], plan.bits)
    grams = np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    # An empty text's padding "  " has no 3-gram: no bit set, absent from the pair's average.
    return _Field(words, grams, plan.weight)


def _bitsets(data: np.ndarray, offsets: np.ndarray, bits: int) -> np.ndarray:
    """Rows of ``bits`` bits: bit ``hash(g)`` set for each 3-gram ``g`` of each string."""
    n = len(offsets) - 1
    marks = np.zeros((n, bits), dtype=bool)
    first, last = int(offsets[0]), int(offsets[-1])
    if last - first >= 3:
        starts = np.arange(first, last - 2, dtype=np.int64)
        row = np.searchsorted(offsets, starts, side="right") - 1
        keep = starts + 3 <= offsets[row + 1]
        starts, row = starts[keep], row[keep]
        gram = (data[starts].astype(np.uint32) << 16) | (data[starts + 1].astype(np.uint32) << 8) | data[starts + 2]
        # Fibonacci hashing: the top bits of the gram times 2**32 / phi.
        hashed = (gram * np.uint32(0x9E3779B1)) >> np.uint32(32 - int(np.log2(bits)))
        marks[row, hashed] = True
    return np.packbits(marks, axis=1, bitorder="little").view(np.uint64)


def _pair_scores(fields: list[_Field], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    scores = np.zeros(len(a), dtype=np.float64)
    for start in range(0, len(a), PAIR_BLOCK):
        block_a, block_b = a[start : start + PAIR_BLOCK], b[start : start + PAIR_BLOCK]
        total = np.zeros(len(block_a))
        weight = np.zeros(len(block_a))
        for field in fields:
            grams_a, grams_b = field.grams[block_a], field.grams[block_b]
            both = (grams_a > 0) & (grams_b > 0)
            shared = np.bitwise_count(field.words[block_a] & field.words[block_b]).sum(axis=1, dtype=np.int64)
            with np.errstate(invalid="ignore", divide="ignore"):
                cosine = np.where(both, shared / np.sqrt(grams_a * grams_b), 0.0)
            total += field.weight * cosine
            weight += field.weight * both
        with np.errstate(invalid="ignore", divide="ignore"):
            part = np.where(weight > 0, total / weight, 0.0)
        part[block_a == block_b] = 1.0
        scores[start : start + len(block_a)] = np.clip(part, 0.0, 1.0)
    return scores
