"""Bad input files as users give them to replay, evaluate and import-csv: each is one line naming the file and
the problem with exit code 2 (no traceback), or a WARNING with counts when the run can go on; never an output
written over an input."""

from __future__ import annotations

import argparse
import copy
import json
import os
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.io import bags
from robot_state_estimator.tools import cli, csv_import, replay

INPUTS = ["/imu/data", "/joint_states"]
SPAN_NS = NS_PER_S  # the first second of the simulated run


@pytest.fixture(scope="module")
def first_second(sim_run):
    """``(messages of /imu/data and /joint_states of the first second, the run's description)``."""
    run_dir, _ = sim_run
    msgs = bags.read_messages_in_stamp_order(run_dir / "bag", INPUTS)
    return [m for m in msgs if m.stamp_ns - msgs[0].stamp_ns <= SPAN_NS], str(run_dir / "robot_description.urdf")


def _write(path, items):
    with bags.BagWriter(path) as bag:
        for topic, msg, log_ns in items:
            bag.write(topic, msg, log_ns)
    return path


def _restamped(msg, stamp_ns):
    types = bags.default_types()
    out = copy.copy(msg)
    sec, nanosec = divmod(stamp_ns, NS_PER_S)
    out.header = types.Header(stamp=types.Time(sec=sec, nanosec=nanosec), frame_id=msg.header.frame_id)
    return out


def _cli(capsys, argv):
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    return rc, out, err.strip().splitlines()


def _one_error_line(err, command):
    assert len(err) == 1, err
    assert err[0].startswith(f"robot-state-estimator {command}: error: ")
    return err[0]


# ------------------------------------------------------------------------------------------------ replay
def test_an_imu_topic_of_another_type_is_refused_naming_topic_type_and_option(first_second, tmp_path, capsys):
    msgs, desc = first_second
    vector3_stamped = bags.default_typestore().types["geometry_msgs/msg/Vector3Stamped"]
    items = [
        (m.topic, vector3_stamped(header=m.msg.header, vector=m.msg.angular_velocity), m.log_time_ns)
        if m.topic == "/imu/data"
        else (m.topic, m.msg, m.log_time_ns)
        for m in msgs[:40]
    ]
    bag = _write(tmp_path / "bag", items)
    rc, _, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth"])
    line = _one_error_line(err, "replay")
    assert rc == 2
    assert f"bag {bag}: /imu/data is geometry_msgs/msg/Vector3Stamped, not sensor_msgs/msg/Imu (--imu-topic)" in line


def test_an_imu_topic_of_a_custom_type_is_refused(first_second, tmp_path, capsys):
    msgs, desc = first_second
    store = get_typestore(Stores.ROS2_KILTED)
    store.register(get_types_from_msg("std_msgs/Header header\nfloat64 x\n", "my_msgs/msg/FancyImu"))
    fancy = store.types["my_msgs/msg/FancyImu"]
    bag = tmp_path / "bag"
    with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        conns = {
            "/imu/data": w.add_connection("/imu/data", "my_msgs/msg/FancyImu", typestore=store),
            "/joint_states": w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=store),
        }
        for m in msgs[:40]:
            msg, msgtype = (
                (fancy(header=m.msg.header, x=1.0), "my_msgs/msg/FancyImu")
                if m.topic == "/imu/data"
                else (
                    m.msg,
                    m.msgtype,
                )
            )
            w.write(conns[m.topic], m.log_time_ns, store.serialize_cdr(msg, msgtype))
    rc, _, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth"])
    assert rc == 2
    assert "/imu/data is my_msgs/msg/FancyImu, not sensor_msgs/msg/Imu (--imu-topic)" in _one_error_line(err, "replay")


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.5, 0.99])
@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_truncated_bag_file_is_one_line_saying_it_is_incomplete(first_second, tmp_path, capsys, storage, fraction):
    msgs, desc = first_second
    with bags.BagWriter(tmp_path / "bag", storage=storage) as bag:
        for m in msgs[:200]:
            bag.write(m.topic, m.msg, m.log_time_ns)
    (full,) = [f for f in (tmp_path / "bag").iterdir() if f.suffix in (".mcap", ".db3")]
    data = full.read_bytes()
    cut = tmp_path / f"cut{full.suffix}"
    cut.write_bytes(data[: max(10, int(len(data) * fraction))])
    rc, out, err = _cli(capsys, ["replay", str(cut), "--description", desc, "--no-ground-truth"])
    assert rc == 2 and "replayed" not in out
    line = _one_error_line(err, "replay")
    assert f"cannot read bag {cut}: " in line
    assert line.endswith(
        "(the file is incomplete, e.g. a recording that was not closed or a partial copy, or is not a bag)"
    )


