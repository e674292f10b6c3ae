"""launch_pytest tests of launch/estimator.launch.py: the node started the way users start it, checked from outside.

Each test launches ``launch/estimator.launch.py`` (an IncludeLaunchDescription, as a parent launch file would)
with some arguments; a probe node in the test thread feeds a Go1 standing still and reads what comes out:
parameters (``GetParameters``), odometry, TF resolved by a ``tf2_ros.Buffer``, diagnostics, the process's log and
exit code. The package is found through the ament index: the colcon install under ``colcon test``, else a prefix
over this source tree (``launch_env.source_prefix``). ``ros2 launch`` itself runs in a subprocess where its own
error handling is what is tested (unknown argument, ``rviz:=true`` without rviz2).

Needs launch_pytest, launch_ros and tf2_ros (``../shared/ros2``, installed by ``make setup``, or a ROS 2
install); skipped with the reason where they are missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

launch_pytest = pytest.importorskip(
    "launch_pytest",
    reason="launch_pytest is not installed (make setup installs it from ../shared/ros2; or a ROS 2 install)",
)
pytest.importorskip("launch_ros", reason="launch_ros is not installed (../shared/ros2 or a ROS 2 install)")
pytest.importorskip("tf2_ros", reason="tf2_ros is not installed (../shared/ros2 or a ROS 2 install)")

import launch  # noqa: E402
import yaml  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import Imu, JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_state_estimator.common.time import stamp_to_ns  # noqa: E402
from robot_state_estimator.ros import qos  # noqa: E402

from .launch_env import OutputLog, Probe, go1_description_xml, launch_environment, loaded_standing  # noqa: E402

LAUNCH_FILE = Path(__file__).resolve().parents[2] / "launch" / "estimator.launch.py"
CONFIG = Path(__file__).resolve().parents[2] / "config"
T0 = 1_000 * 10**9  # inputs start at t = 1000 s
pytestmark = [pytest.mark.ros, pytest.mark.launch_file]


@pytest.fixture(scope="module", autouse=True)
def launch_env(ros_domain_env, tmp_path_factory) -> dict[str, str]:
    """This module's DDS domain and localhost discovery (set in os.environ: launched processes inherit them), and
    the ament prefix with this package."""
    extra = launch_environment(tmp_path_factory.mktemp("ament_prefix"))
    with pytest.MonkeyPatch.context() as mp:
        for name, value in extra.items():
            mp.setenv(name, value)
        yield dict(os.environ)


def _include(**arguments: str) -> IncludeLaunchDescription:
    return IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(LAUNCH_FILE)), launch_arguments=list(arguments.items())
    )


def _launch(log: OutputLog, **arguments: str) -> launch.LaunchDescription:
    return launch.LaunchDescription([*log.handlers(), _include(**arguments), launch_pytest.actions.ReadyToTest()])


def _feed(probe: Probe, namespace: str, duration_s: float, *, rate_hz: float = 200.0, start_ns: int = T0,
          clock: bool = False) -> int:  # fmt: skip
    """Publish a Go1 standing still (IMU and joints at ``rate_hz``; with ``clock``, /clock before each stamp),
    paced at about real time so the node's best-effort queues never overflow; returns the last stamp."""
    node = probe.node
    imu = node.create_publisher(Imu, f"{namespace}/imu/data", qos.sensor_qos(1000))
    joints = node.create_publisher(JointState, f"{namespace}/joint_states", qos.sensor_qos(1000))
    clock_pub = node.create_publisher(Clock, "/clock", 10) if clock else None
    assert probe.spin_until(lambda: imu.get_subscription_count() >= 1 and joints.get_subscription_count() >= 1, 30)
    period = 1.0 / rate_hz
    last = start_ns
    for step in loaded_standing(start_ns, duration_s, rate_hz=rate_hz):
        if clock_pub is not None and step.kind == "imu":
            msg = Clock()
            msg.clock.sec, msg.clock.nanosec = divmod(step.stamp_ns, 10**9)
            clock_pub.publish(msg)
        (imu if step.kind == "imu" else joints).publish(step.msg)
        last = step.stamp_ns
        if step.kind == "joints":
            probe.executor.spin_once(timeout_sec=period)
    return last


