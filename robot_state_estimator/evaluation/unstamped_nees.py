"""NEES of one run against motion capture on another clock and in another world frame (the real Go1 trot).

Per block, the time average of ``e^T P^-1 e`` (Bar-Shalom, Li, Kirubarajan 2001, sec. 5.4) over the ground-truth
rows, each paired with the estimate sample nearest its (aligned) time, and the same over means of ``window_s``
(1 s: whole gait cycles; a residual clock error, fast, averages out in the mean error, while the filter's slow
error stays; the mean covariance stands for the mean error's, which holds for an error slow against the window):

- ``roll_pitch`` (2 DoF): x, y of ``Log(R_gt R_est^T)`` (small angles about the world axes, the pose covariance's
  rotation block), after the world yaw alignment and, optionally, the motion capture's constant body-frame tilt
  removed (:func:`tilt_calibration`: a marker frame is not the IMU's; an IMU mount tilt would be absorbed by the
  accelerometer bias once the robot turns);
- ``height`` (1 DoF) and ``position`` (3 DoF): ``p_gt - (Rz(yaw) p_est + t)`` with the alignment anchored at the
  start (:func:`start_anchored_yaw_alignment`: the filter's position covariance starts small and grows, so the
  error is measured from where both started; a 4-DoF alignment over the whole run would spread the end's error
  over the start);
- ``yaw`` (1 DoF): z of the same ``Log(R_gt R_est^T)`` less its mean over the anchor rows (the heading anchored at
  the start like the position: the world yaw fitted on the positions and the markers' yaw on the body go with it),
  against the rotation block's z row; unobservable, so its covariance grows from the start.

With the integrated gyroscope, roll/pitch and yaw also against the motion capture smoothed with it, its own error
counted (:func:`smoothed_roll_pitch`, :func:`smoothed_yaw`; ``gyro_reference``). With the rows' timing stddev
(``gyro_clock.clock_spread``), height and position also counting the reference's error from its clock, ``sigma_t^2 v
v^T`` (:func:`timing_nees`).

Evaluate the whole run and, separately, from after the first turn (which separates tilt from accelerometer
bias; the anchor and the tilt are then fitted on that span). Sources: docs/uncertainty.md (the real trot's
evaluation); the closed-form 2-D rotation about the anchor (Umeyama 1991 restricted to yaw).

Pure numpy/scipy. Times float64 s on the estimate's clock; positions m in the world (``odom``); angles rad.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from robot_state_estimator.evaluation.consistency import nees_values, time_average_band
from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.gyro_clock import GyroAttitude
from robot_state_estimator.evaluation.gyro_reference import (
    GyroTilt,
    ReferenceError,
    carried_window_mean,
    gyro_tilt,
    reference_error,
)
from robot_state_estimator.evaluation.trajectory import Trajectory, rot_z

FloatArray = NDArray[np.float64]

#: Block -> (rows of the pose covariance / error vector, DoF).
BLOCKS = {"roll_pitch": ((3, 4), 2), "yaw": ((5,), 1), "height": ((2,), 1), "position": ((0, 1, 2), 3)}


def nearest_samples(traj: Trajectory, t_s: FloatArray) -> NDArray[np.intp]:
    """(M,) index of the sample of ``traj`` nearest each time ``t_s`` (M,) s (ties to the earlier)."""
    t = np.asarray(t_s, dtype=float)
    k = np.clip(np.searchsorted(traj.t_s, t), 1, len(traj.t_s) - 1)
    earlier = (t - traj.t_s[k - 1]) <= (traj.t_s[k] - t)
    idx: NDArray[np.intp] = np.where(earlier, k - 1, k)
    return idx


def start_anchored_yaw_alignment(
    p_est: FloatArray, p_gt: FloatArray, anchor: NDArray[np.bool_]
) -> tuple[float, FloatArray]:
    """``yaw`` (rad) and ``t`` (3,) m with ``p_gt ~ Rz(yaw) p_est + t``: exact for the means over the ``anchor``
    rows; ``yaw`` the least-squares rotation of the horizontal positions about those means over all rows
    (closed form: ``atan2(sum(a x b), sum(a . b))`` of the centred 2-D vectors ``a`` of the estimate, ``b`` of the
    ground truth).

    Args:
        p_est, p_gt: (N, 3) m, paired positions (estimate world, ground-truth world).
        anchor: (N,) rows whose means are matched exactly (e.g. the first 0.5 s, standing).

    Raises:
        MetricsError: no anchor row, or shapes disagree.
    """
    p_est = np.asarray(p_est, dtype=float)
    p_gt = np.asarray(p_gt, dtype=float)
    if p_est.shape != p_gt.shape or p_est.ndim != 2 or p_est.shape[1] != 3 or not np.any(anchor):
        raise MetricsError(
            f"start anchored alignment: shapes {p_est.shape}, {p_gt.shape}, {np.count_nonzero(anchor)} anchor rows"
        )
    c_est, c_gt = p_est[anchor].mean(axis=0), p_gt[anchor].mean(axis=0)
    a, b = p_est[:, :2] - c_est[:2], p_gt[:, :2] - c_gt[:2]
    yaw = float(
        np.arctan2(np.sum(a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]), np.sum(a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1]))
    )
    t: FloatArray = c_gt - rot_z(yaw) @ c_est
    return yaw, t


def tilt_calibration(R_est: Rotation, R_gt: Rotation) -> FloatArray:
    """(2,) rad, the ground truth's constant body-frame tilt against the estimate: the mean x, y of
    ``Log(R_est^T R_gt)`` over the rows (small angles; remove it with ``R_gt Exp([-x, -y, 0])``)."""
    d = (R_est.inv() * R_gt).as_rotvec()
    tilt: FloatArray = d[:, :2].mean(axis=0)
    return tilt


def window_means(
    t_s: FloatArray, errors: FloatArray, covariances: FloatArray, window_s: float, min_fraction: float = 0.5
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Means of errors and covariances over consecutive windows of ``window_s`` from the first time.

    Args:
        t_s: (N,) s, increasing.
        errors: (N, d).
        covariances: (N, d, d).
        window_s: s.
        min_fraction: windows with fewer rows than this fraction of the median window's are dropped (a cut end).

    Returns:
        ``(t_mid (B,) s, mean error (B, d), mean covariance (B, d, d))``.
    """
    t = np.asarray(t_s, dtype=float)
    w = np.floor((t - t[0]) / window_s).astype(int)
    ids, counts = np.unique(w, return_counts=True)
    keep = ids[counts >= min_fraction * np.median(counts)]
    t_mid = np.array([t[w == i].mean() for i in keep])
    e = np.array([errors[w == i].mean(axis=0) for i in keep])
    P = np.array([covariances[w == i].mean(axis=0) for i in keep])
    return t_mid, e.reshape(len(keep), *errors.shape[1:]), P.reshape(len(keep), *covariances.shape[1:])


