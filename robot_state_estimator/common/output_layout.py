"""The estimator's output vector: one (91,) float64 layout, written here once.

``BaseEkf.output_vector`` (and the compiled steps, which the tests compare with it to 1e-12) fill it,
:meth:`~robot_state_estimator.common.samples.Estimate.from_output_vector` reads an :class:`Estimate` out of it,
``io.stream.pack_estimate`` starts the published buffer with its first ``PUBLISHED_SIZE`` numbers and the replay
log keeps one per estimate. Every entry is named as the :class:`Estimate` field it becomes. The per-foot numbers of a
joint step (:meth:`~robot_state_estimator.common.samples.Estimate.feet_vector`) follow :data:`FOOT_FIELDS`, one
block of :data:`FOOT_STRIDE` numbers per foot: the compiled joint step writes them so, the published buffer ends with
them.

Frames and units: positions in ``odom`` (W), velocities in the base frame B, biases in the IMU frame S;
covariances 6 x 6 row-major in ROS conventions (pose: x, y, z, then rotation about the fixed W axes; twist:
linear then angular velocity, both in B).
"""

from __future__ import annotations

#: Estimate field -> (slice of the output vector, shape of the field or None for a vector), in vector order.
OUTPUT_FIELDS: dict[str, tuple[slice, tuple[int, int] | None]] = {
    "p_world_base": (slice(0, 3), None),  # m, in W
    "quat_world_base_xyzw": (slice(3, 7), None),  # x y z w
    "v_base_in_base": (slice(7, 10), None),  # m/s, in B
    "omega_base_in_base": (slice(10, 13), None),  # rad/s, in B, bias corrected
    "pose_covariance": (slice(13, 49), (6, 6)),
    "twist_covariance": (slice(49, 85), (6, 6)),
    "accel_bias": (slice(85, 88), None),  # m/s^2, in S
    "gyro_bias": (slice(88, 91), None),  # rad/s, in S
}
#: Estimate field -> slice of the output vector.
OUTPUT_SLICES: dict[str, slice] = {name: sl for name, (sl, _) in OUTPUT_FIELDS.items()}
#: length of the output vector
OUTPUT_SIZE = 91

P_WORLD_BASE = OUTPUT_SLICES["p_world_base"]
QUAT_WORLD_BASE_XYZW = OUTPUT_SLICES["quat_world_base_xyzw"]
V_BASE_IN_BASE = OUTPUT_SLICES["v_base_in_base"]
OMEGA_BASE_IN_BASE = OUTPUT_SLICES["omega_base_in_base"]
POSE_COVARIANCE = OUTPUT_SLICES["pose_covariance"]
TWIST_COVARIANCE = OUTPUT_SLICES["twist_covariance"]
ACCEL_BIAS = OUTPUT_SLICES["accel_bias"]
GYRO_BIAS = OUTPUT_SLICES["gyro_bias"]

#: The numbers the node publishes (odometry: pose, twist and their covariances) are the vector's first ones.
PUBLISHED_SIZE = TWIST_COVARIANCE.stop

#: FootState field -> slice of a foot's block in the per-foot vector (``Estimate.feet_vector``: one block per foot, in
#: foot order): its wrench in the foot frame [force N, torque N m], then its force in W (N).
FOOT_FIELDS: dict[str, slice] = {
    "wrench_in_foot": slice(0, 6),
    "force_in_world": slice(6, 9),
}
#: where a foot's wrench and force start in its block, and the block's length
FOOT_WRENCH = FOOT_FIELDS["wrench_in_foot"].start
FOOT_FORCE = FOOT_FIELDS["force_in_world"].start
FOOT_STRIDE = FOOT_FIELDS["force_in_world"].stop
