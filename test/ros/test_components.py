"""The node's building blocks in-process: QoS, TF publisher fallback, throttled reporting, diagnostics,
parameter declarations, and the bag player (over real DDS inside this process)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from rcl_interfaces.msg import ParameterType  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import ReliabilityPolicy  # noqa: E402

from robot_state_estimator.common.samples import Estimate, FootState  # noqa: E402
from robot_state_estimator.estimation.settings import EstimatorSettings  # noqa: E402
from robot_state_estimator.estimation.settings_loading import flatten_settings  # noqa: E402
from robot_state_estimator.io.node_params import NODE_PARAMS  # noqa: E402
from robot_state_estimator.io.sample_rules import MESSAGE_CAUSES  # noqa: E402
from robot_state_estimator.io.stream_causes import STREAM_CAUSES  # noqa: E402
from robot_state_estimator.ros import qos  # noqa: E402
from robot_state_estimator.ros.diagnostics import (  # noqa: E402
    ERROR,
    OK,
    REJECT_KEYS,
    WARN,
    DiagnosticsBuilder,
    DiagnosticsState,
    covariances_ok,
)
from robot_state_estimator.ros.message_types import TYPES  # noqa: E402
from robot_state_estimator.ros.parameters import (  # noqa: E402
    DYNAMIC_SETTINGS,
    declare_node_parameters,
    declare_settings_parameters,
    settings_descriptions,
)
from robot_state_estimator.ros.reporting import ThrottledReporter  # noqa: E402
from robot_state_estimator.ros.tf_publisher import (  # noqa: E402
    TfPublisher,
    TfUnavailableError,
    make_transform_broadcaster,
)

from .conftest import spin_until  # noqa: E402

pytestmark = pytest.mark.ros


@pytest.fixture
def node(ros_context):
    n = rclpy.create_node("components_test", context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(n)
    n.executor_for_test = executor
    yield n
    executor.shutdown()
    n.destroy_node()


def _estimate(stamp_ns: int = 5_000_000_000, feet: tuple[FootState, ...] = ()) -> Estimate:
    return Estimate(
        stamp_ns=stamp_ns,
        p_world_base=np.array([1.0, 2.0, 0.3]),
        quat_world_base_xyzw=np.array([0.0, 0.0, 0.0, 1.0]),
        v_base_in_base=np.array([0.5, 0.0, 0.0]),
        omega_base_in_base=np.zeros(3),
        pose_covariance=np.eye(6) * 1e-4,
        twist_covariance=np.eye(6) * 1e-3,
        accel_bias=np.zeros(3),
        gyro_bias=np.zeros(3),
        feet=feet,
    )


def test_sensor_qos_is_best_effort_with_depth_and_outputs_reliable() -> None:
    sensor = qos.sensor_qos(7)
    assert sensor.reliability == ReliabilityPolicy.BEST_EFFORT
    assert sensor.depth == 7
    assert qos.output_qos().reliability == ReliabilityPolicy.RELIABLE
    assert qos.description_qos().durability == qos.DurabilityPolicy.TRANSIENT_LOCAL
    assert qos.tf_qos().depth == 100


def test_tf_publisher_fallback_publishes_tfmessage_on_tf(node) -> None:
    from tf2_msgs.msg import TFMessage

    from robot_state_estimator.io import messages

    broadcaster = make_transform_broadcaster(node, prefer_tf2_ros=False)
    assert isinstance(broadcaster, TfPublisher)
    received: list = []
    node.create_subscription(TFMessage, "/tf", received.append, qos.tf_qos())
    t = messages.transform_stamped_msg(TYPES, 1_500_000_007, "odom", "base", (1.0, 2.0, 3.0), (0, 0, 0, 1))

    def publish_and_check() -> bool:
        broadcaster.sendTransform([t])
        node.executor_for_test.spin_once(timeout_sec=0.05)
        return bool(received)

    assert spin_until(node.executor_for_test, publish_and_check, timeout_s=10)
    tf = received[0].transforms[0]
    assert (tf.header.frame_id, tf.child_frame_id) == ("odom", "base")
    assert (tf.header.stamp.sec, tf.header.stamp.nanosec) == (1, 500_000_007)
    assert tf.transform.translation.z == 3.0


def test_tf_publisher_without_tf2_msgs_raises_a_clear_error(node, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tf2_msgs.msg", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "tf2_ros", None)
    with pytest.raises(TfUnavailableError, match="publish_tf:=false"):
        make_transform_broadcaster(node)


def test_throttled_reporter_logs_once_per_second_per_cause_and_counts_all(capfd) -> None:
    reporter = ThrottledReporter("throttle_test", period_s=60.0)
    for _ in range(5):
        reporter.warn("imu_not_finite", "IMU sample skipped: NaN")
        reporter.warn("joint_bad_lengths", "joint sample skipped: 12 names but 11 positions")
    err = capfd.readouterr().err
    assert err.count("[imu_not_finite]") == 1
    assert err.count("[joint_bad_lengths]") == 1
    assert reporter.counts == Counter({"imu_not_finite": 5, "joint_bad_lengths": 5})


def test_throttled_reporter_honours_the_logger_level(capfd) -> None:
    """Lines go to rcutils' logging directly (no stack inspection), with the logger's level (``--log-level``)."""
    rclpy.logging.set_logger_level("throttle_level_test", rclpy.logging.LoggingSeverity.ERROR)
    reporter = ThrottledReporter("throttle_level_test", period_s=0.0)
    reporter.warn("imu_frame_id", "suppressed by the level")
    reporter.error("core_error", "printed")
    reporter.info("ignored_joints", "suppressed by the level")
    err = capfd.readouterr().err
    assert "[imu_frame_id]" not in err and "[ignored_joints]" not in err
    assert "[core_error] printed" in err and "throttle_level_test" in err
    assert reporter.counts == Counter({"imu_frame_id": 1, "core_error": 1})


def test_diagnostics_have_stable_keys_and_levels() -> None:
    foot = FootState("FL_foot", True, np.array([0.0, 0.0, 40.0]), np.zeros(6), True, 1.2)
    builder = DiagnosticsBuilder(TYPES, "/robot_state_estimator")
    state = DiagnosticsState()
    stamp = TYPES.Time(sec=3, nanosec=0)

    array = builder.build(state, Counter(), stamp)
    inputs, filt, contacts = array.status
    assert inputs.level == ERROR and "description" in inputs.message
    keys = [kv.key for kv in inputs.values]
    assert all(f"rejected.{k}" in keys for k in REJECT_KEYS)
    # every cause the message rules and the stream count under is listed, once
    assert set(MESSAGE_CAUSES) | set(STREAM_CAUSES) <= set(REJECT_KEYS)
    assert len(set(REJECT_KEYS)) == len(REJECT_KEYS)

    state.has_description = True
    # the last estimate is an IMU-only one (no feet); the contacts come from the last one with feet
    state.last_feet_estimate = _estimate(feet=(foot,))
    state.last_estimate = _estimate()
    assert state.last_estimate.feet == ()
    for _ in range(10):
        state.imu.tick()
    array = builder.build(state, Counter({"imu_not_finite": 2, "some_core_key": 1}), stamp)
    inputs, filt, contacts = array.status
    assert inputs.level == WARN
    values = {kv.key: kv.value for kv in inputs.values}
    assert values["rejected.imu_not_finite"] == "2"
    assert values["rejected.some_core_key"] == "1"
    assert values["rejected_total"] == "3"
    assert filt.level == OK
    fvalues = {kv.key: kv.value for kv in filt.values}
    assert float(fvalues["position_std_m"]) == pytest.approx(0.01)
    cvalues = {kv.key: kv.value for kv in contacts.values}
    assert cvalues["FL_foot.in_contact"] == "true"
    assert cvalues["feet_in_contact"] == "1"
    assert cvalues["FL_foot.slip_episodes"] == "0" and cvalues["feet_slipping"] == ""
    assert contacts.level == OK
    state.slip_episodes, state.feet_slipping = {"FL_foot": 2}, ("FL_foot",)  # as the node copies them from the core
    contacts = builder.build(state, Counter(), stamp).status[2]
    cvalues = {kv.key: kv.value for kv in contacts.values}
    assert contacts.level == WARN and "FL_foot" in contacts.message
    assert cvalues["FL_foot.slip_episodes"] == "2" and cvalues["feet_slipping"] == "FL_foot"
    assert [s.name for s in array.status] == [
        "/robot_state_estimator: inputs",
        "/robot_state_estimator: filter",
        "/robot_state_estimator: contacts",
    ]


def test_diagnostics_count_refused_updates_and_stretches_without_contact() -> None:
    """``DiagnosticsState.note_feet`` (the node's bookkeeping of every estimate with feet, from its stance summary):
    a stance foot whose update was not accepted counts in ``<foot>.updates_rejected``, a foot not in contact never
    does; ``no_contact_s`` runs from the first estimate of a stretch without any foot in contact."""

    def feet(*states: tuple[bool, bool]) -> tuple[FootState, ...]:  # (in_contact, update_accepted) per foot
        names = ("FL_foot", "FR_foot", "RL_foot")
        return tuple(FootState(n, c, np.zeros(3), np.zeros(6), a) for n, (c, a) in zip(names, states, strict=True))

    state = DiagnosticsState()
    state.has_description = True
    sequence = [
        (1_000_000_000, feet((True, True), (True, False), (False, False))),  # FR refused; RL not in contact
        (1_010_000_000, feet((True, False), (True, False), (False, False))),  # FL and FR refused
        (1_020_000_000, feet((False, False), (False, False), (False, False))),  # no contact from 1.02 s
        (1_520_000_000, feet((False, False), (False, False), (False, False))),
    ]
    for stamp, f in sequence:
        state.note_feet(_estimate(stamp, f))
    assert state.no_contact_since_ns == 1_020_000_000
    contacts = DiagnosticsBuilder(TYPES, "/n").build(state, Counter(), TYPES.Time(sec=2, nanosec=0)).status[2]
    values = {kv.key: kv.value for kv in contacts.values}
    assert values["FL_foot.updates_rejected"] == "1" and values["FR_foot.updates_rejected"] == "2"
    assert values["RL_foot.updates_rejected"] == "0"
    assert values["feet_in_contact"] == "0" and float(values["no_contact_s"]) == pytest.approx(0.5)
    state.note_feet(_estimate(1_530_000_000, feet((True, True), (False, False), (False, False))))
    assert state.no_contact_since_ns is None
    assert dict(state.foot_rejected_updates) == {"FL_foot": 1, "FR_foot": 2}


def test_diagnostics_warn_when_no_joint_sample_is_applied() -> None:
    """Estimates keep coming from the IMU while every joint sample is refused (or none arrives): after
    ``NO_LEG_UPDATE_WARN_S`` of estimate time without an estimate with feet the filter and contacts statuses WARN
    with the age (``last_leg_update_age_s``); without any joint sample applied since the start, the age runs from
    the first report that saw estimates (``read_core``); back to OK once joints are applied."""
    foot = FootState("FL_foot", True, np.array([0.0, 0.0, 40.0]), np.zeros(6), True, 1.2)
    builder = DiagnosticsBuilder(TYPES, "/n")
    stamp = TYPES.Time(sec=3, nanosec=0)
    state = DiagnosticsState()
    state.has_description = True

    def statuses() -> tuple:
        state.read_core(None, None)
        _, filt, contacts = builder.build(state, Counter(), stamp).status
        return filt, contacts, float({kv.key: kv.value for kv in filt.values}["last_leg_update_age_s"])

    state.last_feet_estimate = _estimate(1_000_000_000, feet=(foot,))
    state.last_estimate = _estimate(1_400_000_000)  # 0.4 s of IMU-only estimates: still fine
    filt, contacts, age = statuses()
    assert (filt.level, contacts.level) == (OK, OK) and age == pytest.approx(0.4)
    state.last_estimate = _estimate(1_600_000_000)  # 0.6 s
    filt, contacts, age = statuses()
    assert filt.level == WARN and "no joint sample applied for 0.6 s" in filt.message
    assert contacts.level == WARN and "contacts from 0.6 s ago" in contacts.message
    state.note_feet(_estimate(1_610_000_000, feet=(foot,)))  # joints applied again
    state.last_estimate = _estimate(1_611_000_000)
    filt, contacts, age = statuses()
    assert (filt.level, contacts.level) == (OK, OK) and age == pytest.approx(0.001)

    # no joint sample ever applied (no joint_states): from the first report with an estimate
    state = DiagnosticsState()
    state.has_description = True
    state.last_estimate = _estimate(2_000_000_000)
    filt, _, age = statuses()
    assert filt.level == OK and age == 0.0
    state.last_estimate = _estimate(2_700_000_000)
    filt, _, age = statuses()
    assert filt.level == WARN and age == pytest.approx(0.7)


def test_raw_publish_sends_the_bytes_and_refuses_after_the_destroy(node) -> None:
    """``rclpy_compat.raw_publish``: the publisher's CDR bytes through its handle, received as sent; once the
    publisher is destroyed a publish raises rcl's error (which the node's feed catches), not a crash."""
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String

    from robot_state_estimator.ros.rclpy_compat import RCLError, raw_publish

    got: list[bytes] = []
    node.create_subscription(String, "raw_publish_test", got.append, 10, raw=True)
    pub = node.create_publisher(String, "raw_publish_test", 10)
    publish = raw_publish(pub)
    data = serialize_message(String(data="odometry"))
    assert spin_until(node.executor_for_test, lambda: pub.get_subscription_count() == 1)
    assert spin_until(node.executor_for_test, lambda: publish(data) or bool(got), timeout_s=5.0)
    assert got[0] == data
    node.destroy_publisher(pub)
    with pytest.raises(RCLError, match="publisher"):
        publish(data)


def test_covariances_ok_rejects_nan_and_indefinite() -> None:
    assert covariances_ok(_estimate())
    bad = _estimate()
    object.__setattr__(bad, "pose_covariance", -np.eye(6))
    assert not covariances_ok(bad)
    object.__setattr__(bad, "pose_covariance", np.full((6, 6), np.nan))
    assert not covariances_ok(bad)


def test_parameters_are_declared_with_descriptors(node) -> None:
    values = declare_node_parameters(node)
    assert values["odom_frame"] == "odom" and values["publish_tf"] is True
    settings_values = declare_settings_parameters(node, EstimatorSettings())
    assert set(settings_values) == set(flatten_settings(EstimatorSettings()))
    docs = settings_descriptions()
    for name in settings_values:
        assert docs.get(name), f"setting {name} has no description"
    descriptors = node.describe_parameters(list(NODE_PARAMS) + sorted(settings_values))
    by_name = {d.name: d for d in descriptors}
    # the node's descriptors are the table's rows (io/node_params.py): type, description with its unit, read-only,
    # range; the declared values are the defaults
    ros_types = {
        "bool": ParameterType.PARAMETER_BOOL,
        "integer": ParameterType.PARAMETER_INTEGER,
        "double": ParameterType.PARAMETER_DOUBLE,
        "string": ParameterType.PARAMETER_STRING,
        "string_array": ParameterType.PARAMETER_STRING_ARRAY,
    }
    for name, param in NODE_PARAMS.items():
        d = by_name[name]
        assert d.type == ros_types[param.type], name
        assert d.read_only == param.read_only, name
        assert d.description == (f"{param.unit}, {param.text}" if param.unit else param.text), name
        ranges = [(r.from_value, r.to_value) for r in [*d.integer_range, *d.floating_point_range]]
        assert ranges == ([param.range] if param.range else []), name
        default = list(param.default) if isinstance(param.default, tuple) else param.default
        assert values[name] == default, name
    for name in ("odom_frame", "base_frame", "tf_child_frame", "robot", "qos_depth", "ekf.max_dt_s"):
        assert by_name[name].read_only, name
    for name in DYNAMIC_SETTINGS:
        assert not by_name[name].read_only, name
        assert by_name[name].description
    assert by_name["qos_depth"].integer_range[0].from_value == 1
    assert by_name["ekf.accel_noise_density"].floating_point_range
    result = node.set_parameters([rclpy.parameter.Parameter("odom_frame", value="world")])[0]
    assert not result.successful


def test_bag_player_publishes_serialized_messages_and_clock(node, tmp_path: Path) -> None:
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu

    from robot_state_estimator.common.samples import ImuSample
    from robot_state_estimator.io import messages
    from robot_state_estimator.io.bags import BagWriter, default_types
    from robot_state_estimator.ros.bag_player import BagPlayer

    types = default_types()
    bag = tmp_path / "bag"
    stamps = [1_000_000_000 + i * 2_000_000 for i in range(50)]
    with BagWriter(bag) as writer:
        for s in stamps:
            sample = ImuSample(s, np.zeros(3), np.array([0.0, 0.0, 9.81]), frame_id="imu_link")
            writer.write("/imu/data", messages.imu_msg(types, sample), s)
    imus: list = []
    clocks: list = []
    node.create_subscription(Imu, "/imu/data", imus.append, qos.output_qos(1000))
    node.create_subscription(Clock, "/clock", clocks.append, qos.output_qos(1000))
    player = BagPlayer(node, bag, rate=0.0, clock=True)
    player.wait_for_subscribers(["/imu/data", "/clock"], timeout_s=10)
    assert spin_until(node.executor_for_test, lambda: node.count_publishers("/imu/data") >= 1)
    player.play()
    assert spin_until(node.executor_for_test, lambda: len(imus) == 50 and len(clocks) == 50)
    assert [messages.imu_sample_from_msg(m).stamp_ns for m in imus] == stamps
    assert clocks[-1].clock.sec == 1 and clocks[-1].clock.nanosec == 98_000_000
    assert imus[0].header.frame_id == "imu_link"


def test_bag_player_waits_on_a_recorded_clock_topic_without_its_own_clock(node, tmp_path: Path) -> None:
    """A bag that recorded ``/clock``, played without ``clock=True``: ``/clock`` is one of the bag's topics, and
    waiting for its subscriber uses the bag's publisher (before, the player's absent clock publisher: None)."""
    from rosgraph_msgs.msg import Clock

    from robot_state_estimator.io import messages
    from robot_state_estimator.io.bags import BagWriter, default_types
    from robot_state_estimator.ros.bag_player import BagPlayer, BagPlayerError

    types = default_types()
    bag = tmp_path / "bag"
    stamps = [2_000_000_000 + i * 10_000_000 for i in range(5)]
    with BagWriter(bag) as writer:
        for s in stamps:
            writer.write("/clock", messages.clock_msg(types, s), s)
    player = BagPlayer(node, bag, rate=0.0, clock=False)
    with pytest.raises(BagPlayerError, match=r"no subscriber on \['/clock'\]"):
        player.wait_for_subscribers(["/clock"], timeout_s=0.05)
    clocks: list = []
    node.create_subscription(Clock, "/clock", clocks.append, qos.output_qos(1000))
    player.wait_for_subscribers(["/clock"], timeout_s=10)
    player.play()
    assert spin_until(node.executor_for_test, lambda: len(clocks) == 5)
    # 2.04 s: the last recorded stamp, published once (no second, player-made clock)
    assert (clocks[-1].clock.sec, clocks[-1].clock.nanosec) == (2, 40_000_000)


def test_bag_player_clock_replaces_a_recorded_clock_topic(node, tmp_path: Path) -> None:
    """``clock=True`` on a bag that recorded ``/clock``: one clock stream (the player's, from the log times of the
    messages it plays), not the recorded one interleaved with it."""
    from rosgraph_msgs.msg import Clock

    from robot_state_estimator.common.samples import ImuSample
    from robot_state_estimator.io import messages
    from robot_state_estimator.io.bags import BagWriter, default_types
    from robot_state_estimator.ros.bag_player import BagPlayer

    types = default_types()
    bag = tmp_path / "bag"
    stamps = [3_000_000_000 + i * 10_000_000 for i in range(5)]
    with BagWriter(bag) as writer:
        for s in stamps:
            writer.write("/clock", messages.clock_msg(types, 7_000_000_000 + s), s)  # recorded: 7 s ahead
            sample = ImuSample(s, np.zeros(3), np.array([0.0, 0.0, 9.81]), frame_id="imu_link")
            writer.write("/imu/data", messages.imu_msg(types, sample), s)
    clocks: list = []
    node.create_subscription(Clock, "/clock", clocks.append, qos.output_qos(1000))
    player = BagPlayer(node, bag, rate=0.0, clock=True)
    assert "/clock" not in player.topics
    player.wait_for_subscribers(["/clock"], timeout_s=10)
    player.play()
    assert spin_until(node.executor_for_test, lambda: len(clocks) >= 5)
    spin_until(node.executor_for_test, lambda: False, timeout_s=0.2)  # nothing else arrives
    assert [c.clock.sec * 10**9 + c.clock.nanosec for c in clocks] == stamps