def _publish_description(probe: Probe, namespace: str) -> None:
    pub = probe.node.create_publisher(String, f"{namespace}/robot_description", qos.description_qos())
    pub.publish(String(data=go1_description_xml()))


# --------------------------------------------------------------------------------------------------- defaults


@launch_pytest.fixture
def default_launch():
    log = OutputLog()
    return _launch(log), log


@pytest.mark.launch(fixture=default_launch)
def test_default_arguments_wait_for_the_description_then_estimate_with_tf_from_tf2_ros(default_launch) -> None:
    """No argument: no robot's tuning is assumed; the node waits for robot_description, subscribes to its sensors
    only then, and its odometry and TF (tf2_ros.TransformBroadcaster, resolved here by a tf2_ros.Buffer +
    TransformListener in this other process) agree at the odometry's stamps."""
    import tf2_ros
    from rclpy.time import Time

    _, log = default_launch
    probe = Probe("launch_default_probe")
    try:
        odometry = probe.collect(Odometry, "/odometry", 1000)
        assert probe.spin_until(lambda: probe.node.count_publishers("/odometry") >= 1, 60), log.text()
        values = probe.parameters("/robot_state_estimator", ["robot", "use_sim_time", "odom_frame", "config_file"])
        assert values == {"robot": "", "use_sim_time": False, "odom_frame": "odom", "config_file": ""}
        assert log.wait_for("waiting for the robot description", 10), log.text()
        assert probe.node.count_subscribers("/imu/data") == 0  # not before it can process a sample
        buffer = tf2_ros.Buffer()
        listener = tf2_ros.TransformListener(buffer, probe.node, spin_thread=False)
        _publish_description(probe, "")
        last = _feed(probe, "", 1.0)
        assert probe.spin_until(lambda: bool(odometry) and stamp_to_ns(odometry[-1].header.stamp) == last, 20)
        child, newest = odometry[-1].child_frame_id, Time.from_msg(odometry[-1].header.stamp)
        assert probe.spin_until(lambda: buffer.can_transform("odom", child, newest), 10)
        checked = 0
        for odom in odometry[-20:]:
            tf = buffer.lookup_transform("odom", odom.child_frame_id, Time.from_msg(odom.header.stamp))
            assert stamp_to_ns(tf.header.stamp) == stamp_to_ns(odom.header.stamp)
            p, q = odom.pose.pose.position, odom.pose.pose.orientation
            t, r = tf.transform.translation, tf.transform.rotation
            assert (t.x, t.y, t.z) == pytest.approx((p.x, p.y, p.z), abs=1e-9)
            assert (r.x, r.y, r.z, r.w) == pytest.approx((q.x, q.y, q.z, q.w), abs=1e-9)
            checked += 1
        assert checked == 20
        assert odometry[-1].header.frame_id == "odom" and odometry[-1].child_frame_id == "base"
        del listener
    finally:
        probe.close()


# ------------------------------------------------------------------------------------ namespace, sim time


@launch_pytest.fixture
def namespaced_sim_time_launch():
    log = OutputLog()
    return _launch(log, robot="go1", namespace="launch_ns", use_sim_time="true"), log


@pytest.mark.launch(fixture=namespaced_sim_time_launch)
def test_namespace_and_use_sim_time_follow_clock(namespaced_sim_time_launch) -> None:
    """namespace: the topics and the node are under /launch_ns; use_sim_time: the node's clock is /clock (its
    diagnostics are stamped with the bag time, not the wall clock), odometry carries the input stamps."""
    _, log = namespaced_sim_time_launch
    probe = Probe("launch_ns_probe")
    try:
        odometry = probe.collect(Odometry, "/launch_ns/odometry", 1000)
        diagnostics = probe.collect(DiagnosticArray, "/diagnostics", 100)
        assert probe.spin_until(lambda: probe.node.count_publishers("/launch_ns/odometry") >= 1, 60), log.text()
        values = probe.parameters("/launch_ns/robot_state_estimator", ["robot", "use_sim_time"])
        assert values == {"robot": "go1", "use_sim_time": True}
        last = _feed(probe, "/launch_ns", 1.0, clock=True)
        assert probe.spin_until(lambda: bool(odometry) and stamp_to_ns(odometry[-1].header.stamp) == last, 20)
        assert probe.spin_until(lambda: any(stamp_to_ns(d.header.stamp) >= T0 for d in diagnostics), 10)
        sim_stamped = [stamp_to_ns(d.header.stamp) for d in diagnostics if stamp_to_ns(d.header.stamp) >= T0]
        assert all(s <= last for s in sim_stamped)  # the bag's time, far from the wall clock (year 2026)
    finally:
        probe.close()


