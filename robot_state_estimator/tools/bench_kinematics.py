"""The ``kinematics`` section of ``robot-state-estimator bench``: one joint step's kinematics and dynamics, the
pinocchio calls the hot path makes today against the compiled kernels (``estimation/kinematics_kernels.py``), in
one run, on the bundled Go1 with its 4 feet.

Each figure is microseconds per call, CPU time of this process (other processes on the cores count less), the
best of ``repeats`` batches of ``number`` calls, with the garbage collector paused:

- ``pinocchio_us.foot_terms_and_com_jacobian``: ``LegKinematics.foot_terms`` (``computeJointJacobians``, then per
  foot ``updateFramePlacement`` and ``getFrameJacobian``) and ``jacobianCenterOfMass``: what the joint step
  calls before its kernel (the backend's ``JointStep.run``, from ``leg_odometry.LegOdometry._run_joint_step``); the
  default force estimate's gravity torques come from that Jacobian;
- ``pinocchio_us.full_dynamics_bias_torques``: ``ContactForceEstimator.bias_torques`` with
  ``use_full_dynamics`` (gravity into B, the configuration, ``pin.rnea``); ``pinocchio_us.rnea``: ``pin.rnea``
  alone;
- ``compiled_from_python_us``: the same through :class:`CompiledKinematics` (one compiled entry point per call,
  no numba type dispatch; the arguments' unboxing included): ``foot_terms`` (placements, Jacobians, centre of
  mass and its Jacobian), ``gravity_torques``, ``rnea``;
- ``compiled_in_kernel_us``: the kernels called in a loop inside compiled code (what they cost inside a compiled
  filter step, with no Python call at all);
- ``ratio_*``: pinocchio's time over the compiled one, same run; ``max_abs_difference``: the largest difference
  between the two results in this run (a check that the same thing was timed).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pinocchio as pin

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.description import load_description
from robot_state_estimator.estimation import kinematics_kernels as kk
from robot_state_estimator.estimation.compiled_kinematics import CompiledKinematics
from robot_state_estimator.estimation.contact import ContactForceEstimator
from robot_state_estimator.estimation.jit import kernel, numba_available
from robot_state_estimator.estimation.kinematics import LegKinematics
from robot_state_estimator.estimation.model_constants import extract_model_constants

F = kk.FloatArray
Ints = kk.IntArray


def _best_us(func: Callable[[], Any], number: int, repeats: int) -> float:
    """Microseconds per call of ``func``: the best of ``repeats`` batches of ``number`` calls, CPU time."""
    best = float("inf")
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.process_time()
            for _ in range(number):
                func()
            best = min(best, time.process_time() - t0)
    finally:
        if enabled:
            gc.enable()
    return 1e6 * best / number


@kernel
def _foot_terms_loop(n: int, q: F, ji: Ints, jf: F, fi: Ints, ff: F, work: F, X: F, J: F, com: F, J_com: F) -> float:
    """``n`` calls of ``foot_terms`` inside compiled code."""
    total = 0.0
    for _ in range(n):
        total += kk.foot_terms(q, ji, jf, fi, ff, work, X, J, com, J_com)
    return total


@kernel
def _rnea_loop(n: int, v: F, a: F, g: F, ji: Ints, jf: F, work: F, tau: F) -> None:
    """``n`` calls of ``rnea`` inside compiled code."""
    for _ in range(n):
        kk.rnea(v, a, g, ji, jf, work, tau)


def _best_loop_us(func: Callable[[int], Any], number: int, repeats: int) -> float:
    func(1)  # compile (or load the cache) outside the timing
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        func(number)
        best = min(best, time.process_time() - t0)
    return 1e6 * best / number


def bench_kinematics(*, short: bool = False, robot: str = "go1") -> dict[str, Any]:
    """Pinocchio's calls of the joint step against the compiled kernels, us per call (module docstring).

    Args:
        short: fewer calls (the test suite).
        robot: a bundled robot.
    """
    number, repeats = (200, 2) if short else (5000, 5)
    desc = load_description(str(robot_description_path(robot)))
    model, feet = desc.model, desc.foot_frames()
    kin = LegKinematics(model, feet, base_link=desc.base_link)
    forces = ContactForceEstimator(kin, use_full_dynamics=True)
    ck = CompiledKinematics(extract_model_constants(model, feet))
    rng = np.random.default_rng(0)
    nj = model.nv - 6
    q = np.ascontiguousarray(pin.neutral(model)[7:] + rng.uniform(-0.3, 0.3, nj))
    v = rng.normal(size=model.nv)
    a = rng.normal(size=model.nv)
    R_world_base = np.asarray(pin.exp3(np.array([0.05, -0.1, 0.3])))
    g_base = R_world_base.T @ forces.g_world
    q_full = pin.neutral(model)
    q_full[:7] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    q_full[7:] = q
    rnea_model = pin.Model(model)
    rnea_model.gravity = pin.Motion(g_base, np.zeros(3))
    rnea_data = rnea_model.createData()

    def pinocchio_foot_terms() -> None:
        kin.foot_terms(q)
        pin.jacobianCenterOfMass(kin.model, kin.data)

    pin_feet = _best_us(pinocchio_foot_terms, number, repeats)
    pin_bias = _best_us(lambda: forces.bias_torques(q, R_world_base, v=v, a=a), number, repeats)
    pin_rnea = _best_us(lambda: pin.rnea(rnea_model, rnea_data, q_full, v, a), number, repeats)
    ck_feet = _best_us(lambda: ck.update(q), number, repeats)
    ck_gravity = _best_us(lambda: ck.gravity_torques(g_base), number, repeats)
    ck_rnea = _best_us(lambda: ck.rnea(v, a, g_base), number, repeats)
    out: dict[str, Any] = {
        "robot": f"{robot} ({nj} joints, {len(feet)} feet)",
        "calls": {"number": number, "repeats": repeats},
        "pinocchio_us": {
            "foot_terms_and_com_jacobian": pin_feet,
            "full_dynamics_bias_torques": pin_bias,
            "rnea": pin_rnea,
        },
        "compiled_from_python_us": {"foot_terms": ck_feet, "gravity_torques": ck_gravity, "rnea": ck_rnea},
        "ratio_foot_terms_from_python": pin_feet / ck_feet,
        "ratio_full_dynamics_from_python": pin_bias / ck_rnea,
    }
    if numba_available():
        m, work = ck.model, ck.work
        feet_args = (q, m.joint_ints, m.joint_floats, m.frame_ints, m.frame_floats, work, ck.X_base_frame,
                     ck.J_base_frame, ck.com, ck.J_com)  # fmt: skip
        loops = max(number * 10, 2000)
        in_feet = _best_loop_us(lambda n: _foot_terms_loop(n, *feet_args), loops, repeats)
        tau = np.empty(model.nv)
        in_rnea = _best_loop_us(
            lambda n: _rnea_loop(n, v, a, g_base, m.joint_ints, m.joint_floats, work, tau), loops, repeats
        )
        out["compiled_in_kernel_us"] = {"foot_terms": in_feet, "rnea": in_rnea}
        out["ratio_foot_terms_in_kernel"] = pin_feet / in_feet
        out["ratio_full_dynamics_in_kernel"] = pin_bias / in_rnea
    # the same results (the last calls of each): placements, Jacobians, CoM Jacobian, torques
    placements, jacobians = kin.foot_terms(q)
    J_com = pin.jacobianCenterOfMass(kin.model, kin.data)
    ck.update(q)
    diffs = [np.abs(ck.X_base_frame - np.array(placements)).max(), np.abs(ck.J_com - J_com[:, 6:]).max()]
    diffs.append(np.abs(ck.J_base_frame - np.array(jacobians)[:, :, 6:]).max())
    diffs.append(np.abs(ck.rnea(v, a, g_base)[6:] - forces.bias_torques(q, R_world_base, v=v, a=a)).max())
    out["max_abs_difference"] = float(max(diffs))
    return out


def summary_lines(section: dict[str, Any]) -> list[str]:
    """The headline of a :func:`bench_kinematics` result."""
    p, c = section["pinocchio_us"], section["compiled_from_python_us"]
    line = (
        f"kinematics ({section['robot']}): pinocchio foot terms + CoM Jacobian {p['foot_terms_and_com_jacobian']:.2f}"
        f" us, compiled {c['foot_terms']:.2f} us from Python"
    )
    k = section.get("compiled_in_kernel_us")
    if k:
        line += f", {k['foot_terms']:.2f} us inside compiled code"
    line += f"; full dynamics: pinocchio {p['full_dynamics_bias_torques']:.2f} us, compiled {c['rnea']:.2f} us"
    if k:
        line += f" ({k['rnea']:.2f} us inside)"
    return [line + f"; max difference {section['max_abs_difference']:.1e}"]
