"""Errors raised by the estimation core (``robot_state_estimator.estimation``).

Bad *samples* never raise: they produce an :class:`~robot_state_estimator.common.samples.Event` and are
skipped. Exceptions are for programming or configuration mistakes found at construction time.
"""

from __future__ import annotations


class EstimationError(Exception):
    """Base class of every error raised by ``robot_state_estimator.estimation``."""


class SettingsError(EstimationError, ValueError):
    """Invalid estimator settings: unknown key, wrong type, or value out of range (the message names it)."""


class ModelError(EstimationError, ValueError):
    """The robot model does not fit the estimator: missing frame, no free-flyer root joint, bad IMU link."""
