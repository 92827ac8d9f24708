from __future__ import annotations


class JudgementRefused(Exception):
    """The action cannot be taken; the message says why. Nothing was written."""


class QueueClosed(Exception):
    """No pair may be leased to this rater now; ``reason`` is a stable code for clients."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
