"""The IMU front end of the estimator: the checks of an IMU sample, its propagation of the filter, and the filter's
initialisation.

Checks: a sample of the wrong shape, with NaN/Inf, or beyond ``ekf.max_gyro_rad_s`` / ``ekf.max_accel_m_s2`` is
skipped (``imu_shape``, ``imu_nan``, ``imu_out_of_range``); a ``frame_id`` other than the description's IMU frame is
noted (``imu_frame_id``, info) and the sample used. A gap larger than ``ekf.max_dt_s`` is not propagated with the
IMU: the position is carried at the estimated velocity, the covariance grows for the gap (``ekf.gap_accel_std``,
``ekf.gap_rate_std``) and the filter re-anchors its clock (``imu_gap``). The stamp order is the estimator's
(:mod:`.pipeline`).

Initialisation: a sliding window of the last ``ekf.init_imu_samples`` IMU samples is averaged; the first
window whose gyro standard deviation is below ``ekf.init_max_gyro_std_rad_s`` on every axis and whose mean
accelerometer norm is within ``ekf.init_max_accel_deviation_m_s2`` of g counts as static (standing still):
roll, pitch and gyro bias from them, yaw 0, position ``ekf.initial_position`` with the height put above the
loaded feet's contact points (on z = 0; a rolling foot's sphere centre lowered by its radius) when joints have
been seen. With joints, both initialisations wait until a foot is loaded (``ekf.init_wait_for_loaded_feet``,
:mod:`.initial_support`: a robot held in the air does not initialise; event ``init_waiting_for_load``, info).
When no window counted as static ``ekf.init_timeout_s`` of IMU time after the first IMU sample
(0 disables this; e.g. a node started, or a recording replayed from, mid-trot), the filter initialises from
the moving robot anyway (event ``initialized_moving``): roll and pitch from the mean specific force since that
first sample (over whole gait cycles the base acceleration averages to about zero), gyro bias 0 (the window
mean is the body's turning, not the bias), yaw 0, velocity from the leg kinematics of the last joint sample
(the feet within ``contact.kinematic_on_height_m`` of the lowest one taken as stance; 0 without joint
velocities), position as above, and the larger stddevs ``ekf.init_moving_roll_pitch_std``,
``ekf.init_moving_velocity_std``, ``ekf.init_moving_gyro_bias_std``. The static path is unchanged: a static
window found by the timeout always wins. At each initialisation the leg measurement's joint-velocity noise is
chosen (:mod:`.noise_model`: measured velocities, or the encoders' noise through the differentiator).
"""

from __future__ import annotations

import dataclasses
import math
from collections import deque

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.common.output_layout import OUTPUT_SIZE
from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.common.time import format_stamp_s
from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation.ekf.filter import BaseEkf
from robot_state_estimator.estimation.ekf.layout import IMU_NOT_FINITE, IMU_OK
from robot_state_estimator.estimation.ekf.model import rotation_from_gravity
from robot_state_estimator.estimation.ekf.numerics import skew
from robot_state_estimator.estimation.errors import ModelError
from robot_state_estimator.estimation.events import EventLog
from robot_state_estimator.estimation.initial_support import InitialSupport
from robot_state_estimator.estimation.joint_input import PreparedJoints
from robot_state_estimator.estimation.leg_odometry import LegOdometry
from robot_state_estimator.estimation.noise_model import contact_creep_variance, joint_velocity_std
from robot_state_estimator.estimation.settings import EstimatorSettings

FloatArray = NDArray[np.float64]

_NS = 1_000_000_000
_contiguous = np.ascontiguousarray


