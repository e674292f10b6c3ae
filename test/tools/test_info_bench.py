"""``info`` works without rclpy; the benchmark runs in its short mode (that it works, not how fast)."""

from __future__ import annotations

import argparse
import json
import sys

import pytest

from robot_state_estimator.tools import bench, bench_node, bench_replay, info


def test_info_without_rclpy(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "rclpy", None)  # import rclpy raises ImportError
    data = info.collect()
    assert data["ros2"]["rclpy_importable"] is False
    assert data["numpy"] and data["pinocchio"]
    assert info.run(argparse.Namespace(json=False)) == 0
    assert "pinocchio" in capsys.readouterr().out


def test_info_names_the_distro_of_the_rclpy_wheel():
    assert info._distro_from_rclpy("9.1.2").startswith("kilted")
    assert info._distro_from_rclpy(None) is None


@pytest.mark.ros
@pytest.mark.slow
def test_bench_short_mode(tmp_path, capsys):
    pytest.importorskip("rclpy", reason="rclpy not available")
    code = bench.run(
        argparse.Namespace(output=str(tmp_path), short=True, no_node=False, node_duration=None, offline_duration=None)
    )
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "latest.json").read_text())
    assert code == 0, out + json.dumps(doc.get("node"))
    assert doc["offline"]["samples_per_s"] > 0 and doc["offline"]["realtime_factor"] > 0
    assert doc["step_cost"]["propagation_add_imu"]["n"] > 0
    assert doc["step_cost"]["update_4_feet_add_joints"]["n"] > 0
    core = doc["core"]
    assert core["pair_cpu_us"] > 0 and core["feet_in_contact_at_end"] == 4 and core["full_dynamics"]
    parts = core["parts_us"]
    assert set(parts) == {"propagation", "kinematics", "contact_logic", "update"}
    # the compiled parts are each a share of the measured step (the rest is the Python around the calls)
    assert all(0 < v < core["pair_cpu_us"] for v in parts.values()) and core["rest_us"] > 0
    assert core["memory"]["samples"] >= 20_000 and core["memory"]["initialized_at_end"]
    assert "core step, IMU + 4-foot joint sample" in out
    sim = doc["replay"]["simulated_1k_1k"]
    assert sim["tum"]["realtime_factor_cpu"] > 0 and sim["full_bag"]["output_messages"] > sim["input_messages"] > 0
    assert doc["replay"]["go1_real"] == {"skipped": "--short"}
    assert "replay simulated_1k_1k, full output bag:" in out
    node = doc["node"]
    assert node["odometry_received"] > 0
    assert node["latency_stamp_to_reception_us"]["p99"] > 0
    assert node["feeder"]["imu_published"] > 0 and node["node_inputs"]["imu_received"] > 0
    for key in ("node_latency_stamp_to_publish_ms", "node_processing_ms"):  # from the node's /diagnostics
        assert node[key]["reports"] >= 1 and node[key]["samples"] > 0, node[key]
        assert 0 <= node[key]["p50_ms"] <= node[key]["p99_ms"] <= node[key]["max_ms"], node[key]
    assert "node latency stamp to publish p50" in out
    assert node["cpu_percent_of_one_core"] > 0
    assert doc["memory"]["bench_process_peak_rss_kb"] > 0
    assert "offline core" in out


def test_bench_replay_splits_reading_core_and_writing(sim_run):
    from robot_state_estimator.estimation import RobotStateEstimator

    run_dir, _ = sim_run
    methods = {name: getattr(RobotStateEstimator, name) for name in ("add_imu", "add_joints", "add_foot_forces")}
    description = str(run_dir / "robot_description.urdf")
    full = bench_replay.bench_replay(run_dir / "bag", description, output_bag=True)
    bare = bench_replay.bench_replay(run_dir / "bag", description, output_bag=False)
    # the core's methods are the real ones again after the timing
    assert {name: getattr(RobotStateEstimator, name) for name in methods} == methods
    assert full["output_bag"] == {"topics": ["odometry", "tf", "wrenches", "contacts"], "compression": "zstd"}
    assert bare["output_bag"] is None and bare["write_wall_s"] == 0.0 and bare["output_bag_mb"] == 0.0
    for r in (full, bare):
        assert r["n_samples"] == full["n_samples"] > 0
        assert 0 < r["core_wall_s"] < r["wall_s"] <= r["total_wall_s"] - r["read_wall_s"]
        # the writes are inside the loop, but for closing the bag after it
        assert r["core_wall_s"] + r["write_wall_s"] <= r["total_wall_s"] - r["read_wall_s"]
        assert r["realtime_factor"] == pytest.approx(r["input_duration_s"] / r["wall_s"])
        assert r["realtime_factor_total"] == pytest.approx(r["input_duration_s"] / r["total_wall_s"])
    assert full["write_wall_s"] > 0 and full["output_bag_mb"] > 0.1