def test_a_bag_folder_whose_metadata_names_a_missing_file_is_one_line(first_second, tmp_path, capsys):
    msgs, desc = first_second
    bag = _write(tmp_path / "bag", [(m.topic, m.msg, m.log_time_ns) for m in msgs[:40]])
    (bag / "bag.mcap").unlink()
    rc, _, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth"])
    assert rc == 2
    assert f"cannot read bag {bag}: Some database files are missing: ['{bag / 'bag.mcap'}']" in (
        _one_error_line(err, "replay")
    )


def test_stamps_going_back_mid_bag_are_warned_about_per_topic(first_second, tmp_path, capsys):
    msgs, desc = first_second
    t0 = msgs[0].stamp_ns
    # from 0.5 s on, every stamp 3 s earlier: a clock restarted while recording
    items = [
        (
            m.topic,
            _restamped(m.msg, m.stamp_ns - 3 * NS_PER_S if m.stamp_ns - t0 > NS_PER_S // 2 else m.stamp_ns),
            m.log_time_ns,
        )
        for m in msgs
    ]
    bag = _write(tmp_path / "bag", items)
    doc = tmp_path / "run.json"
    rc, out, _ = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth", "--json", str(doc)])
    assert rc == 0
    steps = json.loads(doc.read_text())["run"]["stamp_steps_back"]
    assert steps.keys() == {"/imu/data", "/joint_states"}
    assert all(s["count"] == 1 and s["largest_s"] == pytest.approx(2.999, abs=1e-9) for s in steps.values())
    warnings = [line for line in out.splitlines() if line.startswith("WARNING: the header stamps of")]
    # the last stamp before the step is t0 + 0.5 s (1 kHz IMU, 1 kHz joints), the first after t0 + 0.501 s - 3 s
    assert warnings == [
        f"WARNING: the header stamps of {topic} go back 1 time(s) in recording order (largest step 2.999 s): replay "
        "runs in stamp order, so messages recorded before and after are interleaved; a recording that restarts or "
        "loops its clock should be cut there"
        for topic in ("/imu/data", "/joint_states")
    ]


def test_an_imu_stream_all_skipped_is_an_error_naming_its_cause(first_second, tmp_path, capsys):
    msgs, desc = first_second
    items = []
    for m in msgs[:400]:
        msg = m.msg
        if m.topic == "/imu/data":
            msg = copy.deepcopy(msg)
            msg.linear_acceleration.x = float("nan")
        items.append((m.topic, msg, m.log_time_ns))
    bag = _write(tmp_path / "bag", items)
    n_imu = sum(m.topic == "/imu/data" for m in msgs[:400])
    rc, _, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth"])
    assert rc == 2
    assert (
        f"no IMU sample of /imu/data reached the estimator: all {n_imu} skipped (imu_not_finite: IMU sample skipped: "
        "linear_acceleration is not finite: [nan," in _one_error_line(err, "replay")
    )


def test_a_run_too_short_for_an_estimate_says_so(first_second, tmp_path, capsys):
    msgs, desc = first_second
    bag = _write(tmp_path / "bag", [(m.topic, m.msg, m.log_time_ns) for m in msgs[:40]])
    rc, _, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth"])
    assert rc == 2
    assert f"the estimator produced 0 estimates from the 40 messages (0.02 s) of {bag}: too short a run" in (
        _one_error_line(err, "replay")
    )


def test_input_topics_without_messages_are_named(first_second, tmp_path, capsys):
    _, desc = first_second
    bag = tmp_path / "bag"
    with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as w:  # connections, no message
        w.add_connection("/imu/data", "sensor_msgs/msg/Imu", typestore=bags.default_typestore())
        w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=bags.default_typestore())
    out = tmp_path / "out"
    rc, _, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth", "--output", str(out)])
    assert rc == 2 and not out.exists()  # the output bag made for the run is removed again
    assert f"{bag} has no messages on /imu/data (--imu-topic), /joint_states (--joints-topic)" in (
        _one_error_line(err, "replay")
    )


