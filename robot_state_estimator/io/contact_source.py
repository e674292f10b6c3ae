"""The contact source the core uses, followed by the adapters (one of ``io.stream``'s rules).

The core's ``RobotStateEstimator.contact_source`` (``torque``, ``foot_sensor``, ``foot_wrench``, ``schedule``,
``kinematic``) is read after each joint sample. When it falls back to the kinematic detector after another source
was used (e.g. the efforts disappear from the joint states with ``contact.source: auto``), or when the configured
source has no data, the stream notes it (``contact_source``, warn) and keeps the message in
``EstimatorStream.contact_source_problem`` until a better source is back (a note at info level then): no foot
force is estimated meanwhile, so the adapters publish no wrench, and the kinematic contacts are unreliable for gaits
with low foot clearance.
"""

from __future__ import annotations

#: Why each source falls silent, for the note when it was in use before the kinematic fallback.
_WHY_SILENT = {
    "torque": "the joint states carry no efforts any more",
    "foot_sensor": "the foot sensors are silent or stale (contact.foot_sensor_timeout_s)",
    "foot_wrench": "the foot wrenches are silent or stale",
    "schedule": "the contact schedule is stale (contact.schedule_timeout_s)",
}


def kinematic_fallback_problem(before: str, configured: str) -> str:
    """The problem the core's switch to the kinematic detector is, "" when it is none.

    Args:
        before: the contact source the core used before ("" before any joint sample, or "none").
        configured: the setting ``contact.source`` (``auto``, ``torque``, ...).

    Returns:
        The text of the ``contact_source`` note: the source that fell silent, or the configured source that has no
        data; "" when contacts were kinematic already, or ``contact.source`` is ``auto`` or ``kinematic`` and no
        other source was used (a robot without efforts or foot sensors: the core says so once).
    """
    if before not in ("", "none", "kinematic"):
        why = _WHY_SILENT.get(before, f"{before!r} has no data any more")
        text = f"{why}: contacts now come from the foot heights and speeds (kinematic), not from {before!r}"
    elif configured not in ("auto", "kinematic"):
        text = f"contact.source is {configured!r} but it has no data: contacts come from the foot heights and "
        text += "speeds (kinematic fallback)"
    else:
        return ""
    return (
        f"{text}; no foot force is estimated, so contact_wrench/<foot> is not published meanwhile, and the "
        "kinematic contacts are unreliable for gaits with low foot clearance"
    )


__all__ = ["kinematic_fallback_problem"]
