"""ROS messages <-> core types: the names the node, replay, the simulator, the tools and the tests import.

Works for both message implementations this project meets, rclpy messages (the node) and rosbags message
dataclasses (bags read and written offline), because both have the same field names. The work is done in four
modules, one job each; this module gathers their public names (import from here, or from the module itself):

- ``io.message_types``: the message types' interface names (``TYPE_NAMES``) and the classes to build them with
  (``MessageTypes``, ``rosbags_types``);
- ``io.sample_rules``: what an input message must satisfy to become a core sample, under which cause key it is
  refused (``MessageError.cause``) and how its values are converted, written once for the three input paths (this
  message path, the node's raw CDR path ``io.cdr_samples`` and replay's bulk path ``io.bulk_samples``);
- ``io.message_readers``: messages -> samples (through the rules) and arrays (odometry, ``set_pose``'s pose, the
  contact states read back);
- ``io.message_builders``: samples and estimates -> messages (the simulator's bags, the node's outputs), and the
  float order of the odometry and TF in the estimate's output vector.

Conventions: REP-103 frames, REP-105 ``odom -> base_link``, REP-145 IMU covariances (element 0 = -1 for a field
that is not reported), nav_msgs/Odometry covariances row-major 6x6 (x, y, z, rot x, rot y, rot z), quaternions
``x y z w`` in messages and in ``*_xyzw`` arrays.
"""

from __future__ import annotations

from robot_state_estimator.io.message_builders import (
    ODOMETRY_FROM_OUTPUT,
    TRANSFORM_FROM_OUTPUT,
    clock_msg,
    contact_schedule_msg,
    contact_states_msg,
    contact_status_fields,
    foot_force_msg,
    foot_wrench_msg,
    header,
    imu_msg,
    joint_state_msg,
    odom_transform_msg,
    odometry_msg,
    tf_message,
    transform_stamped_msg,
    wrench_stamped_msg,
)
from robot_state_estimator.io.message_readers import (
    QUATERNION_NORM_TOLERANCE,
    SCHEDULE_TYPE,
    contact_normal_forces_from_msg,
    contact_schedule_from_msg,
    contact_states_from_msg,
    foot_force_sample_from_msg,
    foot_wrench_sample_from_msg,
    imu_sample_from_msg,
    joint_sample_from_msg,
    odometry_arrays_from_msg,
    pose_arrays_from_msg,
)
from robot_state_estimator.io.message_types import TYPE_NAMES, MessageTypes, rosbags_types
from robot_state_estimator.io.sample_rules import (
    MessageError,
    check_joint_names,
    imu_sample_from_values,
    joint_sample_from_arrays,
)

__all__ = [
    "ODOMETRY_FROM_OUTPUT",
    "QUATERNION_NORM_TOLERANCE",
    "SCHEDULE_TYPE",
    "TRANSFORM_FROM_OUTPUT",
    "TYPE_NAMES",
    "MessageError",
    "MessageTypes",
    "check_joint_names",
    "clock_msg",
    "contact_normal_forces_from_msg",
    "contact_schedule_from_msg",
    "contact_schedule_msg",
    "contact_states_from_msg",
    "contact_states_msg",
    "contact_status_fields",
    "foot_force_msg",
    "foot_force_sample_from_msg",
    "foot_wrench_msg",
    "foot_wrench_sample_from_msg",
    "header",
    "imu_msg",
    "imu_sample_from_msg",
    "imu_sample_from_values",
    "joint_sample_from_arrays",
    "joint_sample_from_msg",
    "joint_state_msg",
    "odom_transform_msg",
    "odometry_arrays_from_msg",
    "odometry_msg",
    "pose_arrays_from_msg",
    "rosbags_types",
    "tf_message",
    "transform_stamped_msg",
    "wrench_stamped_msg",
]
