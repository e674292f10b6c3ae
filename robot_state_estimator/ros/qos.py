"""QoS profiles of the node's inputs and outputs (one place, so the docs and the code agree).

- Sensor inputs (``imu/data``, ``joint_states``, foot forces): best effort, keep last ``depth``, volatile,
  like ``rclpy.qos.qos_profile_sensor_data``. A best-effort subscription is matched by both reliable and
  best-effort publishers, so drivers, ``ros2 bag play`` and Gazebo bridges all connect.
- Outputs (``odometry``, ``contact_wrench/<foot>``, ``contact_states``): reliable, keep last ``depth``,
  volatile (what ``ros2 topic echo`` and RViz expect; best-effort subscribers still match).
- ``robot_description`` input: reliable, transient local, depth 1, as robot_state_publisher publishes it.
- ``/tf``: reliable, volatile, keep last 100 (tf2_ros ``TransformBroadcaster`` default).
- ``/diagnostics``: reliable, keep last 10 (diagnostic_updater default).
- ``set_pose`` input: reliable, keep last 10, volatile (``command_qos``): a command must not be dropped, and
  ``ros2 topic pub``, RViz's pose tools and robot_localization users publish reliably (a best-effort publisher
  does not match it). Volatile: a pose sent before the node started is not applied late.
- ``~/reset`` service: rclpy's default service QoS.
"""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from robot_state_estimator.io.node_params import integer_default

#: Default depth of the sensor subscriptions (the ``qos_depth`` parameter's default).
DEFAULT_SENSOR_DEPTH = integer_default("qos_depth")


def sensor_qos(depth: int = DEFAULT_SENSOR_DEPTH) -> QoSProfile:
    """Best-effort, keep-last ``depth``, volatile: accepts reliable and best-effort publishers."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=int(depth),
        reliability=ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.VOLATILE,
    )


def output_qos(depth: int = 10) -> QoSProfile:
    """Reliable, keep-last ``depth``, volatile: odometry, wrenches, contact states."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=int(depth),
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def description_qos() -> QoSProfile:
    """Reliable, transient local, depth 1: receives the latched ``robot_description`` of
    robot_state_publisher even when it was published before this node started."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=1,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )


def tf_qos() -> QoSProfile:
    """Reliable, volatile, keep last 100: the QoS of tf2_ros ``TransformBroadcaster`` on ``/tf``."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=100,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def command_qos(depth: int = 10) -> QoSProfile:
    """Reliable, keep-last ``depth``, volatile: the ``set_pose`` command input (every pose sent is applied, in
    order; a best-effort publisher does not match)."""
    return output_qos(depth)


def diagnostics_qos() -> QoSProfile:
    """Reliable, keep last 10, volatile: what diagnostic_updater uses for ``/diagnostics``."""
    return output_qos(10)
