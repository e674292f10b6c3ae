"""Errors of the ``simulation`` sub-package."""

from __future__ import annotations


class SimulationError(ValueError):
    """A run cannot be generated: bad settings, unknown robot or gait, a foot target out of reach."""
