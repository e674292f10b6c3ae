"""The layout of the filter's buffers: the contract between :class:`~.filter.BaseEkf`, the numpy reference and
the compiled kernels (:mod:`.backends`).

The filter keeps its state in preallocated float64 buffers that every step updates in place:

- ``x`` (:data:`X_SIZE`,): ``[X_P:+3]`` ``p_world_base`` (m, W), ``[X_V:+3]`` ``v_base_in_base`` (m/s, B),
  ``[X_R:+9]`` ``R_world_base`` row-major, ``[X_BA:+3]`` accelerometer bias (m/s^2, S), ``[X_BG:+3]`` gyroscope
  bias (rad/s, S), ``[X_OMEGA:+3]`` ``omega_base_in_base`` (rad/s, B), ``[X_ALPHA:+3]`` ``alpha_base_in_base``
  (rad/s^2, B), ``[X_F:+3]`` ``f_base_in_base`` (m/s^2, B, the specific force at the base origin), ``[X_GYRO:+3]``
  and ``[X_ACCEL:+3]`` the held IMU reading (S), ``[X_OMEGA_PREV:+3]`` the previous bias-corrected rate (B), for
  ``alpha_base_in_base``, ``[X_P_ANCHOR:+3]`` the position where the leg-scale term of the published pose
  covariance starts (m, W; :meth:`~.state.FilterState.initialize`, ``set_pose``), ``[X_LEAD]`` the time from the
  filter's time to the held reading's stamp (s, >= 0: a joint sample between two IMU readings is applied after the
  later one is held) and ``[X_DT_GYRO]`` the held reading's interval for ``alpha_base_in_base`` (s; 0: no angular
  acceleration), which say which gyro samples' noise the state carries (:mod:`.model`, "Gyro noise in the
  velocity"), ``[X_GYRO_CROSS:+90]`` the (15, 6) covariance, row-major, of the error (estimate minus truth, all 15
  rows in the order of ``P``) with the noise of the two gyro readings the state's rate interpolates between, columns
  ``[n_prev (3), n_held (3)]`` in B (rad/s): what an update that used those readings leaves, carried through the
  propagation (:mod:`.model`, "Correlated gyro noise"; zero after the IMU step of the usual sample);
- ``P`` (15, 15) C-contiguous, the error covariance in the order ``[dp_W, dv_B, dtheta_B, dba_S, dbg_S]``
  (:data:`P_SL` ... :data:`BG_SL`);
- ``c`` (:data:`C_SIZE`,) constants of the IMU mount and noise: ``[C_R_BASE_IMU:+9]`` ``R_base_imu`` row-major,
  ``[C_P_BASE_IMU:+3]`` ``p_base_imu`` (m, B), ``[C_G_WORLD:+3]`` ``g_world`` (m/s^2), ``[C_SIGMA_ACCEL:+9]`` and
  ``[C_SIGMA_GYRO:+9]`` the accelerometer and gyroscope white-noise densities squared mapped to B
  (``R_base_imu Sigma R_imu_base``), ``[C_BIAS_WALK:+6]`` the bias random-walk densities squared (accelerometer then
  gyroscope, S), ``[C_SIGMA_GYRO_SAMPLE:+9]`` the per-sample gyroscope covariance in B, ``[C_LEG_SCALE_VAR]`` the
  legs' relative scale variance (``ekf.leg_scale_std^2``), ``[C_RS_SIGMA:+9]`` ``[r]x Sigma_g`` and
  ``[C_RS_SIGMA_RS:+9]`` ``[r]x Sigma_g [r]x^T`` (``r = p_base_imu``; the twist's gyro terms, :mod:`.model`).

The outputs are laid out as ``common.output_layout`` (:data:`OUT_SIZE` values).
"""

from __future__ import annotations

import numpy as np

from robot_state_estimator.common.output_layout import OUTPUT_SIZE

#: size of the error state
N_STATES = 15
#: the error-state blocks: position (W), velocity (B), attitude (right perturbation, B), accelerometer and
#: gyroscope biases (S)
P_SL = slice(0, 3)
V_SL = slice(3, 6)
TH_SL = slice(6, 9)
BA_SL = slice(9, 12)
BG_SL = slice(12, 15)
#: the pose rows/columns of P: dp_W then dtheta_B
POSE_IDX = np.array([0, 1, 2, 6, 7, 8])

X_P = 0
X_V = 3
X_R = 6
X_BA = 15
X_BG = 18
X_OMEGA = 21
X_ALPHA = 24
X_F = 27
X_GYRO = 30
X_ACCEL = 33
X_OMEGA_PREV = 36
X_P_ANCHOR = 39
X_LEAD = 42
X_DT_GYRO = 43
X_GYRO_CROSS = 44
#: the (15, 6) block at ``X_GYRO_CROSS``: its columns of the previous and of the held reading's noise
CROSS_ROWS, CROSS_COLS = 15, 6
CROSS_PREV, CROSS_HELD = 0, 3
#: length of the state buffer ``x``
X_SIZE = 134

