"""Step 7 of the generators: the sensors of a generated whole-body trajectory, and the :class:`SimulatedRun`.

- IMU at its stamps: the ideal readings of the description's IMU from ``(q, v, a)`` (specific force and angular
  velocity in the sensor frame, orientation in its reference frame), then its gz-sensors noise (bias drawn once,
  white noise, Gauss-Markov dynamic bias, precision), all by :class:`~robot_state_estimator.sensors.ImuModel`;
  optionally a white vibration noise on top (``settings.imu_vibration_*``), a random walk of the accelerometer
  bias (``settings.imu_accel_bias_walk``) and a gyroscope turn-on offset (``settings.imu_gyro_turn_on_bias_rad_s``).
- Joints at their stamps: position, velocity and torque (``tau``, noise-free from the inverse dynamics), with
  white encoder, velocity and torque noise (``settings.noise``) and encoder quantisation
  (``settings.encoder_resolution_rad``, ``step * round(q / step)``).

Random draws, each from its own child of the run's seed sequence (``SeedSequence(seed).spawn``): ``rng_imu`` (child
1: the IMU model), ``rng_joints`` (child 2: the joints), the vibration (child 5; child 0 jitters the stamps, child 4
draws the random slips), the accelerometer bias walk (child 6), the gyroscope turn-on offset (child 7), so switching
one error on or off leaves the other draws unchanged. Shared by the quadruped (:mod:`.generator`) and biped
(:mod:`.biped`) generators.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.sensors.imu_model import ImuModel
from robot_state_estimator.simulation.robots import SimRobot, imu_at_rate
from robot_state_estimator.simulation.run import SimulatedRun, WholeBodyTrajectory
from robot_state_estimator.simulation.settings import SimulationSettings
from robot_state_estimator.simulation.stamps import TimeGrid

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class ImuReadings:
    """The IMU of a run at its ``m`` stamps (the fields of :class:`SimulatedRun` named ``imu_*``)."""

    omega: FloatArray
    f: FloatArray
    omega_ideal: FloatArray
    f_ideal: FloatArray
    quat_xyzw: FloatArray
    gyro_bias: FloatArray
    accel_bias: FloatArray
    accel_bias_walk: FloatArray
    covariances: dict[str, FloatArray]


def accel_bias_walk(settings: SimulationSettings, grid: TimeGrid) -> FloatArray:
    """(m, 3) m/s^2, the accelerometer bias walk at the IMU stamps (``settings.imu_accel_bias_walk``: 0 at the first
    stamp, increments ``N(0, q^2 dt)`` per axis between stamps ``dt`` apart; seed child 6)."""
    rng = np.random.default_rng(np.random.SeedSequence(settings.seed).spawn(7)[6])  # (spawn key 6)
    dts = np.diff(grid.imu_rel, prepend=grid.imu_rel[0]) / 1e9
    steps = rng.normal(size=(len(dts), 3)) * (settings.imu_accel_bias_walk * np.sqrt(dts))[:, None]
    walk: FloatArray = np.cumsum(steps, axis=0)
    return walk


def gyro_turn_on_offset(settings: SimulationSettings) -> FloatArray:
    """(3,) rad/s, the gyroscope offset drawn once for the run: ``N(0, s^2)`` per axis, ``s`` =
    ``settings.imu_gyro_turn_on_bias_rad_s`` (seed child 7)."""
    rng = np.random.default_rng(np.random.SeedSequence(settings.seed).spawn(8)[7])  # (spawn key 7)
    offset: FloatArray = rng.normal(0.0, settings.imu_gyro_turn_on_bias_rad_s, 3)
    return offset


def imu_readings(
    settings: SimulationSettings, robot: SimRobot, wb: WholeBodyTrajectory, grid: TimeGrid, rng: np.random.Generator
) -> ImuReadings:
    """The IMU readings of ``wb`` at ``grid.imu_index`` (module docstring); biases zero without noise."""
    q, v, a = wb.q, wb.v, wb.a
    idx = grid.imu_index
    imu_model = ImuModel(robot.imu, robot.model, heading_rad=settings.heading_rad, rng=rng)
    imu_model.set_reference(q[0])
    omega_ideal, f_ideal, quat = imu_model.ideal_series(q[idx], v[idx], a[idx])
    gyro_bias0, accel_bias0 = imu_model.noise.gyro_bias, imu_model.noise.accel_bias
    if settings.noise:
        dts = np.diff(grid.imu_rel, prepend=grid.imu_rel[0]) / 1e9
        omega, f_meas = imu_model.noise.apply_series(omega_ideal, f_ideal, dts)
    else:
        omega, f_meas = omega_ideal.copy(), f_ideal.copy()
        gyro_bias0 = np.zeros(3)
        accel_bias0 = np.zeros(3)
    if settings.imu_vibration_accel_m_s2 > 0.0 or settings.imu_vibration_gyro_rad_s > 0.0:
        rng_vib = np.random.default_rng(np.random.SeedSequence(settings.seed).spawn(6)[5])  # (spawn key 5)
        omega = omega + rng_vib.normal(0.0, settings.imu_vibration_gyro_rad_s, omega.shape)
        f_meas = f_meas + rng_vib.normal(0.0, settings.imu_vibration_accel_m_s2, f_meas.shape)
    walk = np.zeros_like(f_meas)
    if settings.imu_accel_bias_walk > 0.0:
        walk = accel_bias_walk(settings, grid)
        f_meas = f_meas + walk
    if settings.imu_gyro_turn_on_bias_rad_s > 0.0:
        offset = gyro_turn_on_offset(settings)
        omega = omega + offset
        gyro_bias0 = gyro_bias0 + offset
    cov = imu_model.covariances()
    return ImuReadings(
        omega=omega,
        f=f_meas,
        omega_ideal=omega_ideal,
        f_ideal=f_ideal,
        quat_xyzw=quat,
        gyro_bias=gyro_bias0,
        accel_bias=accel_bias0,
        accel_bias_walk=walk,
        covariances={
            "orientation": cov.orientation,
            "angular_velocity": cov.angular_velocity,
            "linear_acceleration": cov.linear_acceleration,
        },
    )


def joint_readings(
    settings: SimulationSettings, wb: WholeBodyTrajectory, joint_index: NDArray[np.int64], rng: np.random.Generator
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Joint positions (rad), velocities (rad/s) and efforts (N m), (k, nj) each, of ``wb`` at ``joint_index``
    (module docstring)."""
    qj = wb.q[joint_index, 7:].copy()
    vj = wb.v[joint_index, 6:].copy()
    ej = wb.tau[joint_index].copy()
    if settings.noise:
        qj += rng.normal(0.0, settings.encoder_noise_rad, qj.shape)
        vj += rng.normal(0.0, settings.joint_velocity_noise_rad_s, vj.shape)
        ej += rng.normal(0.0, settings.torque_noise_nm, ej.shape)
    if settings.encoder_resolution_rad > 0.0:
        qj = settings.encoder_resolution_rad * np.round(qj / settings.encoder_resolution_rad)
    return qj, vj, ej


