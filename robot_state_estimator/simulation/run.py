"""The result of a simulation: every quantity at the sample stamps, with exact ground truth."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.simulation.settings import SimulationSettings

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class WholeBodyTrajectory:
    """A generated whole-body motion at the ``n`` samples of the time grid, before the sensors (steps 2-6 of
    :mod:`~robot_state_estimator.simulation.generator`): what ``sensor_sampling.sensor_run`` turns into a
    :class:`SimulatedRun` (the fields of the same meaning there say the units and frames).

    Attributes:
        q: (n, nq) configurations; v: (n, nv) velocities; a: (n, nv) accelerations (pinocchio layout).
        tau: (n, nj) N m joint torques; res: (n, 6) the base residual wrench (``SimulatedRun.base_residual_wrench``).
        f: (n, nf, 3) N contact forces (world axes); w_foot: (n, nf, 6) contact wrenches in the foot frames.
        violations, unilateral, unbalanced: counts as ``SimulatedRun.friction_violations``,
            ``unilateral_samples``, ``unbalanced_samples``.
        foot_p: (n, nf, 3) m foot frame origins in W.
        contact, slipping: (n, nf) bool.
    """

    q: FloatArray
    v: FloatArray
    a: FloatArray
    tau: FloatArray
    res: FloatArray
    f: FloatArray
    w_foot: FloatArray
    violations: int
    unilateral: int
    unbalanced: int
    foot_p: FloatArray
    contact: NDArray[np.bool_]
    slipping: NDArray[np.bool_]


@dataclass
class SimulatedRun:
    """A generated run. Ground truth lives on the common time grid ``stamps_ns`` (the union of the IMU and
    joint stamps); the sensor outputs live on their own stamps (``imu_index``/``joint_index`` point into the grid).

    Frames: world ``W`` = ``odom`` (ENU, feet on z = 0 at the start, base at the origin), base ``B``, IMU ``S``.

    Attributes:
        settings: the settings that produced the run.
        robot: short robot name.
        base_link: base link name (``child_frame_id`` of the ground-truth odometry).
        joint_names: (nj,) actuated joints in pinocchio order.
        feet: (nf,) foot frame names.
        imu: the IMU spec used (frame, noise).
        description_xml: the robot description text (without the foot spheres for a point-foot run, so its
            ``RobotDescription.foot_radius`` are the radii simulated).
        foot_model: ``"sphere"`` or ``"point"`` (the resolved ``settings.foot_model``).
        foot_radii: (nf,) m, the radius of each foot as simulated (0 for point feet).
        stamps_ns: (n,) int64 absolute stamps (ns).
        q: (n, nq) pinocchio configuration ``[p_world_base, quat_world_base xyzw, joints]``.
        v: (n, nv) ``[v_base_in_base (m/s), omega_base_in_base (rad/s), qdot]``.
        a: (n, nv) ``dv/dt``.
        tau: (n, nj) joint torques (N m), ``tau = M a + h - J_c^T f_c`` on the actuated rows (noise-free).
        base_residual_wrench: (n, 6) unactuated rows of ``M a + h - J_c^T f_c`` (force N, torque N m, base
            frame): zero (to rounding) when the contact forces balance the base exactly; non-zero where no
            pushing contact forces can (moments about the line of two point feet in a trot; in a walk, a base
            acceleration whose zero-moment point leaves the support polygon, which only pulling feet could give).
        contact: (n, nf) bool, foot in contact with the ground (also while slipping).
        slipping: (n, nf) bool, foot sliding while in contact.
        foot_positions_world: (n, nf, 3) m, foot frame origins in W (the sphere centres of spherical feet).
        contact_points_world: (n, nf, 3) m, the lowest points of the feet in W: ``foot_positions_world - rho e_z``
            (on the ground, z = 0, in stance; the body point there is at rest unless the foot slips).
        contact_forces_world: (n, nf, 3) N, ground reaction force on each foot, world axes, acting at the contact
            point (0 in swing).
        contact_wrenches_in_foot: (n, nf, 6) [force N, torque N m] in the foot frame about its origin: force
            ``R_world_foot^T f``, torque ``R_world_foot^T ((-rho e_z) x f)`` (0 for point feet).
        friction_violations: number of (sample, foot) pairs in stance whose force leaves the friction cone,
            ``hypot(f_x, f_y) > mu f_z`` (``settings.friction_coefficient``); normal forces never pull
            (``f_z >= 0``).
        unilateral_samples: number of samples where the least-squares forces closest to an equal share of the
            weight would have pulled a foot, so the forces were found with ``f_z >= 0`` bounds instead
            (:func:`~robot_state_estimator.simulation.contact_forces.unilateral_forces`).
        unbalanced_samples: number of samples whose ``base_residual_wrench`` is above rounding (force norm
            above 1e-6 times the weight, or torque norm above 1e-6 times the weight times 1 m): the stance feet
            cannot give the base wrench the motion needs (two point feet, or the zero-moment point outside the
            support polygon).
        imu_index: (m,) indices of the IMU samples into ``stamps_ns``.
        imu_omega: (m, 3) rad/s gyroscope in S (noisy when ``settings.noise``).
        imu_f: (m, 3) m/s^2 accelerometer in S.
        imu_omega_ideal, imu_f_ideal: (m, 3) the same without noise.
        imu_quat_xyzw: (m, 4) orientation of S in its reference frame (NaN rows when not reported).
        imu_gyro_bias, imu_accel_bias: (3,) biases drawn for the run (initial value when a dynamic bias runs).
        imu_accel_bias_walk: (m, 3) m/s^2, the accelerometer bias walk at the IMU samples
            (``settings.imu_accel_bias_walk``; zeros when off): the accelerometer bias at IMU sample k is
            ``imu_accel_bias + imu_accel_bias_walk[k]`` when the description's noise has no dynamic bias.
        imu_covariances: dict of (9,) arrays ``orientation``, ``angular_velocity``, ``linear_acceleration``.
        joint_index: (k,) indices of the joint samples into ``stamps_ns``.
        joint_position: (k, nj) rad (noisy when ``settings.noise``); joint_velocity: (k, nj) rad/s;
        joint_effort: (k, nj) N m.
    """

    settings: SimulationSettings
    robot: str
    base_link: str
    joint_names: tuple[str, ...]
    feet: tuple[str, ...]
    imu: ImuSpec
    description_xml: str
    foot_model: str
    foot_radii: FloatArray
    stamps_ns: NDArray[np.int64]
    q: FloatArray
    v: FloatArray
    a: FloatArray
    tau: FloatArray
    base_residual_wrench: FloatArray
    contact: NDArray[np.bool_]
    slipping: NDArray[np.bool_]
    foot_positions_world: FloatArray
    contact_points_world: FloatArray
    contact_forces_world: FloatArray
    contact_wrenches_in_foot: FloatArray
    friction_violations: int
    unilateral_samples: int
    unbalanced_samples: int
    imu_index: NDArray[np.int64]
    imu_omega: FloatArray
    imu_f: FloatArray
    imu_omega_ideal: FloatArray
    imu_f_ideal: FloatArray
    imu_quat_xyzw: FloatArray
    imu_gyro_bias: FloatArray
    imu_accel_bias: FloatArray
    imu_accel_bias_walk: FloatArray
    imu_covariances: dict[str, FloatArray]
    joint_index: NDArray[np.int64]
    joint_position: FloatArray
    joint_velocity: FloatArray
    joint_effort: FloatArray

    # ------------------------------------------------------------------ ground truth views (n rows each)
    @property
    def t_s(self) -> FloatArray:
        """(n,) s since the first stamp of the run (``settings.start_stamp_ns``)."""
        return (self.stamps_ns - self.settings.start_stamp_ns) / 1e9

    @property
    def p_world_base(self) -> FloatArray:
        """(n, 3) m base position in W."""
        return self.q[:, :3]

    @property
    def quat_world_base_xyzw(self) -> FloatArray:
        """(n, 4) base orientation in W, ``x y z w``."""
        return self.q[:, 3:7]

    @property
    def v_base_in_base(self) -> FloatArray:
        """(n, 3) m/s base linear velocity in B."""
        return self.v[:, :3]

    @property
    def omega_base_in_base(self) -> FloatArray:
        """(n, 3) rad/s base angular velocity in B."""
        return self.v[:, 3:6]

    @property
    def imu_stamps_ns(self) -> NDArray[np.int64]:
        """(m,) IMU sample stamps (ns)."""
        return self.stamps_ns[self.imu_index]

    @property
    def joint_stamps_ns(self) -> NDArray[np.int64]:
        """(k,) joint sample stamps (ns)."""
        return self.stamps_ns[self.joint_index]
