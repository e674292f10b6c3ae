"""The feet of a robot description: which frames are the contact points.

Detection (``foot_frame_choice``, ``RobotDescription.foot_frames``) looks at names and the kinematic tree only; the
node and the tools take the feet from the ``foot_frames`` setting when it is given (:func:`chosen_feet`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pinocchio as pin

from .errors import DescriptionError, ErrorCode, Problem

#: Names of contact frames found by ``foot_frames()``: ending (case-insensitively, after dropping a
#: ``_link``/``_frame`` suffix) in foot, sole or toe.
_FOOT_RE = re.compile(r"(foot|sole|toe)$", re.IGNORECASE)
_SUFFIX_RE = re.compile(r"_(link|frame)$", re.IGNORECASE)
#: Tie-break between detected frames of one rigid body at the same height: the sole first, then foot, then toe.
_NAME_RANK = {"sole": 0, "foot": 1, "toe": 2}
#: m, two frames of one body whose origins are closer in height than this are "at the same height".
_SAME_HEIGHT_M = 1e-9


@dataclass(frozen=True)
class FootFrameChoice:
    """The feet that detection found (:meth:`RobotDescription.foot_frame_choice`).

    Attributes:
        frames: one contact frame per rigid body, in pinocchio frame order.
        dropped: per chosen frame, the other detected frames of the same rigid body (the same pinocchio joint:
            links joined by fixed joints are frames of one body), which are not used; empty when each body
            had one candidate.
    """

    frames: tuple[str, ...]
    dropped: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def message(self) -> str:
        """One line saying which frame was kept for which dropped ones ("" when nothing was dropped)."""
        if not self.dropped:
            return ""
        parts = [f"{kept} (not {', '.join(others)})" for kept, others in self.dropped.items()]
        return (
            "foot detection keeps one frame per rigid body, the lowest at the neutral configuration (sole before "
            "foot before toe at equal height): " + "; ".join(parts) + "; set foot_frames to choose others"
        )


def foot_frame_choice(model: pin.Model, name: str) -> FootFrameChoice:
    """Detect the feet: one contact frame per rigid body.

    Candidates are BODY or OP frames whose names end in foot/sole/toe (any case, after dropping a
    ``_link``/``_frame`` suffix) on leaf joints. Frames on the same pinocchio joint are one rigid body (a
    humanoid's ``l_foot`` link and the ``l_sole`` frame fixed to it); fusing both would count one foot's
    motion twice as independent measurements. Of each body the frame kept is the lowest (smallest z in the
    base frame) at the neutral configuration ``pinocchio.neutral``, i.e. the one on the sole of the foot;
    at equal height (within 1 nm) a name ending in sole, then foot, then toe; then pinocchio frame order.

    Args:
        model: the pinocchio model (``RobotDescription.model``).
        name: the model's name, for the message.

    Returns:
        :class:`FootFrameChoice`: the frames (pinocchio frame order) and, per kept frame, the dropped ones.

    Raises:
        DescriptionError: ``ELEMENT_MISSING`` when detection finds nothing (pass the names explicitly).
    """
    parents = {int(model.parents[j]) for j in range(1, model.njoints)}
    by_joint: dict[int, list[int]] = {}
    for fid, f in enumerate(model.frames):
        if f.type not in (pin.FrameType.BODY, pin.FrameType.OP_FRAME):
            continue
        if int(f.parentJoint) in parents or int(f.parentJoint) == 0:
            continue
        if _FOOT_RE.search(_SUFFIX_RE.sub("", f.name)):
            by_joint.setdefault(int(f.parentJoint), []).append(fid)
    if not by_joint:
        leaves = leaf_bodies(model)
        shown = ", ".join(leaves[:12]) + (f", ... ({len(leaves) - 12} more)" if len(leaves) > 12 else "")
        raise DescriptionError(
            Problem(
                ErrorCode.ELEMENT_MISSING,
                f"no foot frames detected in {name!r} (names ending in foot/sole/toe at leaf joints): name "
                'them with the setting foot_frames (node: -p foot_frames:="[A, B]"; info, simulate, replay: '
                "--set 'foot_frames=[A, B]'; RobotDescription.foot_frames(names=...)); the links at the ends of "
                f"the kinematic chains: [{shown}]",
            )
        )
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    kept: list[int] = []
    dropped: dict[str, tuple[str, ...]] = {}
    for fids in by_joint.values():
        z = {fid: float(data.oMf[fid].translation[2]) for fid in fids}
        z_min = min(z.values())

        def rank(fid: int, z: dict[int, float] = z, z_min: float = z_min) -> tuple[int, int, int]:
            ending = _FOOT_RE.search(_SUFFIX_RE.sub("", model.frames[fid].name))
            assert ending is not None  # (a candidate)
            low = 0 if z[fid] - z_min <= _SAME_HEIGHT_M else 1
            return (low, _NAME_RANK[ending.group(1).lower()], fid)

        best = min(fids, key=rank)
        kept.append(best)
        others = tuple(model.frames[fid].name for fid in fids if fid != best)
        if others:
            dropped[model.frames[best].name] = others
    kept.sort()
    frames = tuple(model.frames[fid].name for fid in kept)
    return FootFrameChoice(frames, {frame: dropped[frame] for frame in frames if frame in dropped})


def leaf_bodies(model: pin.Model) -> list[str]:
    """Names of the bodies (links) of a pinocchio ``model`` at the ends of its kinematic chains (no child joint)."""
    parents = {int(model.parents[j]) for j in range(1, model.njoints)}
    return [
        f.name
        for f in model.frames
        if f.type == pin.FrameType.BODY and int(f.parentJoint) not in parents and int(f.parentJoint) != 0
    ]


def chosen_feet(desc: Any, names: Sequence[str] = ()) -> list[str]:
    """The feet: ``names`` (the ``foot_frames`` setting) when given, else those the description's names show
    (``RobotDescription.foot_frames``).

    Args:
        desc: a ``RobotDescription``.
        names: the configured foot frames; empty = detect. Given names are returned as they are (the estimator
            checks them against the model).

    Raises:
        ValueError: none detected; the message names the ``foot_frames`` parameter (the description's own
            message says ``names=...``, its Python argument) and the frames at the ends of the legs.
        DescriptionError: any other problem of the description.
    """
    if names:
        return list(names)
    try:
        return list(desc.foot_frames())
    except DescriptionError as exc:
        if "no foot frames detected" not in str(exc):
            raise
        leaves = leaf_bodies(desc.model)
        example = ", ".join(leaves[:4]) or "FL_foot, FR_foot, RL_foot, RR_foot"
        raise ValueError(
            f"no foot frames detected in {getattr(desc, 'name', '')!r} (frame names ending in foot, sole or toe "
            "at the ends of the legs): set the foot_frames parameter to the names of the foot frames, e.g. "
            f'-p foot_frames:="[{example}]" (links at the ends of the chains: {leaves or "none"})'
        ) from exc


__all__ = ["FootFrameChoice", "chosen_feet", "foot_frame_choice", "leaf_bodies"]
