"""Foot contact geometry from a description's ``<collision>`` elements.

:func:`foot_radius` gives the radius of a spherical foot: a ``<collision>`` whose geometry is a ``<sphere>``,
on a link rigidly attached to the foot frame (same pinocchio parent joint: the foot's own link and the links
lumped with it by fixed joints), whose centre is the foot frame origin (within ``tol_m``). A sphere centred
elsewhere (ANYmal C's foot sphere sits 22.5 mm above its ``*_FOOT`` frame) or a mesh (Solo12) does not count:
the estimator's rolling-contact model needs the foot frame origin to be the sphere's centre.

URDF: ``<link name><collision><origin xyz rpy/><geometry><sphere radius="r"/>``, the origin relative to the
link frame. SDFormat: ``<link name><collision><pose>..</pose><geometry><sphere><radius>r</radius>``, the pose
relative to the link unless it has ``relative_to`` (resolved with the description's frame graph). Links of
nested SDF models are matched by their scoped names as pinocchio names them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from .pose import PoseTextError, parse_pose, urdf_origin
from .types import CollisionSpheres

if TYPE_CHECKING:
    from .robot import RobotDescription


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def collision_spheres(xml: str, fmt: str) -> CollisionSpheres:
    """Per link name: ``(X_link_collision or X_relative_to_collision, radius m, relative_to or None)`` of
    every spherical collision. Malformed numbers are skipped (the loader has validated the document)."""
    root = ET.fromstring(xml)
    out: CollisionSpheres = {}

    def walk(elem: ET.Element, scope: str) -> None:
        for child in elem:
            tag = _local(child.tag)
            if tag == "model" and fmt == "sdf" and elem is not root and _local(elem.tag) == "model":
                walk(child, f"{scope}{child.get('name', '')}::")
            elif tag == "model":
                walk(child, scope)
            elif tag == "link":
                name = scope + child.get("name", "")
                for col in child:
                    if _local(col.tag) != "collision":
                        continue
                    sphere = next((g for g in col.iter() if _local(g.tag) == "sphere"), None)
                    if sphere is None:
                        continue
                    try:
                        if fmt == "urdf":
                            radius = float(sphere.get("radius", "nan"))
                            origin = next((o for o in col if _local(o.tag) == "origin"), None)
                            X = urdf_origin(
                                None if origin is None else origin.get("xyz"),
                                None if origin is None else origin.get("rpy"),
                            )
                            rel = None
                        else:
                            r_elem = next((g for g in sphere if _local(g.tag) == "radius"), None)
                            radius = float(r_elem.text) if r_elem is not None and r_elem.text else 1.0
                            pose = next((o for o in col if _local(o.tag) == "pose"), None)
                            X = pin.SE3.Identity()
                            rel = None
                            if pose is not None:
                                X = parse_pose(
                                    pose.text,
                                    rotation_format=pose.get("rotation_format"),
                                    degrees=pose.get("degrees"),
                                )
                                rel = pose.get("relative_to") or None
                    except (PoseTextError, ValueError):
                        continue
                    if np.isfinite(radius) and radius >= 0.0:
                        out.setdefault(name, []).append((X, radius, rel))
            elif tag in ("robot", "sdf", "world"):
                walk(child, scope)

    walk(root, "")
    return out


def foot_radius(desc: RobotDescription, foot: str, *, tol_m: float = 1e-6) -> float:
    """Radius (m) of a spherical collision centred at the origin of frame ``foot``; 0.0 when there is none.

    Args:
        desc: the description; its collision spheres are read once and kept on it.
        foot: a frame of ``desc.model``.
        tol_m: how far the sphere centre may be from the foot frame origin.

    Raises:
        KeyError: ``foot`` is not a frame of the model.
    """
    model = desc.model
    if not model.existFrame(foot):
        raise KeyError(f"{foot!r} is not a frame of the model")
    spheres = desc._collision_spheres
    if spheres is None:
        spheres = collision_spheres(desc.xml, desc.format)
        desc._collision_spheres = spheres
    fid = model.getFrameId(foot)
    joint = model.frames[fid].parentJoint
    data = model.createData()
    q = pin.neutral(model)
    pin.framesForwardKinematics(model, data, q)
    oMfoot = data.oMf[fid]
    best = 0.0
    for f in model.frames:
        if f.parentJoint != joint or f.type != pin.FrameType.BODY or f.name not in spheres:
            continue
        oMlink = data.oMf[model.getFrameId(f.name, pin.FrameType.BODY)]
        for X, radius, rel in spheres[f.name]:
            if rel is not None:
                try:
                    X_link_rel = desc.resolve_pose(rel, f.name)
                except Exception:  # an unresolvable pose cannot be the foot sphere
                    continue
                X = X_link_rel * X
            centre_in_foot = oMfoot.actInv(oMlink.act(X.translation))
            if float(np.linalg.norm(centre_in_foot)) <= tol_m:
                best = max(best, radius)
    return best
