"""Plots: the series drawn are the right numbers (known synthetic errors), and a replay's figures carry them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.transform import Rotation

from robot_state_estimator.evaluation import ground_truth, plots, plots_feet
from robot_state_estimator.evaluation import plot_series as S
from robot_state_estimator.evaluation.trajectory import Trajectory


def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


POSE_VAR = np.array([1e-4, 4e-4, 9e-4, 1e-6, 4e-6, 9e-6])
TWIST_VAR = np.array([1e-6, 4e-6, 9e-6, 1e-4, 1e-4, 1e-4])
YAW_OFFSET = 0.7  # rad, the estimate's world turned against the ground truth's
ROLL_ERROR = 0.01  # rad, about the world x axis


def _known_case() -> tuple[Trajectory, Trajectory, np.ndarray, np.ndarray]:
    """Ground truth along x; an estimate in a world turned by YAW_OFFSET and shifted, with errors the 4-DoF
    alignment cannot remove except their mean: y = 1 cm cos(pi t), z = 2 mm/s ramp (symmetric sampling of t in
    [0, 10] makes the cos error carry no yaw: sum of (t - 5) cos(pi t) is 0), a roll error about the world x axis
    and a velocity error in the base frame. Returns (est, gt, position error, velocity error)."""
    t = np.linspace(0.0, 10.0, 1001)
    gt_p = np.column_stack([0.5 * t, np.zeros_like(t), np.full_like(t, 0.3)])
    err = np.column_stack([np.zeros_like(t), 0.01 * np.cos(math.pi * t), 0.002 * t])
    gt_q = np.tile([0.0, 0.0, 0.0, 1.0], (len(t), 1))
    gt_v = np.tile([0.5, 0.0, 0.0], (len(t), 1))
    gt = Trajectory(t, gt_p, gt_q, gt_v)
    # the estimate's world W' maps to the ground truth's by x -> Rz(YAW_OFFSET) x + shift
    R, shift = _rz(YAW_OFFSET), np.array([1.0, -2.0, 0.1])
    est_p = (gt_p + err - shift) @ R  # R^T (gt + err - shift), row-wise
    R_est = Rotation.from_matrix(R.T @ _rx(ROLL_ERROR))  # aligned: Rx(roll error) R_gt (R_gt = I)
    v_err = np.column_stack([0.01 * np.sin(t), np.zeros_like(t), np.full_like(t, -0.02)])
    est = Trajectory(
        t,
        est_p,
        np.tile(R_est.as_quat(), (len(t), 1)),
        gt_v + v_err,
        pose_covariance=np.tile(np.diag(POSE_VAR), (len(t), 1, 1)),
        twist_covariance=np.tile(np.diag(TWIST_VAR), (len(t), 1, 1)),
    )
    return est, gt, err, v_err


def test_errors_are_the_injected_ones_in_the_ground_truth_world_with_rotated_sigmas():
    est, gt, err, v_err = _known_case()
    c = S.compare(est, gt)
    assert c.alignment.yaw_deg == pytest.approx(math.degrees(YAW_OFFSET), abs=1e-9)
    pos = S.position_error(c)
    # the alignment's translation takes the error's mean
    np.testing.assert_allclose(pos.error, err - err.mean(axis=0), atol=1e-9)
    # the estimate's world-frame sigmas, turned into the ground truth's world: var_x' = c^2 var_x + s^2 var_y
    cy, sy = math.cos(YAW_OFFSET), math.sin(YAW_OFFSET)
    want = np.sqrt([cy**2 * POSE_VAR[0] + sy**2 * POSE_VAR[1], sy**2 * POSE_VAR[0] + cy**2 * POSE_VAR[1], POSE_VAR[2]])
    np.testing.assert_allclose(pos.sigma, np.tile(want, (len(gt), 1)), rtol=1e-9)
    att = S.attitude_error(c)
    np.testing.assert_allclose(att.error, np.tile([ROLL_ERROR, 0.0, 0.0], (len(gt), 1)), atol=1e-9)
    want = np.sqrt([cy**2 * POSE_VAR[3] + sy**2 * POSE_VAR[4], sy**2 * POSE_VAR[3] + cy**2 * POSE_VAR[4], POSE_VAR[5]])
    np.testing.assert_allclose(att.sigma[0], want, rtol=1e-9)
    vel = S.velocity_error(c)
    np.testing.assert_allclose(vel.error, v_err, atol=1e-12)
    np.testing.assert_allclose(vel.sigma[0], np.sqrt(TWIST_VAR[:3]), rtol=1e-12)
    assert vel.frame == "base frame"


def want_var_x(series):
    return float(series.sigma[0, 0]) ** 2


def _series_lines(ax, prefix):
    return [line for line in ax.get_lines() if line.get_label().startswith(prefix)]


def _band_top(ax) -> float:
    """Largest y of the axes' fill_between band (its polygon's vertices)."""
    (band,) = [c for c in ax.collections if "sigma" in str(c.get_label())]
    return float(max(p.vertices[:, 1].max() for p in band.get_paths()))


def test_error_figure_draws_the_error_and_its_three_sigma_band():
    est, gt, err, _ = _known_case()
    series = S.position_error(S.compare(est, gt))
    fig = plots.error_figure(series, what="position error", t0=0.0)
    axes = fig.axes
    assert len(axes) == 3
    for k, ax in enumerate(axes):
        (line,) = _series_lines(ax, "error")
        np.testing.assert_allclose(line.get_ydata(), err[:, k] - err[:, k].mean(), atol=1e-9)
        np.testing.assert_allclose(line.get_xdata(), gt.t_s)
        assert _band_top(ax) == pytest.approx(3.0 * series.sigma[0, k], rel=1e-9)
        assert ax.get_legend() is not None
    # x: no error, the band is the view; z: a 9 cm band around a 1 cm error is cut at BAND_VIEW_FACTOR x 1 cm
    assert "band cut" not in " ".join(t.get_text() for t in axes[0].get_legend().get_texts())
    assert axes[0].get_ylim()[1] == pytest.approx(1.05 * 3.0 * math.sqrt(want_var_x(series)), rel=1e-6)
    assert "band cut: 3 sigma median 0.09, max 0.09 m" in " ".join(
        t.get_text() for t in axes[2].get_legend().get_texts()
    )
    assert axes[2].get_ylim()[1] == pytest.approx(1.1 * plots.BAND_VIEW_FACTOR * 0.01, rel=1e-6)
    plots.save(fig, "/dev/null")


def test_error_figure_cuts_a_band_that_would_flatten_the_error():
    t = np.linspace(0, 1, 11)
    err = np.column_stack([0.001 * np.ones_like(t)] * 3)
    series = S.ErrorSeries(t, err, np.full((11, 3), 0.1), "world", "m")
    fig = plots.error_figure(series, what="position error", t0=0.0)
    ax = fig.axes[0]
    assert ax.get_ylim()[1] == pytest.approx(1.1 * plots.BAND_VIEW_FACTOR * 0.001)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("band cut: 3 sigma median 0.3, max 0.3 m" in x for x in texts), texts
    # the legend is outside the data: to the right of the axes
    fig.canvas.draw()
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1
    plots.save(fig, "/dev/null")


def test_height_view_is_set_by_the_curves_not_by_a_growing_band():
    est, gt, _, _ = _known_case()
    cov = est.pose_covariance.copy()
    cov[:, 2, 2] = np.linspace(1e-6, 1.0, len(est))  # z sigma up to 1 m
    from dataclasses import replace

    est = replace(est, pose_covariance=cov)
    fig = plots.height_figure(est, gt, t0=0.0)
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    z = np.concatenate([gt.p_world_base[:, 2], S.compare(est, gt).est.p_world_base[:, 2]])
    assert lo < z.min() and hi > z.max()
    assert hi - lo < 2.0 * (z.max() - z.min()) + 0.01  # the curves fill the view
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("cut: reaches +-3 m" in x for x in texts), texts
    (g,) = _series_lines(ax, "ground truth")
    np.testing.assert_allclose(g.get_ydata(), gt.p_world_base[:, 2])
    plots.save(fig, "/dev/null")


def test_roll_pitch_yaw_and_their_sigmas():
    t = np.linspace(0.0, 4.0, 401)
    yaw, pitch, roll = 1.5 * t, 0.1 * np.sin(t), 0.2 * np.cos(t)  # yaw up to 6 rad: unwrapped
    R = np.array([_rz(a) @ _ry(b) @ _rx(c) for a, b, c in zip(yaw, pitch, roll)])
    traj = Trajectory(t, np.zeros((len(t), 3)), Rotation.from_matrix(R).as_quat())
    np.testing.assert_allclose(S.roll_pitch_yaw(traj), np.column_stack([roll, pitch, yaw]), atol=1e-12)
    np.testing.assert_allclose(S.roll_pitch_yaw(traj, near=2 * math.pi)[:, 2], yaw + 2 * math.pi, atol=1e-12)
    # sigma of the angles: the Jacobian of the angles to a rotation about the world axes, by central differences
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 3)) * 0.01
    P = A @ A.T + 1e-6 * np.eye(3)
    k = 123
    h = 1e-6

    def angles(Rm):
        zyx = Rotation.from_matrix(Rm).as_euler("ZYX")
        return np.array([zyx[2], zyx[1], zyx[0]])

    J = np.column_stack(
        [
            (
                angles(Rotation.from_rotvec(h * e).as_matrix() @ R[k])
                - angles(Rotation.from_rotvec(-h * e).as_matrix() @ R[k])
            )
            / (2 * h)
            for e in np.eye(3)
        ]
    )
    cov = np.zeros((len(t), 6, 6))
    cov[:, 3:, 3:] = P
    traj = Trajectory(t, np.zeros((len(t), 3)), traj.quat_world_base_xyzw, pose_covariance=cov)
    np.testing.assert_allclose(S.roll_pitch_yaw_sigma(traj)[k], np.sqrt(np.diag(J @ P @ J.T)), rtol=1e-6)
    fig = plots.attitude_figure(traj, None, t0=0.0)
    for ax, want in zip(fig.axes, (roll, pitch, yaw)):
        (line,) = _series_lines(ax, "estimate")
        np.testing.assert_allclose(line.get_ydata(), np.degrees(want), atol=1e-9)
    plots.save(fig, "/dev/null")


def test_biases_figure_draws_the_true_values():
    t = np.linspace(0, 1, 5)
    est = Trajectory(
        t,
        np.zeros((5, 3)),
        np.tile([0, 0, 0, 1.0], (5, 1)),
        extras={"accel_bias": np.full((5, 3), 0.01), "gyro_bias": np.full((5, 3), 0.001)},
    )
    truth = S.SimulatedTruth(np.array([0.02, -0.01, 0.005]), np.array([1e-4, 2e-4, -3e-4]), "run.yaml")
    fig = plots.biases_figure(est, t0=0.0, truth=truth)
    for ax, true in zip(fig.axes, (truth.accel_bias, truth.gyro_bias)):
        for k, axis in enumerate("xyz"):
            (line,) = _series_lines(ax, f"{axis} true")
            assert set(np.asarray(line.get_ydata(), float)) == {true[k]}
    plots.save(fig, "/dev/null")


def _bars(ax, gid):
    (c,) = [c for c in ax.collections if c.get_gid() == gid]
    return [(round(p.vertices[:, 0].min(), 9), round(np.ptp(p.vertices[:, 0]), 9)) for p in c.get_paths()]


def _feet() -> S.FootSeries:
    t = np.round(np.arange(100) * 0.01, 9)
    contact = np.zeros((100, 2), bool)
    contact[20:50, 0] = True  # A: estimate 0.20-0.50
    contact[60:80, 1] = True
    nis = np.full((100, 2), np.nan)
    nis[20:50, 0] = np.linspace(0.5, 30.0, 30)
    accepted = np.zeros((100, 2), bool)
    accepted[20:50, 0] = nis[20:50, 0] <= 16.27
    force = np.where(contact, 40.0, 0.0) + np.arange(100)[:, None] * 0.1
    return S.FootSeries(("A", "B"), t, contact, force, nis, accepted)


def test_contacts_figure_marks_estimate_truth_and_mismatches():
    feet = _feet()
    true = np.zeros((100, 2), bool)
    true[25:50, 0] = True  # A: truth 0.25-0.50: the estimate's 0.20-0.25 is a false contact
    true[60:90, 1] = True  # B: truth to 0.90: 0.80-0.90 missed
    gt = ground_truth.Contacts(feet.t_s, ("A", "B"), true)
    fig = plots_feet.contacts_figure(feet, gt, t0=0.0)
    ax = fig.axes[0]
    assert _bars(ax, "A:estimate") == [(0.2, 0.3)]
    assert _bars(ax, "A:truth") == [(0.25, 0.25)]
    assert _bars(ax, "A:false_contact") == [(0.2, 0.05)]
    assert _bars(ax, "A:missed_contact") == []
    assert _bars(ax, "B:missed_contact") == [(0.8, 0.1)]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["B", "A"]
    plots.save(fig, "/dev/null")


def test_foot_forces_and_nis_figures():
    feet = _feet()
    true_force = np.full((100, 2), 5.0)
    gt = ground_truth.Contacts(feet.t_s, ("A", "B"), feet.contact, true_force)
    fig = plots_feet.foot_forces_figure(feet, gt, t0=0.0)
    for ax, k, foot in zip(fig.axes, range(2), ("A", "B")):
        (est,) = [x for x in ax.get_lines() if x.get_gid() == f"{foot}:force_estimate"]
        np.testing.assert_allclose(est.get_ydata(), feet.normal_force_n[:, k])
        (tru,) = [x for x in ax.get_lines() if x.get_gid() == f"{foot}:force_true"]
        np.testing.assert_allclose(tru.get_ydata(), 5.0)
    plots.save(fig, "/dev/null")
    fig = plots_feet.nis_figure(feet, t0=0.0, gate=16.27)
    ax = fig.axes[0]
    (ok,) = [x for x in ax.get_lines() if x.get_gid() == "A:nis_accepted"]
    (bad,) = [x for x in ax.get_lines() if x.get_gid() == "A:nis_gated"]
    nis = feet.nis[20:50, 0]
    np.testing.assert_allclose(ok.get_ydata(), nis[nis <= 16.27])
    np.testing.assert_allclose(bad.get_ydata(), nis[nis > 16.27])
    levels = sorted(float(x.get_ydata()[0]) for x in ax.get_lines() if x.get_linestyle() in (":", "--"))
    np.testing.assert_allclose(levels, [stats.chi2.ppf(0.025, 3), stats.chi2.ppf(0.975, 3), 16.27], rtol=1e-9)
    assert ax.get_yscale() == "log"
    plots.save(fig, "/dev/null")


# ------------------------------------------------------------------------------- a replayed simulated run
@pytest.fixture(scope="module")
def replayed_with_plots(sim_replayed):
    """``(plots folder, result, metrics, run_dir, run)`` of the session's ``replay --plots`` of the simulated run
    (conftest ``sim_replayed``)."""
    out, result, res, run_dir, run = sim_replayed
    return out / "plots", result, res, run_dir, run


def test_replay_writes_every_plot(replayed_with_plots):
    out, *_ = replayed_with_plots
    names = [
        "top_view",
        "height",
        "attitude",
        "velocity",
        "biases",
        "position_error",
        "attitude_error",
        "velocity_error",
        "contacts",
        "foot_forces",
        "nis",
    ]
    for name in names:
        assert (out / f"{name}.png").stat().st_size > 10_000, name


def test_a_replayed_runs_figures_carry_its_truth_and_metrics(replayed_with_plots):
    _, result, res, run_dir, run = replayed_with_plots
    truth = S.simulated_truth(run_dir / "bag")
    assert truth is not None
    np.testing.assert_array_equal(truth.accel_bias, run.imu_accel_bias)
    np.testing.assert_array_equal(truth.gyro_bias, run.imu_gyro_bias)
    figs = plots.replay_figures(result, truth=truth, nis_gate=16.27)
    # the position error drawn is the metrics' ATE: the RMS of its norm is the headline number
    e = np.column_stack([_series_lines(ax, "error")[0].get_ydata() for ax in figs["position_error"].axes])
    assert math.sqrt(np.mean(np.sum(e**2, axis=1))) == pytest.approx(res["ate_4dof"]["trans"]["rmse"], rel=1e-9)
    a = np.column_stack([_series_lines(ax, "error")[0].get_ydata() for ax in figs["attitude_error"].axes])
    rot = np.degrees(np.linalg.norm(np.radians(a), axis=1))
    assert math.sqrt(np.mean(rot**2)) == pytest.approx(res["ate_4dof"]["rot_deg"]["rmse"], rel=1e-9)
    v = np.column_stack([_series_lines(ax, "error")[0].get_ydata() for ax in figs["velocity_error"].axes])
    assert math.sqrt(np.mean(np.sum(v**2, axis=1))) == pytest.approx(res["velocity"]["norm"]["rmse"], rel=1e-9)
    # true biases from run.yaml
    (line,) = _series_lines(figs["biases"].axes[0], "x true")
    assert float(line.get_ydata()[0]) == run.imu_accel_bias[0]
    # ground-truth height is the simulated base height
    (g,) = _series_lines(figs["height"].axes[0], "ground truth")
    np.testing.assert_allclose(g.get_ydata(), run.q[:, 2], atol=1e-12)
    # true contact forces: the simulated normal forces at the joint samples (3 decimals in the message)
    foot = run.feet[0]
    (tru,) = [x for x in figs["foot_forces"].axes[0].get_lines() if x.get_gid() == f"{foot}:force_true"]
    want = run.contact_forces_world[run.joint_index, 0, 2]
    np.testing.assert_allclose(tru.get_ydata(), want, atol=5e-4 + 1e-9)
    # contacts: the true bars cover the simulated stance time
    ax = figs["contacts"].axes[0]
    true_s = sum(w for _, w in _bars(ax, f"{foot}:truth"))
    stamps = np.asarray(result.log.contact_stamp_ns)
    idx = np.searchsorted(run.stamps_ns, stamps)
    assert np.array_equal(run.stamps_ns[idx], stamps)
    stance = run.contact[idx, 0]
    assert true_s == pytest.approx(float(np.sum(stance)) * float(np.median(np.diff(stamps))) / 1e9, rel=0.01)
    # NIS: the points drawn are the estimator's per-foot NIS of accepted updates
    (ok,) = [x for x in figs["nis"].axes[0].get_lines() if x.get_gid() == f"{foot}:nis_accepted"]
    nis = np.asarray(result.log.nis, float)[:, 0]
    acc = np.asarray(result.log.accepted, bool)[:, 0]
    np.testing.assert_allclose(ok.get_ydata(), nis[acc & np.isfinite(nis) & (nis > 0)])
    for fig in figs.values():
        plots.save(fig, "/dev/null")


def test_simulated_truth_is_none_without_a_run_yaml(tmp_path):
    assert S.simulated_truth(tmp_path) is None
    (tmp_path / "run.yaml").write_text("robot: go1\n")
    assert S.simulated_truth(tmp_path / "bag") is None


def test_no_force_figure_without_a_force_estimate_or_truth(replayed_with_plots):
    """Contacts from foot sensors or kinematics carry zero forces: a figure of zeros would read as measured."""
    import copy
    from types import SimpleNamespace

    _, result, *_ = replayed_with_plots
    log = copy.copy(result.log)
    log.force_world = [np.zeros_like(np.asarray(f, float)) for f in log.force_world]
    figs = plots.replay_figures(SimpleNamespace(log=log, ground_truth=None))
    assert "foot_forces" not in figs and "contacts" in figs and "nis" in figs
    assert "position_error" not in figs  # no ground truth, no errors
    figs = plots.replay_figures(SimpleNamespace(log=log, ground_truth=result.ground_truth))
    assert "foot_forces" in figs  # the truth's forces are worth drawing
    for fig in figs.values():
        plots.save(fig, "/dev/null")


def test_long_runs_are_thinned_for_drawing_only():
    assert list(S.thin_index(5, 10)) == [0, 1, 2, 3, 4]
    idx = S.thin_index(20_001, 5000)
    assert idx[0] == 0 and idx[-1] == 20_000 and len(idx) <= 5001
    assert set(np.diff(idx[:-1])) == {5}
    t = np.linspace(0.0, 20.0, 20_001)
    traj = Trajectory(t, np.column_stack([t, 0 * t, 0 * t]), np.tile([0, 0, 0, 1.0], (len(t), 1)))
    fig = plots.height_figure(traj, None, t0=0.0)
    (line,) = _series_lines(fig.axes[0], "estimate")
    np.testing.assert_array_equal(line.get_xdata(), t[idx])
    plots.save(fig, "/dev/null")


def test_unobservable_axes_say_their_band_starts_at_zero():
    est, gt, _, _ = _known_case()
    fig = plots.error_figure(S.position_error(S.compare(est, gt)), what="position error", t0=0.0, unobservable=(0, 1))
    notes = [any("unobservable" in t.get_text() for t in ax.get_legend().get_texts()) for ax in fig.axes]
    assert notes == [True, True, False]
    plots.save(fig, "/dev/null")
