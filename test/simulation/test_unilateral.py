"""Unilateral contact forces (generator step 5): the ground pushes and never pulls, the dynamics stays exact
where pushing forces can balance the base, the rest is in ``base_residual_wrench``, and runs that never needed
the bounds (every trot) are bit for bit what the closed form gives."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from scipy.optimize import linprog

from robot_state_estimator.simulation import SimulationSettings, load_sim_robot, simulate
from robot_state_estimator.simulation.contact_forces import UNBALANCED_TOLERANCE, unilateral_forces

ROBOTS = ("go1", "solo12", "anymal_c")


@pytest.fixture(scope="module")
def robots():
    return {name: load_sim_robot(name) for name in ROBOTS}


@pytest.fixture(scope="module")
def walks(robots):
    return {
        name: simulate(SimulationSettings(robot=name, gait="walk", duration_s=1.6, settle_s=0.2, ramp_s=0.3), robot=r)
        for name, r in robots.items()
    }


def _weight(robot) -> float:
    return pin.computeTotalMass(robot.model) * 9.81


def _base_rows_with_forces(run, robot, k: int) -> np.ndarray:
    """(nv,) RNEA with the stored contact forces applied at the stored contact points: its first six rows are
    ``M a + h - J_c^T f`` on the base (the residual), the rest the joint torques."""
    model, data = robot.model, robot.model.createData()
    pin.framesForwardKinematics(model, data, run.q[k])
    fext = [pin.Force.Zero() for _ in range(model.njoints)]
    for i, foot in enumerate(run.feet):
        joint = model.frames[model.getFrameId(foot)].parentJoint
        f_W, c_W = run.contact_forces_world[k, i], run.contact_points_world[k, i]
        fext[joint] += data.oMi[joint].actInv(pin.Force(f_W, np.cross(c_W, f_W)))
    return pin.rnea(model, data, run.q[k], run.v[k], run.a[k], fext)


@pytest.mark.parametrize("name", ROBOTS)
def test_walk_never_pulls_and_counts_what_it_cannot_balance(name, walks, robots):
    run, robot = walks[name], robots[name]
    f = run.contact_forces_world
    assert (f[..., 2][run.contact] >= 0.0).all()
    # before the bounds, 8-9 % of the stance forces of these walks pulled (Go1 down to -47.6 N)
    assert run.unilateral_samples > 0
    assert np.any(f[..., 2][run.contact] == 0.0)  # a foot on its bound
    # the friction count is the cone only, recounted here
    tangential = np.hypot(f[..., 0], f[..., 1])
    assert run.friction_violations == int(np.count_nonzero((tangential > 0.8 * f[..., 2])[run.contact]))
    # unbalanced samples: the norm of the residual above 1e-6 of the weight (N, N m at 1 m)
    w = _weight(robot)
    res = run.base_residual_wrench
    big = (np.linalg.norm(res[:, :3], axis=1) > UNBALANCED_TOLERANCE * w) | (
        np.linalg.norm(res[:, 3:], axis=1) > UNBALANCED_TOLERANCE * w
    )
    assert run.unbalanced_samples == int(big.sum()) > 0
    assert np.abs(res[~big]).max() < 1e-7 * w  # the balanced samples are exact to the regularisation


@pytest.mark.parametrize("name", ROBOTS)
def test_walk_dynamics_exact_where_balanced(name, walks, robots):
    """Where the residual is zero the base rows of ``RNEA(q, v, a)`` equal ``J_c,base^T f``: to 1e-8 of the
    weight, the Tikhonov term ``1e-10 trace(A A^T)`` of the solution (Go1 2e-7 N); everywhere the stored
    residual and joint torques are what RNEA with the stored forces gives, to 1e-9 of the weight."""
    run, robot = walks[name], robots[name]
    w = _weight(robot)
    res = run.base_residual_wrench
    size = np.maximum(np.linalg.norm(res[:, :3], axis=1), np.linalg.norm(res[:, 3:], axis=1))
    balanced = np.flatnonzero(size <= UNBALANCED_TOLERANCE * w)
    unbalanced = np.flatnonzero(size > UNBALANCED_TOLERANCE * w)
    assert balanced.size > 0.5 * res.shape[0] and unbalanced.size > 0.1 * res.shape[0]
    assert size[unbalanced].min() > 1e3 * size[balanced].max()  # two separate populations, not a threshold
    for k in np.concatenate([balanced[::53], unbalanced[::29]]):
        tau = _base_rows_with_forces(run, robot, int(k))
        np.testing.assert_allclose(tau[:6], res[k], rtol=0, atol=1e-9 * w)
        np.testing.assert_allclose(tau[6:], run.tau[k], rtol=0, atol=1e-9 * w)
        if size[k] <= UNBALANCED_TOLERANCE * w:
            assert np.abs(tau[:6]).max() < 1e-8 * w


def test_unbalanced_walk_samples_have_no_pushing_solution(walks, robots):
    """Where the walk's residual is non-zero no pushing forces could balance the base (an LP finds the
    smallest L1 residual with ``f_z >= 0``): the bounds do not give up balance that exists."""
    run, robot = walks["go1"], robots["go1"]
    model, data = robot.model, robot.model.createData()
    rho = run.foot_radii
    res = run.base_residual_wrench
    unbalanced = np.flatnonzero(np.linalg.norm(res, axis=1) > 1e-3)
    for k in unbalanced[:: max(1, unbalanced.size // 12)]:
        q, v, a = run.q[k], run.v[k], run.a[k]
        w = pin.rnea(model, data, q, v, a)[:6]
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        cols = []
        for i in np.flatnonzero(run.contact[k]):
            J = pin.getFrameJacobian(model, data, model.getFrameId(run.feet[i]), pin.LOCAL_WORLD_ALIGNED)
            Jc = J[:3] - np.cross(np.array([0.0, 0.0, -rho[i]]), np.eye(3)).T @ J[3:]  # J_lin - [d]x J_ang
            cols.append(Jc[:, :6].T)
        A = np.hstack(cols)
        n = A.shape[1]
        lp = linprog(
            np.concatenate([np.zeros(n), np.ones(6)]),
            A_ub=np.block([[A, -np.eye(6)], [-A, -np.eye(6)]]),
            b_ub=np.concatenate([w, -w]),
            bounds=[(0, None) if j % 3 == 2 else (None, None) for j in range(n)] + [(0, None)] * 6,
            method="highs",
        )
        assert lp.status == 0 and lp.fun > 1e-4


def _square_stance(w_zmp: tuple[float, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Four point feet at (+-0.2, +-0.15, 0) under a base at (0, 0, 0.3) (world axes, identity attitude), a
    100 N weight whose zero-moment point is at ``w_zmp``: ``A`` (6, 12) maps stacked world forces to the base
    force and moment about the base origin."""
    feet = np.array([[0.2, 0.15, -0.3], [0.2, -0.15, -0.3], [-0.2, 0.15, -0.3], [-0.2, -0.15, -0.3]])
    A = np.hstack([np.vstack([np.eye(3), np.cross(p, np.eye(3)).T]) for p in feet])  # [I; [p]x]
    fz = 100.0
    w = np.array([0.0, 0.0, fz, w_zmp[1] * fz, -w_zmp[0] * fz, 0.0])
    f_ref = np.zeros(12)
    f_ref[2::3] = fz / 4
    lam = 1e-10 * np.trace(A @ A.T)
    return A, w, f_ref, lam


