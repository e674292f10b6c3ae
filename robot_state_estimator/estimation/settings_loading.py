"""Estimator settings from YAML files, parameter dicts and flat ROS parameter names, and back.

Layout of the YAML files (``config/<robot>.yaml``): the ROS 2 parameter-file layout, so the node reads the
same file with ``--params-file``::

    /**/robot_state_estimator:
      ros__parameters:
        max_measurement_delay_s: 0.02
        ekf:
          accel_noise_density: 0.05
        contact:
          source: foot_sensor

Nested dicts under ``ros__parameters`` are what ROS 2 flattens into dotted parameter names
(``ekf.accel_noise_density``); :func:`settings_from_flat` maps such flat names back onto the dataclasses of
:mod:`robot_state_estimator.estimation.settings` (the node uses it on its declared parameters),
:func:`flatten_settings` goes the other way (the node uses it to declare every parameter with its default).
:func:`load_settings` accepts a path, the full parameter-file dict, the ``ros__parameters`` dict, or a flat dict;
unknown keys are rejected by name.

The node key ``/**/robot_state_estimator`` is rcl's parameter-file wildcard for a node of that name in any
namespace (``**`` matches zero or more namespace tokens), so the file applies to ``/robot_state_estimator``
and to ``/go1/robot_state_estimator`` alike; the plain key ``robot_state_estimator`` (older files) matches the
node in the root namespace only, for ROS, and is read here as well (``NODE_KEYS``).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import yaml

from robot_state_estimator.common.names import close_names, did_you_mean
from robot_state_estimator.estimation.errors import SettingsError
from robot_state_estimator.estimation.settings import EstimatorSettings

#: Node key under which the YAML files keep the parameters (ROS 2 parameter-file layout): rcl's wildcard for the
#: node ``robot_state_estimator`` in any namespace.
NODE_KEY = "/**/robot_state_estimator"
#: Node keys ``load_settings`` reads: ``NODE_KEY``, and the root-namespace names of older files.
NODE_KEYS = (NODE_KEY, "robot_state_estimator", "/robot_state_estimator")
PARAMS_KEY = "ros__parameters"


#: A decimal number in YAML 1.2's core schema (``2e-2``, ``1e3``, ``-.5``, ``+3.``): what rcl's parameter-file
#: parser and YAML 1.2 read as a float; PyYAML (YAML 1.1) needs a dot in the mantissa and a sign in the exponent,
#: so it gives ``2e-2`` and ``1e3`` as strings, which float settings accept as these numbers.
_YAML12_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def _coerce(owner: str, name: str, default: Any, value: Any) -> Any:
    """Convert ``value`` to the type of ``default`` (bool, int, float, str, tuple) or raise SettingsError."""
    where = f"{owner}{name}"
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        raise SettingsError(f"{where} must be a bool, got {value!r}")
    if isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise SettingsError(f"{where} must be an integer, got {value!r}")
    if isinstance(default, float):
        if isinstance(value, str) and _YAML12_FLOAT.fullmatch(value.strip()):
            value = float(value)  # 2e-2, 1e3: numbers in YAML 1.2 and rcl, strings for PyYAML (YAML 1.1)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise SettingsError(f"{where} must be finite, got {value!r}")
            return float(value)
        raise SettingsError(f"{where} must be a number, got {value!r}")
    if isinstance(default, str):
        if isinstance(value, str):
            return value
        raise SettingsError(f"{where} must be a string, got {value!r}")
    if isinstance(default, tuple):
        if not isinstance(value, (list, tuple)):
            raise SettingsError(f"{where} must be a list, got {value!r}")
        if default and all(isinstance(v, float) for v in default):
            value = [float(v) if isinstance(v, str) and _YAML12_FLOAT.fullmatch(v.strip()) else v for v in value]
        return tuple(value)
    raise SettingsError(f"{where}: unsupported setting type {type(default).__name__}")  # pragma: no cover


#: Settings whose default means "from the robot description", for which YAML ``null`` is accepted.
_NULL_MEANS_DEFAULT = frozenset({"ekf.foot_radius_m"})


def _build(cls: type, data: Mapping[str, Any], owner: str) -> Any:
    if not isinstance(data, Mapping):
        if owner:
            group = owner.rstrip(".")
            raise SettingsError(
                f"{group} must be a mapping of settings (set its members, e.g. {group}.<name>=VALUE), got {data!r}"
            )
        raise SettingsError(f"settings must be a mapping, got {data!r}")
    defaults = cls()
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        named = ", ".join(owner + k + did_you_mean([owner + c for c in close_names(k, known)]) for k in unknown)
        raise SettingsError(f"unknown setting(s) {named}; known: {', '.join(sorted(known))}")
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        default = getattr(defaults, name)
        if value is None and f"{owner}{name}" in _NULL_MEANS_DEFAULT:
            continue  # YAML null = "from the description", the default
        if dataclasses.is_dataclass(default):
            kwargs[name] = _build(type(default), value, f"{owner}{name}.")
        else:
            kwargs[name] = _coerce(owner, name, default, value)
    try:
        return cls(**kwargs)
    except TypeError as exc:  # pragma: no cover - guarded by the unknown-key check
        raise SettingsError(str(exc)) from exc


def _unflatten(flat: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        if not isinstance(key, str):
            raise SettingsError(f"setting names must be strings, got {key!r}")
        parts = key.split(".")
        node = nested
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise SettingsError(f"setting {key!r} conflicts with {part!r}")
            node = child
        if isinstance(value, Mapping):
            existing = node.setdefault(parts[-1], {})
            if not isinstance(existing, dict):
                raise SettingsError(f"setting {key!r} given twice")
            existing.update(_unflatten(value))
        else:
            node[parts[-1]] = value
    return nested


def settings_from_flat(
    flat: Mapping[str, Any],
    base: EstimatorSettings | None = None,
    *,
    ignore: Collection[str] = (),
) -> EstimatorSettings:
    """Settings from flat dotted names, as ROS 2 parameters carry them.

    Args:
        flat: e.g. ``{"ekf.accel_noise_density": 0.05, "contact.source": "foot_sensor"}``; nested dicts are
            accepted too (and merged).
        base: settings whose values are kept for keys not in ``flat`` (defaults when None).
        ignore: top-level names that belong to someone else (the node's ``odom_frame``, topics, ...) and are
            skipped instead of rejected.

    Returns:
        The settings.

    Raises:
        SettingsError: unknown name (named in the message), wrong type or out-of-range value.
    """
    nested = _unflatten({k: v for k, v in flat.items() if k.split(".")[0] not in set(ignore)})
    if base is not None:
        merged = _unflatten(flatten_settings(base))
        for key, value in nested.items():
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key].update(value)
            else:
                merged[key] = value
        nested = merged
    settings: EstimatorSettings = _build(EstimatorSettings, nested, "")
    return settings


def flatten_settings(settings: EstimatorSettings) -> dict[str, Any]:
    """Settings -> flat dotted names (``ekf.accel_noise_density``) with their values (tuples as lists)."""
    out: dict[str, Any] = {}

    def walk(obj: Any, prefix: str) -> None:
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if dataclasses.is_dataclass(value):
                walk(value, f"{prefix}{f.name}.")
            else:
                out[prefix + f.name] = list(value) if isinstance(value, tuple) else value

    walk(settings, "")
    return out


def load_settings(
    source: str | Path | Mapping[str, Any] | None = None, *, ignore: Collection[str] = ()
) -> EstimatorSettings:
    """Load settings from a YAML file or a dict.

    Args:
        source: a path to a YAML file; or a dict in one of three shapes: the parameter file
            (``{"/**/robot_state_estimator": {ros__parameters: {...}}}``, or under one of the other
            ``NODE_KEYS``), the ``ros__parameters`` dict, or flat
            dotted names. None gives the defaults.
        ignore: top-level parameter names of the node that share the file (skipped, not rejected).

    Returns:
        The settings (defaults for everything not given).

    Raises:
        SettingsError: unreadable file, unknown key (named), wrong type or out-of-range value.
    """
    if source is None:
        return EstimatorSettings()
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise SettingsError(f"cannot read settings file {path}: {exc}") from exc
    else:
        data = source
    if not isinstance(data, Mapping):
        raise SettingsError(f"settings must be a mapping, got {type(data).__name__}")
    node_key = next((k for k in NODE_KEYS if k in data), None)
    if node_key is not None:
        extra = sorted(set(data) - {node_key}, key=str)
        if extra:
            raise SettingsError(f"unknown top-level key(s) {extra} next to {node_key!r}")
        data = data[node_key]
        if not isinstance(data, Mapping) or PARAMS_KEY not in data:
            raise SettingsError(f"{node_key!r} must contain {PARAMS_KEY!r}")
    if PARAMS_KEY in data:
        extra = sorted(set(data) - {PARAMS_KEY})
        if extra:
            raise SettingsError(f"unknown key(s) {extra} next to {PARAMS_KEY!r}")
        data = data[PARAMS_KEY] or {}
    return settings_from_flat(data, ignore=ignore)
