"""Steps 2-6 of the quadruped generator, one sample after the other: the whole-body trajectory ``(q, v, a)``, the
joint torques and the contact forces of a planned gait (pipeline in :mod:`.generator`).

Per sample ``k``: the base pose from the plan, the leg joints warm-started from the previous sample extrapolated
with its velocity and acceleration; the foot targets (:mod:`.foot_targets`); the leg joints by inverse kinematics
and their velocities and accelerations through the contact-point Jacobians (:mod:`.inverse_kinematics`, rolling
feet: :mod:`.rolling`); ``tau_full = RNEA(q, v, a)`` (pinocchio) and the contact forces that balance it
(:mod:`.contact_forces`). :class:`TrajectoryRecorder` keeps the samples for both generators (the biped's loop:
:mod:`.biped`).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.simulation.contact_forces import ContactForces, is_unbalanced, point_contact_forces
from robot_state_estimator.simulation.foot_targets import FootSchedule, FootTargets
from robot_state_estimator.simulation.inverse_kinematics import (
    Legs,
    contact_jacobians,
    foot_joint_rates,
    solve_foot_positions,
)
from robot_state_estimator.simulation.robots import SimRobot
from robot_state_estimator.simulation.rolling import contact_offsets
from robot_state_estimator.simulation.run import WholeBodyTrajectory
from robot_state_estimator.simulation.trajectory import BaseState, FootPlan

FloatArray = NDArray[np.float64]


class TrajectoryRecorder:
    """The samples of a whole-body trajectory as they are generated (the arrays of :class:`WholeBodyTrajectory`),
    with the counters of unilateral, unbalanced and friction-violating samples."""

    def __init__(self, model: pin.Model, n: int, nf: int) -> None:
        nq, nv = model.nq, model.nv
        self.q = np.empty((n, nq))
        self.v = np.empty((n, nv))
        self.a = np.empty((n, nv))
        self.tau = np.empty((n, nv - 6))
        self.res = np.empty((n, 6))
        self.f = np.zeros((n, nf, 3))
        self.w_foot = np.zeros((n, nf, 6))
        self.foot_p = np.empty((n, nf, 3))
        self.weight = pin.computeTotalMass(model) * 9.81
        self.violations = 0
        self.unilateral = 0
        self.unbalanced = 0

    def predicted_joints(self, k: int, h: float) -> FloatArray:
        """The joint positions (nq - 7,) of sample ``k - 1`` (k > 0) extrapolated ``h`` s with its joint velocity
        and acceleration (the start of the inverse kinematics)."""
        q_joints: FloatArray = self.q[k - 1, 7:] + self.v[k - 1, 6:] * h + 0.5 * self.a[k - 1, 6:] * h * h
        return q_joints

    def store(
        self, k: int, qva: tuple[FloatArray, FloatArray, FloatArray], foot_p: FloatArray, forces: ContactForces
    ) -> None:
        """Sample ``k``: configuration, velocity, acceleration ``qva``, foot origins ``foot_p`` (nf, 3) m (W) and
        the contact forces (torques, base residual, counters)."""
        self.q[k], self.v[k], self.a[k] = qva
        self.foot_p[k] = foot_p
        resid = forces.residual
        self.tau[k] = resid[6:]
        self.res[k] = resid[:6]
        self.f[k] = forces.f
        self.w_foot[k] = forces.w_foot
        self.violations += forces.violations
        self.unilateral += int(forces.unilateral)
        self.unbalanced += is_unbalanced(resid, self.weight)

    def trajectory(self, contact: NDArray[np.bool_], slipping: NDArray[np.bool_]) -> WholeBodyTrajectory:
        """The recorded trajectory, with the contact and slipping flags (n, nf) of the plan."""
        return WholeBodyTrajectory(
            q=self.q,
            v=self.v,
            a=self.a,
            tau=self.tau,
            res=self.res,
            f=self.f,
            w_foot=self.w_foot,
            violations=self.violations,
            unilateral=self.unilateral,
            unbalanced=self.unbalanced,
            foot_p=self.foot_p,
            contact=contact,
            slipping=slipping,
        )


def whole_body(
    robot: SimRobot,
    q_start: FloatArray,
    t: FloatArray,
    base: BaseState,
    plans: list[FootPlan],
    touchdown_bases: list[tuple[BaseState, BaseState] | None],
    rho: FloatArray,
    mu: float,
) -> WholeBodyTrajectory:
    """Joint trajectory, torques and contact forces of a quadruped, one sample after the other (module docstring).

    Args:
        robot: the robot (3-joint legs).
        q_start: (nq,) the configuration the first sample's inverse kinematics starts from.
        t: (n,) s, the grid times; base: the base trajectory at them.
        plans: per foot, its swings, footholds and slips.
        touchdown_bases: per foot, the base at its touch-downs (:func:`~.rolling.touchdown_bases`).
        rho: (nf,) m, the foot radii (0: point feet).
        mu: the friction coefficient (violations are counted).

    Raises:
        SimulationError: a leg whose inverse kinematics does not converge (a target out of reach).
        numpy.linalg.LinAlgError: a singular leg Jacobian (a leg straight or folded flat).
    """
    model = robot.model
    data = model.createData()
    legs = Legs(model, robot.feet)
    schedule = FootSchedule.evaluate(plans, t)
    Dx = contact_offsets(rho)  # (nf, 3, 3)
    rolling = rho > 0.0
    targets = FootTargets(model, legs, plans, t, schedule, Dx, rolling, touchdown_bases)
    out = TrajectoryRecorder(model, t.size, len(plans))
    q = q_start.copy()
    for k in range(t.size):
        tk = float(t[k])
        h = tk - float(t[k - 1]) if k > 0 else 0.0
        q[:7] = base.q_base[k]
        if k > 0:
            q[7:] = out.predicted_joints(k, h)
        targets.update(k, h, q)
        J6 = solve_foot_positions(model, data, legs, q, targets.p, tk)  # (nf, 6, nv)
        stance = np.flatnonzero(schedule.contact[k])
        rollers = stance[rolling[stance]]  # stance feet with a radius
        # contact-point Jacobians for stance feet, foot-origin Jacobians in swing
        Jc = contact_jacobians(J6, Dx, rollers)
        base_twist = (base.v_base[k], base.a_base[k])
        v, a, drift_ang = foot_joint_rates(model, data, legs, q, Jc, base_twist, targets.v, targets.a, Dx, rollers)
        targets.finish(k, h, rollers, J6[:, 3:], (v, a), drift_ang)
        tau_full = pin.rnea(model, data, q, v, a)
        forces = point_contact_forces(data, legs.frame_ids, Jc, stance, Dx, tau_full, out.weight, mu)
        out.store(k, (q, v, a), targets.p, forces)
    return out.trajectory(schedule.contact, schedule.slipping)
