"""``robot-state-estimator replay``: run the estimator over a recorded bag as fast as possible.

Reads a rosbag2 directory or file (sqlite3 or mcap) or a ROS 1 bag with ``rosbags``, feeds the IMU,
joint-state (and optionally foot-sensor) messages in ``header.stamp`` order through the same core and the same
input rules as the node (``robot_state_estimator.ros.node``), and writes:

- an mcap bag with ``odometry`` (nav_msgs/Odometry), ``/tf`` (odom -> base), ``contact_wrench/<foot>``
  (geometry_msgs/WrenchStamped in the foot frame) and ``contact_states`` (diagnostic_msgs/DiagnosticArray),
  each message at its estimate's stamp (topic names as the node publishes them; replayable in Foxglove or
  with ``ros2 bag play`` into RViz);
- a TUM trajectory file (evo-compatible);
- with ground truth: a metrics table on stdout, a JSON file and PNG plots.

Input and output rules are the node's, from the one implementation both use (``io.stream.EstimatorStream``,
see its module docstring; ``test/tools/test_replay_vs_node.py`` checks that replay and the node agree): an IMU
``frame_id`` other than the description's IMU frame (or ``imu_frame_id``) is skipped; zero stamps are skipped;
an IMU stamp more than ``max_time_gap_s`` after the previous one resets the filter (time going backwards is
reset by the core); joint messages must name exactly the model's joints; with ``contact.source: torque`` a
joint message without efforts is skipped; a non-finite estimate resets; odometry and TF once per stamp in
increasing order (and decimated by ``odometry_rate_hz``), wrenches and contact states per joint update
(decimated by ``contacts_rate_hz``).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gc
import json
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from robot_state_estimator.common.names import close_names, did_you_mean
from robot_state_estimator.common.output_layout import (
    ACCEL_BIAS,
    GYRO_BIAS,
    OMEGA_BASE_IN_BASE,
    OUTPUT_SIZE,
    P_WORLD_BASE,
    POSE_COVARIANCE,
    QUAT_WORLD_BASE_XYZW,
    TWIST_COVARIANCE,
    V_BASE_IN_BASE,
)
from robot_state_estimator.common.samples import Estimate
from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.estimation.jit import kernels_need_compiling
from robot_state_estimator.tools.ground_truth import (
    GroundTruth,
    is_bag,
    load_ground_truth,
    output_path_problem,
    write_tum,
)
from robot_state_estimator.tools.metrics import MetricsError, Trajectory

#: Node parameters that may share a settings file with the estimator settings (``ros/parameters.py``'s
#: ``NODE_PARAMETERS``; kept here because ``tools`` does not import ``ros``; a test checks they agree).
NODE_PARAMETER_NAMES: tuple[str, ...] = (
    "robot",
    "description_file",
    "robot_description",
    "config_file",
    "odom_frame",
    "base_frame",
    "tf_child_frame",
    "publish_tf",
    "imu_frame_id",
    "use_foot_forces",
    "use_foot_wrenches",
    "foot_wrench_topics",
    "qos_depth",
    "max_time_gap_s",
    "diagnostics_period_s",
    "odometry_rate_hz",
    "contacts_rate_hz",
)
#: Defaults of the node parameters replay uses (as in ``NODE_PARAMETERS``).
NODE_DEFAULTS: dict[str, Any] = {
    "odom_frame": "odom",
    "base_frame": "",
    "tf_child_frame": "",
    "imu_frame_id": "",
    "use_foot_forces": False,
    "use_foot_wrenches": False,
    "foot_wrench_topics": ["{foot}/wrench"],
    "max_time_gap_s": 0.5,
    "odometry_rate_hz": 0.0,
    "contacts_rate_hz": 0.0,
}


#: Node parameters replay has no use for (sources of the description and settings, TF switch, QoS,
#: diagnostics): refused in ``--set`` (naming the replay option to use instead), noted when a settings file has them.
NODE_ONLY_PARAMETERS: dict[str, str] = {
    "robot": "use --robot",
    "description_file": "use --description",
    "robot_description": "use --description",
    "config_file": "use --config",
    "publish_tf": "--output-topics chooses what the output bag gets",
    "qos_depth": "replay reads every message of the bag",
    "diagnostics_period_s": "replay publishes no diagnostics",
}


def check_node_params(params: dict[str, Any], source: str) -> None:
    """Check node-parameter values as the node's parameter descriptors do (``common.node_ranges``: the same
    numbers), plus the non-empty frames and the types.

    Args:
        params: node parameter name -> value (YAML-typed).
        source: where they come from, for the message (``--set``, a settings file).

    Raises:
        ReplayError: a number outside its range, not a number or not finite; an empty ``odom_frame``; a frame
            that is not a string; ``use_foot_forces`` that is not a boolean.
    """
    from robot_state_estimator.common.node_ranges import NODE_PARAMETER_RANGES, NON_EMPTY_PARAMETERS

    for name, value in params.items():
        rng = NODE_PARAMETER_RANGES.get(name)
        if rng is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ReplayError(f"{source}: {name} must be a number, got {value!r}")
            if not np.isfinite(value):
                raise ReplayError(f"{source}: {name} must be finite, got {value!r}")
            lo, hi = rng
            if not lo <= value <= hi:
                raise ReplayError(f"{source}: {name} = {value!r} is outside its range [{lo:g}, {hi:g}]")
        elif name in ("odom_frame", "base_frame", "tf_child_frame", "imu_frame_id"):
            if not isinstance(value, str):
                raise ReplayError(f"{source}: {name} must be a frame name (a string), got {value!r}")
            if name in NON_EMPTY_PARAMETERS and not value:
                raise ReplayError(f"{source}: {name} must not be empty")
        elif name in ("use_foot_forces", "use_foot_wrenches") and not isinstance(value, bool):
            raise ReplayError(f"{source}: {name} must be true or false, got {value!r}")
        elif name == "foot_wrench_topics" and (
            not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value)
        ):
            raise ReplayError(f"{source}: foot_wrench_topics must be a list of topic names, got {value!r}")


#: Output topic groups of replay's bag (``--output-topics``), in the order they are written for an estimate:
#: ``odometry`` (nav_msgs/Odometry), ``tf`` (``/tf``, tf2_msgs/TFMessage), ``wrenches``
#: (``contact_wrench/<foot>``, geometry_msgs/WrenchStamped), ``contacts`` (``contact_states``,
#: diagnostic_msgs/DiagnosticArray).
OUTPUT_GROUPS: tuple[str, ...] = ("odometry", "tf", "wrenches", "contacts")
#: Chunk compression of the output bag by default (``--output-compression``).
DEFAULT_OUTPUT_COMPRESSION = "zstd"


#: Core events (``estimation.pipeline``) that mean the core dropped the sample it was given (a sample the adapter
#: passed on); with the adapter's own skips they make a stream's skipped count.
CORE_SKIP_EVENTS: frozenset[str] = frozenset(
    {
        "imu_shape",
        "imu_nan",
        "imu_dt_nonpositive",
        "imu_out_of_order",
        "joint_shape",
        "joint_nan",
        "duplicate_joint",
        "unknown_joint",
        "missing_joint",
        "joint_dt_nonpositive",
        "joint_out_of_order",
        "foot_force_shape",
        "foot_force_nan",
        "unknown_foot",
        "foot_wrench_shape",
        "foot_wrench_nan",
        "foot_wrench_unknown_frame",
        "foot_wrench_out_of_order",
        "schedule_shape",
        "schedule_duplicate_feet",
        "schedule_unknown_feet",
        "schedule_missing_feet",
    }
)


#: Stream key of ``ReplayDriver.stream_counts`` -> its name in messages.
STREAM_LABELS: dict[str, str] = {
    "imu": "IMU",
    "joints": "joint-state",
    "foot_forces": "foot-force",
    "foot_wrenches": "foot-wrench",
    "schedule": "contact-schedule",
}


class ReplayError(RuntimeError):
    """The replay cannot run: missing input, description or topics; the message says which."""


@dataclass(frozen=True)
class ReplayOptions:
    """What to read and how to behave.

    Attributes:
        imu_topic, joints_topic, foot_forces_topic: input topics.
        use_foot_forces: "auto" (when the topic is in the bag), "yes" or "no".
        use_foot_wrenches: foot wrench sensors (``geometry_msgs/WrenchStamped``, one topic per foot, named by the
            node parameter ``foot_wrench_topics``; relative names are taken from the root): "auto" (when the bag
            has every foot's topic, or the node parameter ``use_foot_wrenches`` is true), "yes" or "no".
        contact_schedule_topic: the contact schedule (``sensor_msgs/JointState``), read when ``contact.source`` is
            ``schedule``.
        node_params: node parameters (``NODE_DEFAULTS`` keys) as the node would have them.
        progress: show a tqdm progress bar (None = when stderr is a terminal and the input is long).
        output_topics: the groups of ``OUTPUT_GROUPS`` the output bag gets (when one is written).
        output_compression: chunk compression of the output bag, ``"zstd"`` or ``"none"``.
        bulk_decode: decode the input types in bulk (``io.cdr``; rosbags for the rest and for what it refuses,
            noted in ``ReplayResult.bulk_refused``); False: rosbags for every message (the same messages).
    """

    imu_topic: str = "/imu/data"
    joints_topic: str = "/joint_states"
    foot_forces_topic: str = "/foot_forces"
    use_foot_forces: str = "auto"
    use_foot_wrenches: str = "auto"
    contact_schedule_topic: str = "/contact_schedule"
    node_params: dict[str, Any] = field(default_factory=lambda: dict(NODE_DEFAULTS))
    progress: bool | None = None
    output_topics: tuple[str, ...] = OUTPUT_GROUPS
    output_compression: str = DEFAULT_OUTPUT_COMPRESSION
    bulk_decode: bool = True


#: Slices of the (91,) vector of ``Estimate.output_vector`` (its layout: ``common.output_layout``).
_OUT_P, _OUT_Q, _OUT_V, _OUT_W = P_WORLD_BASE, QUAT_WORLD_BASE_XYZW, V_BASE_IN_BASE, OMEGA_BASE_IN_BASE
_OUT_POSE_COV, _OUT_TWIST_COV, _OUT_BA, _OUT_BG = POSE_COVARIANCE, TWIST_COVARIANCE, ACCEL_BIAS, GYRO_BIAS
_OUTPUT_SIZE = OUTPUT_SIZE


@dataclass
class EstimateLog:
    """Compact columns of what the node would publish, in order: odometry (pose, twist, covariances, biases) and
    contact states.

    Attributes:
        stamp_ns: (N,) int, the stamps of the published odometry.
        outputs: (N,) the ``Estimate.output_vector`` (91,) of each: position in ``odom`` (3, m), quaternion
            xyzw (4), linear and angular velocity in the base frame (3 + 3, m/s, rad/s), pose and twist
            covariance (36 + 36, row-major), accelerometer and gyroscope bias in the IMU frame (3 + 3);
            :meth:`column` gives them by name, as do the properties ``p``, ``quat_xyzw``, ``v``, ``omega``,
            ``pose_cov``, ``twist_cov``, ``accel_bias``, ``gyro_bias`` (arrays, one row per estimate).
        feet: foot names; ``contact_stamp_ns`` (M,), ``contact`` (M, F) bool, ``force_world`` (M, F, 3) N,
            ``accepted`` (M, F) bool, ``nis`` (M, F): from estimates that carry feet.
    """

    stamp_ns: list[int] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)
    feet: tuple[str, ...] = ()
    contact_stamp_ns: list[int] = field(default_factory=list)
    contact: list[Any] = field(default_factory=list)
    force_world: list[Any] = field(default_factory=list)
    accepted: list[Any] = field(default_factory=list)
    nis: list[Any] = field(default_factory=list)

    def append(self, e: Estimate, odometry: bool = True, contacts: bool = True) -> None:
        """Record one estimate: its pose and twist when its odometry is published, its feet when they are.

        Raises:
            ValueError: the estimate's output vector is not (91,).
        """
        if odometry:
            vector = e.output_vector()
            if vector.shape != (_OUTPUT_SIZE,):
                raise ValueError(f"estimate output vector has shape {vector.shape}, expected ({_OUTPUT_SIZE},)")
            self.stamp_ns.append(e.stamp_ns)
            self.outputs.append(vector)
        if contacts:
            feet = e.feet
            if not feet:
                return
            names = tuple(f.name for f in feet)
            if not self.feet:
                self.feet = names
            if names == self.feet:
                self.contact_stamp_ns.append(e.stamp_ns)
                self.contact.append([f.in_contact for f in feet])
                self.force_world.append([f.force_in_world for f in feet])
                self.accepted.append([f.update_accepted for f in feet])
                self.nis.append([f.nis for f in feet])

    def column(self, name: str) -> np.ndarray:
        """One output of every logged odometry as an array: ``p`` (N, 3), ``quat_xyzw`` (N, 4), ``v`` (N, 3),
        ``omega`` (N, 3), ``pose_cov`` (N, 6, 6), ``twist_cov`` (N, 6, 6), ``accel_bias`` (N, 3),
        ``gyro_bias`` (N, 3).

        Raises:
            KeyError: an unknown name.
        """
        sl, shape = _LOG_COLUMNS[name]
        out = self._matrix()[:, sl]
        return out.reshape((len(out), *shape)) if shape else out

    def _matrix(self) -> np.ndarray:
        return np.asarray(self.outputs, dtype=float).reshape(len(self.outputs), _OUTPUT_SIZE)

    @property
    def p(self) -> np.ndarray:
        """(N, 3) m, base position in ``odom``."""
        return self.column("p")

    @property
    def quat_xyzw(self) -> np.ndarray:
        """(N, 4) base orientation in ``odom``, x y z w."""
        return self.column("quat_xyzw")

    @property
    def v(self) -> np.ndarray:
        """(N, 3) m/s, base linear velocity in the base frame."""
        return self.column("v")

    @property
    def omega(self) -> np.ndarray:
        """(N, 3) rad/s, base angular velocity in the base frame."""
        return self.column("omega")

    @property
    def pose_cov(self) -> np.ndarray:
        """(N, 6, 6) pose covariance (odometry layout)."""
        return self.column("pose_cov")

    @property
    def twist_cov(self) -> np.ndarray:
        """(N, 6, 6) twist covariance (odometry layout)."""
        return self.column("twist_cov")

    @property
    def accel_bias(self) -> np.ndarray:
        """(N, 3) m/s^2, accelerometer bias in the IMU frame."""
        return self.column("accel_bias")

    @property
    def gyro_bias(self) -> np.ndarray:
        """(N, 3) rad/s, gyroscope bias in the IMU frame."""
        return self.column("gyro_bias")

    def __len__(self) -> int:
        return len(self.stamp_ns)

    def trajectory(self) -> Trajectory:
        """The estimates as a :class:`Trajectory` (repeated stamps: the last estimate of each stamp).

        ``extras`` holds ``accel_bias``, ``gyro_bias`` and ``omega``.

        Raises:
            ReplayError: fewer than two estimates.
        """
        if len(self) < 2:
            raise ReplayError(f"the estimator produced {len(self)} estimates; nothing to evaluate")
        t = np.asarray(self.stamp_ns, dtype=np.int64)
        # the last estimate of each stamp; after a reset to earlier stamps, only stamps beyond the last kept
        keep = np.zeros(len(t), bool)
        last = None
        for k in range(len(t) - 1, -1, -1):
            if last is None or t[k] < last:
                keep[k] = True
                last = t[k]
        t_s = (t // NS_PER_S).astype(float) + (t % NS_PER_S).astype(float) / NS_PER_S

        m = self._matrix()[keep]

        def a(sl: slice, *shape: int) -> np.ndarray:
            return np.ascontiguousarray(m[:, sl]).reshape(len(m), *shape) if shape else np.ascontiguousarray(m[:, sl])

        return Trajectory(
            t_s=t_s[keep],
            p_world_base=a(_OUT_P),
            quat_world_base_xyzw=a(_OUT_Q),
            v_base_in_base=a(_OUT_V),
            pose_covariance=a(_OUT_POSE_COV, 6, 6),
            twist_covariance=a(_OUT_TWIST_COV, 6, 6),
            extras={"accel_bias": a(_OUT_BA), "gyro_bias": a(_OUT_BG), "omega": a(_OUT_W)},
        )

    def contacts_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(t_s (M,), contact (M, F) bool)`` of the estimates that carried feet."""
        t = np.asarray(self.contact_stamp_ns, dtype=np.int64)
        t_s = (t // NS_PER_S).astype(float) + (t % NS_PER_S).astype(float) / NS_PER_S
        return t_s, np.asarray(self.contact, dtype=bool).reshape(len(t), len(self.feet))


#: ``EstimateLog.column`` name -> (slice of the output vector, shape per row or None)
_LOG_COLUMNS: dict[str, tuple[slice, tuple[int, ...] | None]] = {
    "p": (_OUT_P, None),
    "quat_xyzw": (_OUT_Q, None),
    "v": (_OUT_V, None),
    "omega": (_OUT_W, None),
    "pose_cov": (_OUT_POSE_COV, (6, 6)),
    "twist_cov": (_OUT_TWIST_COV, (6, 6)),
    "accel_bias": (_OUT_BA, None),
    "gyro_bias": (_OUT_BG, None),
}


class ReplayDriver:
    """Feeds ROS messages (rosbags or rclpy) to a ``RobotStateEstimator`` through the node's adapter rules.

    The rules themselves are ``io.stream.EstimatorStream``'s (the node uses the same class); this driver adds
    what only replay needs: the gyroscope signal for time alignment and a callback per estimate. Unexpected
    exceptions (of the message conversion or of the core) propagate (``strict`` stream): offline, a failure
    should stop the run rather than be counted.

    Args:
        estimator: the core ``RobotStateEstimator``.
        description: its ``RobotDescription`` (joint names, IMU frame).
        settings: its ``EstimatorSettings``.
        node_params: ``NODE_DEFAULTS``-like dict (``imu_frame_id``, ``max_time_gap_s``, ``odometry_rate_hz``,
            ``contacts_rate_hz``).
        on_estimate: called with every estimate the core returns, whether the node publishes its odometry and
            TF, and whether it publishes its wrenches and contact states.
    """

    def __init__(
        self,
        estimator: Any,
        description: Any,
        settings: Any,
        node_params: dict[str, Any],
        on_estimate: Callable[[Estimate, bool, bool], None],
    ) -> None:
        from robot_state_estimator.io.stream import AdapterSettings, EstimatorStream

        self.est = estimator
        self.settings = settings
        self.params = {**NODE_DEFAULTS, **node_params}
        self.stream = EstimatorStream(
            estimator, description, settings, AdapterSettings.from_params(self.params), strict=True
        )
        self.on_estimate = on_estimate
        #: gyroscope z in the base frame per accepted IMU sample (time alignment with ground truth)
        self.R_base_imu = np.asarray(description.imu.R_base_imu, dtype=float)
        self.gyro_stamp_ns: list[int] = []
        self.gyro_z_base: list[float] = []
        #: cause or event key -> (level, message) of its first occurrence
        self.first_notes: dict[str, tuple[str, str]] = {}
        #: stream ("imu", "joints", "foot_forces") -> [messages received, messages skipped]
        self.stream_counts: dict[str, list[int]] = {k: [0, 0] for k in STREAM_LABELS}
        #: stream -> cause or event key -> [messages of the stream skipped with it, its first message there]
        self.skip_causes: dict[str, dict[str, list[Any]]] = {k: {} for k in STREAM_LABELS}

    def _count(self, stream: str, out: Any) -> None:
        """Count one input of ``stream``; note the first message of each cause; skipped: the adapter refused
        it, or the core dropped it (``CORE_SKIP_EVENTS``)."""
        counts = self.stream_counts[stream]
        counts[0] += 1
        notes = out.notes
        if not notes:
            if out.sample is None:
                counts[1] += 1
            return
        skipped = out.sample is None
        first = self.first_notes
        for note in notes:
            if note.key not in first:
                first[note.key] = (note.level, note.message)
            if note.key in CORE_SKIP_EVENTS:
                skipped = True
        if skipped:
            counts[1] += 1
            causes = self.skip_causes[stream]
            for note in notes:
                causes.setdefault(note.key, [0, note.message])[0] += 1

    def main_skip_cause(self, stream: str) -> tuple[str, str]:
        """(key, first message on ``stream``) of the cause noted with most skipped messages of ``stream``, or
        ("?", "?") when none was noted."""
        causes = self.skip_causes[stream]
        if not causes:
            return "?", "?"
        key = max(causes, key=lambda k: causes[k][0])
        return key, str(causes[key][1])

    @property
    def skipped(self) -> Counter[str]:
        """Cause -> skipped inputs and resets by the adapter rules (``stamp_gap``, ``estimate_not_finite``)."""
        return self.stream.rejected

    @property
    def events(self) -> Counter[str]:
        """Core event key -> count."""
        return self.stream.events

    @property
    def resets(self) -> int:
        """Filter resets requested by the adapter rules."""
        return self.stream.resets

    @property
    def n_estimates(self) -> int:
        """Finite estimates the core returned."""
        return self.stream.n_estimates

    def _emit(self, out: Any) -> None:
        if out.estimate is not None:
            self.on_estimate(out.estimate, out.odometry, out.contacts)

    def imu(self, msg: Any) -> None:
        """An ``sensor_msgs/Imu`` message."""
        out = self.stream.on_imu_msg(msg)
        sample = out.sample
        if sample is not None:
            self.gyro_stamp_ns.append(sample.stamp_ns)
            self.gyro_z_base.append(float(self.R_base_imu[2] @ sample.angular_velocity))
        self._count("imu", out)
        self._emit(out)

    def joints(self, msg: Any) -> None:
        """A ``sensor_msgs/JointState`` message."""
        out = self.stream.on_joints_msg(msg)
        self._count("joints", out)
        self._emit(out)

    def foot_forces(self, msg: Any) -> None:
        """Foot sensors as ``sensor_msgs/JointState`` (name = feet, effort = values)."""
        out = self.stream.on_foot_forces_msg(msg)
        self._count("foot_forces", out)
        self._emit(out)

    def foot_wrench(self, msg: Any, foot: str) -> None:
        """A ``geometry_msgs/WrenchStamped`` of foot ``foot``."""
        out = self.stream.on_foot_wrench_msg(msg, foot)
        self._count("foot_wrenches", out)
        self._emit(out)

    def contact_schedule(self, msg: Any) -> None:
        """A contact schedule (``sensor_msgs/JointState``: name = feet, position = 1 stance / 0 swing)."""
        out = self.stream.on_contact_schedule_msg(msg)
        self._count("schedule", out)
        self._emit(out)


class OutputBag:
    """Writes the node's outputs for each estimate into an mcap bag (same topics and layouts as the node).

    Each output message is built once, by the builders of ``io.messages`` for the first estimate that needs it,
    and then refilled in place with the numbers of each later estimate (rosbags serializes it at once, in
    :meth:`write`); the contact states are built again when the feet change.

    Args:
        path: the bag directory to create (must not exist).
        odom_frame: odometry and TF parent frame.
        base_frame: odometry child frame.
        tf_child_frame: TF child frame ("" = ``base_frame``).
        groups: which of ``OUTPUT_GROUPS`` to write (default: all).
        compression: chunk compression, ``"zstd"`` or ``"none"`` (``io.bags.BagWriter``).

    Raises:
        ReplayError: an unknown group; ``io.bags.BagError``: the path exists or a bad compression.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        odom_frame: str,
        base_frame: str,
        tf_child_frame: str,
        groups: tuple[str, ...] | list[str] = OUTPUT_GROUPS,
        compression: str = DEFAULT_OUTPUT_COMPRESSION,
    ) -> None:
        from robot_state_estimator.io import bags, messages

        unknown = sorted(set(groups) - set(OUTPUT_GROUPS))
        if unknown:
            raise ReplayError(f"unknown output topics {unknown}; choose from {list(OUTPUT_GROUPS)}")
        self._m = messages
        self.types = bags.default_types()
        self.groups = tuple(g for g in OUTPUT_GROUPS if g in groups)
        self._odometry = "odometry" in self.groups
        self._tf = "tf" in self.groups and self.types.TFMessage is not None
        self._wrenches = "wrenches" in self.groups
        self._contacts = "contacts" in self.groups
        self.bag = bags.BagWriter(path, compression=compression)
        self.bag.open()
        self.odom_frame = odom_frame
        self.base_frame = base_frame
        self.tf_child = tf_child_frame or base_frame
        self._odom_msg: Any = None
        self._tf_msg: Any = None
        self._wrench_msgs: dict[str, tuple[str, Any]] = {}
        self._contacts_msg: Any = None
        self._contacts_names: tuple[str, ...] = ()

    def write(self, e: Estimate, odometry: bool = True, contacts: bool = True, forces: bool = True) -> None:
        """Write the messages the node publishes for ``e`` (odometry and /tf when ``odometry``; wrenches and
        contact states when ``contacts`` and it has feet, the wrenches only with ``forces``: the foot forces
        were estimated, ``EstimatorStream.forces_estimated``), those of the chosen groups, at ``e.stamp_ns``."""
        s = e.stamp_ns
        write = self.bag.write
        if odometry and (self._odometry or self._tf):
            if self._odometry:
                write("odometry", self._fill_odometry(e), s)
            if self._tf:
                write("/tf", self._fill_tf(e), s)
        if contacts and (self._wrenches or self._contacts):
            feet = e.feet
            if not feet:
                return
            if self._wrenches and forces:
                for foot in feet:
                    topic, msg = self._fill_wrench(s, foot)
                    write(topic, msg, s)
            if self._contacts:
                write("contact_states", self._fill_contacts(s, feet), s)

    # --------------------------------------------------------------------- messages refilled in place
    # Each refill sets every field the builder (io.messages) fills from the estimate, to the same values: floats
    # from the same arrays, the stamp split by divmod as in ns_to_sec_nanosec (test_replay checks each output
    # message against the builder's).

    def _fill_odometry(self, e: Estimate) -> Any:
        msg = self._odom_msg
        if msg is None:
            msg = self._odom_msg = self._m.odometry_msg(
                self.types, e, odom_frame=self.odom_frame, base_frame=self.base_frame
            )
            return msg
        v = e.output_vector()
        px, py, pz, qx, qy, qz, qw, vx, vy, vz, wx, wy, wz = v[:13].tolist()
        stamp = msg.header.stamp
        stamp.sec, stamp.nanosec = divmod(int(e.stamp_ns), NS_PER_S)
        pose, twist = msg.pose, msg.twist
        position, orientation = pose.pose.position, pose.pose.orientation
        position.x, position.y, position.z = px, py, pz
        orientation.x, orientation.y, orientation.z, orientation.w = qx, qy, qz, qw
        linear, angular = twist.twist.linear, twist.twist.angular
        linear.x, linear.y, linear.z = vx, vy, vz
        angular.x, angular.y, angular.z = wx, wy, wz
        pose.covariance = np.ascontiguousarray(v[_OUT_POSE_COV], dtype=np.float64)
        twist.covariance = np.ascontiguousarray(v[_OUT_TWIST_COV], dtype=np.float64)
        return msg

    def _fill_tf(self, e: Estimate) -> Any:
        msg = self._tf_msg
        if msg is None:
            m, t = self._m, self.types
            tf = m.odom_transform_msg(t, e, odom_frame=self.odom_frame, base_frame=self.tf_child)
            msg = self._tf_msg = m.tf_message(t, [tf])
            return msg
        px, py, pz, qx, qy, qz, qw = e.output_vector()[:7].tolist()
        tf = msg.transforms[0]
        stamp = tf.header.stamp
        stamp.sec, stamp.nanosec = divmod(int(e.stamp_ns), NS_PER_S)
        tr, ro = tf.transform.translation, tf.transform.rotation
        tr.x, tr.y, tr.z = px, py, pz
        ro.x, ro.y, ro.z, ro.w = qx, qy, qz, qw
        return msg

    def _fill_wrench(self, stamp_ns: int, foot: Any) -> tuple[str, Any]:
        entry = self._wrench_msgs.get(foot.name)
        if entry is None:
            entry = self._wrench_msgs[foot.name] = (
                f"contact_wrench/{foot.name}",
                self._m.foot_wrench_msg(self.types, stamp_ns, foot),
            )
            return entry
        msg = entry[1]
        fx, fy, fz, tx, ty, tz = np.asarray(foot.wrench_in_foot, dtype=np.float64)[:6].tolist()
        stamp = msg.header.stamp
        stamp.sec, stamp.nanosec = divmod(int(stamp_ns), NS_PER_S)
        force, torque = msg.wrench.force, msg.wrench.torque
        force.x, force.y, force.z = fx, fy, fz
        torque.x, torque.y, torque.z = tx, ty, tz
        return entry

    def _fill_contacts(self, stamp_ns: int, feet: tuple[Any, ...]) -> Any:
        names = tuple(f.name for f in feet)
        if self._contacts_msg is None or names != self._contacts_names:
            self._contacts_msg = self._m.contact_states_msg(self.types, stamp_ns, feet)
            self._contacts_names = names
            return self._contacts_msg
        msg = self._contacts_msg
        stamp = msg.header.stamp
        stamp.sec, stamp.nanosec = divmod(int(stamp_ns), NS_PER_S)
        for foot, status in zip(feet, msg.status, strict=True):
            contact, normal_force, accepted = status.values
            in_contact = foot.in_contact
            status.message = "contact" if in_contact else "no_contact"
            contact.value = "1" if in_contact else "0"
            normal_force.value = f"{float(foot.force_in_world[2]):.3f}"
            accepted.value = "1" if foot.update_accepted else "0"
        return msg

    def close(self) -> None:
        """Finish the bag."""
        self.bag.close()


@dataclass
class ReplayResult:
    """What a replay produced.

    Attributes:
        log: every published estimate (columns).
        n_inputs: input messages read (IMU + joints + foot sensors).
        input_duration_s: span of the input stamps, s.
        wall_s: wall time of the estimation loop, s: message conversion, the adapter rules, the core, the log and
            the writing of the output bag's messages (reading excluded).
        read_s: wall time to open the input bag and read, deserialize and order its messages, s.
        write_s: wall time spent writing the output bag, s: building, serializing and writing its messages (a
            part of ``wall_s``) and closing the bag after the loop (0 without an output bag).
        total_s: wall time of reading (opening the input included), the loop and closing the output bag, s (the
            set-up is excluded: description, model, estimator).
        input_topics: topic -> message type of every connection of the input bag.
        skipped, events: counts by cause (driver rules; core events).
        lost: samples missing from the recording, detected from the stamp gaps (``io.stream.LOST_KEYS``, only
            the non-zero ones).
        resets: filter resets by the driver.
        gyro_yaw_rate: ``(t_s, gyro z in the base frame rad/s)`` of the IMU input (time alignment).
        input_span_s: first and last input stamp, s (the span unstamped ground truth is spread over).
        metrics: ``metrics.evaluate`` output (+ contacts) when ground truth was given, else None.
        ground_truth: the loaded ground truth (time-aligned when an alignment was searched), or None.
        description: the robot description used.
        steps_back: input topic -> (how many times, largest step in s) its header stamps went back in recording
            order (``io.bags.StampOrdered.steps_back``); replay runs in stamp order, so the messages before and
            after such a step are interleaved.
        bulk_refused: input topic -> why the bulk CDR decoder refused it (rosbags read it instead).
    """

    log: EstimateLog
    n_inputs: int
    input_duration_s: float
    wall_s: float
    read_s: float
    skipped: dict[str, int]
    events: dict[str, int]
    resets: int
    gyro_yaw_rate: tuple[np.ndarray, np.ndarray] | None = None
    input_span_s: tuple[float, float] = (0.0, 0.0)
    metrics: dict[str, Any] | None = None
    ground_truth: GroundTruth | None = None
    description: Any = None
    lost: dict[str, int] = field(default_factory=dict)
    write_s: float = 0.0
    total_s: float = 0.0
    input_topics: dict[str, str] = field(default_factory=dict)
    first_notes: dict[str, tuple[str, str]] = field(default_factory=dict)
    stream_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    steps_back: dict[str, tuple[int, float]] = field(default_factory=dict)
    bulk_refused: dict[str, str] = field(default_factory=dict)

    def first_message(self, key: str) -> str:
        """The message of the first occurrence of a skip cause or core event ("" when none was noted)."""
        note = self.first_notes.get(key)
        return note[1] if note else ""

    def problem_lines(self) -> list[str]:
        """What to print after the summary line: per skip cause and per core event of level warn or error, its
        count and its first message; a WARNING for each stream of which more than half of the messages were
        skipped; a WARNING for each input topic whose stamps go back in recording order by ``STEP_BACK_WARN_S`` or
        more (a note for smaller steps)."""
        lines = []
        for key, n in sorted(self.skipped.items()):
            lines.append(f"skipped {key}: {n}, first: {self.first_message(key) or '?'}")
        for key, n in sorted(self.events.items()):
            level = self.first_notes.get(key, ("info", ""))[0]
            if level in ("warn", "error"):
                lines.append(f"event {key} ({level}): {n}, first: {self.first_message(key) or '?'}")
        for stream, (received, skipped) in self.stream_counts.items():
            if received and 2 * skipped > received:
                lines.append(
                    f"WARNING: {skipped} of {received} {STREAM_LABELS[stream]} messages skipped: the estimate "
                    "runs without most of this input (see the causes above)"
                )
        for topic, (n, largest_s) in sorted(self.steps_back.items()):
            if largest_s < STEP_BACK_WARN_S:  # e.g. two publishers on one topic: put in order, nothing lost
                lines.append(
                    f"note: the header stamps of {topic} go back {n} time(s) in recording order by at most "
                    f"{largest_s * 1e3:.1f} ms; replayed in stamp order"
                )
                continue
            lines.append(
                f"WARNING: the header stamps of {topic} go back {n} time(s) in recording order (largest step "
                f"{largest_s:.3f} s): replay runs in stamp order, so messages recorded before and after are "
                "interleaved; a recording that restarts or loops its clock should be cut there"
            )
        for topic, why in sorted(self.bulk_refused.items()):
            lines.append(f"note: {topic} was read by rosbags, not the bulk CDR decoder: {why}")
        return lines

    @property
    def realtime_factor(self) -> float:
        """Input duration / estimation loop wall time (``wall_s``: reading excluded)."""
        return self.input_duration_s / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def realtime_factor_total(self) -> float:
        """Input duration / ``total_s`` (reading, the loop and closing the output bag)."""
        return self.input_duration_s / self.total_s if self.total_s > 0 else float("inf")

    def summary(self) -> dict[str, Any]:
        """JSON-serialisable run summary."""
        return {
            "n_inputs": self.n_inputs,
            "n_estimates": len(self.log),
            "input_duration_s": self.input_duration_s,
            "estimation_wall_s": self.wall_s,
            "read_wall_s": self.read_s,
            "write_wall_s": self.write_s,
            "total_wall_s": self.total_s,
            "samples_per_s": self.n_inputs / self.wall_s if self.wall_s > 0 else None,
            "realtime_factor": self.realtime_factor,
            "realtime_factor_total": self.realtime_factor_total,
            "skipped": self.skipped,
            "lost": self.lost,
            "events": self.events,
            "first_messages": {k: m for k, (_level, m) in self.first_notes.items()},
            "streams": {k: {"received": r, "skipped": n} for k, (r, n) in self.stream_counts.items() if r},
            "resets": self.resets,
            "stamp_steps_back": {t: {"count": n, "largest_s": x} for t, (n, x) in self.steps_back.items()},
        }


#: a step back of a topic's header stamps (in recording order) from this size on is a WARNING (a restarted or
#: looping clock), below it a note (jitter between publishers of one topic), s
STEP_BACK_WARN_S = 0.1


# --------------------------------------------------------------------------------------------- set-up
def split_config(path: str | Path | None) -> tuple[Any, dict[str, Any]]:
    """Estimator settings and node parameters from a settings YAML (ROS parameter-file layout).

    Returns:
        ``(EstimatorSettings, node parameters found in the file)``.

    Raises:
        ``estimation.errors.SettingsError``: the file cannot be read; ReplayError: an invalid setting (the message
        starts with the file) or a node parameter with a bad value (:func:`check_node_params`).
    """
    from robot_state_estimator.estimation.errors import SettingsError
    from robot_state_estimator.estimation.settings import load_settings

    if path is None:
        return load_settings(None), {}
    try:
        settings = load_settings(path, ignore=NODE_PARAMETER_NAMES)
    except SettingsError as exc:
        if str(path) in str(exc):
            raise
        raise ReplayError(f"{path}: {exc}") from exc  # the file the bad setting is in
    doc = yaml.safe_load(Path(path).read_text()) or {}
    params: dict[str, Any] = {}
    for node_doc in doc.values() if isinstance(doc, dict) else ():
        if isinstance(node_doc, dict) and "ros__parameters" in node_doc:
            params.update({k: v for k, v in node_doc["ros__parameters"].items() if k in NODE_PARAMETER_NAMES})
    if not params and isinstance(doc, dict):
        params = {k: v for k, v in doc.items() if k in NODE_PARAMETER_NAMES}
    check_node_params(params, str(path))
    return settings, params


def apply_overrides(settings: Any, node_params: dict[str, Any], items: list[str]) -> tuple[Any, dict[str, Any]]:
    """Apply ``NAME=VALUE`` overrides (YAML values) to settings (dotted names) and node parameters.

    Raises:
        ReplayError: an item without ``=``; a node parameter replay does not use (``NODE_ONLY_PARAMETERS``) or
            with a bad value (:func:`check_node_params`); ``estimation.errors.SettingsError``: unknown name or bad
            value of a setting.
    """
    from robot_state_estimator.estimation.settings import EstimatorSettings, flatten_settings, settings_from_flat

    flat: dict[str, Any] = {}
    params = dict(node_params)
    setting_names = list(flatten_settings(EstimatorSettings()))
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ReplayError(f"--set expects NAME=VALUE, got {item!r}")
        try:
            value = yaml.safe_load(text) if text else ""
        except yaml.YAMLError:
            value = text  # e.g. "*": a plain string
        if name in NODE_ONLY_PARAMETERS:
            raise ReplayError(
                f"--set {name}: a parameter of the node only, replay does not use it ({NODE_ONLY_PARAMETERS[name]})"
            )
        if name in NODE_PARAMETER_NAMES:
            check_node_params({name: value}, f"--set {name}")
            params[name] = value
        elif name in setting_names or any(k.startswith(f"{name}.") for k in setting_names):
            flat[name] = value
        else:  # the node's rule for a misspelt parameter (common/names.py), as an error here
            close = close_names(name, [*setting_names, *NODE_PARAMETER_NAMES, *NODE_ONLY_PARAMETERS])
            raise ReplayError(
                f"--set {name}: no setting or node parameter has this name{did_you_mean(close)} (the settings are "
                "listed by their dotted names in README.md, 'Parameters')"
            )
    return (settings_from_flat(flat, base=settings) if flat else settings), params


def check_robot(robot: str | None) -> None:
    """Refuse a ``--robot`` that is not a bundled robot, whatever else would be used.

    Raises:
        ReplayError: ``robot`` is not in ``common.paths.BUNDLED_ROBOTS``; the message names the known ones.
    """
    from robot_state_estimator.common.paths import BUNDLED_ROBOTS

    if robot is not None and robot not in BUNDLED_ROBOTS:
        raise ReplayError(f"unknown bundled robot {robot!r} (--robot); known: {', '.join(sorted(BUNDLED_ROBOTS))}")


def resolve_description(input_path: str | Path, description: str | None, robot: str | None) -> str:
    """The description to use: ``--description``, else ``robot_description.urdf`` next to the input (what
    ``simulate`` writes), else the bundled robot's.

    Raises:
        ReplayError: none found, or ``robot`` is not a bundled robot (also when another description is used).
    """
    check_robot(robot)
    if description:
        return str(description)
    p = Path(input_path)
    for folder in (p if p.is_dir() else p.parent, p.parent):
        for name in ("robot_description.urdf", "robot_description.sdf"):
            if (folder / name).exists():
                return str(folder / name)
    if robot:
        from robot_state_estimator.common.paths import robot_description_path

        return str(robot_description_path(robot))
    raise ReplayError("no robot description: pass --description FILE or --robot NAME")


def resolve_config(config: str | None, robot: str | None) -> str | None:
    """``--config``, else ``config/<robot>.yaml`` when it exists, else None (defaults).

    Raises:
        ReplayError: ``robot`` is not a bundled robot.
    """
    check_robot(robot)
    if config:
        return config
    if robot:
        from robot_state_estimator.common.paths import config_dir

        path = config_dir() / f"{robot}.yaml"
        if path.exists():
            return str(path)
    return None


def _progress(total: int, enabled: bool | None) -> Any:
    if enabled is None:
        enabled = sys.stderr.isatty() and total > 20000
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="msg", unit_scale=True, desc="replay", leave=False)


# ------------------------------------------------------------------------------------------------ run
def replay(
    input_path: str | Path,
    *,
    description: str,
    settings: Any,
    options: ReplayOptions | None = None,
    output_bag: str | Path | None = None,
    on_estimate: Callable[[Estimate, bool, bool], None] | None = None,
) -> ReplayResult:
    """Run the estimator over a bag.

    Args:
        input_path: rosbag2 directory/file or ROS 1 bag.
        description: description file or XML (``load_description`` input).
        settings: ``EstimatorSettings``.
        options: topics, node parameters, output topics and compression.
        output_bag: mcap bag directory to create with the node's outputs (``options.output_topics``; None: do not
            write one, the fastest when only the log, metrics or a TUM file are wanted).
        on_estimate: extra callback per estimate (and whether its odometry is published).

    Returns:
        the :class:`ReplayResult`, with the wall times of reading (``read_s``), of the loop (``wall_s``), of
        writing the output bag (``write_s``) and of all of it (``total_s``).

    Raises:
        ReplayError: unreadable input, missing topics, an output bag that exists already or unknown output
            topics; a run that fails after making ``output_bag`` removes it again.
    """
    from robot_state_estimator.io import bags

    clock = time.perf_counter
    t_start = clock()
    # the output bag is made by this call (OutputBag refuses an existing path): removed again when the replay
    # fails, so that the same command can run again once the problem is fixed (kept on Ctrl-C)
    made_output = output_bag is not None and not Path(output_bag).exists()
    try:
        with bags.BagReader(input_path) as bag:  # opened once: its topics, then its messages
            open_s = clock() - t_start
            return _replay_bag(
                bag,
                input_path,
                description=description,
                settings=settings,
                opts=options or ReplayOptions(),
                output_bag=output_bag,
                on_estimate=on_estimate,
                open_s=open_s,
            )
    except Exception as exc:
        if made_output and output_bag is not None and Path(output_bag).is_dir():
            shutil.rmtree(output_bag, ignore_errors=True)
        if isinstance(exc, bags.BagError):
            raise ReplayError(str(exc)) from exc
        raise


def _replay_bag(
    bag: Any,
    input_path: str | Path,
    *,
    description: str,
    settings: Any,
    opts: ReplayOptions,
    output_bag: str | Path | None,
    on_estimate: Callable[[Estimate, bool, bool], None] | None,
    open_s: float,
) -> ReplayResult:
    """:func:`replay` on an opened ``io.bags.BagReader`` (``open_s``: s it took to open)."""
    from robot_state_estimator.description import load_description
    from robot_state_estimator.estimation import RobotStateEstimator

    present = bag.topics
    missing = [t for t in (opts.imu_topic, opts.joints_topic) if t not in present]
    if missing:
        options = ", ".join(f"{t} (--{'imu' if t == opts.imu_topic else 'joints'}-topic)" for t in missing)
        raise ReplayError(f"{input_path} lacks the input topics {options}; it has {sorted(present)}")
    topics = [opts.imu_topic]
    use_ff = opts.use_foot_forces == "yes" or (
        opts.use_foot_forces == "auto"
        and (opts.foot_forces_topic in present or bool(opts.node_params.get("use_foot_forces")))
    )
    if use_ff:
        if opts.foot_forces_topic not in present:
            raise ReplayError(f"{input_path} has no foot-sensor topic {opts.foot_forces_topic}")
        topics.append(opts.foot_forces_topic)
    from robot_state_estimator.io import bags
    from robot_state_estimator.io.stream import foot_wrench_topics, output_frame_problem

    params = {**NODE_DEFAULTS, **opts.node_params}
    from robot_state_estimator.estimation.imu_setup import apply_imu_settings

    desc = apply_imu_settings(load_description(description), settings)  # the IMU of imu_name / declared_imu
    feet = settings.foot_frames or tuple(desc.foot_frames())
    try:
        wrench_topics = {
            foot: topic if topic.startswith("/") else "/" + topic
            for foot, topic in foot_wrench_topics(params["foot_wrench_topics"], feet).items()
        }
    except ValueError as exc:
        raise ReplayError(str(exc)) from exc
    have_wrenches = all(t in present for t in wrench_topics.values())
    use_fw = opts.use_foot_wrenches == "yes" or (
        opts.use_foot_wrenches == "auto" and (have_wrenches or bool(params.get("use_foot_wrenches")))
    )
    if use_fw:
        lacking = [t for t in wrench_topics.values() if t not in present]
        if lacking:
            raise ReplayError(
                f"{input_path} lacks the foot wrench topics {lacking} (node parameter foot_wrench_topics; "
                "--use-foot-wrenches no reads none)"
            )
        topics += list(wrench_topics.values())
    use_schedule = settings.contact.source == "schedule"
    if use_schedule:
        if opts.contact_schedule_topic not in present:
            raise ReplayError(
                f"contact.source is schedule but {input_path} has no contact schedule topic "
                f"{opts.contact_schedule_topic} (--contact-schedule-topic); it has {sorted(present)}"
            )
        topics.append(opts.contact_schedule_topic)
    topics.append(opts.joints_topic)

    joint_state = "sensor_msgs/msg/JointState"
    expected = {
        opts.imu_topic: ("sensor_msgs/msg/Imu", "--imu-topic"),
        opts.joints_topic: (joint_state, "--joints-topic"),
    }
    if use_ff:
        expected[opts.foot_forces_topic] = (joint_state, "--foot-forces-topic or --use-foot-forces no")
    if use_fw:
        for topic in wrench_topics.values():
            expected[topic] = ("geometry_msgs/msg/WrenchStamped", "foot_wrench_topics or --use-foot-wrenches no")
    if use_schedule:
        expected[opts.contact_schedule_topic] = (joint_state, "--contact-schedule-topic")
    bags.check_topic_types(input_path, present, expected)

    est = RobotStateEstimator.from_description(desc, settings)
    problem = output_frame_problem(desc, params)  # as the node: B's names in the outputs, no other robot frame
    if problem:
        raise ReplayError(problem)
    log = EstimateLog()
    out = None
    if output_bag is not None:
        out = OutputBag(
            output_bag,
            odom_frame=params["odom_frame"],
            base_frame=params["base_frame"] or desc.base_link,
            tf_child_frame=params["tf_child_frame"],
            groups=opts.output_topics,
            compression=opts.output_compression,
        )
    write_s = 0.0
    clock = time.perf_counter

    def sink(e: Estimate, odometry: bool, contacts: bool) -> None:
        nonlocal write_s
        log.append(e, odometry, contacts)
        if out is not None:
            t = clock()
            out.write(e, odometry, contacts, driver.stream.forces_estimated)
            write_s += clock() - t
        if on_estimate is not None:
            on_estimate(e, odometry, contacts)

    driver = ReplayDriver(est, desc, settings, params, sink)
    t_start = t0 = clock()
    try:
        msgs = bag.stamp_ordered(topics, bulk=opts.bulk_decode)
    except BaseException:
        if out is not None:
            out.close()
        raise
    read_s = open_s + clock() - t0
    counts = Counter(msgs.topic_index)
    empty = [t for t in (opts.imu_topic, opts.joints_topic) if not counts[msgs.topics.index(t)]]
    if empty:
        if out is not None:
            out.close()
        options = ", ".join(f"{t} (--{'imu' if t == opts.imu_topic else 'joints'}-topic)" for t in empty)
        raise ReplayError(f"{input_path} has no messages on {options}")
    by_index = {
        opts.imu_topic: driver.imu,
        opts.joints_topic: driver.joints,
        opts.foot_forces_topic: driver.foot_forces,
        opts.contact_schedule_topic: driver.contact_schedule,
    }
    if use_fw:
        for foot, topic in wrench_topics.items():
            by_index[topic] = functools.partial(driver.foot_wrench, foot=foot)
    handlers = [by_index[t] for t in msgs.topics]
    bar = _progress(len(msgs), opts.progress)
    wall = 0.0
    # The messages read stay alive until the end: keep the garbage collector from walking them again at every
    # collection of the loop (gc.freeze: they are left out of collections; unfrozen after the loop unless the
    # process had frozen objects of its own before). They are freed by reference counting as usual.
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        t0 = clock()
        if bar is None:
            for i, msg in zip(msgs.topic_index, msgs.msgs, strict=True):
                handlers[i](msg)
        else:
            for k, (i, msg) in enumerate(zip(msgs.topic_index, msgs.msgs, strict=True)):
                handlers[i](msg)
                if k % 1000 == 999:
                    bar.update(1000)
        wall = clock() - t0
    finally:
        if not frozen_before:
            gc.unfreeze()
        if bar is not None:
            bar.close()
        if out is not None:
            t = clock()
            out.close()
            write_s += clock() - t
    total_s = open_s + clock() - t_start
    received, skipped = driver.stream_counts["joints"]
    if received and skipped == received:
        key, first = driver.main_skip_cause("joints")
        imu_received, imu_skipped = driver.stream_counts["imu"]
        if imu_received and imu_skipped == imu_received:
            imu_key, imu_first = driver.main_skip_cause("imu")
            outcome = (
                f"and all {imu_received} IMU samples of {opts.imu_topic} were skipped too ({imu_key}: {imu_first})"
            )
        else:
            outcome = "the run would be IMU-only"
        raise ReplayError(
            f"no joint sample of {opts.joints_topic} reached the estimator: all {received} skipped ({key}: {first}); "
            + outcome
        )
    imu_received, imu_skipped = driver.stream_counts["imu"]
    if imu_received and imu_skipped == imu_received:
        key, first = driver.main_skip_cause("imu")
        raise ReplayError(
            f"no IMU sample of {opts.imu_topic} reached the estimator: all {imu_received} skipped ({key}: {first})"
        )
    stamps = msgs.stamp_ns
    span = (stamps[-1] - stamps[0]) / NS_PER_S if stamps else 0.0
    return ReplayResult(
        log=log,
        n_inputs=len(msgs),
        input_duration_s=span,
        wall_s=wall,
        read_s=read_s,
        write_s=write_s,
        total_s=total_s,
        skipped=dict(driver.skipped),
        lost={k: n for k, n in driver.stream.lost.items() if n},
        events=dict(driver.events),
        resets=driver.resets,
        gyro_yaw_rate=_gyro_signal(driver),
        input_span_s=(stamps[0] / NS_PER_S, stamps[-1] / NS_PER_S) if stamps else (0.0, 0.0),
        description=desc,
        input_topics=dict(present),
        first_notes=dict(driver.first_notes),
        stream_counts={k: (r, n) for k, (r, n) in driver.stream_counts.items()},
        steps_back={t: (n, ns / NS_PER_S) for t, (n, ns) in msgs.steps_back.items()},
        bulk_refused=dict(msgs.bulk_refused),
    )


def _gyro_signal(driver: ReplayDriver) -> tuple[np.ndarray, np.ndarray] | None:
    if len(driver.gyro_stamp_ns) < 2:
        return None
    t = np.asarray(driver.gyro_stamp_ns, dtype=np.int64)
    z = np.asarray(driver.gyro_z_base, dtype=float)
    keep = np.concatenate([np.diff(t) > 0, [True]])
    t, z = t[keep], z[keep]
    if np.any(np.diff(t) <= 0):  # stamps went backwards (reset): no single clock to align on
        return None
    return (t // NS_PER_S).astype(float) + (t % NS_PER_S).astype(float) / NS_PER_S, z


def auto_time_alignment(gt: GroundTruth) -> str:
    """The time alignment ``auto`` stands for: "none" for stamped ground truth; "offset+rate" for rows without
    stamps (the standard evaluation the Go1 data set prescribes, comparable with other estimators' figures).
    ``warp`` (a piecewise-linear clock fitted on yaw, ``metrics.fit_time_warp``) is opt-in: it fits more of the
    clock to the data and so reports lower errors than the standard alignment."""
    return "none" if gt.stamped else "offset+rate"


def evaluate_replay(
    result: ReplayResult,
    gt: GroundTruth,
    *,
    time_alignment: str = "auto",
    max_offset_s: float = 5.0,
    align_on: str = "gyro",
    with_nees: bool | None = None,
    reference_yaw_rate: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, Any]:
    """Metrics of a replay against ground truth (``metrics.evaluate``, plus contact precision/recall).

    Args:
        result: the replay.
        gt: the ground truth.
        time_alignment: "auto" (:func:`auto_time_alignment`), or a mode of ``metrics.evaluate``.
        max_offset_s: offset search half-width, s.
        align_on: "gyro" (the input's gyroscope z in the base frame: does not depend on the estimate's
            quality) or "estimate" (the estimate's yaw rate).
        with_nees: NEES in the filter's own frame (default: for ground truth from a bag, i.e. simulated).
        reference_yaw_rate: with ``align_on="gyro"``, this ``(t_s, yaw rate)`` instead of the replayed
            gyroscope (e.g. the whole source recording's, :func:`alignment_reference`).

    Raises:
        MetricsError: no overlap.
    """
    from robot_state_estimator.tools import metrics

    est = result.log.trajectory()
    mode = auto_time_alignment(gt) if time_alignment == "auto" else time_alignment
    if with_nees is None:
        with_nees = gt.stamped and gt.trajectory.v_base_in_base is not None and mode == "none"
    ref = (
        (reference_yaw_rate if reference_yaw_rate is not None else result.gyro_yaw_rate) if align_on == "gyro" else None
    )
    res = metrics.evaluate(
        est,
        gt.trajectory,
        time_alignment=mode,
        max_offset_s=max_offset_s,
        reference_yaw_rate=ref,
        with_nees=with_nees,
    )
    res["time_alignment"]["signal"] = "gyro z (base frame)" if ref is not None else "estimate yaw rate"
    res["ground_truth_stamped"] = bool(gt.stamped)  # metrics.metric_caveats: short-range RPE without stamps
    res["caveats"] = metrics.metric_caveats(res)
    if gt.contacts is not None and result.log.feet:
        t_c, flags = result.log.contacts_arrays()
        feet = tuple(f for f in result.log.feet if f in gt.contacts.feet)
        if feet and len(t_c):
            m = (t_c >= gt.contacts.t_s[0]) & (t_c <= gt.contacts.t_s[-1])
            cols = [result.log.feet.index(f) for f in feet]
            g = gt.contacts.at(t_c[m], feet)
            e = flags[m][:, cols]
            res["contacts"] = {"all": metrics.contact_precision_recall(e, g)}
            for k, f in enumerate(feet):
                res["contacts"][f] = metrics.contact_precision_recall(e[:, k], g[:, k])
    return res


def aligned_ground_truth(gt: GroundTruth, res: dict[str, Any]) -> GroundTruth:
    """Ground truth with the time alignment of an evaluation applied (for plots)."""
    from dataclasses import replace

    from robot_state_estimator.tools.metrics import TimeAlignment

    ta = res["time_alignment"]
    if ta["mode"] == "none":
        return gt
    return replace(gt, trajectory=TimeAlignment.from_dict(ta).apply(gt.trajectory))


# ------------------------------------------------------------------------------------------------ CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``robot-state-estimator replay``."""
    parser.add_argument("input", help="rosbag2 directory or file (mcap, sqlite3) or ROS 1 bag")
    parser.add_argument(
        "--description",
        help="robot description (URDF/xacro/SDF); default: robot_description.urdf next to "
        "the input, else the bundled --robot's",
    )
    parser.add_argument("--robot", help="bundled robot (go1, solo12, anymal_c): description and config/<robot>.yaml")
    parser.add_argument(
        "--config",
        help="estimator settings YAML (node parameter-file layout); default: config/<robot>.yaml with --robot, else "
        "the built-in defaults",
    )
    parser.add_argument(
        "--imu",
        metavar="NAME",
        help="the IMU to use when the description has several (the setting imu_name); default: the only one",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override one setting or node parameter (dotted name, YAML value), e.g. ekf.foot_gate_nis=20",
    )
    parser.add_argument(
        "--output",
        help="mcap bag directory to write with the node's outputs (see --output-topics); none is written without "
        "it (faster when only metrics or --tum are wanted)",
    )
    parser.add_argument(
        "--output-topics",
        nargs="+",
        choices=list(OUTPUT_GROUPS),
        default=None,
        metavar="GROUP",
        help="what --output gets, any of: odometry (nav_msgs/Odometry), tf (/tf), wrenches (contact_wrench/<foot>), "
        "contacts (contact_states); default: all four; needs --output",
    )
    parser.add_argument(
        "--output-compression",
        choices=["zstd", "none"],
        default=DEFAULT_OUTPUT_COMPRESSION,
        help="chunk compression of the --output mcap (zstd: a third of the size, for about 6 ms per MB written)",
    )
    parser.add_argument("--tum", help="TUM trajectory file to write")
    parser.add_argument(
        "--ground-truth",
        help="'bag' (the Odometry topic of the input), a bag, a TUM file, or an unstamped mocap CSV; "
        "default: the input's ground-truth topic when present",
    )
    parser.add_argument(
        "--time-span",
        nargs=2,
        type=float,
        metavar=("T0", "T1"),
        help="s, in the input's stamps: the span the rows of an unstamped ground-truth CSV cover (the full "
        "recording when INPUT is a slice of it); default: the source span recorded by import-csv "
        "(import_source.yaml), else the replayed span",
    )
    parser.add_argument("--no-ground-truth", action="store_true", help="do not evaluate")
    parser.add_argument("--gt-topic", default="/ground_truth/odom", help="ground-truth nav_msgs/Odometry topic")
    parser.add_argument("--gt-contacts-topic", default="/ground_truth/contacts", help="ground-truth contact topic")
    parser.add_argument(
        "--time-align",
        default="auto",
        choices=["auto", "none", "offset", "offset+rate", "warp"],
        help="auto: none for stamped ground truth, offset+rate for an unstamped CSV (offset and rate on the yaw "
        "rate, the standard evaluation); warp: then a piecewise-linear clock fitted on yaw, for rows not evenly "
        "spread in time (opt-in: reports lower errors than the standard alignment)",
    )
    parser.add_argument("--max-offset", type=float, default=5.0, help="s, time-offset search half-width")
    parser.add_argument(
        "--align-on",
        default="gyro",
        choices=["gyro", "estimate"],
        help="time alignment signal: the input gyroscope's yaw rate, or the estimate's",
    )
    parser.add_argument("--plots", help="folder for PNG plots")
    parser.add_argument("--json", help="metrics and run summary as JSON")
    parser.add_argument("--imu-topic", default="/imu/data", help="sensor_msgs/Imu input topic")
    parser.add_argument("--joints-topic", default="/joint_states", help="sensor_msgs/JointState input topic")
    parser.add_argument(
        "--foot-forces-topic", default="/foot_forces", help="foot sensors (JointState: name = feet, effort = value)"
    )
    parser.add_argument(
        "--use-foot-forces", default="auto", choices=["auto", "yes", "no"], help="auto: when the topic is present"
    )
    parser.add_argument(
        "--use-foot-wrenches",
        default="auto",
        choices=["auto", "yes", "no"],
        help="foot wrench sensors (WrenchStamped per foot, topics from the node parameter foot_wrench_topics, "
        "default /<foot>/wrench); auto: when every foot's topic is present (default: auto)",
    )
    parser.add_argument(
        "--contact-schedule-topic",
        default="/contact_schedule",
        help="contact schedule (JointState: name = feet, position = 1 stance / 0 swing), read with "
        "contact.source schedule",
    )
    parser.add_argument("--imu-frame-id", help="accepted IMU frame_id ('*' = any); default: the description's")
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar; default: on a terminal, for inputs of more than 20000 messages",
    )
    parser.add_argument(
        "--title",
        default="",
        help="title of the metrics table and plots; default: 'metrics against <ground truth>' and the input's name",
    )


def plot_title(inp: str | Path) -> str:
    """The default title of replay's plots: the input's stem (``walk`` for ``walk.mcap``, the folder's name for a
    bag folder); for a folder named ``bag`` (what ``simulate`` and ``demo`` write inside their run folder), the run
    folder's name (``go1_trot_real``), since every such bag would be titled "bag"."""
    path = Path(inp).resolve() if str(inp) else Path(inp)
    if path.is_dir() and path.name == "bag" and path.parent.name:
        return path.parent.name
    return path.stem if path.is_file() else path.name


def ground_truth_time_span(
    inp: Path, input_span_s: tuple[float, float], time_span: list[float] | tuple[float, float] | None
) -> tuple[tuple[float, float], str]:
    """The span (s, input stamps) that an unstamped ground truth's rows are spread over, and a line saying so.

    ``--time-span`` when given; else the full span of the CSV the input was imported from, when import-csv
    recorded it (``import_source.yaml``) and it differs from the replayed span (the input is a slice); else
    the replayed span, with a warning that a slice of a longer recording needs ``--time-span``.
    """
    from robot_state_estimator.tools.csv_import import IMPORT_SOURCE_FILE, read_import_source

    if time_span is not None:
        t0, t1 = (float(t) for t in time_span)
        if not t1 > t0:
            raise ReplayError(f"--time-span: T1 ({t1}) must be after T0 ({t0})")
        return (t0, t1), f"unstamped ground truth spread over --time-span {t0:.3f} .. {t1:.3f} s"
    info = read_import_source(inp) if is_bag(inp) or inp.is_dir() else None
    source_span = info.get("source_span_s") if info else None
    if info and isinstance(source_span, list) and len(source_span) == 2:  # a span implies info (for mypy)
        t0, t1 = float(source_span[0]), float(source_span[1])
        if abs(t0 - input_span_s[0]) < 1e-6 and abs(t1 - input_span_s[1]) < 1e-6:
            return (t0, t1), (
                f"unstamped ground truth spread over the replayed span {t0:.3f} .. {t1:.3f} s, the whole source "
                f"recording ({IMPORT_SOURCE_FILE}: {info.get('source', '?')})"
            )
        if t1 > t0:
            return (t0, t1), (
                f"unstamped ground truth spread over the span of the source recording, {t0:.3f} .. {t1:.3f} s "
                f"({IMPORT_SOURCE_FILE}: {info.get('source', '?')}); the input is a slice of it "
                f"({input_span_s[0]:.3f} .. {input_span_s[1]:.3f} s); --time-span T0 T1 overrides"
            )
    t0, t1 = input_span_s
    return (t0, t1), (
        f"WARNING: unstamped ground truth spread over the replayed span {t0:.3f} .. {t1:.3f} s: if the input is a "
        "slice of a longer recording, the metrics are meaningless; pass --time-span T0 T1 (the span, in the "
        "input's stamps, that the ground-truth rows cover)"
    )


def alignment_reference(
    inp: Path,
    input_span_s: tuple[float, float],
    R_base_imu: np.ndarray,
    replayed: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[tuple[np.ndarray, np.ndarray] | None, str]:
    """The gyroscope yaw rate to time-align unstamped ground truth on, and a line saying which.

    When the input is a slice of a CSV recording imported by import-csv (``import_source.yaml`` with a source
    span longer than the input's, and the source CSV still readable), the whole source's gyroscope z in the
    base frame: the slice is then time-aligned exactly as the whole recording is, so its metrics are the whole
    run's restricted to the slice. Else ``replayed`` (the input's own gyroscope), with an empty line.

    Args:
        inp: the input bag.
        input_span_s: first and last stamp of the input, s.
        R_base_imu: (3, 3) rotation of the IMU frame in the base frame (the description's).
        replayed: ``(t_s, gyro z in the base frame)`` of the input.
    """
    from robot_state_estimator.tools.csv_import import IMPORT_SOURCE_FILE, read_import_source, read_source_gyro

    info = read_import_source(inp) if is_bag(inp) or inp.is_dir() else None
    span = info.get("source_span_s") if info else None
    if not (isinstance(span, list) and len(span) == 2):
        return replayed, ""
    if abs(float(span[0]) - input_span_s[0]) < 1e-6 and abs(float(span[1]) - input_span_s[1]) < 1e-6:
        return replayed, ""  # the whole source: its own gyroscope is the source's
    src = read_source_gyro(info) if info else None
    if src is None:
        return replayed, (
            f"time alignment on the slice's own gyroscope: the source recording of {IMPORT_SOURCE_FILE} cannot be "
            "read again (moved, or imported before source_columns were recorded)"
        )
    t_s, omega = src
    z_axis = np.asarray(R_base_imu, dtype=float)[2]
    z = np.array([float(z_axis @ w) for w in omega])  # as ReplayDriver.imu computes it, to the last bit
    return (t_s, z), (
        f"time alignment on the gyroscope of the whole source recording ({IMPORT_SOURCE_FILE}: "
        f"{info.get('source', '?') if info else '?'}), as for the whole run"
    )


def settings_source_line(input_path: Path, description: str, config_path: str | None) -> str:
    """One line naming the description and the settings file replay uses (None: the built-in defaults); with
    the defaults and a ``run.yaml`` of ``simulate`` next to the input naming a bundled robot, a hint to pass
    ``--robot`` for that robot's tuned ``config/<robot>.yaml`` (what ``demo`` does)."""
    from robot_state_estimator.common.paths import BUNDLED_ROBOTS

    if config_path is not None:
        return f"description {description}; settings {config_path}"
    line = f"description {description}; settings: the built-in defaults (no --robot or --config)"
    folder = input_path if input_path.is_dir() else input_path.parent
    for run_yaml in (folder / "run.yaml", folder.parent / "run.yaml"):
        if run_yaml.is_file():
            try:
                robot = (yaml.safe_load(run_yaml.read_text()) or {}).get("robot")
            except (yaml.YAMLError, OSError, AttributeError):
                robot = None
            if isinstance(robot, str) and robot in BUNDLED_ROBOTS:
                line += f"; {run_yaml} names {robot}: --robot {robot} uses config/{robot}.yaml, as demo does"
            break
    return line


def check_arguments(args: argparse.Namespace) -> None:
    """The checks of replay's options that need no input, before anything runs.

    Raises:
        ReplayError: ``--output-topics`` without ``--output``; a ``--time-span`` whose T1 is not after T0 or
            not finite.
    """
    if getattr(args, "output_topics", None) is not None and not getattr(args, "output", None):
        raise ReplayError("--output-topics chooses what the --output bag gets: pass --output DIR (no bag is written)")
    span = getattr(args, "time_span", None)
    if span is not None:
        t0, t1 = (float(t) for t in span)
        if not (np.isfinite(t0) and np.isfinite(t1)):
            raise ReplayError(f"--time-span: T0 and T1 must be finite, got {t0} {t1}")
        if not t1 > t0:
            raise ReplayError(f"--time-span: T1 ({t1}) must be after T0 ({t0})")


def check_output_paths(args: argparse.Namespace, resolved: Sequence[tuple[str, Any]] = ()) -> None:
    """Refuse an output (``--output``, ``--tum``, ``--json``, ``--plots``) that would overwrite a file replay reads
    (the input, a bag file or a file of a bag directory, the ground truth, the description or the settings, also
    when replay found them itself: ``resolved``) or that cannot be written (``ground_truth.output_path_problem``),
    before the replay runs.

    Args:
        args: the parsed command line.
        resolved: (what, path) of inputs replay chose itself, e.g. ``("the description", path)`` for the
            ``robot_description.urdf`` next to the bag or ``("the settings", path)`` for ``config/<robot>.yaml``;
            a value that is no existing path (XML text, None) is skipped.

    Raises:
        ReplayError: the first such output, naming its option (and the input's).
    """
    inputs: dict[Path, str] = {}
    candidates: list[tuple[str, Any]] = [
        ("the input", getattr(args, "input", None)),
        ("--ground-truth", getattr(args, "ground_truth", None)),
        ("--description", getattr(args, "description", None)),
        ("--config", getattr(args, "config", None)),
    ]
    candidates += [(what, value) for what, value in resolved]
    for option, value in candidates:
        if value is not None and (not isinstance(value, (str, Path)) or "\n" in str(value) or len(str(value)) > 4096):
            continue  # XML text, not a path
        if not value or not Path(value).exists():
            continue
        path = Path(value).resolve()
        inputs[path] = f"{option} {value}"
        if path.is_dir():
            inputs.update({f.resolve(): f"a file of {option} {value}" for f in path.iterdir() if f.is_file()})
    for option in ("output", "tum", "json", "plots"):
        value = getattr(args, option, None)
        if not value:
            continue
        if Path(value).resolve() in inputs:
            raise ReplayError(
                f"--{option} {value} would overwrite {inputs[Path(value).resolve()]}: choose another path"
            )
        problem = output_path_problem(value, folder=option in ("output", "plots"))
        if problem:
            raise ReplayError(f"--{option}: {problem}")


def run_cli(args: argparse.Namespace) -> tuple[ReplayResult, dict[str, Any] | None]:
    """Run replay from parsed arguments; returns the result and the metrics (or None)."""
    inp = Path(args.input)
    if not inp.exists():
        raise ReplayError(f"input not found: {inp}")
    check_arguments(args)
    description = resolve_description(inp, args.description, args.robot)
    config_path = resolve_config(args.config, args.robot)
    check_output_paths(args, resolved=(("the description", description), ("the settings", config_path)))
    settings, node_params = split_config(config_path)
    print(settings_source_line(inp, description, config_path))
    unused = sorted(k for k in node_params if k in NODE_ONLY_PARAMETERS)
    if unused:
        print(f"note: {config_path} sets node parameters replay does not use: {', '.join(unused)}")
    settings, node_params = apply_overrides(settings, node_params, getattr(args, "set", []) or [])
    if getattr(args, "imu", None):
        settings = dataclasses.replace(settings, imu_name=args.imu)
    if args.imu_frame_id is not None:
        node_params["imu_frame_id"] = args.imu_frame_id
    opts = ReplayOptions(
        imu_topic=args.imu_topic,
        joints_topic=args.joints_topic,
        foot_forces_topic=args.foot_forces_topic,
        use_foot_forces=args.use_foot_forces,
        use_foot_wrenches=getattr(args, "use_foot_wrenches", "auto"),
        contact_schedule_topic=getattr(args, "contact_schedule_topic", "/contact_schedule"),
        node_params={**NODE_DEFAULTS, **node_params},
        progress=args.progress,
        output_topics=tuple(getattr(args, "output_topics", None) or OUTPUT_GROUPS),
        output_compression=getattr(args, "output_compression", None) or DEFAULT_OUTPUT_COMPRESSION,
    )
    # A ground-truth file that needs nothing from the replay is loaded (and so checked) before it: a bad file
    # then ends the command at once rather than after a long replay. Unstamped CSV rows are checked with a
    # placeholder span and spread over the replayed span afterwards.
    gt_before: GroundTruth | None = None
    spec_before = None if args.no_ground_truth else args.ground_truth
    if spec_before is not None and str(spec_before) not in ("bag", "topic"):
        if Path(spec_before).suffix.lower() == ".csv":
            load_ground_truth(spec_before, time_span_s=(0.0, 1.0))
        else:
            gt_before = load_ground_truth(
                spec_before, input_bag=inp, topic=args.gt_topic, contacts_topic=args.gt_contacts_topic
            )
    if kernels_need_compiling():
        print("compiling the estimator's numba kernels (once after an install or update: about a minute)", flush=True)
    result = replay(inp, description=description, settings=settings, options=opts, output_bag=args.output)
    s = result.summary()
    writing = f", of which writing the output bag {s['write_wall_s']:.2f} s" if args.output else ""
    print(
        f"replayed {inp}: {s['n_inputs']} messages over {s['input_duration_s']:.2f} s "
        f"in {s['estimation_wall_s']:.2f} s{writing} "
        f"({s['samples_per_s']:.0f} samples/s, {s['realtime_factor']:.1f}x real time; reading the input "
        f"{s['read_wall_s']:.2f} s before, {s['realtime_factor_total']:.1f}x real time with it); "
        f"{s['n_estimates']} estimates"
        + (f"; skipped {s['skipped']}" if s["skipped"] else "")
        + (f"; samples missing from the recording (stamp gaps) {s['lost']}" if s["lost"] else "")
    )
    for line in result.problem_lines():
        print(line)
    from robot_state_estimator.io.stream import output_frame_warning

    frame_warning = output_frame_warning(result.description, opts.node_params) if args.output else ""
    if frame_warning:  # as the node says at start: the TF written into the output bag is apart from the robot's
        print(f"WARNING: {frame_warning}")
    if len(result.log) < 2:
        raise ReplayError(
            f"the estimator produced {len(result.log)} estimates from the {s['n_inputs']} messages "
            f"({s['input_duration_s']:.2f} s) of {inp}: too short a run, or most of it skipped (see above)"
        )
    traj = result.log.trajectory()
    if args.tum:
        write_tum(args.tum, traj, header=f"robot_state_estimator replay of {inp}")
    gt = None
    if not args.no_ground_truth:
        spec = args.ground_truth
        if spec is None and is_bag(inp) and args.gt_topic in result.input_topics:
            spec = "bag"
        if gt_before is not None:
            gt = gt_before
        elif spec is not None:
            span, span_note = ground_truth_time_span(inp, result.input_span_s, getattr(args, "time_span", None))
            gt = load_ground_truth(
                spec,
                input_bag=inp,
                topic=args.gt_topic,
                contacts_topic=args.gt_contacts_topic,
                time_span_s=span,  # unstamped rows are spread over the recording
            )
            if not gt.stamped:
                print(span_note)
    res = None
    if args.output:
        _copy_import_source(inp, Path(args.output))
    if gt is not None:
        ref = None
        if not gt.stamped and args.align_on == "gyro":
            ref, ref_note = alignment_reference(
                inp, result.input_span_s, result.description.imu.R_base_imu, result.gyro_yaw_rate
            )
            if ref_note:
                print(ref_note)
        res = evaluate_replay(
            result,
            gt,
            time_alignment=args.time_align,
            max_offset_s=args.max_offset,
            align_on=args.align_on,
            reference_yaw_rate=ref,
        )
        result.metrics = res
        result.ground_truth = aligned_ground_truth(gt, res)
        from robot_state_estimator.tools.metrics import format_table

        print(format_table(res, title=args.title or f"metrics against {gt.source}"))
    if args.plots:
        from robot_state_estimator.tools import plot_series, plots

        files = plots.plot_replay(
            result,
            args.plots,
            title=args.title or plot_title(inp),
            truth=plot_series.simulated_truth(inp),  # the true biases of a simulated run (its run.yaml)
            nis_gate=settings.ekf.foot_gate_nis,
        )
        print(f"plots: {', '.join(str(f) for f in files)}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "input": str(inp),
            "description": description,
            "config": config_path,  # None: the built-in defaults
            "run": s,
            "metrics": res,
        }
        Path(args.json).write_text(json.dumps(to_jsonable(doc), indent=2))
    return result, res


def _copy_import_source(inp: Path, output: Path) -> None:
    """Copy the input's ``import_source.yaml`` into the output bag, so ``evaluate OUTPUT GT.csv`` finds the span
    (and the source) the replayed input came from."""
    from robot_state_estimator.tools.csv_import import read_import_source, write_import_source

    info = read_import_source(inp) if is_bag(inp) or inp.is_dir() else None
    if info is not None and output.is_dir():
        write_import_source(output, info)


def to_jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return None if not np.isfinite(x) else float(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, np.ndarray):
        return to_jsonable(x.tolist())
    return x


def run(args: argparse.Namespace) -> int:
    """``robot-state-estimator replay``: returns 0, or 2 with one line naming the problem on a known error (the
    format and exit code of the other sub-commands' errors, ``tools.cli``)."""
    from robot_state_estimator.estimation.errors import EstimationError
    from robot_state_estimator.tools.ground_truth import GroundTruthError

    try:
        run_cli(args)
    except (ReplayError, GroundTruthError, MetricsError, EstimationError) as exc:
        print(f"robot-state-estimator replay: error: {exc}", file=sys.stderr)
        return 2
    return 0