def test_a_small_step_back_is_a_note_not_a_warning(first_second, tmp_path, capsys):
    msgs, desc = first_second
    imu = [k for k, m in enumerate(msgs) if m.topic == "/imu/data"]
    a, b = imu[100], imu[101]  # 1 ms apart: exchange their stamps (two publishers' jitter)
    items = [(m.topic, m.msg, m.log_time_ns) for m in msgs]
    items[a] = (msgs[a].topic, _restamped(msgs[a].msg, msgs[b].stamp_ns), msgs[a].log_time_ns)
    items[b] = (msgs[b].topic, _restamped(msgs[b].msg, msgs[a].stamp_ns), msgs[b].log_time_ns)
    bag = _write(tmp_path / "bag", items)
    rc, out, _ = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth"])
    assert rc == 0 and "WARNING: the header stamps" not in out
    assert (
        "note: the header stamps of /imu/data go back 1 time(s) in recording order by at most 1.0 ms; replayed in "
        in (out)
    )


def test_stamps_in_order_give_no_stamp_warning(first_second, tmp_path):
    msgs, _ = first_second
    bag = _write(tmp_path / "bag", [(m.topic, m.msg, m.log_time_ns) for m in msgs[:100]])
    assert bags.read_stamp_ordered(bag, INPUTS).steps_back == {}


def test_all_zero_stamps_are_an_error_naming_the_cause_of_each_stream(first_second, tmp_path, capsys):
    msgs, desc = first_second
    bag = _write(tmp_path / "bag", [(m.topic, _restamped(m.msg, 0), m.log_time_ns) for m in msgs[:200]])
    n_joint = sum(m.topic == "/joint_states" for m in msgs[:200])
    n_imu = 200 - n_joint
    rc, _, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth"])
    assert rc == 2
    assert (
        f"no joint sample of /joint_states reached the estimator: all {n_joint} skipped (stamp_zero: joint sample "
        f"skipped: zero or negative stamp); and all {n_imu} IMU samples of /imu/data were skipped too (stamp_zero: "
        "IMU sample skipped: zero or negative stamp)" in _one_error_line(err, "replay")
    )


@pytest.mark.parametrize("option", ["--tum", "--json"])
def test_an_output_over_the_description_replay_found_itself_is_refused(first_second, tmp_path, capsys, option):
    """robot_description.urdf next to the bag (what simulate writes) is read without --description: an output
    there overwrote it (a user trial: every later replay of the bag failed)."""
    msgs, desc = first_second
    run = tmp_path / "run"
    bag = _write(run / "bag", [(m.topic, m.msg, m.log_time_ns) for m in msgs[:40]])
    found = run / "robot_description.urdf"
    found.write_text(Path(desc).read_text())
    before = found.read_bytes()
    rc, _, err = _cli(capsys, ["replay", str(bag), "--no-ground-truth", option, str(found)])
    assert rc == 2
    assert f"{option} {found} would overwrite the description {found}: choose another path" in _one_error_line(
        err, "replay"
    )
    assert found.read_bytes() == before


def test_an_output_over_the_settings_replay_found_itself_is_refused(tmp_path):
    """The same for config/<robot>.yaml, which --robot reads without --config (checked on a copy: the rule is
    the one path check, given what replay resolved)."""
    settings = tmp_path / "go1.yaml"
    settings.write_text("{}\n")
    args = argparse.Namespace(input=str(tmp_path), tum=str(settings), output=None, json=None, plots=None)
    with pytest.raises(replay.ReplayError, match=r"--tum .*go1.yaml would overwrite the settings .*go1.yaml"):
        replay.check_output_paths(args, resolved=(("the settings", str(settings)), ("the description", "<robot/>")))


