"""The stamp helpers: exact round trips, seconds never dropped, negative stamps floor-divided."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from robot_state_estimator.common.time import NS_PER_S, ns_to_sec_nanosec, s_to_ns, stamp_to_ns


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
