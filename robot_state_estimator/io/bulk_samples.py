"""Core samples made straight from bulk-decoded arrays (``io/cdr.py``), without a message object per message.

Replay's reading path: one topic's raw messages are decoded at once (:func:`io.cdr.decode`) and each row becomes the
sample ``io.messages`` would make of the message (``imu_sample_from_msg``, ``joint_sample_from_msg``,
``foot_force_sample_from_msg``, ``foot_wrench_sample_from_msg``, ``contact_schedule_from_msg``): the same stamp,
strings and float64 bit patterns, the checks done on arrays. A row that fails a check (a non-finite value, lengths
that do not match, duplicate names, a bad quaternion, a schedule value other than 0 or 1) is None: the caller builds
that message (:func:`io.bulk.messages_from_arrays`) and hands it to the message path, which raises the exact error and
counts it under its cause key (``io.stream.EstimatorStream.on_*_msg``). Tested equal to the message path on every
message of the test bags and on hypothesis batches (``test/io/test_bulk_samples.py``).

The sample arrays are read-only views into one array per topic (not copies): nothing may write to them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    FootForceSample,
    FootWrenchSample,
    ImuSample,
    JointSample,
)
from robot_state_estimator.io import cdr


def _read_only(a: NDArray[Any]) -> NDArray[Any]:
    a.flags.writeable = False
    return a


def imu_samples(a: cdr.ImuArrays) -> list[ImuSample | None]:
    """One :class:`ImuSample` per message, None where ``imu_sample_from_msg`` would raise.

    As the message path: the orientation is kept (normalised) only when ``orientation_covariance[0] != -1`` and the
    quaternion is not all zeros; angular velocity and linear acceleration must be finite, a kept quaternion finite
    with a norm of at least 1e-6.
    """
    w = _read_only(np.ascontiguousarray(a.angular_velocity))
    f = _read_only(np.ascontiguousarray(a.linear_acceleration))
    q = a.orientation_xyzw
    ok = np.isfinite(w).all(axis=1) & np.isfinite(f).all(axis=1)
    reported = (a.orientation_covariance[:, 0] != -1.0) & (q != 0.0).any(axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        # as math.sqrt(q0*q0 + q1*q1 + q2*q2 + q3*q3) on Python floats, left to right
        norm = np.sqrt(q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1] + q[:, 2] * q[:, 2] + q[:, 3] * q[:, 3])
        ok &= ~reported | (np.isfinite(norm) & (norm >= 1e-6))
        quat = _read_only(q / norm[:, None])
    stamps = a.header.stamp_ns.tolist()
    frames = a.header.frame_id
    out: list[ImuSample | None] = []
    for i, (good, has_quat) in enumerate(zip(ok.tolist(), reported.tolist(), strict=True)):
        out.append(ImuSample(stamps[i], w[i], f[i], quat[i] if has_quat else None, frames[i]) if good else None)
    return out


def _lengths_ok(values: cdr.Ragged, n: NDArray[np.int64], *, may_be_empty: bool) -> NDArray[np.bool_]:
    lengths = np.diff(values.offsets)
    ok = (lengths == n) | (lengths == 0) if may_be_empty else lengths == n
    return np.asarray(ok, dtype=bool)


def _finite_rows(values: cdr.Ragged) -> NDArray[np.bool_]:
    """(N,) whether every value of each row is finite."""
    bad = ~np.isfinite(values.values)
    if not bad.any():
        return np.ones(values.offsets.size - 1, dtype=bool)
    row = np.searchsorted(values.offsets, np.flatnonzero(bad), side="right") - 1
    out = np.ones(values.offsets.size - 1, dtype=bool)
    out[row] = False
    return out


def _rows(values: cdr.Ragged) -> list[NDArray[np.float64]]:
    """Each message's sequence as a read-only view."""
    flat = _read_only(values.values)
    matrix = values.matrix()
    if matrix is not None:
        return list(matrix)
    bounds = values.offsets.tolist()
    return [flat[start:stop] for start, stop in itertools.pairwise(bounds)]


