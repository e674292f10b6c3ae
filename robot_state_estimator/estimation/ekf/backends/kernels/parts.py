"""The parts of the compiled IMU and joint steps, each repeated in a compiled loop, for the benchmark's breakdown of
the core step (``make bench``, section ``core``): the time of one part is the loop's CPU time over its repetitions,
so the cost of calling from Python is left out (it is the rest of the measured step).

Compiled at the benchmark's first use, not cached (``numba.njit`` without ``cache``: nothing here is on the
estimator's path, so ``jit.kernels_need_compiling`` does not look at it). Each loop restores the state it changes
from a copy before every repetition (the step's state stays the one measured); :func:`repeat_copy` is that
restoring alone, subtracted by the caller.
"""

from __future__ import annotations

import numba
import numpy as np

from robot_state_estimator.estimation.ekf.backends.kernels.joint_step import bias_torques
from robot_state_estimator.estimation.ekf.backends.kernels.legs import forces_from_bias, schmitt_step
from robot_state_estimator.estimation.ekf.backends.kernels.outputs import finite_outputs
from robot_state_estimator.estimation.ekf.backends.kernels.propagation import imu_step
from robot_state_estimator.estimation.ekf.backends.kernels.update import stance_update
from robot_state_estimator.estimation.ekf.layout import OUT_SIZE, X_R
from robot_state_estimator.estimation.kinematics_kernels import foot_terms

_loop = numba.njit(nogil=True)


@_loop
def _restore(x: np.ndarray, P: np.ndarray, x0: np.ndarray, P0: np.ndarray) -> None:
    for i in range(x.shape[0]):
        x[i] = x0[i]
    for i in range(P.shape[0]):
        for j in range(P.shape[1]):
            P[i, j] = P0[i, j]


@_loop
def repeat_copy(n: int, x: np.ndarray, P: np.ndarray, x0: np.ndarray, P0: np.ndarray) -> float:
    """The state restored ``n`` times (the loops' own cost). Returns a checksum (keeps the loop)."""
    s = 0.0
    for _ in range(n):
        _restore(x, P, x0, P0)
        s += x[0]
    return s


@_loop
def repeat_propagation(
    n: int, x: np.ndarray, P: np.ndarray, c: np.ndarray, x0: np.ndarray, P0: np.ndarray, clock: np.ndarray,
    limits: np.ndarray, t_ns: int, stamp_ns: int, gyro: np.ndarray, accel: np.ndarray,
) -> float:  # fmt: skip
    """:func:`imu_step` (its bookkeeping, the reading's check, propagation, outputs) ``n`` times from the state
    ``x0, P0`` and the bookkeeping ``clock`` (restored as well)."""
    out = np.empty(OUT_SIZE)
    clock0 = clock.copy()
    s = 0.0
    for _ in range(n):
        _restore(x, P, x0, P0)
        clock[:] = clock0
        imu_step(x, P, c, clock, limits, t_ns, stamp_ns, gyro, accel, out)
        s += out[0]
    return s


@_loop
def repeat_kinematics(
    n: int, x: np.ndarray, c: np.ndarray, joint_ints: np.ndarray, joint_floats: np.ndarray, frame_ints: np.ndarray,
    frame_floats: np.ndarray, work: np.ndarray, X_base_foot: np.ndarray, J6: np.ndarray, dyn: np.ndarray,
    qtau: np.ndarray, total_mass: float, g_world: np.ndarray, full: bool, stamp_ns: int, qdot_prev: np.ndarray,
    prev_stamp: np.ndarray,
) -> float:  # fmt: skip
    """The joint step's kinematics and dynamics ``n`` times: :func:`foot_terms` (foot placements and Jacobians,
    centre-of-mass Jacobian) and :func:`bias_torques` (``g(q)`` or RNEA)."""
    nj = J6.shape[2]
    J_com = dyn[6 : 6 + 3 * nj].reshape((3, nj))
    s = 0.0
    for _ in range(n):
        m = foot_terms(qtau[0], joint_ints, joint_floats, frame_ints, frame_floats, work, X_base_foot, J6, dyn[3:6],
                       J_com)  # fmt: skip
        bias = bias_torques(x, c, joint_ints, joint_floats, work, dyn, m, g_world, qtau[1], full, stamp_ns,
                            qdot_prev, prev_stamp)  # fmt: skip
        s += bias[0]
    return s


@_loop
def repeat_contacts(
    n: int, x: np.ndarray, J6: np.ndarray, legs: np.ndarray, bias: np.ndarray, qtau: np.ndarray,
    X_base_foot: np.ndarray, force_in_world: np.ndarray, wrench_in_foot: np.ndarray, on: float, off: float,
    min_on_ns: int, min_off_ns: int, flags: np.ndarray, since_ns: np.ndarray, stamp_ns: int,
) -> float:  # fmt: skip
    """The contact logic ``n`` times: the point-foot forces from the bias torques and the Schmitt trigger."""
    R = x[X_R : X_R + 9].reshape((3, 3))
    s = 0.0
    for k in range(n):
        forces_from_bias(J6, legs, bias, qtau[2], R, X_base_foot, force_in_world, wrench_in_foot)
        schmitt_step(force_in_world[:, 2], stamp_ns + k, on, off, min_on_ns, min_off_ns, flags[0], flags[1],
                     flags[2], since_ns)  # fmt: skip
        s += force_in_world[0, 2]
    return s


@_loop
def repeat_update(
    n: int, x: np.ndarray, P: np.ndarray, c: np.ndarray, x0: np.ndarray, P0: np.ndarray, contacts: np.ndarray,
    qdot: np.ndarray, radii: np.ndarray, X_base_foot: np.ndarray, J6: np.ndarray, rolling: bool, use_J: bool,
    sf2: float, sc2: float, se2: float, gate: float,
) -> float:  # fmt: skip
    """The stance feet's leg update (stacked, Joseph form) and the outputs ``n`` times from the state ``x0, P0``."""
    k = 0
    for i in range(contacts.shape[0]):
        k += 1 if contacts[i] else 0
    leg_out = np.empty(13 * k)
    out = np.empty(OUT_SIZE)
    s = 0.0
    for _ in range(n):
        _restore(x, P, x0, P0)
        stance_update(x, P, c, contacts, qdot, radii, X_base_foot[:, :3, 3], J6, rolling, use_J, sf2, sc2, se2, gate,
                      leg_out)  # fmt: skip
        finite_outputs(x, P, c, out)
        s += out[0]
    return s