@pytest.mark.ros
@pytest.mark.slow
def test_bench_node_with_every_output_subscribed():
    pytest.importorskip("rclpy", reason="rclpy not available")
    stand = bench.simulated_run("stand", 1.0)
    n = bench.bench_node(stand, 1.0, imu_rate_hz=200, joint_rate_hz=100, subscribe_all_outputs=True)
    assert n["outputs_subscribed"] == "all"
    received = n["outputs_received"]
    # the node publishes TF, wrenches and contact states only to matched subscribers: these counts show it did
    assert set(received) == {"/tf", "contact_states", *(f"contact_wrench/{foot}" for foot in stand.feet)}
    assert all(count > 0 for count in received.values()), received
    assert n["cpu_us_per_input"] > 0
    wait = n["main_thread_runqueue_wait_percent"]
    assert wait is None or 0.0 <= wait <= 100.0
    steal = n["machine_steal_percent"]
    assert steal is None or 0.0 <= steal <= 100.0


def test_bench_offline_repeats_report_the_median_repeat():
    run = bench.simulated_run("stand", 0.3)
    r = bench.bench_offline(run, repeats=3)
    factors = r["repeats"]["realtime_factor"]
    assert len(factors) == 3 and r["repeats"]["n"] == 3
    assert r["realtime_factor"] == sorted(factors)[1]
    assert r["repeats"]["realtime_factor_best"] == max(factors)
    assert len(r["repeats"]["machine_steal_percent"]) == 3
    assert r["realtime_factor"] == pytest.approx(r["input_duration_s"] / r["wall_s"])


def test_cpu_per_input_divides_by_the_inputs_of_the_cpu_window():
    # README's full run: 74 % of a core for 30 s at 1 kHz IMU + 1 kHz joints, nothing dropped -> 0.74 s / 2000
    assert bench.cpu_us_per_input(0.74 * 30.0, 30_000 + 30_000, 0, 0) == pytest.approx(370.0)
    # the trial's --short run: 71 % of a core for 1 s, 1000 + 1000 inputs (not one report's 168 + 168)
    assert bench.cpu_us_per_input(0.71, 1000 + 1000, 0, 0) == pytest.approx(355.0)
    # dropped inputs were never received; a negative count (report older than the feed's end) is no drop
    assert bench.cpu_us_per_input(0.5, 2000, 500, -3) == pytest.approx(1e6 * 0.5 / 1500)
    assert bench.cpu_us_per_input(0.5, 100, 100, 0) is None


def test_window_reports_count_from_before_the_window_when_only_the_final_report_came():
    """The node's inputs counts over the window: from the window's first report when there are two or more (the
    first covers the end of the warm-up); with only the report after the feed (a 1 s window on a loaded machine:
    the short bench's node once reported 0 IMU received), from the last report before the window."""
    pre = {"imu_received": "300"}
    a, b, c = ({"imu_received": str(n)} for n in (700, 1100, 1300))
    assert bench_node.window_reports([a, b, c], pre) == ([b, c], a)
    only, before = bench_node.window_reports([c], pre)
    assert only == [c] and before is pre
    assert int(only[-1]["imu_received"]) - int(before["imu_received"]) == 1000
    assert bench_node.window_reports([], pre) == ([], pre)


def test_bench_replay_case_splits_the_cpu_time_per_message(sim_run):
    """The replay section's figures add up: the parts' CPU within the run's total, the core within the loop, one
    output message per odometry, TF, wrench and contact states of the log."""
    from robot_state_estimator.common.paths import config_dir
    from robot_state_estimator.tools import replay

    run_dir, _ = sim_run
    description = str(run_dir / "robot_description.urdf")
    case = bench_replay.bench_replay_case(run_dir / "bag", description, repeats=1)
    n_in = case["input_messages"]
    assert case["core_samples"] == n_in > 0  # every input reached the core (a clean simulated run)
    for key in ("tum", "full_bag"):
        r = case[key]
        cpu = r["cpu_s"]
        assert cpu["read_s"] + cpu["loop_s"] + cpu["write_s"] <= cpu["total_s"] * 1.001 + 1e-3
        assert 0 < case["core_cpu_s"] and r["per_message_us"]["core"] == pytest.approx(1e6 * case["core_cpu_s"] / n_in)
        assert case["core_feet_cpu_s"] >= 0 and r["per_message_us"]["core_feet"] >= 0
        assert r["realtime_factor_cpu"] == pytest.approx(case["input_duration_s"] / cpu["total_s"])
    assert case["tum"]["output_messages"] == 0 and "write" not in case["tum"]["per_message_us"]
    full = case["full_bag"]
    us = full["per_message_us"]
    assert us["write"] == pytest.approx(us["encode"] + us["records"]) and us["encode"] > 0
    settings, params = replay.split_config(config_dir() / "go1.yaml")  # what the bench replays with
    options = replay.ReplayOptions(node_params={**replay.NODE_DEFAULTS, **params})
    log = replay.replay(run_dir / "bag", description=description, settings=settings, options=options).log
    assert full["output_messages"] == 2 * len(log) + 5 * len(log.contact_stamp_ns)
    lines = bench_replay.summary_lines({"simulated_1k_1k": case, "go1_real": {"skipped": "test"}})
    assert lines[0].startswith("replay simulated_1k_1k, TUM only:") and "records" in lines[1]
    assert lines[2] == "replay go1_real: skipped (test)"