def test_bounds_keep_balance_when_pushing_forces_exist():
    """A zero-moment point near a corner of the support square: the equal-share correction pulls the
    opposite foot, pushing forces balancing the base exist (the point is inside the square); the bounded
    problem balances exactly and gives the exact pushing solution closest to the equal share, worked out here
    from the KKT conditions of ``min ||f - f_ref||^2`` s.t. ``A f = w``, ``f_z(hind right) = 0``: the
    projection onto the constraints, all normal forces >= 0 and the bound's multiplier >= 0."""
    A, w, f_ref, lam = _square_stance((0.19, 0.14))
    unconstrained = f_ref + A.T @ np.linalg.solve(A @ A.T + lam * np.eye(6), w - A @ f_ref)
    assert unconstrained[11] < -20.0  # the hind-right foot would be pulled
    f = unilateral_forces(A, w, f_ref, lam)
    assert (f[2::3] >= 0).all() and f[11] == 0.0
    np.testing.assert_allclose(A @ f, w, rtol=0, atol=1e-6)
    C = np.vstack([A, np.eye(12)[11]])
    d = np.concatenate([w, [0.0]])
    expected = f_ref + C.T @ np.linalg.solve(C @ C.T, d - C @ f_ref)
    multipliers = np.linalg.solve(C @ C.T, C @ (2.0 * (expected - f_ref)))
    assert (expected[2::3] >= -1e-12).all() and multipliers[-1] > 0.0  # optimal with this active bound
    np.testing.assert_allclose(f, expected, rtol=0, atol=1e-5)
    # where the closed form pushes already, the bounded problem gives the same forces
    A, w, f_ref, lam = _square_stance((0.05, 0.02))
    closed = f_ref + A.T @ np.linalg.solve(A @ A.T + lam * np.eye(6), w - A @ f_ref)
    assert (closed[2::3] > 0).all()
    np.testing.assert_allclose(unilateral_forces(A, w, f_ref, lam), closed, rtol=0, atol=1e-9)


