"""An IMU on a floating-base robot: ideal and noisy readings from pinocchio kinematics.

Math (CONVENTIONS.md, issue 4): with ``S`` the sensor frame rigidly attached to ``imu.link`` at
``imu.pose_in_link``,

- gyroscope ``omega_imu_in_imu = R_imu_world omega_imu_in_world``: angular velocity of S relative to the world, in S
  (pinocchio ``getFrameVelocity(..., LOCAL).angular``);
- accelerometer (specific force) ``f_imu_in_imu = R_imu_world (a_imu_in_world - g_world)``, with ``a_imu_in_world`` the
  classical acceleration of the origin of S in the world (second time derivative of its position), ``g_world = (0, 0,
  -9.81)``; in S this is ``getFrameClassicalAcceleration(..., LOCAL).linear`` = spatial acceleration + ``omega x v``
  (Featherstone, Rigid Body Dynamics Algorithms, 2.11); at rest and level the reading is +9.81 on z;
- orientation ``R_ref_imu = R_world_ref^T R_world_imu`` (see :mod:`.orientation`).

gz-sensors computes the same specific force from the physics engine's link acceleration and subtracts the
gravity rotated into the sensor frame, then adds noise (``ImuSensor::Update``); it reports the orientation
only when ``enable_orientation`` is true. Differences from gz are those of the orientation reference (see
:mod:`.orientation`, ``gazebo_compatible``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.sensors.errors import SensorError
from robot_state_estimator.sensors.noise import ImuNoise
from robot_state_estimator.sensors.orientation import GRAVITY_WORLD, orientation_reference_for_spec

FloatArray = NDArray[np.float64]

#: Name of the operational frame added to the model copy for the sensor.
SENSOR_FRAME_NAME = "__imu_sensor__"


@dataclass(frozen=True)
class ImuReading:
    """One IMU reading in the sensor frame S.

    Attributes:
        omega_imu_in_imu: (3,) rad/s, gyroscope.
        f_imu_in_imu: (3,) m/s^2, accelerometer (specific force; +9.81 on z when level at rest).
        quat_ref_imu_xyzw: (4,) orientation of S in the reference frame, ``x y z w``; None when the IMU does not
            report orientation (``enable_orientation`` false).
        R_world_imu: (3, 3) true orientation of S in the world (ground truth, never noisy).
    """

    omega_imu_in_imu: FloatArray
    f_imu_in_imu: FloatArray
    quat_ref_imu_xyzw: FloatArray | None
    R_world_imu: FloatArray


@dataclass(frozen=True)
class ImuCovariances:
    """Row-major (9,) covariances for ``sensor_msgs/Imu`` (REP-145).

    Attributes:
        orientation: zeros ("unknown", what Gazebo publishes) when orientation is reported; ``[-1, 0, ...]``
            when it is not.
        angular_velocity: diagonal ``stddev^2`` per gyro axis (rad^2/s^2), 0 for axes with noise ``none``.
        linear_acceleration: diagonal ``stddev^2`` per accelerometer axis (m^2/s^4).
    """

    orientation: FloatArray
    angular_velocity: FloatArray
    linear_acceleration: FloatArray


def _matrix_to_quat_xyzw(R: FloatArray) -> FloatArray:
    q = pin.Quaternion(np.asarray(R, dtype=float))
    q.normalize()
    return np.array([q.x, q.y, q.z, q.w])


class ImuModel:
    """IMU readings of a floating-base robot (pinocchio free-flyer model) from ``q``, ``v``, ``a``.

    The model is copied and an operational frame for the sensor is added to the copy, on the joint that
    carries ``imu.link``, at ``X_joint_link * imu.pose_in_link`` (pinocchio keeps fixed-joint links as frames,
    so ``imu.link`` may be a lumped link).

    Args:
        imu: the sensor (frame, orientation reference, noise).
        model: pinocchio model with a free-flyer root; ``q = [p_world_base, quat_world_base xyzw, joints]``,
            ``v = [v_base_in_base, omega_base_in_base, qdot]``, ``a = dv/dt``.
        heading_rad: world heading for the orientation reference (rad).
        rng: noise generator or seed (biases are drawn here).
        gazebo_compatible: orientation reference as gz-sensors computes it (see :mod:`.orientation`).
        gravity_world: (3,) m/s^2.

    Raises:
        SensorError: ``imu.link`` is not a frame of the model.
    """

    def __init__(
        self,
        imu: ImuSpec,
        model: pin.Model,
        *,
        heading_rad: float = 0.0,
        rng: np.random.Generator | int | None = None,
        gazebo_compatible: bool = False,
        gravity_world: FloatArray = GRAVITY_WORLD,
    ) -> None:
        if not model.existFrame(imu.link):
            raise SensorError(f"IMU {imu.name!r}: link {imu.link!r} is not a frame of the model {model.name!r}")
        self.imu = imu
        self.heading_rad = float(heading_rad)
        self.gazebo_compatible = gazebo_compatible
        self.gravity_world = np.asarray(gravity_world, dtype=float)
        self.model = pin.Model(model)
        link_frame = self.model.frames[self.model.getFrameId(imu.link)]
        self.link_frame_id = self.model.getFrameId(imu.link)
        self.frame_id = self.model.addFrame(
            pin.Frame(
                SENSOR_FRAME_NAME,
                link_frame.parentJoint,
                self.link_frame_id,
                link_frame.placement * imu.pose_in_link,
                pin.FrameType.OP_FRAME,
            )
        )
        self.data = self.model.createData()
        self.noise = ImuNoise(imu.angular_velocity_noise, imu.linear_acceleration_noise, rng)
        self._R_world_ref: FloatArray | None = None
        self._last_t: float | None = None

    # ------------------------------------------------------------------------------------------ reference
    def set_reference(self, q0: FloatArray) -> FloatArray:
        """Fix the orientation reference from the initial configuration ``q0`` (nq,) and return ``R_world_ref``.

        Called automatically with the first configuration seen when not called explicitly. The initial
        configuration matters only for references defined relative to the sensor's (or a link's) initial
        orientation (see :mod:`.orientation`).
        """
        pin.framesForwardKinematics(self.model, self.data, np.asarray(q0, dtype=float))
        frame_rotations = {f.name: np.array(self.data.oMf[i].rotation) for i, f in enumerate(self.model.frames)}
        if self.model.name:
            # the spec's parent_frame is "a fully scoped Gazebo link name": model::link is accepted too
            frame_rotations.update({f"{self.model.name}::{k}": v for k, v in list(frame_rotations.items())})
        self._R_world_ref = orientation_reference_for_spec(
            self.imu,
            heading_rad=self.heading_rad,
            R_world_sensor_initial=np.array(self.data.oMf[self.frame_id].rotation),
            frame_rotations=frame_rotations,
            gravity_world=self.gravity_world,
            gazebo_compatible=self.gazebo_compatible,
        )
        return self._R_world_ref

    @property
    def R_world_ref(self) -> FloatArray | None:
        """(3, 3) the orientation reference, or None before the first reading / :meth:`set_reference`."""
        return self._R_world_ref

    # ------------------------------------------------------------------------------------------- readings
    def kinematics(self, q: FloatArray, v: FloatArray, a: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(R_world_imu (3, 3), omega_imu_in_imu (3,) rad/s, a_imu_in_imu (3,) m/s^2)``: orientation, angular velocity
        and classical acceleration of the sensor origin, both in S (no gravity, no noise)."""
        pin.forwardKinematics(self.model, self.data, q, v, a)
        X_world_imu = pin.updateFramePlacement(self.model, self.data, self.frame_id)
        omega_imu_in_imu = pin.getFrameVelocity(self.model, self.data, self.frame_id, pin.LOCAL).angular
        a_imu_in_imu = pin.getFrameClassicalAcceleration(self.model, self.data, self.frame_id, pin.LOCAL).linear
        return np.array(X_world_imu.rotation), np.array(omega_imu_in_imu), np.array(a_imu_in_imu)

    def ideal(self, q: FloatArray, v: FloatArray, a: FloatArray) -> ImuReading:
        """Noise-free reading at configuration ``q`` (nq,), velocity ``v`` (nv,) and acceleration ``a`` (nv,).

        Returns:
            :class:`ImuReading` with ``f_imu_in_imu = a_imu_in_imu - R_imu_world g_world``.
        """
        q = np.asarray(q, dtype=float)
        if self._R_world_ref is None:
            self.set_reference(q)
        R_world_imu, omega_imu_in_imu, a_imu_in_imu = self.kinematics(
            q, np.asarray(v, dtype=float), np.asarray(a, dtype=float)
        )
        f_imu_in_imu = a_imu_in_imu - R_world_imu.T @ self.gravity_world
        quat = None
        if self.imu.orientation_enabled:
            assert self._R_world_ref is not None
            quat = _matrix_to_quat_xyzw(self._R_world_ref.T @ R_world_imu)
        return ImuReading(
            omega_imu_in_imu=omega_imu_in_imu,
            f_imu_in_imu=f_imu_in_imu,
            quat_ref_imu_xyzw=quat,
            R_world_imu=R_world_imu,
        )

    def measure(self, q: FloatArray, v: FloatArray, a: FloatArray, dt: float) -> ImuReading:
        """Noisy reading (gz-sensors noise on each axis; orientation is not perturbed, as in gz-sensors).

        Args:
            q, v, a: as for :meth:`ideal`.
            dt: time since the previous sample (s); 0 for the first sample.
        """
        ideal = self.ideal(q, v, a)
        omega, f = self.noise.apply(ideal.omega_imu_in_imu, ideal.f_imu_in_imu, float(dt))
        return ImuReading(
            omega_imu_in_imu=omega,
            f_imu_in_imu=f,
            quat_ref_imu_xyzw=ideal.quat_ref_imu_xyzw,
            R_world_imu=ideal.R_world_imu,
        )

    def ideal_series(self, q: FloatArray, v: FloatArray, a: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Noise-free readings of a trajectory.

        Args:
            q: (n, nq), v: (n, nv), a: (n, nv).

        Returns:
            ``omega_imu_in_imu`` (n, 3) rad/s, ``f_imu_in_imu`` (n, 3) m/s^2, ``quat_ref_imu_xyzw`` (n, 4) (NaN rows
            when orientation is not reported).
        """
        n = q.shape[0]
        omega = np.empty((n, 3))
        f = np.empty((n, 3))
        quat = np.full((n, 4), np.nan)
        for k in range(n):
            r = self.ideal(q[k], v[k], a[k])
            omega[k] = r.omega_imu_in_imu
            f[k] = r.f_imu_in_imu
            if r.quat_ref_imu_xyzw is not None:
                quat[k] = r.quat_ref_imu_xyzw
        return omega, f, quat

    def covariances(self) -> ImuCovariances:
        """``sensor_msgs/Imu`` covariances from the noise stddevs (see :class:`ImuCovariances`)."""
        ocov = np.zeros(9)
        if not self.imu.orientation_enabled:
            ocov[0] = -1.0
        gyro = np.diag([a.variance() for a in self.noise.gyro]).reshape(9)
        accel = np.diag([a.variance() for a in self.noise.accel]).reshape(9)
        return ImuCovariances(orientation=ocov, angular_velocity=gyro, linear_acceleration=accel)
