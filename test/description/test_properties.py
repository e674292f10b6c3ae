"""Property tests (hypothesis) of the pose text parsers and the quaternion conventions against scipy.

Expected rotations come from ``scipy.spatial.transform.Rotation``: roll-pitch-yaw is fixed-axis X, Y, Z
(``R = Rz(yaw) Ry(pitch) Rx(roll)``, scipy's extrinsic ``"xyz"``), quaternions are ``x y z w`` (scipy's order,
ROS messages, SDFormat ``quat_xyzw``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from robot_state_estimator.common.samples import ImuSample
from robot_state_estimator.description.pose import PoseTextError, parse_pose, rpy_to_matrix, urdf_origin
from robot_state_estimator.estimation.ekf.numerics import quat_xyzw_from_matrix
from robot_state_estimator.io import bags, messages

ANGLE = st.floats(
    -4 * math.pi, 4 * math.pi, allow_nan=False, allow_subnormal=False
)  # beyond +-pi too: the text may say 7 rad
DEGREES = st.floats(-720.0, 720.0, allow_nan=False, allow_subnormal=False)
#: no subnormals: glibc's strtod sets ERANGE for them, so libsdformat's std::stod refuses them (out of range)
COORD = st.floats(-100.0, 100.0, allow_nan=False, allow_subnormal=False)
#: whitespace between numbers in SDFormat text (libsdformat reads the numbers with an istream)
SEP = st.sampled_from([" ", "  ", "\t", "\n", " \n\t "])
#: any non-zero 4-vector as a quaternion (scaled, either sign): normalised by the parser
QUAT = st.lists(st.floats(-10.0, 10.0, allow_nan=False, allow_subnormal=False), min_size=4, max_size=4).filter(
    lambda q: np.linalg.norm(q) > 1e-3
)


def text(values, sep: str) -> str:
    return sep.join(repr(float(v)) for v in values)  # repr: the exact double back


def assert_rotation(R: np.ndarray, expected: Rotation, tol: float = 1e-12) -> None:
    np.testing.assert_allclose(R, expected.as_matrix(), rtol=0, atol=tol)
    np.testing.assert_allclose(R @ R.T, np.eye(3), rtol=0, atol=tol)


@given(xyz=st.tuples(COORD, COORD, COORD), rpy=st.tuples(ANGLE, ANGLE, ANGLE), sep=SEP, lead=SEP, trail=SEP)
def test_sdf_euler_pose_is_fixed_axis_xyz(xyz, rpy, sep, lead, trail) -> None:
    X = parse_pose(lead + text((*xyz, *rpy), sep) + trail)
    assert_rotation(X.rotation, Rotation.from_euler("xyz", rpy))
    np.testing.assert_array_equal(X.translation, xyz)
    # the same with the explicit default attributes
    X2 = parse_pose(text((*xyz, *rpy), sep), rotation_format="euler_rpy", degrees="false")
    np.testing.assert_array_equal(X2.homogeneous, X.homogeneous)


@given(
    xyz=st.tuples(COORD, COORD, COORD),
    rpy_deg=st.tuples(DEGREES, DEGREES, DEGREES),
    true=st.sampled_from(["true", "1", " TRUE "]),
)
def test_sdf_euler_pose_in_degrees(xyz, rpy_deg, true) -> None:
    X = parse_pose(text((*xyz, *rpy_deg), " "), degrees=true)
    assert_rotation(X.rotation, Rotation.from_euler("xyz", rpy_deg, degrees=True))
    np.testing.assert_array_equal(X.translation, xyz)


@given(xyz=st.tuples(COORD, COORD, COORD), q=QUAT, sep=SEP)
def test_sdf_quat_xyzw_pose(xyz, q, sep) -> None:
    X = parse_pose(text((*xyz, *q), sep), rotation_format="quat_xyzw")
    assert_rotation(X.rotation, Rotation.from_quat(q))  # scipy normalises too
    np.testing.assert_array_equal(X.translation, xyz)
    with pytest.raises(PoseTextError, match="degrees"):
        parse_pose(text((*xyz, *q), sep), rotation_format="quat_xyzw", degrees="true")


@given(
    xyz=st.tuples(COORD, COORD, COORD), rpy=st.tuples(ANGLE, ANGLE, ANGLE), absent=st.sampled_from(["", "xyz", "rpy"])
)
def test_urdf_origin_is_fixed_axis_xyz(xyz, rpy, absent) -> None:
    X = urdf_origin(None if absent == "xyz" else text(xyz, " "), None if absent == "rpy" else text(rpy, "  "))
    assert_rotation(X.rotation, Rotation.from_euler("xyz", (0, 0, 0) if absent == "rpy" else rpy))
    np.testing.assert_array_equal(X.translation, (0, 0, 0) if absent == "xyz" else xyz)
    assert_rotation(rpy_to_matrix(*rpy), Rotation.from_euler("xyz", rpy))


def same_rotation_quat(q: np.ndarray, expected_xyzw: np.ndarray, tol: float) -> None:
    """Unit quaternions equal up to the sign (q and -q are the same rotation)."""
    assert abs(np.linalg.norm(q) - 1.0) < 1e-12
    sign = 1.0 if float(np.dot(q, expected_xyzw)) >= 0 else -1.0
    np.testing.assert_allclose(q, sign * expected_xyzw, rtol=0, atol=tol)


#: rotations with a half-turn and near-half-turn weight: the branch of Shepperd's method with trace <= 0
ROTVEC = st.one_of(
    st.tuples(ANGLE, ANGLE, ANGLE),
    st.tuples(st.floats(0.01, 1), st.floats(-1, 1), st.floats(-1, 1), st.floats(math.pi - 1e-3, math.pi)).map(
        lambda a: tuple(np.array(a[:3]) / np.linalg.norm(a[:3]) * a[3])
    ),
)


@given(rotvec=ROTVEC)
def test_quaternion_of_a_rotation_matrix(rotvec) -> None:
    """``quat_xyzw_from_matrix`` (the EKF's attitude output, reference path) is scipy's quaternion, up to sign."""
    rot = Rotation.from_rotvec(rotvec)
    q = np.array(quat_xyzw_from_matrix(rot.as_matrix().tolist()))
    same_rotation_quat(q, rot.as_quat(), 1e-12)


@given(q=QUAT, reported=st.booleans())
def test_imu_orientation_round_trip_through_the_message(q, reported) -> None:
    """ImuSample -> sensor_msgs/Imu -> ImuSample keeps ``x y z w`` in place (normalised)."""
    types = bags.default_types()
    sample = ImuSample(123, np.zeros(3), np.array([0.0, 0.0, 9.81]), np.array(q) if reported else None, "imu")
    back = messages.imu_sample_from_msg(messages.imu_msg(types, sample))
    if not reported:
        assert back.orientation_xyzw is None
        return
    expected = Rotation.from_quat(q)
    np.testing.assert_allclose(Rotation.from_quat(back.orientation_xyzw).as_matrix(), expected.as_matrix(), atol=1e-12)
    np.testing.assert_allclose(back.orientation_xyzw, np.array(q) / np.linalg.norm(q), rtol=0, atol=1e-15)


# ------------------------------------------------------------------------------- SDFormat number tokens

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.strtod.restype = ctypes.c_double
_libc.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]


def c_strtod_whole(token: str) -> float | None:
    """The token as C's ``strtod`` reads it (what libsdformat's ``std::stod`` calls; the C locale: Python never
    sets LC_NUMERIC), or None when strtod does not consume all of it, sets ERANGE (``stod`` then throws
    ``out_of_range``) or the token is not ASCII."""
    try:
        raw = token.encode("ascii")
    except UnicodeEncodeError:
        return None
    buf = ctypes.create_string_buffer(raw)
    end = ctypes.c_char_p()
    ctypes.set_errno(0)
    value = _libc.strtod(buf, ctypes.byref(end))
    if ctypes.get_errno() == errno.ERANGE:
        return None
    consumed = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buf)
    return value if raw and consumed == len(raw) else None


#: pieces of number-like tokens: digits (also non-ASCII ones), signs, points, exponents, separators and junk
TOKEN = st.one_of(
    st.text(alphabet="0123456789+-.eE_x\u0661\u00b2", min_size=1, max_size=8),
    st.sampled_from(["1e-400", "-2e-310", "0e-400", "1e400", "nan", "-Inf", "infinity", "0x10", "1abc", "1_0"]),
)
ASCII_SPACE = st.sampled_from([" ", "\t", "\n", "  "])


# the cases Python's float reads as other numbers (were 10.0, 1.0 and 0.0 before this test)
@example(numbers=["0.5"] * 6, token="1_0", at=0, sep=" ")
@example(numbers=["0.5"] * 6, token="\u0661", at=3, sep=" ")
@example(numbers=["0.5"] * 6, token="1e-400", at=5, sep=" ")
@example(numbers=["0.5"] * 6, token="1.5\u00a02", at=1, sep=" ")  # a no-break space is not C whitespace
@given(numbers=st.lists(COORD.map(repr), min_size=6, max_size=6), token=TOKEN, at=st.integers(0, 5), sep=ASCII_SPACE)
def test_sdf_pose_numbers_are_whole_c_numbers_or_refused(numbers, token, at, sep) -> None:
    """libsdformat splits the pose text at whitespace and reads each token with ``std::stod`` (C locale). A
    token that is a whole finite C number (not hex: refused here, a clear error) gives that number; any other
    token (``1_0``, ``1e``, ``\u0661``, ``1..2``) is refused, never read as another number (Python's ``float``
    would read ``1_0`` as 10 and ``\u0661`` as 1)."""
    tokens = [*numbers[:at], token, *numbers[at + 1 :]]
    values = [c_strtod_whole(t) for t in tokens]
    ok = all(v is not None and math.isfinite(v) for v in values) and not any("x" in t.lower() for t in tokens)
    text_ = sep.join(tokens)
    if ok:
        X = parse_pose(text_)
        np.testing.assert_array_equal(X.translation, values[:3])
        assert_rotation(X.rotation, Rotation.from_euler("xyz", values[3:]))
    else:
        with pytest.raises(PoseTextError):
            parse_pose(text_)
