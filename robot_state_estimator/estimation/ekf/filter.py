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

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.output_layout import OUTPUT_SIZE
from robot_state_estimator.estimation.ekf.layout import (
    DECLINED,
    IMU_NOT_FINITE,
    IMU_OK,
    NORMALISE_EVERY,
    X_DT_GYRO,
    X_LEAD,
)
from robot_state_estimator.estimation.ekf.measurements import (
    Measurement,
    UpdateResult,
    leg_velocity_measurement,
    zero_rate_measurement,
)
from robot_state_estimator.estimation.ekf.model import gyro_noise_shares
from robot_state_estimator.estimation.ekf.state import FilterState

FloatArray = NDArray[np.float64]


class BaseEkf(FilterState):
    """The 15-state error-state EKF of the floating base (the equations: :mod:`.model`, :mod:`.measurements`): its
    state (:class:`~.state.FilterState`: buffers, views, initialisation, ``set_pose``), the propagation, the gated
    updates and the outputs, each step computed by the backend (:mod:`.backends`).

    Args:
        X_base_imu: pose of the IMU frame S in the base frame B (pinocchio SE3, m).
        noise: IMU noise densities (:func:`~.model.imu_noise_from_spec`).
        settings: filter settings (initial covariance, gate, guards).
        backend: the numerics; None: :func:`~.backends.select_backend` (the numba kernels unless disabled or
            missing).

    The state attributes (``p_world_base``, ``v_base_in_base``, ``R_world_base``, ``accel_bias``, ``gyro_bias``,
    ``P``, ``omega_base_in_base``, ``alpha_base_in_base``, ``f_base_in_base``, ``stamp_ns``) are described in
    :class:`~.state.FilterState`.
    """

    # ------------------------------------------------------------------------------------------------------
    # Propagation
    # ------------------------------------------------------------------------------------------------------

    def set_imu(self, stamp_ns: int, gyro_imu: FloatArray, accel_imu: FloatArray) -> None:
        """Hold an IMU reading (zero-order hold) for the following :meth:`propagate_to` calls.

        The angular acceleration (for the lever arm) is the backward difference of the bias-corrected
        gyro between this reading and the previous one. The time from the filter's time to ``stamp_ns`` is kept
        (``layout.X_LEAD``): a joint sample applied before the state reaches this stamp sees the rate interpolated
        to its time (:attr:`omega_base_in_base_at_state`, :mod:`.model` "Gyro noise in the velocity").

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
        t = self.stamp_ns
        self._x[X_LEAD] = (stamp_ns - t) * 1e-9 if t is not None and stamp_ns > t else 0.0
        self._omega_prev_valid = True
        self._gyro_stamp_ns = int(stamp_ns)

    @property
    def omega_base_in_base_at_state(self) -> FloatArray:
        """(3,) rad/s in B, the bias-corrected rate at the filter's time: ``R_base_imu (gyro - b_g) - alpha_base_in_base
        lead`` (the held reading at the current bias, ``omega_base_in_base`` after every step; ``lead`` s from the
        filter's time to the held reading's stamp, 0 at that stamp), the rate whose noise the velocity state carries
        (:mod:`.model`, "Gyro noise in the velocity"); what the leg, zero-rate and flat-foot measurements use."""
        omega = self.R_base_imu @ (self._gyro_imu - self.gyro_bias)  # the held reading at the current bias
        lead = float(self._x[X_LEAD])
        if lead == 0.0:
            return omega
        return omega - lead * self.alpha_base_in_base

    def gyro_noise_shares(self) -> tuple[float, float, float]:
        """``(lever, weight, held)`` of :func:`.model.gyro_noise_shares` at the current state."""
        return gyro_noise_shares(float(self._x[X_LEAD]), float(self._x[X_DT_GYRO]))

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
        settings, step = self._imu_bound
        if settings is not self.settings:
            step = self._bind_imu_step()
        if step is None:
            return DECLINED
        code = step(t, stamp_ns, gyro_imu, accel_imu, out)
        if code == IMU_OK or code == IMU_NOT_FINITE:
            self.stamp_ns = stamp_ns
        return code

    def _bind_imu_step(self) -> Callable[..., int] | None:
        """The IMU step's limits from the current settings, and the backend's IMU step bound to this filter's buffers
        (None: the backend has none)."""
        s = self.settings
        self._imu_limits[:] = (s.max_dt_s, float(s.use_angular_acceleration), s.max_gyro_rad_s, s.max_accel_m_s2)
        step = self.backend.imu_step(self)
        self._imu_bound = (s, step)
        return step

    def base_motion(self) -> tuple[FloatArray, FloatArray]:
        """Bias-corrected ``(omega_base_in_base (3,) rad/s, f_base_in_base (3,) m/s^2 at the base origin)`` from the
        held reading."""
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

    def is_gap_before(self, stamp_ns: int) -> bool:
        """Whether ``stamp_ns`` is more than ``max_dt_s`` after the filter time: an IMU gap, which
        :meth:`propagate_to` crosses without the held reading (False before initialisation)."""
        return self.stamp_ns is not None and (stamp_ns - self.stamp_ns) * 1e-9 > self.settings.max_dt_s

    def propagate_to(self, stamp_ns: int) -> str | None:
        """Propagate the state and covariance from the filter time to ``stamp_ns`` with the held reading.

        Args:
            stamp_ns: target time (ns).

        Returns:
            None on success; otherwise a reason: ``"dt_nonpositive"`` (state unchanged), ``"dt_too_large"``
            (a gap longer than ``max_dt_s``, not propagated with the held reading: the position is carried at the
            estimated velocity and the covariance grows by the gap's transition, process noise and an unknown
            acceleration and rate, ``NumpyBackend.gap_step``; the clock is re-anchored to ``stamp_ns``).

        Raises:
            RuntimeError: the filter is not initialised.
        """
        if self.stamp_ns is None:
            raise RuntimeError("BaseEkf.propagate_to called before initialisation")
        dt = (stamp_ns - self.stamp_ns) * 1e-9
        if dt <= 0.0:
            return "dt_nonpositive"
        if dt > self.settings.max_dt_s:  # is_gap_before's rule, inline: this runs once per IMU sample
            self.backend.gap_step(self, dt)
            self.stamp_ns = int(stamp_ns)
            self._x[X_LEAD] = 0.0
            self._omega_prev_valid = False
            return "dt_too_large"
        steps = self._steps_since_normalise + 1
        normalise = steps >= NORMALISE_EVERY
        self._steps_since_normalise = 0 if normalise else steps
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
            v_base_measured: (3,) m/s in B, ``-(J qdot) - omega_hat_base_in_base x r`` with the filter's angular
                velocity.
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
        lever, _, held = self.gyro_noise_shares()
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
            creep_variance=self._contact_creep_variance,
            up_in_base=self.R_world_base[2],
            gyro_lever_base=lever * self.model.p_base_imu,
            gyro_held=held,
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
            v_base_measured: (k, 3) m/s in B, ``-(J_i qdot) - omega_hat_base_in_base x r_i`` per foot.
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
        ``rolling``) at :attr:`omega_base_in_base_at_state` and the attitude, then :meth:`update_leg_velocities` (gate
        ``settings.foot_gate_nis``).

        Args:
            names: (k,) names of the feet in contact, in foot order (for the results).
            contacts: (n,) bool, which feet are in contact (k of them).
            qdot_joints: (nj,) rad/s. radii: (n,) m, foot sphere radii (zeros for point feet).
            p_base_foot: (n, 3) m, foot centres in B. J6_base_foot: (n, 6, nj) foot Jacobians in B
                (``LegKinematics``, after its ``update``).
            rolling: rolling spherical feet (contact points from the radii; the attitude block of H is left out,
                :mod:`.measurements` "Rolling spherical feet").

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
                                       float(s.encoder_velocity_noise**2), float(s.foot_gate_nis),
                                       self._contact_creep_variance)  # fmt: skip
        _, use_J, sf2, se2, gate, sc2 = noise
        out = np.empty(13 * len(names))
        n = self.backend.stance_update(self, contacts, qdot_joints, radii, p_base_foot, J6_base_foot, rolling, use_J,
                                       sf2, sc2, se2, gate, out)  # fmt: skip
        if n < 0:
            return None
        self._pending_results = (names, out, gate, 0)
        return out

    def zero_rate_measurement(self) -> Measurement:
        """Zero angular rate pseudo-measurement (robot static): ``0 = R_base_imu (omega_imu_in_imu - b_g - n_g)`` at
        the filter's time (:attr:`omega_base_in_base_at_state`, the gyro loading of its shares)."""
        return zero_rate_measurement(
            self.omega_base_in_base_at_state,
            R_base_imu=self.R_base_imu,
            Sigma_gyro_sample=self.model.Sigma_gyro_sample,
            zero_rate_noise=self.settings.zero_rate_noise_rad_s,
            gyro_held=self.gyro_noise_shares()[2],
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

        ``omega_base_in_base = R_base_imu (omega_imu_in_imu - b_g)``: its covariance is ``R_base_imu P_bg R_imu_base``
        plus the gyro white noise of one sample; the cross block with the velocity is ``-P_v,bg R_imu_base``.
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
