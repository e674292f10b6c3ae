"""Findings of the fifth fresh-user trial of the node, in-process over real DDS (the process tests are in
``test_end_to_end.py``):

- ``last_stamp_s`` in ``/diagnostics`` keeps every nanosecond of a wall-clock stamp (it was ``%.6g``);
- a parameter override that matches no parameter (``-p``, a ``--params-file`` section for this node) is named
  in one start-up warning with the closest names;
- a URDF without detectable feet names the ``foot_frames`` parameter; an empty ``robot_description`` message
  says so and the node keeps waiting;
- no foot in contact for more than ``NO_CONTACT_WARN_S`` makes the contacts status WARN (and back to OK);
- the lost-sample warning names the gap in the stamps and the causes, stamp jitter of the sender included;
- the start-up line names the settings file; ``robot`` with another robot's description is warned about.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_state_estimator.common.paths import config_dir, robot_description_path  # noqa: E402
from robot_state_estimator.common.samples import JointSample  # noqa: E402
from robot_state_estimator.io import messages  # noqa: E402
from robot_state_estimator.io.stream import LOSS_WINDOW, StampLossCounter  # noqa: E402
from robot_state_estimator.ros import qos  # noqa: E402
from robot_state_estimator.ros.diagnostics import NO_CONTACT_WARN_S, format_stamp_s  # noqa: E402
from robot_state_estimator.ros.message_types import TYPES  # noqa: E402
from robot_state_estimator.ros.node import EstimatorNode, StartupError  # noqa: E402

from .conftest import spin_until  # noqa: E402
from .streams import GO1_JOINTS, STAND_Q, Step, imu_msg  # noqa: E402
from .test_node import Harness  # noqa: E402

pytestmark = pytest.mark.ros

#: a wall-clock stamp (2026-11-30) with every digit of its nanoseconds set
T_WALL = 1_796_020_000_123_456_789


def _status(harness: Harness, part: str) -> Any:
    """Trigger one ``/diagnostics`` report and return its ``<node>: <part>`` status."""
    name = f"{harness.node.get_fully_qualified_name()}: {part}"
    harness.out["diagnostics"].clear()
    harness.node._publish_diagnostics()

    def found() -> Any:
        for array in harness.out["diagnostics"]:
            for status in array.status:
                if status.name == name:
                    return status
        return None

    assert spin_until(harness.executor, lambda: found() is not None)
    return found()


def _values(status: Any) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def _stream(start_ns: int, duration_s: float, effort: Any, *, rate_hz: float = 500.0) -> list[Step]:
    """A Go1 standing still (IMU at rest, the standing joint pose) with the per-leg efforts ``effort`` (hip,
    thigh, calf; N m), IMU then joints at every stamp."""
    dt_ns = round(1e9 / rate_hz)
    steps = []
    for k in range(int(duration_s * rate_hz)):
        t = start_ns + k * dt_ns
        efforts = None if effort is None else np.tile(np.asarray(effort, float), 4)
        sample = JointSample(t, GO1_JOINTS, STAND_Q, np.zeros(12), efforts)
        steps += [Step("imu", t, imu_msg(t)), Step("joints", t, messages.joint_state_msg(TYPES, sample))]
    return steps


# ------------------------------------------------------------------------------------------ 1. stamps


def test_format_stamp_s_is_exact_to_the_nanosecond() -> None:
    assert format_stamp_s(T_WALL) == "1796020000.123456789"
    assert format_stamp_s(5) == "0.000000005"
    assert format_stamp_s(10**9) == "1.000000000"
    assert format_stamp_s(-1_500_000_000) == "-1.500000000"


def test_last_stamp_s_keeps_the_nanoseconds_of_a_wall_clock_stamp(quiet_harness: Harness) -> None:
    quiet_harness.publish(_stream(T_WALL, 0.4, (0.0, -2.0, 5.0)))
    last = quiet_harness.sent["imu"][-1]  # IMU then joints at each stamp: the last estimate has the last stamp
    assert spin_until(quiet_harness.executor, lambda: quiet_harness.node._diag.last_estimate is not None)
    values = _values(_status(quiet_harness, "filter"))
    assert values["last_stamp_s"] == f"{last // 10**9}.{last % 10**9:09d}"
    assert values["last_stamp_s"].endswith("789")  # T_WALL + k * 2 ms: the ns digits survive


# ------------------------------------------------------------------------------- 2. unknown overrides


def test_overrides_that_match_no_parameter_are_warned_about_with_the_closest_names(
    ros_domain_env: dict[str, str], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """``-p`` and a ``/**:`` params file section (rcl parses both, as on the command line): the misspelt names
    are named once, with the closest declared ones; the parameters of the file that exist are not, nor
    ``use_sim_time`` (declared by rclpy), nor a section for another node."""
    params = tmp_path / "p.yaml"
    params.write_text(
        "/**:\n  ros__parameters:\n    use_sim_time: false\n    odometry_rate_hz: 50.0\n"
        "    ekf:\n      foot_velocity_nosie: 0.3\n"
        "other_node:\n  ros__parameters:\n    frame_rate_hz: 30.0\n"
    )
    args = ["estimator_node", "--ros-args", "-p", "robot:=go1", "-p", "qos_dpth:=3", "--params-file", str(params)]
    context = rclpy.Context()
    rclpy.init(context=context, args=args, domain_id=int(ros_domain_env["ROS_DOMAIN_ID"]))
    node = None
    try:
        node = EstimatorNode(context=context, namespace="/unknown_overrides")
        assert node.get_parameter("odometry_rate_hz").value == 50.0  # the file applies to the node
        unknown = node.unknown_overrides()
        assert list(unknown) == ["ekf.foot_velocity_nosie", "qos_dpth"]
        assert unknown["ekf.foot_velocity_nosie"][0] == "ekf.foot_velocity_noise"
        assert unknown["qos_dpth"] == ["qos_depth"]
        warning = node.unknown_overrides_warning
        assert "'ekf.foot_velocity_nosie' (did you mean 'ekf.foot_velocity_noise'" in warning
        assert "'qos_dpth' (did you mean 'qos_depth'?)" in warning
        assert "use_sim_time" not in warning and "frame_rate_hz" not in warning and "odometry_rate_hz" not in warning
        err = capfd.readouterr().err
        assert err.count("[unknown_parameter]") == 1 and "[WARN]" in err, err
    finally:
        if node is not None:
            node.destroy_node()
        context.try_shutdown()


def test_no_warning_when_every_override_is_a_parameter(ros_context: Any) -> None:
    overrides = [Parameter("robot", value="go1"), Parameter("use_sim_time", value=False)]
    overrides.append(Parameter("contact.on_threshold", value=0.4))
    node = EstimatorNode(context=ros_context, namespace="/known_overrides", parameter_overrides=overrides)
    try:
        assert node.unknown_overrides() == {} and node.unknown_overrides_warning == ""
    finally:
        node.destroy_node()


def test_a_live_set_of_a_misspelt_name_is_warned_about_with_the_closest_names(
    ros_context: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    """``ros2 param set`` of a misspelt name: rclpy refuses it with a reason that names nothing ("... undeclared
    parameter(s): []"); the node's log names it and the parameter meant. A known name sets without the warning."""
    from rclpy.exceptions import ParameterNotDeclaredException

    node = EstimatorNode(
        context=ros_context, namespace="/live_set", parameter_overrides=[Parameter("robot", value="go1")]
    )
    try:
        capfd.readouterr()
        with pytest.raises(ParameterNotDeclaredException):
            node.set_parameters_atomically(
                [Parameter("contact.on_treshold", value=5.0)]
            )  # the parameter service's call
        err = capfd.readouterr().err
        assert "[unknown_parameter] cannot set 'contact.on_treshold' (did you mean 'contact.on_threshold'" in err, err
        assert node.set_parameters_atomically([Parameter("odometry_rate_hz", value=100.0)]).successful
        assert node.get_parameter("odometry_rate_hz").value == 100.0
        assert "[unknown_parameter]" not in capfd.readouterr().err
    finally:
        node.destroy_node()


def test_an_empty_string_written_as_two_quotes_reaches_the_node(ros_domain_env: dict[str, str]) -> None:
    """The hint of the malformed ``-p NAME:=`` error: ``NAME:=''`` (``-p NAME:="''"`` in a shell) is the empty
    string for rcl's parser."""
    context = rclpy.Context()
    args = ["estimator_node", "--ros-args", "-p", "robot:=go1", "-p", "tf_child_frame:=''"]
    rclpy.init(context=context, args=args, domain_id=int(ros_domain_env["ROS_DOMAIN_ID"]))
    node = None
    try:
        node = EstimatorNode(context=context, namespace="/empty_string")
        assert node.get_parameter("tf_child_frame").value == ""
    finally:
        if node is not None:
            node.destroy_node()
        context.try_shutdown()


# ----------------------------------------------------------------------------- 4. description messages

STICK_URDF = """<robot name="stick">
  <link name="base"><inertial><mass value="5"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="lower_leg"><inertial><mass value="0.5"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="knee" type="revolute"><parent link="base"/><child link="lower_leg"/><origin xyz="0 0 -0.1"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="10"/></joint>
  <gazebo reference="base"><sensor name="imu" type="imu"><update_rate>500</update_rate></sensor></gazebo>
</robot>"""


def test_a_description_without_detectable_feet_names_the_foot_frames_parameter(ros_context: Any) -> None:
    with pytest.raises(StartupError) as info:
        EstimatorNode(
            context=ros_context,
            namespace="/no_feet",
            parameter_overrides=[Parameter("robot_description", value=STICK_URDF)],
        )
    text = str(info.value)
    assert "no foot frames detected in 'stick'" in text
    assert "set the foot_frames parameter" in text and "names=" not in text
    assert '-p foot_frames:="[lower_leg]"' in text  # the link at the end of the chain, as an example


def test_an_empty_robot_description_message_is_reported_and_the_node_keeps_waiting(
    ros_context: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    node = EstimatorNode(context=ros_context, namespace="/empty_description")
    io = rclpy.create_node("empty_description_io", namespace="/empty_description", context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    executor.add_node(io)
    try:
        pub = io.create_publisher(String, "robot_description", qos.description_qos())
        pub.publish(String(data=""))
        assert spin_until(executor, lambda: node.reject_counts.get("description_invalid", 0) == 1)
        assert node.estimator is None
        err = capfd.readouterr().err
        assert "the message on the /empty_description/robot_description topic is empty" in err, err
        assert "still waiting for a robot description" in err and "no such file" not in err, err
        pub.publish(String(data=robot_description_path("go1").read_text()))  # a good one is taken
        assert spin_until(executor, lambda: node.estimator is not None)
    finally:
        executor.shutdown()
        node.destroy_node()
        io.destroy_node()


# ------------------------------------------------------------------------------------- 5. no contact


def test_no_foot_in_contact_for_long_makes_the_contacts_status_warn_until_a_contact(ros_context) -> None:
    """Efforts all zero (contact.source auto -> torques): no foot is ever in contact; 1.5 s of it is more than
    ``NO_CONTACT_WARN_S``. Efforts of a leg carrying weight (hip 0, thigh -2, calf 5 N m: about 42 N of normal
    force per foot, above 0.3 of the Go1's weight share) bring the contacts back: OK."""
    # ekf.init_wait_for_loaded_feet off: the zero efforts (no foot loaded) are this test's input, and the filter would
    # otherwise not initialise on them (98f97dd), so no feet estimate would be published to warn about
    quiet_harness = Harness(
        ros_context,
        "/no_foot_in_contact_for_long",
        robot="go1",
        diagnostics_period_s=60.0,
        **{"ekf.init_wait_for_loaded_feet": False},
    )
    try:
        node = quiet_harness.node
        quiet_harness.publish(_stream(10**12, 0.5, (0.0, 0.0, 0.0)))
        assert spin_until(quiet_harness.executor, lambda: node._diag.last_feet_estimate is not None)
        status = _status(quiet_harness, "contacts")
        assert status.level == b"\x00", status.message  # less than NO_CONTACT_WARN_S so far
        assert status.message == "0 of 4 feet in contact"

        quiet_harness.publish(_stream(10**12 + 500_000_000, 1.0, (0.0, 0.0, 0.0)))
        first = node._diag.no_contact_since_ns
        last = node._diag.last_feet_estimate.stamp_ns
        assert first is not None and last - first > NO_CONTACT_WARN_S * 1e9
        status = _status(quiet_harness, "contacts")
        values = _values(status)
        assert status.level == b"\x01"
        assert f"no foot in contact for {(last - first) * 1e-9:.1f} s" in status.message
        assert "IMU alone" in status.message and "efforts" in status.message and "contact.source" in status.message
        assert float(values["no_contact_s"]) == pytest.approx((last - first) * 1e-9, abs=1e-6)
        assert values["feet_in_contact"] == "0"
        node.input_watch.check_contacts()  # the steady timer's check: the throttled warning
        assert node.input_watch.no_contact_warning == status.message
        node.input_watch.no_contact_warning = ""
        node.input_watch.check_contacts()  # no joint update since: a stopped stream is not warned about as no contact
        assert node.input_watch.no_contact_warning == ""

        quiet_harness.publish(_stream(10**12 + 1_500_000_000, 0.2, (0.0, -2.0, 5.0)))
        status = _status(quiet_harness, "contacts")
        assert status.level == b"\x00" and status.message == "4 of 4 feet in contact", status.message
        assert _values(status)["no_contact_s"] == "0"
    finally:
        quiet_harness.close()


# ------------------------------------------------------------------------------------ 6. lost samples


def test_the_lost_sample_warning_names_the_gap_and_the_causes_stamp_jitter_included() -> None:
    """A 500 Hz sender whose stamp comes 3 ms late once (stamped when published): a 5 ms difference, counted as
    round(5 / 2) - 1 = 1 lost sample; the note says so and names jitter as a possible cause."""
    counter = StampLossCounter("imu_lost", "IMU")
    t = 10**12
    stamps = [t + k * 2_000_000 for k in range(LOSS_WINDOW + 1)]
    stamps.append(stamps[-1] + 5_000_000)
    lost = [counter.check(s, 10**9, 50_000_000) for s in stamps]
    assert lost[-1] == 1 and sum(lost) == 1
    note = counter.note(1, stamps[-1])
    assert note.key == "imu_lost"
    assert f"before stamp {stamps[-1] // 10**9}.{stamps[-1] % 10**9:09d} s" in note.message
    assert "a gap of 5 ms in the stamps, 2 ms apart usually" in note.message
    assert "queue overflows (raise qos_depth" in note.message and "drops samples" in note.message
    assert "stamps jitter" in note.message


# ------------------------------------------------------------------------------ 8. settings and robot


def _start_log(ros_context: Any, namespace: str, capfd: pytest.CaptureFixture[str], **params: Any) -> str:
    capfd.readouterr()
    node = EstimatorNode(
        context=ros_context, namespace=namespace, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
    )
    node.destroy_node()
    return capfd.readouterr().err


def test_the_start_up_line_names_the_settings_file(ros_context: Any, capfd: pytest.CaptureFixture[str]) -> None:
    go1 = str(robot_description_path("go1"))
    err = _start_log(ros_context, "/settings_robot", capfd, robot="go1")
    assert f"settings {config_dir() / 'go1.yaml'}" in err and "[robot_mismatch]" not in err, err
    err = _start_log(ros_context, "/settings_defaults", capfd, description_file=go1)
    assert "estimating go1:" in err and "settings built-in defaults" in err, err
    config = str(config_dir() / "solo12.yaml")
    err = _start_log(ros_context, "/settings_file", capfd, description_file=go1, config_file=config)
    assert f"settings {config}" in err and "[robot_mismatch]" not in err, err
    # settings given as parameters (-p, --params-file) are named: the file alone does not say what runs
    err = _start_log(ros_context, "/settings_params", capfd, robot="go1", **{"ekf.foot_gate_nis": 11.34})
    assert f"settings {config_dir() / 'go1.yaml'} + 1 set by parameters (ekf.foot_gate_nis)" in err, err


def test_robot_with_the_description_of_another_model_is_warned_about(
    ros_context: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    go1 = str(robot_description_path("go1"))
    err = _start_log(ros_context, "/mismatch", capfd, robot="solo12", description_file=go1)
    assert "[WARN]" in err and "[robot_mismatch] the settings of robot 'solo12'" in err, err
    assert "model 'go1'" in err and "robot 'solo12' ('solo')" in err and "config_file" in err, err
    # the same model from a file (a copy of the bundled description) is no mismatch
    err = _start_log(ros_context, "/match", capfd, robot="go1", description_file=go1)
    assert "[robot_mismatch]" not in err, err


def test_a_core_warning_that_refuses_no_sample_is_not_counted_as_a_rejection(quiet_harness: Harness) -> None:
    """Joint states without efforts: the core warns once that contacts come from kinematics (a user trial saw
    rejected.contacts_from_kinematics = 1 in /diagnostics although every sample was used)."""
    quiet_harness.publish(_stream(10**12, 0.5, None))
    node = quiet_harness.node
    assert spin_until(quiet_harness.executor, lambda: node._diag.last_feet_estimate is not None)
    quiet_harness.settle()
    assert node.estimator.contact_source == "kinematic"
    assert node._stream.events["contacts_from_kinematics"] == 1  # the event was there
    assert node.reject_counts == {}, node.reject_counts
