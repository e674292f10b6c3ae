"""Filter consistency by Monte Carlo through the simulator (never through the filter's own model).

N simulated runs (``simulation.simulate``: physics, IMU and encoder models, the errors of a real robot when
switched on) are fed to the estimator in memory; at each evaluation time ``k`` the error ``e_ik`` of run i
against the exact ground truth and the covariance ``P_ik`` the filter reports give the NEES ``e^T P^-1 e`` per
block. The test on those values (Bar-Shalom's per-time band and the time average against its band with the
effective number of independent times) is ``evaluation.consistency``'s, which imports no estimator.

Blocks (IMU and leg kinematics cannot observe x, y, yaw and height, whose variance grows without bound; their
NEES still says whether it grows as the error does):

- ``velocity`` (3 DoF): ``v_base_in_base`` against the twist covariance's linear block;
- ``height`` (1 DoF): ``z`` against the pose covariance's ``zz``; reported, but like x and y not observable (the
  legs measure velocities only, its variance grows without bound), so its band is not expected to hold;
- ``roll_pitch`` (2 DoF): the x, y components of ``Log(R_gt R_est^T)`` (small angles about the world axes, as the
  pose covariance defines them) against its rotation block's x, y rows;
- ``gyro_bias_xy`` (2 DoF): the gyro bias's x, y components in the IMU frame against the filter's P (observable
  through the attitude when the gravity direction and the leg velocities constrain it; the z component much less);
- ``accel_bias_xy`` (2 DoF) and ``accel_bias_z`` (1 DoF): the accelerometer bias in the IMU frame (the run's
  turn-on bias plus its walk, ``imu_accel_bias_walk``) against the filter's P; z through the legs' vertical velocity
  and gravity, x and y only together with roll and pitch (the tilt leans gravity into them);
- ``position_xy`` (2 DoF) and ``yaw`` (1 DoF), unobservable: x, y against the pose covariance's horizontal block, z
  of ``Log(R_gt R_est^T)`` against its yaw row (the legs' scale term of the published pose covariance is off in
  :func:`go1_monte_carlo`: the simulated legs have none).

``unobservable``: the filter's stddev of x, y and yaw at the first and last evaluation time (mean over runs), and
the RMS of their errors over the runs and the first and the last second.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.estimation import EstimatorSettings, RobotStateEstimator, imu_noise_from_spec
from robot_state_estimator.estimation.noise_model import apply_imu_noise_floor
from robot_state_estimator.evaluation.consistency import block_consistency, nees_values, summary_line

FloatArray = NDArray[np.float64]

#: block name -> degrees of freedom
BLOCKS: dict[str, int] = {
    "velocity": 3,
    "height": 1,
    "roll_pitch": 2,
    "gyro_bias_xy": 2,
    "accel_bias_xy": 2,
    "accel_bias_z": 1,
    "position_xy": 2,
    "yaw": 1,
}


def run_errors(est: RobotStateEstimator, run: Any, *, t_start_s: float, rate_hz: float) -> dict[str, FloatArray]:
    """Feed a ``SimulatedRun`` in stamp order (joint sample first on equal stamps) and collect, at about
    ``rate_hz`` from ``t_start_s`` after the run's start, each block's error and covariance, and x, y, yaw.

    Args:
        est: a fresh estimator of the run's robot.
        run: ``simulation.SimulatedRun``.
        t_start_s: s after the run's first stamp where the collection starts.
        rate_hz: Hz, about how often (the first IMU estimate at or after each period).

    Returns:
        ``{block: errors (K, d)}`` (truth minus estimate: velocity m/s in B, height and position m in W, roll/pitch and
        yaw rad about W's axes, biases rad/s and m/s^2 in S), ``{block + "_cov": (K, d, d)}`` in the same units
        squared, ``t_s`` (K,) s from the run's first stamp, ``xy_yaw_err`` (K, 3) m, m, rad, ``xy_yaw_std`` (K, 3);
        K may be 0 (a run shorter than ``t_start_s``).

    Raises:
        ValueError: the description's accelerometer noise has a dynamic bias, which the run does not record (the
            accelerometer bias's truth is the turn-on bias plus the walk).
    """
    if any(n.dynamic_bias_stddev > 0.0 for n in run.imu.linear_acceleration_noise):
        raise ValueError("the accelerometer noise has a dynamic bias: the run records no truth for it")
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
        accel_bias_error = run.imu_accel_bias + run.imu_accel_bias_walk[k] - est.ekf.accel_bias
        out["accel_bias_xy"].append(accel_bias_error[:2])
        out["accel_bias_xy_cov"].append(P[9:11, 9:11].copy())
        out["accel_bias_z"].append(accel_bias_error[2:])
        out["accel_bias_z_cov"].append(P[11:12, 11:12].copy())
        out["xy_yaw_err"].append([*(q_gt[:2] - e.p_world_base[:2]), rot_err[2]])
        C = e.pose_covariance
        out["position_xy"].append(q_gt[:2] - e.p_world_base[:2])
        out["position_xy_cov"].append(C[0:2, 0:2])
        out["yaw"].append(rot_err[2:])
        out["yaw_cov"].append(C[5:6, 5:6])
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


__all__ = [
    "BLOCKS",
    "SIMULATED_FOOT_VELOCITY_NOISE",
    "band_matched_creep_density",
    "bench_consistency",
    "creep_density_of_slips",
    "go1_monte_carlo",
    "matched_settings",
    "monte_carlo",
    "run_errors",
]


def creep_density_of_slips(stance_slip_m: float, stance_s: float) -> float:
    """m/sqrt(s), the zero-frequency white equivalent of a simulated slip of stddev ``stance_slip_m`` (m, per
    horizontal axis) in every stance of ``stance_s`` s: ``stance_slip_m / sqrt(stance_s)`` (``noise_model``, part
    1b: the same stance mean)."""
    return float(stance_slip_m / math.sqrt(stance_s))


def band_matched_creep_density(
    stance_slip_m: float, stance_s: float, *, accel_noise_density: float, feet_in_stance: float
) -> float:
    """m/sqrt(s), ``ekf.foot_creep_density`` for the simulator's slips, white-equivalent over the filter's band.

    The simulator moves each stance's contact point by ``d ~ N(0, stance_slip_m^2)`` per horizontal axis along a
    quintic smoothstep over the middle half of the stance (``simulation.gait_plan.add_random_slips``). Its
    velocity is a train of pulses of area ``d``, one per stance: two-sided spectral density while the foot is in
    stance ``S(f) = q0^2 |Phi(f)|^2``, ``q0`` = :func:`creep_density_of_slips` (``S(0)``, the stance mean) and
    ``Phi`` the Fourier transform of the unit-area pulse (``Phi(0) = 1``). The zero-frequency equivalent ``q0`` holds
    for a filter much slower than a stance. The legs set the velocity faster: for a velocity driven by the
    accelerometer's white noise (density ``sigma_a``) and measured by ``n`` stance feet with white noise of density
    ``q`` each, the steady-state Kalman-Bucy filter passes measurement noise to the estimate through ``H = w_c / (s
    + w_c)``, ``w_c = sigma_a sqrt(n) / q`` (the scalar Riccati equation ``0 = sigma_a^2 - P^2 n / q^2`` gives ``P =
    sigma_a q / sqrt(n)`` and the gain ``P n / q^2``). The white density with the same error variance through that
    filter is ``q^2 = q0^2 int |Phi|^2 |H|^2 df / int |H|^2 df``: Maybeck's equivalent white noise (1979, vol. 1,
    sec. 4.11) matched over the filter's band instead of at zero frequency; solved by fixed-point iteration with
    ``w_c``.
    The feet's white noise and the joint velocities' are left out of ``w_c``: at the Monte Carlo's values their
    variance per sample is three orders of magnitude below the creep's (0.003 against 0.101 m/s at 1 kHz).

    Args:
        stance_slip_m: m, the slip's stddev per horizontal axis (the simulator's ``stance_slip_m``).
        stance_s: s, the stance's length (gait period times duty factor).
        accel_noise_density: m/s^2/sqrt(Hz), the accelerometer density the filter uses (after its floor).
        feet_in_stance: the number of feet in stance while the slips happen (the leg updates that average them).

    Returns:
        The density (m/sqrt(s)), at most ``q0``; 0 without slips.

    Raises:
        ValueError: a negative slip, a non-positive stance, accelerometer density or number of feet in stance (NaN
            included); no convergence in 200 iterations (not seen: about 10 suffice).
    """
    if not (stance_slip_m >= 0.0 and stance_s > 0.0 and accel_noise_density > 0.0 and feet_in_stance > 0.0):
        raise ValueError(
            f"stance_slip_m must be >= 0 and stance_s, accel_noise_density and feet_in_stance > 0, got "
            f"{stance_slip_m}, {stance_s}, {accel_noise_density}, {feet_in_stance}"
        )
    q0 = creep_density_of_slips(stance_slip_m, stance_s)
    if q0 == 0.0:
        return 0.0
    from robot_state_estimator.simulation.trajectory import smoothstep  # the simulator's slip profile

    slip_s = 0.5 * stance_s
    t = np.linspace(0.0, slip_s, 1025)
    pulse = smoothstep(t, 0.0, slip_s).dx  # 1/s, unit area
    f = np.linspace(0.0, 64.0 / slip_s, 4097)  # Hz; |Phi|^2 falls as f^-6: below 1e-11 of Phi(0)^2 at the end
    phi = np.trapezoid(pulse[None, :] * np.exp(-2j * np.pi * f[:, None] * t[None, :]), t, axis=1)
    phi2 = np.abs(phi) ** 2
    q = q0
    for _ in range(200):
        w_c = accel_noise_density * math.sqrt(feet_in_stance) / q
        h2 = w_c**2 / ((2.0 * np.pi * f) ** 2 + w_c**2)
        q_next = q0 * math.sqrt(float(np.trapezoid(phi2 * h2, f)) / (w_c / 4.0))  # int_0^inf |H|^2 df = w_c / 4
        if abs(q_next - q) <= 1e-12 * q0:
            return float(min(q_next, q0))
        q = q_next
    raise ValueError(f"the creep density's fixed point did not converge in 200 iterations (last {q:.6g} m/sqrt(s))")


#: m/s, the white part of the contact point's velocity error of the simulator's feet (rigid rolling spheres on rigid
#: ground), measured against the truth with the true contacts (docs/uncertainty.md). Until 2026-12-05 the Monte Carlo
#: used 0.055 m/s, read off slip-free runs: it stood in for the gyro-noise correlations the filter did not model then
#: (the shared gyro sample, the lever arm in the velocity, the rolling term, the stamp jitter). A real robot's feet
#: are noisier (the real Go1: 0.1 m/s, the default).
SIMULATED_FOOT_VELOCITY_NOISE = 0.003


def go1_monte_carlo(
    n_runs: int,
    duration_s: float,
    *,
    real_errors: bool = True,
    matched_contact: bool = True,
    joint_rate_hz: float | None = None,
    imu_rate_hz: float | None = None,
) -> dict[str, Any]:
    """The Go1 trot Monte Carlo of the test suite and ``make bench``: seeds 1..N, SDF noise and, with
    ``real_errors``, ``REAL_ROBOT_ERRORS`` (at the IMU's rate: ``simulation.settings.real_robot_errors``), fed to the
    estimator with its built-in defaults except what describes the simulated robot:

    - the accelerometer's turn-on bias prior: the spread the description states and the simulator draws;
    - the gyroscope's (static and moving initialisation): the description's spread and the simulated turn-on offset
      (``imu_gyro_turn_on_bias_rad_s``) together, when that offset is simulated;
    - the accelerometer bias random walk: the simulated walk (``imu_accel_bias_walk``; the default when none);
    - the legs' scale uncertainty of the published pose covariance (``ekf.leg_scale_std``): 0, the simulator's legs
      being the model's;
    - with ``matched_contact``, the contact point's noise of the simulated feet: the white part
      :data:`SIMULATED_FOOT_VELOCITY_NOISE`; ``ekf.foot_creep_density`` from the simulated slips
      (:func:`band_matched_creep_density` over the trot's stance, period times duty factor, with the filter's
      accelerometer density and the two feet of a diagonal pair: at a trot's duty factor up to 2/3, the Go1's 0.6,
      the other pair lifts off before the slip window, the middle half of the stance, and lands after it); the joint
      velocities' noise (``ekf.encoder_velocity_noise``, the simulator's ``joint_velocity_noise_rad_s``).

    Args:
        n_runs: N, the number of runs (seeds 1..N).
        duration_s: s, each run's length (the evaluation starts 1.5 s in: :func:`monte_carlo`).
        real_errors: simulate ``REAL_ROBOT_ERRORS`` (and tell the filter their spreads as above).
        matched_contact: tell the filter the simulated feet's contact noise (else the defaults' real-robot 0.1 m/s).
        joint_rate_hz, imu_rate_hz: Hz, the simulated joint samples' and IMU readings' rates (None: the simulator's,
            1 kHz); joints faster than the IMU put two or more leg updates in one IMU interval, which share the
            readings' noise (``ekf.model``, "Correlated gyro noise"). At another IMU rate the sensor keeps its noise
            density (``simulation.robots.imu_at_rate``), and so does the vibration
            (``simulation.settings.real_robot_errors``).

    Returns:
        :func:`monte_carlo`'s result (``blocks``: block name -> ``evaluation.consistency.BlockConsistency``;
        ``unobservable``; ``runs``: per run the arrays of :func:`run_errors`) plus ``settings`` (what was run,
        JSON-ready).

    Raises:
        ValueError: no run, a run not longer than the evaluation's start (1.5 s), or, with ``matched_contact``, a trot
            duty factor above 2/3 (the creep's band matching assumes two feet down through the slip window).
    """
    if n_runs < 1 or not duration_s > 1.5:
        raise ValueError(f"go1_monte_carlo needs n_runs >= 1 and duration_s > 1.5 s, got {n_runs}, {duration_s}")
    from robot_state_estimator import simulation
    from robot_state_estimator.simulation.settings import real_robot_errors

    robot = simulation.load_sim_robot("go1")
    spread = max(n.bias_stddev for n in robot.imu.linear_acceleration_noise)
    rate = imu_rate_hz or simulation.SimulationSettings(robot="go1").imu_rate_hz
    extra: dict[str, Any] = dict(real_robot_errors(rate)) if real_errors else {}
    ekf: dict[str, float] = {"initial_accel_bias_std": spread}
    turn_on = float(extra.get("imu_gyro_turn_on_bias_rad_s", 0.0))
    if turn_on > 0.0:  # the description's spread and the simulated offset, independent
        gyro_spread = math.hypot(max(n.bias_stddev for n in robot.imu.angular_velocity_noise), turn_on)
        ekf["initial_gyro_bias_std"] = ekf["init_moving_gyro_bias_std"] = gyro_spread
    if extra.get("imu_accel_bias_walk", 0.0) > 0.0:
        ekf["accel_bias_random_walk"] = float(extra["imu_accel_bias_walk"])
    ekf["leg_scale_std"] = 0.0  # the simulator's legs are the model's: no scale error to publish
    if matched_contact:
        stance_s = robot.gait.trot_period_s * robot.gait.trot_duty
        ekf["foot_velocity_noise"] = SIMULATED_FOOT_VELOCITY_NOISE
        ekf["encoder_velocity_noise"] = simulation.SimulationSettings(robot="go1").joint_velocity_noise_rad_s
        if robot.gait.trot_duty > 2.0 / 3.0:  # then the slip window (a stance's middle half) has four feet down
            raise ValueError(f"the creep's band matching assumes a trot duty factor <= 2/3, not {robot.gait.trot_duty}")
        ekf_settings = matched_settings(None, **ekf).ekf
        imu_noise, _ = apply_imu_noise_floor(imu_noise_from_spec(robot.imu, ekf_settings), ekf_settings, "imu")
        ekf["foot_creep_density"] = band_matched_creep_density(
            float(extra.get("stance_slip_m", 0.0)),
            stance_s,
            accel_noise_density=float(np.max(imu_noise.accel_density[:2])),
            feet_in_stance=2.0,  # a diagonal pair: the other one swings through the slip window
        )
    settings = matched_settings(None, **ekf)
    rates: dict[str, Any] = {
        name: float(rate) for name, rate in (("joint_rate_hz", joint_rate_hz), ("imu_rate_hz", imu_rate_hz)) if rate
    }

    def make_run(seed: int) -> Any:
        sim = simulation.SimulationSettings(
            robot="go1", gait="trot", duration_s=duration_s, seed=seed, noise=True, **extra, **rates
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
        **rates,
        **ekf,
        "evaluation": "from 1.5 s at 50 Hz",
    }
    return res


def consistency_document(
    n_runs: int, duration_s: float, *, joint_rate_hz: float | None = None, imu_rate_hz: float | None = None
) -> dict[str, Any]:
    """:func:`go1_monte_carlo` as a JSON-ready document: ``settings``, ``blocks`` (each ``BlockConsistency.as_dict``),
    ``unobservable`` and ``summary`` (one line per block, ``evaluation.consistency.summary_line``); the rates in Hz
    (None: 1 kHz)."""
    res = go1_monte_carlo(n_runs, duration_s, joint_rate_hz=joint_rate_hz, imu_rate_hz=imu_rate_hz)
    return {
        "settings": res["settings"],
        "blocks": {k: b.as_dict() for k, b in res["blocks"].items()},
        "unobservable": res["unobservable"],
        "summary": [summary_line(k, b) for k, b in res["blocks"].items()],
    }


def bench_consistency(*, short: bool) -> dict[str, Any]:
    """``make bench``'s ``consistency`` section: 10 runs of 8 s (``short``: 2 of 3 s)."""
    n, duration = (2, 3.0) if short else (10, 8.0)
    return consistency_document(n, duration)