@pytest.mark.parametrize("option", ["--tum", "--json"])
def test_an_output_file_over_the_input_is_refused_and_the_input_kept(first_second, tmp_path, capsys, option):
    msgs, desc = first_second
    bag = _write(tmp_path / "bag", [(m.topic, m.msg, m.log_time_ns) for m in msgs[:40]])
    mcap = bag / "bag.mcap"
    before = mcap.read_bytes()
    rc, _, err = _cli(capsys, ["replay", str(mcap), "--description", desc, "--no-ground-truth", option, str(mcap)])
    assert rc == 2
    line = _one_error_line(err, "replay")
    assert f"{option} {mcap} would overwrite the input {mcap}: choose another path" in line
    assert mcap.read_bytes() == before
    rc, _, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth", option, str(mcap)])
    assert rc == 2 and f"would overwrite a file of the input {bag}" in _one_error_line(err, "replay")
    assert mcap.read_bytes() == before


@pytest.mark.parametrize(
    ("option", "target", "message"),
    [
        ("--tum", "a_file/x.tum", "--tum: {d}/a_file is a file, not a folder: cannot write {d}/a_file/x.tum"),
        ("--json", "a_file/x.json", "--json: {d}/a_file is a file, not a folder: cannot write {d}/a_file/x.json"),
        ("--output", "a_file/out", "--output: {d}/a_file is a file, not a folder: cannot write {d}/a_file/out"),
        ("--plots", "a_file", "--plots: {d}/a_file is a file, not a folder"),
        ("--tum", "", "--tum: {d} is a folder, not a file"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_the_replay(
    first_second, tmp_path, capsys, option, target, message
):
    msgs, desc = first_second
    bag = _write(tmp_path / "bag", [(m.topic, m.msg, m.log_time_ns) for m in msgs[:40]])
    (tmp_path / "a_file").write_text("")
    argv = ["replay", str(bag), "--description", desc, "--no-ground-truth", option, str(tmp_path / target)]
    rc, out, err = _cli(capsys, argv)
    assert rc == 2 and "replayed" not in out
    assert message.format(d=tmp_path) in _one_error_line(err, "replay")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_output_in_a_read_only_folder_is_refused_before_the_replay(first_second, tmp_path, capsys):
    msgs, desc = first_second
    bag = _write(tmp_path / "bag", [(m.topic, m.msg, m.log_time_ns) for m in msgs[:40]])
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    rc, _, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--tum", str(ro / "x.tum")])
    assert rc == 2
    assert f"--tum: folder {ro} is not writable: cannot write {ro / 'x.tum'}" in _one_error_line(err, "replay")


def test_a_missing_output_folder_is_created(first_second, tmp_path, capsys):
    msgs, desc = first_second
    bag = _write(tmp_path / "bag", [(m.topic, m.msg, m.log_time_ns) for m in msgs])
    tum = tmp_path / "new" / "deeper" / "est.tum"
    rc, _, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--no-ground-truth", "--tum", str(tum)])
    assert (rc, err) == (0, [])
    assert len(np.loadtxt(tum, ndmin=2)) > 0


def test_a_bad_setting_in_the_config_names_the_file(first_second, tmp_path, capsys):
    _, desc = first_second
    config = tmp_path / "settings.yaml"
    config.write_text("robot_state_estimator:\n  ros__parameters:\n    ekf:\n      gyro_noise_density: abc\n")
    rc, _, err = _cli(capsys, ["replay", str(tmp_path), "--description", desc, "--config", str(config)])
    assert rc == 2
    assert f"{config}: ekf.gyro_noise_density must be a number, got 'abc'" in _one_error_line(err, "replay")


# ------------------------------------------------------------------------------------------ ground truth
def _tum(path, t):
    rows = [f"{x!r} {0.01 * k} 0 0 0 0 0 1" for k, x in enumerate(t)]
    path.write_text("\n".join(["# t x y z qx qy qz qw", *rows]) + "\n")
    return path


def test_a_tum_file_going_back_in_time_is_refused_naming_its_line(tmp_path, capsys):
    est = _tum(tmp_path / "est.tum", [1.0 + 0.01 * k for k in range(20)])
    gt = _tum(tmp_path / "gt.tum", [1.0 + 0.01 * k for k in range(10)] + [1.0 + 0.01 * k for k in range(10)])
    rc, _, err = _cli(capsys, ["evaluate", str(est), str(gt)])
    assert rc == 2
    # line 1 is the comment: the 11th pose (t = 1.0 after 1.09) is on line 12
    assert (
        f"{gt} line 12: time 1.000000 s is before the previous row's 1.090000 s (1 such rows); a trajectory file must "
        "be in time order" in _one_error_line(err, "evaluate")
    )


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("gt.tum", "2 0 0 0 0 0 0 1\n1 0 0 0 0 0 0 1\n", "{} line 2: time 1.000000 s is before the previous row's"),
        ("gt.csv", "", "ground-truth CSV {} has no rows after its header line"),
        ("missing.tum", None, "ground truth not found: {}"),
    ],
)
def test_replay_checks_a_ground_truth_file_before_the_replay(first_second, tmp_path, capsys, name, text, message):
    msgs, desc = first_second
    bag = _write(tmp_path / "bag", [(m.topic, m.msg, m.log_time_ns) for m in msgs[:40]])
    gt = tmp_path / name
    if text is not None:
        gt.write_text(text)
    rc, out, err = _cli(capsys, ["replay", str(bag), "--description", desc, "--ground-truth", str(gt)])
    assert rc == 2 and "replayed" not in out
    assert message.format(gt) in _one_error_line(err, "replay")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("empty.tum", "", "TUM file {} has no poses (t x y z qx qy qz qw per line)"),
        ("comments.tum", "# t x y z qx qy qz qw\n", "TUM file {} has no poses"),
        ("seven.tum", "1 0 0 0 0 0 1\n2 0 0 0 0 0 1\n", "TUM file {} must have >= 2 lines of 8 numbers"),
        ("gt.csv", "seq,x,y,z,qx,qy,qz,qw\n", "ground-truth CSV {} has no rows after its header line"),
    ],
)
def test_empty_or_short_ground_truth_is_one_line_without_numpy_warnings(tmp_path, capsys, name, text, message):
    est = _tum(tmp_path / "est.tum", [1.0 + 0.01 * k for k in range(20)])
    gt = tmp_path / name
    gt.write_text(text)
    rc, _, err = _cli(capsys, ["evaluate", str(est), str(gt), "--time-span", "1", "2"])
    assert rc == 2
    assert message.format(gt) in _one_error_line(err, "evaluate")


