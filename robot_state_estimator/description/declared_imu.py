"""An IMU declared by settings for a description that has none (or whose IMU is to be replaced).

Vendor URDFs often carry no ``<sensor>``/``<gazebo>`` IMU block (example-robot-data's Go2 and ANYmal), only a
link where the IMU sits. :func:`declared_imu_spec` makes the :class:`~.types.ImuSpec` such a block would
give: the sensor frame S at ``pose`` in a link or SDF ``<frame>`` F of the description (SDFormat pose
semantics: ``X_F_S`` = translation ``xyz`` then the fixed-axis rotation ``Rz(yaw) Ry(pitch) Rx(roll)``, as
``<pose relative_to="F">x y z roll pitch yaw</pose>`` of a sensor), carried by the link F is attached to
(``frame_body``), with the per-axis noise given (the estimation layer converts the settings' densities into
SDFormat ``<noise>`` numbers: ``estimation.imu_setup``).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from .errors import DescriptionError, ErrorCode, Problem
from .imu_frames import accepted_imu_frame_ids, is_identity
from .pose import rpy_to_matrix
from .robot import RobotDescription
from .types import ImuSpec, NoiseSpec

_FRAME_KINDS = ("link", "frame")


def frame_names(desc: RobotDescription) -> list[str]:
    """The links and SDF ``<frame>``s of ``desc`` (URDF links lumped by fixed joints included), in document
    order: the frames an IMU can be declared on."""
    return [name for name, node in desc.graph.nodes.items() if node.kind in _FRAME_KINDS]


def _unknown_frame(desc: RobotDescription, frame: str, what: str) -> DescriptionError:
    names = frame_names(desc)
    close = difflib.get_close_matches(frame, names, n=3, cutoff=0.6)
    hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    shown = names if len(names) <= 40 else [*names[:40], f"... {len(names) - 40} more"]
    return DescriptionError(
        Problem(
            ErrorCode.FRAME_ATTACHED_TO_INVALID,
            f"{what} {frame!r} is not a link or frame of robot {desc.name!r}{hint}; its links and frames: {shown}",
        )
    )


def declared_imu_spec(
    desc: RobotDescription,
    *,
    name: str,
    frame: str,
    pose_xyz_rpy: Sequence[float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    frame_id: str = "",
    update_rate: float = 0.0,
    angular_velocity_noise: tuple[NoiseSpec, NoiseSpec, NoiseSpec] | None = None,
    linear_acceleration_noise: tuple[NoiseSpec, NoiseSpec, NoiseSpec] | None = None,
    what: str = "declared_imu.link",
) -> ImuSpec:
    """The :class:`~.types.ImuSpec` of an IMU on ``frame`` of ``desc``, as a ``<sensor type="imu">`` there
    would give it (``source="settings"``).

    Args:
        desc: the description.
        name: the IMU's name (``ImuSpec.name``).
        frame: a link or SDF ``<frame>`` of ``desc`` (scoped ``a::b`` in nested models); S moves with the link
            it is attached to.
        pose_xyz_rpy: ``X_F_S`` as 6 numbers, m and rad: ``x y z roll pitch yaw`` (SDFormat ``euler_rpy``,
            fixed axes X, Y, Z: ``R = Rz(yaw) Ry(pitch) Rx(roll)``).
        frame_id: the ``header.frame_id`` of its messages; "" = ``frame`` when S is ``frame`` itself (pose
            identity), else ``name``. Frames coinciding with S are accepted as well (``accepted_frame_ids``).
        update_rate: Hz, its rate (0 = unknown, "as fast as possible" in SDFormat).
        angular_velocity_noise, linear_acceleration_noise: per-axis noise (SDFormat ``<noise>`` numbers,
            rad/s and m/s^2 per sample); None = none.
        what: how ``frame`` is named in errors (the settings key).

    Raises:
        DescriptionError: ``FRAME_ATTACHED_TO_INVALID`` naming ``frame`` (with close names and the frames there
            are) when it is no link or frame of ``desc``; ``ELEMENT_INVALID`` for a pose that is not 6 finite
            numbers or a negative or non-finite rate.
    """
    node = desc.graph.nodes.get(frame)
    if node is None or node.kind not in _FRAME_KINDS:
        raise _unknown_frame(desc, frame, what)
    pose = [float(v) for v in pose_xyz_rpy]
    if len(pose) != 6 or not all(math.isfinite(v) for v in pose):
        raise DescriptionError(
            Problem(ErrorCode.ELEMENT_INVALID, f"declared IMU {name!r}: pose must be 6 finite numbers "
                    f"(x y z in m, roll pitch yaw in rad), got {list(pose_xyz_rpy)!r}")
        )  # fmt: skip
    if not (math.isfinite(update_rate) and update_rate >= 0.0):
        raise DescriptionError(
            Problem(ErrorCode.ELEMENT_INVALID, f"declared IMU {name!r}: rate must be >= 0 Hz, got {update_rate!r}")
        )
    X_frame_imu = pin.SE3(rpy_to_matrix(*pose[3:]), np.array(pose[:3]))
    link = desc.graph.frame_body(frame)
    pose_in_link = desc.graph.resolve_pose(frame, link) * X_frame_imu
    pose_in_base = desc.graph.resolve_pose(link, desc.base_link) * pose_in_link
    fid = frame_id or (frame if is_identity(X_frame_imu) else name)
    noise3 = (NoiseSpec(), NoiseSpec(), NoiseSpec())
    return ImuSpec(
        name=name,
        link=link,
        frame_id=fid,
        pose_in_link=pose_in_link,
        pose_in_base=pose_in_base,
        update_rate=float(update_rate),
        angular_velocity_noise=angular_velocity_noise or noise3,
        linear_acceleration_noise=linear_acceleration_noise or noise3,
        accepted_frame_ids=accepted_imu_frame_ids(desc.graph, desc.model, link, pose_in_link, (fid,)),
        source="settings",
    )
