"""Which frame names denote an IMU's sensor frame S (the ``header.frame_id`` values its messages may carry).

A name denotes S when the frame it names coincides with S: the sensor's own frame id (``<gz_frame_id>``,
``<frame_id>``, ..., else the sensor name) and gz-sim's ``model/link/sensor`` always do; a link or an SDF
``<frame>`` of the description does when it is rigidly attached to S's link (same pinocchio joint, so that
it stays coincident in every configuration) and S's pose in it is the identity within
:data:`IMU_FRAME_TOL`. URDF links lumped by fixed joints (``imu_link`` lumped into the Go1's ``base``) keep
their names as frames, so ``imu_link``, which robot_state_publisher publishes in TF and an IMU driver stamps,
is one of them; the lumped-into link is one only when S sits at its origin with its axes.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from .frame_graph import FrameGraph

#: Translation (m) and rotation angle (rad) below which two frames coincide.
IMU_FRAME_TOL = 1e-9

#: Frame kinds of the graph that can name S (joints and model frames are not published as TF frames).
_FRAME_KINDS = ("link", "frame")


def is_identity(X: pin.SE3, tol: float = IMU_FRAME_TOL) -> bool:
    """Whether ``X`` is the identity: translation norm and rotation angle (``log3``) within ``tol``."""
    return bool(np.linalg.norm(X.translation) <= tol and np.linalg.norm(pin.log3(X.rotation)) <= tol)


def _support_joint(graph: FrameGraph, model: pin.Model | None, frame: str) -> int | str:
    """What ``frame`` moves with: the index of its body's parent joint in ``model``, else (no model, or a body
    pinocchio lacks) the body's name in ``graph``."""
    body = graph.frame_body(frame)
    if model is not None and model.existFrame(body, pin.FrameType.BODY):
        return int(model.frames[model.getFrameId(body, pin.FrameType.BODY)].parentJoint)
    return body


def accepted_imu_frame_ids(
    graph: FrameGraph, model: pin.Model | None, link: str, X_link_imu: pin.SE3, own_ids: tuple[str, ...]
) -> tuple[str, ...]:
    """The names that denote the IMU frame S (module doc), in this order: ``own_ids``, then the links and
    ``<frame>``s of ``graph`` in document order.

    Args:
        graph: the description's frames.
        model: its pinocchio model (rigid attachment = same parent joint); None compares the links frames
            are attached to.
        link: the link carrying S (a frame of ``graph``).
        X_link_imu: S in ``link`` (SE3, m).
        own_ids: the sensor's own frame ids (frame_id, gz_frame_id); empty ones are dropped.
    """
    names = [n for n in own_ids if n]
    X_root_imu = graph.pose_in_root(link) * X_link_imu
    support = _support_joint(graph, model, link)
    for name, node in graph.nodes.items():
        if node.kind not in _FRAME_KINDS or name in names:
            continue
        if _support_joint(graph, model, name) != support:
            continue
        if is_identity(graph.pose_in_root(name).actInv(X_root_imu)):
            names.append(name)
    return tuple(names)


def describe_offset(X_frame_imu: pin.SE3) -> str:
    """``"rotated by 90 deg about (0, 0, 1)"`` / ``"offset by (x, y, z) m"`` (both joined by "and") for a
    pose of S that is not the identity; "" when it is."""
    parts = []
    w = np.asarray(pin.log3(X_frame_imu.rotation))
    angle = float(np.linalg.norm(w))
    if angle > IMU_FRAME_TOL:
        axis = ", ".join(f"{v:.6g}" for v in w / angle)
        parts.append(f"rotated by {np.degrees(angle):.6g} deg about ({axis})")
    t = np.asarray(X_frame_imu.translation)
    if np.linalg.norm(t) > IMU_FRAME_TOL:
        parts.append(f"offset by ({', '.join(f'{v:.6g}' for v in t)}) m")
    return " and ".join(parts)


def imu_frame_mismatch(
    graph: FrameGraph, model: pin.Model | None, link: str, X_link_imu: pin.SE3, frame: str, sensor: str = ""
) -> str:
    """Why ``frame`` does not denote S: ``"S is rotated by ... in frame 'base'"``, ``"frame 'x' is not on
    the IMU's rigid body"``; "" when ``frame`` is not a link or ``<frame>`` of ``graph`` (or is S)."""
    what = f"the IMU frame S of sensor {sensor!r}" if sensor else "the IMU frame S"
    return frame_mismatch(graph, model, link, X_link_imu, frame, what, "S", "the IMU's link")


def frame_mismatch(
    graph: FrameGraph,
    model: pin.Model | None,
    link: str,
    X_link_target: pin.SE3,
    frame: str,
    what: str,
    short: str,
    link_role: str,
) -> str:
    """Why the link or ``<frame>`` ``frame`` of ``graph`` does not denote a target frame T (``X_link_target``
    in ``link``): ``"<kind> 'x' is not <what>: <short> is offset by ... in 'x'"``, or that ``frame`` moves
    relative to ``link`` (another pinocchio joint); "" when ``frame`` coincides with T (within
    :data:`IMU_FRAME_TOL`) or is no link or ``<frame>`` of ``graph``.

    Args:
        what: how T is named in the message (``"the base link 'trunk'"``).
        short: T's short name in the message (``"S"``, ``"the base link"``).
        link_role: how ``link`` is named (``"the IMU's link"``).
    """
    node = graph.nodes.get(frame)
    if node is None or node.kind not in _FRAME_KINDS:
        return ""
    if _support_joint(graph, model, frame) != _support_joint(graph, model, link):
        return f"{node.kind} {frame!r} is not {what}: it moves relative to {link_role} {link!r}"
    offset = describe_offset(graph.resolve_pose(link, frame) * X_link_target)
    if not offset:
        return ""
    return f"{node.kind} {frame!r} is not {what}: {short} is {offset} in {frame!r}"