def test_evaluate_refuses_a_json_over_an_input_and_keeps_it(tmp_path, capsys):
    est = _tum(tmp_path / "est.tum", [1.0 + 0.01 * k for k in range(20)])
    gt = _tum(tmp_path / "gt.tum", [1.0 + 0.01 * k for k in range(20)])
    before = gt.read_text()
    rc, out, err = _cli(capsys, ["evaluate", str(est), str(gt), "--json", str(gt)])
    assert rc == 2 and out == ""
    assert f"--json {gt} would overwrite the ground truth {gt}: choose another path" in _one_error_line(err, "evaluate")
    assert gt.read_text() == before


@pytest.mark.parametrize(
    ("field", "value", "count"),
    [
        ("position.x", float("nan"), "5 of 100"),
        ("orientation.w", float("inf"), "5 of 100"),
        ("orientation", 0.0, "100 of 100"),
    ],
)
def test_ground_truth_odometry_with_a_bad_pose_is_refused_with_counts(sim_run, tmp_path, capsys, field, value, count):
    run_dir, _ = sim_run
    odom = list(bags.read_messages(run_dir / "bag", ["/ground_truth/odom"]))[:100]
    with bags.BagWriter(tmp_path / "gt") as bag:
        for k, m in enumerate(odom):
            msg = copy.deepcopy(m.msg)
            pose = msg.pose.pose
            if field == "orientation":  # every message: a zero quaternion
                pose.orientation.x = pose.orientation.y = pose.orientation.z = pose.orientation.w = value
            elif k % 20 == 3:  # messages 3, 23, 43, 63, 83
                part, axis = field.split(".")
                setattr(getattr(pose, part), axis, value)
            bag.write(m.topic, msg, m.log_time_ns)
    first = odom[0 if field == "orientation" else 3].stamp_ns
    est = _tum(tmp_path / "est.tum", [first / NS_PER_S + 0.01 * k for k in range(20)])
    rc, _, err = _cli(capsys, ["evaluate", str(est), str(tmp_path / "gt"), "--gt-topic", "/ground_truth/odom"])
    assert rc == 2
    line = _one_error_line(err, "evaluate")
    assert (
        f"bag {tmp_path / 'gt'} topic /ground_truth/odom: {count} Odometry messages have a NaN/Inf pose or a zero "
        f"quaternion (first at stamp {first // NS_PER_S}.{first % NS_PER_S // 1000:06d} s: " in line
    )


