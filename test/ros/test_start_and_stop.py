"""``estimator_node`` as a real process: SIGINT/SIGTERM end it within a second at any moment (imports,
construction, spinning), and a player waiting for subscribers loses no sample at the start.

The node subscribes to its sensor topics only once its description is loaded, so ``bag_player
--wait-for-subscribers`` starts playing when the node can process the first sample; before, the node subscribed
first and dropped the samples that arrived while it loaded the description ("no description yet").
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from robot_state_estimator.io import messages  # noqa: E402
from robot_state_estimator.io.bags import BagWriter, default_types  # noqa: E402

from .conftest import spin_until  # noqa: E402
from .launch_env import STANDING_EFFORT  # noqa: E402
from .streams import GO1_JOINTS, IMU_FRAME, STAND_Q  # noqa: E402

pytestmark = pytest.mark.ros

#: s, SIGINT/SIGTERM end the node within this (ros.entry.ExitGuard)
STOP_WITHIN_S = 1.0
T0 = 1_000 * 10**9


def _script(name: str, module: str) -> list[str]:
    path = Path(sys.executable).parent / name
    return [str(path)] if path.is_file() else [sys.executable, "-m", module]


NODE = [*_script("estimator_node", "robot_state_estimator.ros.entry"), "--ros-args", "-p", "robot:=go1"]


def _stop_time(env: dict[str, str], moment: str, signum: int) -> tuple[float, int, str]:
    """Start the node, send ``signum`` at ``moment``, return (seconds from the signal to the exit, exit code,
    output). ``moment``: seconds after the start, or "spinning" (after the "estimating" line, plus 0.5 s)."""
    proc = subprocess.Popen(NODE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    lines = []
    try:
        if moment == "spinning":
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line)
                if "estimating go1" in line:
                    break
            time.sleep(0.5)
        else:
            time.sleep(float(moment))
        sent = time.monotonic()
        proc.send_signal(signum)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        took = time.monotonic() - sent
        rest, _ = proc.communicate()
        return took, proc.returncode, "".join(lines) + rest
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize(
    ("moment", "signal_name"),
    [("0.6", "SIGINT"), ("1.5", "SIGTERM"), ("3.0", "SIGINT"), ("spinning", "SIGINT"), ("spinning", "SIGTERM")],
    ids=["importing-sigint", "importing-sigterm", "constructing-sigint", "spinning-sigint", "spinning-sigterm"],
)
def test_a_signal_ends_the_node_within_a_second(ros_env: dict[str, str], moment: str, signal_name: str) -> None:
    took, code, out = _stop_time(ros_env, moment, getattr(signal, signal_name))
    assert code == 0, out
    assert took < STOP_WITHIN_S, f"{signal_name} at {moment}: the node ended {took:.2f} s after it\n{out}"
    assert "Traceback" not in out and "[FATAL]" not in out, out


def _standing_bag(path: Path, n: int, rate_hz: float) -> None:
    """``n`` IMU messages and ``n`` joint states of a Go1 standing still, log time = stamp."""
    import numpy as np

    from robot_state_estimator.common.samples import ImuSample, JointSample

    types = default_types()
    dt = round(1e9 / rate_hz)
    with BagWriter(path) as bag:
        for k in range(n):
            t = T0 + k * dt
            imu = ImuSample(t, np.zeros(3), np.array([0.0, 0.0, 9.81]), frame_id=IMU_FRAME)
            bag.write("/imu/data", messages.imu_msg(types, imu), t)
            joints = JointSample(t, GO1_JOINTS, STAND_Q, np.zeros(12), np.array(STANDING_EFFORT))
            bag.write("/joint_states", messages.joint_state_msg(types, joints), t + 1)


def test_bag_player_waiting_for_subscribers_loses_no_sample(
    ros_domain_env: dict[str, str], ros_context, tmp_path
) -> None:
    """Node and player started together: the player waits until the node subscribes, which it does once it can
    process samples, and the node receives every sample of the bag from the first one."""
    n = 200
    bag = tmp_path / "standing"
    _standing_bag(bag, n, 200.0)
    probe = rclpy.create_node("start_probe", context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(probe)
    diagnostics: list = []
    probe.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 100)
    node_log = tmp_path / "node.log"
    player_cmd = [*_script("bag_player", "robot_state_estimator.ros.bag_player"), str(bag)]
    player_cmd += ["--wait-for-subscribers", "/imu/data", "/joint_states", "--wait-timeout", "120"]
    with open(node_log, "w") as log:
        # a deep queue: a node lagging behind on a loaded machine must not drop either (that would be another
        # loss than the start's, which this test is about)
        node_cmd = [*NODE, "-p", "qos_depth:=5000"]
        node = subprocess.Popen(node_cmd, env=ros_domain_env, stdout=log, stderr=subprocess.STDOUT)
        try:
            player = subprocess.run(player_cmd, env=ros_domain_env, capture_output=True, text=True, timeout=180)
            assert player.returncode == 0, player.stdout + player.stderr
            assert f"published {2 * n} messages" in player.stdout + player.stderr

            def received() -> tuple[int, int]:
                for array in reversed(diagnostics):
                    for status in array.status:
                        if status.name.endswith(": inputs"):
                            values = {kv.key: kv.value for kv in status.values}
                            return int(values["imu_received"]), int(values["joint_states_received"])
                return -1, -1

            assert spin_until(executor, lambda: received() == (n, n), timeout_s=20), (received(), node_log.read_text())
        finally:
            node.send_signal(signal.SIGINT)
            node.wait(timeout=10)
            executor.shutdown()
            probe.destroy_node()
    log_text = node_log.read_text()
    assert "no robot description yet" not in log_text, log_text
    assert node.returncode == 0, log_text
