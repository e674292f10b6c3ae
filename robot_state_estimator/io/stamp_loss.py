"""Lost input samples, detected from the stamps of each stream (``StampLossCounter``): one of the adapter rules of
``io.stream`` (the node's and replay's ``lost.<key>`` counts).

Lost samples are detected from the stamps of each stream (IMU, joint states, foot forces, each foot's wrench): a
running period (the median of the last ``LOSS_WINDOW`` positive stamp differences) is kept per stream, and a stamp
difference of more than 1.5 periods counts ``round(gap / period) - 1`` lost samples (``lost``, keys ``imu_lost``,
``joint_states_lost``, ``foot_forces_lost``, ``foot_wrenches_lost``; note of the same key, level warn). A difference
above ``max_time_gap_s`` is a gap in the data (the IMU's ``stamp_gap`` reset), not a loss; time going backwards
restarts the detection, a repeated or slightly older stamp is ignored. Every sample with a readable positive stamp
feeds the detection, also one the adapter then skips (wrong frame, missing joints, non-finite values, bad lengths
...): a rejected sample arrived, so it is a rejection, never also a loss. A sample without a usable stamp (zero,
negative, unreadable) arrived too: it cancels one loss of the next gap.
"""

from __future__ import annotations

from robot_state_estimator.common.samples import Event
from robot_state_estimator.common.time import format_stamp_s

#: Stable keys of the lost-sample counts (``EstimatorStream.lost``), one per input stream.
LOST_KEYS: tuple[str, ...] = ("imu_lost", "joint_states_lost", "foot_forces_lost", "foot_wrenches_lost")
#: Number of positive stamp differences whose median is a stream's period (recomputed every window).
LOSS_WINDOW = 15

_LOSS_HINT = "raise qos_depth, lower the input rate, or set odometry_rate_hz/contacts_rate_hz"


class StampLossCounter:
    """Lost samples of one stream, from its stamps (module doc). ``check`` costs a few hundred ns.

    Args:
        key: the stable count key (``imu_lost`` ...).
        what: the stream in messages ("IMU", "joint").

    Attributes:
        period_ns: the current period estimate (0 until ``LOSS_WINDOW`` differences were seen).
        gap_ns: the stamp difference of the last loss counted (0 before any).
        lost: lost samples so far.
    """

    __slots__ = ("_diffs", "_last", "_threshold_ns", "_unstamped", "gap_ns", "key", "lost", "period_ns", "what")

    def __init__(self, key: str, what: str) -> None:
        self.key = key
        self.what = what
        self.lost = 0
        self.period_ns = 0
        self.gap_ns = 0
        self._threshold_ns = 0  # 1.5 periods; 0 = no period yet
        self._last: int | None = None
        self._diffs: list[int] = []
        self._unstamped = 0  # samples without a usable stamp since the last stamp: arrived, so not lost

    def arrived_unstamped(self) -> None:
        """A sample without a usable stamp arrived (zero, negative, unreadable): one fewer lost in the next gap."""
        self._unstamped += 1

    def check(self, stamp_ns: int, max_gap_ns: int, backwards_tolerance_ns: int) -> int:
        """Take one stamp; return the number of samples lost just before it (usually 0)."""
        last = self._last
        unstamped = self._unstamped
        if unstamped:
            self._unstamped = 0
        if last is None:
            self._last = stamp_ns
            return 0
        d = stamp_ns - last
        if d <= 0:
            if d < -backwards_tolerance_ns:
                self._last = stamp_ns  # time went back (a looping bag): start again from here
            else:
                # a repeated or slightly older stamp (the core refuses the sample): it arrived, perhaps in place of
                # a sample whose own stamp never came, so it counts like an unstamped one against the next gap
                self._unstamped = unstamped + 1
            return 0
        self._last = stamp_ns
        if d > max_gap_ns:
            return 0  # a gap in the data (stamp_gap), not a loss
        diffs = self._diffs
        diffs.append(d)
        if len(diffs) >= LOSS_WINDOW:
            diffs.sort()
            self.period_ns = period = diffs[LOSS_WINDOW // 2]
            self._threshold_ns = period + (period >> 1)
            diffs.clear()
        threshold = self._threshold_ns
        if threshold and d > threshold:
            n = round(d / self.period_ns) - 1 - unstamped
            if n <= 0:
                return 0
            self.lost += n
            self.gap_ns = d
            return n
        return 0

    def note(self, n: int, stamp_ns: int) -> Event:
        """The warning for ``n`` samples lost before ``stamp_ns``: the gap in the stamps, and its possible causes
        (the loss is inferred from the stamps alone, so a sender whose stamps jitter looks the same)."""
        return Event(
            self.key,
            f"{n} {self.what} samples lost before stamp {format_stamp_s(stamp_ns)} s: a gap "
            f"of {self.gap_ns / 1e6:.3g} ms in the stamps, {self.period_ns / 1e6:.3g} ms apart usually "
            f"({self.lost} so far). Possible causes: the input queue overflows ({_LOSS_HINT}), the sender or the "
            "link drops samples, or the sender's stamps jitter (stamped when published instead of when measured)",
        )


__all__ = ["LOSS_WINDOW", "LOST_KEYS", "StampLossCounter"]
