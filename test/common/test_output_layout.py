"""The output-vector layout is written once (``common/output_layout.py``) and means what its documentation says.

The expected offsets below are the documented layout written out by hand (position 3, quaternion xyzw 4, linear
velocity 3, angular velocity 3, pose covariance 36, twist covariance 36, accelerometer bias 3, gyroscope bias 3),
not read back from the module.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from robot_state_estimator.common import output_layout
from robot_state_estimator.common.samples import Estimate, FootState
from robot_state_estimator.io import stream

#: field -> (start, stop) of the documented layout
DOCUMENTED = {
    "p_world_base": (0, 3),
    "quat_world_base_xyzw": (3, 7),
    "v_base_in_base": (7, 10),
    "omega_base_in_base": (10, 13),
    "pose_covariance": (13, 49),
    "twist_covariance": (49, 85),
    "accel_bias": (85, 88),
    "gyro_bias": (88, 91),
}


def test_layout_is_the_documented_one_contiguous_and_names_the_estimate_fields() -> None:
    assert {k: (sl.start, sl.stop) for k, sl in output_layout.OUTPUT_SLICES.items()} == DOCUMENTED
    assert list(output_layout.OUTPUT_FIELDS) == list(DOCUMENTED)  # in vector order
    spans = list(DOCUMENTED.values())
    assert spans[0][0] == 0 and spans[-1][1] == output_layout.OUTPUT_SIZE == 91
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    for name, (sl, shape) in output_layout.OUTPUT_FIELDS.items():
        size = sl.stop - sl.start
        assert (size if shape is None else int(np.prod(shape))) == size, name
    arrays = {f.name for f in dataclasses.fields(Estimate)} - {"stamp_ns", "feet", "status"}
    assert arrays == set(output_layout.OUTPUT_FIELDS)


def test_estimate_reads_and_writes_the_vector_in_that_layout() -> None:
    vector = np.arange(91.0)
    est = Estimate.from_output_vector(5, vector)
    np.testing.assert_array_equal(est.p_world_base, [0, 1, 2])
    np.testing.assert_array_equal(est.quat_world_base_xyzw, [3, 4, 5, 6])
    np.testing.assert_array_equal(est.v_base_in_base, [7, 8, 9])
    np.testing.assert_array_equal(est.omega_base_in_base, [10, 11, 12])
    np.testing.assert_array_equal(est.pose_covariance, np.arange(13.0, 49.0).reshape(6, 6))
    np.testing.assert_array_equal(est.twist_covariance, np.arange(49.0, 85.0).reshape(6, 6))
    np.testing.assert_array_equal(est.accel_bias, [85, 86, 87])
    np.testing.assert_array_equal(est.gyro_bias, [88, 89, 90])
    # an Estimate made from its fields (no stored vector) writes the same vector
    fields = {name: np.arange(float(a), float(b)) for name, (a, b) in DOCUMENTED.items()}
    fields["pose_covariance"] = fields["pose_covariance"].reshape(6, 6)
    fields["twist_covariance"] = fields["twist_covariance"].reshape(6, 6)
    np.testing.assert_array_equal(Estimate(stamp_ns=5, **fields).output_vector(), vector)
    replaced = dataclasses.replace(est, stamp_ns=6)  # made through __init__: from its fields too
    assert replaced.output_vector() is not vector
    np.testing.assert_array_equal(replaced.output_vector(), vector)


def test_published_buffer_starts_with_the_vector_then_the_feet() -> None:
    assert (stream.P_OFFSET, stream.Q_OFFSET, stream.V_OFFSET, stream.W_OFFSET) == (0, 3, 7, 10)
    assert (stream.POSE_COV_OFFSET, stream.TWIST_COV_OFFSET, stream.FEET_OFFSET) == (13, 49, 85)
    foot = FootState("FL_foot", True, np.array([1.0, 2.0, 3.0]), np.arange(100.0, 106.0))
    est = Estimate.from_output_vector(5, np.arange(91.0), (foot,))
    buf = stream.pack_estimate(est)
    assert buf is not None and buf.shape == (85 + stream.FOOT_STRIDE,)
    np.testing.assert_array_equal(buf[:85], np.arange(85.0))
    np.testing.assert_array_equal(buf[85:], [100, 101, 102, 103, 104, 105, 1, 2, 3])  # wrench in foot, force in W


def test_per_foot_numbers_are_the_documented_block() -> None:
    """Per foot: its wrench in the foot frame (force, torque: 6), then its force in the world (3), named as the
    FootState fields; the published buffer's feet use the same block."""
    assert {k: (sl.start, sl.stop) for k, sl in output_layout.FOOT_FIELDS.items()} == {
        "wrench_in_foot": (0, 6),
        "force_in_world": (6, 9),
    }
    assert output_layout.FOOT_STRIDE == stream.FOOT_STRIDE == 9
    assert set(output_layout.FOOT_FIELDS) <= {f.name for f in dataclasses.fields(FootState)}
    foot = FootState("FL_foot", True, np.array([1.0, 2.0, 3.0]), np.arange(100.0, 106.0))
    est = Estimate(0, *(np.zeros(n) for n in (3, 4, 3, 3)), np.zeros((6, 6)), np.zeros((6, 6)), np.zeros(3),
                   np.zeros(3), (foot, foot))  # fmt: skip
    np.testing.assert_array_equal(est.feet_vector(), [100, 101, 102, 103, 104, 105, 1, 2, 3] * 2)
