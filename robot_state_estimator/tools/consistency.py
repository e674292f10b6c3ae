"""Filter consistency by Monte Carlo through the simulator (never through the filter's own model).

N simulated runs (``simulation.simulate``: physics, IMU and encoder models, the errors of a real robot when
switched on) are fed to the estimator in memory; at each evaluation time ``k`` the error ``e_ik`` of run i
against the exact ground truth and the covariance ``P_ik`` the filter reports give the NEES ``e^T P^-1 e`` per
block. Bar-Shalom, Li and Kirubarajan, "Estimation with Applications to Tracking and Navigation" (2001),
sec. 5.4.2: for a consistent filter the N-run average at each time, ``eps_k = (1/N) sum_i NEES_ik``, has
``N eps_k ~ chi2(N dof)``, so the 95 % band of ``eps_k`` is ``chi2.ppf([0.025, 0.975], N dof) / N``; about 95 % of
the times should fall inside it.

Time averages. The errors of one run at nearby times are strongly correlated (the filter's error is a slow
process), so the time average of ``eps_k`` over K times is not ``chi2(N K dof) / (N K)``: that band would be far too
narrow. We use the effective number of independent times ``K_eff = K / (1 + 2 sum_j rho_j)`` with ``rho_j`` the
autocorrelation of ``eps_k`` at lag j, summed up to its first non-positive value (the initial positive sequence,
Geyer 1992), and give the time average the band ``chi2.ppf([0.025, 0.975], N K_eff dof) / (N K_eff)``. Both tests
are reported: the fraction of times inside the per-time band and the time average against its band.

Blocks (the observable directions; IMU and leg kinematics cannot observe x, y and yaw, whose variance grows
without bound, so they are excluded from the band and checked to grow instead):

- ``velocity`` (3 DoF): ``v_base_in_base`` against the twist covariance's linear block;
- ``height`` (1 DoF): ``z`` against the pose covariance's ``zz``; reported, but like x and y not observable (the
  legs measure velocities only, its variance grows without bound), so its band is not expected to hold;
- ``roll_pitch`` (2 DoF): the x, y components of ``Log(R_gt R_est^T)`` (small angles about the world axes, as the
  pose covariance defines them) against its rotation block's x, y rows;
- ``gyro_bias_xy`` (2 DoF): the gyro bias's x, y components in the IMU frame against the filter's P (observable
  through the attitude when the gravity direction and the leg velocities constrain it; the z component much less).

``unobservable``: the filter's stddev of x, y and yaw at the first and last evaluation time (mean over runs), and
the spread over runs of their errors in the first and last second.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats
from scipy.spatial.transform import Rotation

from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.estimation import EstimatorSettings, RobotStateEstimator

FloatArray = NDArray[np.float64]

#: block name -> degrees of freedom
BLOCKS: dict[str, int] = {"velocity": 3, "height": 1, "roll_pitch": 2, "gyro_bias_xy": 2}


def nees_values(errors: FloatArray, covariances: FloatArray) -> FloatArray:
    """(..., ) ``e^T P^-1 e`` of errors (..., d) and covariances (..., d, d)."""
    e = np.asarray(errors, dtype=float)
    P = np.asarray(covariances, dtype=float)
    return np.asarray(np.einsum("...i,...i->...", e, np.linalg.solve(P, e[..., None])[..., 0]))


def effective_samples(series: FloatArray) -> float:
    """``K / (1 + 2 sum rho_j)``, the initial positive sequence of the autocorrelation (module docstring)."""
    x = np.asarray(series, dtype=float) - float(np.mean(series))
    K = x.size
    var = float(np.dot(x, x)) / K
    if K < 4 or var <= 0.0:
        return float(K)
    acf = np.correlate(x, x, mode="full")[K - 1 :] / (var * K)
    s = 0.0
    for rho in acf[1:]:
        if rho <= 0.0:
            break
        s += float(rho)
    return max(1.0, K / (1.0 + 2.0 * s))


@dataclass(frozen=True)
class BlockConsistency:
    """The Monte Carlo NEES of one block.

    Attributes:
        dof: degrees of freedom.
        n_runs: N.
        per_time: (K,) the N-run average NEES at each evaluation time.
        band: the 95 % band of ``per_time`` (chi2 with N dof degrees of freedom, over N).
        fraction_inside: share of the times inside ``band`` (0.95 expected).
        time_average: mean of ``per_time`` (dof expected).
        effective_times: K_eff of the time average (module docstring).
        time_average_band: the 95 % band of ``time_average`` (chi2 with N K_eff dof, over N K_eff).
    """

    dof: int
    n_runs: int
    per_time: FloatArray
    band: tuple[float, float]
    fraction_inside: float
    time_average: float
    effective_times: float
    time_average_band: tuple[float, float]

    @property
    def consistent(self) -> bool:
        """The time average inside its band."""
        return self.time_average_band[0] <= self.time_average <= self.time_average_band[1]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (without the per-time series)."""
        return {
            "dof": self.dof,
            "n_runs": self.n_runs,
            "band95_per_time": list(self.band),
            "fraction_inside": self.fraction_inside,
            "time_average": self.time_average,
            "effective_times": self.effective_times,
            "band95_time_average": list(self.time_average_band),
            "consistent": self.consistent,
        }