@dataclass(frozen=True)
class BlockNees:
    """The NEES of one block over a span.

    Attributes:
        name: block name (``BLOCKS``).
        dof: degrees of freedom.
        per_row: time average over the rows.
        per_row_band: 95 % band of that average (``consistency.time_average_band``).
        windowed: average over the window means.
        n_rows, n_windows: how many of each.
    """

    name: str
    dof: int
    per_row: float
    per_row_band: tuple[float, float]
    windowed: float
    n_rows: int
    n_windows: int


def block_nees(name: str, t_s: FloatArray, errors: FloatArray, pose_cov: FloatArray, window_s: float) -> BlockNees:
    """The NEES of block ``name`` from pose-ordered errors (N, 6) (x y z, rot x y z) and pose covariances (N, 6, 6)."""
    rows, dof = BLOCKS[name]
    ix = np.asarray(rows)
    e = errors[:, ix]
    P = pose_cov[:, ix[:, None], ix[None, :]]
    values = nees_values(e, P)
    band, _ = time_average_band(values, dof)
    _, e_w, P_w = window_means(t_s, e, P, window_s)
    return BlockNees(name, dof, float(np.mean(values)), band, float(np.mean(nees_values(e_w, P_w))), len(t_s), len(e_w))


@dataclass(frozen=True)
class SmoothedNees:
    """Roll/pitch or yaw against the motion capture smoothed with the gyroscope (``gyro_reference``), per row.

    Attributes:
        window_s: s, the reference's window (``gyro_reference.carried_window_mean``).
        per_row: time average of the NEES against the filter's covariance alone.
        per_row_band: its 95 % band (``consistency.time_average_band``).
        with_reference: the same against ``P + Sigma_ref`` (the smoothed reference's own error; isotropic for
            roll/pitch; ``2 Sigma_ref`` for yaw, :func:`smoothed_yaw`).
        with_reference_band: its 95 % band.
        reference: the reference's error (per row and after smoothing).
    """

    window_s: float
    per_row: float
    per_row_band: tuple[float, float]
    with_reference: float
    with_reference_band: tuple[float, float]
    reference: ReferenceError


