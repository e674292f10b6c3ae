"""The rules between an input message's values and a core sample, written once: what is checked, what is refused
under which cause key, how the values are converted.

Three paths turn the input messages into the core's samples (``common/samples.py``), and all of them apply these
rules by calling this module:

- the message path (``io.message_readers``: rclpy or rosbags message objects, one at a time: replay's reference
  reading, the node's foot inputs and its fallback) and the node's raw path (``io.cdr_samples``: one message's CDR
  bytes) call the *one-message* form of each rule (:func:`imu_sample_from_values`, :func:`check_joint_names` and
  :func:`joint_sample_from_arrays`, :func:`foot_force_sample_from_values`, :func:`foot_wrench_sample_from_values`,
  :func:`contact_schedule_from_values`), which makes the sample or raises :class:`MessageError` with its cause key;
- replay's bulk path (``io.bulk_samples``: one topic decoded at once into arrays by ``io.cdr``) calls the *N-row*
  form (:func:`imu_rows`, :func:`joint_rows_ok`, :func:`foot_force_rows_ok`, :func:`foot_wrench_rows_ok`,
  :func:`contact_schedule_rows_ok`), which tells which rows pass (and converts what needs converting); a row that
  does not pass goes through the message path, which raises the exact error under its cause key.

Both forms of a rule are next to each other here, with one set of constants, cause keys, texts and helpers (the
N-row forms test the names once per distinct tuple of names, with the one-message forms' test). One form for all
three paths was measured and refused (2-core machine, CPU time, 2026-12): the N-row forms called with N = 1 cost
13.7 us an Imu and 34 us a JointState (the node's whole raw path: 2.5 and 4.7 us a message), and the one-message
form called for each row of a topic 2.5-2.9 us an Imu (the N-row form: 1.0 us a row, the sample included). The
forms are tested equal: ``test/io/test_sample_rules.py`` (both forms on the same values: the sample or the refusal),
``test/io/test_bulk_samples.py`` and ``test/io/test_cdr_samples.py`` (each path against the message path).

The rules (cause keys as the node's ``rejected.<cause>`` diagnostics count them; ``io.stream`` turns a
:class:`MessageError` into a skip under ``MessageError.cause``):

- Stamps: ``stamp_ns = sec * 1e9 + nanosec`` (``common.time``), not checked here (``io.stream``'s rules).
- ``sensor_msgs/Imu``: angular velocity and linear acceleration finite (``imu_not_finite``). The orientation is
  kept only when reported: element 0 of ``orientation_covariance`` not -1 (REP-145: -1 = not reported; the other
  covariances are not used) and the quaternion not all zeros; a reported one must have a finite norm of at least
  ``QUATERNION_MIN_NORM`` (``imu_bad_message``) and is kept divided by it (the norm summed x, y, z, w, left to right).
- ``sensor_msgs/JointState`` (joints): names given and distinct (``joint_bad_message``); as many positions as names,
  velocity and effort empty (not reported: None) or as many as names (``joint_bad_lengths``); every value finite
  (``joint_not_finite``). Checked in this order; the first failing check names the cause.
- Foot sensors as ``sensor_msgs/JointState`` (name = foot frames, effort = force or count): names given and as many
  efforts as names, names distinct, values finite (all ``foot_force_bad_message``).
- ``geometry_msgs/WrenchStamped`` of one foot: force and torque finite (``foot_wrench_not_finite``).
- A contact schedule as ``sensor_msgs/JointState`` (name = feet, position 1.0 stance / 0.0 swing): names given and
  as many positions as names, every position 0 or 1 (all ``schedule_bad_message``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    FootForceSample,
    FootWrenchSample,
    ImuSample,
    JointSample,
)

if TYPE_CHECKING:
    from robot_state_estimator.io.cdr import Ragged

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: Cause keys of refused input messages (the node's ``rejected.<cause>`` diagnostics).
IMU_NOT_FINITE = "imu_not_finite"
IMU_BAD_MESSAGE = "imu_bad_message"
JOINT_NOT_FINITE = "joint_not_finite"
JOINT_BAD_LENGTHS = "joint_bad_lengths"
JOINT_BAD_MESSAGE = "joint_bad_message"
FOOT_FORCE_BAD_MESSAGE = "foot_force_bad_message"
FOOT_WRENCH_NOT_FINITE = "foot_wrench_not_finite"
FOOT_WRENCH_BAD_MESSAGE = "foot_wrench_bad_message"
SCHEDULE_BAD_MESSAGE = "schedule_bad_message"
#: Every cause key of these rules (the node's diagnostics list each: ``ros.diagnostics.REJECT_KEYS``).
MESSAGE_CAUSES: tuple[str, ...] = (
    IMU_NOT_FINITE,
    IMU_BAD_MESSAGE,
    JOINT_NOT_FINITE,
    JOINT_BAD_LENGTHS,
    JOINT_BAD_MESSAGE,
    FOOT_FORCE_BAD_MESSAGE,
    FOOT_WRENCH_NOT_FINITE,
    FOOT_WRENCH_BAD_MESSAGE,
    SCHEDULE_BAD_MESSAGE,
)

#: REP-145: element 0 of a covariance set to this marks the field as not reported.
NOT_REPORTED = -1.0
#: A reported IMU orientation whose quaternion norm is below this (or not finite) is refused.
QUATERNION_MIN_NORM = 1e-6
#: Contact-schedule positions: stance and swing (README, "Contact schedule").
STANCE = 1.0
SWING = 0.0


class MessageError(ValueError):
    """A message cannot be converted: wrong lengths, NaN/Inf, missing fields. The message says which.

    Attributes:
        cause: the cause key it is counted under (``imu_not_finite`` ...; "" when it is not an input's).
    """

    def __init__(self, message: str, cause: str = "") -> None:
        super().__init__(message)
        self.cause = cause


def _distinct(names: Sequence[str]) -> bool:
    return len(set(names)) == len(names)


def _duplicates(names: Sequence[str]) -> list[str]:
    return sorted({x for x in names if names.count(x) > 1})


_SampleT = TypeVar("_SampleT", ImuSample, JointSample)


def _made(cls: type[_SampleT], values: dict[str, object]) -> _SampleT:
    """``cls(**values)`` for a frozen sample dataclass without its generated ``__init__`` (one ``object.__setattr__``
    per field: twice the cost; the node and the message path make one per message): the instance dict set at once.
    ``values`` must name every field of ``cls``; nothing is checked or converted (the rules above did)."""
    sample = _new_object(cls)
    _set_attr(sample, "__dict__", values)
    return sample


_new_object = object.__new__
_set_attr = object.__setattr__

# --------------------------------------------------------------------------------------------------- IMU

_isfinite = math.isfinite


def imu_sample_from_values(
    stamp_ns: int,
    frame_id: str,
    angular_velocity: Sequence[float],
    linear_acceleration: Sequence[float],
    quat: Sequence[float],
    orientation_covariance_0: float,
) -> ImuSample:
    """The :class:`ImuSample` of an Imu's values (module doc, ``sensor_msgs/Imu``).

    Args:
        stamp_ns: ns, the header stamp.
        frame_id: the header's frame.
        angular_velocity: (3,) rad/s, Python floats.
        linear_acceleration: (3,) m/s^2, Python floats.
        quat: the orientation x y z w as reported.
        orientation_covariance_0: element 0 of the orientation covariance (-1: not reported, REP-145).

    Raises:
        MessageError: angular velocity or linear acceleration not finite (``imu_not_finite``, the message names the
            field), or a reported orientation that is not a finite non-zero quaternion (``imu_bad_message``).
    """
    w, f = angular_velocity, linear_acceleration
    # all finite: then so is their sum, unless it overflows (then the test of each value decides)
    if not _isfinite(w[0] + w[1] + w[2] + f[0] + f[1] + f[2]):
        for what, v in (("angular_velocity", w), ("linear_acceleration", f)):
            if not all(map(_isfinite, v)):
                raise MessageError(f"{what} is not finite: {list(v)}", IMU_NOT_FINITE)
    quat_xyzw: FloatArray | None = None
    if orientation_covariance_0 != NOT_REPORTED and any(quat):
        n = math.sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3])
        if not _isfinite(n) or n < QUATERNION_MIN_NORM:
            raise MessageError(f"orientation is not a valid quaternion: {list(quat)}", IMU_BAD_MESSAGE)
        quat_xyzw = np.array(quat, dtype=float) / n
    return _made(
        ImuSample,
        {
            "stamp_ns": stamp_ns,
            "angular_velocity": np.array(w, dtype=float),
            "linear_acceleration": np.array(f, dtype=float),
            "orientation_xyzw": quat_xyzw,
            "frame_id": frame_id,
        },
    )


class ImuRows(NamedTuple):
    """:func:`imu_rows`' answer for N Imu messages.

    Attributes:
        ok: (N,) whether :func:`imu_sample_from_values` makes a sample of the row (it raises where not).
        reported: (N,) whether the row's orientation is kept.
        orientation_xyzw: (N, 4) the quaternions divided by their norm (meaningful where ``ok & reported``).
    """

    ok: BoolArray
    reported: BoolArray
    orientation_xyzw: FloatArray


def imu_rows(
    angular_velocity: FloatArray,
    linear_acceleration: FloatArray,
    orientation_xyzw: FloatArray,
    orientation_covariance_0: FloatArray,
) -> ImuRows:
    """The Imu rule of :func:`imu_sample_from_values` on N rows.

    Args:
        angular_velocity: (N, 3) rad/s.
        linear_acceleration: (N, 3) m/s^2.
        orientation_xyzw: (N, 4) as reported.
        orientation_covariance_0: (N,) element 0 of each orientation covariance.
    """
    q = orientation_xyzw
    ok = np.isfinite(angular_velocity).all(axis=1) & np.isfinite(linear_acceleration).all(axis=1)
    reported = (orientation_covariance_0 != NOT_REPORTED) & (q != 0.0).any(axis=1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # as math.sqrt(q0*q0 + q1*q1 + q2*q2 + q3*q3) on Python floats, left to right
        norm = np.sqrt(q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1] + q[:, 2] * q[:, 2] + q[:, 3] * q[:, 3])
        ok &= ~reported | (np.isfinite(norm) & (norm >= QUATERNION_MIN_NORM))
        quat = q / norm[:, None]
    return ImuRows(ok, reported, quat)


# ------------------------------------------------------------------------------------------- joint states


def check_joint_names(names: tuple[str, ...]) -> None:
    """Refuse a JointState's names: none, or one twice.

    Raises:
        MessageError: no names, or duplicate names (``joint_bad_message``; the message names them).
    """
    if not names:
        raise MessageError("JointState has no joint names", JOINT_BAD_MESSAGE)
    if not _distinct(names):
        raise MessageError(f"JointState has duplicate joint names: {_duplicates(names)}", JOINT_BAD_MESSAGE)


def joint_sample_from_arrays(
    stamp_ns: int,
    names: tuple[str, ...],
    position: FloatArray,
    velocity: FloatArray,
    effort: FloatArray,
    *,
    values_finite: bool = False,
) -> JointSample:
    """The :class:`JointSample` of a JointState's values, its names checked by :func:`check_joint_names`.

    Args:
        stamp_ns: ns, the header stamp.
        names: the joint names.
        position, velocity, effort: (n,), (n,) or (0,), (n,) or (0,) float64 arrays the sample takes over (not
            copied); an empty velocity or effort is not reported (None).
        values_finite: the caller found every value finite (``io.cdr_samples``: one test over the three); False:
            tested here.

    Raises:
        MessageError: lengths that do not match the names (``joint_bad_lengths``), or non-finite values
            (``joint_not_finite``; the message names the joints).
    """
    n = len(names)
    if position.shape != (n,):
        raise MessageError(f"JointState has {n} names but {position.size} positions", JOINT_BAD_LENGTHS)
    for field_name, values in (("velocity", velocity), ("effort", effort)):
        if values.size and values.shape != (n,):
            raise MessageError(f"JointState has {n} names but {values.size} {field_name} values", JOINT_BAD_LENGTHS)
    # all finite: then so is the sum of the squares, unless it overflows (then the test of each value decides)
    if not values_finite and not _isfinite(position.dot(position) + velocity.dot(velocity) + effort.dot(effort)):
        for field_name, values in (("position", position), ("velocity", velocity), ("effort", effort)):
            if not np.isfinite(values).all():
                bad = [names[i] for i in np.flatnonzero(~np.isfinite(values))]
                raise MessageError(f"JointState {field_name} is not finite for joints {bad}", JOINT_NOT_FINITE)
    return _made(
        JointSample,
        {
            "stamp_ns": stamp_ns,
            "names": names,
            "position": position,
            "velocity": velocity if velocity.size else None,
            "effort": effort if effort.size else None,
        },
    )


def _names_ok(names: Sequence[tuple[str, ...]]) -> tuple[NDArray[np.int64], BoolArray]:
    """(N,) name counts and whether each message's names are given and distinct (equal tuples of consecutive
    messages are one object: checked once)."""
    counts = np.fromiter((len(t) for t in names), dtype=np.int64, count=len(names))
    seen: dict[int, bool] = {}
    ok = np.empty(len(names), dtype=bool)
    for i, t in enumerate(names):
        good = seen.get(id(t))
        if good is None:
            good = seen[id(t)] = bool(t) and _distinct(t)
        ok[i] = good
    return counts, ok


def _lengths_match(values: Ragged, n: NDArray[np.int64], *, may_be_empty: bool) -> BoolArray:
    """(N,) whether each row has ``n`` values (or none, with ``may_be_empty``: not reported)."""
    lengths = np.diff(values.offsets)
    ok = (lengths == n) | (lengths == 0) if may_be_empty else lengths == n
    return np.asarray(ok, dtype=bool)


def _rows_all(values: Ragged, good: BoolArray) -> BoolArray:
    """(N,) whether ``good`` (one per value of ``values``) holds for every value of each row."""
    out = np.ones(values.offsets.size - 1, dtype=bool)
    bad = ~good
    if bad.any():
        out[np.searchsorted(values.offsets, np.flatnonzero(bad), side="right") - 1] = False
    return out


def _finite_rows(values: Ragged) -> BoolArray:
    """(N,) whether every value of each row is finite."""
    return _rows_all(values, np.isfinite(values.values))


def joint_rows_ok(names: Sequence[tuple[str, ...]], position: Ragged, velocity: Ragged, effort: Ragged) -> BoolArray:
    """The JointState rule of :func:`check_joint_names` and :func:`joint_sample_from_arrays` on N rows: (N,) whether
    each makes a sample."""
    n, ok = _names_ok(names)
    ok &= _lengths_match(position, n, may_be_empty=False)
    ok &= _lengths_match(velocity, n, may_be_empty=True) & _lengths_match(effort, n, may_be_empty=True)
    ok &= _finite_rows(position) & _finite_rows(velocity) & _finite_rows(effort)
    return ok


# ------------------------------------------------------------------------------------------- foot forces


def foot_force_sample_from_values(stamp_ns: int, names: tuple[str, ...], values: FloatArray) -> FootForceSample:
    """The :class:`FootForceSample` of foot sensors carried as a JointState (``name`` = foot frames, ``effort`` =
    ``values``, taken over, not copied).

    Raises:
        MessageError: no names, ``effort`` length differing from ``name``, duplicate names (two values for one foot),
            or non-finite values (all ``foot_force_bad_message``; the message names the feet).
    """
    if not names or values.shape != (len(names),):
        raise MessageError(f"foot forces: {len(names)} names but {values.size} effort values", FOOT_FORCE_BAD_MESSAGE)
    if not _distinct(names):
        raise MessageError(f"foot forces have duplicate foot names: {_duplicates(names)}", FOOT_FORCE_BAD_MESSAGE)
    if not np.all(np.isfinite(values)):
        bad = [names[i] for i in np.flatnonzero(~np.isfinite(values))]
        raise MessageError(f"foot forces are not finite for feet {bad}", FOOT_FORCE_BAD_MESSAGE)
    return FootForceSample(stamp_ns=stamp_ns, feet=names, values=values)


def foot_force_rows_ok(names: Sequence[tuple[str, ...]], effort: Ragged) -> BoolArray:
    """The rule of :func:`foot_force_sample_from_values` on N rows: (N,) whether each makes a sample."""
    n, ok = _names_ok(names)
    ok &= _lengths_match(effort, n, may_be_empty=False) & _finite_rows(effort)
    return ok


# ------------------------------------------------------------------------------------------- foot wrenches


def foot_wrench_sample_from_values(stamp_ns: int, foot: str, frame_id: str, wrench: FloatArray) -> FootWrenchSample:
    """The :class:`FootWrenchSample` of foot ``foot``: ``wrench`` (6,) force N then torque N m in ``frame_id``
    (taken over, not copied).

    Raises:
        MessageError: a non-finite force or torque (``foot_wrench_not_finite``; the message names the foot).
    """
    if not np.isfinite(wrench).all():
        raise MessageError(f"foot wrench of {foot} is not finite: {wrench.tolist()}", FOOT_WRENCH_NOT_FINITE)
    return FootWrenchSample(stamp_ns=stamp_ns, foot=foot, frame_id=frame_id, wrench=wrench)


def foot_wrench_rows_ok(wrench: FloatArray) -> BoolArray:
    """The rule of :func:`foot_wrench_sample_from_values` on N rows of (N, 6): (N,) whether each makes a sample."""
    return np.asarray(np.isfinite(wrench).all(axis=1), dtype=bool)


# --------------------------------------------------------------------------------------- contact schedule


def contact_schedule_from_values(stamp_ns: int, names: tuple[str, ...], values: FloatArray) -> ContactScheduleSample:
    """The :class:`ContactScheduleSample` of a schedule as a JointState (``name`` = feet, ``position`` = ``values``:
    1.0 stance, 0.0 swing); the names are checked against the robot's feet by the core.

    Raises:
        MessageError: no names, ``position`` of another length than ``name``, or a value that is not 0 or 1 (all
            ``schedule_bad_message``; the message names the feet).
    """
    if not names or values.shape != (len(names),):
        raise MessageError(
            f"contact schedule: {len(names)} names but {values.size} position values", SCHEDULE_BAD_MESSAGE
        )
    bad = np.flatnonzero((values != SWING) & (values != STANCE)).tolist()
    if bad:
        raise MessageError(
            "contact schedule values must be 1 (stance) or 0 (swing): "
            + ", ".join(f"{names[i]} has {float(values[i])!r}" for i in bad),
            SCHEDULE_BAD_MESSAGE,
        )
    return ContactScheduleSample(stamp_ns=stamp_ns, feet=names, in_contact=tuple((values == STANCE).tolist()))


def contact_schedule_rows_ok(names: Sequence[tuple[str, ...]], position: Ragged) -> BoolArray:
    """The rule of :func:`contact_schedule_from_values` on N rows: (N,) whether each makes a sample."""
    n = np.fromiter((len(t) for t in names), dtype=np.int64, count=len(names))
    values = position.values
    return (
        (n > 0)
        & _lengths_match(position, n, may_be_empty=False)
        & _rows_all(position, (values == SWING) | (values == STANCE))
    )


__all__ = [
    "FOOT_FORCE_BAD_MESSAGE",
    "FOOT_WRENCH_BAD_MESSAGE",
    "FOOT_WRENCH_NOT_FINITE",
    "IMU_BAD_MESSAGE",
    "IMU_NOT_FINITE",
    "JOINT_BAD_LENGTHS",
    "JOINT_BAD_MESSAGE",
    "JOINT_NOT_FINITE",
    "MESSAGE_CAUSES",
    "NOT_REPORTED",
    "QUATERNION_MIN_NORM",
    "SCHEDULE_BAD_MESSAGE",
    "STANCE",
    "SWING",
    "ImuRows",
    "MessageError",
    "check_joint_names",
    "contact_schedule_from_values",
    "contact_schedule_rows_ok",
    "foot_force_rows_ok",
    "foot_force_sample_from_values",
    "foot_wrench_rows_ok",
    "foot_wrench_sample_from_values",
    "imu_rows",
    "imu_sample_from_values",
    "joint_rows_ok",
    "joint_sample_from_arrays",
]
