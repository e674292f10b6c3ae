"""The error of replay: the run cannot go on; the message says why."""

from __future__ import annotations


class ReplayError(RuntimeError):
    """The replay cannot run: missing input, description or topics; the message says which."""
