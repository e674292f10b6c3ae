"""The estimator pipeline: timestamped IMU, joint and foot-sensor samples in, base state out.

:class:`RobotStateEstimator` is what the ROS node and the offline replay drive. It owns the leg kinematics,
the contact-force estimator, the contact detectors, the joint-velocity estimator and the :class:`BaseEkf`.

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
  ``ekf.max_dt_s`` is refused and the filter re-anchors its clock (``imu_gap``). Joint stamps follow the
  same rules against the last joint stamp.
- Bad samples (NaN/Inf, implausible IMU magnitudes, wrong lengths, unknown/missing/duplicate joint names) are
  skipped with an event; the state is unchanged. Events are collected and returned by
  :meth:`RobotStateEstimator.pop_events`.
- Joint names: a joint sample must name every model joint, once (``missing_joint``, ``duplicate_joint``).
  A name not in the model rejects the sample (``unknown_joint``), unless ``settings.ignore_unknown_joints``:
  then such names (a gripper, a head, wheels on the same ``/joint_states``) are ignored, their values unused
  (not even checked for NaN), and the set of ignored names is reported when it changes (``ignored_joints``,
  info), not per sample. The name order is resolved once per tuple of names and cached.

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
window found by the timeout always wins. Or call :meth:`RobotStateEstimator.initialize_state` with an
explicit state.

Cost per sample (the 1 kHz path): the per-sample maths runs in compiled kernels when numba is there, about
one per step: an IMU sample is one call (``BaseEkf.imu_step``: check, propagation, outputs); a joint sample with
efforts and the torque contact source is two, around pinocchio's kinematics (``LegKinematics.foot_terms`` and
``jacobianCenterOfMass``): :func:`~robot_state_estimator.estimation.leg_kernels.prepare_joints` (gather, check,
the joint velocity's step, the positions into pinocchio's configuration) and
:func:`~robot_state_estimator.estimation.ekf_kernels.joint_step` (the foot placements and Jacobians stored, forces,
contact trigger, the stance feet's leg terms and filter update, outputs). Other joint samples (no efforts, another
contact source, a held one) take the per-part kernels (``gather_joints``, ``joint_velocity_step``,
``torque_contacts``, ``BaseEkf.update_stance_feet``, the outputs). Each keeps its numpy/pinocchio reference
(``ROBOT_STATE_ESTIMATOR_DISABLE_JIT=1``); a sample that is not the common case (a new name order, a bad value, a
gap, the trigger's first sample, a singular leg, a stacked innovation covariance that is not positive definite)
takes the reference path, which also reports the events. Outputs are made when read: an :class:`Estimate` holds the
filter's output vector and its arrays are views of it, and its per-foot states (and ``last_update_results``) are
built on first access.

Event keys (stable; level ``warn`` unless noted): ``imu_shape``, ``imu_nan``, ``imu_out_of_range``,
``imu_frame_id`` (info; the sample is still used), ``imu_dt_nonpositive``, ``imu_out_of_order``, ``imu_gap``,
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

import dataclasses
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.common.output_layout import OUTPUT_SIZE
from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    Estimate,
    Event,
    FootForceSample,
    FootState,
    FootWrenchSample,
    ImuSample,
    JointSample,
    foot_states,
)
from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation.contact import (
    ContactDetector,
    ContactForceEstimator,
    kinematic_clearance,
    kinematic_contact_score,
    kinematic_foot_speed,
)
from robot_state_estimator.estimation.contact_inputs import ContactSchedule, FootWrenches
from robot_state_estimator.estimation.ekf import (
    IMU_NOT_FINITE,
    IMU_OK,
    BaseEkf,
    UpdateResult,
    check_pose,
    imu_noise_from_spec,
    leg_results,
    rotation_from_gravity,
)
from robot_state_estimator.estimation.ekf.backends import Backend, select_backend
from robot_state_estimator.estimation.ekf.layout import (
    GATHER_OK,
    JOINT_ACCEPTED_SHIFT,
    JOINT_FORCES_FAILED,
    JOINT_MAX_FEET,
    JOINT_NOT_FINITE_SHIFT,
    PREPARE_FILTERED,
    PREPARE_MEASURED,
    PREPARE_WHOLE,
)
from robot_state_estimator.estimation.errors import ModelError
from robot_state_estimator.estimation.flat_feet import flat_feet_mask, rotation_update
from robot_state_estimator.estimation.initial_support import InitialSupport, initial_support
from robot_state_estimator.estimation.joint_velocity import JointVelocityEstimator
from robot_state_estimator.estimation.kinematics import LegKinematics, cross3, skew
from robot_state_estimator.estimation.noise_model import apply_imu_noise_floor, joint_velocity_std
from robot_state_estimator.estimation.settings import EstimatorSettings
from robot_state_estimator.estimation.slip import SlipDetector

FloatArray = NDArray[np.float64]

_NS = 1_000_000_000
_EMPTY = np.empty(0)
_contiguous = np.ascontiguousarray
_jacobian_com = pin.jacobianCenterOfMass
_MASK32 = 0xFFFFFFFF
#: returned by ``RobotStateEstimator._add_joints_kernel`` for a sample it leaves to the reference path
_NOT_USUAL = object()


class _FeetOfStep:
    """The per-foot states of one joint step, made on first request (from arrays the step no longer changes)."""

    __slots__ = ("_args", "_feet")

    def __init__(
        self,
        names: tuple[str, ...],
        contacts: NDArray[np.bool_],
        forces: FloatArray,
        wrenches: FloatArray,
        stance: list[int],
        accepted: list[bool],
        nis: list[float],
    ) -> None:
        self._args = (names, contacts, forces, wrenches, stance, accepted, nis)
        self._feet: tuple[FootState, ...] | None = None

    def __call__(self) -> tuple[FootState, ...]:
        if self._feet is None:
            names, contacts, forces, wrenches, stance, accepted_stance, nis_stance = self._args
            n = len(names)
            accepted = [False] * n
            nis = [math.nan] * n
            for i, a, e in zip(stance, accepted_stance, nis_stance):
                accepted[i] = a
                nis[i] = e
            self._feet = foot_states(names, contacts.tolist(), forces, wrenches, accepted, nis)
        return self._feet


class _FeetOfKernelStep:
    """The per-foot states of a one-kernel joint step (``ekf_kernels.joint_step``), made on first request from its
    buffer (forces, wrenches and the stance feet's NIS; the step no longer changes it) as :class:`_FeetOfStep`."""

    __slots__ = ("_args", "_feet")

    def __init__(self, names: tuple[str, ...], buf: FloatArray, stance: list[int], gate: float) -> None:
        self._args = (names, buf, stance, gate)
        self._feet: tuple[FootState, ...] | None = None

    def __call__(self) -> tuple[FootState, ...]:
        if self._feet is None:
            names, buf, stance, gate = self._args
            n = len(names)
            k = len(stance)
            o = OUTPUT_SIZE
            forces = buf[o : o + 3 * n].reshape(n, 3)
            wrenches = buf[o + 3 * n : o + 9 * n].reshape(n, 6)
            o += 9 * n + 12 * k
            contacts = [False] * n
            accepted = [False] * n
            nis = [math.nan] * n
            for i, e in zip(stance, buf[o : o + k].tolist()):
                contacts[i] = True
                accepted[i] = math.isfinite(e) and (gate <= 0.0 or e <= gate)
                nis[i] = e
            self._feet = foot_states(names, contacts, forces, wrenches, accepted, nis)
        return self._feet


@dataclass(slots=True)
class _PreparedJoints:
    """A validated joint sample in pinocchio order (``qtau``: the (3, n) rows q, qdot, tau when the kernel made
    them with efforts, for the one-kernel joint step; else None)."""

    stamp_ns: int
    q: FloatArray
    qdot: FloatArray
    qdot_valid: bool
    tau: FloatArray | None
    qtau: FloatArray | None = None


def _check_imu_on_the_base(model: pin.Model, imu: ImuSpec, base_link: str) -> None:
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
            "in the base is a constant of the filter); mount it on the base or on a link fixed to it"
        )


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

    Raises:
        ModelError: the model does not fit (no free-flyer, unknown frames, base link not on the root, the IMU on
            a link that moves relative to the base).
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
        self.model = model
        self.imu = imu
        self.settings = settings
        self.base_link = base_link
        self.backend = backend = select_backend() if backend is None else backend
        self.kin = LegKinematics(model, foot_frames, base_link=base_link, backend=backend)
        _check_imu_on_the_base(model, imu, base_link)
        self.foot_frames: tuple[str, ...] = self.kin.foot_frames
        self.joint_names: tuple[str, ...] = tuple(model.names[2:])
        self._joint_index = {name: i for i, name in enumerate(self.joint_names)}
        self._foot_index = {name: i for i, name in enumerate(self.foot_frames)}
        n_feet = len(self.foot_frames)
        n_joints = len(self.joint_names)
        rho = settings.ekf.foot_radius_m
        if rho >= 0.0:
            radii = np.full(n_feet, rho)
        elif foot_radii is not None:
            radii = np.array(foot_radii, dtype=float)
            if radii.shape != (n_feet,) or not np.isfinite(radii).all() or (radii < 0.0).any():
                raise ValueError(f"foot_radii must be {n_feet} finite values >= 0, got {foot_radii!r}")
        else:
            radii = np.zeros(n_feet)
        #: (n_feet,) m, the foot sphere radii in use (0 = point foot).
        self.foot_radii = radii
        self._rolling = bool((radii > 0.0).any())
        cs = settings.contact
        #: (n_feet,) bool, the flat feet: the orientation update too in stance (``ekf.flat_foot_update``)
        self.flat_feet = flat_feet_mask(settings.ekf.flat_foot_update, self.foot_frames, radii, cs.flat_feet)
        self._any_flat = bool(self.flat_feet.any())
        self._rotation_results: list[UpdateResult] = []
        self.forces = ContactForceEstimator(
            self.kin,
            flat_feet=cs.flat_feet,
            use_full_dynamics=cs.use_full_dynamics,
            gravity_m_s2=settings.ekf.gravity_m_s2,
            backend=backend,
        )
        scale = self.forces.weight_n / n_feet if cs.threshold_mode == "weight_relative" else 1.0
        self.torque_detector = ContactDetector(
            n_feet,
            on_threshold=cs.on_threshold * scale,
            off_threshold=cs.off_threshold * scale,
            min_on_duration_s=cs.min_on_duration_s,
            min_off_duration_s=cs.min_off_duration_s,
            backend=backend,
        )
        self.sensor_detector = ContactDetector(
            n_feet,
            on_threshold=cs.sensor_on_threshold,
            off_threshold=cs.sensor_off_threshold,
            min_on_duration_s=cs.min_on_duration_s,
            min_off_duration_s=cs.min_off_duration_s,
            backend=backend,
        )
        # foot wrench sensors: the vertical force in N, the force thresholds (contact_inputs module docstring)
        self.wrench_detector = ContactDetector(
            n_feet,
            on_threshold=cs.on_threshold * scale,
            off_threshold=cs.off_threshold * scale,
            min_on_duration_s=cs.min_on_duration_s,
            min_off_duration_s=cs.min_off_duration_s,
            backend=backend,
        )
        self.foot_wrenches = FootWrenches(model, self.foot_frames)
        self.schedule = ContactSchedule(
            self.foot_frames, timeout_s=cs.schedule_timeout_s, disagreement_s=cs.schedule_disagreement_s
        )
        # fed -kinematic_contact_score: on below 0 (low and still), off above 1 (high or moving)
        self.kinematic_detector = ContactDetector(
            n_feet,
            on_threshold=0.0,
            off_threshold=-1.0,
            min_on_duration_s=cs.min_on_duration_s,
            min_off_duration_s=cs.min_off_duration_s,
            backend=backend,
        )
        self.joint_velocity = JointVelocityEstimator(
            n_joints,
            cutoff_hz=settings.joint_velocity.cutoff_hz,
            max_dt_s=settings.joint_velocity.max_dt_s,
            backend=backend,
        )
        imu_noise, floor_messages = apply_imu_noise_floor(
            imu_noise_from_spec(imu, settings.ekf), settings.ekf, imu.name
        )
        self.ekf = BaseEkf(imu.pose_in_base, imu_noise, settings.ekf, backend=backend)
        self._events: list[Event] = []
        for message in floor_messages:
            self._event("imu_noise_below_floor", message, "warn")
        self._q_joints = np.array(pin.neutral(model)[7:])
        self._qdot_joints = np.zeros(n_joints)
        self._n_joints = n_joints
        self._pending: deque[_PreparedJoints] = deque()
        # Name order cache: for the last valid tuple of names, the message index of each model joint (a gather:
        # ``q = position[gather]``); message entries of ignored names are simply not gathered.
        self._order_names: tuple[str, ...] | None = None
        self._gather = np.arange(n_joints)
        self._ignore_unknown = bool(settings.ignore_unknown_joints)
        self._ignored_reported: frozenset[str] = frozenset()
        self._prepare_mode = 0 if self._ignore_unknown else PREPARE_WHOLE
        self._qtau_shape = (3, n_joints)
        self._use_measured = bool(settings.joint_velocity.use_measured)
        # The backend's one-call joint step: torque contacts with the point-foot forces, g(q) only, no static bias
        # lock, no flat feet (the orientation update runs after the per-call leg update, _leg_step).
        es = settings.ekf
        self._joint_step = (
            backend.joint_step(self.ekf, self.kin, self.forces, self.torque_detector, radii, self._rolling)
            if (
                not cs.use_full_dynamics
                and not es.static_bias_lock
                and cs.source in ("torque", "auto")
                and n_feet <= JOINT_MAX_FEET
                and not self._any_flat
            )
            else None
        )
        self._auto_source = cs.source == "auto"
        self._max_delay_s = settings.max_measurement_delay_s
        self._imu_frame_id = imu.frame_id
        self._gate = float(es.foot_gate_nis)
        #: the slip report over the stance feet's leg-update NIS (:mod:`.slip`; episodes per foot, feet slipping now)
        self.slip = SlipDetector(self.foot_frames, es.slip_nis_window_s, es.slip_nis_fraction)
        self._leg_offset = OUTPUT_SIZE + 9 * n_feet  # where the joint step's leg update output starts in its buffer
        self._stance_by_mask: dict[int, tuple[list[int], list[str], int, slice, slice]] = {}
        self._stance_cache: dict[bytes, tuple[NDArray[np.intp], list[int], list[str], FloatArray]] = {}
        self.contacts = np.zeros(n_feet, dtype=bool)
        self.contact_source = "none"
        #: whether the foot forces of the last joint step were estimated (from joint torques) or measured (fresh foot
        #: wrenches); False otherwise: the forces are then zeros, not a measurement (the node does not publish them)
        self.forces_estimated = False
        self._all_feet = np.arange(n_feet)
        self._kinematic_reported = False  # contacts_from_kinematics is reported once per estimator
        self._foot_sensor_values = np.full(n_feet, np.nan)
        self._foot_sensor_stamp_ns: int | None = None
        self._stale_wrench_feet: tuple[str, ...] = ()
        self._warm_up()
        self._reset_state()

    def _warm_up(self) -> None:
        """Compile the joint-path kernels now (or load them from numba's on-disk cache), so the first real sample
        does not pay the compilation: each kernel runs once with the array layouts of the real calls. The state
        it touches is reset by ``_reset_state`` (called next in ``__init__``); the forces are zeroed here."""
        if not self.backend.compiled:
            return
        n = self._n_joints
        zeros = np.zeros(n)
        out = np.empty((3, n))
        self.backend.gather_joints(zeros, zeros, zeros, self._gather, True, out)
        q = np.array(self._q_joints)
        self.joint_velocity.advance(0, out[0])
        self.joint_velocity.advance(1, out[0])
        self.kin.update(q)
        ekf = self.ekf
        self.forces.estimate(q, out[2], ekf.R_world_base)
        everyone = np.arange(self.kin.n_feet)
        self.kin.rolling_contact_terms(everyone, out[1], ekf.omega_base_in_base, ekf.R_world_base, self.foot_radii)
        self.kin.point_contact_terms(everyone, out[1], ekf.omega_base_in_base)
        no_feet = np.zeros(self.kin.n_feet, dtype=bool)  # compiles the kernel, changes nothing
        ekf.update_stance_feet([], no_feet, out[1], self.foot_radii, self.kin.p_base_foot, self.kin.J6_base_foot,
                               rolling=self._rolling)  # fmt: skip
        for det, values in (
            (self.torque_detector, self.forces.force_in_world[:, 2]),
            (self.sensor_detector, self._foot_sensor_values),
            (self.kinematic_detector, -kinematic_clearance(self.kin.p_base_foot, ekf.R_world_base)),
        ):
            det.update(0, values)
            det.update(1, values)  # the first update sets the state without the kernel
        self.forces.estimate_and_trigger(out[2], ekf.R_world_base, self.torque_detector, 2)
        jv = self.joint_velocity  # prepare_joints and the joint step on scratch copies of the state they change
        # The shortcuts of _add_joints_kernel are called through their entry points (jit.entry_point: no type
        # dispatch), resolved here with arguments of the types of the real calls (the real calls' own buffers,
        # pinocchio's arrays, C-contiguous float64 inputs).
        args = (zeros, _EMPTY, zeros, self._gather, 0, zeros.copy(), jv.qdot.copy(), 1e-3, 0.0, out,
                self.kin.configuration)  # fmt: skip
        if self._joint_step is not None:
            self._joint_step.warm_up(args, q, out)
        else:
            self.backend.prepare_joints(*args)
        if self._any_flat:  # compiles the orientation kernel on scratch copies of the state (changes nothing)
            scratch = BaseEkf(self.imu.pose_in_base, imu_noise_from_spec(self.imu, self.settings.ekf),
                              self.settings.ekf, backend=self.backend)  # fmt: skip
            rotation_update(scratch, ["warm_up"], np.zeros(1, dtype=np.int64), out[1], self.kin.J6_base_foot, 1.0,
                            0.0, 0.0)  # fmt: skip
        self.forces.force_in_world[:] = 0.0
        self.forces.wrench_in_foot[:] = 0.0

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
            est._event("foot_frames_merged", merged, "info")
        return est

    # ------------------------------------------------------------------------------------------------------
    # State and lifecycle
    # ------------------------------------------------------------------------------------------------------

    def _reset_state(self) -> None:
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
        self.ekf.settings = self.settings.ekf  # the leg noise is chosen again at the next initialisation
        self._set_joint_velocity_noise(self.settings.ekf.encoder_velocity_noise)
        self._init_wait_reported = False
        self._last_imu_stamp_ns: int | None = None
        self._last_joint_stamp_ns: int | None = None
        self._have_joints = False
        self._pending.clear()
        self.joint_velocity.reset()
        self.torque_detector.reset()
        self.sensor_detector.reset()
        self.kinematic_detector.reset()
        self.wrench_detector.reset()
        self.foot_wrenches.clear()
        self.schedule.clear()
        self._stale_wrench_feet = ()
        self._foot_sensor_stamp_ns = None
        self._feet: tuple[FootState, ...] | _FeetOfStep | _FeetOfKernelStep = ()
        self._qdot_prev: tuple[int, FloatArray] | None = None
        self._last_estimate: Estimate | None = None
        self._leg_results: list[UpdateResult] | tuple[list[str], FloatArray, float] = []
        self._rotation_results = []
        self.slip.clear()

    def reset(self, reason: str = "requested") -> None:
        """Drop the state; the next IMU samples initialise again. Reports a ``reset`` event with the reason."""
        self._reset_state()
        self._event("reset", f"estimator reset: {reason}", "warn")

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
        """(nq,) configuration in the pinocchio layout ``[p_WB (3) m, quat_WB xyzw (4), joints]``."""
        return np.concatenate([self.ekf.p_world_base, self.ekf.quat_world_base_xyzw(), self._q_joints])

    @property
    def v(self) -> FloatArray:
        """(nv,) velocity in the pinocchio layout ``[v_B (3) m/s, omega_B (3) rad/s, qdot]`` (base frame)."""
        return np.concatenate([self.ekf.v_base_in_base, self.ekf.omega_base_in_base, self._qdot_joints])

    @property
    def feet(self) -> tuple[FootState, ...]:
        """Per-foot states of the last joint update."""
        feet = self._feet
        return feet if isinstance(feet, tuple) else feet()

    @property
    def last_update_results(self) -> list[UpdateResult]:
        """The results of the last joint step's leg update, one per stance foot (made on first read)."""
        res = self._leg_results
        if isinstance(res, tuple):
            res = self._leg_results = leg_results(*res)
        return res

    def pop_events(self) -> list[Event]:
        """Events since the last call (and clears them)."""
        events, self._events = self._events, []
        return events

    def _event(self, key: str, message: str, level: str = "warn") -> None:
        self._events.append(Event(key, message, level))

    def initialize_state(self, stamp_ns: int, q: FloatArray, v: FloatArray | None = None) -> Estimate:
        """Initialise from an explicit state in the pinocchio layout.

        Args:
            stamp_ns: time of the state (ns).
            q: (nq,) ``[p_WB, quat_WB xyzw, joints]``.
            v: (nv,) ``[v_B, omega_B, qdot]`` (base-frame twist, as pinocchio's free-flyer) or None (zero).
                A world-frame linear velocity must be rotated into B first (``R_WB^T v_W``).

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
        self._q_joints = q[7:].copy()
        self._qdot_joints = v[6:].copy()
        self._last_imu_stamp_ns = int(stamp_ns)
        return self._make_estimate()

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
            R_world_base: (3, 3) rotation matrix of the base attitude (``R_WB``: base axes in W).
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

    # ------------------------------------------------------------------------------------------------------
    # IMU
    # ------------------------------------------------------------------------------------------------------

    def add_imu(self, sample: ImuSample) -> Estimate | None:
        """Propagate to the sample's stamp (applying held joint samples on the way).

        Returns:
            The estimate at the sample's stamp, or None (initialising, or the sample was refused: see
            :meth:`pop_events`).
        """
        if True:
            stamp = int(sample.stamp_ns)
            last = self._last_imu_stamp_ns
            pending = self._pending
            frame = sample.frame_id
            if (
                last is not None
                and stamp > last
                and (not pending or pending[0].stamp_ns > stamp)
                and (not frame or frame == self._imu_frame_id or not self._imu_frame_id)
            ):
                # The usual sample (in order, nothing held to apply, no event): check, propagation and outputs in
                # one kernel (BaseEkf.imu_step); any other case, or a bad reading, takes the path below.
                gyro = _contiguous(sample.angular_velocity, dtype=float)  # (ekf.imu_step's kernel entry point)
                accel = _contiguous(sample.linear_acceleration, dtype=float)
                out = np.empty(OUTPUT_SIZE)
                code = -1 if gyro.shape != (3,) or accel.shape != (3,) else self.ekf.imu_step(stamp, gyro, accel, out)
                if code == IMU_OK:
                    self._last_imu_stamp_ns = stamp
                    estimate = self._last_estimate = Estimate.from_output_vector(stamp, out, ())
                    return estimate
                if code == IMU_NOT_FINITE:
                    self._last_imu_stamp_ns = stamp
                    return self._finish_step(())
        gyro = np.asarray(sample.angular_velocity, dtype=float)
        accel = np.asarray(sample.linear_acceleration, dtype=float)
        if gyro.shape != (3,) or accel.shape != (3,):
            self._event("imu_shape", f"IMU sample with shapes {gyro.shape}, {accel.shape}; expected (3,)")
            return None
        g0, g1, g2 = gyro.tolist()
        a0, a1, a2 = accel.tolist()
        # A finite sum means all six are finite (NaN and Inf propagate); otherwise check each (the sum of large
        # finite values may overflow).
        if not math.isfinite(g0 + g1 + g2 + a0 + a1 + a2) and not all(map(math.isfinite, (g0, g1, g2, a0, a1, a2))):
            self._event("imu_nan", f"IMU sample at {sample.stamp_ns} ns has NaN/Inf; skipped")
            return None
        es = self.settings.ekf
        if max(abs(g0), abs(g1), abs(g2)) > es.max_gyro_rad_s or max(abs(a0), abs(a1), abs(a2)) > es.max_accel_m_s2:
            self._event(
                "imu_out_of_range",
                f"IMU sample at {sample.stamp_ns} ns beyond ekf.max_gyro_rad_s={es.max_gyro_rad_s} or "
                f"ekf.max_accel_m_s2={es.max_accel_m_s2}; skipped",
            )
            return None
        if sample.frame_id and self.imu.frame_id and sample.frame_id != self.imu.frame_id:
            self._event(
                "imu_frame_id",
                f"IMU frame_id {sample.frame_id!r} differs from the description's {self.imu.frame_id!r}",
                "info",
            )
        stamp = int(sample.stamp_ns)
        last = self._last_imu_stamp_ns
        if last is not None and stamp <= last:
            if stamp == last:
                self._event("imu_dt_nonpositive", f"IMU stamp {stamp} ns repeats the last one; skipped")
                return None
            back_s = (last - stamp) / _NS
            if back_s <= self.settings.out_of_order_tolerance_s:
                self._event("imu_out_of_order", f"IMU stamp {back_s * 1e3:.3f} ms older than the last; skipped")
                return None
            self.reset(f"IMU time went backwards by {back_s:.3f} s")
            self._event("stamp_backwards", f"IMU time went backwards by {back_s:.3f} s; estimator reset")
        self._last_imu_stamp_ns = stamp

        if not self.ekf.initialized:
            return self._accumulate_init(stamp, gyro, accel)

        ekf = self.ekf
        ekf.set_imu(stamp, gyro, accel)
        feet: tuple[FootState, ...] | _FeetOfStep | _FeetOfKernelStep = ()
        while self._pending and self._pending[0].stamp_ns <= stamp:
            prepared = self._pending.popleft()
            if not self._propagate(prepared.stamp_ns):
                continue
            feet, _ = self._apply_joints(prepared)  # the outputs at the joint stamp are not needed
        if ekf.stamp_ns is not None and stamp > ekf.stamp_ns:
            self._propagate(stamp)
        return self._finish_step(feet)

    def _propagate(self, stamp: int) -> bool:
        reason = self.ekf.propagate_to(stamp)
        if reason is None:
            return True
        if reason == "dt_too_large":
            self._event(
                "imu_gap",
                f"gap larger than ekf.max_dt_s={self.settings.ekf.max_dt_s} s before {stamp} ns; "
                "not propagated, filter re-anchored",
            )
            return True
        self._event("imu_dt_nonpositive", f"propagation to {stamp} ns refused: {reason}")
        return False

    def _accumulate_init(self, stamp: int, gyro: FloatArray, accel: FloatArray) -> Estimate | None:
        s = self.settings.ekf
        window = self._init_window
        window.append((gyro, accel))
        if self._init_start_ns is None:
            self._init_start_ns = stamp
        self._init_accel_sum += accel
        self._init_count += 1
        timed_out = s.init_timeout_s > 0.0 and (stamp - self._init_start_ns) >= s.init_timeout_s * _NS
        if len(window) < s.init_imu_samples:
            return self._initialize_moving(stamp, gyro, accel) if timed_out else None
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
            return self._initialize_moving(stamp, gyro, accel) if timed_out else None
        support = self._initial_support(rotation_from_gravity(self.ekf.R_base_imu @ accel_mean))
        if support is not None and not support.any_loaded:
            self._wait_for_load(support)
            return None
        self.ekf.initialize_static(
            stamp,
            accel_imu_mean=accel_mean,
            gyro_imu_mean=gyro_mean,
            p_world_base=np.array(s.initial_position),
            n_samples=len(window),
        )
        self.ekf.set_imu(stamp, gyro, accel)
        how = ""
        if s.initial_height_from_feet and self._have_joints:
            heights = self._contact_heights()
            if support is not None:
                heights = heights[support.loaded]
                how = f", height above the loaded feet {support.describe(self.foot_frames)}"
            self.ekf.p_world_base[2] = -float(np.mean(heights))
        self._event(
            "initialized", f"initialised from {len(window)} static IMU samples{how}{self._choose_leg_noise()}", "info"
        )
        # Joint samples held during initialisation that are older than now are not replayed.
        while self._pending and self._pending[0].stamp_ns <= stamp:
            self._pending.popleft()
        return self._finish_step(())

    def _contact_heights(self) -> FloatArray:
        """(n_feet,) m, height of each foot's ground contact point relative to the base origin along the world
        vertical, at the last joint sample and the filter's attitude: ``e_z . (R_WB r_i) - rho_i``, the sphere
        centre ``r_i`` (m, B) lowered by its radius (the ground touches a rolling foot rho_i below its centre;
        rho_i = 0 for a point foot). The initial height puts the stance contact points, not the centres, on z = 0.
        """
        self.kin.update(self._q_joints)
        return self.kin.p_base_foot @ self.ekf.R_world_base[2, :] - self.foot_radii

    def _initial_support(self, R_world_base: FloatArray) -> InitialSupport | None:
        """The loaded feet at the last joint sample (:mod:`.initial_support`); None when the initialisation does
        not wait for them (``ekf.init_wait_for_loaded_feet`` off, or no joint sample yet)."""
        if not (self.settings.ekf.init_wait_for_loaded_feet and self._have_joints):
            return None
        cs = self.settings.contact
        stamp = self._last_joint_stamp_ns
        sensor_fresh = (
            self._foot_sensor_stamp_ns is not None
            and stamp is not None
            and abs(stamp - self._foot_sensor_stamp_ns) <= cs.foot_sensor_timeout_s * _NS
            and bool(np.isfinite(self._foot_sensor_values).all())
        )
        if stamp is not None:
            other = self._initial_support_from_inputs(stamp, R_world_base)
            if other is not None:
                return other
            if cs.source == "schedule":  # no fresh schedule: the sources auto would use
                cs = dataclasses.replace(cs, source="auto")
        return initial_support(
            cs,
            sensor_values=self._foot_sensor_values,
            sensor_fresh=sensor_fresh,
            tau_joints=self._init_tau,
            q_joints=self._q_joints,
            qdot_joints=self._qdot_joints if self._init_qdot_valid else None,
            forces=self.forces,
            torque_on_threshold_n=self.torque_detector.on_threshold,
            R_world_base=R_world_base,
        )

    def _initial_support_from_inputs(self, stamp: int, R_world_base: FloatArray) -> InitialSupport | None:
        """The loaded feet from the foot wrench sensors (every foot fresh; ``auto`` / ``foot_sensor``: the vertical
        force above the force trigger's on threshold) or the contact schedule (``schedule``: its stance feet), at
        the last joint sample; None when neither applies."""
        cs = self.settings.contact
        if cs.source == "schedule":
            schedule, _ = self.schedule.at(stamp)
            if schedule is None:
                return None
            return InitialSupport(schedule.copy(), "schedule", schedule.astype(float), 0.5)
        fw = self.foot_wrenches
        timeout_ns = round(cs.foot_sensor_timeout_s * _NS)
        if cs.source not in ("auto", "foot_sensor") or not fw.started or fw.stale_feet(stamp, timeout_ns):
            return None
        kin = self.kin
        kin.update(self._q_joints)
        n = kin.n_feet
        wrench, force = np.zeros((n, 6)), np.zeros((n, 3))
        fw.in_foot_frames(kin.data, kin.X_base_foot, R_world_base, wrench, force)
        threshold = self.wrench_detector.on_threshold
        return InitialSupport(force[:, 2] >= threshold, "foot_wrench", force[:, 2].copy(), threshold)

    def _wait_for_load(self, support: InitialSupport) -> None:
        """No foot loaded: stay uninitialised (reported once per initialisation)."""
        if not self._init_wait_reported:
            self._init_wait_reported = True
            self._event(
                "init_waiting_for_load",
                f"initialisation waits for a loaded foot ({support.source}: largest value "
                f"{float(np.max(support.values)):.3g}, threshold {support.threshold:.3g}); a robot held in the air "
                "initialises once it is put down (ekf.init_wait_for_loaded_feet)",
                "info",
            )
        return None

    def _initialize_moving(self, stamp: int, gyro: FloatArray, accel: FloatArray) -> Estimate | None:
        """The fallback after ``ekf.init_timeout_s`` without a static window (see the module docstring)."""
        s = self.settings.ekf
        ekf = self.ekf
        accel_mean = self._init_accel_sum / max(self._init_count, 1)
        support = self._initial_support(rotation_from_gravity(ekf.R_base_imu @ accel_mean))
        if support is not None and not support.any_loaded:
            self._wait_for_load(support)
            return None
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
        if self._have_joints:
            heights = self._contact_heights()
            if support is not None:
                stance = np.flatnonzero(support.loaded)
            else:
                stance = np.flatnonzero(heights - heights.min() <= self.settings.contact.kinematic_on_height_m)
            if s.initial_height_from_feet:
                ekf.p_world_base[2] = -float(np.mean(heights[stance]))
            if self._init_qdot_valid:
                r = self.kin.p_base_foot[stance]
                J = self.kin.J_base_foot[stance]
                # v_B = -(J_i qdot) - omega x r_i, averaged over the lowest feet.
                v = -(J @ self._qdot_joints) - r @ skew(ekf.omega_base_in_base).T
                ekf.v_base_in_base = v.mean(axis=0)
                how = f"velocity from {stance.size} stance feet"
            else:
                how = "no joint velocities yet: velocity 0"
        self._event(
            "initialized_moving",
            f"no static IMU window within ekf.init_timeout_s={s.init_timeout_s} s: initialised from a moving "
            f"window of {self._init_count} IMU samples (yaw 0, gyro bias 0, {how}); roll/pitch stddev "
            f"{s.init_moving_roll_pitch_std} rad, velocity stddev {s.init_moving_velocity_std} m/s"
            f"{self._choose_leg_noise()}",
            "warn",
        )
        while self._pending and self._pending[0].stamp_ns <= stamp:
            self._pending.popleft()
        return self._finish_step(())

    def _choose_leg_noise(self) -> str:
        """At initialisation: the joint-velocity stddev of the leg measurement (:mod:`.noise_model`): the measured
        velocities' ``ekf.encoder_velocity_noise``, or the encoders' noise through the differentiator at the joint
        period seen so far (median). Returns the words for the ``initialized`` event ("" without joints)."""
        es = self.settings.ekf
        dts = sorted(self._init_joint_dts)
        dt = dts[len(dts) // 2] if dts and not self._init_velocity_measured else None
        sigma = joint_velocity_std(
            es, measured=self._init_velocity_measured, dt_s=dt, cutoff_hz=self.settings.joint_velocity.cutoff_hz
        )
        if not self._have_joints:
            return ""
        how = (
            "measured velocities (ekf.encoder_velocity_noise)"
            if dt is None
            else f"differentiated at {dt * 1e3:.2f} ms from ekf.encoder_noise_rad={es.encoder_noise_rad:g} rad"
        )
        self._set_joint_velocity_noise(sigma)
        return (
            f"; leg measurement noise: contact point {es.foot_velocity_noise:g} m/s, joint velocities {sigma:.3g} "
            f"rad/s ({how}) through the leg Jacobian"
        )

    def _set_joint_velocity_noise(self, sigma: float) -> None:
        """Use ``sigma`` (rad/s) as the joint velocity stddev of the leg updates (filter and joint-step kernel)."""
        if sigma != self.ekf.settings.encoder_velocity_noise:
            self.ekf.settings = dataclasses.replace(self.settings.ekf, encoder_velocity_noise=sigma)

    def _finish_step(self, feet: tuple[FootState, ...] | _FeetOfStep | _FeetOfKernelStep) -> Estimate | None:
        ekf = self.ekf
        # One output vector from the filter; the estimate's arrays are views of it, made when read.
        out = ekf.finite_output_vector()
        if out is None:
            self.reset("the filter state became non-finite")
            self._event("filter_diverged", "non-finite filter state; estimator reset", "error")
            return None
        estimate = Estimate.from_output_vector(int(ekf.stamp_ns or 0), out, feet)
        self._last_estimate = estimate
        return estimate

    def _make_estimate(self) -> Estimate:
        ekf = self.ekf
        return Estimate.from_output_vector(int(ekf.stamp_ns or 0), ekf.output_vector())

    # ------------------------------------------------------------------------------------------------------
    # Joints and foot sensors
    # ------------------------------------------------------------------------------------------------------

    def _prepare_joints(self, sample: JointSample) -> _PreparedJoints | None:
        prepared = self._prepare_joints_kernel(sample)
        if prepared is not None:
            return prepared
        # The reference path; also every sample the kernel path leaves (a new name order, a bad sample: the
        # events come from here).
        names = tuple(sample.names)
        n = len(names)
        pos = np.asarray(sample.position, dtype=float)
        vel = None if sample.velocity is None else np.asarray(sample.velocity, dtype=float)
        eff = None if sample.effort is None else np.asarray(sample.effort, dtype=float)
        if vel is not None and vel.size == 0:
            vel = None
        if eff is not None and eff.size == 0:
            eff = None
        strict = not self._ignore_unknown
        for label, arr in (("position", pos), ("velocity", vel), ("effort", eff)):
            if arr is not None and arr.shape != (n,):
                self._event("joint_shape", f"joint {label} has shape {arr.shape} for {n} names; skipped")
                return None
            if strict and arr is not None and not np.isfinite(arr).all():
                self._event("joint_nan", f"joint {label} at {sample.stamp_ns} ns has NaN/Inf; skipped")
                return None
        gather: NDArray[np.intp] | None = self._gather
        if names != self._order_names:  # else the same names as the last valid sample: same order, checked
            gather = self._joint_order(names)
            if gather is None:
                return None
        q = pos[gather]
        use_measured = self.settings.joint_velocity.use_measured
        qdot_meas = None if vel is None or (strict and not use_measured) else vel[gather]
        tau = None if eff is None else eff[gather]
        if not strict:  # only the values of model joints must be finite (ignored ones are unused)
            for label, arr in (("position", q), ("velocity", qdot_meas), ("effort", tau)):
                if arr is not None and not np.isfinite(arr).all():
                    self._event("joint_nan", f"joint {label} at {sample.stamp_ns} ns has NaN/Inf; skipped")
                    return None
        stamp = int(sample.stamp_ns)
        qdot_est = self.joint_velocity.update(stamp, q)
        if qdot_meas is not None and use_measured:
            qdot = qdot_meas
            valid = True
        else:
            qdot, valid = qdot_est, self.joint_velocity.valid
        return _PreparedJoints(stamp, q, qdot, valid, tau)

    def _same_names(self, names: Sequence[str]) -> tuple[str, ...] | None:
        """``names`` as the tuple of the last sample's names when they are those (same order), else None."""
        if names is self._order_names:
            return names  # type: ignore[return-value]
        if type(names) is not tuple:
            names = tuple(names)
        return names if names == self._order_names else None

    def _prepare_joints_kernel(self, sample: JointSample) -> _PreparedJoints | None:
        """:meth:`_prepare_joints` for a well-formed sample with the names of the last one, in one kernel call
        (:func:`~robot_state_estimator.estimation.leg_kernels.gather_joints`); None for any other sample (the
        reference path then handles it, events included)."""
        names = self._same_names(sample.names)
        if names is None:
            return None
        pos = np.asarray(sample.position, dtype=float)
        n = len(names)
        vel = sample.velocity
        eff = sample.effort
        vel = _EMPTY if vel is None else np.asarray(vel, dtype=float)
        eff = _EMPTY if eff is None else np.asarray(eff, dtype=float)
        if pos.shape != (n,) or (vel.size and vel.shape != (n,)) or (eff.size and eff.shape != (n,)):
            return None
        out = np.empty((3, self._n_joints))
        stamp = int(sample.stamp_ns)
        jv = self.joint_velocity
        coefficients = jv.step_coefficients(stamp)
        if coefficients is not None:
            # The usual sample: gather, the joint velocity's regular step and the velocity in use in one kernel.
            dt, alpha, filtered = coefficients
            mode = self._prepare_mode | (PREPARE_FILTERED if filtered else 0)
            if vel.size and self._use_measured:
                mode |= PREPARE_MEASURED
            assert jv._q_prev is not None  # (step_coefficients)
            code = self.backend.prepare_joints(pos, vel, eff, self._gather, mode, jv._q_prev, jv.qdot, dt, alpha, out,
                                               self.kin.configuration)  # fmt: skip
            if code != GATHER_OK:
                return None
            jv.stepped(stamp)
            if eff.size:
                return _PreparedJoints(stamp, out[0], out[1], True, out[2], out)
            return _PreparedJoints(stamp, out[0], out[1], True, None)
        if self.backend.gather_joints(pos, vel, eff, self._gather, not self._ignore_unknown, out) != GATHER_OK:
            return None
        q = out[0]
        jv.advance(stamp, q)
        if vel.size and self.settings.joint_velocity.use_measured:
            return _PreparedJoints(stamp, q, out[1], True, out[2] if eff.size else None)
        return _PreparedJoints(stamp, q, jv.qdot.copy(), jv.valid, out[2] if eff.size else None)

    def _joint_order(self, names: tuple[str, ...]) -> NDArray[np.intp] | None:
        """Message index of each model joint (remembered for the next samples), or None with an event.

        Names not in the model are an error (``unknown_joint``) unless ``settings.ignore_unknown_joints``: then
        they are left out, and a change of the set of ignored names is reported (``ignored_joints``, info).
        """
        n = len(names)
        if len(set(names)) != n:
            self._event("duplicate_joint", "joint sample has duplicate names; skipped")
            return None
        index = self._joint_index
        unknown = [name for name in names if name not in index]
        if unknown and not self._ignore_unknown:
            self._event("unknown_joint", f"unknown joint name(s) {unknown}; skipped")
            return None
        if n - len(unknown) != len(self.joint_names):
            present = set(names)
            missing = [name for name in self.joint_names if name not in present]
            self._event("missing_joint", f"joint sample lacks {missing}; skipped")
            return None
        gather = np.empty(len(self.joint_names), dtype=np.intp)
        for i, name in enumerate(names):
            j = index.get(name)
            if j is not None:
                gather[j] = i
        self._order_names, self._gather = names, gather
        ignored = frozenset(unknown)
        if ignored and ignored != self._ignored_reported:
            self._event(
                "ignored_joints",
                f"joint(s) {sorted(ignored)} are not in the model; ignored (ignore_unknown_joints)",
                "info",
            )
        self._ignored_reported = ignored
        return gather

    def add_joints(self, sample: JointSample) -> Estimate | None:
        """Add joint positions (and velocities / efforts when present), matched by name.

        Returns:
            The estimate after the kinematic update when the sample was applied now; None when it is held
            for a later IMU sample, the filter is initialising, or the sample was refused (see
            :meth:`pop_events`).
        """
        if self._joint_step is not None:
            estimate = self._add_joints_kernel(sample)
            if estimate is not _NOT_USUAL:
                return estimate  # type: ignore[return-value]
        stamp = int(sample.stamp_ns)
        last = self._last_joint_stamp_ns
        if last is not None and stamp <= last:
            if stamp == last:
                self._event("joint_dt_nonpositive", f"joint stamp {stamp} ns repeats the last one; skipped")
                return None
            back_s = (last - stamp) / _NS
            if back_s <= self.settings.out_of_order_tolerance_s:
                self._event("joint_out_of_order", f"joint stamp {back_s * 1e3:.3f} ms older than the last; skipped")
                return None
            self.reset(f"joint time went backwards by {back_s:.3f} s")
            self._event("stamp_backwards", f"joint time went backwards by {back_s:.3f} s; estimator reset")
        prepared = self._prepare_joints(sample)
        if prepared is None:
            return None
        self._last_joint_stamp_ns = stamp
        self._have_joints = True
        if not self.ekf.initialized:
            self._q_joints = prepared.q
            self._qdot_joints = prepared.qdot
            self._init_qdot_valid = prepared.qdot_valid
            self._init_tau = prepared.tau
            vel = sample.velocity
            self._init_velocity_measured = (
                vel is not None and len(vel) > 0 and self.settings.joint_velocity.use_measured
            )
            if last is not None and stamp > last:
                self._init_joint_dts.append((stamp - last) / _NS)
            return None
        ekf_stamp = int(self.ekf.stamp_ns or 0)
        if stamp > ekf_stamp:
            if len(self._pending) >= self.settings.max_pending_joint_samples:
                self._pending.popleft()
                self._event("joint_queue_overflow", "too many joint samples ahead of the IMU; oldest dropped")
            self._pending.append(prepared)
            return None
        delay_s = (ekf_stamp - stamp) / _NS
        if delay_s > self.settings.max_measurement_delay_s:
            self._event(
                "joint_too_old",
                f"joint sample {delay_s * 1e3:.1f} ms older than the filter "
                f"(max_measurement_delay_s={self.settings.max_measurement_delay_s}); dropped",
            )
            return None
        feet, out = self._apply_joints(prepared)
        if out is None:
            return self._finish_step(feet)
        estimate = self._last_estimate = Estimate.from_output_vector(int(self.ekf.stamp_ns or 0), out, feet)
        return estimate

    def add_foot_forces(self, sample: FootForceSample) -> None:
        """Store foot sensor readings (forces or raw counts, matched by foot frame name) for contact detection."""
        values = np.asarray(sample.values, dtype=float)
        if values.shape != (len(sample.feet),):
            self._event("foot_force_shape", f"foot force values {values.shape} for {len(sample.feet)} feet; skipped")
            return
        if not np.isfinite(values).all():
            self._event("foot_force_nan", "foot force sample has NaN/Inf; skipped")
            return
        unknown = [f for f in sample.feet if f not in self._foot_index]
        if unknown:
            self._event("unknown_foot", f"unknown foot name(s) {unknown}; skipped")
            return
        for name, value in zip(sample.feet, values):
            self._foot_sensor_values[self._foot_index[name]] = value
        self._foot_sensor_stamp_ns = int(sample.stamp_ns)

    def add_foot_wrench(self, sample: FootWrenchSample) -> None:
        """Store one foot's force/torque sensor reading (``geometry_msgs/WrenchStamped``: any frame of the
        description; expressed in the foot frame at the configuration of the joint sample it is used for, see
        :mod:`~robot_state_estimator.estimation.contact_inputs`). Refused with an event: ``unknown_foot``,
        ``foot_wrench_shape``, ``foot_wrench_nan``, ``foot_wrench_unknown_frame``, ``foot_wrench_out_of_order``."""
        problem = self.foot_wrenches.add(sample)
        if problem is not None:
            self._event(*problem)

    def add_contact_schedule(self, sample: ContactScheduleSample) -> None:
        """Store a controller's contact schedule (used with ``contact.source: schedule``: a joint sample at
        stamp t takes the latest schedule stamped at or before t, at most ``contact.schedule_timeout_s`` old).
        Refused with an event: ``schedule_shape``, ``schedule_duplicate_feet``, ``schedule_unknown_feet``,
        ``schedule_missing_feet``."""
        problem = self.schedule.add(sample)
        if problem is not None:
            self._event(*problem)

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

    @property
    def stale_foot_wrenches(self) -> tuple[str, ...]:
        """The feet whose wrench sensor was not fresh at the last joint step while others were (empty: all fresh,
        or no wrench sensor at all)."""
        return self._stale_wrench_feet

    def _wrenches_fresh(self, stamp: int) -> bool:
        """Whether every foot's wrench sample is within ``contact.foot_sensor_timeout_s`` of the joint stamp; a
        change of the set of stale feet (while wrenches stream) is reported (``foot_wrench_stale``, naming them)."""
        fw = self.foot_wrenches
        if not fw.started:
            return False
        stale = fw.stale_feet(stamp, round(self.settings.contact.foot_sensor_timeout_s * _NS))
        names = tuple(self.foot_frames[i] for i in stale)
        if names != self._stale_wrench_feet:
            self._stale_wrench_feet = names
            if names:
                self._event(
                    "foot_wrench_stale",
                    f"no foot wrench within contact.foot_sensor_timeout_s={self.settings.contact.foot_sensor_timeout_s}"
                    f" s of the joint stamp for {list(names)} (their topics stopped?): contacts from another source",
                )
        return not names

    def _select_contacts(self, prepared: _PreparedJoints) -> None:
        """Run the contact source in use; sets ``contacts``, ``contact_source`` and the forces."""
        cs = self.settings.contact
        stamp = prepared.stamp_ns
        sensor_fresh = (
            self._foot_sensor_stamp_ns is not None
            and abs(stamp - self._foot_sensor_stamp_ns) <= cs.foot_sensor_timeout_s * _NS
            and np.isfinite(self._foot_sensor_values).all()
        )
        wrench_fresh = self._wrenches_fresh(stamp)
        have_tau = prepared.tau is not None
        use_wrenches = wrench_fresh and cs.source != "torque"  # the foot wrenches replace the torque estimate (below)
        self.forces_estimated = have_tau or use_wrenches  # estimated from torques, or measured by foot wrenches
        if (
            prepared.tau is not None
            and not cs.use_full_dynamics
            and (cs.source == "torque" or (cs.source == "auto" and not sensor_fresh and not wrench_fresh))
            and self.forces.estimate_and_trigger(prepared.tau, self.ekf.R_world_base, self.torque_detector, stamp)
        ):
            # the torque source in one kernel: forces, then the trigger on their vertical components
            self.contacts = self.torque_detector.in_contact.copy()
            self.contact_source = "torque"
            return
        if have_tau:
            assert prepared.tau is not None
            v = a = None
            if cs.use_full_dynamics:
                v = np.concatenate([self.ekf.v_base_in_base, self.ekf.omega_base_in_base, prepared.qdot])
                a_lin = self.ekf.f_base_in_base + self.ekf.R_world_base.T @ self.ekf.g_world
                a_lin = a_lin - cross3(self.ekf.omega_base_in_base, self.ekf.v_base_in_base)
                a = np.concatenate([a_lin, self.ekf.alpha_base_in_base, self._joint_acceleration(prepared)])
            self.forces.estimate(prepared.q, prepared.tau, self.ekf.R_world_base, v=v, a=a)
        else:
            self.forces.force_in_world[:] = 0.0
            self.forces.wrench_in_foot[:] = 0.0
        if use_wrenches:  # not with the torque source: its one-kernel path publishes the torque estimate, so does this
            self.foot_wrenches.in_foot_frames(
                self.kin.data, self.kin.X_base_foot, self.ekf.R_world_base, self.forces.wrench_in_foot,
                self.forces.force_in_world,
            )  # fmt: skip
        source = cs.source
        if source == "schedule":
            schedule, age_ns = self.schedule.at(stamp)
            if schedule is not None:
                self.contacts = schedule.copy()
                self.contact_source = "schedule"
                measured = None
                if wrench_fresh:
                    measured = self.wrench_detector.update(stamp, self.forces.force_in_world[:, 2])
                elif have_tau:
                    measured = self.torque_detector.update(stamp, self.forces.force_in_world[:, 2])
                if measured is not None:
                    for i in self.schedule.compare(stamp, schedule, measured):
                        fz = float(self.forces.force_in_world[i, 2])
                        self._event(
                            "contact_schedule_disagrees",
                            f"foot {self.foot_frames[i]}: the contact schedule says "
                            f"{'stance' if schedule[i] else 'swing'} but the measured force ({fz:.1f} N vertical) says "
                            f"{'contact' if measured[i] else 'no contact'} for {cs.schedule_disagreement_s} s or more; "
                            "the schedule is used",
                        )
                return
            why = "none received" if not self.schedule.started else (
                "none stamped at or before the joint stamp" if age_ns is None
                else f"the latest at or before the joint stamp is {age_ns / 1e6:.1f} ms old"
            )  # fmt: skip
            self._event(
                "contact_source_unavailable",
                f"contact schedule stale ({why}; contact.schedule_timeout_s={cs.schedule_timeout_s} s): "
                f"contacts from {'the joint torques' if have_tau else 'the kinematics'}",
            )
            source = "torque" if have_tau else "kinematic"
        elif source == "auto":
            fallback = "torque" if have_tau else "kinematic"
            source = "foot_wrench" if wrench_fresh else "foot_sensor" if sensor_fresh else fallback
        elif source == "foot_sensor" and wrench_fresh:
            source = "foot_wrench"
        elif (source == "foot_sensor" and not sensor_fresh) or (source == "torque" and not have_tau):
            self._event("contact_source_unavailable", f"contact source {source!r} has no data; kinematic fallback")
            source = "kinematic"
        if source == "foot_wrench":
            self.contacts = self.wrench_detector.update(stamp, self.forces.force_in_world[:, 2])
        elif source == "foot_sensor":
            self.contacts = self.sensor_detector.update(stamp, self._foot_sensor_values)
        elif source == "torque":
            self.contacts = self.torque_detector.update(stamp, self.forces.force_in_world[:, 2])
        else:
            self.contacts = self.kinematic_detector.update(stamp, -self._kinematic_score(prepared))
            if not self._kinematic_reported:
                self._kinematic_reported = True
                self._event(
                    "contacts_from_kinematics",
                    "contacts come from the foot heights and speeds (no joint efforts, no foot sensors): unreliable "
                    "for gaits with low foot clearance (a swing foot taken for a stance foot corrupts the estimate); "
                    "publish joint efforts or foot sensors (README, 'Kinematic contacts')",
                    "warn",
                )
        self.contact_source = source

    def _kinematic_score(self, prepared: _PreparedJoints) -> FloatArray:
        """(n_feet,) :func:`~robot_state_estimator.estimation.contact.kinematic_contact_score` of the last joint
        sample: heights above the lowest foot (filter attitude) and, with valid joint velocities and an initialised
        filter, the contact points' speeds relative to the lowest foot's (leg odometry; not the filter's base
        velocity)."""
        cs = self.settings.contact
        ekf = self.ekf
        clearance = kinematic_clearance(self.kin.p_base_foot, ekf.R_world_base)
        speed = None
        if prepared.qdot_valid and ekf.initialized:
            v_feet = self.kin.rolling_contact_terms(
                self._all_feet, prepared.qdot, ekf.omega_base_in_base, ekf.R_world_base, self.foot_radii
            )[0]
            speed = kinematic_foot_speed(v_feet, clearance)
        return kinematic_contact_score(
            clearance,
            speed,
            on_height_m=cs.kinematic_on_height_m,
            off_height_m=cs.kinematic_off_height_m,
            on_speed_m_s=cs.kinematic_on_speed_m_s,
            off_speed_m_s=cs.kinematic_off_speed_m_s,
        )

    def _joint_acceleration(self, prepared: _PreparedJoints) -> FloatArray:
        """(n,) rad/s^2, backward difference of consecutive joint velocities (zero on the first sample)."""
        prev = self._qdot_prev
        qddot = np.zeros(len(prepared.qdot))
        if prev is not None and prepared.stamp_ns > prev[0]:
            qddot = (prepared.qdot - prev[1]) / ((prepared.stamp_ns - prev[0]) * 1e-9)
        self._qdot_prev = (prepared.stamp_ns, prepared.qdot)
        return qddot

    def _stance_of(self, contacts: NDArray[np.bool_]) -> tuple[NDArray[np.intp], list[int], list[str], FloatArray]:
        """The stance feet of a contact pattern: indices (array and list), names, radii; cached per pattern
        (at most 2^n_feet of them). The cached arrays are never written."""
        key = contacts.tobytes()
        entry = self._stance_cache.get(key)
        if entry is None:
            stance = np.flatnonzero(contacts)
            stance_list = stance.tolist()
            entry = (stance, stance_list, [self.foot_frames[i] for i in stance_list], self.foot_radii[stance])
            self._stance_cache[key] = entry
        return entry

    def _apply_joints(self, prepared: _PreparedJoints) -> tuple[_FeetOfStep | _FeetOfKernelStep, FloatArray | None]:
        """Kinematic update at the current filter time; returns the per-foot states (made when first read) and the
        outputs after it (the filter's output vector, when the one-kernel step made it and the state is finite;
        else None: ``_finish_step`` makes them)."""
        if self._joint_step is not None:
            step = self._joint_kernel_step(prepared)
            if step is not None:
                return step
        self.kin.update(prepared.q)
        self._q_joints = prepared.q
        self._qdot_joints = prepared.qdot
        self._select_contacts(prepared)
        return self._leg_step(prepared), None

    def _joint_kernel_step(
        self, prepared: _PreparedJoints
    ) -> tuple[_FeetOfStep | _FeetOfKernelStep, FloatArray | None] | None:
        """:meth:`_apply_joints` with the torque contact source in one kernel after pinocchio's kinematics
        (:meth:`_run_joint_step`); None (nothing done) when the sample is not the usual one (no efforts, velocities
        not valid, the trigger's first sample, foot sensors streaming)."""
        qtau = prepared.qtau
        det = self.torque_detector
        if (
            qtau is None
            or not prepared.qdot_valid
            or not det._started
            or (self._auto_source and (self._foot_sensor_stamp_ns is not None or self.foot_wrenches.started))
        ):
            return None
        self._q_joints = prepared.q
        self._qdot_joints = prepared.qdot
        return self._run_joint_step(qtau, prepared.stamp_ns, prepared.q)

    def _add_joints_kernel(self, sample: JointSample) -> Estimate | object | None:
        """:meth:`add_joints` for the usual sample: in order, applied now (at most ``max_measurement_delay_s``
        behind the filter, nothing held), the names of the last sample, positions, efforts (and velocities) of
        the right lengths and finite, the joint velocity's regular step, the torque contact source: one kernel
        (``leg_kernels.prepare_joints``), pinocchio's kinematics, one kernel (:meth:`_run_joint_step`). Returns
        ``_NOT_USUAL``, with nothing changed, for any other sample (the reference path then handles it, events
        included)."""
        stamp = int(sample.stamp_ns)
        last = self._last_joint_stamp_ns
        ekf_stamp = self.ekf.stamp_ns
        if (
            last is None
            or stamp <= last
            or ekf_stamp is None
            or stamp > ekf_stamp
            or (ekf_stamp - stamp) / _NS > self._max_delay_s
        ):
            return _NOT_USUAL
        names = sample.names
        if names is not self._order_names and self._same_names(names) is None:
            return _NOT_USUAL
        eff = sample.effort
        if (
            eff is None
            or not self.torque_detector._started
            or (self._auto_source and (self._foot_sensor_stamp_ns is not None or self.foot_wrenches.started))
        ):
            return _NOT_USUAL
        jv = self.joint_velocity
        coefficients = jv.step_coefficients(stamp)
        if coefficients is None:
            return _NOT_USUAL
        n = len(names)
        # C-contiguous float64 of the checked shapes: the kernels are called through their entry points
        pos = _contiguous(sample.position, dtype=float)
        eff = _contiguous(eff, dtype=float)
        vel = sample.velocity
        vel = _EMPTY if vel is None else _contiguous(vel, dtype=float)
        if pos.shape != (n,) or eff.shape != (n,) or (vel.size and vel.shape != (n,)) or vel.ndim != 1:
            return _NOT_USUAL
        dt, alpha, filtered = coefficients
        mode = self._prepare_mode | (PREPARE_FILTERED if filtered else 0)
        if vel.size and self._use_measured:
            mode |= PREPARE_MEASURED
        qtau = np.empty(self._qtau_shape)
        assert jv._q_prev is not None  # (step_coefficients)
        kin = self.kin
        assert self._joint_step is not None
        code = self._joint_step.prepare(pos, vel, eff, self._gather, mode, jv._q_prev, jv.qdot, dt, alpha, qtau,
                                        kin.configuration)  # fmt: skip
        if code != GATHER_OK:
            return _NOT_USUAL  # a NaN/Inf (nothing changed): the reference path reports it
        jv.stepped(stamp)
        self._last_joint_stamp_ns = stamp
        self._have_joints = True
        self._q_joints = qtau[0]
        self._qdot_joints = qtau[1]
        feet, out = self._run_joint_step(qtau, stamp, None)  # the positions are in kin.configuration
        if out is None:
            return self._finish_step(feet)
        estimate = self._last_estimate = Estimate.from_output_vector(ekf_stamp, out, feet)
        return estimate

    def _run_joint_step(
        self, qtau: FloatArray, stamp: int, q_joints: FloatArray | None
    ) -> tuple[_FeetOfStep | _FeetOfKernelStep, FloatArray | None]:
        """The joint step of a prepared sample ``qtau`` (3, nj) (positions, the velocities in use, efforts; valid
        velocities) at the filter time with the torque contact source: pinocchio's kinematics
        (``LegKinematics.foot_terms`` of ``q_joints``, None: the positions are already in ``kin.configuration``;
        ``jacobianCenterOfMass``), then ``ekf_kernels.joint_step`` (forces, trigger, leg update, outputs). Returns
        the per-foot states and the outputs (None when the state is not finite or the reference leg update ran:
        ``_finish_step`` makes them)."""
        assert self._joint_step is not None
        ekf = self.ekf
        det = self.torque_detector
        result, buf = self._joint_step.run(qtau, stamp, q_joints)
        self.forces_estimated = True
        if result < 0:
            prepared = _PreparedJoints(stamp, qtau[0], qtau[1], True, qtau[2], qtau)
            if result == JOINT_FORCES_FAILED:  # nothing done: the reference forces (least squares) and trigger
                self._select_contacts(prepared)
            else:  # JOINT_NOT_PD: forces and trigger done; the reference leg update
                self.contacts = det.in_contact.copy()
                self.contact_source = "torque"
            return self._leg_step(prepared), None
        self.contacts = det.in_contact.copy()
        self.contact_source = "torque"
        mask = result & _MASK32
        stance = self._stance_by_mask.get(mask)
        if stance is None:
            stance = self._stance_by_mask[mask] = self._stance_of_mask(mask)
        stance_list, names, k, leg_slice, nis_slice = stance
        gate = self._gate
        nis = buf[nis_slice].tolist()
        slip_events = self.slip.update(stamp, stance_list, nis)
        if slip_events:
            self._events.extend(slip_events)
        if k:
            # the leg update's results, made when read (as BaseEkf.update_stance_feet leaves them)
            ekf._pending_results = self._leg_results = (names, buf[leg_slice], gate)
            if (result >> JOINT_ACCEPTED_SHIFT) & 0xFFFF < k:
                for i, e in zip(stance_list, nis):
                    if not (math.isfinite(e) and (gate <= 0.0 or e <= gate)):
                        self._event("foot_gated", f"foot {self.foot_frames[i]} rejected by the gate (NIS {e:.1f})",
                                    "info")  # fmt: skip
        else:
            self._leg_results = []
        feet = self._feet = _FeetOfKernelStep(self.foot_frames, buf, stance_list, gate)
        if result >> JOINT_NOT_FINITE_SHIFT:
            return feet, None
        return feet, buf[:OUTPUT_SIZE]

    def _stance_of_mask(self, mask: int) -> tuple[list[int], list[str], int, slice, slice]:
        """The feet in contact of a ``joint_step`` contact mask: indices, names, their number k, and where the leg
        update's output (13 k) and its NIS (the last k of it) are in the step's buffer."""
        stance_list = [i for i in range(len(self.foot_frames)) if mask >> i & 1]
        k = len(stance_list)
        o = self._leg_offset
        names = [self.foot_frames[i] for i in stance_list]
        return stance_list, names, k, slice(o, o + 13 * k), slice(o + 12 * k, o + 13 * k)

    def _rotation_step(self, stance_list: list[int], accepted: list[bool], qdot: FloatArray) -> None:
        """The orientation half of the flat feet's 6-D stance update (:mod:`.flat_feet`), after the 3-D one: the
        flat stance feet the 3-D gate accepted; a gated foot is reported as ``foot_gated`` (info)."""
        feet = [i for i, ok in zip(stance_list, accepted) if ok and self.flat_feet[i]]
        if not feet:
            self._rotation_results = []
            return
        es = self.ekf.settings
        names = [self.foot_frames[i] for i in feet]
        res = rotation_update(self.ekf, names, np.array(feet, dtype=np.int64), qdot, self.kin.J6_base_foot,
                              es.foot_angular_velocity_noise, es.encoder_velocity_noise, es.foot_gate_nis)  # fmt: skip
        self._rotation_results = res
        for r in res:
            if not r.accepted:
                self._event("foot_gated", f"foot {r.name} orientation rejected by the gate (NIS {r.nis:.1f})", "info")

    @property
    def last_rotation_results(self) -> list[UpdateResult]:
        """The orientation updates of the last joint step, one per flat stance foot the 3-D gate accepted
        (innovation (3,) rad/s in B, covariance, NIS, accepted); [] without flat feet."""
        return self._rotation_results

    def _leg_step(self, prepared: _PreparedJoints) -> _FeetOfStep:
        """The rest of :meth:`_apply_joints` after the contacts: the stance feet's leg update (and the static bias
        lock); returns the per-foot states (made when first read)."""
        ekf = self.ekf
        kin = self.kin
        s = self.settings.ekf
        stance_list: list[int] = []
        accepted: list[bool] = []
        nis: list[float] = []
        if prepared.qdot_valid:
            stance, stance_list, names, radii = self._stance_of(self.contacts)
            out = None
            if stance_list:
                # The compiled path: leg terms and update in one kernel; the results are made when read.
                out = ekf.update_stance_feet(names, self.contacts, prepared.qdot, self.foot_radii, kin.p_base_foot,
                                             kin.J6_base_foot, rolling=self._rolling)  # fmt: skip
            if out is not None:
                k = len(stance_list)
                gate = s.foot_gate_nis
                nis = out[12 * k :].tolist()
                accepted = [math.isfinite(e) and (gate <= 0.0 or e <= gate) for e in nis]
                self._leg_results = (names, out, gate)
            else:
                res: list[UpdateResult] = []
                if stance_list:
                    omega = ekf.omega_base_in_base
                    if self._rolling:
                        # Rolling spheres: the contact points c_i = r_i + d_i are at rest (kinematics docstring).
                        y, c, Jc, H_th = kin.rolling_contact_terms(
                            stance, prepared.qdot, omega, ekf.R_world_base, radii
                        )
                        res = ekf.update_leg_velocities(names, y, c, Jc, H_attitude=H_th)
                    else:
                        # v_B = -(J_i qdot) - omega x r_i for all stance feet at once.
                        y, r, J = kin.point_contact_terms(stance, prepared.qdot, omega)
                        res = ekf.update_leg_velocities(names, y, r, J)
                accepted = [bool(r.accepted) for r in res]
                nis = [float(r.nis) for r in res]
                self._leg_results = list(res)
            for i, ok in enumerate(accepted):
                if not ok:
                    name = self.foot_frames[stance_list[i]]
                    self._event("foot_gated", f"foot {name} rejected by the gate (NIS {nis[i]:.1f})", "info")
            slip_events = self.slip.update(prepared.stamp_ns, stance_list, nis)
            if slip_events:
                self._events.extend(slip_events)
            if self._any_flat:
                self._rotation_step(stance_list, accepted, prepared.qdot)
            if (
                s.static_bias_lock
                and self.contacts.all()
                and float(np.linalg.norm(ekf.omega_base_in_base)) < s.static_gyro_threshold_rad_s
                and float(np.max(np.abs(prepared.qdot))) < s.static_joint_velocity_threshold_rad_s
            ):
                ekf.update([ekf.zero_rate_measurement()], gate_nis=0.0)
        # One copy of the force arrays per step; each foot gets its row (a view of that copy) when read.
        feet = _FeetOfStep(
            self.foot_frames,
            self.contacts,
            self.forces.force_in_world.copy(),
            self.forces.wrench_in_foot.copy(),
            stance_list,
            accepted,
            nis,
        )
        self._feet = feet
        return feet