def check_imu_on_the_base(model: pin.Model, imu: ImuSpec, base_link: str) -> None:
    """Refuse an IMU on a link that moves relative to the base: the filter takes ``imu.pose_in_base``
    (``X_base_imu``) as a constant (the IMU model of Bloesch et al. 2013 and of every estimator of this kind), so
    an IMU on a leg or an arm would be read as if it sat where it was at the zero configuration.

    Raises:
        ModelError: naming the IMU, its link and the joint between it and the base.
    """
    if not imu.link or not model.existFrame(imu.link) or not model.existFrame(base_link):
        return  # an ImuSpec made by hand without a link of this model: its pose_in_base is all there is
    imu_joint = model.frames[model.getFrameId(imu.link)].parentJoint
    base_joint = model.frames[model.getFrameId(base_link)].parentJoint
    if imu_joint != base_joint:
        raise ModelError(
            f"the IMU {imu.name!r} is on link {imu.link!r}, which moves relative to the base link {base_link!r} "
            f"(joint {model.names[imu_joint]!r}): the filter needs the IMU rigidly attached to the base (its pose "
            "in the base is a constant of the filter); mount it on the base or on a link fixed to it, or choose an "
            "IMU on the base with the setting imu_name, or declare one with declared_imu.link and declared_imu.pose "
            "(docs/imu_choice.md)"
        )


