"""The estimator's event log: the warnings and notes of the core, under stable keys (listed in :mod:`.pipeline`),
collected by its parts in order and handed out by ``RobotStateEstimator.pop_events``."""

from __future__ import annotations

from collections.abc import Iterable

from robot_state_estimator.common.samples import Event


class EventLog:
    """Events in the order they happened, shared by the parts of one estimator."""

    __slots__ = ("_events",)

    def __init__(self) -> None:
        self._events: list[Event] = []

    def emit(self, key: str, message: str, level: str = "warn") -> None:
        """Record an event (``level``: ``info``, ``warn`` or ``error``)."""
        self._events.append(Event(key, message, level))

    def extend(self, events: Iterable[Event]) -> None:
        """Record events made elsewhere (the slip report, the IMU settings)."""
        self._events.extend(events)

    def pop(self) -> list[Event]:
        """The events since the last call (and forget them)."""
        events, self._events = self._events, []
        return events