def test_a_ground_truth_topic_of_another_type_is_refused(first_second, tmp_path, capsys):
    msgs, _ = first_second
    bag = _write(tmp_path / "bag", [(m.topic, m.msg, m.log_time_ns) for m in msgs[:40]])
    est = _tum(tmp_path / "est.tum", [1.0 + 0.01 * k for k in range(20)])
    rc, _, err = _cli(capsys, ["evaluate", str(est), str(bag), "--gt-topic", "/imu/data"])
    assert rc == 2
    line = _one_error_line(err, "evaluate")
    assert "/imu/data is sensor_msgs/msg/Imu, not nav_msgs/msg/Odometry (the ground-truth topic, --gt-topic)" in line
    rc, _, err = _cli(capsys, ["evaluate", str(bag), str(est)])  # the bag as the estimate: no odometry topic
    assert rc == 2
    assert f"bag {bag} has no estimate topic odometry (--est-topic); topics: ['/imu/data', '/joint_states']" in (
        _one_error_line(err, "evaluate")
    )


# ------------------------------------------------------------------------------------------- import-csv
MAPPING = """time: {column: t, unit: s}
imu:
  angular_velocity: [wx, wy, wz]
  linear_acceleration: [ax, ay, az]
joints:
  position: {a: qa}
"""
HEADER = "t,wx,wy,wz,ax,ay,az,qa"


def _rows(n=10):
    return [f"{1.0 + 0.0025 * k!r},0,0,0,0,0,9.81,0.1" for k in range(n)]


def _import(tmp_path, capsys, csv_path):
    mapping = tmp_path / "m.yaml"
    mapping.write_text(MAPPING)
    return _cli(capsys, ["import-csv", str(csv_path), "--mapping", str(mapping), "--output", str(tmp_path / "out")])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "CSV {} is empty: expected a header line naming the columns"),
        (bytes(range(256)) * 4, "cannot read CSV {}: 'utf-8' codec can't decode"),
        # line 1 is the header: data row 3 is line 4
        (
            "\n".join([HEADER, *_rows()[:3], "1.0075,0,0,0,0,0,abc,0.1", *_rows()[4:]]).encode(),
            "{}: line 5, column 'az': 'abc' is not a number",
        ),
        ("\n".join([HEADER, *_rows()[:2], "1.005,0,0,0,0,0,9.81", *_rows()[3:]]).encode(), "{}: line 4 has 7 cells"),
        (
            "\n".join([HEADER, *_rows()[:5], "1.0125,0,0,0,0,0,nan,0.1", *_rows()[6:]]).encode(),
            "{} line 7, column 'az': nan is not a finite number (1 such rows)",
        ),
    ],
    ids=["empty", "binary", "text_cell", "short_row", "nan_cell"],
)
def test_a_bad_csv_is_one_line_naming_the_file_and_line(tmp_path, capsys, content, message):
    csv_path = tmp_path / "rec.csv"
    csv_path.write_bytes(content)
    rc, _, err = _import(tmp_path, capsys, csv_path)
    assert rc == 2
    assert message.format(csv_path) in _one_error_line(err, "import-csv")
    assert not (tmp_path / "out").exists()


