"""Replay reads every bag format it promises: rosbag2 mcap and sqlite3, and ROS 1 bags, with the same result."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from rosbags.rosbag1 import Writer as Ros1Writer
from rosbags.typesys import Stores, get_typestore

from robot_state_estimator.common.paths import config_dir
from robot_state_estimator.io import bags
from robot_state_estimator.tools import replay

TOPICS = ["/imu/data", "/joint_states"]
SPAN_NS = 800_000_000  # the first 0.8 s of the generated run: initialisation and the first steps


def _ros1_copy(msg, ts):
    """A ROS 1 (Noetic) message with the fields of a ROS 2 one (Header gets seq = 0)."""
    cls = ts.types[msg.__msgtype__]
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name == "__msgtype__":
            continue
        if f.name == "seq":
            kwargs["seq"] = 0
            continue
        value = getattr(msg, f.name)
        kwargs[f.name] = _ros1_copy(value, ts) if dataclasses.is_dataclass(value) else value
    return cls(**kwargs)


@pytest.fixture(scope="module")
def bags_of_every_format(sim_run, tmp_path_factory):
    run_dir, _ = sim_run
    out = tmp_path_factory.mktemp("formats")
    msgs = [m for m in bags.read_messages_in_stamp_order(run_dir / "bag", TOPICS)]
    t0 = msgs[0].stamp_ns
    msgs = [m for m in msgs if m.stamp_ns - t0 <= SPAN_NS]
    paths = {}
    for storage in ("mcap", "sqlite3"):
        paths[storage] = out / storage
        with bags.BagWriter(paths[storage], storage=storage) as bag:
            for m in msgs:
                bag.write(m.topic, m.msg, m.log_time_ns)
    ts1 = get_typestore(Stores.ROS1_NOETIC)
    paths["ros1"] = out / "run.bag"
    with Ros1Writer(paths["ros1"]) as w:
        conns = {t: w.add_connection(t, m.msgtype, typestore=ts1) for t, m in {m.topic: m for m in msgs}.items()}
        for m in msgs:
            w.write(conns[m.topic], m.log_time_ns, ts1.serialize_ros1(_ros1_copy(m.msg, ts1), m.msgtype))
    return run_dir, paths


def test_mcap_sqlite3_and_ros1_bags_give_the_same_estimates(bags_of_every_format):
    run_dir, paths = bags_of_every_format
    settings, params = replay.split_config(config_dir() / "go1.yaml")
    logs = {}
    for name, path in paths.items():
        r = replay.replay(
            path,
            description=str(run_dir / "robot_description.urdf"),
            settings=settings,
            options=replay.ReplayOptions(node_params={**replay.NODE_DEFAULTS, **params}, progress=False),
        )
        assert r.skipped == {}, name
        logs[name] = r.log
    ref = logs["mcap"]
    assert len(ref) > 100
    for name in ("sqlite3", "ros1"):
        assert logs[name].stamp_ns == ref.stamp_ns, name
        np.testing.assert_array_equal(np.array(logs[name].p), np.array(ref.p), err_msg=name)
        np.testing.assert_array_equal(np.array(logs[name].twist_cov), np.array(ref.twist_cov), err_msg=name)
