"""The stamp helpers: exact round trips, seconds never dropped, negative stamps floor-divided."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from robot_state_estimator.common.time import (
    NS_PER_S,
    ns_to_sec_nanosec,
    s_to_ns,
    sec_nanosec_to_ns,
    sec_nanosec_to_ns_array,
    stamp_to_ns,
)


@dataclass
class Stamp:
    sec: int
    nanosec: int


def test_known_values() -> None:
    assert stamp_to_ns(Stamp(sec=1_700_000_000, nanosec=123)) == 1_700_000_000_000_000_123
    assert ns_to_sec_nanosec(1_500_000_001) == (1, 500_000_001)
    assert ns_to_sec_nanosec(-1) == (-1, 999_999_999)
    assert s_to_ns(0.0025) == 2_500_000


@given(st.integers(min_value=-(2**31) * NS_PER_S, max_value=(2**31 - 1) * NS_PER_S))
def test_round_trip(stamp_ns: int) -> None:
    sec, nanosec = ns_to_sec_nanosec(stamp_ns)
    assert 0 <= nanosec < NS_PER_S
    assert stamp_to_ns(Stamp(sec, nanosec)) == stamp_ns


@given(st.lists(st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1)), min_size=1, max_size=20))
def test_the_two_numbers_and_arrays_of_them_give_the_stamps_of_stamp_to_ns(stamps: list[tuple[int, int]]) -> None:
    expected = [sec * 1_000_000_000 + nanosec for sec, nanosec in stamps]  # the definition, in Python's integers
    assert [sec_nanosec_to_ns(sec, nanosec) for sec, nanosec in stamps] == expected
    assert [stamp_to_ns(Stamp(sec, nanosec)) for sec, nanosec in stamps] == expected
    sec = np.array([s for s, _ in stamps], dtype=np.int32)
    nanosec = np.array([n for _, n in stamps], dtype=np.uint32)
    got = sec_nanosec_to_ns_array(sec, nanosec)
    assert got.dtype == np.int64 and got.tolist() == expected