def smoothed_roll_pitch(
    t_s: FloatArray,
    R_gt: Rotation,
    R_est: Rotation,
    P_rp: FloatArray,
    attitude: GyroAttitude,
    window_s: float,
    tilt_variance_rad2: float = 0.0,
) -> SmoothedNees:
    """The roll/pitch NEES per row against ``R_gt`` (M,) smoothed over ``window_s`` with the gyroscope ``attitude``,
    for estimates ``R_est`` (M,) with world roll/pitch covariances ``P_rp`` (M, 2, 2) rad^2 (``gyro_reference``);
    ``tilt_variance_rad2`` (rad^2 per axis): the removed tilt's own uncertainty, a constant error of the reference
    counted with the rows' (``with_reference``)."""
    R_ref = carried_window_mean(t_s, R_gt, attitude, window_s)
    e = (R_ref * R_est.inv()).as_rotvec()[:, :2]
    ref = reference_error(t_s, R_gt, attitude, window_s)
    values = nees_values(e, P_rp)
    band, _ = time_average_band(values, 2)
    with_ref = nees_values(e, P_rp + (ref.horizontal_variance_rad2 + tilt_variance_rad2) * np.eye(2))
    band_ref, _ = time_average_band(with_ref, 2)
    return SmoothedNees(window_s, float(np.mean(values)), band, float(np.mean(with_ref)), band_ref, ref)


def smoothed_yaw(
    t_s: FloatArray,
    R_gt: Rotation,
    R_est: Rotation,
    P_yaw: FloatArray,
    attitude: GyroAttitude,
    window_s: float,
    anchor: NDArray[np.bool_],
) -> SmoothedNees:
    """The yaw NEES per row against ``R_gt`` (M,) smoothed over ``window_s`` with the gyroscope ``attitude``, for
    estimates ``R_est`` (M,) with yaw variances ``P_yaw`` (M,) rad^2 about the world's z, the heading error (z of
    ``Log(R_ref R_est^T)``, about the world's z) measured from its mean over the ``anchor`` rows (M,) bool, as the
    ``yaw`` block does. ``with_reference`` counts the smoothed reference's error twice (``2 Sigma_ref``): once at the
    row, once in the anchor's mean (as large, the anchor being shorter than the smoothing window; independent of the
    row's once the row is a window past the anchor, conservative for the rows nearer).

    Raises:
        MetricsError: no anchor row; as ``gyro_reference.carried_window_mean`` and ``reference_error``.
    """
    if not np.any(anchor):
        raise MetricsError("smoothed_yaw: no anchor row")
    R_ref = carried_window_mean(t_s, R_gt, attitude, window_s)
    e = (R_ref * R_est.inv()).as_rotvec()[:, 2:]
    e = e - e[anchor].mean(axis=0)
    ref = reference_error(t_s, R_gt, attitude, window_s)
    P = np.asarray(P_yaw, dtype=float).reshape(-1, 1, 1)
    values = nees_values(e, P)
    band, _ = time_average_band(values, 1)
    with_ref = nees_values(e, P + 2.0 * ref.yaw_variance_rad2)
    band_ref, _ = time_average_band(with_ref, 1)
    return SmoothedNees(window_s, float(np.mean(values)), band, float(np.mean(with_ref)), band_ref, ref)


