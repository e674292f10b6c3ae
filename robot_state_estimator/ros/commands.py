"""The node's commands, ``set_pose`` and ``~/reset``: what they check, what they do to the estimator and what they
answer. The node's callbacks log the outcome and count refusals (``rejected.<key>``).

- ``set_pose`` (geometry_msgs/PoseWithCovarianceStamped; robot_localization's topic of the same name and meaning)
  re-seats the pose of ``base_frame`` in ``odom_frame`` at the filter's current stamp
  (``RobotStateEstimator.set_pose``); ``header.frame_id`` must be ``odom_frame`` or empty, the stamp is not used.
  Refused: no description yet (``no_description``), another frame (``set_pose_frame_id``), a non-finite pose, a
  quaternion that is not unit (to 1e-3), a covariance that is not symmetric positive semi-definite
  (``set_pose_invalid``), a filter not initialised yet (``set_pose_uninitialized``).
- ``~/reset`` (std_srvs/Trigger) resets the filter as time going backwards does; refused while no description is
  loaded (``reset_refused``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from robot_state_estimator.common.samples import Event
from robot_state_estimator.io import messages
from robot_state_estimator.io.stream_causes import CORE_ERROR
from robot_state_estimator.ros.diagnostics import NO_DESCRIPTION

#: The answer of ``~/reset`` while no description is loaded.
RESET_REFUSED = "nothing to reset: no robot description loaded yet (the estimator starts when one is loaded)"


@dataclass(frozen=True)
class SetPoseOutcome:
    """What a ``set_pose`` message did.

    Attributes:
        key: "" when the pose was set; else the cause (``no_description``, ``set_pose_frame_id``,
            ``set_pose_invalid``, ``set_pose_uninitialized``: a warning; ``core_error``: an error).
        message: the log line.
        note: what the node keeps as its last command note (the message, but for ``core_error``).
        estimate: the estimate at the new pose (None when refused).
    """

    key: str
    message: str
    note: str
    estimate: Any = None


def _refused(key: str, message: str) -> SetPoseOutcome:
    return SetPoseOutcome(key, message, message)


def set_pose(est: Any, msg: Any, *, odom_frame: str, base_frame: str, init_imu_samples: int) -> SetPoseOutcome:
    """Apply one ``set_pose`` message to the estimator ``est`` (None before a description is loaded).

    Args:
        est: the ``RobotStateEstimator`` or None.
        msg: the ``PoseWithCovarianceStamped`` (rclpy or rosbags message).
        odom_frame: the accepted ``header.frame_id`` (an empty one means it too).
        base_frame: the name of the base in the outputs (for the messages).
        init_imu_samples: ``ekf.init_imu_samples`` (for the message of an uninitialised filter).

    Returns:
        the outcome; never raises (an unexpected error of the core is ``core_error``, the pose unchanged).
    """
    if est is None:
        return _refused(NO_DESCRIPTION, "set_pose ignored: no robot description yet")
    frame = msg.header.frame_id
    if frame and frame != odom_frame:
        return _refused(
            "set_pose_frame_id",
            f"set_pose ignored: header.frame_id {frame!r} is not the odom_frame {odom_frame!r} (the pose of "
            f"{base_frame!r} in {odom_frame!r} is expected; an empty frame_id means {odom_frame!r})",
        )
    try:
        p_world_base, R_world_base = messages.pose_arrays_from_msg(msg.pose.pose)
        estimate = est.set_pose(p_world_base, R_world_base, np.asarray(msg.pose.covariance, dtype=float))
    except ValueError as exc:
        return _refused("set_pose_invalid", f"set_pose ignored: {exc}")
    except Exception as exc:  # the node never dies on one message (as core_error for the sensor inputs)
        text = f"set_pose failed ({type(exc).__name__}: {exc}); the pose is unchanged"
        return SetPoseOutcome(CORE_ERROR, text, f"set_pose failed: {exc}")
    if estimate is None:
        return _refused(
            "set_pose_uninitialized",
            "set_pose ignored: the filter is not initialised yet (it initialises from the first "
            f"{init_imu_samples} IMU samples; send the pose again once odometry is published)",
        )
    x, y, z = p_world_base.tolist()
    yaw = float(Rotation.from_matrix(R_world_base).as_euler("ZYX")[0])
    note = (
        f"pose set at stamp {estimate.stamp_ns} ns: {base_frame} at ({x:.3f}, {y:.3f}, {z:.3f}) m in "
        f"{odom_frame}, yaw {yaw:.4f} rad"
    )
    return SetPoseOutcome("", note, note, estimate)


def reset(est: Any, stream: Any, ekf_settings: Any, reason: str) -> tuple[list[Event], str]:
    """Reset the estimator ``est`` as time going backwards does, and restart the outputs of ``stream``
    (``io.stream.EstimatorStream``: the next estimate is output whatever its stamp).

    Args:
        est: the ``RobotStateEstimator``.
        stream: its ``EstimatorStream``.
        ekf_settings: the ``EkfSettings`` in use (what the answer says about the initialisation).
        reason: why (the core's ``reset`` event and the diagnostics' ``last_reset_reason`` say it).

    Returns:
        ``(events, answer)``: the core's events (its ``reset`` event, counted in ``stream.events`` already; the
        node logs them now rather than at the next sample) and the service's answer.
    """
    est.reset(reason)
    stream.restart_outputs()
    events = est.pop_events()
    stream.events.update(event.key for event in events)
    es = ekf_settings
    moving = (
        f", or from a moving robot after ekf.init_timeout_s = {es.init_timeout_s:g} s of IMU time"
        if es.init_timeout_s > 0.0
        else ""
    )
    answer = (
        f"estimator reset ({reason}): it initialises again from the next {es.init_imu_samples} IMU samples of "
        f"a robot standing still{moving} (roll and pitch from gravity, yaw 0, position ekf.initial_position "
        f"{list(es.initial_position)}, the height from the stance feet); odometry resumes then"
    )
    return events, answer


__all__ = ["RESET_REFUSED", "SetPoseOutcome", "reset", "set_pose"]