class ImuFrontend:
    """IMU samples to the filter (module docstring).

    Args:
        imu: the IMU spec. settings: estimator settings. ekf: the filter. legs: the leg odometry (the joints seen
            before initialisation, the feet). events: the estimator's event log.

    Attributes:
        last_imu_stamp_ns: the stamp of the last IMU sample used (None: none since the last reset).
    """

    def __init__(
        self, imu: ImuSpec, settings: EstimatorSettings, ekf: BaseEkf, legs: LegOdometry, events: EventLog
    ) -> None:
        self.imu, self.settings, self.ekf, self.legs = imu, settings, ekf, legs
        self._events = events
        self._imu_frame_id = imu.frame_id
        self.reset()

    def reset(self) -> None:
        """No filter state; the next IMU samples initialise again."""
        ekf = self.ekf
        ekf.stamp_ns = None
        ekf.p_world_base = np.zeros(3)
        ekf.v_base_in_base = np.zeros(3)
        ekf.R_world_base = np.eye(3)
        ekf.accel_bias = np.zeros(3)
        ekf.gyro_bias = np.zeros(3)
        ekf.omega_base_in_base = np.zeros(3)
        ekf.P = ekf.initial_covariance(ekf.R_world_base)
        self._init_window: deque[tuple[FloatArray, FloatArray]] = deque(maxlen=self.settings.ekf.init_imu_samples)
        self._init_start_ns: int | None = None  # first IMU stamp of this initialisation
        self._init_accel_sum = np.zeros(3)  # specific force summed since then (the moving fallback)
        self._init_count = 0
        self._init_qdot_valid = False
        self._init_tau: FloatArray | None = None  # efforts of the last joint sample before initialisation
        self._init_velocity_measured = False  # whether those joint samples carried (used) velocities
        self._init_joint_dts: deque[float] = deque(maxlen=64)  # s, their periods (the differentiator's noise)
        ekf.contact_creep_variance = 0.0  # the leg noise is chosen again at the next initialisation
        ekf.settings = self.settings.ekf
        self._init_wait_reported = False
        self.last_imu_stamp_ns: int | None = None

    def usual_step(self, sample: ImuSample) -> tuple[int, FloatArray | None] | None:
        """The usual sample (in order, nothing held to apply, no event) in the filter's one-call IMU step
        (``BaseEkf.imu_step``: check, propagation and outputs): ``(stamp, outputs)``, or ``(stamp, None)`` when the
        propagated state is not finite; None for any other case, a bad reading, or a backend without that step (the
        caller's general path; nothing changed)."""
        stamp = int(sample.stamp_ns)
        last = self.last_imu_stamp_ns
        pending = self.legs.pending
        frame = sample.frame_id
        if (
            last is None
            or stamp <= last
            or (pending and pending[0].stamp_ns <= stamp)
            or (frame and frame != self._imu_frame_id and self._imu_frame_id)
        ):
            return None
        gyro = _contiguous(sample.angular_velocity, dtype=float)  # (the step's entry point: C-contiguous float64)
        accel = _contiguous(sample.linear_acceleration, dtype=float)
        if gyro.shape != (3,) or accel.shape != (3,):
            return None
        out = np.empty(OUTPUT_SIZE)
        code = self.ekf.imu_step(stamp, gyro, accel, out)
        if code == IMU_OK:
            self.last_imu_stamp_ns = stamp
            return stamp, out
        if code == IMU_NOT_FINITE:
            self.last_imu_stamp_ns = stamp
            return stamp, None
        return None  # DECLINED, IMU_BAD_INPUT: the general path (and its event)

    def check(self, sample: ImuSample) -> tuple[FloatArray, FloatArray] | None:
        """``(gyro (3,) rad/s, accel (3,) m/s^2)`` in S, or None (with an event) for a sample that is skipped."""
        gyro = np.asarray(sample.angular_velocity, dtype=float)
        accel = np.asarray(sample.linear_acceleration, dtype=float)
        if gyro.shape != (3,) or accel.shape != (3,):
            self._events.emit("imu_shape", f"IMU sample with shapes {gyro.shape}, {accel.shape}; expected (3,)")
            return None
        g0, g1, g2 = gyro.tolist()
        a0, a1, a2 = accel.tolist()
        # A finite sum means all six are finite (NaN and Inf propagate); otherwise check each (the sum of large
        # finite values may overflow).
        if not math.isfinite(g0 + g1 + g2 + a0 + a1 + a2) and not all(map(math.isfinite, (g0, g1, g2, a0, a1, a2))):
            self._events.emit("imu_nan", f"IMU sample at {sample.stamp_ns} ns has NaN/Inf; skipped")
            return None
        es = self.settings.ekf
        if max(abs(g0), abs(g1), abs(g2)) > es.max_gyro_rad_s or max(abs(a0), abs(a1), abs(a2)) > es.max_accel_m_s2:
            self._events.emit(
                "imu_out_of_range",
                f"IMU sample at {sample.stamp_ns} ns beyond ekf.max_gyro_rad_s={es.max_gyro_rad_s} or "
                f"ekf.max_accel_m_s2={es.max_accel_m_s2}; skipped",
            )
            return None
        if sample.frame_id and self.imu.frame_id and sample.frame_id != self.imu.frame_id:
            self._events.emit(
                "imu_frame_id",
                f"IMU frame_id {sample.frame_id!r} differs from the description's {self.imu.frame_id!r}",
                "info",
            )
        return gyro, accel

    def propagate(self, stamp: int) -> bool:
        """Propagate the filter to ``stamp`` with the held reading; False when refused (``imu_dt_nonpositive``); a
        gap is reported (``imu_gap``) and crossed at the estimated velocity (``BaseEkf.propagate_to``)."""
        t_filter = self.ekf.stamp_ns
        reason = self.ekf.propagate_to(stamp)
        if reason is None:
            return True
        if reason == "dt_too_large":
            es = self.settings.ekf
            gap_s = (stamp - int(t_filter or stamp)) * 1e-9
            self._events.emit(
                "imu_gap",
                f"IMU gap of {gap_s:.3f} s (over ekf.max_dt_s = {es.max_dt_s} s) before {format_stamp_s(stamp)} s: "
                "crossed at the estimated velocity, covariance grown for it "
                f"(ekf.gap_accel_std {es.gap_accel_std} m/s^2, ekf.gap_rate_std {es.gap_rate_std} rad/s)",
            )
            return True
        self._events.emit("imu_dt_nonpositive", f"propagation to {stamp} ns refused: {reason}")
        return False

    def note_joints(self, prepared: PreparedJoints, sample: JointSample, last_stamp_ns: int | None) -> None:
        """A joint sample before initialisation: its efforts, velocities and period (for the initial support and
        the leg noise)."""
        self._init_qdot_valid = prepared.qdot_valid
        self._init_tau = prepared.tau
        vel = sample.velocity
        self._init_velocity_measured = vel is not None and len(vel) > 0 and self.settings.joint_velocity.use_measured
        stamp = prepared.stamp_ns
        if last_stamp_ns is not None and stamp > last_stamp_ns:
            self._init_joint_dts.append((stamp - last_stamp_ns) / _NS)

    def initialise(self, stamp: int, gyro: FloatArray, accel: FloatArray) -> bool:
        """Add an IMU sample to the initialisation; True when the filter was initialised with it (static, or moving
        after ``ekf.init_timeout_s``; module docstring)."""
        s = self.settings.ekf
        window = self._init_window
        window.append((gyro, accel))
        if self._init_start_ns is None:
            self._init_start_ns = stamp
        self._init_accel_sum += accel
        self._init_count += 1
        timed_out = s.init_timeout_s > 0.0 and (stamp - self._init_start_ns) >= s.init_timeout_s * _NS
        if len(window) < s.init_imu_samples:
            return self._initialize_moving(stamp, gyro, accel) if timed_out else False
        gyros = np.array([g for g, _ in window])
        accels = np.array([a for _, a in window])
        gyro_mean = gyros.mean(axis=0)
        accel_mean = accels.mean(axis=0)
        moving = s.init_max_gyro_std_rad_s > 0.0 and float(gyros.std(axis=0).max()) > s.init_max_gyro_std_rad_s
        if s.init_max_accel_deviation_m_s2 > 0.0:
            accel_norm_mean = float(np.linalg.norm(accels, axis=1).mean())
            moving = moving or abs(accel_norm_mean - s.gravity_m_s2) > s.init_max_accel_deviation_m_s2
        if moving:
            # slide the window on, or give up waiting for a static one
            return self._initialize_moving(stamp, gyro, accel) if timed_out else False
        support = self._initial_support(rotation_from_gravity(self.ekf.R_base_imu @ accel_mean))
        if support is not None and not support.any_loaded:
            self._wait_for_load(support)
            return False
        self.ekf.initialize_static(
            stamp,
            accel_imu_mean=accel_mean,
            gyro_imu_mean=gyro_mean,
            p_world_base=np.array(s.initial_position),
            n_samples=len(window),
        )
        self.ekf.set_imu(stamp, gyro, accel)
        how = ""
        if s.initial_height_from_feet and self.legs.have_joints:
            heights = self._contact_heights()
            if support is not None:
                heights = heights[support.loaded]
                how = f", height above the loaded feet {support.describe(self.legs.foot_frames)}"
            self.ekf.p_world_base[2] = -float(np.mean(heights))
        self._events.emit(
            "initialized", f"initialised from {len(window)} static IMU samples{how}{self._choose_leg_noise()}", "info"
        )
        return True

    def _contact_heights(self) -> FloatArray:
        """(n_feet,) m, height of each foot's ground contact point relative to the base origin along the world
        vertical, at the last joint sample and the filter's attitude: ``e_z . (R_world_base r_i) - rho_i``, the sphere
        centre ``r_i`` (m, B) lowered by its radius (the ground touches a rolling foot rho_i below its centre;
        rho_i = 0 for a point foot). The initial height puts the stance contact points, not the centres, on z = 0.
        """
        legs = self.legs
        legs.kin.update(legs.q_joints)
        return legs.kin.p_base_foot @ self.ekf.R_world_base[2, :] - legs.foot_radii

    def _initial_support(self, R_world_base: FloatArray) -> InitialSupport | None:
        """The loaded feet at the last joint sample (:mod:`.initial_support`); None when the initialisation does
        not wait for them (``ekf.init_wait_for_loaded_feet`` off, or no joint sample yet)."""
        legs = self.legs
        if not (self.settings.ekf.init_wait_for_loaded_feet and legs.have_joints):
            return None
        qdot = legs.qdot_joints if self._init_qdot_valid else None
        return legs.contact.initial_support(legs.last_joint_stamp_ns, R_world_base, legs.q_joints, qdot, self._init_tau)

    def _wait_for_load(self, support: InitialSupport) -> None:
        """No foot loaded: stay uninitialised (reported once per initialisation)."""
        if not self._init_wait_reported:
            self._init_wait_reported = True
            self._events.emit(
                "init_waiting_for_load",
                f"initialisation waits for a loaded foot ({support.source}: largest value "
                f"{float(np.max(support.values)):.3g}, threshold {support.threshold:.3g}); a robot held in the air "
                "initialises once it is put down (ekf.init_wait_for_loaded_feet)",
                "info",
            )

    def _initialize_moving(self, stamp: int, gyro: FloatArray, accel: FloatArray) -> bool:
        """The fallback after ``ekf.init_timeout_s`` without a static window (module docstring)."""
        s = self.settings.ekf
        ekf = self.ekf
        legs = self.legs
        accel_mean = self._init_accel_sum / max(self._init_count, 1)
        support = self._initial_support(rotation_from_gravity(ekf.R_base_imu @ accel_mean))
        if support is not None and not support.any_loaded:
            self._wait_for_load(support)
            return False
        ekf.initialize_moving(
            stamp,
            accel_imu_mean=accel_mean,
            gyro_imu=gyro,
            accel_imu=accel,
            p_world_base=np.array(s.initial_position),
            v_base_in_base=np.zeros(3),
        )
        ekf.set_imu(stamp, gyro, accel)
        how = "no joints yet"
        if legs.have_joints:
            heights = self._contact_heights()
            if support is not None:
                stance = np.flatnonzero(support.loaded)
            else:
                stance = np.flatnonzero(heights - heights.min() <= self.settings.contact.kinematic_on_height_m)
            if s.initial_height_from_feet:
                ekf.p_world_base[2] = -float(np.mean(heights[stance]))
            if self._init_qdot_valid:
                r = legs.kin.p_base_foot[stance]
                J = legs.kin.J_base_foot[stance]
                # v_base_in_base = -(J_i qdot) - omega x r_i, averaged over the lowest feet.
                v = -(J @ legs.qdot_joints) - r @ skew(ekf.omega_base_in_base).T
                ekf.v_base_in_base = v.mean(axis=0)
                how = f"velocity from {stance.size} stance feet"
            else:
                how = "no joint velocities yet: velocity 0"
        self._events.emit(
            "initialized_moving",
            f"no static IMU window within ekf.init_timeout_s={s.init_timeout_s} s: initialised from a moving "
            f"window of {self._init_count} IMU samples (yaw 0, gyro bias 0, {how}); roll/pitch stddev "
            f"{s.init_moving_roll_pitch_std} rad, velocity stddev {s.init_moving_velocity_std} m/s"
            f"{self._choose_leg_noise()}",
            "warn",
        )
        return True

    def _choose_leg_noise(self) -> str:
        """At initialisation: the leg measurement's noise (:mod:`.noise_model`) at the joint period seen so far
        (median): the joint-velocity stddev (the measured velocities' ``ekf.encoder_velocity_noise``, or the
        encoders' noise through the differentiator) and the per-sample variance of the contact point's creep on the
        ground plane (``ekf.foot_creep_density``). Returns the words for the ``initialized`` event ("" without
        joints)."""
        es = self.settings.ekf
        dts = sorted(self._init_joint_dts)
        period = dts[len(dts) // 2] if dts else None
        dt = None if self._init_velocity_measured else period
        sigma = joint_velocity_std(
            es, measured=self._init_velocity_measured, dt_s=dt, cutoff_hz=self.settings.joint_velocity.cutoff_hz
        )
        creep = contact_creep_variance(es, period)
        if not self.legs.have_joints:
            return ""
        how = (
            "measured velocities (ekf.encoder_velocity_noise)"
            if dt is None
            else f"differentiated at {dt * 1e3:.2f} ms from ekf.encoder_noise_rad={es.encoder_noise_rad:g} rad"
        )
        self._set_leg_noise(sigma, creep)
        creep_words = (
            f", creep {math.sqrt(creep):.3g} m/s per sample on the ground plane (ekf.foot_creep_density "
            f"{es.foot_creep_density:g} m/sqrt(s) at {period * 1e3:.2f} ms)"
            if period is not None and creep > 0.0
            else ""
        )
        return (
            f"; leg measurement noise: contact point {es.foot_velocity_noise:.3g} m/s{creep_words}, joint velocities "
            f"{sigma:.3g} rad/s ({how}) through the leg Jacobian"
        )

    def _set_leg_noise(self, sigma: float, creep_variance: float) -> None:
        """Use ``sigma`` (rad/s) as the joint velocity stddev (the filter's settings, which the backend's joint step
        reads too) and ``creep_variance`` ((m/s)^2) as the contact point's creep per sample on the ground plane."""
        ekf = self.ekf
        ekf.contact_creep_variance = creep_variance
        if sigma != ekf.settings.encoder_velocity_noise:
            ekf.settings = dataclasses.replace(self.settings.ekf, encoder_velocity_noise=sigma)
