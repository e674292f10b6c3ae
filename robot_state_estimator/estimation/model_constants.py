"""The numbers of a pinocchio model that compiled kinematics and dynamics need, extracted once into plain arrays.

Pinocchio is the source of the robot model: it parses the description, lumps fixed joints (their links' inertias
are summed into the moving body, their frames kept as frames), and its algorithms are the oracle the compiled
code in :mod:`robot_state_estimator.estimation.kinematics_kernels` is tested against (1e-12). This module copies,
once, what those kernels read and nothing else:

- per joint (pinocchio's joint order: index 0 the universe, 1 the free-flyer root, then the tree with every
  parent before its children): the parent joint (``model.parents``), the joint kind and unit axis (the kind from
  the joint model, ``JointModelRX``...; the axis from its motion subspace ``S``), the placement of the joint in
  its parent joint's frame (``model.jointPlacements``: Featherstone's tree transform ``X_T``), and the indices of
  its coordinates in the joint part of the configuration and velocity (``idx_q - 7``, ``idx_v - 6``);
- per joint, the spatial inertia of the bodies it carries (``model.inertias``: mass, centre of mass ``lever`` in
  the joint frame, rotational inertia about the centre of mass in the joint frame's axes);
- per requested frame (the feet, for the estimator): its parent joint and placement in that joint's frame
  (``frame.parentJoint``, ``frame.placement``);
- gravity (``model.gravity``).

Joint kinds supported (what the bundled robots, example-robot-data's legged robots and the SDF reader produce):
revolute about x/y/z or an unaligned axis (``JointModelRX/RY/RZ``, ``JointModelRevoluteUnaligned``), continuous
(``JointModelRUBX/RUBY/RUBZ``, ``JointModelRevoluteUnboundedUnaligned``: 2 configuration entries ``cos, sin``),
prismatic (``JointModelPX/PY/PZ``, ``JointModelPrismaticUnaligned``), and the free-flyer as the root joint
only. Any other joint (spherical, planar, translation, helical, universal, composite, mimic, ...) is refused
with :class:`~robot_state_estimator.estimation.errors.ModelError` naming the joint and its pinocchio type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.estimation.errors import ModelError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: joint kinds (``ModelConstants.joint_kind``)
JOINT_UNIVERSE, JOINT_FREE_FLYER, JOINT_REVOLUTE, JOINT_REVOLUTE_UNBOUNDED, JOINT_PRISMATIC = 0, 1, 2, 3, 4
JOINT_KIND_NAMES = ("universe", "free-flyer", "revolute", "continuous", "prismatic")

#: pinocchio joint model short name -> (kind, axis index: 0, 1, 2 for x, y, z; -1: the model's own ``axis``)
_SUPPORTED: dict[str, tuple[int, int]] = {
    "JointModelRX": (JOINT_REVOLUTE, 0),
    "JointModelRY": (JOINT_REVOLUTE, 1),
    "JointModelRZ": (JOINT_REVOLUTE, 2),
    "JointModelRevoluteUnaligned": (JOINT_REVOLUTE, -1),
    "JointModelRUBX": (JOINT_REVOLUTE_UNBOUNDED, 0),
    "JointModelRUBY": (JOINT_REVOLUTE_UNBOUNDED, 1),
    "JointModelRUBZ": (JOINT_REVOLUTE_UNBOUNDED, 2),
    "JointModelRevoluteUnboundedUnaligned": (JOINT_REVOLUTE_UNBOUNDED, -1),
    "JointModelPX": (JOINT_PRISMATIC, 0),
    "JointModelPY": (JOINT_PRISMATIC, 1),
    "JointModelPZ": (JOINT_PRISMATIC, 2),
    "JointModelPrismaticUnaligned": (JOINT_PRISMATIC, -1),
}


@dataclass(frozen=True, eq=False)
class ModelConstants:
    """What the compiled kinematics reads from a pinocchio model (read-only arrays; see the module docstring).

    ``njoints`` is pinocchio's ``model.njoints`` (universe and root included), ``n_frames`` the number of
    requested frames. Frames of the placements: joint i's frame is pinocchio's ``oMi[i]`` frame; "base" is
    pinocchio's world with the free-flyer at the identity configuration (the base link frame B when the base link
    sits on the root joint at the identity, as ``LegKinematics`` requires).

    Attributes:
        joint_names: (njoints,) pinocchio joint names (``universe``, ``root_joint``, ...).
        joint_parent: (njoints,) int64, parent joint index (the universe's own: 0).
        joint_kind: (njoints,) int64, ``JOINT_*`` code.
        joint_axis: (njoints, 3) unit axis in the joint frame (zero for the universe and the root).
        joint_axis_index: (njoints,) int64, 0/1/2 when the pinocchio joint is aligned with x/y/z, -1 otherwise.
        joint_q_index: (njoints,) int64, first index of the joint's coordinates in the joint part of the
            configuration ``q[7:]`` (-1 for the universe and the root).
        joint_v_index: (njoints,) int64, index of its velocity in ``v[6:]`` (-1 for the universe and the root).
        joint_nq: (njoints,) int64, configuration entries of the joint (2 for continuous joints: cos, sin).
        X_parent_joint: (njoints, 4, 4) homogeneous placement of the joint frame in its parent joint's frame at
            zero joint motion (``model.jointPlacements``), m.
        body_mass: (njoints,) kg, mass carried by the joint (the universe's: 0, it never moves).
        body_lever: (njoints, 3) m, centre of mass in the joint frame.
        body_inertia: (njoints, 3, 3) kg m^2, rotational inertia about the centre of mass, joint-frame axes.
        frame_names: (n_frames,) the requested frames' names.
        frame_ids: (n_frames,) their pinocchio frame ids.
        frame_joint: (n_frames,) int64, parent joint of each frame.
        X_joint_frame: (n_frames, 4, 4) homogeneous placement of each frame in its parent joint's frame, m.
        gravity: (3,) m/s^2, the model's gravity in the world (pinocchio's default ``(0, 0, -9.81)``).
        total_mass: kg, ``pin.computeTotalMass``.
        nq_joints: ``model.nq - 7``, length of the configuration's joint part.
        nv_joints: ``model.nv - 6``, number of joint velocities (Jacobian columns).
    """

    joint_names: tuple[str, ...]
    joint_parent: IntArray
    joint_kind: IntArray
    joint_axis: FloatArray
    joint_axis_index: IntArray
    joint_q_index: IntArray
    joint_v_index: IntArray
    joint_nq: IntArray
    X_parent_joint: FloatArray
    body_mass: FloatArray
    body_lever: FloatArray
    body_inertia: FloatArray
    frame_names: tuple[str, ...]
    frame_ids: tuple[int, ...]
    frame_joint: IntArray
    X_joint_frame: FloatArray
    gravity: FloatArray
    total_mass: float
    nq_joints: int
    nv_joints: int

    @property
    def njoints(self) -> int:
        """pinocchio's ``model.njoints`` (universe and root included)."""
        return len(self.joint_names)

    @property
    def n_frames(self) -> int:
        """Number of requested frames."""
        return len(self.frame_names)


def _frame_id(model: pin.Model, frame: str | int) -> int:
    if isinstance(frame, str):
        if not model.existFrame(frame):
            raise ModelError(f"frame {frame!r} is not a frame of the model")
        try:
            return int(model.getFrameId(frame))
        except ValueError as exc:  # pinocchio: several frames (a joint's and a body's) of that name
            raise ModelError(f"frame name {frame!r} is ambiguous ({exc}); pass the frame id") from exc
    fid = int(frame)
    if not 0 <= fid < len(model.frames):
        raise ModelError(f"frame id {fid} is out of range (the model has {len(model.frames)} frames)")
    return fid


def _joint_entry(model: pin.Model, j: int, q_neutral: FloatArray) -> tuple[int, FloatArray, int]:
    """(kind, unit axis, axis index) of joint j >= 2; ModelError for an unsupported joint. The axis is read from
    pinocchio's motion subspace ``S`` of the joint (constant for these joints; the angular half of a revolute
    joint's, the linear half of a prismatic joint's): the Python bindings do not expose every joint's axis."""
    short = model.joints[j].shortname()
    entry = _SUPPORTED.get(short)
    if entry is None:
        supported = ", ".join(sorted(_SUPPORTED))
        raise ModelError(
            f"joint {model.names[j]!r} is a {short}: the compiled kinematics supports only 1-DoF revolute, "
            f"continuous and prismatic joints ({supported}) below the free-flyer root"
        )
    kind, index = entry
    joint = model.joints[j]
    jdata = joint.createData()
    joint.calc(jdata, q_neutral)
    S = np.array(jdata.S, dtype=float).reshape(6)
    axis = S[:3] if kind == JOINT_PRISMATIC else S[3:]
    other = S[3:] if kind == JOINT_PRISMATIC else S[:3]
    if not (np.all(np.isfinite(S)) and abs(float(np.linalg.norm(axis)) - 1.0) <= 1e-9 and not other.any()):
        raise ModelError(f"joint {model.names[j]!r} ({short}) has an unexpected motion subspace {S.tolist()}")
    return kind, axis.copy(), index


def _readonly(*arrays: NDArray[np.generic]) -> None:
    for a in arrays:
        a.flags.writeable = False


def extract_model_constants(model: pin.Model, frames: Sequence[str | int]) -> ModelConstants:
    """Copy the joint, body and frame constants of ``model`` that the compiled kinematics needs.

    Args:
        model: pinocchio model with a free-flyer root joint (joint 1, on the universe) and, below it, only the
            joints of the module docstring; not modified.
        frames: the frames whose placements and Jacobians the kernels compute (the estimator's feet), by name or
            pinocchio frame id, in the order of the kernels' outputs.

    Returns:
        The constants (read-only arrays).

    Raises:
        ModelError: no free-flyer root joint; a joint other than the root on the universe; a joint of an
            unsupported type (named with its pinocchio type); an unknown frame; a frame on the universe (it does
            not move with the robot).
    """
    if model.njoints < 2 or model.joints[1].shortname() != "JointModelFreeFlyer" or model.parents[1] != 0:
        found = model.joints[1].shortname() if model.njoints > 1 else "missing"
        raise ModelError(f"the model needs a free-flyer root joint (joint 1, on the universe); joint 1 is {found}")
    n = model.njoints
    kind = np.zeros(n, dtype=np.int64)
    axis = np.zeros((n, 3))
    axis_index = np.full(n, -1, dtype=np.int64)
    q_index = np.full(n, -1, dtype=np.int64)
    v_index = np.full(n, -1, dtype=np.int64)
    nq = np.zeros(n, dtype=np.int64)
    parent = np.array([model.parents[j] for j in range(n)], dtype=np.int64)
    kind[1] = JOINT_FREE_FLYER
    nq[1] = 7
    q_neutral = pin.neutral(model)
    for j in range(2, n):
        if parent[j] == 0:
            raise ModelError(
                f"joint {model.names[j]!r} hangs on the universe, not on the free-flyer root: it would not move "
                "with the robot"
            )
        kind[j], axis[j], axis_index[j] = _joint_entry(model, j, q_neutral)
        joint = model.joints[j]
        q_index[j], v_index[j], nq[j] = joint.idx_q - 7, joint.idx_v - 6, joint.nq
    X_parent_joint = np.array([model.jointPlacements[j].homogeneous for j in range(n)])
    mass = np.array([model.inertias[j].mass for j in range(n)], dtype=float)
    lever = np.array([model.inertias[j].lever for j in range(n)], dtype=float)
    inertia = np.array([model.inertias[j].inertia for j in range(n)], dtype=float)
    mass[0], lever[0], inertia[0] = 0.0, 0.0, 0.0  # the universe never moves (pinocchio's algorithms skip it)
    ids = [_frame_id(model, f) for f in frames]
    frame_joint = np.array([model.frames[fid].parentJoint for fid in ids], dtype=np.int64).reshape(-1)
    for fid, joint_id in zip(ids, frame_joint):
        if joint_id == 0:
            raise ModelError(
                f"frame {model.frames[fid].name!r} is fixed to the universe: it does not move with the robot"
            )
    X_joint_frame = np.array([model.frames[fid].placement.homogeneous for fid in ids]).reshape(-1, 4, 4)
    gravity = np.array(model.gravity.linear, dtype=float)
    arrays = (parent, kind, axis, axis_index, q_index, v_index, nq, X_parent_joint, mass, lever, inertia)
    _readonly(*arrays, frame_joint, X_joint_frame, gravity)
    return ModelConstants(
        joint_names=tuple(str(name) for name in model.names),
        joint_parent=parent,
        joint_kind=kind,
        joint_axis=axis,
        joint_axis_index=axis_index,
        joint_q_index=q_index,
        joint_v_index=v_index,
        joint_nq=nq,
        X_parent_joint=X_parent_joint,
        body_mass=mass,
        body_lever=lever,
        body_inertia=inertia,
        frame_names=tuple(model.frames[fid].name for fid in ids),
        frame_ids=tuple(ids),
        frame_joint=frame_joint,
        X_joint_frame=X_joint_frame,
        gravity=gravity,
        total_mass=float(pin.computeTotalMass(model)),
        nq_joints=model.nq - 7,
        nv_joints=model.nv - 6,
    )
