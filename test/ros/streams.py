"""Synthetic input streams for the node tests: a Go1 standing still (IMU at rest, joints at a standing
pose), and a catalogue of bad messages. Built with the shared builders of ``io.messages``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.io import messages
from robot_state_estimator.ros.message_types import TYPES

GO1_JOINTS = tuple(f"{leg}_{j}_joint" for leg in ("FL", "FR", "RL", "RR") for j in ("hip", "thigh", "calf"))
GO1_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
STAND_Q = np.tile([0.0, 0.8, -1.6], 4)
IMU_FRAME = "imu_sensor"


def imu_msg(stamp_ns: int, *, frame_id: str = IMU_FRAME, acc: Any = (0.0, 0.0, 9.81), gyro: Any = (0, 0, 0)) -> Any:
    sample = ImuSample(stamp_ns, np.asarray(gyro, float), np.asarray(acc, float), frame_id=frame_id)
    return messages.imu_msg(TYPES, sample)


def joint_msg(stamp_ns: int, *, names: tuple[str, ...] = GO1_JOINTS, position: Any = None, effort: bool = True) -> Any:
    n = len(names)
    pos = STAND_Q[:n] if position is None else np.asarray(position, float)
    sample = JointSample(stamp_ns, names, pos, np.zeros(n), np.resize([0.0, -2.0, 5.0], n) if effort else None)
    return messages.joint_state_msg(TYPES, sample)


@dataclass(frozen=True)
class Step:
    """One message to publish: ``kind`` is "imu" or "joints"."""

    kind: str
    stamp_ns: int
    msg: Any


def standing(start_ns: int, duration_s: float, *, rate_hz: float = 500.0) -> Iterator[Step]:
    """IMU then joints at every stamp, a robot standing still."""
    dt_ns = round(1e9 / rate_hz)
    for k in range(int(duration_s * rate_hz)):
        t = start_ns + k * dt_ns
        yield Step("imu", t, imu_msg(t))
        yield Step("joints", t, joint_msg(t))


def bad_messages(stamp_ns: int) -> list[tuple[str, str, Any]]:
    """``(expected cause key, kind, message)`` for each kind of bad input the node must survive."""
    nan_imu = imu_msg(stamp_ns, acc=(float("nan"), 0.0, 9.81))
    inf_gyro = imu_msg(stamp_ns, gyro=(0.0, float("inf"), 0.0))
    wrong_frame = imu_msg(stamp_ns, frame_id="camera_link")
    zero_stamp = imu_msg(0)
    short = joint_msg(stamp_ns)
    short.position = short.position[:-1].tolist() if hasattr(short.position, "tolist") else list(short.position)[:-1]
    nan_joint = joint_msg(stamp_ns, position=np.r_[STAND_Q[:-1], np.nan])
    unknown = joint_msg(stamp_ns, names=(*GO1_JOINTS, "gripper_joint"), position=np.r_[STAND_Q, 0.0])
    missing = joint_msg(stamp_ns, names=GO1_JOINTS[:-1], position=STAND_Q[:-1])
    wrong_effort = joint_msg(stamp_ns)
    wrong_effort.effort = [1.0, 2.0]
    empty_names = joint_msg(stamp_ns)
    empty_names.name, empty_names.position, empty_names.velocity, empty_names.effort = [], [], [], []
    return [
        ("imu_not_finite", "imu", nan_imu),
        ("imu_not_finite", "imu", inf_gyro),
        ("imu_frame_id", "imu", wrong_frame),
        ("stamp_zero", "imu", zero_stamp),
        ("joint_bad_lengths", "joints", short),
        ("joint_not_finite", "joints", nan_joint),
        ("joint_unknown_names", "joints", unknown),
        ("joint_missing_names", "joints", missing),
        ("joint_bad_lengths", "joints", wrong_effort),
        ("joint_bad_message", "joints", empty_names),
    ]
