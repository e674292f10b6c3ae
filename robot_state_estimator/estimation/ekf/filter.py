"""Error-state EKF of the floating base from an IMU and leg kinematics.

State (nominal), following mim_estimation's ``BaseEkfWithImuKin`` and Bloesch et al. 2012 ("State estimation
for legged robots: consistent fusion of leg kinematics and IMU", RSS):

- ``p_world_base`` (3,) m: base origin in the world W (``odom``);
- ``v_base_in_base`` (3,) m/s: base origin velocity, in the base frame B;
- ``R_world_base`` (3, 3): base attitude;
- ``accel_bias`` (3,) m/s^2 and ``gyro_bias`` (3,) rad/s: IMU biases, in the IMU frame S.

Error state (15,), order ``[dp_W, dv_B, dtheta, dba_S, dbg_S]``, with the attitude perturbed on the right
(local / body frame): ``R = R_hat Exp(dtheta)`` (Solà 2017, "Quaternion kinematics for the error-state
Kalman filter", sec. 5 and 7, local perturbation). Everything else is additive.

IMU in the base frame. The IMU frame S is posed in B by ``X_base_imu = (R_BS, r = p_BS)``. With gyro and
accelerometer readings ``omega_S``, ``f_S`` (specific force at the IMU origin):

    omega_B = R_BS (omega_S - b_g)
    f_B     = R_BS (f_S - b_a) - alpha_B x r - omega_B x (omega_B x r)   (specific force at the base origin)

(rigid-body acceleration transport; ``alpha_B`` from the difference of consecutive bias-corrected gyro
readings, a one-sample backward difference). mim's filter ignores the lever arm and the rotation in its
measurement Jacobian; here both enter the process and measurement Jacobians.

Continuous dynamics: ``p_dot = R v``, ``v_dot = f_B + R^T g - omega x v``, ``R_dot = R [omega]x``,
``b_dot = n_b``. The nominal state is integrated in the world frame with the readings held over the
interval (exact for constant ``a_W = R f_B + g`` and ``omega``): ``p += v_W dt + a_W dt^2 / 2``,
``v_W += a_W dt``, ``R = R Exp(omega dt)``, ``v_B = R^T v_W``.

Error dynamics ``d(dx)/dt = A dx + G n`` with ``n = [n_a, n_g, n_ba, n_bg]`` (S frame) and
``L = [omega x r]x + [omega]x [r]x`` (derivative of the lever-arm term w.r.t. omega):

    d(dp)     = R dv - R [v]x dtheta
    d(dv)     = -[omega]x dv + [R^T g]x dtheta - R_BS dba - ([v]x + L) R_BS (dbg + n_g) - R_BS n_a
    d(dtheta) = -[omega]x dtheta - R_BS (dbg + n_g)
    d(dba)    = n_ba,  d(dbg) = n_bg

Discretisation: ``Phi = I + A dt + (A dt)^2 / 2``, ``Q_d = G Q_c G^T dt`` (first-order Van Loan; Solà 2017
sec. 5.4.3 and appendix on the integration of random noise: a white noise of continuous density
``sigma_c`` integrated over ``dt`` has variance ``sigma_c^2 dt``). SDFormat gives per-sample stddevs
``sigma_d``: the density is ``sigma_c^2 = sigma_d^2 * dt_nominal`` with ``dt_nominal = 1 / update_rate``
(:func:`imu_noise_from_spec`); dt is the actual sample period, so irregular sampling is handled and the
noise is scaled by dt exactly once (mim scales it twice).

Update (per foot in stance, Bloesch 2012 eq. 9): the leg-odometry velocity ``y_i = -(J_i qdot) -
omega_hat_B x r_i`` measures ``v_B``; since ``omega_B = omega_hat_B - R_BS (dbg + n_g)``,
``y_i = v_B + [r_i]x R_BS (dbg + n_g) + noise``, so ``H_i = [0, I, 0, 0, [r_i]x R_BS]`` and the measurement
noise is ``sigma_foot^2 I + sigma_enc^2 J_i J_i^T + [r_i]x R_BS Sigma_g R_SB [r_i]x^T``
(:func:`~robot_state_estimator.estimation.noise_model.leg_measurement_covariance`, whose docstring gives the
sources; the batched numpy path and the kernels compute the same sum, tested to 1e-12).

Rolling spherical feet (radius rho_i; :mod:`robot_state_estimator.estimation.kinematics`): the body point at
rest is the contact point ``c_i = r_i + d_i``, ``d_i = -rho_i R^T e_z``, and
``y_i = -(J_c,i qdot) - omega_hat_B x c_i`` with ``J_c,i = J_lin,i - [d_i]x J_ang,i``. Writing
``y_i = -J_lin qdot - omega_hat x r_i - omega_foot x d_i`` (``omega_foot = omega_B + J_ang qdot``, the foot's
angular velocity in B), two state errors enter through the estimated quantities: the gyro bias as above with
``c_i`` in place of ``r_i``, and the attitude through ``d_i``: with ``R = R_hat Exp(dtheta)``,
``d_true = -rho (I - [dtheta]x) R_hat^T e_z = d_hat + [d_hat]x dtheta``, so
``y_i - v_B = -omega_foot x (d_hat - d_true) = [omega_foot]x [d_hat]x dtheta``. Hence
``H_i = [0, I, [omega_foot]x [d_i]x, 0, [c_i]x R_BS]``, and the noise uses ``c_i`` and ``J_c,i``. rho = 0 gives
the point-foot measurement above (the attitude block vanishes). Each foot is gated
on its prior NIS (chi-square, 3 DoF), then the accepted feet are fused in one stacked update with the Joseph
form ``P = (I - K H) P (I - K H)^T + K R K^T`` (Bucy and Joseph 1968, "Filtering for stochastic processes
with applications to guidance"), symmetrised. The error is injected and the covariance reset with
``G = I - [dtheta / 2]x`` on the attitude block (Solà 2017 sec. 7.2).

Implementation. The state lives in preallocated float64 buffers (the layout of
:mod:`robot_state_estimator.estimation.ekf_kernels`) that every step updates in place; the public attributes
(``p_world_base``, ``P``, ...) are live views of them, and assigning one copies the values in. The per-sample
steps (:meth:`BaseEkf.set_imu`, :meth:`BaseEkf.propagate_to`, :meth:`BaseEkf.update_leg_velocities`,
:meth:`BaseEkf.update`, the outputs; merged per sample in :meth:`BaseEkf.imu_step` and
:meth:`BaseEkf.update_stance_feet`) run numba kernels (``ekf_kernels``, a few microseconds each) when
``BaseEkf.use_kernels`` is True (the default when numba is importable and ``ROBOT_STATE_ESTIMATOR_DISABLE_JIT``
is not set, see :mod:`.jit`), else the numpy reference code of this module; both compute the same numbers up to
rounding (tested to 1e-12).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

try:  # LAPACK's Cholesky solve without numpy.linalg's per-call overhead (a few us on 12 x 12)
    from scipy.linalg.lapack import dposv as _dposv
except ImportError:  # pragma: no cover - scipy is optional
    _dposv = None

from robot_state_estimator.common.output_layout import (
    ACCEL_BIAS,
    GYRO_BIAS,
    OMEGA_BASE_IN_BASE,
    OUTPUT_SIZE,
    P_WORLD_BASE,
    POSE_COVARIANCE,
    QUAT_WORLD_BASE_XYZW,
    TWIST_COVARIANCE,
    V_BASE_IN_BASE,
)
from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation import jit
from robot_state_estimator.estimation.ekf.numerics import (
    _SKEW_BASIS,
    _block_diag,
    _cross,
    _mat,
    _mat3,
    _nis3,
    _orthonormalise,
    _rot,
    _rot_t,
    _sub,
    _vec,
    cross3,
    quat_xyzw_from_matrix,
    skew,
)
from robot_state_estimator.estimation.noise_model import leg_measurement_covariance
from robot_state_estimator.estimation.settings import EkfSettings

if jit.numba_available():
    from robot_state_estimator.estimation.ekf.backends.kernels import filter_kernels as _k
    from robot_state_estimator.estimation.ekf.backends.kernels.filter_kernels import (
        C_G,
        C_QB,
        C_R,
        C_RBS,
        C_SA,
        C_SG,
        C_SGS,
        C_SIZE,
        IMU_BAD_INPUT,
        IMU_NOT_FINITE,
        IMU_OK,
        X_ACCEL,
        X_ALPHA,
        X_BA,
        X_BG,
        X_F,
        X_GYRO,
        X_OMEGA,
        X_OMEGA_PREV,
        X_P,
        X_R,
        X_SIZE,
        X_V,
    )
else:  # pragma: no cover - numba is optional; the same layout without the kernels
    _k = None  # type: ignore[assignment]
    X_P, X_V, X_R, X_BA, X_BG, X_OMEGA, X_ALPHA, X_F, X_GYRO, X_ACCEL, X_OMEGA_PREV, X_SIZE = (
        0, 3, 6, 15, 18, 21, 24, 27, 30, 33, 36, 39,
    )  # fmt: skip
    C_RBS, C_R, C_G, C_SA, C_SG, C_QB, C_SGS, C_SIZE = 0, 9, 12, 15, 24, 33, 39, 48
    IMU_OK, IMU_NOT_FINITE, IMU_BAD_INPUT = 0, 1, 2

FloatArray = NDArray[np.float64]
_tuple_new = tuple.__new__

N_STATES = 15
P_SL = slice(0, 3)
V_SL = slice(3, 6)
TH_SL = slice(6, 9)
BA_SL = slice(9, 12)
BG_SL = slice(12, 15)
#: the pose rows/columns of P: dp_W then dtheta_B
_POSE_IDX = np.array([0, 1, 2, 6, 7, 8])

_I3 = np.eye(3)
_I15 = np.eye(N_STATES)
#: ``ekf_kernels.imu_step``'s compiled entry point (``jit.entry_point``; its argument types never change), made at
#: the first :meth:`BaseEkf.imu_step`
_imu_step_entry: list[Any] = [None]


@dataclass(frozen=True)
class ImuNoise:
    """Continuous-time IMU noise densities, per axis of the IMU frame S.

    Attributes:
        accel_density: (3,) m/s^2/sqrt(Hz), accelerometer white noise sigma_c.
        gyro_density: (3,) rad/s/sqrt(Hz), gyroscope white noise sigma_c.
        accel_bias_random_walk: (3,) m/s^3/sqrt(Hz).
        gyro_bias_random_walk: (3,) rad/s^2/sqrt(Hz).
        gyro_sample_stddev: (3,) rad/s, per-sample gyroscope stddev (used where a single reading enters a
            measurement: leg velocity, twist covariance, zero-rate update).
        accel_bias_prior_std: (3,) m/s^2, spread of the turn-on accelerometer bias (0 = use settings).
        gyro_bias_prior_std: (3,) rad/s, spread of the turn-on gyroscope bias (0 = use settings).
    """

    accel_density: FloatArray
    gyro_density: FloatArray
    accel_bias_random_walk: FloatArray
    gyro_bias_random_walk: FloatArray
    gyro_sample_stddev: FloatArray
    accel_bias_prior_std: FloatArray
    gyro_bias_prior_std: FloatArray


def imu_noise_from_spec(imu: ImuSpec | None, settings: EkfSettings) -> ImuNoise:
    """IMU noise densities from the description's SDF noise, with settings as fallback and override.

    Per axis, when ``settings.use_description_noise`` and the SDF noise is enabled with ``stddev > 0``:
    ``sigma_c = sigma_d * sqrt(dt_nominal)``, ``dt_nominal = 1 / update_rate`` (``settings.nominal_imu_rate_hz``
    when the update rate is 0). A Gauss-Markov dynamic bias (``dynamic_bias_stddev`` sigma_b, correlation
    time tau) is modelled as a random walk of density ``sigma_b``: gz-sensors (``GaussianNoiseModel``) drives
    the bias with discrete variance ``sigma_b^2 tau / 2 (1 - exp(-2 dt / tau)) ~ sigma_b^2 dt``, so sigma_b is
    the density of the driving white noise (the steady-state stddev is ``sigma_b sqrt(tau / 2)``); the random
    walk matches the short-term growth and is conservative beyond tau. The constant offset gz-sensors adds to
    every sample (``mean``) and the turn-on bias (``bias_mean`` with a random sign, ``bias_stddev``) are what the
    filter's bias state must absorb: a zero-mean prior of stddev ``sqrt(mean^2 + bias_mean^2 + bias_stddev^2)``.
    Other axes use the settings' densities.

    Args:
        imu: the IMU spec (None: settings only).
        settings: filter settings.

    Returns:
        The noise model.
    """
    rate = settings.nominal_imu_rate_hz
    if imu is not None and imu.update_rate > 0.0:
        rate = imu.update_rate
    dt_nominal = 1.0 / rate
    acc_d = np.full(3, settings.accel_noise_density)
    gyr_d = np.full(3, settings.gyro_noise_density)
    acc_rw = np.full(3, settings.accel_bias_random_walk)
    gyr_rw = np.full(3, settings.gyro_bias_random_walk)
    acc_b0 = np.zeros(3)
    gyr_b0 = np.zeros(3)
    if imu is not None and settings.use_description_noise:
        for axis in range(3):
            for spec, dens, rw, b0 in (
                (imu.linear_acceleration_noise[axis], acc_d, acc_rw, acc_b0),
                (imu.angular_velocity_noise[axis], gyr_d, gyr_rw, gyr_b0),
            ):
                if not spec.enabled:
                    continue
                if spec.stddev > 0.0:
                    dens[axis] = spec.stddev * math.sqrt(dt_nominal)
                if spec.dynamic_bias_stddev > 0.0 and spec.dynamic_bias_correlation_time > 0.0:
                    rw[axis] = spec.dynamic_bias_stddev
                b0[axis] = math.sqrt(spec.mean**2 + spec.bias_mean**2 + spec.bias_stddev**2)
    return ImuNoise(
        accel_density=acc_d,
        gyro_density=gyr_d,
        accel_bias_random_walk=acc_rw,
        gyro_bias_random_walk=gyr_rw,
        gyro_sample_stddev=gyr_d / math.sqrt(dt_nominal),
        accel_bias_prior_std=acc_b0,
        gyro_bias_prior_std=gyr_b0,
    )


class UpdateResult(NamedTuple):
    """What one measurement update computed (filterpy-style exposure, for diagnostics and logs).

    A NamedTuple (immutable, cheap to create on the 1 kHz path).

    Attributes:
        name: what was measured (foot frame name, ``"zero_rate"``).
        innovation: (m,) measurement minus prediction (m/s for feet, rad/s for the zero-rate update).
        S: (m, m) innovation covariance ``H P H^T + R``.
        nis: normalised innovation squared ``y^T S^-1 y`` (chi-square with m DoF when consistent).
        accepted: whether it passed the gate and was fused.
        reason: ``"ok"``, ``"gated"`` (NIS above the gate) or ``"singular"``.
    """

    name: str
    innovation: FloatArray
    S: FloatArray
    nis: float
    accepted: bool
    reason: str = "ok"


def leg_results(names: Sequence[str], out: FloatArray, gate: float) -> list[UpdateResult]:
    """One :class:`UpdateResult` per foot of a stacked leg update from the kernel's output ``out`` (13 k,):
    innovations (k, 3) m/s, innovation covariances (k, 3, 3), NIS (k,) (:func:`.ekf_kernels.leg_update`); a foot
    is accepted when its NIS is finite and within ``gate`` (<= 0: no gate). The arrays are views of ``out``."""
    k = len(names)
    ys = out[: 3 * k].reshape(k, 3)
    Ss = out[3 * k : 12 * k].reshape(k, 3, 3)
    results = []
    for i, nis in enumerate(out[12 * k : 13 * k].tolist()):
        ok = math.isfinite(nis) and (gate <= 0.0 or nis <= gate)
        # tuple.__new__: the NamedTuple without its Python-level __new__
        results.append(_tuple_new(UpdateResult, (names[i], ys[i], Ss[i], nis, ok, "ok" if ok else "gated")))
    return results


@dataclass(frozen=True)
class Measurement:
    """A linear(ised) measurement for :meth:`BaseEkf.update`.

    Attributes:
        name: label reported in the :class:`UpdateResult`.
        innovation: (m,) ``z - h(x_hat)``.
        H: (m, 15) Jacobian of h w.r.t. the error state.
        R: (m, m) measurement noise covariance.
    """

    name: str
    innovation: FloatArray
    H: FloatArray
    R: FloatArray


def gated_result(name: str, innovation: FloatArray, S: FloatArray, gate: float) -> UpdateResult:
    """The chi-square gate of one measurement: NIS ``y^T S^-1 y`` and whether it passes ``gate`` (<= 0: no gate).

    Args:
        name: the measurement's name (a foot).
        innovation: (m,) innovation ``y``.
        S: (m, m) its covariance (symmetric).
        gate: NIS threshold (chi-square quantile); <= 0 accepts every finite NIS.

    Returns:
        The :class:`UpdateResult`; status ``"singular"`` (NIS inf, refused) when S cannot be solved.
    """
    try:
        nis = float(innovation @ spd_solve(S, innovation))
    except np.linalg.LinAlgError:
        return UpdateResult(name, innovation, S, math.inf, False, "singular")
    ok = math.isfinite(nis) and (gate <= 0.0 or nis <= gate)
    return UpdateResult(name, innovation, S, nis, ok, "ok" if ok else "gated")


def spd_solve(S: FloatArray, B: FloatArray) -> FloatArray:
    """``S^-1 B`` for a symmetric positive definite S (m, m) and B (m,) or (m, n): Cholesky (LAPACK ``posv``),
    falling back to LU when S is not numerically positive definite.

    Raises:
        numpy.linalg.LinAlgError: S is singular.
    """
    if _dposv is not None:
        _, x, info = _dposv(S, B)
        if info == 0:
            return np.asarray(x)
    return np.asarray(np.linalg.solve(S, B))


def rotation_from_gravity(f_base: FloatArray) -> FloatArray:
    """(3, 3) ``R_world_base`` with yaw 0 from a static specific force (3,) m/s^2 in B (``f_B = R^T (-g_W)``).

    roll = atan2(f_y, f_z), pitch = atan2(-f_x, hypot(f_y, f_z)), ``R = Ry(pitch) Rx(roll)``.
    """
    roll = math.atan2(f_base[1], f_base[2])
    pitch = math.atan2(-f_base[0], math.hypot(f_base[1], f_base[2]))
    return np.asarray(pin.rpy.rpyToMatrix(roll, pitch, 0.0))


#: tolerance of :func:`check_rotation` on ``max |R^T R - I|`` (a rotation read from float64 numbers is within 1e-12)
ROTATION_TOLERANCE = 1e-6


def check_rotation(R: FloatArray, what: str = "R_world_base") -> FloatArray:
    """``R`` as a (3, 3) float64 rotation matrix, re-orthonormalised to rounding.

    Args:
        R: (3, 3) array-like, a rotation matrix: finite, ``max |R^T R - I| <= ROTATION_TOLERANCE`` and
            ``det R > 0``.
        what: its name in the error messages.

    Returns:
        (3, 3) float64, the nearest rotation (through a normalised quaternion).

    Raises:
        ValueError: wrong shape, a NaN/Inf, not orthonormal, or a reflection (``det < 0``); the message says which.
    """
    R = np.asarray(R, dtype=float)
    if R.shape != (3, 3):
        raise ValueError(f"{what} must be a (3, 3) rotation matrix, got shape {R.shape}")
    if not np.isfinite(R).all():
        raise ValueError(f"{what} is not finite: {R.tolist()}")
    err = float(np.abs(R.T @ R - _I3).max())
    det = float(np.linalg.det(R))
    if err > ROTATION_TOLERANCE or det <= 0.0:
        raise ValueError(
            f"{what} is not a rotation: max |R^T R - I| = {err:.3g} (tolerance {ROTATION_TOLERANCE:g}), det = {det:.6g}"
        )
    return _orthonormalise(R)


def pose_error_covariance(pose_covariance: FloatArray, R_world_base: FloatArray) -> FloatArray:
    """The (6, 6) covariance of the filter's pose error ``[dp_W, dtheta_B]`` from a ROS pose covariance: the exact
    inverse of :meth:`BaseEkf.pose_covariance`.

    ROS (``geometry_msgs/PoseWithCovariance``, REP-103) orders the pose covariance ``x, y, z, rot x, rot y, rot z``,
    the rotation a small angle about the fixed (world, ``odom``) axes: ``R = Exp(dphi_W) R_hat``. The filter
    perturbs the attitude on the right, in the base frame: ``R = R_hat Exp(dtheta_B)`` (module docstring; Solà 2017,
    "Quaternion kinematics for the error-state Kalman filter", local and global perturbations), and
    ``R Exp(dtheta) = Exp(R dtheta) R`` (the adjoint of SO(3)), so ``dphi_W = R dtheta_B``. The published
    covariance is ``C = T P T^T`` with ``T = diag(I, R)``; here ``P = T^-1 C T^-T``, ``T^-1 = diag(I, R^T)``:
    ``P_pp = C_pp``, ``P_p,theta = C_p,rot R``, ``P_theta,theta = R^T C_rot,rot R``.

    Args:
        pose_covariance: (6, 6) m^2 / m rad / rad^2, ROS order, position in W, rotation about the W axes.
        R_world_base: (3, 3) attitude at which the covariance is given.

    Returns:
        (6, 6) float64, order ``[dp_W (m), dtheta_B (rad)]``, symmetric.
    """
    T_inv = np.eye(6)
    T_inv[3:6, 3:6] = np.asarray(R_world_base, dtype=float).T
    P = T_inv @ np.asarray(pose_covariance, dtype=float) @ T_inv.T
    return 0.5 * (P + P.T)


def check_pose_covariance(pose_covariance: FloatArray) -> FloatArray:
    """A ROS pose covariance as a (6, 6) float64 symmetric positive semi-definite matrix.

    Args:
        pose_covariance: (6, 6) or (36,) row-major (``geometry_msgs/PoseWithCovariance.covariance``), ROS order
            ``x, y, z, rot x, rot y, rot z`` (m^2, m rad, rad^2).

    Returns:
        (6, 6) float64, symmetrised (``(C + C^T) / 2``).

    Raises:
        ValueError: wrong size, a NaN/Inf, not symmetric (relative 1e-9), or an eigenvalue below
            ``-1e-10 max |C|`` (not positive semi-definite); the message says which.
    """
    C = np.asarray(pose_covariance, dtype=float)
    if C.shape == (36,):
        C = C.reshape(6, 6)
    if C.shape != (6, 6):
        raise ValueError(f"pose_covariance must be (6, 6) or (36,) row-major, got shape {C.shape}")
    if not np.isfinite(C).all():
        raise ValueError("pose_covariance is not finite (NaN/Inf)")
    scale = max(float(np.abs(C).max()), 1e-300)
    asym = float(np.abs(C - C.T).max())
    if asym > 1e-9 * scale:
        raise ValueError(f"pose_covariance is not symmetric: max |C - C^T| = {asym:.3g}")
    C = 0.5 * (C + C.T)
    lowest = float(np.linalg.eigvalsh(C).min())
    if lowest < -1e-10 * scale:
        raise ValueError(f"pose_covariance is not positive semi-definite: smallest eigenvalue {lowest:.3g}")
    return C


def check_pose(
    p_world_base: FloatArray, R_world_base: FloatArray, pose_covariance: FloatArray | None = None
) -> tuple[FloatArray, FloatArray, FloatArray | None]:
    """The arguments of :meth:`BaseEkf.set_pose`, checked: ``(p (3,) m, R (3, 3) rotation, C (6, 6) or None)``.

    Raises:
        ValueError: ``p_world_base`` not (3,) or not finite, ``R_world_base`` not a rotation
            (:func:`check_rotation`), ``pose_covariance`` not symmetric positive semi-definite
            (:func:`check_pose_covariance`); the message names the problem.
    """
    p = np.asarray(p_world_base, dtype=float)
    if p.shape != (3,):
        raise ValueError(f"p_world_base must have shape (3,), got {p.shape}")
    if not np.isfinite(p).all():
        raise ValueError(f"p_world_base is not finite: {p.tolist()}")
    R = check_rotation(R_world_base)
    C = None if pose_covariance is None else check_pose_covariance(pose_covariance)
    return p, R, C


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


#: (attribute, start in the state buffer, shape) of the views of BaseEkf's state (ekf_kernels' layout).
_VIEWS = (
    ("p_world_base", X_P, (3,)),
    ("v_base_in_base", X_V, (3,)),
    ("R_world_base", X_R, (3, 3)),
    ("accel_bias", X_BA, (3,)),
    ("gyro_bias", X_BG, (3,)),
    ("omega_base", X_OMEGA, (3,)),
    ("alpha_base", X_ALPHA, (3,)),
    ("f_base", X_F, (3,)),
    ("_gyro_imu", X_GYRO, (3,)),
    ("_accel_imu", X_ACCEL, (3,)),
    ("_omega_prev_base", X_OMEGA_PREV, (3,)),
)
_VIEW_NAMES = (*(v[0] for v in _VIEWS), "P")
_NO_FEET = np.zeros((1, 3, 3))  # placeholder for an unused (k, 3, n) kernel argument


class BaseEkf:
    """The 15-state error-state EKF (see the module docstring for the equations and their sources).

    Args:
        X_base_imu: pose of the IMU frame S in the base frame B (pinocchio SE3, m).
        noise: IMU noise densities (:func:`imu_noise_from_spec`).
        settings: filter settings (initial covariance, gate, guards).

    The state attributes below are live views of preallocated buffers updated in place by every step (copy one
    to keep a snapshot); assigning one (``ekf.v_base_in_base = v``, ``ekf.p_world_base[2] = h``) copies the
    values in. ``use_kernels`` selects the compiled kernels or the numpy reference path (module docstring).

    Attributes:
        p_world_base: (3,) m, base position in W.
        v_base_in_base: (3,) m/s, base velocity in B.
        R_world_base: (3, 3) base attitude.
        accel_bias: (3,) m/s^2 in S.
        gyro_bias: (3,) rad/s in S.
        P: (15, 15) error covariance, order ``[dp_W, dv_B, dtheta_B, dba_S, dbg_S]``.
        stamp_ns: filter time (ns), None before initialisation.
        omega_base: (3,) rad/s, last bias-corrected angular velocity in B.
        alpha_base: (3,) rad/s^2, angular acceleration in B (backward difference of the gyro, or zero).
        f_base: (3,) m/s^2, last specific force at the base origin in B.
        last_results: results of the last update call.
    """

    def __init__(self, X_base_imu: pin.SE3, noise: ImuNoise, settings: EkfSettings) -> None:
        self.settings = settings
        self.noise = noise
        self.R_base_imu = np.array(X_base_imu.rotation, dtype=float)
        self.p_base_imu = np.array(X_base_imu.translation, dtype=float)
        self._r_skew = skew(self.p_base_imu)
        self.g_world = np.array([0.0, 0.0, -settings.gravity_m_s2])
        R_BS = self.R_base_imu
        self._Sigma_a_c = R_BS @ np.diag(noise.accel_density**2) @ R_BS.T
        self._Sigma_g_c = R_BS @ np.diag(noise.gyro_density**2) @ R_BS.T
        self._Sigma_g_sample = R_BS @ np.diag(noise.gyro_sample_stddev**2) @ R_BS.T
        self._Sigma_imu_c = np.zeros((6, 6))
        self._Sigma_imu_c[:3, :3] = self._Sigma_a_c
        self._Sigma_imu_c[3:, 3:] = self._Sigma_g_c
        self._Q_bias_c = np.zeros((N_STATES, N_STATES))
        self._Q_bias_c[BA_SL, BA_SL] = np.diag(noise.accel_bias_random_walk**2)
        self._Q_bias_c[BG_SL, BG_SL] = np.diag(noise.gyro_bias_random_walk**2)
        self._A = np.zeros((N_STATES, N_STATES))
        self._A[V_SL, BA_SL] = -R_BS
        self._A[TH_SL, BG_SL] = -R_BS
        self._G = np.zeros((N_STATES, 6))
        self._G[V_SL, 0:3] = -_I3
        self._G[TH_SL, 3:6] = -_I3
        # The state lives in preallocated buffers (ekf_kernels' layout); the public attributes are views.
        self._x = np.zeros(X_SIZE)
        self._P = np.eye(N_STATES)
        self._bind_views()
        self.R_world_base = np.eye(3)
        self.stamp_ns: int | None = None
        self._gyro_stamp_ns: int | None = None
        self._omega_prev_valid = False  # whether _omega_prev_base holds the previous rate (for alpha_base)
        self._steps_since_normalise = 0
        self.last_results = []
        self._stacks: dict[int, _StackedLayout] = {}
        self._T_pose = np.zeros((6, N_STATES))
        self._T_pose[0:3, P_SL] = _I3
        self._T_twist = np.zeros((6, N_STATES))
        self._T_twist[0:3, V_SL] = _I3
        self._T_twist[3:6, BG_SL] = -R_BS
        self._twist_noise = np.zeros((6, 6))
        self._twist_noise[3:, 3:] = self._Sigma_g_sample
        # Hot-path constants (see propagate_to / error_transition / the outputs): 3-vectors and 3 x 3s as
        # Python floats (cheaper than numpy calls at this size), flat indices of the non-zero blocks.
        self._R_BS_list = R_BS.tolist()
        self._r_list = self.p_base_imu.tolist()
        self._pose_idx = _sub_flat_index((0, 1, 2, 6, 7, 8))
        self._twist_idx = _sub_flat_index((3, 4, 5, 12, 13, 14))
        self._T_pose6 = np.eye(6)
        self._T_twist6 = np.eye(6)
        self._T_twist6[3:, 3:] = -R_BS
        self._zeros3 = np.zeros(3)
        # Constants of the kernels (ekf_kernels' layout).
        c = self._c = np.zeros(C_SIZE)
        c[C_RBS : C_RBS + 9] = R_BS.ravel()
        c[C_R : C_R + 3] = self.p_base_imu
        c[C_G : C_G + 3] = self.g_world
        c[C_SA : C_SA + 9] = self._Sigma_a_c.ravel()
        c[C_SG : C_SG + 9] = self._Sigma_g_c.ravel()
        c[C_QB : C_QB + 3] = noise.accel_bias_random_walk**2
        c[C_QB + 3 : C_QB + 6] = noise.gyro_bias_random_walk**2
        c[C_SGS : C_SGS + 9] = self._Sigma_g_sample.ravel()
        self._leg_noise: tuple[object, bool, float, float, float] = (None, False, 0.0, 0.0, 0.0)
        self._imu_limits: tuple[object, float, bool, float, float] = (None, 0.0, False, 0.0, 0.0)
        self._use_k = False
        self.use_kernels = jit.use_kernels()

    # ------------------------------------------------------------------------------------------------------
    # State buffers and kernels
    # ------------------------------------------------------------------------------------------------------

    #: the raw output of the last :meth:`update_stance_feet` (names, out, gate) until ``last_results`` is read
    _pending_results: tuple[Sequence[str], FloatArray, float] | None
    p_world_base = _StateView()
    v_base_in_base = _StateView()
    R_world_base = _StateView()
    accel_bias = _StateView()
    gyro_bias = _StateView()
    P = _StateView()
    omega_base = _StateView()
    alpha_base = _StateView()
    f_base = _StateView()
    _gyro_imu = _StateView()
    _accel_imu = _StateView()
    _omega_prev_base = _StateView()

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
        for name, start, shape in _VIEWS:
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
        """True: the hot methods run the compiled kernels of :mod:`.ekf_kernels`; False: the numpy reference
        path (same numbers to rounding). Defaults to :func:`.jit.use_kernels`; setting True needs numba and
        warms the kernels up."""
        return self._use_k

    @use_kernels.setter
    def use_kernels(self, value: bool) -> None:
        if value and _k is None:
            raise RuntimeError("BaseEkf.use_kernels = True needs numba, which is not importable")
        self._use_k = bool(value)
        self.warm_up()

    def warm_up(self) -> None:
        """Compile the kernels now (or load them from numba's on-disk cache: well under a second), so the first
        real sample does not pay the compilation (seconds, once per environment). Called by ``__init__``;
        idempotent, a no-op on the numpy reference path."""
        if self._use_k:
            _k.warm_up()

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
        self.alpha_base = np.zeros(3)
        self.omega_base = self.R_base_imu @ (self._gyro_imu - self.gyro_bias)
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
            P_pose = P0[np.ix_(_POSE_IDX, _POSE_IDX)]
        else:
            P_pose = pose_error_covariance(C, R)
        self.p_world_base = p
        self.R_world_base = R
        P = self.P
        P[_POSE_IDX, :] = 0.0
        P[:, _POSE_IDX] = 0.0
        P[np.ix_(_POSE_IDX, _POSE_IDX)] = P_pose
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
        if self._use_k:
            _k.set_imu(self._x, self._c, _vec(gyro_imu, 3), _vec(accel_imu, 3), dt_gyro)
        else:
            self._gyro_imu = np.asarray(gyro_imu, dtype=float)
            self._accel_imu = np.asarray(accel_imu, dtype=float)
            omega_base = np.array(_rot(self._R_BS_list, _sub(self._gyro_imu.tolist(), self.gyro_bias.tolist())))
            if dt_gyro > 0.0:
                self.alpha_base = (omega_base - self._omega_prev_base) / dt_gyro
            else:
                self.alpha_base = self._zeros3
            self._omega_prev_base = omega_base
        self._omega_prev_valid = True
        self._gyro_stamp_ns = int(stamp_ns)

    def imu_step(self, stamp_ns: int, gyro_imu: FloatArray, accel_imu: FloatArray, out: FloatArray) -> int:
        """The usual IMU sample in one kernel call (:func:`.ekf_kernels.imu_step`, kernel path only): the check of
        the reading against ``settings.max_gyro_rad_s`` / ``max_accel_m_s2`` (and NaN/Inf), :meth:`set_imu`,
        :meth:`propagate_to` ``stamp_ns``, :meth:`state_is_finite` and :meth:`output_vector` into ``out`` (91,).

        Args:
            stamp_ns: the reading's stamp (ns). gyro_imu, accel_imu: (3,) float64 C-contiguous arrays, rad/s and
                m/s^2 in S (not checked: the kernel is called through its compiled entry point, ``jit.entry_point``;
                ``np.ascontiguousarray(a, dtype=float)`` of a (3,) shape makes them).
            out: (91,) float64, written when the result is ``IMU_OK``.

        Returns:
            -1 (nothing changed) when it is not the usual sample: not initialised, or ``stamp_ns`` not within
            ``(stamp_ns, stamp_ns + max_dt_s]`` of the filter time; ``ekf_kernels.IMU_BAD_INPUT`` (nothing
            changed); ``IMU_NOT_FINITE`` (propagated, the state is not finite, ``out`` not written); ``IMU_OK``.
        """
        t = self.stamp_ns
        if t is None:
            return -1
        limits = self._imu_limits
        s = self.settings
        if limits[0] is not s:  # the settings' numbers as this step takes them, once per settings object
            limits = self._imu_limits = (s, float(s.max_dt_s), bool(s.use_angular_acceleration),
                                         float(s.max_gyro_rad_s), float(s.max_accel_m_s2))  # fmt: skip
        _, max_dt_s, use_alpha, max_gyro, max_accel = limits
        dt = (stamp_ns - t) * 1e-9
        if not 0.0 < dt <= max_dt_s:
            return -1
        previous = self._gyro_stamp_ns
        dt_gyro = 0.0  # as set_imu
        if use_alpha and self._omega_prev_valid and previous is not None and stamp_ns > previous:
            dt_gyro = (stamp_ns - previous) * 1e-9
        steps = self._steps_since_normalise + 1  # as propagate_to
        normalise = steps >= 100
        step = _imu_step_entry[0]
        if step is None:
            step = _imu_step_entry[0] = jit.entry_point(_k.imu_step, self._x, self._P, self._c, gyro_imu, accel_imu,
                                                        max_gyro, max_accel, dt_gyro, dt, normalise, out)  # fmt: skip
        code: int = step(self._x, self._P, self._c, gyro_imu, accel_imu, max_gyro, max_accel, dt_gyro, dt, normalise,
                         out)  # fmt: skip
        if code != IMU_BAD_INPUT:
            self._steps_since_normalise = 0 if normalise else steps
            self._omega_prev_valid = True
            self._gyro_stamp_ns = self.stamp_ns = stamp_ns
        return code

    def base_motion(self) -> tuple[FloatArray, FloatArray]:
        """Bias-corrected ``(omega_B (3,) rad/s, f_B (3,) m/s^2 at the base origin)`` from the held reading."""
        w, f = self._base_motion_lists()
        return np.array(w), np.array(f)

    def _base_motion_lists(self) -> tuple[list[float], list[float]]:
        """:meth:`base_motion` as Python floats."""
        R_BS = self._R_BS_list
        w = _rot(R_BS, _sub(self._gyro_imu.tolist(), self.gyro_bias.tolist()))
        f_imu = _rot(R_BS, _sub(self._accel_imu.tolist(), self.accel_bias.tolist()))
        r = self._r_list
        ar = _cross(self.alpha_base.tolist(), r)
        wwr = _cross(w, _cross(w, r))
        return w, [f_imu[0] - ar[0] - wwr[0], f_imu[1] - ar[1] - wwr[1], f_imu[2] - ar[2] - wwr[2]]

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
        """
        if self.stamp_ns is None:
            raise RuntimeError("BaseEkf.propagate_to called before initialisation")
        dt = (stamp_ns - self.stamp_ns) * 1e-9
        if dt <= 0.0:
            return "dt_nonpositive"
        if dt > self.settings.max_dt_s:
            if self._use_k:
                _k.add_gap_noise(self._x, self._P, self._c, dt)
            else:
                self._add_process_noise(skew(self.v_base_in_base), dt)
            self.stamp_ns = int(stamp_ns)
            self._omega_prev_valid = False
            return "dt_too_large"
        self._steps_since_normalise += 1
        normalise = self._steps_since_normalise >= 100
        if normalise:
            self._steps_since_normalise = 0
        if self._use_k:
            _k.propagate(self._x, self._P, self._c, dt, normalise)
        else:
            self._propagate_reference(dt, normalise)
        self.stamp_ns = int(stamp_ns)
        return None

    def _propagate_reference(self, dt: float, normalise: bool) -> None:
        """The numpy reference of :func:`.ekf_kernels.propagate`: state and covariance over dt (s) with the held
        reading, R re-orthonormalised when ``normalise``."""
        w, f = self._base_motion_lists()
        self.omega_base = np.array(w)
        self.f_base = np.array(f)
        R = self.R_world_base
        R_l = R.tolist()
        v = self.v_base_in_base.tolist()
        Phi, M = self.error_transition(dt, self.omega_base)

        # Nominal state, integrated in the world frame (Python floats: 3-vectors).
        g = self.g_world.tolist()
        Rf = _rot(R_l, f)
        a_world = [Rf[0] + g[0], Rf[1] + g[1], Rf[2] + g[2]]
        v_world = _rot(R_l, v)
        h = 0.5 * dt * dt
        p = self.p_world_base.tolist()
        self.p_world_base = np.array([p[i] + v_world[i] * dt + h * a_world[i] for i in range(3)])
        v_world = [v_world[i] + a_world[i] * dt for i in range(3)]
        R_new = R @ pin.exp3(self.omega_base * dt)
        if normalise:
            R_new = _orthonormalise(R_new)
        self.R_world_base = R_new
        self.v_base_in_base = np.array(_rot_t(R_new.tolist(), v_world))

        # P = Phi P Phi^T + Q_d, Q_d = G Q_c G^T dt added on its non-zero blocks only.
        P = Phi @ self.P @ Phi.T
        P += self._process_noise(M) * dt
        P += P.T
        P *= 0.5
        self.P = P

    def error_transition(self, dt: float, omega: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
        """Error-state transition over dt at the current state with the held IMU reading.

        Args:
            dt: s, propagation interval.
            omega: (3,) rad/s, bias-corrected angular velocity in B (computed from the held reading when None).

        Returns:
            ``Phi`` (15, 15) ``= I + A dt + (A dt)^2 / 2`` and ``M`` (3, 3) ``= [v]x + L`` (module docstring).
            The constant blocks of A (``-R_BS`` on the biases) are set in ``__init__``.
        """
        if omega is None:
            omega, _ = self.base_motion()
        R = self.R_world_base
        w_skew = skew(omega)
        v_skew = skew(self.v_base_in_base)
        M = v_skew + skew(cross3(omega, self.p_base_imu)) + w_skew @ self._r_skew
        A = self._A
        A[P_SL, V_SL] = R
        A[P_SL, TH_SL] = -R @ v_skew
        A[V_SL, V_SL] = -w_skew
        A[V_SL, TH_SL] = skew(R.T @ self.g_world)
        A[V_SL, BG_SL] = -M @ self.R_base_imu
        A[TH_SL, TH_SL] = -w_skew
        Adt = A * dt
        return _I15 + Adt + 0.5 * (Adt @ Adt), M

    def _process_noise(self, M: FloatArray) -> FloatArray:
        """(15, 15) ``G Q_c G^T`` (module docstring) for ``M = [v]x + L``; multiply by dt for ``Q_d``.

        The white noises are taken in B (``R_BS Sigma R_SB``), so G has ``-I`` for the accelerometer on the
        velocity, ``-M`` and ``-I`` for the gyroscope on the velocity and the attitude, ``I`` on the biases.
        """
        G = self._G
        G[V_SL, 3:6] = -M
        return G @ self._Sigma_imu_c @ G.T + self._Q_bias_c

    def _add_process_noise(self, M: FloatArray, dt: float) -> None:
        """Add ``Q_d = G Q_c G^T dt`` to P (used when a gap is not propagated)."""
        P = self.P + self._process_noise(M) * dt
        self.P = 0.5 * (P + P.T)

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
        """The leg-odometry measurement of one stance foot (module docstring).

        Args:
            name: foot name.
            v_base_measured: (3,) m/s in B, ``-(J qdot) - omega_hat_B x r`` with the filter's ``omega_base``.
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
        sf = s.foot_velocity_noise if foot_velocity_noise is None else foot_velocity_noise
        se = s.encoder_velocity_noise if encoder_velocity_noise is None else encoder_velocity_noise
        r_skew = skew(p_base_foot)
        H = np.zeros((3, N_STATES))
        H[:, V_SL] = _I3
        H[:, BG_SL] = r_skew @ self.R_base_imu
        if attitude_jacobian is not None:
            H[:, TH_SL] = attitude_jacobian
        J = np.zeros((3, 0)) if J_base_foot is None else J_base_foot
        R = leg_measurement_covariance(J, r_skew, self._Sigma_g_sample, foot_velocity_noise=sf, joint_velocity_noise=se)
        return Measurement(name, np.asarray(v_base_measured, dtype=float) - self.v_base_in_base, H, R)

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
        """Vectorised leg-odometry update of k stance feet: the same maths as :meth:`leg_velocity_measurement`
        followed by :meth:`update`, in a few batched numpy calls (the 1 kHz hot path).

        Args:
            names: (k,) foot names.
            v_base_measured: (k, 3) m/s in B, ``-(J_i qdot) - omega_hat_B x r_i`` per foot.
            p_base_foot: (k, 3) m, foot positions r_i in B.
            J_base_foot: (k, 3, n) foot Jacobians in B (encoder noise term), or None.
            gate_nis: NIS gate per foot (``settings.foot_gate_nis`` when None; 0 disables).
            H_attitude: (k, 3, 3) attitude blocks of H per foot (rolling feet, see the module docstring);
                None for point feet. With rolling feet ``p_base_foot`` holds the contact points c_i and
                ``J_base_foot`` their Jacobians ``J_c,i``.

        Returns:
            One :class:`UpdateResult` per foot (also in ``last_results``).
        """
        s = self.settings
        gate = s.foot_gate_nis if gate_nis is None else gate_nis
        k = len(names)
        if k == 0:
            self.last_results = []
            return []
        if self._use_k:
            results = self._update_leg_velocities_kernel(names, v_base_measured, p_base_foot, J_base_foot, gate,
                                                         H_attitude)  # fmt: skip
            if results is not None:
                self.last_results = results
                return results
        r = np.asarray(p_base_foot, dtype=float).reshape(k, 3)
        stack = self._stacks.get(k)
        if stack is None:
            stack = self._stacks[k] = _StackedLayout.build(k)
        r_skew = (r @ _SKEW_BASIS).reshape(k, 3, 3)  # [r_i]x for all feet in one product (exact)
        # Stacked H (3k, 15): identity on dv, [r_i]x R_BS on dbg.
        H = stack.H_template.copy()
        H[:, BG_SL] = (r_skew @ self.R_base_imu).reshape(3 * k, 3)
        if H_attitude is not None:
            H[:, TH_SL] = np.asarray(H_attitude, dtype=float).reshape(3 * k, 3)
        # Block-diagonal R: foot noise + gyro noise through the lever arm + encoder noise through J.
        Rm = r_skew @ self._Sigma_g_sample @ r_skew.transpose(0, 2, 1)
        if J_base_foot is not None and s.encoder_velocity_noise > 0.0:
            J = np.asarray(J_base_foot, dtype=float)
            Rm += (s.encoder_velocity_noise**2) * (J @ J.transpose(0, 2, 1))
        Rm += (s.foot_velocity_noise**2) * _I3
        R_stack = np.zeros(9 * k * k)
        R_stack[stack.diag_blocks] = Rm.ravel()
        R_stack.shape = (3 * k, 3 * k)
        PHt = self.P @ H.T
        S = H @ PHt
        S += R_stack
        S += S.T
        S *= 0.5
        S_feet = S.take(stack.diag_blocks).reshape(k, 3, 3)  # per-foot innovation covariances
        y = np.asarray(v_base_measured, dtype=float).reshape(k, 3) - self.v_base_in_base
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
            self._joseph_update(y.reshape(-1), H, R_stack, PHt=PHt, S=S)
        elif accepted:
            rows = (3 * np.asarray(accepted)[:, None] + np.arange(3)).reshape(-1)
            self._joseph_update(
                y[accepted].reshape(-1),
                H[rows],
                R_stack[np.ix_(rows, rows)],
                PHt=PHt[:, rows],
                S=S[np.ix_(rows, rows)],
            )
        self.last_results = results
        return results

    def _update_leg_velocities_kernel(
        self,
        names: list[str],
        v_base_measured: FloatArray,
        p_base_foot: FloatArray,
        J_base_foot: FloatArray | None,
        gate: float,
        H_attitude: FloatArray | None,
    ) -> list[UpdateResult] | None:
        """:meth:`update_leg_velocities` with :func:`.ekf_kernels.leg_update`; None (nothing changed) when the
        stacked S is not numerically positive definite: the caller then runs the reference path."""
        s = self.settings
        k = len(names)
        use_J = J_base_foot is not None and s.encoder_velocity_noise > 0.0
        J = _mat3(J_base_foot, k) if use_J else _NO_FEET
        use_H = H_attitude is not None
        H_th = _NO_FEET if H_attitude is None else _mat(H_attitude, (k, 3, 3))
        out = np.empty(13 * k)
        sf2 = float(s.foot_velocity_noise**2)
        se2 = float(s.encoder_velocity_noise**2)
        n = _k.leg_update(
            self._x, self._P, self._c, _mat(v_base_measured, (k, 3)), _mat(p_base_foot, (k, 3)), J, H_th, use_J,
            use_H, sf2, se2, float(gate), out,
        )  # fmt: skip
        if n < 0:
            return None
        return leg_results(names, out, gate)

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
        """The leg-odometry update of the feet in contact, in one kernel (:func:`.ekf_kernels.stance_update`): the
        terms of ``LegKinematics.rolling_contact_terms`` (``point_contact_terms`` when not ``rolling``) at the
        filter's ``omega_base`` and attitude, then :meth:`update_leg_velocities` (gate ``settings.foot_gate_nis``).
        Kernel path only (``use_kernels``).

        Args:
            names: (k,) names of the feet in contact, in foot order (for the results).
            contacts: (n,) bool, which feet are in contact (k of them, k >= 1).
            qdot_joints: (nj,) rad/s. radii: (n,) m, foot sphere radii (zeros for point feet).
            p_base_foot: (n, 3) m, foot centres in B. J6_base_foot: (n, 6, nj) foot Jacobians in B
                (``LegKinematics``, after its ``update``).
            rolling: rolling spherical feet (the attitude block of H enters).

        Returns:
            (13 k,) the innovations (k, 3), innovation covariances (k, 3, 3) and NIS (k,) of the feet (the
            :class:`UpdateResult` of each are made from it when ``last_results`` is read, :func:`leg_results`); None
            when the stacked S is not numerically positive definite (nothing changed: use the reference path).
        """
        s = self.settings
        noise = self._leg_noise
        if noise[0] is not s:  # the settings' numbers as the kernel takes them, once per settings object
            noise = self._leg_noise = (s, s.encoder_velocity_noise > 0.0, float(s.foot_velocity_noise**2),
                                       float(s.encoder_velocity_noise**2), float(s.foot_gate_nis))  # fmt: skip
        _, use_J, sf2, se2, gate = noise
        out = np.empty(13 * len(names))
        n = _k.stance_update(self._x, self._P, self._c, contacts, qdot_joints, radii, p_base_foot, J6_base_foot,
                             rolling, use_J, sf2, se2, gate, out)  # fmt: skip
        if n < 0:
            return None
        self._pending_results = (names, out, gate)
        return out

    def zero_rate_measurement(self) -> Measurement:
        """Zero angular rate pseudo-measurement (robot static): ``0 = R_BS (omega_S - b_g - n_g)``."""
        H = np.zeros((3, N_STATES))
        H[:, BG_SL] = -self.R_base_imu
        R = self.settings.zero_rate_noise_rad_s**2 * _I3 + self._Sigma_g_sample
        omega_hat = self.R_base_imu @ (self._gyro_imu - self.gyro_bias)
        return Measurement("zero_rate", -omega_hat, H, R)

    def update(self, measurements: list[Measurement], *, gate_nis: float | None = None) -> list[UpdateResult]:
        """Gate each measurement on its prior NIS, then fuse the accepted ones in one Joseph-form update.

        Args:
            measurements: the measurements (innovations computed at the current state).
            gate_nis: NIS threshold per measurement (``settings.foot_gate_nis`` when None; 0 disables).

        Returns:
            One :class:`UpdateResult` per measurement, in order (also kept in ``last_results``).
        """
        gate = self.settings.foot_gate_nis if gate_nis is None else gate_nis
        if self._use_k and measurements:
            kernel_results = self._update_kernel(measurements, gate)
            if kernel_results is not None:
                self.last_results = kernel_results
                return kernel_results
        P = self.P
        results: list[UpdateResult] = []
        accepted: list[Measurement] = []
        for m in measurements:
            PHt = P @ m.H.T
            S = m.H @ PHt + m.R
            S = 0.5 * (S + S.T)
            result = gated_result(m.name, m.innovation, S, gate)
            results.append(result)
            if result.accepted:
                accepted.append(m)
        if accepted:
            if len(accepted) == 1:
                H, R, y = accepted[0].H, accepted[0].R, accepted[0].innovation
            else:
                H = np.vstack([m.H for m in accepted])
                y = np.concatenate([m.innovation for m in accepted])
                R = _block_diag([m.R for m in accepted])
            self._joseph_update(y, H, R)
        self.last_results = results
        return results

    def _update_kernel(self, measurements: list[Measurement], gate: float) -> list[UpdateResult] | None:
        """:meth:`update` with :func:`.ekf_kernels.update`; None (nothing changed) when an innovation covariance
        is not numerically positive definite: the caller then runs the reference path."""
        sizes = [len(m.innovation) for m in measurements]
        n_rows = sum(sizes)
        if len(measurements) == 1:
            m0 = measurements[0]
            y, H, R = m0.innovation, m0.H, m0.R
        else:
            y = np.concatenate([m.innovation for m in measurements])
            H = np.vstack([m.H for m in measurements])
            R = _block_diag([m.R for m in measurements])
        n = len(sizes)
        out = np.empty(sum(m * m for m in sizes) + n)
        n_acc = _k.update(
            self._x, self._P, self._c, _mat(y, (n_rows,)), _mat(H, (n_rows, N_STATES)), _mat(R, (n_rows, n_rows)),
            np.array(sizes, dtype=np.int64), float(gate), out,
        )  # fmt: skip
        if n_acc < 0:
            return None
        results = []
        o = 0
        for m, mi, nis in zip(measurements, sizes, out[-n:].tolist()):
            ok = math.isfinite(nis) and (gate <= 0.0 or nis <= gate)
            results.append(UpdateResult(m.name, m.innovation, out[o : o + mi * mi].reshape(mi, mi), nis, ok,
                                        "ok" if ok else "gated"))  # fmt: skip
            o += mi * mi
        return results

    def _joseph_update(
        self,
        y: FloatArray,
        H: FloatArray,
        R: FloatArray,
        *,
        PHt: FloatArray | None = None,
        S: FloatArray | None = None,
    ) -> None:
        """Joseph-form update with innovation y (m,), Jacobian H (m, 15), noise R (m, m); ``P H^T`` and S
        may be passed when already computed at the current P."""
        P = self.P
        if PHt is None or S is None:
            PHt = P @ H.T
            S = H @ PHt + R
            S = 0.5 * (S + S.T)
        K = spd_solve(S, PHt.T).T  # (15, m) = P H^T S^-1 (S symmetric)
        dx = K @ y
        IKH = K @ H
        IKH *= -1.0
        IKH.ravel()[:: N_STATES + 1] += 1.0  # I - K H
        P = IKH @ P @ IKH.T
        P += (K @ R) @ K.T
        # Inject the error and reset its covariance (Solà 2017 sec. 7.2).
        self.p_world_base = self.p_world_base + dx[P_SL]
        self.v_base_in_base = self.v_base_in_base + dx[V_SL]
        dtheta = dx[TH_SL]
        self.R_world_base = self.R_world_base @ np.asarray(pin.exp3(dtheta))
        self.accel_bias = self.accel_bias + dx[BA_SL]
        self.gyro_bias = self.gyro_bias + dx[BG_SL]
        G = _I3 - skew(0.5 * dtheta)
        P[TH_SL, :] = G @ P[TH_SL, :]
        P[:, TH_SL] = P[:, TH_SL] @ G.T
        P += P.T
        P *= 0.5
        self.P = P
        self.omega_base = np.array(_rot(self._R_BS_list, _sub(self._gyro_imu.tolist(), self.gyro_bias.tolist())))

    # ------------------------------------------------------------------------------------------------------
    # Outputs (ROS conventions)
    # ------------------------------------------------------------------------------------------------------

    def quat_world_base_xyzw(self) -> FloatArray:
        """(4,) base attitude quaternion ``x y z w``."""
        if self._use_k:
            q = np.empty(4)
            _k.quat_xyzw(self._x, q)
            return q
        return np.array(quat_xyzw_from_matrix(self.R_world_base.tolist()))

    def pose_covariance(self) -> FloatArray:
        """(6, 6) pose covariance (x, y, z, rot x, rot y, rot z): position in W, rotation about W axes.

        The world-axis small angle is ``dphi_W = R dtheta`` (right perturbation ``R Exp(dtheta) =
        Exp(R dtheta) R``), so the rotation block is ``R P_thth R^T`` and the cross block ``P_p,th R^T``.
        """
        if self._use_k:
            C = np.empty((6, 6))
            _k.pose_covariance(self._x, self._P, C)
            return C
        T = self._T_pose6
        T[3:6, 3:6] = self.R_world_base
        C = T @ self.P.take(self._pose_idx) @ T.T  # the (p, theta) 6 x 6 block of P, mapped
        C += C.T
        C *= 0.5
        return C

    def twist_covariance(self) -> FloatArray:
        """(6, 6) twist covariance (linear, angular), both in B.

        ``omega_B = R_BS (omega_S - b_g)``: its covariance is ``R_BS P_bg R_SB`` plus the gyro white noise of
        one sample; the cross block with the velocity is ``-P_v,bg R_SB``.
        """
        if self._use_k:
            C = np.empty((6, 6))
            _k.twist_covariance(self._P, self._c, C)
            return C
        T = self._T_twist6
        C = T @ self.P.take(self._twist_idx) @ T.T  # the (v, b_g) 6 x 6 block of P, mapped
        C += self._twist_noise
        C += C.T
        C *= 0.5
        return C

    def output_vector(self) -> FloatArray:
        """All outputs in one new (91,) float64 array, laid out as ``common.output_layout.OUTPUT_FIELDS``:
        ``p_world_base`` (3), :meth:`quat_world_base_xyzw` (4), ``v_base_in_base`` (3), ``omega_base`` (3),
        :meth:`pose_covariance` (36, row-major), :meth:`twist_covariance` (36, row-major), ``accel_bias`` (3),
        ``gyro_bias`` (3); the same values as those attributes and methods."""
        out = np.empty(OUTPUT_SIZE)
        if self._use_k:
            _k.outputs(self._x, self._P, self._c, out)
            return out
        out[P_WORLD_BASE] = self.p_world_base
        out[QUAT_WORLD_BASE_XYZW] = self.quat_world_base_xyzw()
        out[V_BASE_IN_BASE] = self.v_base_in_base
        out[OMEGA_BASE_IN_BASE] = self.omega_base
        out[POSE_COVARIANCE] = self.pose_covariance().ravel()
        out[TWIST_COVARIANCE] = self.twist_covariance().ravel()
        out[ACCEL_BIAS] = self.accel_bias
        out[GYRO_BIAS] = self.gyro_bias
        return out

    def finite_output_vector(self) -> FloatArray | None:
        """:meth:`output_vector` when :meth:`state_is_finite`, else None (one kernel call on the kernel path)."""
        if self._use_k:
            out = np.empty(OUTPUT_SIZE)
            return out if _k.finite_outputs(self._x, self._P, self._c, out) else None
        return self.output_vector() if self.state_is_finite() else None

    def state_is_finite(self) -> bool:
        """True when the state and covariance contain no NaN/Inf (one sum: NaN and Inf propagate)."""
        if self._use_k:
            return bool(_k.state_is_finite(self._x, self._P))
        total = float(self.P.sum()) + float(self.R_world_base.sum())
        total += sum(self.p_world_base.tolist()) + sum(self.v_base_in_base.tolist())
        total += sum(self.accel_bias.tolist()) + sum(self.gyro_bias.tolist())
        return math.isfinite(total)


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


def _sub_flat_index(idx: tuple[int, ...]) -> NDArray[np.intp]:
    """Flat indices of the sub-matrix ``P[np.ix_(idx, idx)]`` of a 15 x 15 P (for ``P.take``)."""
    a = np.asarray(idx)
    return a[:, None] * N_STATES + a[None, :]
