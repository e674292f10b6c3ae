"""Core samples made straight from bulk-decoded arrays (``io/cdr.py``), without a message object per message.

Replay's reading path: one topic's raw messages are decoded at once (:func:`io.cdr.decode`) and each row becomes the
sample the message path would make of the message (``io.message_readers``: ``imu_sample_from_msg``,
``joint_sample_from_msg``, ``foot_force_sample_from_msg``, ``foot_wrench_sample_from_msg``,
``contact_schedule_from_msg``): the same stamp, strings and float64 bit patterns, the rules (``io.sample_rules``)
applied to all rows at once by their N-row forms. A row that fails one (a non-finite value, lengths that do not match,
duplicate names, a bad quaternion, a schedule value other than 0 or 1) is None: the caller builds that message
(:func:`io.bulk.messages_from_arrays`) and hands it to the message path, which raises the exact error and counts it
under its cause key (``io.stream.EstimatorStream.on_*_msg``). Tested equal to the message path on every message of
the test bags and on hypothesis batches (``test/io/test_bulk_samples.py``).

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
from robot_state_estimator.io.sample_rules import (
    STANCE,
    contact_schedule_rows_ok,
    foot_force_rows_ok,
    foot_wrench_rows_ok,
    imu_rows,
    joint_rows_ok,
)


def _read_only(a: NDArray[Any]) -> NDArray[Any]:
    a.flags.writeable = False
    return a


def _rows(values: cdr.Ragged) -> list[NDArray[np.float64]]:
    """Each message's sequence as a read-only view."""
    flat = _read_only(values.values)
    matrix = values.matrix()
    if matrix is not None:
        return list(matrix)
    bounds = values.offsets.tolist()
    return [flat[start:stop] for start, stop in itertools.pairwise(bounds)]


def imu_samples(a: cdr.ImuArrays) -> list[ImuSample | None]:
    """One :class:`ImuSample` per message, None where ``imu_sample_from_msg`` would raise (``sample_rules.imu_rows``:
    angular velocity and linear acceleration finite; the orientation kept, normalised, only when reported and then a
    finite non-zero quaternion)."""
    w = _read_only(np.ascontiguousarray(a.angular_velocity))
    f = _read_only(np.ascontiguousarray(a.linear_acceleration))
    ok, reported, quat = imu_rows(w, f, a.orientation_xyzw, a.orientation_covariance[:, 0])
    quat = _read_only(quat)
    stamps = a.header.stamp_ns.tolist()
    frames = a.header.frame_id
    out: list[ImuSample | None] = []
    for i, (good, has_quat) in enumerate(zip(ok.tolist(), reported.tolist(), strict=True)):
        out.append(ImuSample(stamps[i], w[i], f[i], quat[i] if has_quat else None, frames[i]) if good else None)
    return out


def joint_samples(a: cdr.JointStateArrays) -> list[JointSample | None]:
    """One :class:`JointSample` per message, None where ``joint_sample_from_msg`` would raise
    (``sample_rules.joint_rows_ok``: no names, duplicate names, a position count other than the names', a non-empty
    velocity or effort of another length, a value that is not finite); empty velocity or effort become None."""
    ok = joint_rows_ok(a.name, a.position, a.velocity, a.effort)
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
    :class:`FootForceSample` per message, None where ``foot_force_sample_from_msg`` would raise
    (``sample_rules.foot_force_rows_ok``: no names, an effort count other than the names', duplicate names, a value
    that is not finite)."""
    ok = foot_force_rows_ok(a.name, a.effort)
    effort = _rows(a.effort)
    stamps = a.header.stamp_ns.tolist()
    return [FootForceSample(stamps[i], a.name[i], effort[i]) if good else None for i, good in enumerate(ok.tolist())]


def foot_wrench_samples(a: cdr.WrenchArrays, foot: str) -> list[FootWrenchSample | None]:
    """One :class:`FootWrenchSample` of ``foot`` per message (force then torque in ``header.frame_id``), None where
    ``foot_wrench_sample_from_msg`` would raise (``sample_rules.foot_wrench_rows_ok``: a value that is not finite)."""
    wrench = _read_only(np.concatenate([a.force, a.torque], axis=1))
    ok = foot_wrench_rows_ok(wrench).tolist()
    stamps, frames = a.header.stamp_ns.tolist(), a.header.frame_id
    return [FootWrenchSample(stamps[i], foot, frames[i], wrench[i]) if good else None for i, good in enumerate(ok)]


def contact_schedule_samples(a: cdr.JointStateArrays) -> list[ContactScheduleSample | None]:
    """A contact schedule as ``sensor_msgs/JointState`` (``name`` = feet, ``position`` = 1 stance / 0 swing): one
    :class:`ContactScheduleSample` per message, None where ``contact_schedule_from_msg`` would raise
    (``sample_rules.contact_schedule_rows_ok``: no names, a position count other than the names', a value other than
    0 or 1)."""
    ok = contact_schedule_rows_ok(a.name, a.position)
    position = _rows(a.position)
    stamps = a.header.stamp_ns.tolist()
    return [
        ContactScheduleSample(stamps[i], a.name[i], tuple((position[i] == STANCE).tolist())) if good else None
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