def unstamped_nees(
    est: Trajectory,
    gt: Trajectory,
    *,
    start_s: float,
    window_s: float = 1.0,
    anchor_s: float = 0.5,
    remove_tilt: bool = True,
    attitude: GyroAttitude | None = None,
    reference_window_s: float = 1.0,
    timing_sigma_s: FloatArray | None = None,
) -> dict[str, Any]:
    """Every block's NEES over ``[start_s, end]`` (module docstring); the position anchor and the tilt are fitted
    on that span (evaluate from after the first turn by calling again with a later ``start_s``).

    Args:
        est: the estimate with ``pose_covariance`` (its world ``odom``, its clock).
        gt: the ground truth on the estimate's clock (a time alignment applied), its own world.
        start_s: s, first evaluated time (e.g. 2 s after the start, once the robot stands).
        window_s: s, window of the means.
        anchor_s: s, rows from ``start_s`` whose mean positions (and heading error) anchor the alignment.
        remove_tilt: remove the ground truth's constant body-frame tilt (:func:`tilt_calibration`).
        attitude: the integrated gyroscope (``gyro_clock.integrate_gyro``, covering the span): adds roll/pitch
            against the motion capture smoothed over ``window_s`` with it (:func:`smoothed_roll_pitch`), once with
            the tilt fitted on the estimate (as the blocks: it absorbs the estimate's constant roll/pitch error) and
            once with the tilt fitted on the gyroscope alone (``gyro_reference.gyro_tilt``: no filter).
        reference_window_s: s, the window of that smoothing (``gyro_reference.carried_window_mean``).
        timing_sigma_s: (len(gt),) s, the stddev of each ground-truth row's time (``gyro_clock.clock_spread``):
            adds height and position counting it, at each row and through the anchor's mean (:func:`timing_nees`).

    Returns:
        ``{"yaw_deg", "tilt_deg" (2,), "blocks": {block: BlockNees}}``, with ``attitude`` also
        ``"smoothed_roll_pitch"``, ``"smoothed_roll_pitch_gyro_tilt"`` and ``"smoothed_yaw"`` (:class:`SmoothedNees`;
        the yaw against the reference with the gyroscope's tilt) and ``"gyro_tilt"`` (``gyro_reference.GyroTilt``);
        with ``timing_sigma_s`` also ``"timing"`` (:class:`TimingNees`).

    Raises:
        MetricsError: no covariance, fewer than two rows in the span, ``timing_sigma_s`` not one per row.
    """
    if est.pose_covariance is None:
        raise MetricsError("the estimate has no pose covariance: no NEES")
    m = (gt.t_s >= max(start_s, est.t_s[0])) & (gt.t_s <= est.t_s[-1])
    if np.count_nonzero(m) < 2:
        raise MetricsError(f"fewer than two ground-truth rows in [{start_s:.2f}, {est.t_s[-1]:.2f}] s")
    k = nearest_samples(est, gt.t_s[m])
    t, p_gt, R_gt = gt.t_s[m], gt.p_world_base[m], gt.rotations[m]
    anchor = t <= t[0] + anchor_s
    yaw, trans = start_anchored_yaw_alignment(est.p_world_base[k], p_gt, anchor)
    e_est = est.transformed(rot_z(yaw), trans)
    R_est = e_est.rotations[k]
    R_gt_raw = R_gt
    tilt = tilt_calibration(R_est, R_gt) if remove_tilt else np.zeros(2)
    R_gt = R_gt * Rotation.from_rotvec([-tilt[0], -tilt[1], 0.0])
    errors = np.hstack([p_gt - e_est.p_world_base[k], (R_gt * R_est.inv()).as_rotvec()])
    errors[:, 5] -= errors[anchor, 5].mean()  # the heading anchored at the start (module docstring, yaw)
    P = np.asarray(e_est.pose_covariance)[k]
    blocks = {b: block_nees(b, t, errors, P, window_s) for b in BLOCKS}
    out = {"yaw_deg": float(np.degrees(yaw)), "tilt_deg": np.degrees(tilt), "blocks": blocks}
    if timing_sigma_s is not None:
        sig = np.asarray(timing_sigma_s, dtype=float)
        if sig.shape != gt.t_s.shape:
            raise MetricsError(f"timing_sigma_s: one per ground-truth row ({len(gt.t_s)}), got shape {sig.shape}")
        v = reference_velocity(gt.t_s, gt.p_world_base)[m]
        out["timing"] = timing_nees(t, errors, P, v, sig[m], anchor, window_s)
    if attitude is not None:
        w = reference_window_s
        out["smoothed_roll_pitch"] = smoothed_roll_pitch(t, R_gt, R_est, P[:, 3:5, 3:5], attitude, w)
        g: GyroTilt = gyro_tilt(t, R_gt_raw, attitude)
        R_gt_g = R_gt_raw * Rotation.from_rotvec([-g.tilt_rad[0], -g.tilt_rad[1], 0.0])
        out["gyro_tilt"] = g
        out["smoothed_roll_pitch_gyro_tilt"] = smoothed_roll_pitch(
            t, R_gt_g, R_est, P[:, 3:5, 3:5], attitude, w, g.variance_rad2
        )
        out["smoothed_yaw"] = smoothed_yaw(t, R_gt_g, R_est, P[:, 5, 5], attitude, w, anchor)
    return out