C_R_BASE_IMU = 0
C_P_BASE_IMU = 9
C_G_WORLD = 12
C_SIGMA_ACCEL = 15
C_SIGMA_GYRO = 24
C_BIAS_WALK = 33
C_SIGMA_GYRO_SAMPLE = 39
C_LEG_SCALE_VAR = 48
C_RS_SIGMA = 49
C_RS_SIGMA_RS = 58
#: length of the constants buffer ``c``
C_SIZE = 67

#: length of the output vector (``BaseEkf.output_vector``)
OUT_SIZE = OUTPUT_SIZE

#: (attribute, start in ``x``, shape) of the state views of :class:`~.filter.BaseEkf`
STATE_VIEWS = (
    ("p_world_base", X_P, (3,)),
    ("v_base_in_base", X_V, (3,)),
    ("R_world_base", X_R, (3, 3)),
    ("accel_bias", X_BA, (3,)),
    ("gyro_bias", X_BG, (3,)),
    ("omega_base_in_base", X_OMEGA, (3,)),
    ("alpha_base_in_base", X_ALPHA, (3,)),
    ("f_base_in_base", X_F, (3,)),
    ("_gyro_imu", X_GYRO, (3,)),
    ("_accel_imu", X_ACCEL, (3,)),
    ("_omega_prev_base_in_base", X_OMEGA_PREV, (3,)),
    ("_p_scale_anchor", X_P_ANCHOR, (3,)),
    ("_gyro_cross", X_GYRO_CROSS, (15, 6)),
)

#: what a backend operation that is only a compiled shortcut returns when the backend does not have it (the numpy
#: reference: the caller then takes the general path, which is that shortcut's reference)
DECLINED = -1

#: results of the IMU step (``BaseEkf.imu_step``): done; done but the state is not finite (outputs not written);
#: the reading is not finite or out of range (nothing changed)
IMU_OK, IMU_NOT_FINITE, IMU_BAD_INPUT = 0, 1, 2

#: the filter's propagation bookkeeping (``FilterState``'s ``_clock``, int64, updated in place by ``set_imu``,
#: ``propagate_to`` and the compiled IMU step): [CLK_GYRO_STAMP] the stamp of the held reading (ns; when
#: [CLK_HAS_GYRO] is 1), [CLK_OMEGA_PREV] 1 when the previous bias-corrected rate is held (the angular acceleration),
#: [CLK_STEPS] propagation steps since the attitude was last re-orthonormalised (every :data:`NORMALISE_EVERY`)
CLK_GYRO_STAMP, CLK_HAS_GYRO, CLK_OMEGA_PREV, CLK_STEPS = 0, 1, 2, 3
CLOCK_SIZE = 4
NORMALISE_EVERY = 100
#: the IMU step's limits from the filter's settings (float64): ``max_dt_s``, ``use_angular_acceleration`` (1/0),
#: ``max_gyro_rad_s``, ``max_accel_m_s2``
LIM_MAX_DT, LIM_USE_ALPHA, LIM_MAX_GYRO, LIM_MAX_ACCEL = 0, 1, 2, 3
LIMITS_SIZE = 4

#: results of the joint gather (``gather_joints``, ``prepare_joints``): done, or the first array (in the order
#: position, velocity, effort) with a non-finite value that is used
GATHER_OK, GATHER_NAN_POSITION, GATHER_NAN_VELOCITY, GATHER_NAN_EFFORT = 0, 1, 2, 3
#: bits of the ``mode`` of ``prepare_joints``: check every message entry (strict names); filter the joint velocity
#: (else the raw backward difference); the message's velocities are the ones used
PREPARE_WHOLE, PREPARE_FILTERED, PREPARE_MEASURED = 1, 2, 4

#: the joint velocity estimator's history (``JointVelocityEstimator.state``, int64): [JV_HAS_PREV] 1 when previous
#: positions are held, [JV_STAMP] their stamp (ns), [JV_VALID] 1 when the estimate is valid; its limits
#: (``JointVelocityEstimator.limits``, float64): [JV_MAX_DT] the largest regular step (s), [JV_TAU] the low-pass time
#: constant (s; 0: no low-pass)
JV_HAS_PREV, JV_STAMP, JV_VALID = 0, 1, 2
JV_STATE_SIZE = 3
JV_MAX_DT, JV_TAU = 0, 1
JV_LIMITS_SIZE = 2