def test_bounds_leave_a_residual_when_the_zmp_is_outside():
    """Zero-moment point 0.1 m in front of the square: no pushing forces balance the base. The hind feet are
    unloaded, the front feet carry about the weight, and the rest is the regularised least-squares solution
    on the free variables (closed form here) with the bounds' gradients >= 0 (KKT); the pitch moment the feet
    cannot make is left over."""
    A, w, f_ref, lam = _square_stance((0.3, 0.0))
    f = unilateral_forces(A, w, f_ref, lam)
    assert (f[2::3] >= 0).all() and f[8] == 0.0 and f[11] == 0.0
    free = np.setdiff1d(np.arange(12), [8, 11])
    Af = A[:, free]
    x = np.linalg.solve(Af.T @ Af + lam * np.eye(free.size), Af.T @ w + lam * f_ref[free])
    np.testing.assert_allclose(f[free], x, rtol=0, atol=1e-6)
    gradient = A.T @ (A @ f - w) + lam * (f - f_ref)
    assert gradient[8] > 0 and gradient[11] > 0
    np.testing.assert_allclose(f[[2, 5]], 50.0, rtol=0.05)  # the front feet carry about the weight
    assert abs((A @ f - w)[4]) > 5.0  # of the 100 N * 0.1 m pitch moment missing, the f_x make a part


@pytest.mark.parametrize("name", ROBOTS)
def test_trot_forces_are_the_closed_form_bit_for_bit(name, robots):
    """No trot force pulls, so the bounds are never used and the forces are exactly the closed form
    ``f_ref + A^T (A A^T + lam I)^-1 (w - A f_ref)`` recomputed here from the stored ``(q, v, a)``."""
    robot = robots[name]
    run = simulate(SimulationSettings(robot=name, gait="trot", duration_s=1.2, settle_s=0.2, ramp_s=0.3), robot=robot)
    assert run.unilateral_samples == 0 and run.friction_violations == 0
    model, data = robot.model, robot.model.createData()
    weight = pin.computeTotalMass(model) * 9.81
    dx = [np.cross(np.array([0.0, 0.0, -r]), np.eye(3)).T for r in run.foot_radii]  # [d]x
    for k in range(0, run.q.shape[0], 37):
        q = run.q[k]
        pin.computeJointJacobians(model, data, q)
        stance = np.flatnonzero(run.contact[k])
        Jc = []
        for i in stance:
            J6 = pin.getFrameJacobian(model, data, model.getFrameId(run.feet[i]), pin.LOCAL_WORLD_ALIGNED)
            Jc.append(J6[:3] - dx[i] @ J6[3:] if run.foot_radii[i] > 0 else J6[:3].copy())
        Ab = np.array(Jc)[:, :, :6].reshape(-1, 6).T
        tau_full = pin.rnea(model, data, q, run.v[k], run.a[k])
        f_ref = np.zeros(3 * stance.size)
        f_ref[2::3] = weight / stance.size
        AAt = Ab @ Ab.T
        sol = f_ref + Ab.T @ np.linalg.solve(AAt + 1e-10 * np.trace(AAt) * np.eye(6), tau_full[:6] - Ab @ f_ref)
        np.testing.assert_array_equal(run.contact_forces_world[k, stance], sol.reshape(-1, 3))
