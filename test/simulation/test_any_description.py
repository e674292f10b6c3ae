"""``simulate`` on a description that is not bundled (example-robot-data's ANYmal B, no IMU block): its feet in
the generator's order, its SRDF standing pose, gait sized from the Go1's, an IMU declared on its base."""

from __future__ import annotations

import numpy as np
import pytest

from robot_state_estimator.common.robots import example_robot_data_share
from robot_state_estimator.description import load_description
from robot_state_estimator.description.declared_imu import declared_imu_spec
from robot_state_estimator.simulation import SimulationSettings, simulate
from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.robots import (
    ROBOTS,
    find_standing_srdf,
    quadruped_feet,
    scaled_gait,
    sim_robot_from_description,
)

ANYMAL_B = example_robot_data_share() / "robots" / "anymal_b_simple_description" / "robots" / "anymal.urdf"


@pytest.fixture(scope="module")
def anymal_b():
    desc = load_description(ANYMAL_B)
    return desc.with_declared_imu(
        declared_imu_spec(desc, name="imu", frame="base", pose_xyz_rpy=[0.1, 0, 0.05, 0, 0, 0])
    )


def test_feet_in_the_generator_order(anymal_b) -> None:
    # front-left, front-right, hind-left, hind-right: ANYmal's own names say which is which
    assert quadruped_feet(anymal_b) == ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT")
    with pytest.raises(SimulationError, match="has 2 feet"):
        quadruped_feet(anymal_b, ("LF_FOOT", "RF_FOOT"))


def test_gait_scaled_by_froude_similarity() -> None:
    go1 = ROBOTS["go1"].gait
    assert scaled_gait(0.254) == go1
    g = scaled_gait(4 * 0.254)  # 4 times taller: 4 times the step height, twice the periods and speeds
    assert g.step_height_m == pytest.approx(4 * go1.step_height_m)
    assert g.trot_period_s == pytest.approx(2 * go1.trot_period_s) and g.trot_speed_m_s == pytest.approx(
        2 * go1.trot_speed_m_s
    )


def test_a_trot_of_anymal_b_with_its_declared_imu(anymal_b) -> None:
    srdf = find_standing_srdf(ANYMAL_B)
    assert srdf is not None and srdf.name == "anymal.srdf"
    robot = sim_robot_from_description(anymal_b, srdf=srdf)
    run = simulate(SimulationSettings(robot=robot.name, gait="trot", duration_s=2.0, seed=1), robot=robot)
    assert run.feet == ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT") and run.imu.name == "imu"
    # standing still and level at the start: the accelerometer reads +g on z, the gyro nothing
    np.testing.assert_allclose(run.imu_f[0], [0.0, 0.0, 9.81], atol=1e-9)
    np.testing.assert_allclose(run.imu_omega[0], 0.0, atol=1e-12)
    assert np.ptp(run.q[:, 0]) > 0.2  # it trots forward


def test_straight_legs_in_the_standing_configuration_are_named_with_the_fix(tmp_path, capsys) -> None:
    """The Go1 description from a file with no SRDF beside it stands in its neutral configuration: every joint at 0,
    thigh and calf hanging straight down, so each foot Jacobian has rank 2 (the thigh and knee axes are parallel
    and the foot lies on their common plane). The generator's leg velocities have no solution there: a clear error
    naming the feet and --srdf, not numpy's "Singular matrix"; with the Go1's SRDF the same description trots."""
    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.tools import cli

    desc = load_description(robot_description_path("go1"))
    with pytest.raises(SimulationError, match=r"straight \(singular\) in the neutral configuration.*--srdf"):
        sim_robot_from_description(desc)
    path = tmp_path / "go1.urdf"
    path.write_text(desc.xml)
    argv = ["simulate", "--description", str(path), "--duration", "1", "--output", str(tmp_path / "run")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "['FL_foot', 'FR_foot', 'RL_foot', 'RR_foot'] are straight" in err and "--srdf" in err
    srdf = example_robot_data_share() / "robots" / ROBOTS["go1"].srdf
    assert cli.main([*argv, "--srdf", str(srdf), "--gait", "trot"]) == 0


def test_the_standing_srdf_is_found_next_to_example_robot_data_descriptions() -> None:
    """example-robot-data names an SRDF as its URDF (a1, b1-z1) or by the robot family (solo.srdf for solo12.urdf,
    hyq.srdf for hyq_no_sensors.urdf); an exact name wins over a shorter family name; Laikago ships none."""
    robots = example_robot_data_share() / "robots"
    cases = {
        "a1_description/urdf/a1.urdf": "a1_description/srdf/a1.srdf",
        "b1_description/urdf/b1.urdf": "b1_description/srdf/b1.srdf",
        "b1_description/urdf/b1-z1.urdf": "b1_description/srdf/b1-z1.srdf",
        "solo_description/robots/solo12.urdf": "solo_description/srdf/solo.srdf",
        "hyq_description/robots/hyq_no_sensors.urdf": "hyq_description/srdf/hyq.srdf",
    }
    for urdf, srdf in cases.items():
        assert find_standing_srdf(robots / urdf) == (robots / srdf).resolve(), urdf
    assert find_standing_srdf(robots / "laikago_description" / "urdf" / "laikago.urdf") is None