# ------------------------------------------------------------------------------- config_file, params_file


@pytest.fixture(scope="module")
def parameter_files(tmp_path_factory) -> tuple[Path, Path]:
    """A settings file (go1.yaml with two values changed) and a ROS parameter file that overrides one of them
    and sets a frame."""
    folder = tmp_path_factory.mktemp("launch_params")
    settings = yaml.safe_load((CONFIG / "go1.yaml").read_text())
    section = settings["/**/robot_state_estimator"]["ros__parameters"]
    section["ekf"]["accel_noise_density"] = 0.037
    section["ekf"]["gyro_noise_density"] = 0.0031
    config_file = folder / "my_settings.yaml"
    config_file.write_text(yaml.safe_dump(settings))
    params_file = folder / "params.yaml"
    params = {"ekf.gyro_noise_density": 0.0042, "odom_frame": "world_test"}
    params_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": params}}))
    return config_file, params_file


@launch_pytest.fixture
def parameter_files_launch(parameter_files):
    config_file, params_file = parameter_files
    log = OutputLog()
    return _launch(log, robot="go1", config_file=str(config_file), params_file=str(params_file)), log


@pytest.mark.launch(fixture=parameter_files_launch)
def test_config_file_then_params_file_over_it(parameter_files_launch, parameter_files) -> None:
    _, log = parameter_files_launch
    config_file, _ = parameter_files
    probe = Probe("launch_params_probe")
    try:
        assert probe.spin_until(lambda: probe.node.count_publishers("/odometry") >= 1, 60), log.text()
        names = ["config_file", "ekf.accel_noise_density", "ekf.gyro_noise_density", "odom_frame"]
        values = probe.parameters("/robot_state_estimator", names)
        assert values == {
            "config_file": str(config_file),
            "ekf.accel_noise_density": 0.037,  # config_file
            "ekf.gyro_noise_density": 0.0042,  # params_file, applied last
            "odom_frame": "world_test",
        }
        odometry = probe.collect(Odometry, "/odometry", 1000)
        last = _feed(probe, "", 0.8)
        assert probe.spin_until(lambda: bool(odometry) and stamp_to_ns(odometry[-1].header.stamp) == last, 20)
        assert odometry[-1].header.frame_id == "world_test"
    finally:
        probe.close()


# ----------------------------------------------------------------------------------------- another robot


def _solo12_settings() -> dict[str, Any]:
    doc = yaml.safe_load((CONFIG / "solo12.yaml").read_text())
    return doc["/**/robot_state_estimator"]["ros__parameters"]["ekf"]


@launch_pytest.fixture
def solo12_launch():
    log = OutputLog()
    return _launch(log, description_file=str(CONFIG / "robots" / "solo12.urdf.xacro")), log


@pytest.mark.launch(fixture=solo12_launch)
def test_another_robot_gets_its_own_settings_from_its_description(solo12_launch) -> None:
    """description_file of Solo12 without robot: the launch file recognises the bundled model and passes
    Solo12's settings (config/solo12.yaml), not Go1's; the diagnostics name the Solo12 model."""
    _, log = solo12_launch
    probe = Probe("launch_solo12_probe")
    try:
        diagnostics = probe.collect(DiagnosticArray, "/diagnostics", 100)
        assert probe.spin_until(lambda: probe.node.count_publishers("/odometry") >= 1, 60), log.text()
        expected = _solo12_settings()
        names = ["robot", "ekf.accel_noise_density", "ekf.gyro_noise_density", "ekf.use_description_noise"]
        values = probe.parameters("/robot_state_estimator", names)
        assert values["robot"] == "solo12"
        for name in names[1:]:
            assert values[name] == expected[name.split(".", 1)[1]], name
        assert probe.spin_until(lambda: bool(diagnostics) and diagnostics[-1].status[0].hardware_id != "", 15)
        assert "solo" in diagnostics[-1].status[0].hardware_id.lower()
        assert "[robot_mismatch]" not in log.text()
    finally:
        probe.close()


