"""The reference backend: the filter's and the leg odometry's numerics in numpy (and Python floats where numpy's
per-call overhead dominates 3-vectors), the equations of :mod:`..model` and :mod:`..measurements` as written there.

It declines the compiled shortcuts (:mod:`.base`): their callers then take the general path, made of the operations
below. The filter's state lives in the buffers of :mod:`..layout`; the operations read and write it through the
filter's views (``ekf.p_world_base``, ``ekf.P``, ...), which assign into those buffers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.common.output_layout import (
    ACCEL_BIAS,
    GYRO_BIAS,
    OMEGA_BASE_IN_BASE,
    P_WORLD_BASE,
    POSE_COVARIANCE,
    QUAT_WORLD_BASE_XYZW,
    TWIST_COVARIANCE,
    V_BASE_IN_BASE,
)
from robot_state_estimator.estimation.ekf.backends.numpy_updates import (
    gyro_correlation,
    innovation_terms,
    joseph_update,
    stack_measurements,
)
from robot_state_estimator.estimation.ekf.layout import (
    BG_SL,
    C_LEG_SCALE_VAR,
    CROSS_HELD,
    CROSS_PREV,
    DECLINED,
    N_STATES,
    P_SL,
    TH_SL,
    V_SL,
    X_DT_GYRO,
    X_LEAD,
)
from robot_state_estimator.estimation.ekf.measurements import (
    Measurement,
    UpdateResult,
    gated_result,
    rotation_measurement,
)
from robot_state_estimator.estimation.ekf.model import gyro_noise_shares
from robot_state_estimator.estimation.ekf.numerics import (
    _SKEW_BASIS,
    _nis3,
    _orthonormalise,
    _rot,
    _rot_t,
    quat_xyzw_from_matrix,
    skew,
)
from robot_state_estimator.estimation.noise_model import ground_plane_projector

if TYPE_CHECKING:
    from robot_state_estimator.estimation.contact import ContactDetector, ContactForceEstimator
    from robot_state_estimator.estimation.ekf.backends.base import JointStep
    from robot_state_estimator.estimation.ekf.filter import BaseEkf
    from robot_state_estimator.estimation.joint_input import JointInput
    from robot_state_estimator.estimation.kinematics import LegKinematics

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]

_I3 = np.eye(3)
_ZEROS3 = np.zeros(3)


def _sub_flat_index(idx: tuple[int, ...]) -> NDArray[np.intp]:
    """Flat indices of the sub-matrix ``P[np.ix_(idx, idx)]`` of a 15 x 15 P (for ``P.take``)."""
    a = np.asarray(idx)
    flat: NDArray[np.intp] = a[:, None] * N_STATES + a[None, :]
    return flat


_POSE_FLAT = _sub_flat_index((0, 1, 2, 6, 7, 8))
#: the rows of the error state the twist reads (dv, dbg)
_CROSS_ROWS = np.array([3, 4, 5, 12, 13, 14])
_TWIST_FLAT = _sub_flat_index((3, 4, 5, 12, 13, 14))


@dataclass(frozen=True)
class _StackedLayout:
    """Constant layout of a stacked k-foot update: H's identity part and the flat indices of the 3 x 3
    diagonal blocks of a (3k, 3k) matrix (row-major, block by block)."""

    H_template: FloatArray
    diag_blocks: NDArray[np.intp]

    @staticmethod
    def build(k: int) -> _StackedLayout:
        H = np.zeros((3 * k, N_STATES))
        for i in range(k):
            H[3 * i : 3 * i + 3, V_SL] = _I3
        n = 3 * k
        idx = [(3 * i + a) * n + 3 * i + b for i in range(k) for a in range(3) for b in range(3)]
        return _StackedLayout(H, np.array(idx, dtype=np.intp))


_STACKS: dict[int, _StackedLayout] = {}


def _carry_gyro_cross(ekf: BaseEkf, Phi: FloatArray, lead: float) -> None:
    """The error's covariance with the gyro readings' noise through a propagation of transition Phi (15, 15): ``C <-
    Phi C``; the previous reading's columns zeroed once the state has reached the held reading's stamp (``lead`` 0:
    no later update uses that reading). :mod:`..model`, "Correlated gyro noise"."""
    C = ekf._gyro_cross
    if lead <= 0.0:
        C[:, CROSS_PREV : CROSS_PREV + 3] = 0.0
    if C.any():
        ekf._gyro_cross = Phi @ C


class NumpyBackend:
    """The numpy reference of every operation of :class:`~.base.Backend` (it declines the shortcuts)."""

    name = "numpy"
    compiled = False

    def __reduce__(self) -> str:
        return "NUMPY_BACKEND"  # the module's instance: copies share it

    def warm_up(self) -> None:
        """Nothing to compile."""

    # -- the filter ------------------------------------------------------------------------------------------------

    def set_imu(self, ekf: BaseEkf, gyro_imu: FloatArray, accel_imu: FloatArray, dt_gyro: float) -> None:
        ekf._gyro_imu = np.asarray(gyro_imu, dtype=float)
        ekf._accel_imu = np.asarray(accel_imu, dtype=float)
        omega = np.array(ekf.model.omega_base_in_base(ekf._gyro_imu.tolist(), ekf.gyro_bias.tolist()))
        if dt_gyro > 0.0:
            ekf.alpha_base_in_base = (omega - ekf._omega_prev_base_in_base) / dt_gyro
        else:
            ekf.alpha_base_in_base = _ZEROS3
        ekf._omega_prev_base_in_base = omega
        ekf._x[X_DT_GYRO] = max(dt_gyro, 0.0)
        C = ekf._gyro_cross  # the held reading becomes the previous one; a new sample is independent of the error
        C[:, CROSS_PREV : CROSS_PREV + 3] = C[:, CROSS_HELD : CROSS_HELD + 3]
        C[:, CROSS_HELD : CROSS_HELD + 3] = 0.0

    def propagate(self, ekf: BaseEkf, dt: float, normalise: bool) -> None:
        model = ekf.model
        w, f = ekf.base_motion_lists()
        ekf.omega_base_in_base = np.array(w)
        ekf.f_base_in_base = np.array(f)
        R = ekf.R_world_base
        R_l = R.tolist()
        v = ekf.v_base_in_base.tolist()
        Phi, M = model.error_transition(R, ekf.v_base_in_base, ekf.omega_base_in_base, dt)

        # Nominal state, integrated in the world frame (Python floats: 3-vectors).
        g = model.g_world.tolist()
        Rf = _rot(R_l, f)
        a_world = [Rf[0] + g[0], Rf[1] + g[1], Rf[2] + g[2]]
        v_world = _rot(R_l, v)
        h = 0.5 * dt * dt
        p = ekf.p_world_base.tolist()
        ekf.p_world_base = np.array([p[i] + v_world[i] * dt + h * a_world[i] for i in range(3)])
        v_world = [v_world[i] + a_world[i] * dt for i in range(3)]
        R_new = R @ pin.exp3(ekf.omega_base_in_base * dt)
        if normalise:
            R_new = _orthonormalise(R_new)
        ekf.R_world_base = R_new
        ekf.v_base_in_base = np.array(_rot_t(R_new.tolist(), v_world))

        # P = Phi P Phi^T + Q_d, Q_d = G Q_c G^T dt.
        P = Phi @ ekf.P @ Phi.T
        P += model.process_noise(M) * dt
        P += P.T
        P *= 0.5
        ekf.P = P
        lead = max(float(ekf._x[X_LEAD]) - dt, 0.0)
        ekf._x[X_LEAD] = lead
        _carry_gyro_cross(ekf, Phi, lead)

    def gap_step(self, ekf: BaseEkf, dt: float) -> None:
        """An IMU gap of ``dt`` s (``BaseEkf.propagate_to``'s ``dt_too_large``); both backends (rare: no kernel).

        No reading covers the gap, so the position is carried at the estimated velocity, ``p += R v dt`` (attitude,
        velocity and biases kept), and ``P = Phi P Phi^T + G Q_c G^T dt + Q_gap``: ``Phi`` the identity but the error
        dynamics' position row (``ekf.model``, ``d(dp)/dt = R dv - R [v]x dtheta``) over ``dt``, ``d dp / d dv = R dt``,
        ``d dp / d dtheta = -R [v]x dt``; ``Q_gap`` an unknown constant mean acceleration ``a`` of the base over the gap
        (stddev ``ekf.gap_accel_std`` per axis), ``dv += a dt`` and ``dp += R a dt^2 / 2``, and an unknown mean angular
        rate ``w`` (``ekf.gap_rate_std``; the attitude is kept), ``dtheta += w dt``. Without it the pose would jump by
        ``v dt`` and ``omega dt`` at the next reading while its covariance stayed put.
        """
        s = ekf.settings
        R = ekf.R_world_base
        v = ekf.v_base_in_base
        ekf.p_world_base = ekf.p_world_base + (R @ v) * dt
        Phi = np.eye(N_STATES)
        Phi[P_SL, V_SL] = R * dt
        Phi[P_SL, TH_SL] = -(R @ skew(v)) * dt
        P = Phi @ ekf.P @ Phi.T
        P += ekf.model.process_noise(skew(v)) * dt
        qa = s.gap_accel_std**2
        P[V_SL, V_SL] += (qa * dt**2) * _I3
        P[P_SL, P_SL] += (qa * dt**4 / 4.0) * _I3
        P[P_SL, V_SL] += (qa * dt**3 / 2.0) * R
        P[V_SL, P_SL] += (qa * dt**3 / 2.0) * R.T
        P[TH_SL, TH_SL] += (s.gap_rate_std**2 * dt**2) * _I3
        ekf.P = 0.5 * (P + P.T)
        _carry_gyro_cross(ekf, Phi, 0.0)

    def imu_step(self, ekf: BaseEkf) -> Callable[..., int] | None:
        return None

    def leg_update(
        self,
        ekf: BaseEkf,
        names: Sequence[str],
        v_base_measured: FloatArray,
        p_base_foot: FloatArray,
        J_base_foot: FloatArray | None,
        gate: float,
        H_attitude: FloatArray | None,
    ) -> list[UpdateResult]:
        s = ekf.settings
        k = len(names)
        r = np.asarray(p_base_foot, dtype=float).reshape(k, 3)
        stack = _STACKS.get(k)
        if stack is None:
            stack = _STACKS[k] = _StackedLayout.build(k)
        r_skew = (r @ _SKEW_BASIS).reshape(k, 3, 3)  # [r_i]x for all feet in one product (exact)
        # Stacked H (3k, 15): identity on dv, [r_i]x R_base_imu on dbg.
        H = stack.H_template.copy()
        H[:, BG_SL] = (r_skew @ ekf.R_base_imu).reshape(3 * k, 3)
        if H_attitude is not None:
            H[:, TH_SL] = np.asarray(H_attitude, dtype=float).reshape(3 * k, 3)
        # R: the gyro samples' noise, common to every foot, through the levers c_i - r (the interpolated rate's:
        # (1 - f) n_prev + f n_held; model, "Gyro noise in the velocity"), + per foot: foot noise, encoder noise
        # through J, creep.
        x = ekf._x
        lever, weight, held = gyro_noise_shares(float(x[X_LEAD]), float(x[X_DT_GYRO]))
        A = ((r - lever * ekf.model.p_base_imu) @ _SKEW_BASIS).reshape(3 * k, 3)  # [c_i - lever r]x stacked
        G = np.hstack([(1.0 - held) * A, held * A])  # the rows' load of [n_prev, n_held]
        R_stack = weight * (A @ ekf.model.Sigma_gyro_sample @ A.T)  # (3k, 3k), blocks [a_i]x Sigma_g [a_j]x^T
        Rm = np.broadcast_to((s.foot_velocity_noise**2) * _I3, (k, 3, 3)).copy()
        if J_base_foot is not None and s.encoder_velocity_noise > 0.0:
            J = np.asarray(J_base_foot, dtype=float)
            Rm += (s.encoder_velocity_noise**2) * (J @ J.transpose(0, 2, 1))
        sc2 = ekf.contact_creep_variance
        if sc2 > 0.0:  # the creep on the ground plane (noise_model, part 1b)
            Rm += sc2 * ground_plane_projector(ekf.R_world_base[2])
        R_stack.ravel()[stack.diag_blocks] += Rm.ravel()
        U = gyro_correlation(ekf, H, G)
        PHt, S = innovation_terms(ekf, H, R_stack, U)
        S_feet = S.take(stack.diag_blocks).reshape(k, 3, 3)  # per-foot innovation covariances
        y = np.asarray(v_base_measured, dtype=float).reshape(k, 3) - ekf.v_base_in_base
        # Per-foot NIS y_i^T S_ii^-1 y_i in closed form (3 x 3 adjugate on Python floats).
        nis_list = _nis3(S_feet.tolist(), y.tolist())
        results = []
        accepted = []
        for i in range(k):
            nis = nis_list[i]
            ok = math.isfinite(nis) and (gate <= 0.0 or nis <= gate)
            results.append(UpdateResult(names[i], y[i], S_feet[i], nis, ok, "ok" if ok else "gated"))
            if ok:
                accepted.append(i)
        if len(accepted) == k:
            joseph_update(ekf, y.reshape(-1), H, R_stack, PHt=PHt, S=S, G=G, U=U)
        elif accepted:
            rows = (3 * np.asarray(accepted)[:, None] + np.arange(3)).reshape(-1)
            joseph_update(
                ekf,
                y[accepted].reshape(-1),
                H[rows],
                R_stack[np.ix_(rows, rows)],
                PHt=PHt[:, rows],
                S=S[np.ix_(rows, rows)],
                G=G[rows],
                U=None if U is None else U[:, rows],
            )
        return results

    def stance_update(self, ekf: BaseEkf, *args: Any) -> int:
        return DECLINED

    def update(self, ekf: BaseEkf, measurements: list[Measurement], gate: float) -> list[UpdateResult]:
        results: list[UpdateResult] = []
        accepted: list[Measurement] = []
        for m in measurements:
            _, S = innovation_terms(ekf, m.H, m.R, gyro_correlation(ekf, m.H, m.gyro_loading))
            result = gated_result(m.name, m.innovation, S, gate)
            results.append(result)
            if result.accepted:
                accepted.append(m)
        if accepted:
            y, H, R, G = stack_measurements(accepted, ekf.model.Sigma_gyro_sample)
            joseph_update(ekf, y, H, R, G=G)
        return results

    def rotation_update(
        self,
        ekf: BaseEkf,
        names: Sequence[str],
        feet: IntArray,
        qdot_joints: FloatArray,
        J6_base_foot: FloatArray,
        rotation_noise: float,
        encoder_noise: float,
        gate: float,
    ) -> list[UpdateResult]:
        omega, held = ekf.omega_base_in_base_at_state, ekf.gyro_noise_shares()[2]  # the rate at the filter's time
        measurements = [
            rotation_measurement(
                names[j],
                J6_base_foot[i, 3:6, :],
                qdot_joints,
                omega,
                R_base_imu=ekf.R_base_imu,
                Sigma_gyro_sample=ekf.model.Sigma_gyro_sample,
                rotation_noise=rotation_noise,
                encoder_noise=encoder_noise,
                gyro_held=held,
            )
            for j, i in enumerate(np.asarray(feet).tolist())
        ]
        return self.update(ekf, measurements, gate)

    def quat_xyzw(self, ekf: BaseEkf) -> FloatArray:
        return np.array(quat_xyzw_from_matrix(ekf.R_world_base.tolist()))

    def pose_covariance(self, ekf: BaseEkf) -> FloatArray:
        T = np.eye(6)
        T[3:6, 3:6] = ekf.R_world_base
        C = T @ ekf.P.take(_POSE_FLAT) @ T.T  # the (p, theta) 6 x 6 block of P, mapped
        C += C.T
        C *= 0.5
        s2 = ekf._c[C_LEG_SCALE_VAR]
        if s2 > 0.0:  # the legs' scale, not estimated (settings.leg_scale_std)
            d = (ekf.p_world_base - ekf._p_scale_anchor)[:2]
            C[:2, :2] += s2 * np.outer(d, d)
        return C

    def twist_covariance(self, ekf: BaseEkf) -> FloatArray:
        model = ekf.model
        T = model.twist_transform
        C = T @ ekf.P.take(_TWIST_FLAT) @ T.T  # the (v, b_g) 6 x 6 block of P, mapped
        lever, weight, held = gyro_noise_shares(float(ekf._x[X_LEAD]), float(ekf._x[X_DT_GYRO]))
        C += model.twist_noise_at(lever, weight, lever * held)
        # the error's covariance with the readings' noise [n_prev, n_held], which the twist carries as B n (model)
        rs = lever * skew(model.p_base_imu)
        B = np.zeros((6, 6))
        B[:3, :3] = (1.0 - held) * rs
        B[:3, 3:] = held * rs
        B[3:, 3:] = _I3
        X = T @ ekf._gyro_cross[_CROSS_ROWS] @ B.T
        C += X
        C += X.T
        C += C.T
        C *= 0.5
        return C

    def outputs(self, ekf: BaseEkf, out: FloatArray) -> None:
        out[P_WORLD_BASE] = ekf.p_world_base
        out[QUAT_WORLD_BASE_XYZW] = self.quat_xyzw(ekf)
        out[V_BASE_IN_BASE] = ekf.v_base_in_base
        out[OMEGA_BASE_IN_BASE] = ekf.omega_base_in_base
        out[POSE_COVARIANCE] = self.pose_covariance(ekf).ravel()
        out[TWIST_COVARIANCE] = self.twist_covariance(ekf).ravel()
        out[ACCEL_BIAS] = ekf.accel_bias
        out[GYRO_BIAS] = ekf.gyro_bias

    def finite_outputs(self, ekf: BaseEkf, out: FloatArray) -> bool:
        if not self.state_is_finite(ekf):
            return False
        self.outputs(ekf, out)
        return True

    def state_is_finite(self, ekf: BaseEkf) -> bool:
        total = float(ekf.P.sum()) + float(ekf.R_world_base.sum())
        total += sum(ekf.p_world_base.tolist()) + sum(ekf.v_base_in_base.tolist())
        total += sum(ekf.accel_bias.tolist()) + sum(ekf.gyro_bias.tolist())
        return math.isfinite(total)

    # -- leg odometry ----------------------------------------------------------------------------------------------

    def joint_velocity_step(
        self, q: FloatArray, q_prev: FloatArray, qdot: FloatArray, dt: float, alpha: float, filtered: bool
    ) -> None:
        raw = (q - q_prev) / dt
        if filtered:
            qdot[:] = qdot + alpha * (raw - qdot)
        else:
            qdot[:] = raw
        q_prev[:] = q

    def schmitt_step(
        self,
        values: FloatArray,
        stamp_ns: int,
        on: float,
        off: float,
        min_on_ns: int,
        min_off_ns: int,
        raw: BoolArray,
        in_contact: BoolArray,
        pending: BoolArray,
        since_ns: NDArray[np.int64],
    ) -> None:
        # Plain Python on lists (numpy scalar indexing costs more than the logic for a few feet).
        raw_l = raw.tolist()
        in_contact_l = in_contact.tolist()
        pending_l = pending.tolist()
        since_l = since_ns.tolist()
        for i, v in enumerate(np.asarray(values, dtype=float).tolist()):
            if not math.isfinite(v):
                continue
            if v > on:
                raw_l[i] = True
            elif v < off:
                raw_l[i] = False
            if raw_l[i] == in_contact_l[i]:
                pending_l[i] = False
                continue
            if not pending_l[i]:
                pending_l[i] = True
                since_l[i] = stamp_ns
            hold_ns = min_on_ns if raw_l[i] else min_off_ns
            if stamp_ns - since_l[i] >= hold_ns:
                in_contact_l[i] = raw_l[i]
                pending_l[i] = False
        raw[:] = raw_l
        in_contact[:] = in_contact_l
        pending[:] = pending_l
        since_ns[:] = since_l

    def leg_velocity_terms(
        self,
        idx: IntArray,
        qdot_joints: FloatArray,
        omega_base_in_base: FloatArray,
        R_world_base: FloatArray,
        radii: FloatArray,
        p_base_foot: FloatArray,
        J6_base_foot: FloatArray,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        z = R_world_base[2]  # world vertical e_z in B (R^T e_z)
        Sz = skew(z)
        rho = radii[:, None]
        c = p_base_foot[idx] - rho * z  # r + d, d = -rho R^T e_z
        J6 = J6_base_foot[idx]
        # J_c = J_lin - [d]x J_ang = J_lin + rho [z]x J_ang
        J_c = J6[:, :3, :] + radii[:, None, None] * (Sz @ J6[:, 3:, :])
        w_s = skew(omega_base_in_base)
        v = -(J_c @ qdot_joints) - c @ w_s.T
        w_foot = J6[:, 3:, :] @ qdot_joints + omega_base_in_base
        # [w_f]x [d]x = -rho [w_f]x [z]x
        H_th = (w_foot @ _SKEW_BASIS).reshape(-1, 3, 3) @ Sz
        H_th *= -radii[:, None, None]
        return v, c, J_c, H_th

    def point_contact_terms(
        self,
        idx: IntArray,
        qdot_joints: FloatArray,
        omega_base_in_base: FloatArray,
        p_base_foot: FloatArray,
        J6_base_foot: FloatArray,
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        r = p_base_foot[idx]
        J = J6_base_foot[:, :3, :][idx]
        return -(J @ qdot_joints) - r @ skew(omega_base_in_base).T, r, J

    def gather_joints(self, *args: Any) -> int:
        return DECLINED

    def prepare_joints(self, *args: Any) -> int:
        return DECLINED

    def point_foot_forces(self, forces: ContactForceEstimator, tau_joints: FloatArray, R_world_base: FloatArray) -> int:
        return DECLINED

    def torque_contacts(self, forces: ContactForceEstimator, *args: Any) -> int:
        return DECLINED

    def joint_step(
        self,
        ekf: BaseEkf,
        kin: LegKinematics,
        forces: ContactForceEstimator,
        detector: ContactDetector,
        joint_input: JointInput,
        radii: FloatArray,
        rolling: bool,
        high_nis: float,
    ) -> JointStep | None:
        return None


#: the reference backend (one per process: it holds no state)
NUMPY_BACKEND = NumpyBackend()
