"""Property tests (hypothesis) of the trajectory metrics: alignments recover known transforms, ATE and RPE.

Random trajectories (positions and orientations) are moved by a random known transform drawn with scipy
(``Rotation.random`` for SE(3)/Sim(3), a rotation about z for 4-DoF); the expected values are that transform
and the closed forms ATE = 0 of an aligned copy and RPE unchanged by a global rigid transform (Sturm et al.
2012: RPE compares relative motions only).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from robot_state_estimator import evaluation as M

seeds = st.integers(0, 2**32 - 1)


def random_trajectory(seed: int, n: int, spread_m: float, flat: bool = False, planar: bool = False) -> M.Trajectory:
    """A random walk; ``flat``: z varies by about 1 cm (a walking robot); ``planar``: z constant."""
    rng = np.random.default_rng(seed)
    p = np.cumsum(rng.normal(size=(n, 3)), axis=0) * spread_m
    if flat or planar:
        p[:, 2] = 0.3 + (0.0 if planar else 0.01) * rng.normal(size=n)
    quat = Rotation.random(n, random_state=rng.integers(2**32)).as_quat()
    return M.Trajectory(np.arange(n) * 0.01, p, quat)


def well_conditioned(p: np.ndarray, axes: slice = slice(0, 3)) -> bool:
    """The centred points span the axes well (a unique alignment, not a near-degenerate one)."""
    sv = np.linalg.svd(p[:, axes] - p[:, axes].mean(axis=0), compute_uv=False)
    return bool(sv[-1] > 1e-3 * sv[0] and sv[0] > 1e-6)


def rigid(seed: int, scale_range: tuple[float, float] = (1.0, 1.0)) -> tuple[Rotation, np.ndarray, float]:
    rng = np.random.default_rng(seed)
    R = Rotation.random(random_state=rng.integers(2**32))
    return R, rng.normal(size=3) * 10.0, float(rng.uniform(*scale_range))


@given(
    seed=seeds,
    motion_seed=seeds,
    n=st.integers(3, 60),
    spread=st.sampled_from([1e-3, 1.0, 100.0]),
    scaled=st.booleans(),
)
def test_umeyama_recovers_a_known_rigid_or_similarity_transform(seed, motion_seed, n, spread, scaled) -> None:
    src = random_trajectory(seed, n, spread).p_world_base
    assume(well_conditioned(src))
    R, t, s = rigid(motion_seed, (0.2, 5.0) if scaled else (1.0, 1.0))
    dst = s * R.apply(src) + t
    a = M.umeyama_alignment(src, dst, with_scale=scaled)
    # the rotation's error relative to the point spread: the SVD determines it to eps * cond
    np.testing.assert_allclose(a.R, R.as_matrix(), rtol=0, atol=1e-8)
    assert math.isclose(a.scale, s, rel_tol=1e-9) and (scaled or a.scale == 1.0)
    np.testing.assert_allclose(a.t, t, rtol=0, atol=1e-8 * (1.0 + spread * n))
    np.testing.assert_allclose(a.R @ a.R.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(a.R) > 0


@given(seed=seeds, n=st.integers(2, 60), yaw=st.floats(-math.pi, math.pi), t=st.tuples(*[st.floats(-50, 50)] * 3))
def test_yaw_translation_alignment_recovers_a_known_yaw_and_translation(seed, n, yaw, t) -> None:
    src = random_trajectory(seed, n, 1.0, flat=True).p_world_base
    assume(np.linalg.norm(src[:, :2] - src[:, :2].mean(axis=0)) > 1e-3)
    Rz = Rotation.from_euler("z", yaw)
    dst = Rz.apply(src) + np.array(t)
    a = M.yaw_translation_alignment(src, dst)
    np.testing.assert_allclose(a.R, Rz.as_matrix(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.t, t, rtol=0, atol=1e-8)
    d = math.remainder(a.yaw_deg - math.degrees(yaw), 360.0)
    assert abs(d) < 1e-7


@given(seed=seeds, motion_seed=seeds, n=st.integers(3, 60), dof=st.sampled_from(["4dof", "6dof", "7dof"]))
def test_ate_of_a_transformed_copy_is_zero_after_alignment(seed, motion_seed, n, dof) -> None:
    gt = random_trajectory(seed, n, 1.0)
    assume(well_conditioned(gt.p_world_base, slice(0, 2) if dof == "4dof" else slice(0, 3)))
    R, t, s = rigid(motion_seed, (0.5, 2.0) if dof == "7dof" else (1.0, 1.0))
    if dof == "4dof":
        R = Rotation.from_euler("z", R.as_euler("ZYX")[0])  # only the unobservable yaw
    # est in a world frame moved by (R, t, s): est = T^-1 gt, so the alignment est -> gt is T
    est = gt.transformed(R.inv().as_matrix(), -R.inv().apply(t) / s, 1.0 / s)
    aligned = M.align_trajectory(est, gt, dof=dof).apply(est)
    result = M.ate(aligned, gt)
    assert result["trans"]["max"] < 1e-8 and result["trans"]["n"] == n
    # the orientations are rotated by the alignment too: no rotation error left
    assert result["rot_deg"]["max"] < 1e-6


@given(seed=seeds, noise_seed=seeds, motion_seed=seeds, n=st.integers(3, 80), unit=st.sampled_from(["m", "s"]))
def test_rpe_is_invariant_to_a_global_rigid_transform_of_the_estimate(seed, noise_seed, motion_seed, n, unit) -> None:
    gt = random_trajectory(seed, n, 0.3)
    rng = np.random.default_rng(noise_seed)
    est = M.Trajectory(
        gt.t_s,
        gt.p_world_base + rng.normal(size=(n, 3)) * 0.05,
        (gt.rotations * Rotation.from_rotvec(rng.normal(size=(n, 3)) * 0.05)).as_quat(),
    )
    R, t, _ = rigid(motion_seed)
    moved = est.transformed(R.as_matrix(), t)
    delta = 0.5 if unit == "m" else 0.05
    a, b = M.rpe(est, gt, delta=delta, unit=unit), M.rpe(moved, gt, delta=delta, unit=unit)
    assert a["trans"]["n"] == b["trans"]["n"]
    for key in ("trans", "rot_deg", "trans_pct"):
        for stat in ("rmse", "max"):
            if a[key]["n"]:
                assert math.isclose(a[key][stat], b[key][stat], rel_tol=1e-9, abs_tol=1e-9), (key, stat)
    # the estimate equal to the ground truth: no relative error at all
    zero = M.rpe(gt.transformed(R.as_matrix(), t), gt, delta=delta, unit=unit)
    if zero["trans"]["n"]:
        assert zero["trans"]["max"] < 1e-9 and zero["rot_deg"]["max"] < 1e-6