@launch_pytest.fixture
def mismatch_launch():
    log = OutputLog()
    return _launch(log, robot="go1", description_file=str(CONFIG / "robots" / "solo12.urdf.xacro")), log


@pytest.mark.launch(fixture=mismatch_launch)
def test_a_robot_whose_model_is_not_the_description_keeps_the_mismatch_warning(mismatch_launch) -> None:
    _, log = mismatch_launch
    assert log.wait_for("[robot_mismatch]", 60), log.text()


# ------------------------------------------------------------------------------------------ output rate


@launch_pytest.fixture
def rate_launch():
    log = OutputLog()
    return _launch(log, robot="go1", odometry_rate_hz="20"), log


@pytest.mark.launch(fixture=rate_launch)
def test_odometry_rate_hz_limits_the_odometry(rate_launch) -> None:
    """odometry_rate_hz:=20 with 200 Hz inputs: odometry at most every 50 ms of input time."""
    _, log = rate_launch
    probe = Probe("launch_rate_probe")
    try:
        odometry = probe.collect(Odometry, "/odometry", 1000)
        assert probe.spin_until(lambda: probe.node.count_publishers("/odometry") >= 1, 60), log.text()
        assert probe.parameters("/robot_state_estimator", ["odometry_rate_hz"]) == {"odometry_rate_hz": 20.0}
        _feed(probe, "", 1.5)
        time.sleep(0.5)
        probe.spin_until(lambda: False, 1.0)
        stamps = [stamp_to_ns(o.header.stamp) for o in odometry]
        period = 50_000_000  # 1 / 20 Hz
        slots = [s // period for s in stamps]
        assert len(stamps) >= 10
        assert len(set(slots)) == len(slots), stamps  # at most one odometry per 50 ms of input time
        assert slots == list(range(slots[0], slots[0] + len(slots))), stamps  # and one in each (inputs at 200 Hz)
    finally:
        probe.close()


# -------------------------------------------------------------------------------------------- shutdown


@launch_pytest.fixture
def shutdown_launch():
    log = OutputLog()
    return _launch(log, robot="go1"), log


@pytest.mark.launch(fixture=shutdown_launch)
def test_shutdown_ends_the_node_cleanly(shutdown_launch):
    """launch's shutdown (SIGINT to the node) ends it with exit code 0, well before launch would escalate to
    SIGTERM (after 5 s) and SIGKILL."""
    _, log = shutdown_launch
    assert log.wait_for("estimating go1", 60), log.text()
    yield
    names = [n for n in log.exits if n.startswith("estimator_node")]
    assert names, f"the estimator did not exit: {log.exits}"
    assert log.exits[names[0]] == 0, log.text()
    assert "SIGTERM" not in log.text() and "SIGKILL" not in log.text()


# --------------------------------------------------------------------------------- ros2 launch, errors


def _ros2_launch(env: dict[str, str], *arguments: str, timeout_s: float = 60.0) -> subprocess.CompletedProcess:
    ros2 = Path(sys.executable).parent / "ros2"
    cmd = [str(ros2)] if ros2.is_file() else [sys.executable, "-m", "ros2cli.cli"]
    cmd += ["launch", "robot_state_estimator", "estimator.launch.py", *arguments]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)


def _processes_with(marker: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(f"{pid}: {cmdline}")
    return found


def test_rviz_without_rviz2_fails_before_starting_anything(launch_env) -> None:
    marker = f"rviz_check_{os.getpid()}"
    result = _ros2_launch(launch_env, "robot:=go1", "rviz:=true", f"namespace:={marker}")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "rviz2" in output and "nothing was started" in output, output
    assert "estimator_node" not in output  # no process was started
    assert _processes_with(marker) == []


def test_an_unknown_launch_argument_is_an_error(launch_env) -> None:
    result = _ros2_launch(launch_env, "robot:=go1", "odometry_rate:=100")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "unknown launch argument" in output and "'odometry_rate_hz'" in output, output
    assert "estimator_node" not in output
