"""The estimator: timestamped IMU, joint and foot-sensor samples in, base state out.

:class:`RobotStateEstimator` is what the ROS node and the offline replay drive: a façade over the filter
(:class:`~.ekf.BaseEkf`, :mod:`.ekf`), the IMU front end (:mod:`.imu_frontend`: checks, propagation,
initialisation) and the leg odometry (:mod:`.leg_odometry`: joint preparation, contact source, stance update). The
numerics run in one backend (:mod:`.ekf.backends`: the numba kernels, or the numpy reference), chosen once at
construction and shared by all parts.

Timing rules (all times are the samples' own stamps, integer ns; the filter never looks at a clock):

- Each IMU sample propagates the filter from its time to the sample's stamp, the reading held over the
  interval (zero-order hold).
- A joint sample newer than the filter time is held; when an IMU sample reaches or passes its stamp, the
  filter propagates (with that IMU reading) to the joint stamp, applies the kinematic update, then
  propagates on to the IMU stamp. Held samples are applied in stamp order.
- A joint sample at most ``settings.max_measurement_delay_s`` older than the filter time is applied *at the
  filter time*: the filter does not roll back; the error this makes is bounded by the velocity change over
  that delay (a few mm/s for 20 ms in a trot). An older sample is dropped (event ``joint_too_old``).
- An IMU stamp equal to the last one is refused (``imu_dt_nonpositive``); one older by at most
  ``out_of_order_tolerance_s`` is dropped (``imu_out_of_order``); older still resets the estimator
  (``stamp_backwards``, e.g. a looping bag) and the sample starts the new initialisation. A gap larger than
  ``ekf.max_dt_s`` has no IMU reading: it is crossed at the estimated velocity with the covariance grown for it,
  and the filter re-anchors its clock (``imu_gap``); joint samples held in it are not propagated over with the
  next reading: the latest is applied after the gap when within ``max_measurement_delay_s`` of it, the others are
  dropped (``joint_too_old``). Joint stamps follow the same rules against the last joint stamp.
- Bad samples (NaN/Inf, implausible IMU magnitudes, wrong lengths, unknown/missing/duplicate joint names:
  :mod:`.joint_input`) are skipped with an event; the state is unchanged. Events are collected and returned by
  :meth:`RobotStateEstimator.pop_events`.
- Initialisation (:mod:`.imu_frontend`): from a static window of IMU samples, or from the moving robot after
  ``ekf.init_timeout_s``, once a foot is loaded; or :meth:`RobotStateEstimator.initialize_state` with an explicit
  state. Outputs are made when read: an :class:`Estimate` holds the filter's output vector and its arrays are views
  of it, and its per-foot states (and ``last_update_results``) are built on first access.

Event keys (stable; level ``warn`` unless noted): ``imu_shape``, ``imu_nan``, ``imu_out_of_range``,
``imu_frame_id`` (info; the sample is still used), ``imu_noise_below_floor`` (at construction: the
description's IMU noise is below the legged-robot floor, :mod:`.noise_model`), ``imu_dt_nonpositive``,
``imu_out_of_order``, ``imu_gap``,
``stamp_backwards``, ``reset``, ``initialized`` (info), ``init_waiting_for_load`` (info, once per initialisation:
no foot loaded yet), ``initialized_moving`` (warn: initialised from a
moving window after ``ekf.init_timeout_s``, attitude and velocity less certain), ``joint_shape``,
``joint_nan``, ``duplicate_joint``, ``unknown_joint``, ``ignored_joints`` (info: with
``ignore_unknown_joints``, the names not in the model that are ignored; reported when that set changes),
``missing_joint``, ``joint_dt_nonpositive``,
``joint_out_of_order``, ``joint_too_old``, ``joint_queue_overflow``, ``foot_force_shape``, ``foot_force_nan``,
``unknown_foot``, foot wrench sensors (:mod:`.contact_inputs`): ``foot_wrench_shape``, ``foot_wrench_nan``,
``foot_wrench_unknown_frame``, ``foot_wrench_out_of_order``, ``foot_wrench_stale`` (a change of the set of feet
whose wrench is not fresh, named; the sample is not refused), the contact schedule: ``schedule_shape``,
``schedule_duplicate_feet``, ``schedule_unknown_feet``, ``schedule_missing_feet``, ``contact_schedule_disagrees``
(a foot's schedule and force-based contact differ for ``contact.schedule_disagreement_s``; the schedule is used),
``contact_source_unavailable`` (also a stale schedule), ``contacts_from_kinematics`` (once per estimator, when the
kinematic contact source is first used: contacts from foot heights and speeds, unreliable for low foot clearance),
``foot_gated`` (info: a stance foot failed the chi-square gate; "orientation" in the message for the flat feet's
orientation update), ``foot_frames_merged`` (info: foot detection kept one frame of a rigid body and dropped others,
both named),
``foot_slipping`` (a stance foot's leg-update NIS above the chi-square 99 % point for ``ekf.slip_nis_fraction`` of
``ekf.slip_nis_window_s``, once per episode; :mod:`.slip`, counts in ``slip.episodes``),
``filter_diverged`` (error: non-finite state, estimator reset).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    Estimate,
    Event,
    FootForceSample,
    FootState,
    FootWrenchSample,
    ImuSample,
    JointSample,
)
from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation.ekf import BaseEkf, UpdateResult, check_pose, imu_noise_from_spec
from robot_state_estimator.estimation.ekf.backends import Backend, select_backend
from robot_state_estimator.estimation.events import EventLog
from robot_state_estimator.estimation.imu_frontend import ImuFrontend, check_imu_on_the_base
from robot_state_estimator.estimation.kinematics import LegKinematics
from robot_state_estimator.estimation.leg_odometry import LegOdometry, StepFeet
from robot_state_estimator.estimation.noise_model import apply_imu_noise_floor
from robot_state_estimator.estimation.settings import EstimatorSettings

FloatArray = NDArray[np.float64]

_NS = 1_000_000_000
_from_output_vector = Estimate.from_output_vector


class RobotStateEstimator:
    """Floating-base state estimator: IMU propagation, leg-kinematics updates, contacts and forces.

    Args:
        model: pinocchio model with a free-flyer root joint (``root_joint``) and the base link on it.
        imu: the IMU spec (``pose_in_base`` = ``X_base_imu``, noise, rate).
        foot_frames: foot frame names (contact points); their order is the order of ``Estimate.feet``.
        settings: estimator settings.
        base_link: the base link frame name (on the root joint).
        foot_radii: per foot, m, the sphere radius of the foot from the description (rolling contact), used
            when ``settings.ekf.foot_radius_m`` is negative ("from the description"); None = point feet.
            :meth:`from_description` passes ``desc.foot_radius(foot)``.
        backend: the numerics (:mod:`.ekf.backends`); None: ``select_backend()`` (the numba kernels unless
            ``ROBOT_STATE_ESTIMATOR_DISABLE_JIT`` is set or numba is missing).

    Attributes:
        ekf: the filter. legs: the leg odometry. imu_frontend: the IMU front end. kin, forces, torque_detector,
            sensor_detector, wrench_detector, kinematic_detector, foot_wrenches, schedule, joint_velocity, slip:
            the leg odometry's parts. foot_frames, joint_names, foot_radii (m), flat_feet: the robot as estimated.

    Raises:
        ModelError: the model does not fit (no free-flyer, unknown frames, base link not on the root, the IMU on
            a link that moves relative to the base).
        ValueError: bad ``foot_radii``.
    """

    def __init__(
        self,
        model: pin.Model,
        imu: ImuSpec,
        foot_frames: Sequence[str],
        settings: EstimatorSettings,
        *,
        base_link: str,
        foot_radii: Sequence[float] | None = None,
        backend: Backend | None = None,
    ) -> None:
        self.model, self.imu, self.settings, self.base_link = model, imu, settings, base_link
        self.backend = backend = select_backend() if backend is None else backend
        kin = LegKinematics(model, foot_frames, base_link=base_link, backend=backend)
        check_imu_on_the_base(model, imu, base_link)
        imu_noise, floor_messages = apply_imu_noise_floor(
            imu_noise_from_spec(imu, settings.ekf), settings.ekf, imu.name
        )
        self.ekf = BaseEkf(imu.pose_in_base, imu_noise, settings.ekf, backend=backend)
        self._events = EventLog()
        for message in floor_messages:
            self._events.emit("imu_noise_below_floor", message, "warn")
        legs = self.legs = LegOdometry(kin, self.ekf, settings, foot_radii=foot_radii, events=self._events)
        self.imu_frontend = ImuFrontend(imu, settings, self.ekf, legs, self._events)
        contact = legs.contact
        self.kin, self.forces, self.slip = kin, legs.forces, legs.slip
        self.foot_frames, self.foot_radii, self.flat_feet = legs.foot_frames, legs.foot_radii, legs.flat_feet
        self.joint_names: tuple[str, ...] = legs.joint_input.joint_names
        self.joint_velocity = legs.joint_input.joint_velocity
        self.torque_detector, self.sensor_detector = contact.torque_detector, contact.sensor_detector
        self.wrench_detector, self.kinematic_detector = contact.wrench_detector, contact.kinematic_detector
        self.foot_wrenches, self.schedule = contact.foot_wrenches, contact.schedule
        legs.warm_up()
        self._reset_state()

    @classmethod
    def from_description(cls, desc: Any, settings: EstimatorSettings | None = None) -> RobotStateEstimator:
        """Build from a ``RobotDescription`` (``.model``, ``.imu``, ``.base_link``, ``.foot_frames()``).

        ``settings.foot_frames`` overrides the description's feet when not empty; the foot radii come from
        ``desc.foot_radius(foot)`` (used when ``settings.ekf.foot_radius_m`` is negative). The IMU is the one
        ``settings.imu_name`` / ``settings.declared_imu`` choose (``estimation.imu_setup.apply_imu_settings``;
        the events describing a declared IMU are queued for :meth:`pop_events`). Detected feet are one
        frame per rigid body (``desc.foot_frame_choice``); when detection dropped frames of a body it kept
        another of, an info event ``foot_frames_merged`` names both.

        Raises:
            ModelError: see the constructor.
            DescriptionError: no IMU, several and none chosen, an unknown ``imu_name``, a declared IMU on a frame
                the description lacks (see ``apply_imu_settings``).
        """
        from robot_state_estimator.estimation.imu_setup import apply_imu_settings, imu_settings_events

        settings = EstimatorSettings() if settings is None else settings
        desc = apply_imu_settings(desc, settings)
        merged = ""
        if settings.foot_frames:
            feet = tuple(settings.foot_frames)
        elif hasattr(desc, "foot_frame_choice"):
            choice = desc.foot_frame_choice()
            feet, merged = choice.frames, choice.message()
        else:
            feet = tuple(desc.foot_frames())
        radii = None
        if settings.ekf.foot_radius_m < 0.0 and hasattr(desc, "foot_radius"):
            radii = [desc.foot_radius(f) for f in feet]
        est = cls(desc.model, desc.imu, feet, settings, base_link=desc.base_link, foot_radii=radii)
        est._events.extend(imu_settings_events(desc, settings))
        if merged:  # which frame of a rigid body detection kept, and which it dropped
            est._events.emit("foot_frames_merged", merged, "info")
        return est

    # -- state and lifecycle ---------------------------------------------------------------------------------------

    def _reset_state(self) -> None:
        self.imu_frontend.reset()
        self.legs.reset()
        self._last_estimate: Estimate | None = None

    def reset(self, reason: str = "requested") -> None:
        """Drop the state; the next IMU samples initialise again. Reports a ``reset`` event with the reason."""
        self._reset_state()
        self._events.emit("reset", f"estimator reset: {reason}", "warn")

    def pop_events(self) -> list[Event]:
        """Events since the last call (and clears them)."""
        return self._events.pop()

    @property
    def initialized(self) -> bool:
        """True once the filter has a state."""
        return self.ekf.initialized

    @property
    def last_estimate(self) -> Estimate | None:
        """The last estimate returned (None before initialisation or after a reset)."""
        return self._last_estimate

    @property
    def q(self) -> FloatArray:
        """(nq,) configuration in the pinocchio layout ``[p_world_base (3) m, quat_world_base xyzw (4), joints]``."""
        return np.concatenate([self.ekf.p_world_base, self.ekf.quat_world_base_xyzw(), self.legs.q_joints])

    @property
    def v(self) -> FloatArray:
        """(nv,) velocity in the pinocchio layout ``[v_base_in_base (3) m/s, omega_base_in_base (3) rad/s, qdot]`` (base
        frame)."""
        return np.concatenate([self.ekf.v_base_in_base, self.ekf.omega_base_in_base, self.legs.qdot_joints])

    @property
    def feet(self) -> tuple[FootState, ...]:
        """Per-foot states of the last joint update."""
        feet = self.legs.step_feet
        return feet if isinstance(feet, tuple) else feet()

    @property
    def last_update_results(self) -> list[UpdateResult]:
        """The results of the last joint step's leg update, one per stance foot (made on first read)."""
        return self.legs.leg_results

    @property
    def last_rotation_results(self) -> list[UpdateResult]:
        """The orientation updates of the last joint step, one per flat stance foot the 3-D gate accepted
        (innovation (3,) rad/s in B, covariance, NIS, accepted); [] without flat feet."""
        return self.legs.rotation_results

    @property
    def contacts(self) -> NDArray[np.bool_]:
        """(n_feet,) bool, the contacts of the last joint step."""
        return self.legs.contact.contacts

    @property
    def contact_source(self) -> str:
        """The contact source of the last joint step (``torque``, ``foot_sensor``, ``foot_wrench``, ``schedule``,
        ``kinematic``; ``none`` before the first)."""
        return self.legs.contact.source

    @property
    def forces_estimated(self) -> bool:
        """Whether the foot forces of the last joint step were estimated (from joint torques) or measured (fresh
        foot wrenches); False otherwise: the forces are then zeros, not a measurement (the node does not publish
        them)."""
        return self.legs.contact.forces_estimated

    @property
    def stale_foot_wrenches(self) -> tuple[str, ...]:
        """The feet whose wrench sensor was not fresh at the last joint step while others were (empty: all fresh,
        or no wrench sensor at all)."""
        return self.legs.contact.stale_wrench_feet

    def initialize_state(self, stamp_ns: int, q: FloatArray, v: FloatArray | None = None) -> Estimate:
        """Initialise from an explicit state in the pinocchio layout.

        Args:
            stamp_ns: time of the state (ns).
            q: (nq,) ``[p_world_base, quat_world_base xyzw, joints]``.
            v: (nv,) ``[v_base_in_base, omega_base_in_base, qdot]`` (base-frame twist, as pinocchio's free-flyer) or
                None (zero). A world-frame linear velocity must be rotated into B first (``R_world_base^T
                v_base_in_world``).

        Returns:
            The estimate at ``stamp_ns``.

        Raises:
            ValueError: wrong sizes or non-finite values.
        """
        q = np.asarray(q, dtype=float)
        if q.shape != (self.model.nq,) or not np.isfinite(q).all():
            raise ValueError(f"q must be ({self.model.nq},) finite, got shape {q.shape}")
        v = np.zeros(self.model.nv) if v is None else np.asarray(v, dtype=float)
        if v.shape != (self.model.nv,) or not np.isfinite(v).all():
            raise ValueError(f"v must be ({self.model.nv},) finite, got shape {v.shape}")
        quat = pin.Quaternion(q[6], q[3], q[4], q[5]).normalized()
        self.ekf.initialize(stamp_ns, R_world_base=quat.matrix(), p_world_base=q[:3], v_base_in_base=v[:3])
        self.ekf.omega_base_in_base = v[3:6].copy()
        self.legs.q_joints = q[7:].copy()
        self.legs.qdot_joints = v[6:].copy()
        self.imu_frontend.last_imu_stamp_ns = int(stamp_ns)
        return Estimate.from_output_vector(int(self.ekf.stamp_ns or 0), self.ekf.output_vector())

    def set_pose(
        self,
        p_world_base: FloatArray,
        R_world_base: FloatArray,
        pose_covariance: FloatArray | None = None,
    ) -> Estimate | None:
        """Re-seat the base pose (``base_link`` in ``odom``) at the filter's current stamp.

        The meaning of robot_localization's ``set_pose`` topic (the pose of the base in ``odom``), for this filter:
        position and attitude are overwritten, the velocity in the base frame and the IMU biases are kept (unlike
        robot_localization, which also zeroes its velocities: a walking robot keeps walking while it is re-seated;
        :meth:`reset` starts from rest), and the pose covariance is the one given
        (:meth:`BaseEkf.set_pose`: converted exactly to the filter's right attitude perturbation, the pose's
        cross-covariances with the other states zeroed; None or all zeros: the settings' ``ekf.initial_*_std``).
        The filter goes on from there: the next estimate (at the next IMU or joint stamp) propagates from the new
        pose. No time travel: the pose applies at the filter's stamp, whatever time it was meant for. The
        contact detectors, the held joint samples and the joint state are unchanged.

        Before the filter is initialised (at the start, after :meth:`reset`, while the first IMU samples are
        averaged) there is no state to re-seat: nothing changes and None is returned (the pose is not kept
        for later; the initialisation sets roll and pitch from gravity, yaw 0 and ``ekf.initial_position``).

        Args:
            p_world_base: (3,) m, base origin in W (``odom``).
            R_world_base: (3, 3) rotation matrix of the base attitude (base axes in W).
            pose_covariance: (6, 6) or (36,) row-major, ROS order ``x, y, z, rot x, rot y, rot z`` (m^2, m rad,
                rad^2; the rotation about the fixed W axes, as ``nav_msgs/Odometry`` publishes it), symmetric
                positive semi-definite; None or all zeros: from the settings.

        Returns:
            The estimate at the filter's stamp with the new pose (no feet: not a joint step), or None when the
            filter is not initialised (nothing changed).

        Raises:
            ValueError: a non-finite or wrongly shaped position, a matrix that is not a rotation (not orthonormal
                to 1e-6, or a reflection), a covariance that is not finite, symmetric and positive semi-definite;
                the message names the problem and nothing is changed.
        """
        ekf = self.ekf
        if not ekf.initialized:
            check_pose(p_world_base, R_world_base, pose_covariance)  # a bad pose is refused whenever it comes
            return None
        ekf.set_pose(p_world_base, R_world_base, pose_covariance)
        return self._finish_step(())

    # -- samples ---------------------------------------------------------------------------------------------------

    def add_imu(self, sample: ImuSample) -> Estimate | None:
        """Propagate to the sample's stamp (applying held joint samples on the way).

        Returns:
            The estimate at the sample's stamp, or None (initialising, or the sample was refused: see
            :meth:`pop_events`).
        """
        front = self.imu_frontend
        usual = front.usual_step(sample)
        if usual is not None:
            stamp, out = usual
            if out is not None:
                estimate = self._last_estimate = _from_output_vector(stamp, out, ())
                return estimate
            return self._finish_step(())  # IMU_NOT_FINITE: the divergence reset
        legs, ekf = self.legs, self.ekf
        reading = front.check(sample)
        if reading is None:
            return None
        gyro, accel = reading
        stamp = int(sample.stamp_ns)
        if not self._in_order(stamp, front.last_imu_stamp_ns, "IMU", "imu"):
            return None
        front.last_imu_stamp_ns = stamp
        if not ekf.initialized:
            if not front.initialise(stamp, gyro, accel):
                return None
            legs.drop_pending(stamp)  # joint samples held during initialisation that are older are not replayed
            return self._finish_step(())
        ekf.set_imu(stamp, gyro, accel)
        feet: StepFeet = ()
        if ekf.is_gap_before(stamp) and legs.pending and legs.pending[0].stamp_ns <= stamp:
            feet = self._across_imu_gap(stamp, int(ekf.stamp_ns or stamp))
        while legs.pending and legs.pending[0].stamp_ns <= stamp:
            prepared = legs.pending.popleft()
            if not front.propagate(prepared.stamp_ns):
                continue
            feet, _ = legs.apply(prepared)  # the outputs at the joint stamp are not needed
        if ekf.stamp_ns is not None and stamp > ekf.stamp_ns:
            front.propagate(stamp)
        return self._finish_step(feet)

    def _across_imu_gap(self, stamp: int, t_filter: int) -> StepFeet:
        """An IMU gap (over ``ekf.max_dt_s``) with joint samples held in it: no reading covers the gap, so it is
        crossed to the new reading's stamp at once (``BaseEkf.propagate_to``: at the estimated velocity, the
        covariance grown for it; ``imu_gap``) rather than propagated with this reading to each held stamp. The latest
        held sample, when within ``max_measurement_delay_s`` of the new stamp, is then applied; the others are dropped
        (one ``joint_too_old`` event). Returns the per-foot states of the applied sample (or none)."""
        legs = self.legs
        held = []
        while legs.pending and legs.pending[0].stamp_ns <= stamp:
            held.append(legs.pending.popleft())
        self.imu_frontend.propagate(stamp)
        last = held[-1]
        keep = (stamp - last.stamp_ns) / _NS <= self.settings.max_measurement_delay_s
        dropped = len(held) - int(keep)
        if dropped:
            self._events.emit(
                "joint_too_old",
                f"{dropped} joint sample(s) held across an IMU gap of {(stamp - t_filter) / _NS:.3f} s dropped: no IMU "
                "reading covers their stamps" + (" (the latest is applied)" if keep else ""),
            )
        if not keep:
            return ()
        feet, _ = legs.apply(last)
        return feet

    def add_joints(self, sample: JointSample) -> Estimate | None:
        """Add joint positions (and velocities / efforts when present), matched by name.

        Returns:
            The estimate after the kinematic update when the sample was applied now; None when it is held
            for a later IMU sample, the filter is initialising, or the sample was refused (see
            :meth:`pop_events`).
        """
        legs = self.legs
        step = legs.usual_step(sample)
        if step is not None:
            stamp, feet, out = step
            if out is not None:
                estimate = self._last_estimate = _from_output_vector(stamp, out, feet)
                return estimate
            return self._finish_step(feet)
        ekf = self.ekf
        stamp = int(sample.stamp_ns)
        last = legs.last_joint_stamp_ns
        if not self._in_order(stamp, last, "joint", "joint"):
            return None
        prepared = legs.joint_input.prepare(sample)
        if prepared is None:
            return None
        legs.last_joint_stamp_ns = stamp
        legs.have_joints = True
        if not ekf.initialized:
            legs.q_joints = prepared.q
            legs.qdot_joints = prepared.qdot
            self.imu_frontend.note_joints(prepared, sample, last)
            return None
        ekf_stamp = int(ekf.stamp_ns or 0)
        if stamp > ekf_stamp:
            if len(legs.pending) >= self.settings.max_pending_joint_samples:
                legs.pending.popleft()
                self._events.emit("joint_queue_overflow", "too many joint samples ahead of the IMU; oldest dropped")
            legs.pending.append(prepared)
            return None
        delay_s = (ekf_stamp - stamp) / _NS
        if delay_s > self.settings.max_measurement_delay_s:
            self._events.emit(
                "joint_too_old",
                f"joint sample {delay_s * 1e3:.1f} ms older than the filter "
                f"(max_measurement_delay_s={self.settings.max_measurement_delay_s}); dropped",
            )
            return None
        return self._estimate(*legs.apply(prepared))

    def _in_order(self, stamp: int, last: int | None, label: str, key: str) -> bool:
        """Whether a sample stamped ``stamp`` goes on after the last one of its stream (module docstring): a repeat
        or a small step back is refused (``<key>_dt_nonpositive``, ``<key>_out_of_order``); a larger step back
        resets the estimator (``stamp_backwards``) and the sample goes on."""
        if last is None or stamp > last:
            return True
        if stamp == last:
            self._events.emit(f"{key}_dt_nonpositive", f"{label} stamp {stamp} ns repeats the last one; skipped")
            return False
        back_s = (last - stamp) / _NS
        if back_s <= self.settings.out_of_order_tolerance_s:
            self._events.emit(
                f"{key}_out_of_order", f"{label} stamp {back_s * 1e3:.3f} ms older than the last; skipped"
            )
            return False
        self.reset(f"{label} time went backwards by {back_s:.3f} s")
        self._events.emit("stamp_backwards", f"{label} time went backwards by {back_s:.3f} s; estimator reset")
        return True

    def add_foot_forces(self, sample: FootForceSample) -> None:
        """Store foot sensor readings (forces or raw counts, matched by foot frame name) for contact detection.
        Refused with an event: ``foot_force_shape``, ``foot_force_nan``, ``unknown_foot``."""
        self.legs.contact.add_foot_forces(sample)

    def add_foot_wrench(self, sample: FootWrenchSample) -> None:
        """Store one foot's force/torque sensor reading (``geometry_msgs/WrenchStamped``: any frame of the
        description; expressed in the foot frame at the configuration of the joint sample it is used for, see
        :mod:`~robot_state_estimator.estimation.contact_inputs`). Refused with an event: ``unknown_foot``,
        ``foot_wrench_shape``, ``foot_wrench_nan``, ``foot_wrench_unknown_frame``, ``foot_wrench_out_of_order``."""
        problem = self.foot_wrenches.add(sample)
        if problem is not None:
            self._events.emit(*problem)

    def add_contact_schedule(self, sample: ContactScheduleSample) -> None:
        """Store a controller's contact schedule (used with ``contact.source: schedule``: a joint sample at
        stamp t takes the latest schedule stamped at or before t, at most ``contact.schedule_timeout_s`` old).
        Refused with an event: ``schedule_shape``, ``schedule_duplicate_feet``, ``schedule_unknown_feet``,
        ``schedule_missing_feet``."""
        problem = self.schedule.add(sample)
        if problem is not None:
            self._events.emit(*problem)

    def run(
        self,
        contact_schedule: Sequence[bool] | dict[str, bool],
        imu: ImuSample | None,
        joints: JointSample,
    ) -> Estimate | None:
        """One control tick, as mim_estimation's ``RobotStateEstimator::run(contact_schedule, ...)``: the
        schedule (per foot, True = stance) applies from the joint stamp, the IMU sample (None: none this tick)
        propagates the filter, then the joint sample updates it with the schedule's contacts.

        Args:
            contact_schedule: one boolean per foot in the order of ``foot_frames``, or foot name -> boolean
                (every foot).
            imu: the tick's IMU sample (its stamp at or before the joint stamp for the update to apply now).
            joints: the tick's joint sample.

        Returns:
            The estimate after the joint update (None: held, initialising or refused; see :meth:`pop_events`).

        Raises:
            ValueError: ``contact.source`` is not ``schedule`` (the schedule would be ignored), or a sequence
                schedule of another length than the feet.
        """
        if self.settings.contact.source != "schedule":
            raise ValueError(
                f"run(contact_schedule, ...) needs contact.source: schedule (it is {self.settings.contact.source!r})"
            )
        if isinstance(contact_schedule, dict):
            feet = tuple(contact_schedule)
            states = tuple(bool(v) for v in contact_schedule.values())
        else:
            states = tuple(bool(v) for v in contact_schedule)
            if len(states) != len(self.foot_frames):
                raise ValueError(
                    f"contact_schedule has {len(states)} values for the {len(self.foot_frames)} feet {self.foot_frames}"
                )
            feet = self.foot_frames
        self.add_contact_schedule(ContactScheduleSample(int(joints.stamp_ns), feet, states))
        estimate = None
        if imu is not None:
            estimate = self.add_imu(imu)
        out = self.add_joints(joints)
        return out if out is not None else estimate

    # -- outputs ---------------------------------------------------------------------------------------------------

    def _estimate(self, feet: StepFeet, out: FloatArray | None) -> Estimate | None:
        """The estimate of a joint step at the filter's stamp: from the step's outputs (a vector that starts with
        them), or made now when the step did not make them (:meth:`_finish_step`)."""
        if out is None:
            return self._finish_step(feet)
        estimate = self._last_estimate = _from_output_vector(int(self.ekf.stamp_ns or 0), out, feet)
        return estimate

    def _finish_step(self, feet: StepFeet) -> Estimate | None:
        """The estimate at the filter's stamp (its arrays are views of one output vector, made when read); a state
        that is not finite resets the estimator (``filter_diverged``) and gives None."""
        ekf = self.ekf
        out = ekf.finite_output_vector()
        if out is None:
            self.reset("the filter state became non-finite")
            self._events.emit("filter_diverged", "non-finite filter state; estimator reset", "error")
            return None
        estimate = Estimate.from_output_vector(int(ekf.stamp_ns or 0), out, feet)
        self._last_estimate = estimate
        return estimate