def _names_ok(names: list[tuple[str, ...]]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """(N,) name counts and whether each message's names are non-empty and distinct (equal tuples checked once)."""
    counts = np.fromiter((len(t) for t in names), dtype=np.int64, count=len(names))
    seen: dict[int, bool] = {}
    ok = np.empty(len(names), dtype=bool)
    for i, t in enumerate(names):
        good = seen.get(id(t))
        if good is None:
            good = seen[id(t)] = bool(t) and len(set(t)) == len(t)
        ok[i] = good
    return counts, ok


def joint_samples(a: cdr.JointStateArrays) -> list[JointSample | None]:
    """One :class:`JointSample` per message, None where ``joint_sample_from_msg`` would raise (no names, duplicate
    names, a position count other than the names', a non-empty velocity or effort of another length, a value
    that is not finite); empty velocity or effort become None."""
    n, ok = _names_ok(a.name)
    ok &= _lengths_ok(a.position, n, may_be_empty=False)
    ok &= _lengths_ok(a.velocity, n, may_be_empty=True) & _lengths_ok(a.effort, n, may_be_empty=True)
    ok &= _finite_rows(a.position) & _finite_rows(a.velocity) & _finite_rows(a.effort)
    has_v = (np.diff(a.velocity.offsets) > 0).tolist()
    has_e = (np.diff(a.effort.offsets) > 0).tolist()
    position, velocity, effort = _rows(a.position), _rows(a.velocity), _rows(a.effort)
    stamps = a.header.stamp_ns.tolist()
    out: list[JointSample | None] = []
    for i, good in enumerate(ok.tolist()):
        if not good:
            out.append(None)
            continue
        out.append(
            JointSample(
                stamps[i],
                a.name[i],
                position[i],
                velocity[i] if has_v[i] else None,
                effort[i] if has_e[i] else None,
            )
        )
    return out


def foot_force_samples(a: cdr.JointStateArrays) -> list[FootForceSample | None]:
    """Foot sensors carried as ``sensor_msgs/JointState`` (``name`` = feet, ``effort`` = values): one
    :class:`FootForceSample` per message, None where ``foot_force_sample_from_msg`` would raise (no names, an effort
    count other than the names', duplicate names, a value that is not finite)."""
    n, ok = _names_ok(a.name)
    ok &= _lengths_ok(a.effort, n, may_be_empty=False) & _finite_rows(a.effort)
    effort = _rows(a.effort)
    stamps = a.header.stamp_ns.tolist()
    return [FootForceSample(stamps[i], a.name[i], effort[i]) if good else None for i, good in enumerate(ok.tolist())]


def foot_wrench_samples(a: cdr.WrenchArrays, foot: str) -> list[FootWrenchSample | None]:
    """One :class:`FootWrenchSample` of ``foot`` per message (force then torque in ``header.frame_id``), None where
    ``foot_wrench_sample_from_msg`` would raise (a value that is not finite)."""
    wrench = _read_only(np.concatenate([a.force, a.torque], axis=1))
    ok = np.isfinite(wrench).all(axis=1).tolist()
    stamps, frames = a.header.stamp_ns.tolist(), a.header.frame_id
    return [FootWrenchSample(stamps[i], foot, frames[i], wrench[i]) if good else None for i, good in enumerate(ok)]


def contact_schedule_samples(a: cdr.JointStateArrays) -> list[ContactScheduleSample | None]:
    """A contact schedule as ``sensor_msgs/JointState`` (``name`` = feet, ``position`` = 1 stance / 0 swing): one
    :class:`ContactScheduleSample` per message, None where ``contact_schedule_from_msg`` would raise (no names, a
    position count other than the names', a value other than 0 or 1)."""
    n = np.fromiter((len(t) for t in a.name), dtype=np.int64, count=len(a.name))
    ok = (n > 0) & _lengths_ok(a.position, n, may_be_empty=False)
    values = a.position.values
    bad = (values != 0.0) & (values != 1.0)
    if bad.any():
        ok[np.searchsorted(a.position.offsets, np.flatnonzero(bad), side="right") - 1] = False
    position = _rows(a.position)
    stamps = a.header.stamp_ns.tolist()
    return [
        ContactScheduleSample(stamps[i], a.name[i], tuple((position[i] == 1.0).tolist())) if good else None
        for i, good in enumerate(ok.tolist())
    ]


#: What a converter is: one topic's arrays -> a sample or None per message.
Converter = Callable[[Any], list[Any]]

__all__ = [
    "Converter",
    "contact_schedule_samples",
    "foot_force_samples",
    "foot_wrench_samples",
    "imu_samples",
    "joint_samples",
]
