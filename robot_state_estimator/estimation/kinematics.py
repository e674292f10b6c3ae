"""Leg kinematics with pinocchio: foot positions, Jacobians and the leg-odometry base velocity.

Everything here is computed with the base at the identity (``q_base = [0 0 0, 0 0 0 1]``), so "world" axes of
pinocchio's ``LOCAL_WORLD_ALIGNED`` are the base axes B. For a foot i at rest on the ground (Bloesch et al.
2012, "State estimation for legged robots", eq. 9; mim_estimation ``BaseEkfWithImuKin``):

    0 = v_foot_in_world = R_world_base (v_base_in_base + omega_base_in_base x r_i + J_i qdot)
    =>  v_base_in_base = -(J_i qdot) - omega_base_in_base x r_i

with ``r_i`` (3,) m the foot position in B and ``J_i`` (3, n) the linear Jacobian of the foot point with
respect to the joint positions, in B.

Rolling spherical feet (radius ``rho_i``, foot frame origin = sphere centre). The point of the foot body that
is at rest in stance is the contact point, ``rho_i`` below the centre along the world vertical:
``c_i = r_i + d_i`` with ``d_i = -rho_i R_world_base^T e_z`` (in B). The velocity of that body point (a point of the
foot body at this instant) is the foot origin's velocity plus the foot's angular velocity crossed with the
offset, all relative to the world and expressed in B:

    0 = v_base_in_base + omega_base_in_base x c_i + J_lin,i qdot + (J_ang,i qdot) x d_i
    =>  v_base_in_base = -(J_lin,i qdot + (J_ang,i qdot) x d_i) - omega_base_in_base x c_i
                       = -(J_c,i qdot) - omega_base_in_base x c_i

where ``J_lin``/``J_ang`` are the rows of the 6-D ``LOCAL_WORLD_ALIGNED`` foot Jacobian (base at the identity,
so its axes are B's): ``J_lin qdot`` is the foot origin's velocity relative to the base and ``J_ang qdot`` the
foot's angular velocity relative to the base; ``J_c,i = J_lin,i - [d_i]x J_ang,i`` is the Jacobian of the
contact body point. ``rho_i = 0`` is the point foot above exactly. The centre itself moves by
``omega_foot x (rho e_z)`` (in W): the sphere rolls.
 The model must have a free-flyer root joint (named ``root_joint``) with
the base link on it, and one-DoF joints otherwise.

Frame ids, leg joint indices and work buffers are computed once; :meth:`LegKinematics.update` does one
forward-kinematics + Jacobian pass for all feet (a few microseconds for a 12-DoF quadruped).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.estimation.ekf.backends import Backend, select_backend
from robot_state_estimator.estimation.ekf.numerics import cross3, skew
from robot_state_estimator.estimation.errors import ModelError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

__all__ = ["LegKinematics", "check_floating_base_model", "cross3", "skew"]


_compute_joint_jacobians = pin.computeJointJacobians
_update_frame_placement = pin.updateFramePlacement
_get_frame_jacobian = pin.getFrameJacobian
_LWA = pin.LOCAL_WORLD_ALIGNED


def check_floating_base_model(model: pin.Model) -> None:
    """Check the model has a free-flyer root joint (index 1) and only one-DoF joints below it.

    Raises:
        ModelError: naming what does not fit.
    """
    if model.njoints < 2 or model.joints[1].shortname() != "JointModelFreeFlyer":
        raise ModelError(
            "the model needs a free-flyer root joint (build it with pin.JointModelFreeFlyer()); "
            f"joint 1 is {model.joints[1].shortname() if model.njoints > 1 else 'missing'}"
        )
    for j in range(2, model.njoints):
        if model.joints[j].nq != 1 or model.joints[j].nv != 1:
            raise ModelError(f"joint {model.names[j]!r} has nq={model.joints[j].nq}; only 1-DoF joints supported")


class LegKinematics:
    """Foot positions and Jacobians in the base frame for a floating-base model.

    Args:
        model: pinocchio model with a free-flyer root joint; not modified.
        foot_frames: names of the foot frames (contact points), one per leg.
        base_link: name of the base link frame; it must be on the root joint at the identity placement
            (the pinocchio free-flyer ``q``/``v`` then describe the base link).
        backend: the numerics of the leg-odometry terms (:mod:`.ekf.backends`; None: ``select_backend()``).

    Attributes:
        model: the model.
        data: pinocchio data owned by this object.
        foot_frames: the foot names.
        foot_frame_ids: (n_feet,) pinocchio frame ids.
        leg_joint_indices: per foot, (n_leg,) indices into the actuated joint vector (pinocchio order) of the
            joints that move that foot.
        p_base_foot: (n_feet, 3) m, foot positions r_i in B after :meth:`update`.
        J_base_foot: (n_feet, 3, n_joints) linear foot Jacobians in B after :meth:`update`.
        J6_base_foot: (n_feet, 6, n_joints) full ``LOCAL_WORLD_ALIGNED`` (base axes) Jacobians.
        R_base_foot: (n_feet, 3, 3) foot frame orientations in B.
        X_base_foot: (n_feet, 4, 4) foot placements in B, homogeneous; ``p_base_foot`` and ``R_base_foot`` are
            views of it, as ``J_base_foot`` is of ``J6_base_foot`` (arrays updated in place by :meth:`update`).

    Raises:
        ModelError: no free-flyer root, multi-DoF joints, unknown frame, base link not on the root.
    """

    def __init__(
        self, model: pin.Model, foot_frames: Sequence[str], *, base_link: str, backend: Backend | None = None
    ) -> None:
        check_floating_base_model(model)
        self.backend = select_backend() if backend is None else backend
        self.model = model
        self.data = model.createData()
        self.foot_frames: tuple[str, ...] = tuple(foot_frames)
        if not self.foot_frames:
            raise ModelError("no foot frames given")
        if not model.existFrame(base_link):
            raise ModelError(f"base link {base_link!r} is not a frame of the model")
        base_frame = model.frames[model.getFrameId(base_link)]
        if base_frame.parentJoint != 1 or not base_frame.placement.isApprox(pin.SE3.Identity(), 1e-9):
            raise ModelError(
                f"base link {base_link!r} must sit on the root joint at the identity placement "
                f"(parent joint {model.names[base_frame.parentJoint]!r})"
            )
        ids = []
        for name in self.foot_frames:
            if not model.existFrame(name):
                raise ModelError(f"foot frame {name!r} is not a frame of the model")
            ids.append(model.getFrameId(name))
        self.foot_frame_ids: tuple[int, ...] = tuple(ids)
        self.n_joints = model.nv - 6
        self.leg_joint_indices: list[IntArray] = []
        for fid in ids:
            parent = model.frames[fid].parentJoint
            support = [j for j in model.supports[parent] if j > 1]
            if not support:
                raise ModelError(f"foot frame {model.frames[fid].name!r} is not moved by any joint")
            self.leg_joint_indices.append(np.array(sorted(model.joints[j].idx_v - 6 for j in support)))
        #: (nq,) the configuration of the pinocchio pass: the base at the identity, then the joint positions
        self.configuration = pin.neutral(model)
        self.configuration[:7] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        n_feet = len(ids)
        # One buffer per quantity, filled by one assignment per foot; the public arrays are views of them.
        #: (n_feet, 4, 4) foot placements in B (homogeneous): rotation ``R_base_foot``, translation ``p_base_foot``.
        self.X_base_foot = np.tile(np.eye(4), (n_feet, 1, 1))
        self.p_base_foot = self.X_base_foot[:, :3, 3]
        self.R_base_foot = self.X_base_foot[:, :3, :3]
        self.J6_base_foot = np.zeros((n_feet, 6, self.n_joints))
        #: (n_feet, n_joints) bool, whether joint j moves foot i (its columns of J6_base_foot may be non-zero)
        self.support = np.zeros((n_feet, self.n_joints), dtype=bool)
        for i, idx in enumerate(self.leg_joint_indices):
            self.support[i, idx] = True
        # The linear rows are a view of the full Jacobians: filled by the same assignment.
        self.J_base_foot = self.J6_base_foot[:, :3, :]

    @property
    def n_feet(self) -> int:
        """Number of feet."""
        return len(self.foot_frame_ids)

    def update(self, q_joints: FloatArray) -> None:
        """Forward kinematics and foot Jacobians for the joint positions, base at the identity.

        All kinematics is pinocchio's: ``computeJointJacobians`` (forward kinematics and the joint Jacobians,
        once for all feet), then per foot ``updateFramePlacement`` and ``getFrameJacobian(...,
        LOCAL_WORLD_ALIGNED)``. ``data`` is left up to date (``jacobianCenterOfMass(model, data)`` may follow).

        Args:
            q_joints: (n_joints,) rad or m, actuated joint positions in pinocchio order.
        """
        placements, jacobians = self.foot_terms(q_joints)
        X = self.X_base_foot
        J6 = self.J6_base_foot
        for i in range(len(placements)):
            X[i] = placements[i]
            J6[i] = jacobians[i][:, 6:]

    def foot_terms(self, q_joints: FloatArray | None) -> tuple[tuple[FloatArray, ...], tuple[FloatArray, ...]]:
        """pinocchio's pass of :meth:`update` without the copies into ``X_base_foot`` / ``J6_base_foot``.

        ``computeJointJacobians`` (forward kinematics and the joint Jacobians, once for all feet, base at the
        identity), then per foot ``updateFramePlacement`` and ``getFrameJacobian(..., LOCAL_WORLD_ALIGNED)``;
        ``data`` is left up to date. A caller that stores them itself (the backend's joint step, one compiled copy
        instead of two numpy assignments per foot) must leave the buffers as :meth:`update` does.

        Args:
            q_joints: (n_joints,) rad or m, actuated joint positions in pinocchio order; None: those already in
                the joint part of :attr:`configuration` (the backend's ``prepare_joints`` writes them there).

        Returns:
            Per foot, its placement in B as a (4, 4) homogeneous matrix, and its (6, nv) frame Jacobian in B (base
            columns first, then the joints'), each a new C-contiguous float64 array from pinocchio.
        """
        q = self.configuration
        if q_joints is not None:
            q[7:] = q_joints
        model, data = self.model, self.data
        _compute_joint_jacobians(model, data, q)  # forward kinematics + joint Jacobians, once for all feet
        ids = self.foot_frame_ids
        return (
            tuple([_update_frame_placement(model, data, fid).homogeneous for fid in ids]),
            tuple([_get_frame_jacobian(model, data, fid, _LWA) for fid in ids]),
        )

    def foot_velocity_in_base(self, i: int, qdot_joints: FloatArray) -> FloatArray:
        """(3,) m/s, velocity of foot i relative to the base, in B: ``J_i qdot`` (after :meth:`update`)."""
        v_foot_in_base: FloatArray = self.J_base_foot[i] @ qdot_joints
        return v_foot_in_base

    def rolling_contact_terms(
        self,
        idx: IntArray,
        qdot_joints: FloatArray,
        omega_base_in_base: FloatArray,
        R_world_base: FloatArray,
        radii: FloatArray,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """Rolling-contact leg odometry of the feet ``idx``, stacked (after :meth:`update`; module docstring).

        Args:
            idx: (k,) foot indices.
            qdot_joints: (n_joints,) rad/s.
            omega_base_in_base: (3,) rad/s, base angular velocity in B (the filter's estimate).
            R_world_base: (3, 3) base attitude (the filter's estimate; sets the vertical in B).
            radii: (k,) m, foot sphere radii rho of those feet.

        Computed by the backend (the numba kernel ``kernels.legs.leg_velocity_terms`` or the numpy reference,
        :meth:`.ekf.backends.numpy_backend.NumpyBackend.leg_velocity_terms`: this module docstring's formula).

        Returns:
            ``v_base_in_base`` (k, 3) m/s per foot; the contact body points ``c`` (k, 3) m in B; their Jacobians
            ``J_c`` (k, 3, n); and the Jacobians of ``v_base_in_base`` (as computed) w.r.t. the right attitude
            perturbation, ``dv/dtheta = [omega_foot]x [d]x`` (k, 3, 3) with ``omega_foot = omega_base_in_base + J_ang
            qdot`` (see :mod:`robot_state_estimator.estimation.ekf`).
        """
        return self.backend.leg_velocity_terms(
            idx, qdot_joints, omega_base_in_base, R_world_base, radii, self.p_base_foot, self.J6_base_foot
        )

    def point_contact_terms(
        self, idx: IntArray, qdot_joints: FloatArray, omega_base_in_base: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Point-foot leg odometry of the feet ``idx``, stacked (after :meth:`update`; module docstring).

        Args:
            idx: (k,) foot indices.
            qdot_joints: (n_joints,) rad/s.
            omega_base_in_base: (3,) rad/s, base angular velocity in B.

        Returns:
            ``v_base_in_base = -(J_i qdot) - omega_base_in_base x r_i`` (k, 3) m/s; the foot positions ``r`` (k, 3) m in
            B; their Jacobians ``J`` (k, 3, n). Computed by the backend (compiled: :meth:`rolling_contact_terms` with
            zero radii, the same formula in one call).
        """
        return self.backend.point_contact_terms(
            idx, qdot_joints, omega_base_in_base, self.p_base_foot, self.J6_base_foot
        )

    def base_velocity_from_rolling_foot(
        self, i: int, qdot_joints: FloatArray, omega_base_in_base: FloatArray, R_world_base: FloatArray, radius: float
    ) -> FloatArray:
        """(3,) m/s, ``v_base_in_base = -(J_lin qdot + (J_ang qdot) x d) - omega_base_in_base x (r + d)``, ``d = -rho
        R^T e_z`` (the reference formula of :meth:`rolling_contact_terms` for one foot)."""
        d = -radius * np.asarray(R_world_base)[2]
        J6 = self.J6_base_foot[i]
        w_rel = J6[3:] @ qdot_joints
        v_base_in_base: FloatArray = -(J6[:3] @ qdot_joints + np.cross(w_rel, d)) - np.cross(
            omega_base_in_base, self.p_base_foot[i] + d
        )
        return v_base_in_base

    def base_velocity_from_foot(self, i: int, qdot_joints: FloatArray, omega_base_in_base: FloatArray) -> FloatArray:
        """(3,) m/s, base linear velocity in B if foot i is still: ``-(J_i qdot) - omega_base_in_base x r_i``.

        Args:
            i: foot index.
            qdot_joints: (n_joints,) rad/s, joint velocities in pinocchio order.
            omega_base_in_base: (3,) rad/s, base angular velocity in B.
        """
        v_base_in_base: FloatArray = -(self.J_base_foot[i] @ qdot_joints) - cross3(
            omega_base_in_base, self.p_base_foot[i]
        )
        return v_base_in_base
