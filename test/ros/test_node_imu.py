"""The node with the IMU chosen (``imu_name``) or declared by parameters (``declared_imu.*``): real DDS, real
descriptions (the bundled Go1 with a second IMU block, example-robot-data's Go2 without any), real filter."""

from __future__ import annotations

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from rclpy.parameter import Parameter  # noqa: E402

from robot_state_estimator.common.paths import robot_description_path  # noqa: E402
from robot_state_estimator.common.robots import example_robot_data_share  # noqa: E402
from robot_state_estimator.common.samples import JointSample  # noqa: E402
from robot_state_estimator.description import load_description  # noqa: E402
from robot_state_estimator.io import messages  # noqa: E402
from robot_state_estimator.ros.message_types import TYPES  # noqa: E402
from robot_state_estimator.ros.node import EstimatorNode, StartupError  # noqa: E402

from .conftest import spin_until  # noqa: E402
from .streams import GO1_JOINTS, STAND_Q, Step, imu_msg  # noqa: E402
from .test_node import Harness  # noqa: E402

pytestmark = pytest.mark.ros

T0 = 1_000 * 10**9
GO2 = str(example_robot_data_share() / "robots" / "go2_description" / "urdf" / "go2.urdf")


def _go1_two_imus() -> str:
    xml = load_description(robot_description_path("go1")).xml
    block = '<gazebo reference="trunk"><sensor name="imu2" type="imu"><pose>0 0 0.05 0 0 0</pose></sensor></gazebo>'
    return xml.replace("</robot>", block + "</robot>")


#: hip, thigh, calf torques (N m) that load each foot (about 40 N on a Go1 or Go2 standing at STAND_Q): the filter
#: initialises once a foot is loaded (ekf.init_wait_for_loaded_feet)
STAND_TAU = np.tile([0.0, -2.0, 5.0], 4)


def _joints(stamp_ns: int):
    sample = JointSample(stamp_ns, GO1_JOINTS, STAND_Q, np.zeros(12), STAND_TAU)
    return messages.joint_state_msg(TYPES, sample)


def _standing(frame_id: str, duration_s: float = 0.6, rate_hz: float = 500.0):
    dt_ns = round(1e9 / rate_hz)
    for k in range(int(duration_s * rate_hz)):
        t = T0 + k * dt_ns
        yield Step("imu", t, imu_msg(t, frame_id=frame_id))
        yield Step("joints", t, _joints(t))


def test_several_imus_and_none_chosen_fail_at_start_listing_them(ros_context) -> None:
    with pytest.raises(StartupError) as info:
        EstimatorNode(context=ros_context, parameter_overrides=[Parameter("robot_description", value=_go1_two_imus())])
    text = str(info.value)
    assert "has 2 IMUs" in text and "'imu_sensor' (link 'base'" in text and "'imu2' (link 'base'" in text
    assert "imu_name:=NAME" in text and "--imu NAME" in text


def test_unknown_imu_name_fails_at_start_with_did_you_mean(ros_context) -> None:
    params = [Parameter("robot_description", value=_go1_two_imus()), Parameter("imu_name", value="imu_2")]
    with pytest.raises(StartupError, match=r"no IMU 'imu_2' \(did you mean 'imu2'\?\)"):
        EstimatorNode(context=ros_context, parameter_overrides=params)


def test_imu_name_chooses_the_imu_and_its_frame(ros_context) -> None:
    h = Harness(ros_context, "/chosen_imu", robot_description=_go1_two_imus(), imu_name="imu2", robot="go1")
    try:
        assert h.node.estimator.imu.name == "imu2"
        frames = h.node._stream.imu_frames
        assert "imu2" in frames and "imu_sensor" not in frames and "imu_link" not in frames
        h.publish(_standing("imu_sensor", 0.1))  # the other IMU's frame: refused by name
        assert h.node._stream.rejected["imu_frame_id"] == 50
        h.publish(_standing("imu2"))
        assert spin_until(h.executor, lambda: len(h.out["odometry"]) > 100)
        assert h.out["odometry"][-1].child_frame_id == "base"
    finally:
        h.close()


def test_go2_with_an_imu_declared_by_parameters(ros_context) -> None:
    h = Harness(
        ros_context,
        "/declared_imu",
        description_file=GO2,
        **{
            "declared_imu.link": "imu",
            "declared_imu.update_rate_hz": 500.0,
            "declared_imu.gyro_noise_density_rad_s_sqrt_hz": 2.4e-4,
        },
    )
    try:
        imu = h.node.estimator.imu
        assert imu.source == "settings" and imu.link == "imu" and imu.frame_id == "imu"
        assert list(h.node.get_parameter("declared_imu.pose").value) == [0.0] * 6
        h.publish(_standing("imu"))
        assert spin_until(h.executor, lambda: len(h.out["odometry"]) > 100)
        events = h.node._stream.events
        assert events["imu_declared"] == 1 and events["imu_noise_assumed"] == 1
        assert h.out["odometry"][-1].child_frame_id == "base"
        assert abs(h.out["odometry"][-1].pose.pose.orientation.w) > 0.999
    finally:
        h.close()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"declared_imu.link": "imu_lnk"}, r"declared_imu.link 'imu_lnk' is not a link or frame.*did you mean 'imu'"),
        (
            {"declared_imu.link": "imu", "declared_imu.accel_noise_density_m_s2_sqrt_hz": -0.1},
            r"invalid estimator settings: declared_imu.accel_noise_density_m_s2_sqrt_hz must be finite and >= 0",
        ),
        (
            {"declared_imu.link": "imu", "declared_imu.gyro_bias_instability_rad_s": float("nan")},
            r"declared_imu.gyro_bias_instability_rad_s must be finite",
        ),
        ({}, r"has no IMU sensor.*declared_imu.link"),
    ],
)
def test_bad_declared_imu_parameters_fail_at_start_by_name(ros_context, params: dict, message: str) -> None:
    overrides = [Parameter("description_file", value=GO2)] + [Parameter(k, value=v) for k, v in params.items()]
    with pytest.raises(StartupError, match=message):
        EstimatorNode(context=ros_context, parameter_overrides=overrides)


def test_the_node_loads_the_template_info_writes(ros_context, tmp_path) -> None:
    from robot_state_estimator.tools import cli

    path = tmp_path / "go2.yaml"
    assert cli.main(["info", GO2, "--write-config", str(path)]) == 0
    node = EstimatorNode(
        context=ros_context,
        namespace="/template",
        parameter_overrides=[Parameter("description_file", value=GO2), Parameter("config_file", value=str(path))],
    )
    try:
        imu = node.estimator.imu
        assert imu.source == "settings" and imu.name == "imu" and imu.link == "imu"
        assert list(node.get_parameter("foot_frames").value) == ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
    finally:
        node.destroy_node()
