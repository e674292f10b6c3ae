"""Inputs and outputs of the estimation core: plain, typed, ROS-free.

These are the only types that cross the boundary between the core and its adapters (the ROS node, the
offline replay, the simulator); they live in ``common`` so that the simulator and ``io`` use them without
importing the estimator. Time is integer nanoseconds (``stamp_ns``); arrays are float64 numpy.
Conversions from and to ROS messages live in ``robot_state_estimator.io.messages`` (shared by the node and the
offline tools, which read the same field names from rclpy and rosbags messages).

The estimator makes its outputs cheaply (:meth:`Estimate.from_output_vector`, :func:`foot_states`): arrays are
views of one buffer, made on first read. Treat output arrays as read-only; copy them to keep or change them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.output_layout import (
    FOOT_FIELDS,
    FOOT_STRIDE,
    OUTPUT_FIELDS,
    OUTPUT_SIZE,
    PUBLISHED_SIZE,
)

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class ImuSample:
    """One IMU reading, as ``sensor_msgs/Imu`` carries it.

    Attributes:
        stamp_ns: measurement time (ns).
        angular_velocity: (3,) rad/s, gyroscope in the IMU frame S.
        linear_acceleration: (3,) m/s^2, accelerometer (specific force) in S; +9.81 on z when level at rest.
        orientation_xyzw: (4,) quaternion ``x y z w`` of S in the IMU's orientation reference, or None when
            not reported (REP-145: covariance element 0 = -1).
        frame_id: ``header.frame_id`` ("" when unknown).
    """

    stamp_ns: int
    angular_velocity: FloatArray
    linear_acceleration: FloatArray
    orientation_xyzw: FloatArray | None = None
    frame_id: str = ""


@dataclass(frozen=True)
class JointSample:
    """One ``sensor_msgs/JointState``: values matched by name, never by index.

    Attributes:
        stamp_ns: measurement time (ns).
        names: joint names, in the message's order.
        position: (n,) rad or m.
        velocity: (n,) rad/s or m/s, or None when the message has none (estimated by the core).
        effort: (n,) N m or N, or None when the message has none (torque-based contact detection off).
    """

    stamp_ns: int
    names: tuple[str, ...]
    position: FloatArray
    velocity: FloatArray | None = None
    effort: FloatArray | None = None


@dataclass(frozen=True)
class FootForceSample:
    """Foot contact sensor readings (forces in N or raw pressure counts), matched by foot frame name.

    Attributes:
        stamp_ns: measurement time (ns).
        feet: foot frame names.
        values: (n,) normal force or raw count per foot (units set by the contact detector settings).
    """

    stamp_ns: int
    feet: tuple[str, ...]
    values: FloatArray


@dataclass(frozen=True)
class FootWrenchSample:
    """One foot force/torque sensor reading, as ``geometry_msgs/WrenchStamped`` carries it (one topic per foot).

    Attributes:
        stamp_ns: measurement time (ns).
        foot: the foot frame it belongs to (the topic says which foot; the frame below says where it is expressed).
        frame_id: ``header.frame_id``: the frame of the description the wrench is expressed in, moment about its
            origin (the foot frame, a force/torque sensor frame, the shank, the base ...).
        wrench: (6,) [force N, torque N m], the wrench the ground exerts on the foot, in ``frame_id``.
    """

    stamp_ns: int
    foot: str
    frame_id: str
    wrench: FloatArray


@dataclass(frozen=True)
class ContactScheduleSample:
    """A controller's contact schedule: explicitly named feet and a boolean per foot (True = stance).

    Attributes:
        stamp_ns: the time it applies from (ns).
        feet: foot frame names (every foot of the robot, any order).
        in_contact: one boolean per name.
    """

    stamp_ns: int
    feet: tuple[str, ...]
    in_contact: tuple[bool, ...]


@dataclass(frozen=True)
class FootState:
    """Per-foot result of one joint-state step.

    Attributes:
        name: foot frame name.
        in_contact: debounced contact state.
        force_in_world: (3,) N, ground reaction force on the foot, world axes (``LOCAL_WORLD_ALIGNED``);
            NaN-free zeros when unknown.
        wrench_in_foot: (6,) [force N, torque N m] expressed in the foot frame (what RViz draws at the foot).
        update_accepted: whether this foot's kinematic update passed the gate (False when not in contact).
        nis: normalised innovation squared of its update (NaN when no update ran).
    """

    name: str
    in_contact: bool
    force_in_world: FloatArray
    wrench_in_foot: FloatArray
    update_accepted: bool = False
    nis: float = float("nan")


def foot_states(
    names: tuple[str, ...],
    in_contact: list[bool],
    force_in_world: FloatArray,
    wrench_in_foot: FloatArray,
    update_accepted: list[bool],
    nis: list[float],
) -> tuple[FootState, ...]:
    """Per-foot states from per-foot lists and arrays (what the constructor gives, at a fraction of its cost).

    Args:
        names: (n,) foot frame names.
        in_contact: (n,) contact states.
        force_in_world: (n, 3) N, world axes; row i becomes foot i's ``force_in_world`` (a view, not copied).
        wrench_in_foot: (n, 6) [N, N m] in each foot frame; rows likewise.
        update_accepted: (n,) whether each foot's kinematic update passed the gate.
        nis: (n,) NIS of each foot's update (NaN when none ran).
    """
    out = []
    new, setattr_ = object.__new__, object.__setattr__
    for name, c, f, w, a, e in zip(names, in_contact, force_in_world, wrench_in_foot, update_accepted, nis):
        foot = new(FootState)
        setattr_(
            foot,
            "__dict__",
            {"name": name, "in_contact": c, "force_in_world": f, "wrench_in_foot": w, "update_accepted": a, "nis": e},
        )
        out.append(foot)
    return tuple(out)


@dataclass(frozen=True)
class Estimate:
    """The base state at ``stamp_ns``, in ROS conventions (REP-103/105, nav_msgs/Odometry).

    Attributes:
        stamp_ns: the stamp of the measurement that produced it (ns).
        p_world_base: (3,) m, base position in ``odom``.
        quat_world_base_xyzw: (4,) orientation of the base in ``odom``, ``x y z w``.
        v_base_in_base: (3,) m/s, base linear velocity in the base frame (Odometry twist, child frame).
        omega_base_in_base: (3,) rad/s, base angular velocity in the base frame (bias corrected).
        pose_covariance: (6, 6) row-major order x, y, z, rot x, rot y, rot z; position in ``odom``,
            rotation as small fixed-axis angles about the ``odom`` axes.
        twist_covariance: (6, 6) linear then angular velocity, both in the base frame.
        accel_bias: (3,) m/s^2 in the IMU frame S.
        gyro_bias: (3,) rad/s in S.
        feet: per-foot states (empty on IMU-only steps).
        status: short machine-readable status ("ok", "initializing", ...).
    """

    stamp_ns: int
    p_world_base: FloatArray
    quat_world_base_xyzw: FloatArray
    v_base_in_base: FloatArray
    omega_base_in_base: FloatArray
    pose_covariance: FloatArray
    twist_covariance: FloatArray
    accel_bias: FloatArray
    gyro_bias: FloatArray
    feet: tuple[FootState, ...] = field(default_factory=tuple)
    status: str = "ok"

    @classmethod
    def from_output_vector(
        cls,
        stamp_ns: int,
        output: FloatArray,
        feet: tuple[FootState, ...] | Callable[[], tuple[FootState, ...]] = (),
    ) -> Estimate:
        """An estimate whose arrays are views of one output vector, made when first read (the 1 kHz path).

        Building the nine arrays and the per-foot states of every sample costs more than the filter step; this
        stores the vector and makes each array (a view, then kept) on its first access. The result is an
        :class:`Estimate` to its users (``isinstance``, the same attributes and values, ``dataclasses.replace``,
        ``dataclasses.fields``, pickling and copying, which give an ordinary :class:`Estimate`); its type is a
        private subclass whose instances keep the stamp, the vector and the feet in slots (an object with an
        instance dict costs about twice as much to make and free, a few percent of the whole 1 kHz step).

        Args:
            stamp_ns: ns, the estimate's stamp.
            output: (91,) float64 laid out as ``common.output_layout.OUTPUT_FIELDS`` (``BaseEkf.output_vector``):
                position (3), quaternion xyzw (4), linear velocity (3), angular velocity (3), pose covariance
                (36, row-major), twist covariance (36, row-major), accelerometer bias (3), gyroscope bias (3); or a
                longer float64 vector that starts with those (a step's buffer: :meth:`output_vector` is then its
                first 91 numbers, a view made when read). Not copied: the caller hands it over.
            feet: the per-foot states, or a function returning them (called once, on the first access); a function
                with a ``vector`` attribute (the per-foot numbers, :meth:`feet_vector`) gives those without making
                the states.
        """
        est = _new_object(_LazyEstimate)
        _set_stamp(est, stamp_ns)
        _set_output(est, output)
        if type(feet) is not tuple:  # ignore: ``type() is`` leaves the union here; no cast on this path
            _set_feet_fn(est, feet)  # type: ignore[arg-type]
        elif feet:
            _set_feet(est, feet)
        else:  # no feet: no function (the feet are () when read; feet_vector is empty without making them)
            _set_feet_fn(est, None)
        return est

    def output_vector(self) -> FloatArray:
        """(91,) float64: the numbers of the estimate in the layout of :meth:`from_output_vector` (the stored
        vector itself when made that way, do not write to it; else a new one from the fields)."""
        # OUTPUT_FIELDS is in vector order, contiguous from 0 to OUTPUT_SIZE (test/common/test_output_layout.py)
        return np.concatenate([np.ravel(getattr(self, name)) for name in OUTPUT_FIELDS]).astype(np.float64, copy=False)

    def feet_vector(self) -> FloatArray:
        """(FOOT_STRIDE * n_feet,) float64: the numbers of the per-foot states, one block per foot in the order of
        ``feet`` laid out as ``common.output_layout.FOOT_FIELDS`` (its wrench in the foot frame, then its force in
        the world); empty without feet. The joint step's own numbers when it made them (not copied and not the
        states made: do not write to it), else new from ``feet``."""
        return _feet_vector_of(self.feet)

    def published_vector(self) -> FloatArray:
        """(PUBLISHED_SIZE + FOOT_STRIDE * n_feet,) float64, a new array: the first ``common.output_layout.
        PUBLISHED_SIZE`` numbers of :meth:`output_vector` (what ``nav_msgs/Odometry`` carries: position, quaternion,
        velocities, both covariances), then :meth:`feet_vector` (``io.stream.pack_estimate``'s buffer). Taken from the
        core's step buffer in one copy where the estimate is over it."""
        return _concatenate((self.output_vector()[:PUBLISHED_SIZE], self.feet_vector()))

    def stance_summary(self) -> tuple[int, tuple[str, ...]]:
        """What ``feet`` tells of the contacts: the number of feet in contact, and the names of those in contact whose
        kinematic update was not accepted (``in_contact and not update_accepted``), in the order of ``feet``; ``(0,
        ())`` without feet. From the core's step without making the per-foot states where it can (the node's
        diagnostics read it for every estimate with feet)."""
        feet = self.feet
        return sum(1 for f in feet if f.in_contact), tuple(
            f.name for f in feet if f.in_contact and not f.update_accepted
        )

    if not TYPE_CHECKING:  # (a static checker keeps seeing the declared fields only)

        def __getattr__(self, name: str) -> FloatArray | tuple[FootState, ...]:
            # Only reached for attributes not set on the instance: the lazy fields of from_output_vector.
            return _lazy_field(self, name)


class _LazyEstimate(Estimate):
    """:meth:`Estimate.from_output_vector`'s estimates: stamp, feet (or the function making them) and output vector
    in slots, the arrays made from the vector when first read (:func:`_lazy_field`, kept in the instance dict).
    ``dataclasses.replace`` makes one through the dataclass ``__init__`` (every field set, no vector);
    pickling and copying give an ordinary :class:`Estimate` of the same values."""

    __slots__ = ("_feet_fn", "_output", "feet", "stamp_ns")

    def output_vector(self) -> FloatArray:
        try:
            output = _get_output(self)
        except AttributeError:  # made by dataclasses.replace: from the fields
            return Estimate.output_vector(self)
        if len(output) != OUTPUT_SIZE:  # a step's buffer: its first numbers, kept from the first read on
            output = output[:OUTPUT_SIZE]
            _set_output(self, output)
        return output

    def feet_vector(self) -> FloatArray:
        try:
            make = _get_feet_fn(self)
        except AttributeError:  # made with a tuple of feet, or by dataclasses.replace
            return _feet_vector_of(self.feet)
        if make is None:  # made without feet
            return _EMPTY
        vector: FloatArray | None = getattr(make, "vector", None)
        return _feet_vector_of(self.feet) if vector is None else vector

    def published_vector(self) -> FloatArray:
        try:
            output = _get_output(self)
            make = _get_feet_fn(self)
        except AttributeError:  # made with a tuple of feet, or by dataclasses.replace
            return Estimate.published_vector(self)
        if make is None:  # made without feet
            return output[:PUBLISHED_SIZE].copy()
        of_buffer: Callable[[FloatArray], FloatArray | None] | None = getattr(make, "published_of", None)
        vector = None if of_buffer is None else of_buffer(output)  # None: the estimate is not over its buffer
        return Estimate.published_vector(self) if vector is None else vector

    def stance_summary(self) -> tuple[int, tuple[str, ...]]:
        try:
            make = _get_feet_fn(self)
        except AttributeError:  # made with a tuple of feet, or by dataclasses.replace
            make = None
        summary: Callable[[], tuple[int, tuple[str, ...]]] | None = getattr(make, "stance_summary", None)
        return Estimate.stance_summary(self) if summary is None else summary()

    def __reduce__(self) -> tuple[type[Estimate], tuple[Any, ...]]:  # Any: the field values, of mixed types
        return Estimate, tuple(getattr(self, f.name) for f in fields(Estimate))

    def __repr__(self) -> str:
        return repr(Estimate(*self.__reduce__()[1]))


_new_object = object.__new__
_concatenate = np.concatenate
# The slots' descriptors, read from the class dict and typed here (through the class attributes a checker sees the
# dataclass fields, an int and a tuple, not the descriptors).
_FeetFn = Callable[[], tuple[FootState, ...]]
_slots = _LazyEstimate.__dict__
_set_stamp: Callable[[Estimate, int], None] = _slots["stamp_ns"].__set__
_set_feet: Callable[[Estimate, tuple[FootState, ...]], None] = _slots["feet"].__set__
_set_output: Callable[[Estimate, FloatArray], None] = _slots["_output"].__set__
_get_output: Callable[[Estimate], FloatArray] = _slots["_output"].__get__
_set_feet_fn: Callable[[Estimate, _FeetFn | None], None] = _slots["_feet_fn"].__set__
_get_feet_fn: Callable[[Estimate], _FeetFn | None] = _slots["_feet_fn"].__get__
del _slots


def _lazy_field(est: Estimate, name: str) -> FloatArray | tuple[FootState, ...]:
    """Make, keep and return the field ``name`` of an estimate from :meth:`Estimate.from_output_vector`.

    Raises:
        AttributeError: ``name`` is not such a field (or the estimate was not made that way).
    """
    if type(est) is _LazyEstimate:
        if name == "feet":  # (only from_output_vector leaves it unset: dataclasses.replace sets every field)
            try:
                make = _get_feet_fn(est)  # (kept once used: its ``vector``, Estimate.feet_vector)
            except AttributeError:
                make = None  # made without feet
            feet = () if make is None else make()
            _set_feet(est, feet)
            return feet
        layout = _LAZY_FIELDS.get(name)
        if layout is not None:
            try:
                output = _get_output(est)
            except AttributeError:
                output = None
            if output is not None:
                sl, shape = layout
                value = output[sl]
                if shape is not None:
                    value = value.reshape(shape)
                est.__dict__[name] = value
                return value
    raise AttributeError(f"{type(est).__name__!r} object has no attribute {name!r}")


#: Estimate field -> (slice of the output vector, shape or None)
_LAZY_FIELDS = OUTPUT_FIELDS
_EMPTY = np.empty(0)
_EMPTY.flags.writeable = False


def _feet_vector_of(feet: tuple[FootState, ...]) -> FloatArray:
    """:meth:`Estimate.feet_vector` from per-foot states (a new array)."""
    if not feet:
        return _EMPTY
    vector = np.empty((len(feet), FOOT_STRIDE))
    for name, sl in FOOT_FIELDS.items():
        vector[:, sl] = [getattr(foot, name) for foot in feet]
    return vector.ravel()


@dataclass(frozen=True)
class Event:
    """Something the adapter should report (log once per second per ``key``, count in diagnostics).

    Attributes:
        key: stable machine-readable cause, e.g. ``"imu_nan"``, ``"stamp_backwards"``, ``"unknown_joint"``.
        message: human-readable reason naming what is wrong.
        level: "info", "warn" or "error".
    """

    key: str
    message: str
    level: str = "warn"