def sensor_run(
    settings: SimulationSettings,
    robot: SimRobot,
    wb: WholeBodyTrajectory,
    grid: TimeGrid,
    rngs: tuple[np.random.Generator, np.random.Generator],
    rho: FloatArray,
    description_xml: str,
) -> SimulatedRun:
    """The sensors of a generated whole-body trajectory ``wb`` and the :class:`SimulatedRun`.

    Args:
        settings: the run's settings (``foot_model`` resolved).
        robot: the robot (its IMU, names; the IMU taken to the run's rate, :func:`.robots.imu_at_rate`).
        wb: the trajectory at the ``grid`` samples.
        grid: the run's stamps.
        rngs: the generators of the IMU and of the joints.
        rho: (nf,) m, the foot radii as simulated.
        description_xml: the description stored with the run (its IMU block taken to the run's rate).
    """
    rng_imu, rng_joints = rngs
    robot, description_xml = imu_at_rate(robot, description_xml, settings.imu_rate_hz)
    imu = imu_readings(settings, robot, wb, grid, rng_imu)
    qj, vj, ej = joint_readings(settings, wb, grid.joint_index, rng_joints)
    return SimulatedRun(
        settings=settings,
        robot=robot.name,
        base_link=robot.base_link,
        joint_names=robot.joint_names,
        feet=tuple(robot.feet),
        imu=robot.imu,
        description_xml=description_xml,
        foot_model=str(settings.foot_model),
        foot_radii=rho,
        stamps_ns=grid.grid_rel.astype(np.int64) + np.int64(settings.start_stamp_ns),
        q=wb.q,
        v=wb.v,
        a=wb.a,
        tau=wb.tau,
        base_residual_wrench=wb.res,
        contact=wb.contact,
        slipping=wb.slipping,
        foot_positions_world=wb.foot_p,
        contact_points_world=wb.foot_p - rho[None, :, None] * np.array([0.0, 0.0, 1.0]),
        contact_forces_world=wb.f,
        contact_wrenches_in_foot=wb.w_foot,
        friction_violations=wb.violations,
        unilateral_samples=wb.unilateral,
        unbalanced_samples=wb.unbalanced,
        imu_index=grid.imu_index,
        imu_omega=imu.omega,
        imu_f=imu.f,
        imu_omega_ideal=imu.omega_ideal,
        imu_f_ideal=imu.f_ideal,
        imu_quat_xyzw=imu.quat_xyzw,
        imu_gyro_bias=imu.gyro_bias,
        imu_accel_bias=imu.accel_bias,
        imu_accel_bias_walk=imu.accel_bias_walk,
        imu_covariances=imu.covariances,
        joint_index=grid.joint_index,
        joint_position=qj,
        joint_velocity=vj,
        joint_effort=ej,
    )
