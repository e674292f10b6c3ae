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

Modules: ``options`` (node parameters, :class:`ReplayOptions`, settings and overrides), ``inputs`` (the topics a
replay reads, their types, the bulk converters), ``driver`` (:func:`replay`: the loop over the input,
:class:`ReplayDriver`), ``log`` (:class:`EstimateLog`), ``output_bag`` (:class:`OutputBag`), ``result``
(:class:`ReplayResult`), ``truth`` (metrics against ground truth), ``cli`` (the command line: ``add_arguments``,
``run``). The names below are re-exported from them.
"""

from robot_state_estimator.io.node_params import NODE_ONLY_PARAMETERS
from robot_state_estimator.tools.replay.cli import (
    add_arguments,
    check_arguments,
    check_output_paths,
    plot_title,
    run,
    run_cli,
    settings_source_line,
    to_jsonable,
)
from robot_state_estimator.tools.replay.driver import CORE_SKIP_EVENTS, ReplayDriver, replay
from robot_state_estimator.tools.replay.errors import ReplayError
from robot_state_estimator.tools.replay.log import EstimateLog
from robot_state_estimator.tools.replay.options import (
    DEFAULT_OUTPUT_COMPRESSION,
    NODE_DEFAULTS,
    NODE_PARAMETER_NAMES,
    OUTPUT_GROUPS,
    ReplayOptions,
    apply_overrides,
    check_node_params,
    check_robot,
    resolve_config,
    resolve_description,
    split_config,
)
from robot_state_estimator.tools.replay.output_bag import OutputBag
from robot_state_estimator.tools.replay.result import STEP_BACK_WARN_S, STREAM_LABELS, ReplayCpu, ReplayResult
from robot_state_estimator.tools.replay.truth import (
    aligned_ground_truth,
    alignment_reference,
    auto_time_alignment,
    evaluate_replay,
    ground_truth_time_span,
    nees_is_meaningful,
)

__all__ = [
    "CORE_SKIP_EVENTS",
    "DEFAULT_OUTPUT_COMPRESSION",
    "NODE_DEFAULTS",
    "NODE_ONLY_PARAMETERS",
    "NODE_PARAMETER_NAMES",
    "OUTPUT_GROUPS",
    "STEP_BACK_WARN_S",
    "STREAM_LABELS",
    "EstimateLog",
    "OutputBag",
    "ReplayCpu",
    "ReplayDriver",
    "ReplayError",
    "ReplayOptions",
    "ReplayResult",
    "add_arguments",
    "aligned_ground_truth",
    "alignment_reference",
    "apply_overrides",
    "auto_time_alignment",
    "check_arguments",
    "check_node_params",
    "check_output_paths",
    "check_robot",
    "evaluate_replay",
    "ground_truth_time_span",
    "nees_is_meaningful",
    "plot_title",
    "replay",
    "resolve_config",
    "resolve_description",
    "run",
    "run_cli",
    "settings_source_line",
    "split_config",
    "to_jsonable",
]