#: the joint step's tables. Integers ``ti``: [JI_MIN_ON] and [JI_MIN_OFF] the trigger's hold times (ns),
#: [JI_ROLLING] rolling feet (1) or point feet (0), [JI_USE_J] the encoder-noise term in use (1/0), [JI_FULL] the
#: full dynamics in the force estimate (1: ``M a + h``; 0: ``g(q)``), then from [JI_LEGS] each foot's 3 leg joint
#: columns (n, 3). Floats ``tf``: [JF_MASS] total mass (kg), [JF_G:+3] ``g_world`` (m/s^2) of the force estimate,
#: [JF_SF2] foot velocity noise^2 ((m/s)^2), [JF_SE2] encoder velocity noise^2 ((rad/s)^2), [JF_GATE] the NIS gate per
#: foot (<= 0: none), [JF_SC2] the contact point's creep per sample on the ground plane ((m/s)^2), then from
#: [JF_RADII] the foot radii (n,) m.
JI_MIN_ON, JI_MIN_OFF, JI_ROLLING, JI_USE_J, JI_FULL, JI_LEGS = 0, 1, 2, 3, 4, 5
(JF_MASS, JF_G, JF_SF2, JF_SE2, JF_GATE, JF_JV_MAX_DT, JF_JV_TAU, JF_HIGH_NIS, JF_SC2,
 JF_RADII) = 0, 1, 4, 5, 6, 7, 8, 9, 10, 11  # fmt: skip
#: (in ``tf``, [JF_JV_MAX_DT] and [JF_JV_TAU]: the joint velocity estimator's ``limits``, constants copied once;
#: [JF_HIGH_NIS]: the slip report's NIS threshold, ``SlipDetector.threshold``)

#: the joint step's constant and work arrays in two tables, one kernel argument each (``CompiledJointStep``; the
#: kernels take the parts as views, ``kernels.joint_step.tables``). ``itab`` (int64) starts with a header of
#: :data:`TAB_HEADER` entries, where each part starts and its shape: the kinematics' joint ints (njoints, cols) and
#: frame ints (n_frames,) (``kinematics_kernels.pack_model``), the integer table ``ti``; ``ftab`` (float64): the joint
#: floats (njoints, cols), the frame floats (n_frames, cols), the work array (njoints, cols), the dynamics buffer
#: (:func:`dynamics_buffer_size`), the float table ``tf``.
(TAB_JI, TAB_NJ, TAB_JI_COLS, TAB_FI, TAB_NF, TAB_TI, TAB_TI_LEN, TAB_JF, TAB_JF_COLS, TAB_FF, TAB_FF_COLS, TAB_WORK,
 TAB_WORK_COLS, TAB_DYN, TAB_DYN_LEN, TAB_TF, TAB_TF_LEN) = range(17)  # fmt: skip
TAB_HEADER = 17
#: the joint step's results: the forces failed the conditioning test (nothing changed); the stacked innovation
#: covariance is not positive definite (forces and trigger done, the filter unchanged)
JOINT_FORCES_FAILED, JOINT_NOT_PD = -1, -2
#: the prepared joint step's result when the sample is not the usual one: no regular step of the joint velocity
#: estimate, or a used value not finite (nothing changed: the reference path takes it and reports any problem)
JOINT_NOT_PREPARED = -3
#: a joint step result >= 0 is ``mask | n_accepted << JOINT_ACCEPTED_SHIFT | not_finite << JOINT_NOT_FINITE_SHIFT |
#: high_nis << JOINT_HIGH_NIS_SHIFT`` with ``mask`` bit i set when foot i is in contact (at most
#: :data:`JOINT_MAX_FEET` feet) and ``high_nis`` when a stance foot's NIS is above ``tf[JF_HIGH_NIS]`` (the slip
#: report's rule for an update that counts, ``SlipDetector.update``)
JOINT_ACCEPTED_SHIFT, JOINT_NOT_FINITE_SHIFT, JOINT_HIGH_NIS_SHIFT = 32, 48, 49
JOINT_MAX_FEET = 32


def joint_buffer_size(n_feet: int, n_joints: int) -> int:
    """Length of the joint step's buffer for ``n_feet`` feet and ``n_joints`` joints: the outputs (:data:`OUT_SIZE`),
    then per foot its wrench (6) and force (3) (``common.output_layout.FOOT_FIELDS``), then the leg update's output
    (13 k for the k feet in contact: innovations (k, 3), their covariances (k, 3, 3), NIS (k,)), then from
    :func:`joint_rows_offset` the prepared sample's (3, n_joints) rows: positions, the velocities in use, efforts."""
    return joint_rows_offset(n_feet) + 3 * n_joints


def joint_rows_offset(n_feet: int) -> int:
    """Where the prepared sample's rows start in the joint step's buffer (:func:`joint_buffer_size`)."""
    return OUT_SIZE + 22 * n_feet


def dynamics_buffer_size(n_joints: int) -> int:
    """Length of the joint step's dynamics work buffer for ``n_joints`` joints (``nv = n_joints + 6``): gravity in B
    (3), the centre of mass (3) and its Jacobian (3, n_joints), then RNEA's torques, velocity and acceleration (nv
    each)."""
    return 6 + 3 * n_joints + 3 * (n_joints + 6)
