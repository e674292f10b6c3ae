"""Errors of the evaluation library: inputs that cannot be evaluated, ground truth that cannot be loaded."""

from __future__ import annotations


class MetricsError(ValueError):
    """Raised when inputs cannot be evaluated (too few samples, no time overlap, bad shapes)."""


class GroundTruthError(ValueError):
    """Ground truth cannot be loaded; the message names the file and what is wrong."""
