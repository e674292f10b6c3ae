"""Rolling spherical feet (``foot_model="sphere"``) and point feet (``"point"``), checked with pinocchio
quantities computed here, independently of the generator's contact-point Jacobian."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.description import load_description
from robot_state_estimator.simulation import SimulationError, SimulationSettings, SlipEvent, load_sim_robot, simulate
from robot_state_estimator.simulation.trajectory import SwingSegment, smoothstep

E_Z = np.array([0.0, 0.0, 1.0])
LWA = pin.LOCAL_WORLD_ALIGNED


@pytest.fixture(scope="module")
def go1():
    return load_sim_robot("go1")


@pytest.fixture(scope="module")
def trot(go1):
    """Default foot model: Go1's description has 0.02 m foot spheres, so they roll."""
    return simulate(SimulationSettings(robot="go1", gait="trot", duration_s=3.0, settle_s=0.5, ramp_s=0.5), robot=go1)


def _foot_motion(run, model, foot: str) -> tuple[np.ndarray, ...]:
    """Per sample: the foot origin's velocity and classical acceleration (n, 3), the foot's angular velocity
    and acceleration (n, 3) in W (pinocchio, LOCAL_WORLD_ALIGNED), and the velocity (n, 3) of the body point at
    the contact point ``p_F - rho e_z``, from an operational frame placed there on the foot's joint at each
    sample."""
    model = model.copy()
    fid = model.getFrameId(foot)
    joint = model.frames[fid].parentJoint
    cid = model.addFrame(pin.Frame("contact_point", joint, fid, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    data = model.createData()
    rho = run.foot_radii[run.feet.index(foot)]
    n = run.q.shape[0]
    v_origin, a_origin, omega, alpha, v_contact = (np.empty((n, 3)) for _ in range(5))
    for k in range(n):
        pin.forwardKinematics(model, data, run.q[k], run.v[k], run.a[k])
        c_world = pin.updateFramePlacement(model, data, fid).translation - rho * E_Z
        model.frames[cid].placement = pin.SE3(np.eye(3), data.oMi[joint].actInv(c_world))
        vel = pin.getFrameVelocity(model, data, fid, LWA)
        v_origin[k], omega[k] = vel.linear, vel.angular
        acc = pin.getFrameClassicalAcceleration(model, data, fid, LWA)
        a_origin[k], alpha[k] = acc.linear, acc.angular
        v_contact[k] = pin.getFrameVelocity(model, data, cid, LWA).linear
    return v_origin, a_origin, omega, alpha, v_contact


def test_default_foot_model_follows_the_description(go1, trot):
    assert go1.foot_radii == (0.02, 0.02, 0.02, 0.02)
    assert trot.foot_model == "sphere" and trot.settings.foot_model == "sphere"
    np.testing.assert_array_equal(trot.foot_radii, [0.02] * 4)
    # the stored description keeps the spheres: an estimator taking the radii from it rolls the same feet
    stored = load_description(trot.description_xml)
    assert [stored.foot_radius(f) for f in trot.feet] == [0.02] * 4
    solo = load_sim_robot("solo12")
    assert solo.foot_radii == (0.0,) * 4
    run = simulate(SimulationSettings(robot="solo12", gait="stand", duration_s=0.05), robot=solo)
    assert run.foot_model == "point"
    with pytest.raises(SimulationError, match="no collision sphere"):
        simulate(SimulationSettings(robot="solo12", gait="stand", duration_s=0.05, foot_model="sphere"), robot=solo)
    with pytest.raises(SimulationError, match="foot_model"):
        SimulationSettings(foot_model="box")


def test_contact_points_are_at_rest_and_centres_roll(trot, go1):
    model = go1.model
    data = model.createData()
    worst_fk = 0.0
    for k in range(0, trot.q.shape[0], 7):
        pin.framesForwardKinematics(model, data, trot.q[k])
        for i, foot in enumerate(trot.feet):
            worst_fk = max(
                worst_fk,
                float(np.abs(data.oMf[model.getFrameId(foot)].translation - trot.foot_positions_world[k, i]).max()),
            )
    assert worst_fk < 1e-9
    np.testing.assert_allclose(trot.contact_points_world, trot.foot_positions_world - 0.02 * E_Z, atol=1e-15)
    for i, foot in enumerate(trot.feet):
        st = trot.contact[:, i]
        assert np.all(trot.contact_points_world[st, i, 2] == 0.0)  # on the ground, centre at z = rho
        v_origin, _, omega, _, v_contact = _foot_motion(trot, model, foot)
        # the body point at the contact is at rest (1e-15 m/s: rounding) ...
        assert np.abs(v_contact[st]).max() < 1e-12
        # ... while the centre moves with omega x (rho e_z): up to 0.037 m/s on this 0.4 m/s trot
        np.testing.assert_allclose(v_origin[st], np.cross(omega[st], 0.02 * E_Z), atol=1e-12)
        assert np.abs(v_origin[st]).max() > 0.02
    assert not trot.contact.all(axis=1).all()  # the feet do step


def test_centre_positions_integrate_their_velocities(trot, go1):
    """The centre moves from sample to sample as its velocity and acceleration say: the Euler-Maclaurin
    step ``h (v0 + v1) / 2 - h^2 (a1 - a0) / 12`` (error O(h^5)) matches the displacement to 1e-10 m per 1 ms
    step, touch-downs included (measured 2e-11 m); summed over every stance of the run to 1e-8 (3e-9 m)."""
    dt = np.diff(trot.t_s)[:, None]
    for i, foot in enumerate(trot.feet):
        v, a, _, _, _ = _foot_motion(trot, go1.model, foot)
        step = np.diff(trot.foot_positions_world[:, i], axis=0)
        predicted = 0.5 * dt * (v[1:] + v[:-1]) - dt**2 * (a[1:] - a[:-1]) / 12
        both = trot.contact[1:, i] & trot.contact[:-1, i]
        err = (step - predicted)[both]
        assert np.abs(err).max() < 1e-10
        assert np.abs(err.sum(axis=0)).max() < 1e-8


def test_rolling_distance_is_radius_times_rotation(trot, go1):
    """Rolling without slipping on the plane z = 0: ``dx = rho int omega_y dt``, ``dy = -rho int omega_x dt``
    over each stance (omega and alpha from pinocchio, trapezoid with the Euler-Maclaurin end correction), to
    3e-9 m: the generator's integration of the rolling (measured 8e-10 m on 7-8 mm per stance); the height
    stays rho."""
    dt = np.diff(trot.t_s)
    for i, foot in enumerate(trot.feet):
        _, _, omega, alpha, _ = _foot_motion(trot, go1.model, foot)
        st = trot.contact[:, i].astype(int)
        starts = np.flatnonzero(np.diff(st) == 1) + 1
        ends = np.flatnonzero(np.diff(st) == -1)
        assert starts.size >= 2
        for k0, k1 in zip(starts, ends[ends > starts[0]]):
            ks = slice(k0, k1 + 1)
            h = dt[k0:k1, None]
            rot = np.sum(
                0.5 * h * (omega[k0 + 1 : k1 + 1] + omega[k0:k1]) - h**2 * (alpha[k0 + 1 : k1 + 1] - alpha[k0:k1]) / 12,
                axis=0,
            )
            moved = trot.foot_positions_world[k1, i] - trot.foot_positions_world[k0, i]
            np.testing.assert_allclose(moved, 0.02 * np.array([rot[1], -rot[0], 0.0]), rtol=0, atol=3e-9)
            assert np.linalg.norm(moved) > 1e-3  # a real roll: several mm per stance
            np.testing.assert_allclose(trot.foot_positions_world[ks, i, 2], 0.02, atol=1e-15)


def test_pure_roll_standing_up(go1):
    """Standing up, the Go1's shanks turn about the lateral axis (world y) while the base rises: a pure roll,
    so each foot rolls forwards by rho times the angle its frame turned (0.256 rad -> 5.114 mm; measured to
    3e-12 relative)."""
    run = simulate(
        SimulationSettings(robot="go1", gait="stand_up", duration_s=2.5, settle_s=0.2, ramp_s=1.0), robot=go1
    )
    assert run.contact.all()
    model, data = go1.model, go1.model.createData()
    for i, foot in enumerate(run.feet):
        fid = model.getFrameId(foot)
        R = []
        for k in (0, -1):
            pin.framesForwardKinematics(model, data, run.q[k])
            R.append(data.oMf[fid].rotation.copy())
        rotvec = pin.log3(R[1] @ R[0].T)  # rotation of the foot frame, world axes
        angle = np.linalg.norm(rotvec)
        assert angle > 0.2 and abs(rotvec[1]) / angle > 1.0 - 1e-12  # about y only
        moved = run.foot_positions_world[-1, i] - run.foot_positions_world[0, i]
        assert moved[2] == pytest.approx(0.0, abs=1e-15)
        np.testing.assert_allclose(moved[:2], 0.02 * np.array([rotvec[1], -rotvec[0]]), rtol=0, atol=1e-11)
        assert np.linalg.norm(moved[:2]) == pytest.approx(0.02 * angle, rel=1e-9)


def test_forces_act_at_the_contact_points(trot, go1):
    model, data = go1.model, go1.model.createData()
    for k in range(0, trot.q.shape[0], 97):
        q, v, a = trot.q[k], trot.v[k], trot.a[k]
        pin.framesForwardKinematics(model, data, q)
        fext = [pin.Force.Zero() for _ in range(model.njoints)]
        for i, foot in enumerate(trot.feet):
            fid = model.getFrameId(foot)
            f_W = trot.contact_forces_world[k, i]
            c_W = trot.contact_points_world[k, i]
            joint = model.frames[fid].parentJoint
            fext[joint] += data.oMi[joint].actInv(pin.Force(f_W, np.cross(c_W, f_W)))
            # the wrench in the foot frame about its origin: force at the contact point, rho below
            R = data.oMf[fid].rotation
            np.testing.assert_allclose(trot.contact_wrenches_in_foot[k, i, :3], R.T @ f_W, atol=1e-9)
            np.testing.assert_allclose(
                trot.contact_wrenches_in_foot[k, i, 3:], R.T @ np.cross(-0.02 * E_Z, f_W), atol=1e-9
            )
        tau = pin.rnea(model, data, q, v, a, fext)
        np.testing.assert_allclose(tau[6:], trot.tau[k], atol=1e-8)
        np.testing.assert_allclose(tau[:6], trot.base_residual_wrench[k], atol=1e-8)
    assert np.abs(trot.base_residual_wrench[trot.contact.sum(axis=1) >= 3]).max() < 1e-6
    assert trot.friction_violations == 0


def test_point_feet_rest_and_are_declared(go1):
    """``foot_model="point"``: the foot frame origins are fixed in stance, on z = 0, and the stored description
    has no foot spheres (an estimator taking the radius from it uses point feet)."""
    run = simulate(
        SimulationSettings(robot="go1", gait="trot", duration_s=2.0, settle_s=0.5, ramp_s=0.5, foot_model="point"),
        robot=go1,
    )
    assert run.foot_model == "point" and not run.foot_radii.any()
    for i, foot in enumerate(run.feet):
        both = run.contact[1:, i] & run.contact[:-1, i]
        assert np.abs(np.diff(run.foot_positions_world[:, i], axis=0))[both].max() < 1e-9
        assert np.all(run.foot_positions_world[run.contact[:, i], i, 2] == 0.0)
        v_contact = _foot_motion(run, go1.model, foot)[-1]
        assert np.abs(v_contact[run.contact[:, i]]).max() < 1e-12
    assert np.all(run.contact_wrenches_in_foot[:, :, 3:] == 0.0)
    stored = load_description(run.description_xml)
    bundled = load_description(robot_description_path("go1"))
    assert [bundled.foot_radius(f) for f in go1.feet] == [0.02] * 4
    assert [stored.foot_radius(f) for f in go1.feet] == [0.0] * 4
    assert run.description_xml.count("<collision") == bundled.xml.count("<collision") - 4  # only the feet
    assert stored.joint_names == bundled.joint_names
    assert stored.imu.pose_in_base.isApprox(bundled.imu.pose_in_base, 1e-15)


def test_slip_moves_the_contact_point_of_a_rolling_foot(go1):
    """A slip of a rolling foot displaces its contact body point by the slip displacement: the integral of
    that point's velocity (pinocchio) over the stance equals d, while the centre also rolls."""
    d = np.array([0.02, -0.01, 0.0])
    slip = SlipEvent("FL_foot", 0.55, 0.04, (d[0], d[1]))
    run = simulate(SimulationSettings(robot="go1", gait="trot", duration_s=1.0, settle_s=0.5, slip=slip), robot=go1)
    assert run.slipping[:, 0].any() and not run.slipping[:, 1:].any()
    v_contact = _foot_motion(run, go1.model, "FL_foot")[-1]
    st = run.contact[:, 0]
    first_swing = np.flatnonzero(~st)[0]
    ks = slice(0, first_swing)
    dt = np.diff(run.t_s[ks])[:, None]
    slid = np.sum(0.5 * (v_contact[ks][1:] + v_contact[ks][:-1]) * dt, axis=0)
    np.testing.assert_allclose(slid, d, atol=1e-6)  # trapezoid of a quintic over 40 samples
    sig = smoothstep(run.t_s, 0.55, 0.04)
    np.testing.assert_allclose(v_contact[ks], sig.dx[ks, None] * d, atol=1e-12)


def test_swing_segment_matches_both_ends():
    rng = np.random.default_rng(1)
    p0, v0, a0, p1, v1, a1 = rng.normal(size=(6, 3))
    p0[2] = p1[2] = 0.02
    seg = SwingSegment.hermite(1.0, 1.2, (p0, v0, a0), (p1, v1, a1), step_height=0.06)
    for t, expected in ((1.0, (p0, v0, a0)), (1.2, (p1, v1, a1))):
        for got, want in zip(seg.evaluate(t), expected):
            np.testing.assert_allclose(got, want, atol=1e-12)
    # apex of the bump at mid-swing; zero end derivatives give the quintic smoothstep
    zero = np.zeros(3)
    flat = SwingSegment.hermite(0.0, 1.0, (zero, zero, zero), (np.array([1.0, 0, 0]), zero, zero), 0.05)
    for t in (0.1, 0.5, 0.8):
        p, v, a = flat.evaluate(t)
        s = smoothstep(np.array([t]), 0.0, 1.0)
        np.testing.assert_allclose([p[0], v[0], a[0]], [s.x[0], s.dx[0], s.ddx[0]], atol=1e-14)
    assert flat.evaluate(0.5)[0][2] == pytest.approx(0.05)


def test_legacy_settings_read_as_point_feet():
    s = SimulationSettings.from_dict({"robot": "go1", "foot_radius_m": 0.0})
    assert s.foot_model == "point"
    with pytest.raises(SimulationError):
        SimulationSettings.from_dict({"foot_radius_m": 0.02})
