"""The bench's ``kinematics`` section runs and times the same thing on both sides (that it works, not how fast)."""

from __future__ import annotations

from robot_state_estimator.tools import bench_kinematics


def test_kinematics_section_short() -> None:
    section = bench_kinematics.bench_kinematics(short=True)
    assert section["robot"] == "go1 (12 joints, 4 feet)"
    for key in ("foot_terms_and_com_jacobian", "full_dynamics_bias_torques", "rnea"):
        assert section["pinocchio_us"][key] > 0.0
    for key in ("foot_terms", "gravity_torques", "rnea"):
        assert section["compiled_from_python_us"][key] > 0.0
    assert section["compiled_in_kernel_us"]["foot_terms"] > 0.0
    assert section["ratio_foot_terms_from_python"] > 0.0
    # the compiled results equal pinocchio's in the timed configuration (placements, Jacobians, torques)
    assert section["max_abs_difference"] <= 1e-12
    (line,) = bench_kinematics.summary_lines(section)
    assert line.startswith("kinematics (go1")
