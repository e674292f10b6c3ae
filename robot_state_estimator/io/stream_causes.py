"""The cause keys of ``io.stream``'s own rules (the stream's module doc says each rule), and the core events that refuse
no sample: written once for the stream, the node's diagnostics (``ros.diagnostics.REJECT_KEYS``) and replay. The
message rules' keys are ``io.sample_rules.MESSAGE_CAUSES``."""

from __future__ import annotations

#: Cause keys of the stream's own rules (module doc; the node's ``rejected.<cause>`` diagnostics, with the message
#: rules' ``io.sample_rules.MESSAGE_CAUSES``): a sample skipped, or a reset by the adapter.
STAMP_ZERO = "stamp_zero"
STAMP_GAP = "stamp_gap"
STAMP_FUTURE = "stamp_future"
STAMP_PAST = "stamp_past"
IMU_FRAME_ID = "imu_frame_id"
JOINT_MISSING_NAMES = "joint_missing_names"
JOINT_UNKNOWN_NAMES = "joint_unknown_names"
JOINT_EFFORT_MISSING = "joint_effort_missing"
ESTIMATE_NOT_FINITE = "estimate_not_finite"
CORE_ERROR = "core_error"
STREAM_CAUSES: tuple[str, ...] = (
    STAMP_ZERO,
    STAMP_GAP,
    STAMP_FUTURE,
    STAMP_PAST,
    IMU_FRAME_ID,
    JOINT_MISSING_NAMES,
    JOINT_UNKNOWN_NAMES,
    JOINT_EFFORT_MISSING,
    ESTIMATE_NOT_FINITE,
    CORE_ERROR,
)

#: Core events of level warn or error that refuse no sample (the sample was used): the node logs them but does
#: not count them as rejected samples (``rejected.<cause>``); resets are counted as resets. ``imu_gap`` (a stamp
#: difference above ``ekf.max_dt_s``: the sample is used, the filter re-anchors its clock) is what samples lost
#: before the node (a queue overflowing under CPU load) look like: they are counted as losses (``imu_lost``).
NOT_REJECTIONS: frozenset[str] = frozenset(
    {
        "reset",
        "filter_diverged",
        "initialized_moving",
        "contacts_from_kinematics",
        "contact_source_unavailable",
        "foot_wrench_stale",
        "contact_schedule_disagrees",
        "imu_gap",
        "contact_source",
    }
)


__all__ = [
    "CORE_ERROR",
    "ESTIMATE_NOT_FINITE",
    "IMU_FRAME_ID",
    "JOINT_EFFORT_MISSING",
    "JOINT_MISSING_NAMES",
    "JOINT_UNKNOWN_NAMES",
    "NOT_REJECTIONS",
    "STAMP_FUTURE",
    "STAMP_GAP",
    "STAMP_PAST",
    "STAMP_ZERO",
    "STREAM_CAUSES",
]
