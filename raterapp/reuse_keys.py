"""The keys under which verdicts are shared in a workspace (abcde-spec §11): the unordered pair
of item ids, and the version of the question (its text and guidelines). Pure functions, so the
models, the migration and the services compute them the same way."""

from __future__ import annotations

import hashlib


def pair_key(item_a: str, item_b: str) -> str:
    """SHA-256 (hex) of the two item ids, sorted: the same for (a, b) and (b, a).

    >>> pair_key("x", "y") == pair_key("y", "x")
    True
    """
    low, high = sorted((str(item_a), str(item_b)))
    return hashlib.sha256(f"{len(low)}:{low}|{high}".encode()).hexdigest()


def question_digest(question: str, guidelines: str) -> str:
    """SHA-256 (hex) of the question and its guidelines: any change to either is a new version."""
    return hashlib.sha256(f"{len(question)}:{question}|{guidelines}".encode()).hexdigest()
