"""Errors of the ``sensors`` sub-package."""

from __future__ import annotations


class SensorError(ValueError):
    """A sensor model cannot be built or evaluated; the message names the field and the value at fault."""


class OrientationReferenceError(SensorError):
    """An IMU orientation reference frame is ill-defined (e.g. ``grav_dir_x`` parallel to gravity)."""
