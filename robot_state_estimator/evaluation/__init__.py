"""Evaluation of estimated trajectories against ground truth, as a library: trajectories, time and spatial
alignment, error metrics (ATE, RPE, drift, velocity, contacts), NEES consistency, the metrics table with its caveats,
ground truth from files and bags, and plots.

This package imports ``common`` and ``io`` only (no estimator, no ROS, no ``tools``): the offline tools
(``robot-state-estimator replay`` / ``evaluate``) and the tests use it. The numeric API is re-exported here; the
modules that need more (``ground_truth``: bags through ``io``; ``plots``, ``plots_feet``, ``plots_compare``,
``plot_series``: matplotlib; ``comparison``: several runs in one table) are imported by name.

Modules:
    trajectory: :class:`Trajectory` (timed base poses, velocities, covariances) and rotation helpers.
    time_alignment: ground truth on the estimate's clock (offset, offset + rate, warp) from yaw rates.
    time_warp: the least squares of the warp (a piecewise-linear clock fitted on yaw).
    gyro_clock: a piecewise-linear clock of unstamped motion capture fitted on the gyroscope's rotation.
    gyro_reference: motion capture smoothed with the gyroscope, and the reference's own error (structure function).
    unstamped_nees: NEES per block against motion capture in another world (start-anchored, tilt, 1 s means).
    alignment: pairing samples (:func:`associate`) and spatial alignment (4-DoF, SE(3), Sim(3), origin).
    metrics: ATE, RPE, drift, velocity RMSE, contact precision/recall; :func:`evaluate` runs them all.
    consistency: NEES of one run and Bar-Shalom's Monte Carlo test over runs.
    report: :func:`format_table` and :func:`metric_caveats`.
    errors: :class:`MetricsError`, :class:`GroundTruthError`.
"""

from robot_state_estimator.evaluation.alignment import (
    SpatialAlignment,
    align_trajectory,
    associate,
    origin_alignment,
    umeyama_alignment,
    yaw_translation_alignment,
)
from robot_state_estimator.evaluation.consistency import (
    BlockConsistency,
    block_consistency,
    effective_samples,
    nees,
    nees_band,
    nees_values,
    state_nees,
    summary_line,
    time_average_band,
)
from robot_state_estimator.evaluation.errors import GroundTruthError, MetricsError
from robot_state_estimator.evaluation.metrics import (
    ate,
    contact_precision_recall,
    evaluate,
    final_drift,
    rpe,
    velocity_rmse,
)
from robot_state_estimator.evaluation.report import SHORT_PATH_M, SHORT_RANGE_S, format_table, metric_caveats
from robot_state_estimator.evaluation.time_alignment import (
    TIME_ALIGNMENTS,
    TimeAlignment,
    align_time,
    estimate_time_offset,
    estimate_time_offset_and_rate,
    fit_time_warp,
    reference_yaw,
    timing_information,
    yaw_rate_signal,
)
from robot_state_estimator.evaluation.trajectory import Trajectory, path_length, rot_z, wrap_angle, yaw_of

__all__ = [
    "SHORT_PATH_M",
    "SHORT_RANGE_S",
    "TIME_ALIGNMENTS",
    "BlockConsistency",
    "GroundTruthError",
    "MetricsError",
    "SpatialAlignment",
    "TimeAlignment",
    "Trajectory",
    "align_time",
    "align_trajectory",
    "associate",
    "ate",
    "block_consistency",
    "contact_precision_recall",
    "effective_samples",
    "estimate_time_offset",
    "estimate_time_offset_and_rate",
    "evaluate",
    "final_drift",
    "fit_time_warp",
    "format_table",
    "metric_caveats",
    "nees",
    "nees_band",
    "nees_values",
    "origin_alignment",
    "path_length",
    "reference_yaw",
    "rot_z",
    "rpe",
    "state_nees",
    "summary_line",
    "time_average_band",
    "timing_information",
    "umeyama_alignment",
    "velocity_rmse",
    "wrap_angle",
    "yaw_of",
    "yaw_rate_signal",
    "yaw_translation_alignment",
]
