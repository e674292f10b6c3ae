"""The compiled backend: the operations of :class:`~.base.Backend` by the numba kernels of :mod:`.kernels`, tested
equal to the reference (:class:`~.numpy_backend.NumpyBackend`) to 1e-12; where a kernel declines a case (an
innovation covariance that is not numerically positive definite) the reference handles it.

Importing this module needs numba (:func:`~robot_state_estimator.estimation.ekf.backends.select_backend` imports it
only then). Kernels are compiled at their first call, or loaded from numba's on-disk cache
(:mod:`robot_state_estimator.estimation.jit`); objects warm them up at construction, so the first sample does not
pay for it. The hottest calls go through the kernels' compiled entry points (``jit.entry_point``: no type dispatch),
with arguments made by the caller in the exact layouts (C-contiguous float64).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin
from numba import types

from robot_state_estimator.estimation import jit
from robot_state_estimator.estimation.ekf.backends.compiled_joint_step import CompiledJointStep
from robot_state_estimator.estimation.ekf.backends.kernels import flat, legs, outputs, propagation, update
from robot_state_estimator.estimation.ekf.backends.numpy_backend import BoolArray, FloatArray, IntArray, NumpyBackend
from robot_state_estimator.estimation.ekf.backends.numpy_updates import stack_measurements
from robot_state_estimator.estimation.ekf.layout import (
    C_R_BASE_IMU,
    C_SIZE,
    CLOCK_SIZE,
    CROSS_COLS,
    DECLINED,
    JOINT_MAX_FEET,
    N_STATES,
    OUT_SIZE,
    X_R,
    X_SIZE,
)
from robot_state_estimator.estimation.ekf.measurements import Measurement, UpdateResult, leg_results
from robot_state_estimator.estimation.ekf.numerics import _mat, _mat3, _vec
from robot_state_estimator.estimation.errors import ModelError

if TYPE_CHECKING:
    from robot_state_estimator.estimation.contact import ContactDetector, ContactForceEstimator
    from robot_state_estimator.estimation.ekf.filter import BaseEkf
    from robot_state_estimator.estimation.joint_input import JointInput
    from robot_state_estimator.estimation.kinematics import LegKinematics

_I3 = np.eye(3)
_NO_FEET = np.zeros((1, 3, 3))  # placeholder for an unused (k, 3, n) kernel argument
_jacobian_com = pin.jacobianCenterOfMass


class NumbaBackend(NumpyBackend):
    """The numba kernels for every operation of :class:`~.base.Backend` (the reference where a kernel declines)."""

    name = "numba"
    compiled = True

    def __init__(self) -> None:
        self._imu_step_entry: Any = None  # propagation.imu_step's entry point, made at its first binding
        self._zero_radii: dict[int, FloatArray] = {}

    def __reduce__(self) -> str:
        return "NUMBA_BACKEND"  # the module's instance: copies share it

    def warm_up(self) -> None:
        """Compile the filter's kernels for their signatures (:data:`SIGNATURES`) or load them from the cache."""
        warm_up()

    # -- the filter ------------------------------------------------------------------------------------------------

    def set_imu(self, ekf: BaseEkf, gyro_imu: FloatArray, accel_imu: FloatArray, dt_gyro: float) -> None:
        propagation.set_imu(ekf._x, ekf._c, _vec(gyro_imu, 3), _vec(accel_imu, 3), dt_gyro)

    def propagate(self, ekf: BaseEkf, dt: float, normalise: bool) -> None:
        propagation.propagate(ekf._x, ekf._P, ekf._c, dt, normalise)

    def imu_step(self, ekf: BaseEkf) -> Callable[..., int] | None:
        state = (ekf._x, ekf._P, ekf._c, ekf._clock, ekf._imu_limits)
        entry = self._imu_step_entry
        if entry is None:
            three = np.zeros(3)
            entry = self._imu_step_entry = jit.entry_point(propagation.imu_step, *state, 0, 0, three, three,
                                                           np.empty(OUT_SIZE))  # fmt: skip
        return functools.partial(entry, *state)

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
        use_J = J_base_foot is not None and s.encoder_velocity_noise > 0.0
        J = _mat3(J_base_foot, k) if use_J else _NO_FEET
        use_H = H_attitude is not None
        H_th = _NO_FEET if H_attitude is None else _mat(H_attitude, (k, 3, 3))
        out = np.empty(13 * k)
        sf2 = float(s.foot_velocity_noise**2)
        se2 = float(s.encoder_velocity_noise**2)
        n = update.leg_update(
            ekf._x, ekf._P, ekf._c, _mat(v_base_measured, (k, 3)), _mat(p_base_foot, (k, 3)), J, H_th, use_J,
            use_H, sf2, ekf.contact_creep_variance, se2, float(gate), out,
        )  # fmt: skip
        if n < 0:  # the stacked S is not numerically positive definite: the reference (LU) takes it
            return super().leg_update(ekf, names, v_base_measured, p_base_foot, J_base_foot, gate, H_attitude)
        return leg_results(names, out, gate)

    def stance_update(
        self,
        ekf: BaseEkf,
        contacts: BoolArray,
        qdot_joints: FloatArray,
        radii: FloatArray,
        p_base_foot: FloatArray,
        J6_base_foot: FloatArray,
        rolling: bool,
        use_J: bool,
        sf2: float,
        sc2: float,
        se2: float,
        gate: float,
        out: FloatArray,
    ) -> int:
        n: int = update.stance_update(ekf._x, ekf._P, ekf._c, contacts, qdot_joints, radii, p_base_foot, J6_base_foot,
                                      rolling, use_J, sf2, sc2, se2, gate, out)  # fmt: skip
        return n

    def update(self, ekf: BaseEkf, measurements: list[Measurement], gate: float) -> list[UpdateResult]:
        if measurements:
            results = self._update(ekf, measurements, gate)
            if results is not None:
                return results
        return super().update(ekf, measurements, gate)

    def _update(self, ekf: BaseEkf, measurements: list[Measurement], gate: float) -> list[UpdateResult] | None:
        """``update.update``; None (nothing changed) when an innovation covariance is not numerically positive
        definite."""
        sizes = [len(m.innovation) for m in measurements]
        n_rows = sum(sizes)
        y, H, R, G = stack_measurements(measurements, ekf.model.Sigma_gyro_sample)
        n = len(sizes)
        out = np.empty(sum(m * m for m in sizes) + n)
        n_acc = update.update(
            ekf._x, ekf._P, ekf._c, _mat(y, (n_rows,)), _mat(H, (n_rows, N_STATES)), _mat(R, (n_rows, n_rows)),
            np.zeros((n_rows, CROSS_COLS)) if G is None else _mat(G, (n_rows, CROSS_COLS)),
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
        k = len(feet)
        out = np.empty(13 * k)
        n = flat.rotation_update(
            ekf._x, ekf._P, ekf._c, np.ascontiguousarray(feet, dtype=np.int64),
            np.ascontiguousarray(qdot_joints, dtype=float), np.ascontiguousarray(J6_base_foot, dtype=float),
            float(rotation_noise**2), float(encoder_noise**2), float(gate), out,
        )  # fmt: skip
        if n < 0:
            return super().rotation_update(ekf, names, feet, qdot_joints, J6_base_foot, rotation_noise, encoder_noise,
                                           gate)  # fmt: skip
        results = []
        for j in range(k):
            y = out[3 * j : 3 * j + 3].copy()
            S = out[3 * k + 9 * j : 3 * k + 9 * j + 9].reshape(3, 3).copy()
            nis = float(out[12 * k + j])
            ok = math.isfinite(nis) and (gate <= 0.0 or nis <= gate)
            results.append(UpdateResult(names[j], y, S, nis, ok, "ok" if ok else "gated"))
        return results

    def quat_xyzw(self, ekf: BaseEkf) -> FloatArray:
        q = np.empty(4)
        outputs.quat_xyzw(ekf._x, q)
        return q

    def pose_covariance(self, ekf: BaseEkf) -> FloatArray:
        C = np.empty((6, 6))
        outputs.pose_covariance(ekf._x, ekf._P, ekf._c, C)
        return C

    def twist_covariance(self, ekf: BaseEkf) -> FloatArray:
        C = np.empty((6, 6))
        outputs.twist_covariance(ekf._x, ekf._P, ekf._c, C)
        return C

    def outputs(self, ekf: BaseEkf, out: FloatArray) -> None:
        outputs.outputs(ekf._x, ekf._P, ekf._c, out)

    def finite_outputs(self, ekf: BaseEkf, out: FloatArray) -> bool:
        return bool(outputs.finite_outputs(ekf._x, ekf._P, ekf._c, out))

    def state_is_finite(self, ekf: BaseEkf) -> bool:
        return bool(outputs.state_is_finite(ekf._x, ekf._P))

    # -- leg odometry ----------------------------------------------------------------------------------------------

    def joint_velocity_step(
        self, q: FloatArray, q_prev: FloatArray, qdot: FloatArray, dt: float, alpha: float, filtered: bool
    ) -> None:
        legs.joint_velocity_step(q, q_prev, qdot, dt, alpha, filtered)

    def schmitt_step(self, *args: Any) -> None:
        legs.schmitt_step(*args)

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
        k, nj = len(idx), J6_base_foot.shape[2]
        v_out, c_out, H_out = np.empty((k, 3)), np.empty((k, 3)), np.empty((k, 3, 3))
        Jc_out = np.empty((k, 3, nj))
        legs.leg_velocity_terms(idx, qdot_joints, omega_base_in_base, R_world_base, radii, p_base_foot, J6_base_foot,
                                v_out, c_out, Jc_out, H_out)  # fmt: skip
        return v_out, c_out, Jc_out, H_out

    def point_contact_terms(
        self,
        idx: IntArray,
        qdot_joints: FloatArray,
        omega_base_in_base: FloatArray,
        p_base_foot: FloatArray,
        J6_base_foot: FloatArray,
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        # the rolling-contact terms with zero radii: the same formula, one compiled call
        zeros = self._zero_radii.get(len(idx))
        if zeros is None:
            zeros = self._zero_radii[len(idx)] = np.zeros(len(idx))
        v, r, J, _ = self.leg_velocity_terms(idx, qdot_joints, omega_base_in_base, _I3, zeros, p_base_foot,
                                             J6_base_foot)  # fmt: skip
        return v, r, J

    def gather_joints(self, *args: Any) -> int:
        code: int = legs.gather_joints(*args)
        return code

    def prepare_joints(self, *args: Any) -> int:
        code: int = legs.prepare_joints(*args)
        return code

    def point_foot_forces(self, forces: ContactForceEstimator, tau_joints: FloatArray, R_world_base: FloatArray) -> int:
        if not forces.point_3x3:
            return DECLINED
        kin = forces.kin
        tau = np.asarray(tau_joints, dtype=float)
        # pinocchio's centre-of-mass Jacobian at kin.update's configuration (its data holds that configuration)
        Jcom = _jacobian_com(kin.model, kin.data)
        failed: int = legs.point_foot_forces(
            kin.J6_base_foot, forces.leg_columns, Jcom, forces.total_mass_kg, forces.g_world, tau, R_world_base,
            kin.X_base_foot, forces.force_in_world, forces.wrench_in_foot,
        )  # fmt: skip
        return failed

    def torque_contacts(
        self,
        forces: ContactForceEstimator,
        tau_joints: FloatArray,
        R_world_base: FloatArray,
        detector: ContactDetector,
        stamp_ns: int,
    ) -> int:
        if not forces.point_3x3:
            return DECLINED
        kin = forces.kin
        Jcom = _jacobian_com(kin.model, kin.data)
        d = detector
        failed: int = legs.torque_contacts(
            kin.J6_base_foot, forces.leg_columns, Jcom, forces.total_mass_kg, forces.g_world,
            np.asarray(tau_joints, dtype=float), R_world_base, kin.X_base_foot, forces.force_in_world,
            forces.wrench_in_foot, stamp_ns, d.on_threshold, d.off_threshold, d._min_on_ns, d._min_off_ns, d._raw,
            d.in_contact, d._pending, d._since_ns,
        )  # fmt: skip
        return failed

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
    ) -> CompiledJointStep | None:
        if not forces.point_3x3 or kin.n_feet > JOINT_MAX_FEET:
            return None
        try:
            return CompiledJointStep(ekf, kin, forces, detector, joint_input, radii, rolling, high_nis)
        except ModelError:  # a joint the compiled kinematics does not support: the per-part operations
            return None


# ----------------------------------------------------------------------------------------------------------------
# The filter kernels' signatures and warm-up
# ----------------------------------------------------------------------------------------------------------------

_f8 = types.float64
_b1 = types.boolean
_i8 = types.int64
_v = types.Array(_f8, 1, "C")
_m = types.Array(_f8, 2, "C")
_t = types.Array(_f8, 3, "C")
_iv = types.Array(_i8, 1, "C")

#: kernel -> the one signature compiled by :func:`warm_up` (callers pass C-contiguous, writable float64 arrays,
#: Python floats and bools; a read-only input compiles a second specialisation at its first use).
SIGNATURES: dict[Any, Any] = {
    propagation.set_imu: types.void(_v, _v, _v, _v, _f8),
    propagation.propagate: types.void(_v, _m, _v, _f8, _b1),
    update.leg_update: _i8(_v, _m, _v, _m, _m, _t, _t, _b1, _b1, _f8, _f8, _f8, _f8, _v),
    update.update: _i8(_v, _m, _v, _v, _m, _m, _m, _iv, _f8, _v),
    outputs.quat_xyzw: types.void(_v, _v),
    outputs.pose_covariance: types.void(_v, _m, _v, _m),
    outputs.twist_covariance: types.void(_v, _m, _v, _m),
    outputs.outputs: types.void(_v, _m, _v, _v),
    outputs.state_is_finite: _b1(_v, _m),
    propagation.imu_step: _i8(_v, _m, _v, _iv, _v, _i8, _i8, _v, _v, _v),
    outputs.finite_outputs: _b1(_v, _m, _v, _v),
}

_warmed = False


def warm_up() -> None:
    """Compile every filter kernel for its signature (:data:`SIGNATURES`), or load it from numba's on-disk cache,
    and run each once on scratch data; idempotent. The first compilation in a fresh environment takes some seconds;
    later processes load the cache in well under a second."""
    global _warmed
    if _warmed:
        return
    for fn, sig in SIGNATURES.items():
        fn.compile(sig)
    x = np.zeros(X_SIZE)
    x[X_R] = x[X_R + 4] = x[X_R + 8] = 1.0
    P = np.eye(N_STATES)
    c = np.zeros(C_SIZE)
    c[C_R_BASE_IMU] = c[C_R_BASE_IMU + 4] = c[C_R_BASE_IMU + 8] = 1.0
    three = np.zeros(3)
    propagation.set_imu(x, c, three, three, 0.0)
    propagation.propagate(x, P, c, 1e-3, False)
    one_foot = np.zeros((1, 3))
    update.leg_update(x, P, c, one_foot, one_foot, np.zeros((1, 3, 1)), np.zeros((1, 3, 3)), False, False, 1.0, 0.0,
                      0.0, 0.0, np.empty(13))  # fmt: skip
    update.update(x, P, c, three.copy(), np.eye(3, N_STATES), np.eye(3), np.zeros((3, CROSS_COLS)),
                  np.array([3], dtype=np.int64), 0.0, np.empty(10))  # fmt: skip
    outputs.quat_xyzw(x, np.empty(4))
    outputs.pose_covariance(x, P, c, np.empty((6, 6)))
    outputs.twist_covariance(x, P, c, np.empty((6, 6)))
    outputs.outputs(x, P, c, np.empty(OUT_SIZE))
    outputs.state_is_finite(x, P)
    limits = np.array([1.0, 0.0, 1.0, 1.0])
    propagation.imu_step(x, P, c, np.zeros(CLOCK_SIZE, dtype=np.int64), limits, 0, 1, three, three, np.empty(OUT_SIZE))
    outputs.finite_outputs(x, P, c, np.empty(OUT_SIZE))
    _warmed = True


#: the compiled backend (one per process: its entry-point caches hold no estimator state)
NUMBA_BACKEND = NumbaBackend()