def reference_velocity(t_s: FloatArray, p: FloatArray, span_s: float = 0.1) -> FloatArray:
    """(M, 3) m/s, the ground truth's velocity at each row: the difference of the first and last rows within
    ``span_s`` centred on it over their time difference (one-sided at the ends; no other row there: its
    neighbours').

    The times are the rows' on their fitted clock, so where that clock runs fast or slow locally the velocity is
    scaled with it (on the real Go1 trot the ratio of that local rate to the mean spans 0.72-1.53 from the 5th to the
    95th percentile of rows; the timing-counted NEES moves by about 1 % if the mean rate is used instead).

    Args:
        t_s: (M,) s, strictly increasing (the ground truth on its clock), M >= 2. p: (M, 3) m.
        span_s: s; 0.1 s (6 rows at 63 Hz) averages the rows' jitter while following the trot's 2 Hz bounce.

    Raises:
        MetricsError: fewer than two rows, shapes disagree, or times not strictly increasing.
    """
    t = np.asarray(t_s, dtype=float)
    p = np.asarray(p, dtype=float)
    if len(t) < 2 or p.shape != (len(t), 3) or np.any(np.diff(t) <= 0):
        raise MetricsError(
            f"reference_velocity: need >= 2 strictly increasing times and (M, 3) positions, got {t.shape}, {p.shape}"
        )
    lo = np.searchsorted(t, t - 0.5 * span_s, side="left")
    hi = np.searchsorted(t, t + 0.5 * span_s, side="right") - 1
    rows = np.arange(len(t))
    lo = np.minimum(lo, np.maximum(rows - 1, 0))
    hi = np.maximum(hi, np.minimum(rows + 1, len(t) - 1))
    v: FloatArray = (p[hi] - p[lo]) / (t[hi] - t[lo])[:, None]
    return v


@dataclass(frozen=True)
class TimingNees:
    """Height and position counting the reference's timing error (:func:`unstamped_nees` with ``timing_sigma_s``).

    Attributes:
        sigma_median_s, sigma_p95_s: s, the rows' timing stddev (median, 95th percentile) over the span.
        anchor_offset_m: m, the stddev of the anchor's mean position from its rows' timing (``|v_a| sigma_a``).
        blocks: ``height`` and ``position`` against the covariance with the timing terms (:func:`timing_nees`).
    """

    sigma_median_s: float
    sigma_p95_s: float
    anchor_offset_m: float
    blocks: dict[str, BlockNees]


def timing_nees(
    t_s: FloatArray,
    errors: FloatArray,
    pose_cov: FloatArray,
    v_gt: FloatArray,
    sigma_t_s: FloatArray,
    anchor: NDArray[np.bool_],
    window_s: float,
) -> TimingNees:
    """Height and position NEES counting the reference's timing error.

    A row stamped ``dt`` late shows the ground truth ``v dt`` away from where it was at its stamp (first order), with
    ``dt`` of stddev ``sigma_t``: ``sigma_t^2 v v^T`` on the row. The errors are measured from the anchor's mean
    (:func:`start_anchored_yaw_alignment`), whose rows' timing moves that mean by ``v_a dt_a`` for every row
    (``v_a``, ``sigma_a``: the anchor rows' mean velocity and root mean square timing stddev; their timing errors
    taken as one, as a clock's are over 0.5 s): ``sigma_a^2 v_a v_a^T`` on every row too. The two are added without
    their cross-covariance, which lowers the sum for rows whose timing error is the anchor's (the anchor's own rows
    and those just after it): conservative there, like ``smoothed_yaw``'s ``2 Sigma_ref``.

    Args:
        t_s: (M,) s, the rows' times. errors: (M, 6) and pose_cov: (M, 6, 6) as :func:`block_nees`.
        v_gt: (M, 3) m/s, the ground truth's velocity (:func:`reference_velocity`), in its world like ``errors``.
        sigma_t_s: (M,) s, each row's timing stddev (``gyro_clock.clock_spread``).
        anchor: (M,) bool, the anchor's rows (at least one).
        window_s: s, window of the means.

    Raises:
        MetricsError: shapes disagree or no anchor row.
    """
    sig = np.asarray(sigma_t_s, dtype=float)
    v = np.asarray(v_gt, dtype=float)
    n = len(t_s)
    if sig.shape != (n,) or v.shape != (n, 3) or np.shape(anchor) != (n,) or not np.any(anchor):
        raise MetricsError(
            f"timing_nees: {n} rows, sigma_t {sig.shape}, v {v.shape}, anchor {np.shape(anchor)} with "
            f"{int(np.count_nonzero(anchor))} rows"
        )
    v_a = v[anchor].mean(axis=0)
    sig_a = float(np.sqrt(np.mean(sig[anchor] ** 2)))
    P = np.array(pose_cov, dtype=float, copy=True)
    P[:, :3, :3] += (sig**2)[:, None, None] * np.einsum("ni,nj->nij", v, v) + sig_a**2 * np.outer(v_a, v_a)
    blocks = {b: block_nees(b, t_s, errors, P, window_s) for b in ("height", "position")}
    return TimingNees(float(np.median(sig)), float(np.percentile(sig, 95)), sig_a * float(np.linalg.norm(v_a)), blocks)


