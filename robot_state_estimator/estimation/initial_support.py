"""Which feet carry the robot when the filter initialises (the height comes from those feet only).

A robot held in the air (no foot loaded, IMU still) must not initialise: its feet hang below where the ground will
be, and a height taken from them is off by however far the legs hang (6 cm for a Go1 lifted by its handle) once it
is put down; the filter has no measurement to undo that offset (height is observed only through the stance feet,
relative to where they were). So the initialisation (static or, after ``ekf.init_timeout_s``, moving) waits until
at least one foot is loaded, and the initial height puts only the loaded feet's contact points on z = 0.

"Loaded" follows the contact source the estimator would use (``contact.source``; ``auto``: foot sensors when they
stream, else joint torques when the joint message has efforts, else kinematics):

- foot sensors: the reading is above ``contact.sensor_on_threshold``;
- joint torques: the normal force estimated from them (``ContactForceEstimator``, with the attitude from the
  averaged specific force) is above the torque trigger's on threshold;
- kinematics (no forces at all): the lowest feet (within ``contact.kinematic_on_height_m`` of the lowest) whose
  contact points are still relative to the base (``|J_c qdot|`` below ``contact.kinematic_on_speed_m_s``; the base
  is static in a static window). Kinematics cannot tell a robot held still in the air from a standing one: with
  neither efforts nor foot sensors the lifted start stays wrong by the legs' hang (documented, README).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.estimation.contact import ContactForceEstimator, kinematic_clearance
from robot_state_estimator.estimation.settings import ContactSettings

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class InitialSupport:
    """The loaded feet at initialisation.

    Attributes:
        loaded: (n_feet,) bool, feet that carry the robot (all False: wait).
        source: ``foot_sensor``, ``torque`` or ``kinematic``: what decided (the pipeline adds ``foot_wrench``: the
            wrench sensors' vertical force against the force trigger's on threshold, and ``schedule``: the contact
            schedule's stance feet).
        values: (n_feet,) what was compared with the threshold (sensor reading, normal force in N, or the foot
            speed in m/s for kinematics), for the message.
        threshold: the threshold used (same unit).
    """

    loaded: BoolArray
    source: str
    values: FloatArray
    threshold: float

    @property
    def any_loaded(self) -> bool:
        """At least one foot is loaded: the filter may initialise."""
        return bool(self.loaded.any())

    def describe(self, foot_frames: tuple[str, ...]) -> str:
        """``FR_foot, FL_foot (torque)``: the loaded feet and the source, for events."""
        names = [f for f, on in zip(foot_frames, self.loaded.tolist()) if on]
        return f"{', '.join(names) if names else 'none'} ({self.source})"


def initial_support(
    contact: ContactSettings,
    *,
    sensor_values: FloatArray | None,
    sensor_fresh: bool,
    tau_joints: FloatArray | None,
    q_joints: FloatArray,
    qdot_joints: FloatArray | None,
    forces: ContactForceEstimator,
    torque_on_threshold_n: float,
    R_world_base: FloatArray,
) -> InitialSupport:
    """The feet loaded at the last joint sample (module docstring for the rules).

    Args:
        contact: contact settings (source and thresholds).
        sensor_values: (n_feet,) last foot sensor readings, or None.
        sensor_fresh: whether those readings are recent (``contact.foot_sensor_timeout_s``).
        tau_joints: (n_joints,) N m, efforts of the last joint sample in pinocchio order, or None.
        q_joints: (n_joints,) rad, positions of the last joint sample (the force estimator's ``LegKinematics`` is
            updated at them here).
        qdot_joints: (n_joints,) rad/s, its velocities when valid, else None.
        forces: the estimator's contact force model (gravity compensation; its kinematics are updated).
        torque_on_threshold_n: N, the torque trigger's on threshold (absolute, weight share applied).
        R_world_base: (3, 3) attitude from the averaged specific force (yaw irrelevant).

    Returns:
        The :class:`InitialSupport`.
    """
    source = contact.source
    if source == "auto":
        source = "foot_sensor" if sensor_fresh else ("torque" if tau_joints is not None else "kinematic")
    elif (source == "foot_sensor" and not sensor_fresh) or (source == "torque" and tau_joints is None):
        source = "kinematic"
    kin = forces.kin
    kin.update(q_joints)
    if source == "foot_sensor":
        assert sensor_values is not None
        values = np.asarray(sensor_values, dtype=float)
        return InitialSupport(values >= contact.sensor_on_threshold, source, values, contact.sensor_on_threshold)
    if source == "torque":
        assert tau_joints is not None
        f_world, _ = forces.estimate(q_joints, tau_joints, R_world_base)
        values = np.array(f_world[:, 2], dtype=float)
        return InitialSupport(values >= torque_on_threshold_n, source, values, torque_on_threshold_n)
    low = kinematic_clearance(kin.p_base_foot, R_world_base) <= contact.kinematic_on_height_m
    speed = np.zeros(len(low))
    if qdot_joints is not None:
        speed = np.linalg.norm(np.asarray(kin.J_base_foot) @ np.asarray(qdot_joints, dtype=float), axis=1)
    on_speed = contact.kinematic_on_speed_m_s
    return InitialSupport(low & (speed <= on_speed), source, speed, on_speed)
