"""Compile the estimator's numba kernels ahead of the first node start: ``python -m
robot_state_estimator.estimation.precompile`` (``make setup`` runs it; after ``colcon build`` it is
``ros2 run robot_state_estimator precompile_kernels``).

numba compiles a kernel at its first call and caches the machine code on disk next to the module
(``jit.kernel``: ``cache=True``). A process that finds the cache loads it in well under a second; one that does
not compiles for about a minute on a shared 2-core machine. Without this step that minute is spent by the first
``estimator_node`` after an install, where ``ros2 launch`` and launch tests expect a node to answer in seconds.
Building an estimator on a bundled robot runs every warm-up the node's construction runs (the EKF's kernels for
their signatures, the joint path's kernels with the layouts of the real calls), so the same cache entries are
written (the joint step with its compiled kinematics and dynamics, built from the robot's constants: its signature
depends on no property of the robot, so one compilation serves every robot); the compiled kinematics' Python access
(``compiled_kinematics.CompiledKinematics``, tests and benchmarks) is compiled for the bundled robot's feet too, and the
flat feet's orientation update (humanoid soles: its own kernel) on the same robot. ``jit.kernels_need_compiling`` is
False afterwards (numba's own cache test on every kernel) and no node start says it compiles.
"""

from __future__ import annotations

import dataclasses
import sys
import time

from robot_state_estimator.estimation.ekf.backends import select_backend
from robot_state_estimator.estimation.jit import kernels_need_compiling


def compile_kernels(robot: str = "go1") -> float:
    """Compile (or load from the cache) every kernel the estimator uses; returns the seconds it took, or 0.0 when
    the kernels are not used (numba missing or ``ROBOT_STATE_ESTIMATOR_DISABLE_JIT``).

    Args:
        robot: a bundled robot (``common.paths.BUNDLED_ROBOTS``) whose description the estimator is built on.

    Raises:
        KeyError: ``robot`` is not bundled.
    """
    if not select_backend().compiled:
        return 0.0
    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.description import load_description
    from robot_state_estimator.estimation.compiled_kinematics import compile_kinematics_kernels
    from robot_state_estimator.estimation.pipeline import RobotStateEstimator
    from robot_state_estimator.estimation.settings import EstimatorSettings

    start = time.monotonic()
    desc = load_description(str(robot_description_path(robot)))
    RobotStateEstimator.from_description(desc)
    compile_kinematics_kernels(desc.model, desc.foot_frames())
    defaults = EstimatorSettings()
    flat = dataclasses.replace(defaults, ekf=dataclasses.replace(defaults.ekf, flat_foot_update="all"))
    RobotStateEstimator.from_description(desc, flat)  # the flat-foot orientation update
    return time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    """``precompile_kernels [--if-needed]``: compile the kernels, print what was done; exit code 0.
    ``--if-needed`` does nothing (quietly) when every kernel module already has a fresh cache."""
    args = sys.argv[1:] if argv is None else argv
    if "--if-needed" in args and not kernels_need_compiling():
        return 0
    if not select_backend().compiled:
        print("precompile_kernels: numba kernels are not used (numba missing or ROBOT_STATE_ESTIMATOR_DISABLE_JIT)")
        return 0
    seconds = compile_kernels()
    print(f"precompile_kernels: the estimator's numba kernels are compiled and cached ({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
