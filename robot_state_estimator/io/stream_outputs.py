"""What ``io.stream.EstimatorStream`` outputs for one input (:class:`Outputs`), and the numbers of an estimate that
are output, packed in one float64 buffer (:func:`pack_estimate`): the finiteness guard of every output and the
values the node publishes (``ros/outputs``) and replay writes, in one place.

Layout (:func:`pack_estimate`): the first ``common.output_layout.PUBLISHED_SIZE`` numbers of the estimate's output
vector (position, quaternion, velocities, pose and twist covariances; offsets below), then per foot its wrench in the
foot frame and its force in the world (``FOOT_STRIDE`` numbers each).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from robot_state_estimator.common.output_layout import (
    FOOT_STRIDE,
    OMEGA_BASE_IN_BASE,
    P_WORLD_BASE,
    POSE_COVARIANCE,
    PUBLISHED_SIZE,
    QUAT_WORLD_BASE_XYZW,
    TWIST_COVARIANCE,
    V_BASE_IN_BASE,
)
from robot_state_estimator.common.samples import Estimate, Event

#: Offsets in the buffer of :func:`pack_estimate`: the output vector's first numbers (``common.output_layout``).
P_OFFSET: int = P_WORLD_BASE.start
Q_OFFSET: int = QUAT_WORLD_BASE_XYZW.start
V_OFFSET: int = V_BASE_IN_BASE.start
W_OFFSET: int = OMEGA_BASE_IN_BASE.start
POSE_COV_OFFSET: int = POSE_COVARIANCE.start
TWIST_COV_OFFSET: int = TWIST_COVARIANCE.start
FEET_OFFSET: int = PUBLISHED_SIZE
# Per foot: wrench in the foot frame (6), then force in the world (3): FOOT_STRIDE numbers, the estimate's per-foot
# numbers (common.output_layout.FOOT_FIELDS, Estimate.feet_vector).


def pack_estimate(est: Estimate) -> np.ndarray | None:
    """All numbers of ``est`` that are output, in one new float64 buffer; None when one is not finite.

    Layout: position (3), quaternion xyzw (4), linear velocity (3), angular velocity (3), pose covariance
    (36, row-major), twist covariance (36), then per foot its wrench in the foot frame (6) and its force in
    the world (3). An :class:`Estimate` gives them in one new array (``Estimate.published_vector``: its output
    vector's first numbers and its per-foot numbers, in one copy from the core's step buffer where the estimate is over
    it, no per-foot state made); then one finiteness test: the finiteness guard and, for the node, the values to
    publish.

    Raises:
        ValueError: an array of the estimate has an unexpected size.
    """
    published = getattr(est, "published_vector", None)  # an Estimate's: the core's output vector's numbers, its feet's
    if published is not None:
        buf: np.ndarray = published()  # (float64: Estimate.output_vector's and feet_vector's)
        expected = FEET_OFFSET + FOOT_STRIDE * ((len(buf) - FEET_OFFSET) // FOOT_STRIDE)
    else:  # an estimate-like object: from its fields
        feet = est.feet
        vector = getattr(est, "output_vector", None)
        if vector is not None:
            head = vector()[:FEET_OFFSET]
        else:
            head = np.concatenate([est.p_world_base, est.quat_world_base_xyzw, est.v_base_in_base,
                                   est.omega_base_in_base, np.ravel(est.pose_covariance),
                                   np.ravel(est.twist_covariance)])  # fmt: skip
        parts = [head]
        for foot in feet:
            parts.append(foot.wrench_in_foot)
            parts.append(foot.force_in_world)
        buf = np.concatenate(parts).astype(np.float64, copy=False)
        expected = FEET_OFFSET + FOOT_STRIDE * len(feet)
    if buf.shape != (expected,):
        raise ValueError(f"estimate arrays have unexpected sizes ({buf.size} numbers, expected {expected})")
    # all finite: then so is the sum of squares, unless it overflows (then the test of each number decides)
    if not math.isfinite(buf.dot(buf)) and not np.isfinite(buf).all():
        return None
    return buf


_concatenate = np.concatenate


class Outputs(NamedTuple):
    """What one input produced.

    Attributes:
        estimate: the (finite) estimate the core returned, or None.
        buf: its :func:`pack_estimate` buffer (None without an estimate).
        odometry: publish odometry and TF for ``estimate``.
        contacts: publish wrenches and contact states for ``estimate`` (only when it has feet).
        notes: what to log, in order: the adapter's own causes (``Event`` with a cause key) and the core's
            events; empty on the normal path.
        sample: the sample that reached the core (after the frame alias), None when the input was skipped.
    """

    estimate: Estimate | None = None
    buf: np.ndarray | None = None
    odometry: bool = False
    contacts: bool = False
    notes: tuple[Event, ...] | list[Event] = ()
    sample: Any = None


__all__ = [
    "FEET_OFFSET",
    "FOOT_STRIDE",
    "POSE_COV_OFFSET",
    "P_OFFSET",
    "Q_OFFSET",
    "TWIST_COV_OFFSET",
    "V_OFFSET",
    "W_OFFSET",
    "Outputs",
    "pack_estimate",
]
