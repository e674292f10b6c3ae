"""io/sample_rules.py: the one-message and the N-row form of each input rule agree, and refuse under the right key.

Hypothesis draws the values of a message (non-finite numbers, zero, tiny and unreported quaternions, missing,
duplicate and extra names, lengths that do not match, schedule values other than 0 and 1) and checks, for each
rule: the one-message form makes a sample exactly where the N-row form (on a batch of such rows) says the row
passes, with the same float64 bit patterns; where it refuses, the cause key is the one the rule states (worked
out here from REP-145 and the rule's order of checks, not from the code under test).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from robot_state_estimator.io import sample_rules as R
from robot_state_estimator.io.cdr import Ragged

_floats = st.one_of(
    st.floats(-1e3, 1e3, width=64), st.sampled_from([0.0, -0.0, 1.0, -1.0, math.nan, math.inf, -math.inf, 1e-9])
)
_names = st.sampled_from([(), ("a",), ("a", "b", "c"), ("a", "a"), ("b", "a", "b")])


def _bits(a: Any) -> list[int]:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64).tolist()


def _ragged(rows: list[np.ndarray]) -> Ragged:
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([r.size for r in rows], out=offsets[1:])
    values = np.concatenate(rows) if rows else np.zeros(0)
    return Ragged(values=np.asarray(values, dtype=np.float64), offsets=offsets)


def _one(make: Any) -> tuple[Any, str | None]:
    """(sample, None) or (None, cause key) of one call of a one-message form."""
    try:
        return make(), None
    except R.MessageError as exc:
        return None, exc.cause


# ----------------------------------------------------------------------------------------------------- IMU

_quats = st.one_of(
    st.lists(_floats, min_size=4, max_size=4),
    st.sampled_from([[0.0, 0.0, 0.0, 0.0], [-0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1e-8, 0.0, 0.0, 0.0]]),
)
_imu_rows = st.tuples(
    st.lists(_floats, min_size=3, max_size=3),
    st.lists(_floats, min_size=3, max_size=3),
    _quats,
    st.sampled_from([R.NOT_REPORTED, 0.0, 0.01]),
)


@given(st.lists(_imu_rows, min_size=1, max_size=8))
def test_imu_forms_agree_and_refuse_under_the_rules_key(rows: list[Any]) -> None:
    ok, reported, quat = R.imu_rows(
        np.array([r[0] for r in rows]),
        np.array([r[1] for r in rows]),
        np.array([r[2] for r in rows]),
        np.array([r[3] for r in rows]),
    )
    for i, (w, f, q, cov0) in enumerate(rows):
        sample, cause = _one(lambda: R.imu_sample_from_values(7, "imu", tuple(w), tuple(f), tuple(q), cov0))  # noqa: B023
        is_reported = cov0 != -1.0 and any(x != 0.0 for x in q)  # REP-145; NaN counts as reported
        norm = math.sqrt(sum(x * x for x in q))
        if not all(map(math.isfinite, [*w, *f])):
            assert cause == R.IMU_NOT_FINITE
        elif is_reported and not (math.isfinite(norm) and norm >= 1e-6):
            assert cause == R.IMU_BAD_MESSAGE
        else:
            assert cause is None
        assert bool(ok[i]) == (sample is not None)
        if sample is None:
            continue
        assert bool(reported[i]) == is_reported == (sample.orientation_xyzw is not None)
        assert _bits(sample.angular_velocity) == _bits(w) and _bits(sample.linear_acceleration) == _bits(f)
        if is_reported:
            assert _bits(sample.orientation_xyzw) == _bits(quat[i])
            assert np.allclose(sample.orientation_xyzw, np.array(q) / norm, rtol=1e-15, atol=0.0)


# ---------------------------------------------------------------------------------------------- JointState


@st.composite
def _joint_rows(draw: st.DrawFn) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
    names = draw(_names)
    n = len(names)

    def values(sizes: list[int]) -> np.ndarray:
        size = draw(st.sampled_from(sizes))
        return np.array(draw(st.lists(_floats, min_size=size, max_size=size)), dtype=np.float64)

    return names, values([n, n, 0, n + 1]), values([n, 0, 1]), values([n, 0, n + 1])


def _joint_cause(names: tuple[str, ...], p: np.ndarray, v: np.ndarray, e: np.ndarray) -> str | None:
    n = len(names)
    if not names or len(set(names)) != n:
        return R.JOINT_BAD_MESSAGE
    if p.size != n or v.size not in (0, n) or e.size not in (0, n):
        return R.JOINT_BAD_LENGTHS
    if not np.isfinite(np.concatenate((p, v, e))).all():
        return R.JOINT_NOT_FINITE
    return None


@given(st.lists(_joint_rows(), min_size=1, max_size=8))
def test_joint_state_forms_agree_and_refuse_under_the_rules_key(rows: list[Any]) -> None:
    names = [r[0] for r in rows]
    ok = R.joint_rows_ok(
        names, _ragged([r[1] for r in rows]), _ragged([r[2] for r in rows]), _ragged([r[3] for r in rows])
    )

    for i, (nm, p, v, e) in enumerate(rows):

        def one(nm: tuple[str, ...] = nm, p: np.ndarray = p, v: np.ndarray = v, e: np.ndarray = e) -> Any:
            R.check_joint_names(nm)
            return R.joint_sample_from_arrays(7, nm, p, v, e)

        sample, cause = _one(one)
        assert cause == _joint_cause(nm, p, v, e)
        assert bool(ok[i]) == (sample is not None)
        if sample is not None:
            assert sample.names == nm and _bits(sample.position) == _bits(p)
            assert (sample.velocity is None) == (v.size == 0) and (sample.effort is None) == (e.size == 0)


# ------------------------------------------------------------------------------ foot forces, wrench, schedule


@st.composite
def _foot_force_rows(draw: st.DrawFn) -> tuple[tuple[str, ...], np.ndarray]:
    names = draw(_names)
    size = draw(st.sampled_from([len(names), len(names), len(names) + 1, 0]))
    return names, np.array(draw(st.lists(_floats, min_size=size, max_size=size)), dtype=np.float64)


@given(st.lists(_foot_force_rows(), min_size=1, max_size=8))
def test_foot_force_forms_agree(rows: list[Any]) -> None:
    ok = R.foot_force_rows_ok([r[0] for r in rows], _ragged([r[1] for r in rows]))
    for i, (names, values) in enumerate(rows):
        sample, cause = _one(lambda: R.foot_force_sample_from_values(7, names, values))  # noqa: B023
        good = bool(names) and values.size == len(names) and len(set(names)) == len(names)
        good = good and bool(np.isfinite(values).all())
        assert cause == (None if good else R.FOOT_FORCE_BAD_MESSAGE)
        assert bool(ok[i]) == good == (sample is not None)


@given(st.lists(st.lists(_floats, min_size=6, max_size=6), min_size=1, max_size=8))
def test_foot_wrench_forms_agree(rows: list[list[float]]) -> None:
    ok = R.foot_wrench_rows_ok(np.array(rows))
    for i, row in enumerate(rows):
        sample, cause = _one(lambda: R.foot_wrench_sample_from_values(7, "FL_foot", "FL_foot", np.array(row)))  # noqa: B023
        good = all(map(math.isfinite, row))
        assert cause == (None if good else R.FOOT_WRENCH_NOT_FINITE)
        assert bool(ok[i]) == good == (sample is not None)


@st.composite
def _schedule_rows(draw: st.DrawFn) -> tuple[tuple[str, ...], np.ndarray]:
    names = draw(st.sampled_from([(), ("FL_foot",), ("FL_foot", "FR_foot")]))
    size = draw(st.sampled_from([len(names), len(names), len(names) + 1]))
    values = draw(st.lists(st.sampled_from([0.0, -0.0, 1.0, 1.0, 0.5, math.nan]), min_size=size, max_size=size))
    return names, np.array(values, dtype=np.float64)


@given(st.lists(_schedule_rows(), min_size=1, max_size=8))
def test_contact_schedule_forms_agree(rows: list[Any]) -> None:
    ok = R.contact_schedule_rows_ok([r[0] for r in rows], _ragged([r[1] for r in rows]))
    for i, (names, values) in enumerate(rows):
        sample, cause = _one(lambda: R.contact_schedule_from_values(7, names, values))  # noqa: B023
        good = bool(names) and values.size == len(names) and all(x in (0.0, 1.0) for x in values.tolist())
        assert cause == (None if good else R.SCHEDULE_BAD_MESSAGE)
        assert bool(ok[i]) == good == (sample is not None)
        if sample is not None:
            assert sample.in_contact == tuple(x == 1.0 for x in values.tolist())


@pytest.mark.parametrize(
    ("make", "cause"),
    [
        (
            lambda: R.imu_sample_from_values(1, "", (math.nan, 0.0, 0.0), (0.0, 0.0, 9.8), (0, 0, 0, 1), -1.0),
            "imu_not_finite",
        ),
        (lambda: R.imu_sample_from_values(1, "", (0.0,) * 3, (0.0,) * 3, (math.nan, 0, 0, 1), 0.0), "imu_bad_message"),
        (lambda: R.check_joint_names(("a", "a")), "joint_bad_message"),
        (lambda: R.joint_sample_from_arrays(1, ("a",), np.zeros(2), np.zeros(0), np.zeros(0)), "joint_bad_lengths"),
        (
            lambda: R.joint_sample_from_arrays(1, ("a",), np.full(1, math.inf), np.zeros(0), np.zeros(0)),
            "joint_not_finite",
        ),
    ],
)
def test_refusals_carry_the_diagnostics_cause_key(make: Any, cause: str) -> None:
    with pytest.raises(R.MessageError) as info:
        make()
    assert info.value.cause == cause


def test_huge_finite_joint_values_pass_and_the_samples_are_ordinary_ones() -> None:
    """The finiteness tests sum first (the joint rule the squares, the Imu rule the values): values whose sum overflows
    (1e200 squared, 1e308 twice) are finite and pass, a non-finite value among them is still refused under the rule's
    key and named; the samples the one-message forms make are the dataclasses' (``_made`` skips their ``__init__``),
    with every field, and can be replaced and are frozen."""
    import dataclasses

    from robot_state_estimator.common.samples import ImuSample, JointSample

    names = ("a", "b")
    big = np.array([1e200, -1e200])
    sample = R.joint_sample_from_arrays(7, names, big, big.copy(), np.zeros(0))
    assert type(sample) is JointSample and (sample.stamp_ns, sample.names, sample.effort) == (7, names, None)
    assert _bits(sample.position) == _bits(sample.velocity) == _bits([1e200, -1e200])
    with pytest.raises(R.MessageError, match=r"effort is not finite for joints \['b'\]") as info:
        R.joint_sample_from_arrays(7, names, big, big, np.array([1e200, math.nan]))
    assert info.value.cause == R.JOINT_NOT_FINITE
    assert dataclasses.replace(sample, stamp_ns=8).stamp_ns == 8
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample.stamp_ns = 9  # type: ignore[misc]
    imu = R.imu_sample_from_values(5, "imu", (0.1, 0.2, 0.3), (0.0, 0.0, 9.8), (0.0, 0.0, 0.0, 2.0), 0.0)
    assert type(imu) is ImuSample and (imu.stamp_ns, imu.frame_id) == (5, "imu")
    assert _bits(imu.angular_velocity) == _bits([0.1, 0.2, 0.3])
    assert _bits(imu.linear_acceleration) == _bits([0, 0, 9.8])
    assert _bits(imu.orientation_xyzw) == _bits([0.0, 0.0, 0.0, 1.0])
    assert [f.name for f in dataclasses.fields(imu)] == list(vars(imu))  # every field set, in order
    huge = R.imu_sample_from_values(5, "imu", (1e308, 1e308, 0.0), (0.0, -1e308, -1e308), (0.0,) * 4, -1.0)
    assert _bits(huge.angular_velocity) == _bits([1e308, 1e308, 0.0])  # finite, although their sum is not
    with pytest.raises(R.MessageError, match="linear_acceleration is not finite") as info:
        R.imu_sample_from_values(5, "imu", (1e308, 1e308, 0.0), (0.0, math.inf, -math.inf), (0.0,) * 4, -1.0)
    assert info.value.cause == R.IMU_NOT_FINITE