def format_nees(res: dict[str, Any], label: str = "") -> str:
    """The blocks of :func:`unstamped_nees` as lines ``roll_pitch (2 DoF): 31.1 (band 1.5-2.6), 1 s means 9.9``."""
    yaw, tilt = res["yaw_deg"], res["tilt_deg"]
    lines = [f"{label}world yaw {yaw:.2f} deg, tilt removed ({tilt[0]:.2f}, {tilt[1]:.2f}) deg"]
    for b in BLOCKS:
        a = res["blocks"][b]
        lo, hi = a.per_row_band
        lines.append(f"  {b} ({a.dof} DoF): {a.per_row:.2f} (band {lo:.2f}-{hi:.2f}), 1 s means {a.windowed:.2f}")
    tn = res.get("timing")
    if tn is not None:
        h, p = tn.blocks["height"], tn.blocks["position"]
        lines.append(
            f"  height, position with the reference's timing error (the clock's spread, median "
            f"{1e3 * tn.sigma_median_s:.0f} ms, 95th percentile {1e3 * tn.sigma_p95_s:.0f} ms, times the motion "
            f"capture's speed; the anchor's mean {1e3 * tn.anchor_offset_m:.1f} mm): height {h.per_row:.2f} (band "
            f"{h.per_row_band[0]:.2f}-{h.per_row_band[1]:.2f}), "
            f"position {p.per_row:.2f} (band {p.per_row_band[0]:.2f}-{p.per_row_band[1]:.2f}), 1 s means "
            f"{p.windowed:.2f}"
        )
    s = res.get("smoothed_roll_pitch")
    if s is not None:
        row, mean = np.degrees(s.reference.sigma_row_rad), np.degrees(s.reference.sigma_mean_rad)
        lines.append(
            f"  roll_pitch against the motion capture smoothed over {s.window_s:g} s with the gyroscope (its error "
            f"per row about the roll, pitch axes {row[0]:.2f}, {row[1]:.2f} deg, smoothed {mean[0]:.2f}, "
            f"{mean[1]:.2f} deg):"
        )
        lines.append("    tilt fitted on the estimate (as above): " + _smoothed_figures(s))
        g, sg = res["gyro_tilt"], res["smoothed_roll_pitch_gyro_tilt"]
        x, y = np.degrees(g.tilt_rad)
        (x1, y1), (x2, y2) = np.degrees(g.halves_rad)
        lines.append(
            f"    tilt fitted on the gyroscope ({x:.2f}, {y:.2f} deg; halves ({x1:.2f}, {y1:.2f}), ({x2:.2f}, "
            f"{y2:.2f}): stddev {np.degrees(np.sqrt(g.variance_rad2)):.2f} deg, counted with the reference's error): "
            + _smoothed_figures(sg)
        )
        y = res["smoothed_yaw"]
        lines.append(
            f"  yaw against the same reference (its yaw error per row {np.degrees(y.reference.sigma_row_rad[2]):.2f} "
            f"deg, smoothed {np.degrees(y.reference.sigma_mean_rad[2]):.2f} deg, counted twice with the start's): "
            + _smoothed_figures(y)
        )
    return "\n".join(lines)


def _smoothed_figures(s: SmoothedNees) -> str:
    return (
        f"{s.per_row:.2f} (band {s.per_row_band[0]:.2f}-{s.per_row_band[1]:.2f}), with the reference's own error "
        f"{s.with_reference:.2f} (band {s.with_reference_band[0]:.2f}-{s.with_reference_band[1]:.2f})"
    )