def _case(cpu_us: float, received: dict[str, int], inputs: int = 30_000, dropped: int = 0) -> dict:
    return {
        "cpu_us_per_input": cpu_us,
        "inputs_published": inputs,
        "node_inputs": {"imu_dropped": dropped, "joint_states_dropped": 0},
        "outputs_received": received,
    }


def test_each_extra_outputs_cost_is_its_case_less_the_odometry_alone():
    # 30 s at 1 kHz + 1 kHz: 30,000 inputs; the TF once per odometry (15,000), four wrenches and one contact state
    # per joint estimate (60,000 and 15,000)
    feet = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
    doc = {
        "node": _case(100.0, {}),
        "node_tf": _case(115.0, {"/tf": 15_000}),
        "node_wrenches": _case(148.0, {f"contact_wrench/{f}": 15_000 for f in feet}),
        "node_contacts": {"error": "the node did not start"},
        "node_all_outputs": _case(208.0, {"/tf": 14_000, "contact_states": 14_000}, inputs=30_000, dropped=2_000),
    }
    costs = bench_node.output_costs(doc)
    assert costs["odometry_only_us_per_input"] == 100.0 and "contacts" not in costs
    assert costs["tf"] == {"us_per_input": 15.0, "messages_per_input": 0.5, "us_per_message": 30.0}
    assert costs["wrenches"] == {"us_per_input": 48.0, "messages_per_input": 2.0, "us_per_message": 24.0}
    # 28,000 inputs received (2,000 dropped), 28,000 messages: one a input, 108 us each
    assert costs["all_outputs"] == {"us_per_input": 108.0, "messages_per_input": 1.0, "us_per_message": 108.0}
    line = bench_node.output_costs_line(costs)
    assert line is not None and "/tf +15 us (0.50 messages per input, 30 us a message)" in line
    assert "contact_wrench/<foot> +48 us" in line and "all +108 us" in line and "contact_states" not in line
    assert bench_node.output_costs({"node": {"error": "x"}}) == {} and bench_node.output_costs_line({}) is None


@pytest.mark.ros
@pytest.mark.slow
def test_bench_node_only(tmp_path, capsys):
    pytest.importorskip("rclpy", reason="rclpy not available")
    args = argparse.Namespace(
        output=str(tmp_path), short=True, no_node=False, node_duration=None, offline_duration=None, node_only=True
    )
    assert bench.run(args) == 0
    doc = json.loads((tmp_path / "latest.json").read_text())
    assert doc["node"]["cpu_us_per_input"] > 0 and doc["memory"]["bench_process_peak_rss_kb"] > 0
    assert not {"offline", "core", "replay", "decode", "kinematics", "consistency"} & set(doc)
    steps = doc["node_in_core_steps"]
    assert steps["core_pair_cpu_us_before"] > 0 and steps["core_pair_cpu_us_after"] > 0
    assert steps["ratio"] == pytest.approx(doc["node"]["cpu_us_per_input"] / steps["core_pair_cpu_us_mean"])
    out = capsys.readouterr().out
    assert "node over DDS" in out and "node CPU per input in core steps" in out


def test_node_in_core_steps_is_the_node_over_the_mean_core_step():
    # 90 us of node CPU per input, the core step 15 us before and 17 us after: 90 / 16 = 5.625 core steps, under the
    # target 100 / 16 = 6.25; 110 us is 6.875, over it
    steps = bench.node_in_core_steps({"cpu_us_per_input": 90.0}, 15.0, 17.0)
    assert steps["core_pair_cpu_us_mean"] == 16.0 and steps["ratio"] == pytest.approx(5.625)
    assert steps["target_ratio"] == pytest.approx(6.25) and steps["met"] is True
    assert bench.node_in_core_steps({"cpu_us_per_input": 110.0}, 16.0, 16.0)["met"] is False
    missing = bench.node_in_core_steps({"error": "no node"}, 16.0, 16.0)
    assert missing["ratio"] is None and missing["met"] is None
