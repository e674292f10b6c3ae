"""The orientation half of the 6-D stance update of flat feet: a flat foot in stance does not rotate.

The filter is velocity-formulated (mim_estimation, Bloesch et al. 2012): it holds a stance foot's *position* through
the leg-odometry base velocity (:mod:`.ekf.measurements`), not with foot positions in the state. A flat foot (a sole
on the ground: a support polygon, not a point) also holds its *orientation* in stance (the contact-frame
constraint of Rotella et al. 2014, "State estimation for a humanoid robot", IROS; Bloesch et al. 2013, "State
estimation for legged robots on unstable and slippery terrain", IROS, with foot orientations; Hartley et al.
2020, "Contact-aided invariant extended Kalman filtering for robot state estimation", IJRR). Differentiated, as
the position constraint is, a held orientation is a zero foot angular velocity. With ``J_ang,i`` the angular
rows of the foot Jacobian in B (base at identity, ``LOCAL_WORLD_ALIGNED``: pinocchio), the foot's angular velocity
in B is ``omega_base_in_base + J_ang,i qdot = 0``, so the leg measures the base angular velocity:

    z_i = -J_ang,i qdot = omega_base_in_base = R_base_imu (omega_imu_in_imu - b_g - n_g)

With ``b_g = b_g_hat + dbg`` the innovation is ``y_i = z_i - omega_hat_base_in_base``
(``omega_hat_base_in_base = R_base_imu (omega_imu_in_imu - b_g_hat)``), the Jacobian ``H_i = [0, 0, 0, 0,
-R_base_imu]`` (only the gyro bias) and the noise

    R_i = sigma_rot^2 I + sigma_enc^2 J_ang,i J_ang,i^T + R_base_imu Sigma_g R_imu_base

(``sigma_rot`` = ``ekf.foot_angular_velocity_noise``: rocking, compliance of the sole; ``sigma_enc`` the joint
velocity noise ``ekf.encoder_velocity_noise``; ``Sigma_g`` the per-sample gyro covariance). It makes all three
gyro bias axes observable in stance, the yaw axis included: the 3-D update sees the bias only through the lever
arm ``[r_i]x R_base_imu dbg``, whose component along ``r_i`` (about vertical for a standing leg) is invisible, so the
yaw-rate bias of a point-foot filter drifts and integrates into yaw. Absolute yaw stays unobservable (as in
the papers: the world can be turned about the vertical), but it no longer drifts with the bias.

Each foot is gated on its prior NIS (chi-square, 3 DoF, ``ekf.foot_gate_nis``), like the 3-D update; the update
runs after the 3-D one, on the feet the 3-D gate accepted (a slipping foot is not trusted for its rotation
either), and the accepted feet are fused in one stacked Joseph-form update. Being a second update at the same
sample, it leaves out the cross-covariance of the two halves' noise (the same gyro sample enters both through
``omega_hat``: ``[r_i]x R_base_imu Sigma_g R_imu_base``; the joint velocities through ``J_lin Sigma J_ang^T``); both are
small against the contact terms ``sigma_foot`` and ``sigma_rot``.

Which feet are flat (``ekf.flat_foot_update``): ``auto`` (default) = the feet declared flat
(``contact.flat_feet: true``, every foot), or detected: frames named as REP-120's humanoid sole frames (the name,
without a ``_link``/``_frame`` suffix, ends in ``sole``: ``l_sole``, ``left_sole_link``) with no foot sphere;
``all`` = every foot; ``none`` = no foot (the 3-D update only). Detection from the support polygon of a foot's
collision boxes is not done: a sole frame says more reliably that the frame lies on the sole.

The update runs in the filter's backend (:mod:`.ekf.backends`: the numba kernel ``kernels.flat.rotation_update`` or
the numpy reference; they agree to rounding, tested to 1e-12).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.estimation.ekf.filter import BaseEkf
from robot_state_estimator.estimation.ekf.measurements import Measurement, UpdateResult
from robot_state_estimator.estimation.ekf.measurements import rotation_measurement as _rotation_measurement

FloatArray = NDArray[np.float64]

#: ``ekf.flat_foot_update`` values.
FLAT_FOOT_MODES = ("auto", "all", "none")
_SOLE_RE = re.compile(r"sole$", re.IGNORECASE)
_SUFFIX_RE = re.compile(r"_(link|frame)$", re.IGNORECASE)


def is_sole_frame(name: str) -> bool:
    """True for a sole frame name (REP-120: ``l_sole``, ``r_sole``; also ``left_sole_link``)."""
    return bool(_SOLE_RE.search(_SUFFIX_RE.sub("", name)))


def flat_feet_mask(mode: str, foot_frames: Sequence[str], radii: FloatArray, declared_flat: bool) -> NDArray[np.bool_]:
    """(n_feet,) bool: which feet get the orientation update (module docstring, ``ekf.flat_foot_update``).

    Args:
        mode: ``auto``, ``all`` or ``none``.
        foot_frames: the foot frame names. radii: (n_feet,) m, foot sphere radii in use (0 = no sphere).
        declared_flat: ``contact.flat_feet``.

    Raises:
        ValueError: an unknown mode.
    """
    n = len(foot_frames)
    if mode == "none":
        return np.zeros(n, dtype=bool)
    if mode == "all":
        return np.ones(n, dtype=bool)
    if mode != "auto":
        raise ValueError(f"ekf.flat_foot_update must be one of {FLAT_FOOT_MODES}, got {mode!r}")
    if declared_flat:
        return np.ones(n, dtype=bool)
    return np.array([is_sole_frame(f) and float(r) == 0.0 for f, r in zip(foot_frames, radii)], dtype=bool)


def rotation_measurement(
    ekf: BaseEkf,
    name: str,
    J_ang: FloatArray,
    qdot_joints: FloatArray,
    rotation_noise: float,
    encoder_noise: float,
) -> Measurement:
    """The orientation measurement of one flat stance foot (module docstring) at the filter's rate at its time,
    ``omega_base_in_base_at_state`` (:func:`.ekf.measurements.rotation_measurement`).

    Args:
        ekf: the filter. name: the foot.
        J_ang: (3, nj) angular rows of the foot Jacobian in B. qdot_joints: (nj,) rad/s.
        rotation_noise: rad/s, ``sigma_rot``. encoder_noise: rad/s, ``sigma_enc`` (0 = no encoder term).

    Returns:
        The measurement: innovation (3,) rad/s in B, H (3, 15) (``-R_base_imu`` on the gyro bias), R (3, 3).
    """
    return _rotation_measurement(
        name,
        J_ang,
        qdot_joints,
        ekf.omega_base_in_base_at_state,
        R_base_imu=ekf.R_base_imu,
        Sigma_gyro_sample=ekf.model.Sigma_gyro_sample,
        rotation_noise=rotation_noise,
        encoder_noise=encoder_noise,
        gyro_held=ekf.gyro_noise_shares()[2],
    )


def rotation_update(
    ekf: BaseEkf,
    names: Sequence[str],
    feet: NDArray[np.intp],
    qdot_joints: FloatArray,
    J6_base_foot: FloatArray,
    rotation_noise: float,
    encoder_noise: float,
    gate: float,
) -> list[UpdateResult]:
    """The orientation update of the flat stance feet ``feet`` (module docstring), in the filter's backend: each
    foot's :func:`rotation_measurement` gated on its prior NIS, the accepted ones fused in one Joseph-form update.

    Args:
        ekf: the filter (updated in place).
        names: (k,) names of the feet, for the results.
        feet: (k,) indices of the feet into ``J6_base_foot``.
        qdot_joints: (nj,) rad/s. J6_base_foot: (n, 6, nj) foot Jacobians in B (``LegKinematics``).
        rotation_noise: rad/s, ``sigma_rot``. encoder_noise: rad/s, ``sigma_enc`` (0 = no encoder term).
        gate: NIS gate per foot (3 DoF; <= 0: none).

    Returns:
        One :class:`~.ekf.measurements.UpdateResult` per foot (innovation (3,) rad/s in B, its covariance, NIS,
        accepted).
    """
    if len(feet) == 0:
        return []
    return ekf.backend.rotation_update(ekf, names, feet, qdot_joints, J6_base_foot, rotation_noise, encoder_noise,
                                       gate)  # fmt: skip
