"""The compiled kinematics and dynamics kernels (:mod:`robot_state_estimator.estimation.kinematics_kernels`) with
their model, work and output arrays, for calls from Python: tests, benchmarks, ``precompile``, a caller outside a
compiled step (the estimator's compiled joint step calls the kernels itself, with its own arrays).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.estimation.jit import entry_point, numba_available
from robot_state_estimator.estimation.kinematics_kernels import (
    foot_terms,
    gravity_torques,
    make_work,
    pack_model,
    rnea,
)
from robot_state_estimator.estimation.model_constants import ModelConstants, extract_model_constants

FloatArray = NDArray[np.float64]

__all__ = ["CompiledKinematics", "compile_kinematics_kernels"]


class CompiledKinematics:
    """The kernels of :mod:`.kinematics_kernels` with their model, work and output arrays, for calls from Python
    (tests, benchmarks, a caller outside a compiled step). Each method calls one compiled entry point (no numba type
    dispatch).

    Args:
        constants: from :func:`~robot_state_estimator.estimation.model_constants.extract_model_constants`.

    Attributes:
        constants: the constants.
        model: the :class:`~.kinematics_kernels.KernelModel` arrays.
        work: (njoints, 46) the work array.
        X_base_frame: (nf, 4, 4) frame placements in the base after :meth:`update`.
        J_base_frame: (nf, 6, nv - 6) frame Jacobians (linear; angular rows, base axes) after :meth:`update`.
        com: (3,) m, centre of mass in the base after :meth:`update`.
        J_com: (3, nv - 6) its Jacobian after :meth:`update`.
        total_mass: kg.
        tau: (nv,) the last :meth:`rnea` result.
        tau_gravity: (nv - 6,) the last :meth:`gravity_torques` result.
    """

    def __init__(self, constants: ModelConstants) -> None:
        c = constants
        self.constants = c
        self.model = pack_model(c)
        self.work = make_work(c)
        self.X_base_frame = np.tile(np.eye(4), (c.n_frames, 1, 1))
        self.J_base_frame = np.zeros((c.n_frames, 6, c.nv_joints))
        self.com = np.zeros(3)
        self.J_com = np.zeros((3, c.nv_joints))
        self.total_mass = c.total_mass
        self.tau = np.zeros(c.nv_joints + 6)
        self.tau_gravity = np.zeros(c.nv_joints)
        m = self.model
        q = np.zeros(c.nq_joints)
        self._foot_args = (m.joint_ints, m.joint_floats, m.frame_ints, m.frame_floats, self.work, self.X_base_frame,
                           self.J_base_frame, self.com, self.J_com)  # fmt: skip
        self._foot_terms = _entry(foot_terms, q, *self._foot_args)
        self._gravity = _entry(gravity_torques, self.J_com, 1.0, np.zeros(3), self.tau_gravity)
        self._rnea = _entry(rnea, self.tau, self.tau, np.zeros(3), m.joint_ints, m.joint_floats, self.work, self.tau)

    def update(self, q_joints: FloatArray) -> None:
        """:func:`foot_terms` of the joint positions: frame placements and Jacobians, centre of mass and its
        Jacobian (written into the attributes).

        Args:
            q_joints: (nq - 7,) float64 C-contiguous, the joint part of the pinocchio configuration.

        Raises:
            ValueError: ``q_joints`` of the wrong shape or type (the compiled call would read it wrongly).
        """
        self.total_mass = self._foot_terms(_checked(q_joints, self.constants.nq_joints, "q_joints"), *self._foot_args)

    def gravity_torques(self, g_base: FloatArray) -> FloatArray:
        """(nv - 6,) N m, :func:`gravity_torques` at the last :meth:`update` (the ``tau_gravity`` array).

        Args:
            g_base: (3,) m/s^2, gravity in base axes.
        """
        self._gravity(self.J_com, self.total_mass, _checked(g_base, 3, "g_base"), self.tau_gravity)
        return self.tau_gravity

    def rnea(self, v: FloatArray, a: FloatArray, g_base: FloatArray) -> FloatArray:
        """(nv,) :func:`rnea` at the last :meth:`update`'s joint positions (the ``tau`` array).

        Args:
            v: (nv,) pinocchio velocity (base frame).
            a: (nv,) pinocchio acceleration, gravity excluded.
            g_base: (3,) m/s^2, gravity in base axes.
        """
        nv = self.constants.nv_joints + 6
        m = self.model
        self._rnea(_checked(v, nv, "v"), _checked(a, nv, "a"), _checked(g_base, 3, "g_base"), m.joint_ints,
                   m.joint_floats, self.work, self.tau)  # fmt: skip
        return self.tau


def compile_kinematics_kernels(model: Any, frames: Sequence[str | int]) -> CompiledKinematics:
    """Compile (or load from numba's cache) every kernel of :mod:`.kinematics_kernels` with the array layouts of
    :class:`CompiledKinematics`, and run each once at zero joint positions (``precompile``).

    Args:
        model: a pinocchio model (see ``extract_model_constants``).
        frames: the frames, by name or id.
    """
    ck = CompiledKinematics(extract_model_constants(model, frames))
    nv = ck.constants.nv_joints + 6
    ck.update(np.zeros(ck.constants.nq_joints))
    g = np.array(ck.constants.gravity)
    ck.gravity_torques(g)
    ck.rnea(np.zeros(nv), np.zeros(nv), g)
    return ck


def _entry(fn: Any, *args: Any) -> Any:
    """The compiled entry point of kernel ``fn`` for these argument types, or ``fn`` itself without numba."""
    return entry_point(fn, *args) if numba_available() else fn


def _checked(x: FloatArray, n: int, name: str) -> FloatArray:
    if not (isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (n,) and x.flags.c_contiguous):
        raise ValueError(f"{name} must be a C-contiguous float64 array of shape ({n},), got {np.asarray(x).shape}")
    return x