def block_consistency(nees: FloatArray, dof: int) -> BlockConsistency:
    """Bar-Shalom's Monte Carlo test of an (N, K) array of NEES values of one block (module docstring)."""
    nees = np.asarray(nees, dtype=float)
    n = nees.shape[0]
    per_time = nees.mean(axis=0)
    lo, hi = (float(x) for x in stats.chi2.ppf([0.025, 0.975], n * dof) / n)
    k_eff = effective_samples(per_time)
    m = n * k_eff
    lo_t, hi_t = (float(x) for x in stats.chi2.ppf([0.025, 0.975], m * dof) / m)
    return BlockConsistency(
        dof=dof,
        n_runs=n,
        per_time=per_time,
        band=(lo, hi),
        fraction_inside=float(np.mean((per_time >= lo) & (per_time <= hi))),
        time_average=float(per_time.mean()),
        effective_times=k_eff,
        time_average_band=(lo_t, hi_t),
    )


def run_errors(est: RobotStateEstimator, run: Any, *, t_start_s: float, rate_hz: float) -> dict[str, FloatArray]:
    """Feed a ``SimulatedRun`` in stamp order (joint sample first on equal stamps) and collect, at about
    ``rate_hz`` from ``t_start_s`` after the run's start, each block's error and covariance, and x, y, yaw.

    Returns:
        ``{block: errors (K, d)}``, ``{block + "_cov": (K, d, d)}``, ``t_s`` (K,), ``xy_yaw_err`` (K, 3),
        ``xy_yaw_std`` (K, 3).
    """
    events = [(int(run.stamps_ns[i]), 1, k) for k, i in enumerate(run.imu_index)]
    events += [(int(run.stamps_ns[i]), 0, k) for k, i in enumerate(run.joint_index)]
    events.sort()
    t0 = int(run.stamps_ns[0])
    start_ns = t0 + round(t_start_s * 1e9)
    period_ns = round(1e9 / rate_hz)
    next_ns = start_ns
    out: dict[str, list[Any]] = {k: [] for k in ("t_s", "xy_yaw_err", "xy_yaw_std")}
    for name in BLOCKS:
        out[name] = []
        out[name + "_cov"] = []
    has_v = run.joint_velocity is not None and len(run.joint_velocity)
    for stamp, kind, k in events:
        if kind == 0:
            est.add_joints(
                JointSample(
                    stamp,
                    run.joint_names,
                    run.joint_position[k],
                    velocity=run.joint_velocity[k] if has_v else None,
                    effort=run.joint_effort[k],
                )
            )
            continue
        e = est.add_imu(ImuSample(stamp, run.imu_omega[k], run.imu_f[k]))
        if e is None or stamp < next_ns:
            continue
        next_ns = stamp + period_ns
        i = run.imu_index[k]
        q_gt = run.q[i]
        R_gt = Rotation.from_quat(q_gt[3:7])
        R_est = Rotation.from_quat(e.quat_world_base_xyzw)
        rot_err = (R_gt * R_est.inv()).as_rotvec()
        P = est.ekf.P
        out["t_s"].append((stamp - t0) * 1e-9)
        out["velocity"].append(run.v[i, :3] - e.v_base_in_base)
        out["velocity_cov"].append(e.twist_covariance[:3, :3])
        out["height"].append([q_gt[2] - e.p_world_base[2]])
        out["height_cov"].append(e.pose_covariance[2:3, 2:3])
        out["roll_pitch"].append(rot_err[:2])
        out["roll_pitch_cov"].append(e.pose_covariance[3:5, 3:5])
        out["gyro_bias_xy"].append(run.imu_gyro_bias[:2] - est.ekf.gyro_bias[:2])
        out["gyro_bias_xy_cov"].append(P[12:14, 12:14].copy())  # P is a live view of the filter's buffer
        out["xy_yaw_err"].append([*(q_gt[:2] - e.p_world_base[:2]), rot_err[2]])
        C = e.pose_covariance
        out["xy_yaw_std"].append(np.sqrt([C[0, 0], C[1, 1], C[5, 5]]))
    return {k: np.array(v, dtype=float) for k, v in out.items()}


