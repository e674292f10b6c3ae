"""The filter's state: the preallocated buffers (:mod:`.layout`) and their views, the covariance, the initial
covariance, the initialisations and the re-seating of the pose (``set_pose``). :class:`~.filter.BaseEkf` adds the
steps (propagation, updates, outputs)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import overload

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.estimation.ekf.backends import Backend, select_backend
from robot_state_estimator.estimation.ekf.layout import (
    BA_SL,
    BG_SL,
    C_LEG_SCALE_VAR,
    CLK_GYRO_STAMP,
    CLK_HAS_GYRO,
    CLK_OMEGA_PREV,
    CLK_STEPS,
    CLOCK_SIZE,
    LIMITS_SIZE,
    N_STATES,
    P_SL,
    POSE_IDX,
    STATE_VIEWS,
    TH_SL,
    V_SL,
    X_DT_GYRO,
    X_LEAD,
    X_SIZE,
)
from robot_state_estimator.estimation.ekf.measurements import UpdateResult, leg_results
from robot_state_estimator.estimation.ekf.model import ImuNoise, ProcessModel, rotation_from_gravity
from robot_state_estimator.estimation.ekf.numerics import _orthonormalise, skew
from robot_state_estimator.estimation.ekf.pose import check_pose, pose_error_covariance
from robot_state_estimator.estimation.settings import EkfSettings

FloatArray = NDArray[np.float64]

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

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> _StateView: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> FloatArray: ...
    def __get__(self, obj: object, objtype: type | None = None) -> FloatArray | _StateView:
        if obj is None:
            return self
        view: FloatArray = obj.__dict__[self.name]
        return view

    def __set__(self, obj: object, value: FloatArray) -> None:
        obj.__dict__[self.name][...] = value


class FilterState:
    """The state of the 15-state error-state EKF (:class:`~.filter.BaseEkf`; the equations: :mod:`.model`,
    :mod:`.measurements`).

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
        backend: the numerics in use (:attr:`use_kernels` replaces it).
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
        self._c[C_LEG_SCALE_VAR] = settings.leg_scale_std**2
        self._bind_views()
        self.R_world_base = np.eye(3)
        self.stamp_ns: int | None = None
        # The propagation's bookkeeping (layout.CLK_*; the compiled IMU step updates it in place) and the IMU step's
        # limits from the settings (layout.LIM_*, refreshed when the settings object changes).
        self._clock = np.zeros(CLOCK_SIZE, dtype=np.int64)
        self._imu_limits = np.zeros(LIMITS_SIZE)
        self.last_results = []
        self._contact_creep_variance = 0.0
        self._leg_noise: tuple[object, bool, float, float, float, float] = (None, False, 0.0, 0.0, 0.0, 0.0)
        self.backend = select_backend() if backend is None else backend
        self.backend.warm_up()
        #: the settings the IMU step's limits were taken from and the backend's bound IMU step (None: none)
        self._imu_bound: tuple[object, Callable[..., int] | None] = (None, None)

    # ------------------------------------------------------------------------------------------------------
    # State buffers and backend
    # ------------------------------------------------------------------------------------------------------

    #: the raw output of the last :meth:`update_stance_feet` (``leg_results``' arguments: names, out, gate, start)
    #: until ``last_results`` is read
    _pending_results: tuple[Sequence[str], FloatArray, float, int] | None
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
    _p_scale_anchor = _StateView()
    #: (15, 6) the error's covariance with the two latest gyro readings' noise (``layout.X_GYRO_CROSS``)
    _gyro_cross = _StateView()

    @property
    def contact_creep_variance(self) -> float:
        """(m/s)^2, the per-sample variance of the contact point's creep on each ground-plane axis in the leg updates
        (``noise_model.contact_creep_variance``: ``ekf.foot_creep_density^2`` over the joint period; 0: none), set at
        initialisation. Setting it gives the filter a copy of its settings, so the backends' noise caches, keyed
        on the settings object, take it."""
        return self._contact_creep_variance

    @contact_creep_variance.setter
    def contact_creep_variance(self, variance: float) -> None:
        if not (math.isfinite(variance) and variance >= 0.0):
            raise ValueError(f"contact_creep_variance must be finite and >= 0, got {variance!r}")
        if variance != self._contact_creep_variance:
            self._contact_creep_variance = float(variance)
            self.settings = dataclasses.replace(self.settings)

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

    @property
    def _gyro_stamp_ns(self) -> int | None:
        """The stamp of the held IMU reading (ns), None when none is held."""
        clock = self._clock
        return int(clock[CLK_GYRO_STAMP]) if clock[CLK_HAS_GYRO] else None

    @_gyro_stamp_ns.setter
    def _gyro_stamp_ns(self, stamp_ns: int | None) -> None:
        self._clock[CLK_HAS_GYRO] = stamp_ns is not None
        self._clock[CLK_GYRO_STAMP] = 0 if stamp_ns is None else stamp_ns

    @property
    def _omega_prev_valid(self) -> bool:
        """Whether ``_omega_prev_base_in_base`` holds the previous rate (the angular acceleration)."""
        return bool(self._clock[CLK_OMEGA_PREV])

    @_omega_prev_valid.setter
    def _omega_prev_valid(self, valid: bool) -> None:
        self._clock[CLK_OMEGA_PREV] = valid

    @property
    def _steps_since_normalise(self) -> int:
        """Propagation steps since the attitude was re-orthonormalised."""
        return int(self._clock[CLK_STEPS])

    @_steps_since_normalise.setter
    def _steps_since_normalise(self, steps: int) -> None:
        self._clock[CLK_STEPS] = steps

    def _bind_views(self) -> None:
        """Point the state attributes at their slices of ``_x`` and at ``_P``."""
        x = self._x
        d = self.__dict__
        for name, start, shape in STATE_VIEWS:
            d[_StateView.key(name)] = x[start : start + math.prod(shape)].reshape(shape)
        d[_StateView.key("P")] = self._P

    def __getstate__(self) -> dict[str, object]:
        """Pickle / deepcopy without the views and the bound IMU step (rebuilt on the copied buffers)."""
        state = self.__dict__.copy()
        for name in _VIEW_NAMES:
            state.pop(_StateView.key(name), None)
        state["_imu_bound"] = (None, None)
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._bind_views()

    @property
    def use_kernels(self) -> bool:
        """Whether the backend is the compiled one (:mod:`.backends`). Setting it replaces the backend by
        ``select_backend(compiled=value)``, warmed up (True needs numba: RuntimeError otherwise); the tests compare
        the two on copies of one filter this way."""
        return self.backend.compiled

    @use_kernels.setter
    def use_kernels(self, value: bool) -> None:
        self.backend = select_backend(compiled=bool(value))
        self.backend.warm_up()
        self._imu_bound = (None, None)

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
        moving initialisation), which reads ``f_base_in_base = R^T (-g_world) + R_base_imu b_a``: the tilt is off by
        exactly what the accelerometer bias leans the reading. With ``R = R_hat Exp(dtheta)``, ``R^T (-g_world) = u +
        [u]x dtheta`` for ``u = R_hat^T (-g_world)``, and ``R_hat`` makes ``u`` the reading, so ``[u]x dtheta =
        -R_base_imu b_a``: ``dtheta = T b_a`` (plus a part along ``u``, yaw) with ``T = [u]x R_base_imu / |u|^2``. The
        bias's prior ``Sigma_b`` then adds ``T Sigma_b T^T`` to the attitude block and ``T Sigma_b`` to the
        attitude-bias cross block (Farrell 2008, "Aided Navigation", sec. 11.4: the leveling error of an
        accelerometer-levelled INS equals its bias over g, the two being separable only once the vehicle turns). The
        settings' roll/pitch stddev stays as the independent part (the window's noise and motion).
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
        self._p_scale_anchor = self.p_world_base
        self.v_base_in_base = np.zeros(3) if v_base_in_base is None else np.array(v_base_in_base, dtype=float)
        self.accel_bias = np.zeros(3) if accel_bias is None else np.array(accel_bias, dtype=float)
        self.gyro_bias = np.zeros(3) if gyro_bias is None else np.array(gyro_bias, dtype=float)
        self.P = self.initial_covariance(self.R_world_base) if P is None else np.array(P, dtype=float)
        self.stamp_ns = int(stamp_ns)
        self._gyro_stamp_ns = None
        self._omega_prev_valid = False
        self.alpha_base_in_base = np.zeros(3)
        self._x[X_LEAD] = 0.0
        self._x[X_DT_GYRO] = 0.0
        self._gyro_cross[:] = 0.0
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
        f_base_in_base = self.R_base_imu @ np.asarray(accel_imu_mean, dtype=float)
        self._gyro_imu = np.array(gyro_imu_mean, dtype=float)
        self._accel_imu = np.array(accel_imu_mean, dtype=float)
        R = rotation_from_gravity(f_base_in_base)
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
        about ``R^T (-g_world)``. The covariance uses ``init_moving_roll_pitch_std``, ``init_moving_velocity_std``
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
        f_base_in_base = self.R_base_imu @ np.asarray(accel_imu_mean, dtype=float)
        R = rotation_from_gravity(f_base_in_base)
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
        self._p_scale_anchor = p
        self.R_world_base = R
        P = self.P
        P[POSE_IDX, :] = 0.0
        P[:, POSE_IDX] = 0.0
        P[np.ix_(POSE_IDX, POSE_IDX)] = P_pose
        self._gyro_cross[POSE_IDX, :] = 0.0  # nor of the gyro noise the filter's error carried
        self._steps_since_normalise = 0