def test_an_import_into_a_path_under_a_file_is_one_line(tmp_path, capsys):
    csv_path = tmp_path / "rec.csv"
    csv_path.write_text("\n".join([HEADER, *_rows()]) + "\n")
    mapping = tmp_path / "m.yaml"
    mapping.write_text(MAPPING)
    out = csv_path / "bag"
    rc, _, err = _cli(capsys, ["import-csv", str(csv_path), "--mapping", str(mapping), "--output", str(out)])
    assert rc == 2 and f"cannot create bag {out}: " in _one_error_line(err, "import-csv")


def test_a_csv_with_a_byte_order_mark_imports(tmp_path, capsys):
    csv_path = tmp_path / "rec.csv"
    csv_path.write_bytes(b"\xef\xbb\xbf" + ("\n".join([HEADER, *_rows()]) + "\n").encode())
    rc, out, err = _import(tmp_path, capsys, csv_path)
    assert (rc, err) == (0, []) and "10 rows" in out


def test_a_mapped_column_named_twice_in_the_header_is_refused(tmp_path, capsys):
    csv_path = tmp_path / "rec.csv"
    csv_path.write_text("\n".join([HEADER + ",qa", *(r + ",0.2" for r in _rows())]) + "\n")
    rc, _, err = _import(tmp_path, capsys, csv_path)
    assert rc == 2
    assert f"{csv_path}: the header names the mapped columns ['qa'] more than once" in _one_error_line(
        err, "import-csv"
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("time: {column: t, unit: s}", "time: t", "time must be a mapping of keys, got 't'"),
        ("[wx, wy, wz]", "wx", "imu.angular_velocity must be a list of 3 column names, got 'wx'"),
        ("{a: qa}", "[qa]", "joints.position must be a mapping of name: column, got ['qa']"),
        ("{a: qa}", "{}", "joints.position must be a mapping of at least one joint name: column, got {}"),
        ("unit: s}", "unit: s, offset_s: abc}", "time.offset_s must be a finite number, got 'abc'"),
        ("time: {column: t, unit: s}\n", "", "time must be a mapping of keys, got None"),
    ],
)
def test_a_bad_mapping_names_the_key(tmp_path, capsys, old, new, message):
    csv_path = tmp_path / "rec.csv"
    csv_path.write_text("\n".join([HEADER, *_rows()]) + "\n")
    mapping = tmp_path / "m.yaml"
    assert old in MAPPING
    mapping.write_text(MAPPING.replace(old, new))
    argv = ["import-csv", str(csv_path), "--mapping", str(mapping), "--output", str(tmp_path / "out")]
    rc, _, err = _cli(capsys, argv)
    assert rc == 2
    assert f"{mapping}: {message}" in _one_error_line(err, "import-csv")


def test_a_mapping_number_written_without_a_dot_is_read(tmp_path, capsys):
    csv_path = tmp_path / "rec.csv"
    csv_path.write_text("\n".join([HEADER, *_rows()]) + "\n")
    mapping = tmp_path / "m.yaml"
    mapping.write_text(MAPPING.replace("unit: s}", "unit: s, offset_s: 1e-3}"))  # YAML 1.1: the string '1e-3'
    assert csv_import.load_mapping(mapping).time_offset_s == 1e-3


def test_a_folder_given_as_the_csv_is_one_line(tmp_path, capsys):
    rc, _, err = _import(tmp_path, capsys, tmp_path)
    assert rc == 2 and f"cannot read CSV {tmp_path}: " in _one_error_line(err, "import-csv")


def test_rows_around_a_nan_row_import(tmp_path, capsys):
    csv_path = tmp_path / "rec.csv"
    rows = _rows()
    rows[2] = rows[2].replace("9.81", "nan")
    csv_path.write_text("\n".join([HEADER, *rows]) + "\n")
    mapping = tmp_path / "m.yaml"
    mapping.write_text(MAPPING)
    argv = ["import-csv", str(csv_path), "--mapping", str(mapping), "--output", str(tmp_path / "out"), "--rows", "3:"]
    rc, out, err = _cli(capsys, argv)
    assert rc == 0 and err == [] and "7 rows" in out
    assert np.isfinite([m.msg.linear_acceleration.z for m in bags.read_messages(tmp_path / "out", ["/imu/data"])]).all()
