"""Exceptions of the public surface."""

from __future__ import annotations

__all__ = ["NotApplicableError"]


class NotApplicableError(ValueError):
    """A named bound does not apply to the protocol it was asked about.

    The message says why and which bounds do apply. Subclasses ``ValueError`` so that
    callers handling bad input in one place catch it too.
    """