def monte_carlo(
    make_run: Any,
    make_estimator: Any,
    seeds: list[int],
    *,
    t_start_s: float = 1.5,
    rate_hz: float = 50.0,
) -> dict[str, Any]:
    """The Monte Carlo consistency test over ``seeds``.

    Args:
        make_run: ``seed -> SimulatedRun``.
        make_estimator: ``run -> RobotStateEstimator``.
        seeds: one run per seed.
        t_start_s: s after the run's start where the evaluation begins (initialisation transient excluded).
        rate_hz: evaluation rate (the NEES is computed at about this rate).

    Returns:
        ``{"blocks": {name: BlockConsistency}, "unobservable": {...}, "runs": [per-run arrays]}``.
    """
    runs = []
    for seed in seeds:
        run = make_run(seed)
        runs.append(run_errors(make_estimator(run), run, t_start_s=t_start_s, rate_hz=rate_hz))
    K = min(len(r["t_s"]) for r in runs)
    blocks = {}
    for name, dof in BLOCKS.items():
        nees = np.array([nees_values(r[name][:K], r[name + "_cov"][:K]) for r in runs])
        blocks[name] = block_consistency(nees, dof)
    std = np.array([r["xy_yaw_std"][:K] for r in runs])  # (N, K, 3)
    err = np.array([r["xy_yaw_err"][:K] for r in runs])
    t = runs[0]["t_s"][:K]
    first, last = t <= t[0] + 1.0, t >= t[-1] - 1.0
    unobservable = {
        "std_first": std[:, 0].mean(axis=0).tolist(),
        "std_last": std[:, -1].mean(axis=0).tolist(),
        "error_rms_first_s": np.sqrt(np.mean(err[:, first] ** 2, axis=(0, 1))).tolist(),
        "error_rms_last_s": np.sqrt(np.mean(err[:, last] ** 2, axis=(0, 1))).tolist(),
    }
    return {"blocks": blocks, "unobservable": unobservable, "runs": runs}


def matched_settings(base: EstimatorSettings | None = None, **ekf: Any) -> EstimatorSettings:
    """Estimator settings with ``ekf`` fields replaced (for the Monte Carlo's stated noise)."""
    base = base or EstimatorSettings()
    return dataclasses.replace(base, ekf=dataclasses.replace(base.ekf, **ekf))


def summary_line(name: str, b: BlockConsistency) -> str:
    """``velocity (3 DoF): time average 2.91 in [2.71, 3.31] (K_eff 12), 93 % of times inside [2.0, 4.2]``."""
    lo, hi = b.time_average_band
    return (
        f"{name} ({b.dof} DoF): time average {b.time_average:.2f} in [{lo:.2f}, {hi:.2f}] "
        f"(K_eff {b.effective_times:.0f}){'' if b.consistent else ' OUTSIDE'}, {100 * b.fraction_inside:.0f} % "
        f"of times inside [{b.band[0]:.2f}, {b.band[1]:.2f}]"
    )


__all__ = [
    "BLOCKS",
    "BlockConsistency",
    "bench_consistency",
    "block_consistency",
    "effective_samples",
    "go1_monte_carlo",
    "matched_settings",
    "monte_carlo",
    "nees_values",
    "run_errors",
    "summary_line",
]


def go1_monte_carlo(n_runs: int, duration_s: float, *, real_errors: bool = True) -> dict[str, Any]:
    """The Go1 trot Monte Carlo of the test suite and ``make bench`` (seeds 1..N): SDF noise and, with
    ``real_errors``, ``REAL_ROBOT_ERRORS``; the built-in estimator defaults except the accelerometer turn-on bias
    prior, set to the spread the description states and the simulator draws.

    Returns:
        :func:`monte_carlo`'s result plus ``settings`` (what was run, JSON-ready).
    """
    from robot_state_estimator import simulation
    from robot_state_estimator.simulation.settings import REAL_ROBOT_ERRORS

    robot = simulation.load_sim_robot("go1")
    spread = max(n.bias_stddev for n in robot.imu.linear_acceleration_noise)
    settings = matched_settings(initial_accel_bias_std=spread)
    extra: dict[str, Any] = dict(REAL_ROBOT_ERRORS) if real_errors else {}

    def make_run(seed: int) -> Any:
        sim = simulation.SimulationSettings(
            robot="go1", gait="trot", duration_s=duration_s, seed=seed, noise=True, **extra
        )
        return simulation.simulate(sim, robot=robot)

    def make_estimator(run: Any) -> RobotStateEstimator:
        return RobotStateEstimator(
            robot.model, run.imu, run.feet, settings, base_link=run.base_link, foot_radii=run.foot_radii
        )

    res = monte_carlo(make_estimator=make_estimator, make_run=make_run, seeds=list(range(1, n_runs + 1)))
    res["settings"] = {
        "robot": "go1",
        "gait": "trot",
        "n_runs": n_runs,
        "duration_s": duration_s,
        "real_errors": extra,
        "initial_accel_bias_std": spread,
        "evaluation": "from 1.5 s at 50 Hz",
    }
    return res


def bench_consistency(*, short: bool) -> dict[str, Any]:
    """``make bench``'s ``consistency`` section: 10 runs of 8 s (``short``: 2 of 3 s)."""
    n, duration = (2, 3.0) if short else (10, 8.0)
    res = go1_monte_carlo(n, duration)
    return {
        "settings": res["settings"],
        "blocks": {k: b.as_dict() for k, b in res["blocks"].items()},
        "unobservable": res["unobservable"],
        "summary": [summary_line(k, b) for k, b in res["blocks"].items()],
    }
