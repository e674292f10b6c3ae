"""Which feet are in contact at a joint sample: the contact source in use and its detectors.

Sources (``contact.source``): ``torque`` (the foot forces estimated from the joint efforts, :mod:`.contact`),
``foot_sensor`` (foot contact sensors: forces or raw counts), foot wrench sensors (:mod:`.contact_inputs`; they
replace the torque estimate of the forces when fresh), ``schedule`` (a controller's contact schedule, compared with
the measured forces), ``kinematic`` (foot heights and speeds; the fallback without efforts or foot sensors), and
``auto``: foot wrenches when they stream, else foot sensors, else torques when the joint message has efforts, else
kinematic. Each source has its Schmitt trigger with debounce (:class:`~.contact.ContactDetector`). Also here: which
feet carry load before the filter is initialised (:mod:`.initial_support`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.samples import FootForceSample
from robot_state_estimator.estimation.contact import (
    ContactDetector,
    ContactForceEstimator,
    kinematic_clearance,
    kinematic_contact_score,
    kinematic_foot_speed,
)
from robot_state_estimator.estimation.contact_inputs import ContactSchedule, FootWrenches
from robot_state_estimator.estimation.ekf.backends import Backend
from robot_state_estimator.estimation.ekf.filter import BaseEkf
from robot_state_estimator.estimation.ekf.numerics import cross3
from robot_state_estimator.estimation.events import EventLog
from robot_state_estimator.estimation.initial_support import InitialSupport, initial_support
from robot_state_estimator.estimation.joint_input import PreparedJoints
from robot_state_estimator.estimation.kinematics import LegKinematics
from robot_state_estimator.estimation.settings import ContactSettings

FloatArray = NDArray[np.float64]

_NS = 1_000_000_000


class ContactSource:
    """The contact source and its detectors (module docstring).

    Args:
        kin: the leg kinematics. forces: the foot force estimator. ekf: the filter (attitude, rates).
        settings: the contact settings. radii: (n_feet,) m, the foot sphere radii in use.
        backend: the numerics. events: the estimator's event log.

    Attributes:
        torque_detector, sensor_detector, wrench_detector, kinematic_detector: the triggers of the sources.
        foot_wrenches: the foot wrench samples. schedule: the contact schedule samples.
        contacts: (n_feet,) bool, the contacts of the last joint step. source: the source they came from.
        forces_estimated: whether the foot forces of the last joint step were estimated (from joint torques) or
            measured (fresh foot wrenches); False otherwise: the forces are then zeros, not a measurement.
        stale_wrench_feet: the feet whose wrench sensor was not fresh at the last joint step while others were.
    """

    def __init__(
        self,
        kin: LegKinematics,
        forces: ContactForceEstimator,
        ekf: BaseEkf,
        settings: ContactSettings,
        radii: FloatArray,
        backend: Backend,
        events: EventLog,
    ) -> None:
        self.kin, self.forces, self.ekf, self.settings = kin, forces, ekf, settings
        self._radii = radii
        self._events = events
        cs = settings
        n_feet = kin.n_feet
        scale = forces.weight_n / n_feet if cs.threshold_mode == "weight_relative" else 1.0

        def detector(on_threshold: float, off_threshold: float) -> ContactDetector:
            return ContactDetector(
                n_feet,
                on_threshold=on_threshold,
                off_threshold=off_threshold,
                min_on_duration_s=cs.min_on_duration_s,
                min_off_duration_s=cs.min_off_duration_s,
                backend=backend,
            )

        self.torque_detector = detector(cs.on_threshold * scale, cs.off_threshold * scale)
        self.sensor_detector = detector(cs.sensor_on_threshold, cs.sensor_off_threshold)
        # foot wrench sensors: the vertical force in N, the force thresholds (contact_inputs module docstring)
        self.wrench_detector = detector(cs.on_threshold * scale, cs.off_threshold * scale)
        self.foot_wrenches = FootWrenches(kin.model, kin.foot_frames)
        self.schedule = ContactSchedule(
            kin.foot_frames, timeout_s=cs.schedule_timeout_s, disagreement_s=cs.schedule_disagreement_s
        )
        # fed -kinematic_contact_score: on below 0 (low and still), off above 1 (high or moving)
        self.kinematic_detector = detector(0.0, -1.0)
        self._foot_index = {name: i for i, name in enumerate(kin.foot_frames)}
        self._all_feet = np.arange(n_feet)
        self._kinematic_reported = False  # contacts_from_kinematics is reported once per estimator
        self.foot_sensor_values = np.full(n_feet, np.nan)
        self.contacts = np.zeros(n_feet, dtype=bool)
        self.source = "none"
        self.forces_estimated = False
        self.reset()

    def reset(self) -> None:
        """Forget the detectors' states and the foot inputs (not the last contacts)."""
        self.torque_detector.reset()
        self.sensor_detector.reset()
        self.kinematic_detector.reset()
        self.wrench_detector.reset()
        self.foot_wrenches.clear()
        self.schedule.clear()
        self.stale_wrench_feet: tuple[str, ...] = ()
        self.foot_sensor_stamp_ns: int | None = None
        self.forces.forget_joint_velocities()

    def add_foot_forces(self, sample: FootForceSample) -> None:
        """Store foot sensor readings (matched by foot frame name); refused with an event: ``foot_force_shape``,
        ``foot_force_nan``, ``unknown_foot``."""
        values = np.asarray(sample.values, dtype=float)
        if values.shape != (len(sample.feet),):
            self._events.emit(
                "foot_force_shape", f"foot force values {values.shape} for {len(sample.feet)} feet; skipped"
            )
            return
        if not np.isfinite(values).all():
            self._events.emit("foot_force_nan", "foot force sample has NaN/Inf; skipped")
            return
        unknown = [f for f in sample.feet if f not in self._foot_index]
        if unknown:
            self._events.emit("unknown_foot", f"unknown foot name(s) {unknown}; skipped")
            return
        for name, value in zip(sample.feet, values):
            self.foot_sensor_values[self._foot_index[name]] = value
        self.foot_sensor_stamp_ns = int(sample.stamp_ns)

    def sensors_streaming(self) -> bool:
        """Whether foot sensors or foot wrenches have been seen (``auto`` then prefers them to the torques)."""
        return self.foot_sensor_stamp_ns is not None or self.foot_wrenches.started

    def torque_step_applies(self, auto: bool) -> bool:
        """Whether a joint step may take the torque source in one call: its trigger is past its first sample and,
        with ``auto``, no foot sensor nor wrench streams."""
        return self.torque_detector._started and not (
            auto and (self.foot_sensor_stamp_ns is not None or self.foot_wrenches.started)  # sensors_streaming()
        )

    def _sensor_fresh(self, stamp: int) -> bool:
        """Foot sensor values within ``contact.foot_sensor_timeout_s`` of ``stamp``, all finite."""
        return (
            self.foot_sensor_stamp_ns is not None
            and abs(stamp - self.foot_sensor_stamp_ns) <= self.settings.foot_sensor_timeout_s * _NS
            and bool(np.isfinite(self.foot_sensor_values).all())
        )

    def _wrenches_fresh(self, stamp: int) -> bool:
        """Whether every foot's wrench sample is within ``contact.foot_sensor_timeout_s`` of the joint stamp; a
        change of the set of stale feet (while wrenches stream) is reported (``foot_wrench_stale``, naming them)."""
        fw = self.foot_wrenches
        if not fw.started:
            return False
        stale = fw.stale_feet(stamp, round(self.settings.foot_sensor_timeout_s * _NS))
        names = tuple(self.kin.foot_frames[i] for i in stale)
        if names != self.stale_wrench_feet:
            self.stale_wrench_feet = names
            if names:
                self._events.emit(
                    "foot_wrench_stale",
                    f"no foot wrench within contact.foot_sensor_timeout_s={self.settings.foot_sensor_timeout_s}"
                    f" s of the joint stamp for {list(names)} (their topics stopped?): contacts from another source",
                )
        return not names

    def select(self, prepared: PreparedJoints) -> None:
        """Run the contact source in use for a joint sample (after the kinematics' update): sets ``contacts``,
        ``source``, ``forces_estimated`` and the forces."""
        cs = self.settings
        stamp = prepared.stamp_ns
        sensor_fresh = self._sensor_fresh(stamp)
        wrench_fresh = self._wrenches_fresh(stamp)
        have_tau = prepared.tau is not None
        use_wrenches = wrench_fresh and cs.source != "torque"  # the foot wrenches replace the torque estimate (below)
        self.forces_estimated = have_tau or use_wrenches  # estimated from torques, or measured by foot wrenches
        forces = self.forces
        ekf = self.ekf
        if (
            prepared.tau is not None
            and not (cs.use_full_dynamics and prepared.qdot_valid and prepared.qdot_measured)
            and (cs.source == "torque" or (cs.source == "auto" and not sensor_fresh and not wrench_fresh))
            and forces.estimate_and_trigger(prepared.tau, ekf.R_world_base, self.torque_detector, stamp)
        ):
            # the torque source in one call: forces (g(q)), then the trigger on their vertical components
            forces.forget_joint_velocities()
            self.contacts = self.torque_detector.in_contact.copy()
            self.source = "torque"
            return
        if have_tau:
            assert prepared.tau is not None
            self._estimate_forces(prepared)
        else:
            forces.force_in_world[:] = 0.0
            forces.wrench_in_foot[:] = 0.0
        if use_wrenches:  # not with the torque source: its one-call path publishes the torque estimate, so does this
            self.foot_wrenches.in_foot_frames(
                self.kin.data, self.kin.X_base_foot, ekf.R_world_base, forces.wrench_in_foot, forces.force_in_world
            )
        source = cs.source
        if source == "schedule":
            if self._follow_schedule(stamp, wrench_fresh, have_tau):
                return
            source = "torque" if have_tau else "kinematic"
        elif source == "auto":
            fallback = "torque" if have_tau else "kinematic"
            source = "foot_wrench" if wrench_fresh else "foot_sensor" if sensor_fresh else fallback
        elif source == "foot_sensor" and wrench_fresh:
            source = "foot_wrench"
        elif (source == "foot_sensor" and not sensor_fresh) or (source == "torque" and not have_tau):
            self._events.emit(
                "contact_source_unavailable", f"contact source {source!r} has no data; kinematic fallback"
            )
            source = "kinematic"
        self._trigger(source, stamp, prepared)
        self.source = source

    def _estimate_forces(self, prepared: PreparedJoints) -> None:
        """The foot forces from the joint efforts: with ``contact.use_full_dynamics`` and the message's joint
        velocities the bias torques are ``M a + h`` of the base's and the joints' motion (the joint accelerations:
        the backward difference of the velocities), else ``g(q)``."""
        assert prepared.tau is not None
        ekf = self.ekf
        forces = self.forces
        v = a = None
        if self.settings.use_full_dynamics and prepared.qdot_valid and prepared.qdot_measured:
            v = np.concatenate([ekf.v_base_in_base, ekf.omega_base_in_base, prepared.qdot])
            a_lin = ekf.f_base_in_base + ekf.R_world_base.T @ ekf.g_world
            a_lin = a_lin - cross3(ekf.omega_base_in_base, ekf.v_base_in_base)
            qddot = forces.joint_acceleration(prepared.stamp_ns, prepared.qdot)
            a = np.concatenate([a_lin, ekf.alpha_base_in_base, qddot])
        else:
            forces.forget_joint_velocities()
        forces.estimate(prepared.q, prepared.tau, ekf.R_world_base, v=v, a=a)

    def _trigger(self, source: str, stamp: int, prepared: PreparedJoints) -> None:
        """The contacts from ``source``'s trigger."""
        fz = self.forces.force_in_world[:, 2]
        if source == "foot_wrench":
            self.contacts = self.wrench_detector.update(stamp, fz)
        elif source == "foot_sensor":
            self.contacts = self.sensor_detector.update(stamp, self.foot_sensor_values)
        elif source == "torque":
            self.contacts = self.torque_detector.update(stamp, fz)
        else:
            self.contacts = self.kinematic_detector.update(stamp, -self._kinematic_score(prepared))
            if not self._kinematic_reported:
                self._kinematic_reported = True
                self._events.emit(
                    "contacts_from_kinematics",
                    "contacts come from the foot heights and speeds (no joint efforts, no foot sensors): unreliable "
                    "for gaits with low foot clearance (a swing foot taken for a stance foot corrupts the estimate); "
                    "publish joint efforts or foot sensors (README, 'Kinematic contacts')",
                    "warn",
                )

    def _follow_schedule(self, stamp: int, wrench_fresh: bool, have_tau: bool) -> bool:
        """The schedule's contacts at ``stamp`` (compared with the measured forces' trigger); False when it is
        stale (reported: ``contact_source_unavailable``; the caller falls back to the torques or the kinematics)."""
        cs = self.settings
        schedule, age_ns = self.schedule.at(stamp)
        if schedule is not None:
            self.contacts = schedule.copy()
            self.source = "schedule"
            fz = self.forces.force_in_world[:, 2]
            measured = None
            if wrench_fresh:
                measured = self.wrench_detector.update(stamp, fz)
            elif have_tau:
                measured = self.torque_detector.update(stamp, fz)
            if measured is not None:
                for i in self.schedule.compare(stamp, schedule, measured):
                    self._events.emit(
                        "contact_schedule_disagrees",
                        f"foot {self.kin.foot_frames[i]}: the contact schedule says "
                        f"{'stance' if schedule[i] else 'swing'} but the measured force ({float(fz[i]):.1f} N "
                        f"vertical) says {'contact' if measured[i] else 'no contact'} for {cs.schedule_disagreement_s}"
                        " s or more; the schedule is used",
                    )
            return True
        why = "none received" if not self.schedule.started else (
            "none stamped at or before the joint stamp" if age_ns is None
            else f"the latest at or before the joint stamp is {age_ns / 1e6:.1f} ms old"
        )  # fmt: skip
        self._events.emit(
            "contact_source_unavailable",
            f"contact schedule stale ({why}; contact.schedule_timeout_s={cs.schedule_timeout_s} s): "
            f"contacts from {'the joint torques' if have_tau else 'the kinematics'}",
        )
        return False

    def _kinematic_score(self, prepared: PreparedJoints) -> FloatArray:
        """(n_feet,) :func:`~robot_state_estimator.estimation.contact.kinematic_contact_score` of the last joint
        sample: heights above the lowest foot (filter attitude) and, with valid joint velocities and an initialised
        filter, the contact points' speeds relative to the lowest foot's (leg odometry; not the filter's base
        velocity)."""
        cs = self.settings
        ekf = self.ekf
        clearance = kinematic_clearance(self.kin.p_base_foot, ekf.R_world_base)
        speed = None
        if prepared.qdot_valid and ekf.initialized:
            v_feet = self.kin.rolling_contact_terms(
                self._all_feet, prepared.qdot, ekf.omega_base_in_base, ekf.R_world_base, self._radii
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

    def initial_support(
        self,
        stamp: int | None,
        R_world_base: FloatArray,
        q_joints: FloatArray,
        qdot_joints: FloatArray | None,
        tau_joints: FloatArray | None,
    ) -> InitialSupport:
        """The loaded feet at the last joint sample (``stamp``; :mod:`.initial_support`): from the foot wrenches or
        the schedule when they apply, else the sources ``auto`` would use."""
        cs = self.settings
        sensor_fresh = stamp is not None and self._sensor_fresh(stamp)
        if stamp is not None:
            other = self._support_from_inputs(stamp, R_world_base, q_joints)
            if other is not None:
                return other
            if cs.source == "schedule":  # no fresh schedule: the sources auto would use
                cs = dataclasses.replace(cs, source="auto")
        return initial_support(
            cs,
            sensor_values=self.foot_sensor_values,
            sensor_fresh=sensor_fresh,
            tau_joints=tau_joints,
            q_joints=q_joints,
            qdot_joints=qdot_joints,
            forces=self.forces,
            torque_on_threshold_n=self.torque_detector.on_threshold,
            R_world_base=R_world_base,
        )

    def _support_from_inputs(self, stamp: int, R_world_base: FloatArray, q_joints: FloatArray) -> InitialSupport | None:
        """The loaded feet from the foot wrench sensors (every foot fresh; ``auto`` / ``foot_sensor``: the vertical
        force above the force trigger's on threshold) or the contact schedule (``schedule``: its stance feet), at
        the last joint sample; None when neither applies."""
        cs = self.settings
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
        kin.update(q_joints)
        n = kin.n_feet
        wrench, force = np.zeros((n, 6)), np.zeros((n, 3))
        fw.in_foot_frames(kin.data, kin.X_base_foot, R_world_base, wrench, force)
        threshold = self.wrench_detector.on_threshold
        return InitialSupport(force[:, 2] >= threshold, "foot_wrench", force[:, 2].copy(), threshold)
