"""End to end over real DDS: ``estimator_node`` runs as its own process (the console script), a generated
Go1 trot is fed to it by ``bag_player`` (another process) or by this test's publisher, and this process
checks every output against the run's ground truth.

Always runs where rclpy is importable (the venv of this repository); no launch, no rosbag2 needed.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import Imu, JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from robot_state_estimator.common.time import stamp_to_ns  # noqa: E402
from robot_state_estimator.io import messages  # noqa: E402
from robot_state_estimator.io.bags import read_messages  # noqa: E402
from robot_state_estimator.ros import qos  # noqa: E402

from .conftest import spin_until  # noqa: E402
from .streams import GO1_FEET, bad_messages, standing  # noqa: E402

pytestmark = pytest.mark.ros

DURATION_S = 3.0


def _script(name: str, module: str) -> list[str]:
    """The console script next to this interpreter (``.venv/bin/<name>``), else ``python -m module``."""
    path = Path(sys.executable).parent / name
    return [str(path)] if path.is_file() else [sys.executable, "-m", module]


@pytest.fixture(scope="module")
def trot_run(tmp_path_factory: pytest.TempPathFactory, ros_domain_env: dict[str, str]) -> dict[str, Any]:
    """A 3 s Go1 trot from the simulator (bag with /imu/data at 500 Hz, /joint_states at 250 Hz and ground
    truth): rates a Python node keeps up with in real time on a 2-core CI machine."""
    out = tmp_path_factory.mktemp("trot")
    cmd = [sys.executable, "-m", "robot_state_estimator.tools.cli", "simulate", "--robot", "go1", "--gait", "trot"]
    cmd += ["--duration", str(DURATION_S), "--imu-rate", "500", "--joint-rate", "250", "--output", str(out)]
    subprocess.run(cmd, check=True, env=ros_domain_env, capture_output=True, timeout=120)
    bag = out / "bag"
    truth = {}
    imu_stamps, joint_stamps = [], []
    for m in read_messages(bag, ["/ground_truth/odom", "/imu/data", "/joint_states"]):
        if m.topic == "/ground_truth/odom":
            gt = messages.odometry_arrays_from_msg(m.msg)
            truth[gt["stamp_ns"]] = gt
        elif m.topic == "/imu/data":
            imu_stamps.append(m.stamp_ns)
        else:
            joint_stamps.append(m.stamp_ns)
    return {"bag": bag, "truth": truth, "imu_stamps": imu_stamps, "joint_stamps": joint_stamps}


@contextlib.contextmanager
def process(cmd: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """Run ``cmd``; on exit interrupt it like Ctrl-C and check it shut down cleanly (exit code 0)."""
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    pytest.fail(f"{cmd[0]} did not stop on SIGINT; log:\n{log.read_text()}")
    proc.clean_exit = proc.returncode == 0  # type: ignore[attr-defined]


class Recorder:
    """A test node in this process recording the estimator's outputs."""

    def __init__(self, context: Any) -> None:
        self.node = rclpy.create_node("e2e_recorder", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.out: dict[str, list] = defaultdict(list)
        sub = self.node.create_subscription
        self.odom_sub = sub(Odometry, "/odometry", self.out["odometry"].append, qos.output_qos(10000))
        sub(TFMessage, "/tf", self.out["tf"].append, qos.tf_qos())
        sub(DiagnosticArray, "/diagnostics", self.out["diagnostics"].append, 100)
        sub(Clock, "/clock", self.out["clock"].append, qos.sensor_qos(10))
        for foot in GO1_FEET:
            sub(WrenchStamped, f"/contact_wrench/{foot}", self.out[foot].append, qos.output_qos(10000))

    def wait_for_node(self, proc: subprocess.Popen, log: Path) -> None:
        ok = spin_until(
            self.executor,
            lambda: self.odom_sub.get_publisher_count() >= 1 or proc.poll() is not None,
            timeout_s=30,
        )
        assert ok and proc.poll() is None, f"estimator_node did not come up; log:\n{log.read_text()}"

    def filter_values(self) -> dict[str, str]:
        for array in reversed(self.out["diagnostics"]):
            for status in array.status:
                if status.name.endswith(": filter"):
                    return {kv.key: kv.value for kv in status.values}
        return {}

    def inputs_values(self) -> dict[str, str]:
        for array in reversed(self.out["diagnostics"]):
            for status in array.status:
                if status.name.endswith(": inputs"):
                    return {kv.key: kv.value for kv in status.values}
        return {}

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


@pytest.fixture
def recorder(ros_context) -> Iterator[Recorder]:
    r = Recorder(ros_context)
    yield r
    r.close()


def _node_cmd(*params: str) -> list[str]:
    # a deep input queue: the Python node may lag behind a burst on a loaded CI machine, it must not drop
    cmd = [*_script("estimator_node", "robot_state_estimator.ros.entry"), "--ros-args", "-p", "robot:=go1"]
    cmd += ["-p", "qos_depth:=5000"]
    for p in params:
        cmd += ["-p", p]
    return cmd


def _player_cmd(bag: Path, *args: str) -> list[str]:
    cmd = [*_script("bag_player", "robot_state_estimator.ros.bag_player"), str(bag)]
    cmd += ["--topics", "/imu/data", "/joint_states", "--wait-for-subscribers", "/imu/data", "/joint_states"]
    return cmd + list(args)


def test_replay_with_sim_time_matches_ground_truth(trot_run, recorder, ros_domain_env, tmp_path) -> None:
    env = ros_domain_env
    node_log, player_log = tmp_path / "node.log", tmp_path / "player.log"
    with process(_node_cmd("use_sim_time:=true"), env, node_log) as node:
        recorder.wait_for_node(node, node_log)
        with process(
            # half speed: the node, the player and this recorder share 2 cores with the rest of the suite;
            # the sim clock makes the rate irrelevant to the node (the 1x rate is the benchmark's business)
            _player_cmd(trot_run["bag"], "--rate", "0.5", "--clock", "--clock-hz", "50"),
            env,
            player_log,
        ) as player:
            spin_until(recorder.executor, lambda: player.poll() is not None, timeout_s=60)
            assert player.returncode == 0, player_log.read_text()
        last_imu = trot_run["imu_stamps"][-1]
        out = recorder.out
        assert spin_until(
            recorder.executor,
            lambda: out["odometry"] and stamp_to_ns(out["odometry"][-1].header.stamp) >= last_imu - 50_000_000,
        ), node_log.read_text()
        # sim time: the node clock follows /clock, so its diagnostics are stamped in bag time
        out["diagnostics"].clear()
        assert spin_until(recorder.executor, lambda: bool(out["diagnostics"]), timeout_s=5)
        diag_ns = stamp_to_ns(out["diagnostics"][-1].header.stamp)
        assert trot_run["imu_stamps"][0] <= diag_ns <= last_imu, "node clock does not follow /clock"
        assert node.poll() is None
    assert node.clean_exit, node_log.read_text()

    truth = trot_run["truth"]
    inputs = set(trot_run["imu_stamps"]) | set(trot_run["joint_stamps"])
    odoms = out["odometry"]
    received = int(recorder.inputs_values()["imu_received"])
    assert received >= 0.95 * len(trot_run["imu_stamps"]), f"node received {received} IMU samples"
    assert len(odoms) >= 0.9 * len(trot_run["imu_stamps"]), f"{len(odoms)} odometry messages"
    errors_p, errors_v = [], []
    for odom in odoms:
        est = messages.odometry_arrays_from_msg(odom)
        assert est["stamp_ns"] in inputs
        assert est["frame_id"] == "odom" and est["child_frame_id"] == "base"
        for cov in (est["pose_covariance"], est["twist_covariance"]):
            assert np.all(np.isfinite(cov)) and np.allclose(cov, cov.T, atol=1e-12)
            assert np.linalg.eigvalsh(cov).min() > 0
        gt = truth.get(est["stamp_ns"])
        if gt is not None:
            errors_p.append(est["p_world_base"] - gt["p_world_base"])
            errors_v.append(est["v_base_in_base"] - gt["v_base_in_base"])
    errors_p, errors_v = np.array(errors_p), np.array(errors_v)
    assert len(errors_v) > 100
    v_rmse = float(np.sqrt(np.mean(np.sum(errors_v**2, axis=1))))
    final_xy = float(np.linalg.norm(errors_p[-1, :2]))
    assert v_rmse < 0.1, f"velocity RMSE {v_rmse:.3f} m/s"
    assert final_xy < 0.1, f"final horizontal position error {final_xy:.3f} m"

    odom_stamps = {stamp_to_ns(o.header.stamp) for o in odoms}
    tfs = [t for m in out["tf"] for t in m.transforms]
    assert tfs and all((t.header.frame_id, t.child_frame_id) == ("odom", "base") for t in tfs)
    assert {stamp_to_ns(t.header.stamp) for t in tfs} <= odom_stamps
    for foot in GO1_FEET:
        wrenches = out[foot]
        assert wrenches and all(w.header.frame_id == foot for w in wrenches)
        assert {stamp_to_ns(w.header.stamp) for w in wrenches} <= inputs
        assert max(np.linalg.norm([w.wrench.force.x, w.wrench.force.y, w.wrench.force.z]) for w in wrenches) > 20
    assert out["clock"], "no /clock from bag_player"


def test_looping_bag_resets_the_filter_and_estimation_goes_on(trot_run, recorder, ros_domain_env, tmp_path) -> None:
    env = ros_domain_env
    node_log, player_log = tmp_path / "node.log", tmp_path / "player.log"
    with process(_node_cmd(), env, node_log) as node:
        recorder.wait_for_node(node, node_log)
        with process(_player_cmd(trot_run["bag"], "--rate", "2.0", "--repeat", "2"), env, player_log) as player:
            spin_until(recorder.executor, lambda: player.poll() is not None, timeout_s=60)
            assert player.returncode == 0, player_log.read_text()
        last_imu = trot_run["imu_stamps"][-1]
        out = recorder.out
        assert spin_until(
            recorder.executor,
            lambda: len(out["odometry"]) > 1500 and stamp_to_ns(out["odometry"][-1].header.stamp) == last_imu,
            timeout_s=30,
        ), node_log.read_text()
        assert spin_until(
            recorder.executor, lambda: int(recorder.filter_values().get("resets", 0)) >= 1, timeout_s=10
        ), node_log.read_text()
        assert "time went backwards" in recorder.filter_values()["last_reset_reason"]
        stamps = [stamp_to_ns(o.header.stamp) for o in recorder.out["odometry"]]
        back = [i for i in range(1, len(stamps)) if stamps[i] < stamps[i - 1]]
        assert len(back) == 1, "expected exactly one step back in time (the loop)"
        assert len(stamps) - back[0] > 500, "estimation did not resume after the reset"
        assert node.poll() is None
    assert node.clean_exit


def test_stream_of_bad_messages_is_survived(recorder, ros_domain_env, ros_context, tmp_path) -> None:
    env = ros_domain_env
    node_log = tmp_path / "node.log"
    with process(_node_cmd(), env, node_log) as node:
        recorder.wait_for_node(node, node_log)
        pub_node = rclpy.create_node("e2e_bad_publisher", context=ros_context)
        recorder.executor.add_node(pub_node)
        imu_pub = pub_node.create_publisher(Imu, "/imu/data", 1000)
        joint_pub = pub_node.create_publisher(JointState, "/joint_states", 1000)
        assert spin_until(
            recorder.executor,
            lambda: imu_pub.get_subscription_count() >= 1 and joint_pub.get_subscription_count() >= 1,
        )
        t0 = 2_000 * 10**9
        steps = list(standing(t0, 1.2))
        t_begin = time.monotonic()
        bad = bad_messages(t0 + 300_000_000)
        out = recorder.out

        def odometry_reached(stamp_ns: int) -> bool:
            return bool(out["odometry"]) and stamp_to_ns(out["odometry"][-1].header.stamp) >= stamp_ns

        for i, step in enumerate(steps):
            (imu_pub if step.kind == "imu" else joint_pub).publish(step.msg)
            if i > 400 and i % 5 == 0:  # after initialisation: a bad message every fifth good one
                _key, kind, msg = bad[(i // 5) % len(bad)]
                (imu_pub if kind == "imu" else joint_pub).publish(msg)
            # Paced like a sensor (the stamps' rate), spinning the recorder meanwhile: a burst of best-effort
            # messages can overflow the transport's buffers on a loaded machine, and a lost last message
            # would fail the check below. After the filter's initialisation, also at most 40 ms of input in
            # flight (flow control on the odometry; not asserted here, the end of the stream is).
            due = t_begin + (step.stamp_ns - t0) / 1e9
            while (now := time.monotonic()) < due:
                recorder.executor.spin_once(timeout_sec=due - now)
            if i > 400 and i % 40 == 0:
                spin_until(recorder.executor, lambda s=step.stamp_ns: odometry_reached(s - 40_000_000), timeout_s=2)
        last = steps[-1].stamp_ns
        assert spin_until(
            recorder.executor, lambda: out["odometry"] and stamp_to_ns(out["odometry"][-1].header.stamp) == last
        ), node_log.read_text()
        assert spin_until(
            recorder.executor,
            lambda: all(int(recorder.inputs_values().get(f"rejected.{k}", 0)) > 0 for k, _, _ in bad),
            timeout_s=5,
        ), recorder.inputs_values()
        assert node.poll() is None
        for odom in out["odometry"]:
            arr = messages.odometry_arrays_from_msg(odom)
            assert all(np.all(np.isfinite(v)) for k, v in arr.items() if isinstance(v, np.ndarray))
        elapsed_s = time.monotonic() - t_begin
        log = node_log.read_text()
        for key in {k for k, _, _ in bad}:  # at most one line per second per cause
            assert 1 <= log.count(f"[{key}]") <= 1 + int(elapsed_s), (key, elapsed_s)
        recorder.executor.remove_node(pub_node)
        pub_node.destroy_node()
    assert node.clean_exit, node_log.read_text()


def _start_failing(env: dict[str, str], parameter: str) -> str:
    """Run ``estimator_node`` for go1 with ``-p parameter``, which must end its start-up: exit code 1, no
    traceback. Returns its output."""
    cmd = [*_script("estimator_node", "robot_state_estimator.ros.entry"), "--ros-args", "-p", "robot:=go1"]
    proc = subprocess.run([*cmd, "-p", parameter], env=env, capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "Traceback" not in out, out
    return out


def test_a_parameter_out_of_its_range_ends_the_node_with_one_fatal_line(ros_domain_env: dict[str, str]) -> None:
    """``-p qos_depth:=0`` (the descriptor allows 1..10000): exit code 1 and a FATAL line naming the parameter and
    its range, not a traceback."""
    out = _start_failing(ros_domain_env, "qos_depth:=0")
    assert "[FATAL]" in out and "qos_depth" in out and "Min: 1" in out, out


def test_help_prints_the_usage_without_starting_the_node(ros_domain_env: dict[str, str]) -> None:
    cmd = [*_script("estimator_node", "robot_state_estimator.ros.entry"), "--help"]
    proc = subprocess.run(cmd, env=ros_domain_env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: estimator_node"), proc.stdout + proc.stderr
    assert "README" in proc.stdout and "[INFO]" not in proc.stdout + proc.stderr


def test_an_integer_for_a_double_parameter_ends_the_node_with_one_fatal_line(ros_domain_env: dict[str, str]) -> None:
    out = _start_failing(ros_domain_env, "odometry_rate_hz:=100")
    assert out.count("[FATAL]") == 1 and "odometry_rate_hz" in out and "100.0" in out, out


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_stop_during_start_up_ends_the_node_quietly(ros_domain_env: dict[str, str], signal_name: str) -> None:
    """Ctrl-C (or SIGTERM) at any moment of the start-up (imports ~1-2 s, then rclpy.init and the construction)
    ends the process with code 0 and no FATAL line; before, a Ctrl-C in the first second was lost (the node ran
    on) and a later one gave 'context is invalid' as a FATAL start-up error."""
    cmd = [*_script("estimator_node", "robot_state_estimator.ros.entry"), "--ros-args", "-p", "robot:=go1"]
    for delay_s in (0.3, 1.0, 2.0):
        proc = subprocess.Popen(cmd, env=ros_domain_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(delay_s)
        proc.send_signal(getattr(signal, signal_name))
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            pytest.fail(f"{signal_name} after {delay_s} s: the node did not stop; output:\n{out}")
        assert proc.returncode == 0, (delay_s, out)
        assert "[FATAL]" not in out and "Traceback" not in out, (delay_s, out)


def test_an_empty_odom_frame_ends_the_node_with_one_fatal_line(ros_domain_env: dict[str, str]) -> None:
    out = _start_failing(ros_domain_env, "odom_frame:=''")
    assert out.count("[FATAL]") == 1 and "['odom_frame'] must not be empty" in out, out


def test_sigterm_while_streaming_ends_the_node_quietly(trot_run, recorder, ros_domain_env, tmp_path) -> None:
    """SIGTERM (systemd, ``ros2 launch`` on shutdown) while inputs stream: exit 0, and no warning about a
    publish on the context the signal shut down (``publish_failed``) or traceback in the log."""
    env = ros_domain_env
    node_log, player_log = tmp_path / "node.log", tmp_path / "player.log"
    with process(_node_cmd(), env, node_log) as node:
        recorder.wait_for_node(node, node_log)
        with process(_player_cmd(trot_run["bag"], "--repeat", "100"), env, player_log):
            assert spin_until(recorder.executor, lambda: len(recorder.out["odometry"]) > 200, timeout_s=30)
            node.send_signal(signal.SIGTERM)
            node.wait(timeout=10)
    log = node_log.read_text()
    assert node.returncode == 0, log
    assert "publish_failed" not in log and "Traceback" not in log, log


@pytest.mark.parametrize(
    ("parameter", "rcl_says"),
    [
        ("odom_frame:=", "Couldn't parse parameter override rule: '-p odom_frame:='"),  # the shell's -p odom_frame:=""
        ("foo", "Couldn't parse parameter override rule: '-p foo'"),
    ],
)
def test_a_malformed_ros_argument_is_one_fatal_line(
    ros_domain_env: dict[str, str], parameter: str, rcl_says: str
) -> None:
    """rcl cannot parse the ``-p`` rule: ``rclpy.init`` raises ``RCLError`` (a 15-line traceback before); now one
    FATAL line with rcl's message (without its source locations) and how values are written, exit code 1. rcl's
    own "Failed to parse global arguments" ERROR line is not printed."""
    out = _start_failing(ros_domain_env, parameter)
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("[FATAL]"), out
    assert f"invalid --ros-args: {rcl_says}" in out and "-p NAME:=\"''\"" in out, out
    assert "/project/src" not in out and "[ERROR]" not in out, out


@pytest.mark.parametrize(
    "command",
    [
        _script("estimator_node", "robot_state_estimator.ros.entry"),
        [sys.executable, "-m", "robot_state_estimator.ros.node"],
    ],
    ids=["estimator_node", "python-m-node"],
)
def test_help_names_every_input_output_and_service(ros_domain_env: dict[str, str], command: list[str]) -> None:
    """``python -m robot_state_estimator.ros.node --help`` printed nothing and started the node; both entry
    points print the usage, which names every topic and the service."""
    proc = subprocess.run([*command, "--help"], env=ros_domain_env, capture_output=True, text=True, timeout=60)
    out = proc.stdout
    assert proc.returncode == 0 and out.startswith("usage: estimator_node"), out + proc.stderr
    for name in ("imu/data", "joint_states", "foot_forces", "robot_description", "set_pose", "odometry", "/tf"):
        assert name in out, name
    for name in ("contact_wrench/<foot>", "contact_states", "/diagnostics", "~/reset"):
        assert name in out, name
    assert "[INFO]" not in out + proc.stderr


def test_sigterm_while_playing_ends_bag_player_quietly(trot_run, recorder, ros_domain_env, tmp_path) -> None:
    """SIGTERM while bag_player publishes: exit 0 and no traceback (a publish on the context the signal shut down
    raised RCLError before)."""
    log = tmp_path / "player.log"
    cmd = [*_script("bag_player", "robot_state_estimator.ros.bag_player"), str(trot_run["bag"]), "--rate", "0.2"]
    with open(log, "w") as out:
        player = subprocess.Popen([*cmd, "--clock"], env=ros_domain_env, stdout=out, stderr=subprocess.STDOUT)
        try:
            playing = spin_until(recorder.executor, lambda: len(recorder.out["clock"]) > 5, timeout_s=30)
            assert playing, log.read_text()
            player.send_signal(signal.SIGTERM)
            player.wait(timeout=10)
        finally:
            if player.poll() is None:
                player.kill()
                player.wait()
    text = log.read_text()
    assert player.returncode == 0, text
    assert "Traceback" not in text and "context is invalid" not in text, text
