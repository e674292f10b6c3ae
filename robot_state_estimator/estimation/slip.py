"""Slip reports: a stance foot whose leg-update NIS stays high.

A foot at rest in stance gives a leg-kinematics innovation whose normalised innovation squared (NIS) is
chi-square with 3 DoF when the filter is consistent (Bar-Shalom, Li and Kirubarajan 2001, sec. 5.4). A sliding
foot breaks the "contact point at rest" model for as long as it slides, so its NIS stays above the chi-square
quantile, where noise and touchdown transients only cross it for a sample or two. The gate
(``ekf.foot_gate_nis``) refuses those updates one by one; this detector reports the episode.

Rule (per foot, over the updates of its current contact only): an update whose NIS is above
``SLIP_NIS_THRESHOLD`` (the chi-square 99 % point for 3 DoF, 11.34; the flat feet's 6-D stance update is gated
and reported by its 3-D leg half, whose NIS has 3 DoF too) counts for the joint period before it (0 for the
first step and after a gap in the joint stream longer than ``MAX_JOINT_PERIOD_S``). The foot is *slipping* when
those periods add up to at least ``fraction * window_s`` within the last ``window_s`` of joint time
(``ekf.slip_nis_window_s``,
``ekf.slip_nis_fraction``). An episode starts then (one ``foot_slipping`` warn event naming the foot, the NIS
and how long it has been high; the foot's episode count goes up by one) and ends when the foot leaves contact
or a whole window passes without a high NIS.

The detector runs in Python over the per-foot NIS the joint step returns (the numpy reference and the compiled
kernel paths alike); on a clean step with no foot above the threshold it does one comparison per stance foot.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from scipy.stats import chi2

from robot_state_estimator.common.samples import Event

#: the chi-square 99 % point for 3 DoF (11.34), the leg update's NIS above which an update counts as high
SLIP_NIS_THRESHOLD: float = float(chi2.ppf(0.99, 3))

#: s, the longest joint period an update counts for (20 Hz): after a longer interval (joint samples dropped, or an
#: IMU gap crossed) the first update counts as a first one, 0, so that a gap is not read as time with a high NIS
MAX_JOINT_PERIOD_S: float = 0.05

_NS = 1_000_000_000


class SlipDetector:
    """Per-foot slip episodes from the stance feet's leg-update NIS (module docstring).

    Args:
        feet: the foot frame names, in the estimator's foot order.
        window_s: s, the window (``ekf.slip_nis_window_s``); 0 disables the detector.
        fraction: the part of the window the NIS must be high for (``ekf.slip_nis_fraction``, in (0, 1]).
        threshold: the NIS above which an update counts as high (3 DoF, 99 %).
    """

    def __init__(
        self, feet: Sequence[str], window_s: float, fraction: float, threshold: float = SLIP_NIS_THRESHOLD
    ) -> None:
        self.feet = tuple(feet)
        self.threshold = float(threshold)
        self._window_ns = round(window_s * _NS)
        self._max_period_ns = round(MAX_JOINT_PERIOD_S * _NS)
        self._need_ns = fraction * self._window_ns
        n = len(self.feet)
        #: per foot, the slip episodes reported since the estimator was made
        self.episodes: list[int] = [0] * n
        self._slipping = [False] * n
        self._high: list[deque[tuple[int, int]]] = [deque() for _ in range(n)]  # (stamp ns, counted ns)
        #: the feet with high updates in their window (watched: every step counts for them)
        self.active_feet: set[int] = set()
        #: the stamp of the last step (ns; None: none since the last clear). A step with no stance foot above the
        #: threshold while no foot is watched changes nothing else: its caller may record just this stamp (what
        #: :meth:`update` does then; the compiled joint step tells, ``layout.JOINT_HIGH_NIS_SHIFT``).
        self.last_stamp_ns: int | None = None

    @property
    def slipping(self) -> tuple[str, ...]:
        """The feet in a slip episode now."""
        return tuple(f for f, s in zip(self.feet, self._slipping) if s)

    def clear(self) -> None:
        """Forget the windows (an estimator reset); the episode counts stay."""
        for i in self.active_feet:
            self._high[i].clear()
            self._slipping[i] = False
        self.active_feet.clear()
        self.last_stamp_ns = None

    def update(self, stamp_ns: int, stance: Sequence[int], nis: Sequence[float]) -> list[Event] | None:
        """One joint step: ``stance`` the feet in contact (indices), ``nis`` their leg-update NIS (NaN: none ran).

        Returns:
            The ``foot_slipping`` events of the episodes that start now, or None.
        """
        window = self._window_ns
        if window <= 0:
            return None
        last = self.last_stamp_ns
        self.last_stamp_ns = stamp_ns
        thr = self.threshold
        active = self.active_feet
        if not active:
            for e in nis:
                if e > thr:
                    break
            else:
                return None  # the usual step: no foot high, none with a window to update
        period = 0 if last is None else stamp_ns - last
        dt = min(max(period, 0), window) if period <= self._max_period_ns else 0  # a gap counts as a first step
        for i, e in zip(stance, nis):
            if e > thr:
                self._high[i].append((stamp_ns, dt))
                active.add(i)
        events: list[Event] | None = None
        start = stamp_ns - window
        for i in sorted(active):
            high = self._high[i]
            if i not in stance:  # left contact: the episode (if any) ends
                high.clear()
            while high and high[0][0] <= start:
                high.popleft()
            if not high:
                active.discard(i)
                self._slipping[i] = False
                continue
            if self._slipping[i]:
                continue
            high_ns = sum(d for _, d in high)
            if high_ns >= self._need_ns:
                self._slipping[i] = True
                self.episodes[i] += 1
                e = nis[list(stance).index(i)]
                message = (
                    f"foot {self.feet[i]} slipping: leg-update NIS above {thr:.2f} (chi-square 99 %, 3 DoF) for "
                    f"{high_ns / 1e6:.0f} ms of the last {window / 1e6:.0f} ms in contact (NIS now {e:.1f}; "
                    f"episode {self.episodes[i]})"
                )
                events = events or []
                events.append(Event("foot_slipping", message, "warn"))
        return events
