"""The error-state EKF of the floating base (:class:`BaseEkf`): its state, covariance, propagation, gated updates and
outputs.

The equations are in :mod:`.model` (state, IMU in the base frame, dynamics, error transition, process noise) and
:mod:`.measurements` (leg odometry, zero rate, the gate and the Joseph-form update); the checks of a pose given from
outside in :mod:`.pose`. The state lives in preallocated float64 buffers (:mod:`.layout`) that every step updates in
place; the public attributes (``p_world_base``, ``P``, ...) are live views of them, and assigning one copies the
values in. The numerics of each step run in the filter's backend (:mod:`.backends`, chosen once at construction:
the numba kernels, a few microseconds per step, or the numpy reference; both compute the same numbers up to rounding,
tested to 1e-12).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.common.output_layout import OUTPUT_SIZE
from robot_state_estimator.estimation.ekf.backends import Backend, select_backend
from robot_state_estimator.estimation.ekf.layout import (
    BA_SL,
    BG_SL,
    DECLINED,
    IMU_BAD_INPUT,
    N_STATES,
    P_SL,
    POSE_IDX,
    STATE_VIEWS,
    TH_SL,
    V_SL,
    X_SIZE,
)
from robot_state_estimator.estimation.ekf.measurements import (
    Measurement,
    UpdateResult,
    leg_results,
    leg_velocity_measurement,
    zero_rate_measurement,
)
from robot_state_estimator.estimation.ekf.model import ImuNoise, ProcessModel, rotation_from_gravity
from robot_state_estimator.estimation.ekf.numerics import _orthonormalise
from robot_state_estimator.estimation.ekf.pose import check_pose, pose_error_covariance
from robot_state_estimator.estimation.settings import EkfSettings

FloatArray = NDArray[np.float64]

_I3 = np.eye(3)
_VIEW_NAMES = (*(v[0] for v in STATE_VIEWS), "P")


class _StateView:
    """A state attribute of :class:`BaseEkf` backed by a view of its preallocated buffers.

    Reading returns the live view, which later steps update in place (copy it to keep a snapshot); assigning
    copies the values in, so ``ekf.v_base_in_base = v`` and ``ekf.p_world_base[2] = h`` both reach the filter.
    """

    name = ""

    @staticmethod
    def key(name: str) -> str:
        """The instance-dict key of the view of attribute ``name``."""
        return "_view_" + name

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.key(name)

    def __get__(self, obj: object, objtype: type | None = None) -> FloatArray:
        if obj is None:
            return self  # type: ignore[return-value]
        return obj.__dict__[self.name]  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: FloatArray) -> None:
        obj.__dict__[self.name][...] = value


class BaseEkf:
    """The 15-state error-state EKF (the equations: :mod:`.model`, :mod:`.measurements`).

    Args:
        X_base_imu: pose of the IMU frame S in the base frame B (pinocchio SE3, m).
        noise: IMU noise densities (:func:`~.model.imu_noise_from_spec`).
        settings: filter settings (initial covariance, gate, guards).
        backend: the numerics (:mod:`.backends`); None: :func:`~.backends.select_backend` (the numba kernels
            unless disabled or missing).

    The state attributes below are live views of preallocated buffers updated in place by every step (copy one
    to keep a snapshot); assigning one (``ekf.v_base_in_base = v``, ``ekf.p_world_base[2] = h``) copies the
    values in.

    Attributes:
        p_world_base: (3,) m, base position in W.
        v_base_in_base: (3,) m/s, base velocity in B.
        R_world_base: (3, 3) base attitude.
        accel_bias: (3,) m/s^2 in S.
        gyro_bias: (3,) rad/s in S.
        P: (15, 15) error covariance, order ``[dp_W, dv_B, dtheta_B, dba_S, dbg_S]``.
        stamp_ns: filter time (ns), None before initialisation.
        omega_base_in_base: (3,) rad/s, last bias-corrected angular velocity in B.
        alpha_base_in_base: (3,) rad/s^2, angular acceleration in B (backward difference of the gyro, or zero).
        f_base_in_base: (3,) m/s^2, last specific force at the base origin in B.
        model: the process model's constants (:class:`~.model.ProcessModel`).
        backend: the numerics in use.
        last_results: results of the last update call.
    """

    def __init__(
        self, X_base_imu: pin.SE3, noise: ImuNoise, settings: EkfSettings, *, backend: Backend | None = None
    ) -> None:
        self.settings = settings
        self.noise = noise
        model = self.model = ProcessModel(X_base_imu, noise, settings.gravity_m_s2)
        self.R_base_imu = model.R_base_imu
        self.p_base_imu = model.p_base_imu
        self.g_world = model.g_world
        self._Sigma_g_sample = model.Sigma_gyro_sample
        # The state lives in preallocated buffers (.layout); the public attributes are views.
        self._x = np.zeros(X_SIZE)
        self._P = np.eye(N_STATES)
        self._c = model.constants
        self._bind_views()
        self.R_world_base = np.eye(3)
        self.stamp_ns: int | None = None
        self._gyro_stamp_ns: int | None = None
        self._omega_prev_valid = False  # whether _omega_prev_base_in_base holds the previous rate (alpha)
        self._steps_since_normalise = 0
        self.last_results = []
        self._leg_noise: tuple[object, bool, float, float, float] = (None, False, 0.0, 0.0, 0.0)
        self._imu_limits: tuple[object, float, bool, float, float] = (None, 0.0, False, 0.0, 0.0)
        self.backend = select_backend() if backend is None else backend
        self.backend.warm_up()

    # ------------------------------------------------------------------------------------------------------
    # State buffers and backend
    # ------------------------------------------------------------------------------------------------------

    #: the raw output of the last :meth:`update_stance_feet` (names, out, gate) until ``last_results`` is read
    _pending_results: tuple[Sequence[str], FloatArray, float] | None
    p_world_base = _StateView()
    v_base_in_base = _StateView()
    R_world_base = _StateView()
    accel_bias = _StateView()
    gyro_bias = _StateView()
    P = _StateView()
    omega_base_in_base = _StateView()
    alpha_base_in_base = _StateView()
    f_base_in_base = _StateView()
    _gyro_imu = _StateView()
    _accel_imu = _StateView()
    _omega_prev_base_in_base = _StateView()

    @property
    def last_results(self) -> list[UpdateResult]:
        """Results of the last update call (made on first read after :meth:`update_stance_feet`)."""
        pending = self._pending_results
        if pending is not None:
            self._last_results = leg_results(*pending)
            self._pending_results = None
        return self._last_results

    @last_results.setter
    def last_results(self, value: list[UpdateResult]) -> None:
        self._last_results = value
        self._pending_results = None

    def _bind_views(self) -> None:
        """Point the state attributes at their slices of ``_x`` and at ``_P``."""
        x = self._x
        d = self.__dict__
        for name, start, shape in STATE_VIEWS:
            d[_StateView.key(name)] = x[start : start + math.prod(shape)].reshape(shape)
        d[_StateView.key("P")] = self._P

    def __getstate__(self) -> dict[str, object]:
        """Pickle / deepcopy without the views (rebuilt by ``__setstate__`` on the copied buffers)."""
        state = self.__dict__.copy()
        for name in _VIEW_NAMES:
            state.pop(_StateView.key(name), None)
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._bind_views()

    @property
    def use_kernels(self) -> bool:
        """Whether the backend is the compiled one (:mod:`.backends`). Setting it replaces the backend
        (``select_backend(compiled=value)``, warmed up): True needs numba (RuntimeError otherwise)."""
        return self.backend.compiled

    @use_kernels.setter
    def use_kernels(self, value: bool) -> None:
        self.backend = select_backend(compiled=bool(value))
        self.backend.warm_up()

    def warm_up(self) -> None:
        """Compile the backend's kernels now (or load them from numba's on-disk cache: well under a second), so the
        first real sample does not pay the compilation (seconds, once per environment). Called by ``__init__``;
        idempotent, a no-op for the numpy reference."""
        self.backend.warm_up()

    # ------------------------------------------------------------------------------------------------------
    # Initialisation
    # ------------------------------------------------------------------------------------------------------

    @property
    def initialized(self) -> bool:
        """True once a state has been set."""
        return self.stamp_ns is not None

    def initial_covariance(
        self,
        R_world_base: FloatArray,
        *,
        velocity_std: float | None = None,
        roll_pitch_std: float | None = None,
        gyro_bias_std: float | None = None,
        tilt_from_specific_force: bool = False,
    ) -> FloatArray:
        """(15, 15) initial covariance from the settings (never zero).

        The roll/pitch/yaw stddevs are about the world axes; they are mapped to the right (body)
        perturbation with ``R^T Sigma_W R``. Bias stddevs are the larger of the settings and the SDF turn-on
        bias spread. ``velocity_std``, ``roll_pitch_std`` and ``gyro_bias_std`` override the settings'
        ``initial_*`` values when given (the initialisation from a moving window).

        ``tilt_from_specific_force``: roll and pitch were taken from a mean specific force (the static and the
        moving initialisation), which reads ``f_B = R^T (-g_W) + R_BS b_a``: the tilt is off by exactly what
        the accelerometer bias leans the reading. With ``R = R_hat Exp(dtheta)``, ``R^T (-g_W) = u + [u]x
        dtheta`` for ``u = R_hat^T (-g_W)``, and ``R_hat`` makes ``u`` the reading, so ``[u]x dtheta = -R_BS
        b_a``: ``dtheta = T b_a`` (plus a part along ``u``, yaw) with ``T = [u]x R_BS / |u|^2``. The bias's
        prior ``Sigma_b`` then adds ``T Sigma_b T^T`` to the attitude block and ``T Sigma_b`` to the
        attitude-bias cross block (Farrell 2008, "Aided Navigation", sec. 11.4: the leveling error of an
        accelerometer-levelled INS equals its bias over g, the two being separable only once the vehicle turns).
        The settings' roll/pitch stddev stays as the independent part (the window's noise and motion).
        """
        s = self.settings
        v_std = s.initial_velocity_std if velocity_std is None else velocity_std
        rp_std = s.initial_roll_pitch_std if roll_pitch_std is None else roll_pitch_std
        bg_std = s.initial_gyro_bias_std if gyro_bias_std is None else gyro_bias_std
        P = np.zeros((N_STATES, N_STATES))
        P[P_SL, P_SL] = np.eye(3) * s.initial_position_std**2
        P[V_SL, V_SL] = np.eye(3) * v_std**2
        Sigma_theta_world = np.diag([rp_std**2, rp_std**2, s.initial_yaw_std**2])
        P[TH_SL, TH_SL] = R_world_base.T @ Sigma_theta_world @ R_world_base
        Sigma_b = np.diag(np.maximum(s.initial_accel_bias_std, self.noise.accel_bias_prior_std) ** 2)
        P[BA_SL, BA_SL] = Sigma_b
        P[BG_SL, BG_SL] = np.diag(np.maximum(bg_std, self.noise.gyro_bias_prior_std) ** 2)
        if tilt_from_specific_force:
            u = -(R_world_base.T @ self.g_world)
            T = skew(u) @ self.R_base_imu / float(u @ u)
            P[TH_SL, TH_SL] += T @ Sigma_b @ T.T
            P[TH_SL, BA_SL] = T @ Sigma_b
            P[BA_SL, TH_SL] = P[TH_SL, BA_SL].T
        return P

    def initialize(
        self,
        stamp_ns: int,
        *,
        R_world_base: FloatArray,
        p_world_base: FloatArray,
        v_base_in_base: FloatArray | None = None,
        accel_bias: FloatArray | None = None,
        gyro_bias: FloatArray | None = None,
        P: FloatArray | None = None,
    ) -> None:
        """Set the state explicitly.

        Args:
            stamp_ns: filter time (ns).
            R_world_base: (3, 3) attitude.
            p_world_base: (3,) m, position in W.
            v_base_in_base: (3,) m/s in B (zero when None). The pinocchio free-flyer ``v[0:3]`` is this
                already; a world-frame velocity must be rotated first: ``R_world_base.T @ v_world``.
            accel_bias: (3,) m/s^2 in S (zero when None).
            gyro_bias: (3,) rad/s in S (zero when None).
            P: (15, 15) covariance; :meth:`initial_covariance` when None.
        """
        self.R_world_base = _orthonormalise(np.asarray(R_world_base, dtype=float))
        self.p_world_base = np.array(p_world_base, dtype=float)
        self.v_base_in_base = np.zeros(3) if v_base_in_base is None else np.array(v_base_in_base, dtype=float)
        self.accel_bias = np.zeros(3) if accel_bias is None else np.array(accel_bias, dtype=float)
        self.gyro_bias = np.zeros(3) if gyro_bias is None else np.array(gyro_bias, dtype=float)
        self.P = self.initial_covariance(self.R_world_base) if P is None else np.array(P, dtype=float)
        self.stamp_ns = int(stamp_ns)
        self._gyro_stamp_ns = None
        self._omega_prev_valid = False
        self.alpha_base_in_base = np.zeros(3)
        self.omega_base_in_base = self.R_base_imu @ (self._gyro_imu - self.gyro_bias)
        self.last_results = []

    def initialize_static(
        self,
        stamp_ns: int,
        *,
        accel_imu_mean: FloatArray,
        gyro_imu_mean: FloatArray,
        p_world_base: FloatArray,
        n_samples: int = 0,
    ) -> None:
        """Initialise from averaged static IMU readings: roll and pitch from gravity, yaw 0, gyro bias.

        Args:
            stamp_ns: filter time (ns).
            accel_imu_mean: (3,) m/s^2, mean specific force in S (robot static).
            gyro_imu_mean: (3,) rad/s, mean gyro reading in S: the gyro bias (Earth rate neglected).
            p_world_base: (3,) m, initial position.
            n_samples: how many readings were averaged: the gyro bias stddev is at least the mean's,
                ``gyro_sample_stddev / sqrt(n)`` (the window's own noise; 0 = ``initial_gyro_bias_std`` only).
        """
        f_base = self.R_base_imu @ np.asarray(accel_imu_mean, dtype=float)
        self._gyro_imu = np.array(gyro_imu_mean, dtype=float)
        self._accel_imu = np.array(accel_imu_mean, dtype=float)
        R = rotation_from_gravity(f_base)
        bg_std = self.settings.initial_gyro_bias_std
        if n_samples > 0:
            bg_std = max(bg_std, float(self.noise.gyro_sample_stddev.max()) / math.sqrt(n_samples))
        self.initialize(
            stamp_ns,
            R_world_base=R,
            p_world_base=p_world_base,
            gyro_bias=gyro_imu_mean,
            P=self.initial_covariance(R, gyro_bias_std=bg_std, tilt_from_specific_force=True),
        )

    def initialize_moving(
        self,
        stamp_ns: int,
        *,
        accel_imu_mean: FloatArray,
        gyro_imu: FloatArray,
        accel_imu: FloatArray,
        p_world_base: FloatArray,
        v_base_in_base: FloatArray,
    ) -> None:
        """Initialise on a moving robot: roll and pitch from the mean specific force, yaw 0, gyro bias 0.

        Over whole gait cycles the base acceleration averages to about zero, so the mean specific force is
        about ``R^T (-g_W)``. The covariance uses ``init_moving_roll_pitch_std``, ``init_moving_velocity_std``
        and ``init_moving_gyro_bias_std`` of the settings.

        Args:
            stamp_ns: filter time (ns).
            accel_imu_mean: (3,) m/s^2, mean specific force in S over the window.
            gyro_imu: (3,) rad/s, the current gyro reading in S (for the angular rate, not the bias).
            accel_imu: (3,) m/s^2, the current specific force in S.
            p_world_base: (3,) m, initial position.
            v_base_in_base: (3,) m/s, initial velocity in B.
        """
        s = self.settings
        f_base = self.R_base_imu @ np.asarray(accel_imu_mean, dtype=float)
        R = rotation_from_gravity(f_base)
        self._gyro_imu = np.array(gyro_imu, dtype=float)
        self._accel_imu = np.array(accel_imu, dtype=float)
        P = self.initial_covariance(
            R,
            velocity_std=s.init_moving_velocity_std,
            roll_pitch_std=s.init_moving_roll_pitch_std,
            gyro_bias_std=s.init_moving_gyro_bias_std,
            tilt_from_specific_force=True,
        )
        self.initialize(stamp_ns, R_world_base=R, p_world_base=p_world_base, v_base_in_base=v_base_in_base, P=P)

    def set_pose(
        self,
        p_world_base: FloatArray,
        R_world_base: FloatArray,
        pose_covariance: FloatArray | None = None,
    ) -> None:
        """Overwrite the base pose at the filter's current stamp (a user re-seating the estimate).

        Position and attitude are replaced; the velocity in B (so the world-frame velocity turns with the new
        attitude), the biases, the held IMU reading and the filter time are kept. The pose block of ``P``
        (``[dp_W, dtheta_B]``, rows and columns 0-2 and 6-8) is set from ``pose_covariance``, converted to the
        filter's right attitude perturbation by :func:`pose_error_covariance` (the exact inverse of
        :meth:`pose_covariance`, so that the next published covariance is the one given), or, when it is None or
        all zeros, from the settings (``initial_position_std``, ``initial_roll_pitch_std``, ``initial_yaw_std``
        about the world axes, as :meth:`initial_covariance`). The cross-covariances of the pose with the velocity
        and the biases are zeroed: the new pose is independent of what the filter knew. The state lives in the
        buffers the kernels read (``_x``, ``_P``): both paths see the change.

        Args:
            p_world_base: (3,) m, base origin in W (``odom``).
            R_world_base: (3, 3) base attitude (a rotation, see :func:`check_rotation`).
            pose_covariance: (6, 6) or (36,) row-major, ROS order ``x, y, z, rot x, rot y, rot z``, position in W
                (m^2), rotation about the W axes (rad^2); symmetric positive semi-definite. None or all zeros:
                from the settings.

        Raises:
            ValueError: a non-finite or wrongly shaped position, a matrix that is not a rotation, a covariance
                that is not symmetric positive semi-definite (nothing is changed).
            RuntimeError: the filter is not initialised (no state to re-seat).
        """
        p, R, C = check_pose(p_world_base, R_world_base, pose_covariance)
        if self.stamp_ns is None:
            raise RuntimeError("BaseEkf.set_pose called before initialisation")
        if C is None or not C.any():
            P0 = self.initial_covariance(R)
            P_pose = P0[np.ix_(POSE_IDX, POSE_IDX)]
        else:
            P_pose = pose_error_covariance(C, R)
        self.p_world_base = p
        self.R_world_base = R
        P = self.P
        P[POSE_IDX, :] = 0.0
        P[:, POSE_IDX] = 0.0
        P[np.ix_(POSE_IDX, POSE_IDX)] = P_pose
        self._steps_since_normalise = 0

    # ------------------------------------------------------------------------------------------------------
    # Propagation
    # ------------------------------------------------------------------------------------------------------

    def set_imu(self, stamp_ns: int, gyro_imu: FloatArray, accel_imu: FloatArray) -> None:
        """Hold an IMU reading (zero-order hold) for the following :meth:`propagate_to` calls.

        The angular acceleration (for the lever arm) is the backward difference of the bias-corrected
        gyro between this reading and the previous one.

        Args:
            stamp_ns: reading time (ns).
            gyro_imu: (3,) rad/s in S.
            accel_imu: (3,) m/s^2 specific force in S.
        """
        previous = self._gyro_stamp_ns
        dt_gyro = 0.0  # > 0: angular acceleration from the previous reading
        if (
            self.settings.use_angular_acceleration
            and self._omega_prev_valid
            and previous is not None
            and stamp_ns > previous
        ):
            dt_gyro = (stamp_ns - previous) * 1e-9
        self.backend.set_imu(self, gyro_imu, accel_imu, dt_gyro)
        self._omega_prev_valid = True
        self._gyro_stamp_ns = int(stamp_ns)

    def imu_step(self, stamp_ns: int, gyro_imu: FloatArray, accel_imu: FloatArray, out: FloatArray) -> int:
        """The usual IMU sample in one call (a backend shortcut: the numpy reference declines it): the check of
        the reading against ``settings.max_gyro_rad_s`` / ``max_accel_m_s2`` (and NaN/Inf), :meth:`set_imu`,
        :meth:`propagate_to` ``stamp_ns``, :meth:`state_is_finite` and :meth:`output_vector` into ``out`` (91,).

        Args:
            stamp_ns: the reading's stamp (ns). gyro_imu, accel_imu: (3,) float64 C-contiguous arrays, rad/s and
                m/s^2 in S (not checked: the compiled step is called through its entry point, ``jit.entry_point``;
                ``np.ascontiguousarray(a, dtype=float)`` of a (3,) shape makes them).
            out: (91,) float64, written when the result is ``IMU_OK``.

        Returns:
            -1 (``layout.DECLINED``, nothing changed) when it is not the usual sample (not initialised, or
            ``stamp_ns`` not within ``(stamp_ns, stamp_ns + max_dt_s]`` of the filter time) or the backend has no
            such shortcut; ``IMU_BAD_INPUT`` (nothing changed); ``IMU_NOT_FINITE`` (propagated, the state is not
            finite, ``out`` not written); ``IMU_OK`` (``layout``).
        """
        t = self.stamp_ns
        if t is None:
            return DECLINED
        limits = self._imu_limits
        s = self.settings
        if limits[0] is not s:  # the settings' numbers as this step takes them, once per settings object
            limits = self._imu_limits = (s, float(s.max_dt_s), bool(s.use_angular_acceleration),
                                         float(s.max_gyro_rad_s), float(s.max_accel_m_s2))  # fmt: skip
        _, max_dt_s, use_alpha, max_gyro, max_accel = limits
        dt = (stamp_ns - t) * 1e-9
        if not 0.0 < dt <= max_dt_s:
            return DECLINED
        previous = self._gyro_stamp_ns
        dt_gyro = 0.0  # as set_imu
        if use_alpha and self._omega_prev_valid and previous is not None and stamp_ns > previous:
            dt_gyro = (stamp_ns - previous) * 1e-9
        steps = self._steps_since_normalise + 1  # as propagate_to
        normalise = steps >= 100
        code = self.backend.imu_step(self, gyro_imu, accel_imu, max_gyro, max_accel, dt_gyro, dt, normalise, out)
        if code != IMU_BAD_INPUT and code != DECLINED:
            self._steps_since_normalise = 0 if normalise else steps
            self._omega_prev_valid = True
            self._gyro_stamp_ns = self.stamp_ns = stamp_ns
        return code

    def base_motion(self) -> tuple[FloatArray, FloatArray]:
        """Bias-corrected ``(omega_B (3,) rad/s, f_B (3,) m/s^2 at the base origin)`` from the held reading."""
        w, f = self.base_motion_lists()
        return np.array(w), np.array(f)

    def base_motion_lists(self) -> tuple[list[float], list[float]]:
        """:meth:`base_motion` as Python floats (:meth:`.model.ProcessModel.base_motion`)."""
        return self.model.base_motion(
            self._gyro_imu.tolist(),
            self._accel_imu.tolist(),
            self.gyro_bias.tolist(),
            self.accel_bias.tolist(),
            self.alpha_base_in_base.tolist(),
        )

    def propagate(self, stamp_ns: int, gyro_imu: FloatArray, accel_imu: FloatArray) -> str | None:
        """:meth:`set_imu` then :meth:`propagate_to` (the usual call, once per IMU sample).

        Returns:
            None when propagated, else the reason it was refused (see :meth:`propagate_to`).
        """
        self.set_imu(stamp_ns, gyro_imu, accel_imu)
        return self.propagate_to(stamp_ns)

    def propagate_to(self, stamp_ns: int) -> str | None:
        """Propagate the state and covariance from the filter time to ``stamp_ns`` with the held reading.

        Args:
            stamp_ns: target time (ns).

        Returns:
            None on success; otherwise a reason and nothing is propagated: ``"dt_nonpositive"`` (state
            unchanged), ``"dt_too_large"`` (the clock is re-anchored to ``stamp_ns`` and the covariance grows
            by the process noise of the gap, the nominal state is kept).

        Raises:
            RuntimeError: the filter is not initialised.
        """
        if self.stamp_ns is None:
            raise RuntimeError("BaseEkf.propagate_to called before initialisation")
        dt = (stamp_ns - self.stamp_ns) * 1e-9
        if dt <= 0.0:
            return "dt_nonpositive"
        if dt > self.settings.max_dt_s:
            self.backend.add_gap_noise(self, dt)
            self.stamp_ns = int(stamp_ns)
            self._omega_prev_valid = False
            return "dt_too_large"
        self._steps_since_normalise += 1
        normalise = self._steps_since_normalise >= 100
        if normalise:
            self._steps_since_normalise = 0
        self.backend.propagate(self, dt, normalise)
        self.stamp_ns = int(stamp_ns)
        return None

    def error_transition(self, dt: float, omega: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
        """Error-state transition over dt at the current state with the held IMU reading
        (:meth:`.model.ProcessModel.error_transition`).

        Args:
            dt: s, propagation interval.
            omega: (3,) rad/s, bias-corrected angular velocity in B (computed from the held reading when None).

        Returns:
            ``Phi`` (15, 15) ``= I + A dt + (A dt)^2 / 2`` and ``M`` (3, 3) ``= [v]x + L``.
        """
        if omega is None:
            omega, _ = self.base_motion()
        return self.model.error_transition(self.R_world_base, self.v_base_in_base, omega, dt)

    # ------------------------------------------------------------------------------------------------------
    # Updates
    # ------------------------------------------------------------------------------------------------------

    def leg_velocity_measurement(
        self,
        name: str,
        v_base_measured: FloatArray,
        p_base_foot: FloatArray,
        J_base_foot: FloatArray | None = None,
        *,
        foot_velocity_noise: float | None = None,
        encoder_velocity_noise: float | None = None,
        attitude_jacobian: FloatArray | None = None,
    ) -> Measurement:
        """The leg-odometry measurement of one stance foot at the current state
        (:func:`.measurements.leg_velocity_measurement`).

        Args:
            name: foot name.
            v_base_measured: (3,) m/s in B, ``-(J qdot) - omega_hat_B x r`` with the filter's angular velocity.
            p_base_foot: (3,) m, foot position r in B (rolling feet: the contact body point c).
            J_base_foot: (3, n) foot Jacobian in B, for the encoder-noise term (omitted when None; rolling
                feet: ``J_c``).
            foot_velocity_noise: m/s, overrides ``settings.foot_velocity_noise``.
            encoder_velocity_noise: rad/s, overrides ``settings.encoder_velocity_noise``.
            attitude_jacobian: (3, 3) the attitude block of H, ``[omega_foot]x [d]x`` for rolling feet (zero
                when None: point feet).

        Returns:
            The measurement (innovation, H (3, 15), R (3, 3)).
        """
        s = self.settings
        return leg_velocity_measurement(
            name,
            v_base_measured,
            self.v_base_in_base,
            p_base_foot,
            J_base_foot,
            R_base_imu=self.R_base_imu,
            Sigma_gyro_sample=self.model.Sigma_gyro_sample,
            foot_velocity_noise=s.foot_velocity_noise if foot_velocity_noise is None else foot_velocity_noise,
            encoder_velocity_noise=s.encoder_velocity_noise
            if encoder_velocity_noise is None
            else encoder_velocity_noise,
            attitude_jacobian=attitude_jacobian,
        )

    def update_leg_velocities(
        self,
        names: list[str],
        v_base_measured: FloatArray,
        p_base_foot: FloatArray,
        J_base_foot: FloatArray | None = None,
        *,
        gate_nis: float | None = None,
        H_attitude: FloatArray | None = None,
    ) -> list[UpdateResult]:
        """The leg-odometry update of k stance feet: the measurement of :meth:`leg_velocity_measurement` for each,
        gated and fused as :meth:`update` does, stacked in one call of the backend (the 1 kHz path).

        Args:
            names: (k,) foot names.
            v_base_measured: (k, 3) m/s in B, ``-(J_i qdot) - omega_hat_B x r_i`` per foot.
            p_base_foot: (k, 3) m, foot positions r_i in B.
            J_base_foot: (k, 3, n) foot Jacobians in B (encoder noise term), or None.
            gate_nis: NIS gate per foot (``settings.foot_gate_nis`` when None; 0 disables).
            H_attitude: (k, 3, 3) attitude blocks of H per foot (rolling feet, :mod:`.measurements`); None for point
                feet. With rolling feet ``p_base_foot`` holds the contact points c_i and ``J_base_foot`` their
                Jacobians ``J_c,i``.

        Returns:
            One :class:`~.measurements.UpdateResult` per foot (also in ``last_results``).
        """
        gate = self.settings.foot_gate_nis if gate_nis is None else gate_nis
        if not names:
            self.last_results = []
            return []
        results = self.backend.leg_update(self, names, v_base_measured, p_base_foot, J_base_foot, gate, H_attitude)
        self.last_results = results
        return results

    def update_stance_feet(
        self,
        names: Sequence[str],
        contacts: NDArray[np.bool_],
        qdot_joints: FloatArray,
        radii: FloatArray,
        p_base_foot: FloatArray,
        J6_base_foot: FloatArray,
        *,
        rolling: bool,
    ) -> FloatArray | None:
        """The leg-odometry update of the feet in contact in one call (a backend shortcut: the numpy reference
        declines it): the terms of ``LegKinematics.rolling_contact_terms`` (``point_contact_terms`` when not
        ``rolling``) at the filter's ``omega_base_in_base`` and attitude, then :meth:`update_leg_velocities` (gate
        ``settings.foot_gate_nis``).

        Args:
            names: (k,) names of the feet in contact, in foot order (for the results).
            contacts: (n,) bool, which feet are in contact (k of them).
            qdot_joints: (nj,) rad/s. radii: (n,) m, foot sphere radii (zeros for point feet).
            p_base_foot: (n, 3) m, foot centres in B. J6_base_foot: (n, 6, nj) foot Jacobians in B
                (``LegKinematics``, after its ``update``).
            rolling: rolling spherical feet (the attitude block of H enters).

        Returns:
            (13 k,) the innovations (k, 3), innovation covariances (k, 3, 3) and NIS (k,) of the feet (the
            :class:`~.measurements.UpdateResult` of each are made from it when ``last_results`` is read); None when
            the stacked S is not numerically positive definite or the backend has no such shortcut (nothing changed:
            use :meth:`update_leg_velocities`).
        """
        s = self.settings
        noise = self._leg_noise
        if noise[0] is not s:  # the settings' numbers as the backend takes them, once per settings object
            noise = self._leg_noise = (s, s.encoder_velocity_noise > 0.0, float(s.foot_velocity_noise**2),
                                       float(s.encoder_velocity_noise**2), float(s.foot_gate_nis))  # fmt: skip
        _, use_J, sf2, se2, gate = noise
        out = np.empty(13 * len(names))
        n = self.backend.stance_update(self, contacts, qdot_joints, radii, p_base_foot, J6_base_foot, rolling, use_J,
                                       sf2, se2, gate, out)  # fmt: skip
        if n < 0:
            return None
        self._pending_results = (names, out, gate)
        return out

    def zero_rate_measurement(self) -> Measurement:
        """Zero angular rate pseudo-measurement (robot static): ``0 = R_base_imu (omega_S - b_g - n_g)``."""
        omega_hat = self.R_base_imu @ (self._gyro_imu - self.gyro_bias)
        return zero_rate_measurement(
            omega_hat,
            R_base_imu=self.R_base_imu,
            Sigma_gyro_sample=self.model.Sigma_gyro_sample,
            zero_rate_noise=self.settings.zero_rate_noise_rad_s,
        )

    def update(self, measurements: list[Measurement], *, gate_nis: float | None = None) -> list[UpdateResult]:
        """Gate each measurement on its prior NIS, then fuse the accepted ones in one Joseph-form update
        (:mod:`.measurements`).

        Args:
            measurements: the measurements (innovations computed at the current state).
            gate_nis: NIS threshold per measurement (``settings.foot_gate_nis`` when None; 0 disables).

        Returns:
            One :class:`~.measurements.UpdateResult` per measurement, in order (also kept in ``last_results``).
        """
        gate = self.settings.foot_gate_nis if gate_nis is None else gate_nis
        results = self.backend.update(self, measurements, gate)
        self.last_results = results
        return results

    # ------------------------------------------------------------------------------------------------------
    # Outputs (ROS conventions)
    # ------------------------------------------------------------------------------------------------------

    def quat_world_base_xyzw(self) -> FloatArray:
        """(4,) base attitude quaternion ``x y z w``."""
        return self.backend.quat_xyzw(self)

    def pose_covariance(self) -> FloatArray:
        """(6, 6) pose covariance (x, y, z, rot x, rot y, rot z): position in W, rotation about W axes.

        The world-axis small angle is ``dphi_W = R dtheta`` (right perturbation ``R Exp(dtheta) =
        Exp(R dtheta) R``), so the rotation block is ``R P_thth R^T`` and the cross block ``P_p,th R^T``.
        """
        return self.backend.pose_covariance(self)

    def twist_covariance(self) -> FloatArray:
        """(6, 6) twist covariance (linear, angular), both in B.

        ``omega_B = R_base_imu (omega_S - b_g)``: its covariance is ``R_base_imu P_bg R_imu_base`` plus the gyro
        white noise of one sample; the cross block with the velocity is ``-P_v,bg R_imu_base``.
        """
        return self.backend.twist_covariance(self)

    def output_vector(self) -> FloatArray:
        """All outputs in one new (91,) float64 array, laid out as ``common.output_layout.OUTPUT_FIELDS``:
        ``p_world_base`` (3), :meth:`quat_world_base_xyzw` (4), ``v_base_in_base`` (3), ``omega_base_in_base``
        (3), :meth:`pose_covariance` (36, row-major), :meth:`twist_covariance` (36, row-major), ``accel_bias`` (3),
        ``gyro_bias`` (3); the same values as those attributes and methods."""
        out = np.empty(OUTPUT_SIZE)
        self.backend.outputs(self, out)
        return out

    def finite_output_vector(self) -> FloatArray | None:
        """:meth:`output_vector` when :meth:`state_is_finite`, else None (one call of the backend)."""
        out = np.empty(OUTPUT_SIZE)
        return out if self.backend.finite_outputs(self, out) else None

    def state_is_finite(self) -> bool:
        """True when the state and covariance contain no NaN/Inf (one sum: NaN and Inf propagate)."""
        return self.backend.state_is_finite(self)
