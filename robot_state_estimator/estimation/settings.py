"""Estimator settings: frozen dataclasses, validated when made.

They are read from YAML files, parameter dicts and the node's flat ROS parameter names by
:mod:`robot_state_estimator.estimation.settings_loading` (:func:`~.settings_loading.load_settings`,
:func:`~.settings_loading.settings_from_flat`, :func:`~.settings_loading.flatten_settings`).

Every value has a default, and no default is ``None`` (ROS parameters cannot be ``None``): "take it from the
robot description" is expressed with explicit flags such as ``ekf.use_description_noise``.

Units: SI, with the unit in the field name or documented per field. Noise *densities* are continuous-time
(``sigma_c``, unit per sqrt(Hz) = unit * sqrt(s)); see :mod:`robot_state_estimator.estimation.ekf` for how
they are discretised.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from robot_state_estimator.estimation.errors import SettingsError

CONTACT_SOURCES = ("auto", "torque", "foot_sensor", "kinematic", "schedule")
THRESHOLD_MODES = ("absolute", "weight_relative")


def _check_positive(owner: str, **values: float) -> None:
    for name, value in values.items():
        if not (math.isfinite(value) and value > 0.0):
            raise SettingsError(f"{owner}.{name} must be finite and > 0, got {value!r}")


def _check_non_negative(owner: str, **values: float) -> None:
    for name, value in values.items():
        if not (math.isfinite(value) and value >= 0.0):
            raise SettingsError(f"{owner}.{name} must be finite and >= 0, got {value!r}")


@dataclass(frozen=True)
class EkfSettings:
    """Noise, initialisation and guards of :class:`~robot_state_estimator.estimation.ekf.BaseEkf`.

    Attributes:
        use_description_noise: take the IMU white noise (and turn-on bias spread, and Gauss-Markov bias
            drift) from the description's SDF ``<noise>`` when it is enabled and non-zero; the density
            fields below are then only fallbacks for axes without noise.
        nominal_imu_rate_hz: Hz, IMU rate used to convert per-sample SDF stddevs into densities when the
            sensor's ``update_rate`` is 0 ("as fast as possible").
        accel_noise_density: m/s^2/sqrt(Hz), accelerometer white noise (continuous sigma_c).
        gyro_noise_density: rad/s/sqrt(Hz), gyroscope white noise (continuous sigma_c).
        accel_bias_random_walk: m/s^3/sqrt(Hz), accelerometer bias random walk density. The default is a bench
            figure; on a trotting robot a MEMS accelerometer's offset wanders with the gait's vibration
            (rectification): 0.01 on the real Go1 trot (``config/go1.yaml``; 1e-3 to 3e-2 measured against a
            reference independent of the filter, docs/uncertainty.md).
        gyro_bias_random_walk: rad/s^2/sqrt(Hz), gyroscope bias random walk density.
        accel_noise_floor: m/s^2/sqrt(Hz), the accelerometer density the filter uses is never below this, whatever
            the description states (foot impacts and vibration of a legged robot; 0 = no floor; see
            :mod:`~robot_state_estimator.estimation.noise_model`). Event ``imu_noise_below_floor`` names a stated
            density more than 3 times below the one used.
        gyro_noise_floor: rad/s/sqrt(Hz), the same for the gyroscope.
        foot_velocity_noise: m/s, stddev of the contact point's velocity over the ground per axis, white from
            joint sample to joint sample (rolling beyond the sphere model, small slips, ground and link
            compliance); the creep of ``foot_creep_density`` and the joint velocities' and the gyro's noise through
            the leg are added to it (:mod:`~robot_state_estimator.estimation.noise_model`).
        foot_creep_density: m/sqrt(s), density per ground-plane axis of the contact point's creep correlated over
            a stance (a drift of stddev ``sigma_d`` over a stance of ``T_s`` s is ``sigma_d / sqrt(T_s)``); in the
            leg update as its equivalent white noise at the joint period measured at initialisation, variance
            ``foot_creep_density^2 / dt`` on the world's horizontal plane only
            (:mod:`~robot_state_estimator.estimation.noise_model`); 0 = off. It also lowers the feet's NIS, which
            the gate and the slip report read (the horizontal innovations of a sample are far below it;
            docs/uncertainty.md).
        encoder_velocity_noise: rad/s, stddev of a joint velocity the joint message measures, propagated through
            the foot Jacobian (velocities the estimator differentiates use ``encoder_noise_rad`` instead).
        encoder_noise_rad: rad, stddev of a joint angle at the output (encoder noise, transmission backlash and
            compliance); for differentiated joint velocities it becomes their stddev through the differentiator
            (0.29 rad/s per mrad at 400 Hz with the 100 Hz cutoff), chosen at each initialisation (event
            ``leg_noise``, info).
        encoder_resolution_rad: rad, quantisation step of the joint angles (adds ``step^2 / 12`` to the
            ``encoder_noise_rad`` variance); 0 = continuous.
        leg_scale_std: relative stddev (1 = 100 %) of the legs' kinematic scale: link lengths and the feet's
            effective rolling radius as calibrated, a constant error that makes the leg odometry's distance too
            short or too long. Not estimated: its effect on the position, ``leg_scale_std^2 d d^T`` with ``d`` the
            horizontal displacement since initialisation (or the last ``set_pose``), is added to the published pose
            covariance (a consider covariance: Schmidt 1966; Bierman 1977), which the position's variance, grown
            from white noise alone, under-counts over a long walk (the real Go1 trot's legs measure 3.6 % short:
            docs/uncertainty.md; ``config/go1.yaml`` sets 0.036). 0 = off.
        foot_gate_nis: chi-square gate on a foot's normalised innovation squared (3 DoF; 16.27 is the
            99.9 % quantile, 11.34 the 99 %); 0 disables the gate.
        slip_nis_window_s: s, the window of the slip report (:mod:`robot_state_estimator.estimation.slip`): a
            stance foot whose leg-update NIS is above the chi-square 99 % point (3 DoF, 11.34) for at least
            ``slip_nis_fraction`` of the last ``slip_nis_window_s`` of its contact is reported slipping (event
            ``foot_slipping``, once per episode); 0 disables the report.
        slip_nis_fraction: the part of ``slip_nis_window_s`` the NIS must be high for, in (0, 1].
        flat_foot_update: which feet also get the orientation half of the 6-D stance update (a flat foot in
            stance does not rotate, which makes the gyro bias observable on all axes and stops the yaw drift it
            causes; :mod:`robot_state_estimator.estimation.flat_feet`): ``auto`` = the feet declared flat
            (``contact.flat_feet``) or sole frames (REP-120 ``l_sole``/``r_sole``-like names) without a foot sphere;
            ``all`` = every foot; ``none`` = the 3-D update only.
        foot_angular_velocity_noise: rad/s, stddev of a flat stance foot's angular velocity (rocking, sole
            compliance) in that update; encoder and gyro noise are added to it.
        foot_radius_m: m, radius of the spherical feet for the rolling-contact leg measurement (the contact
            point, ``rho`` below the foot frame origin along the vertical, is the point at rest in stance; see
            :mod:`robot_state_estimator.estimation.kinematics`). Negative (the default, -1; ``null`` in YAML
            means the same) = from the description (``RobotDescription.foot_radius`` per foot: a collision
            sphere centred at the foot frame origin, else 0); a number >= 0 = that radius for every foot;
            0 = point feet (the foot frame origin is at rest).
        initial_position: m, base position in ``odom`` at initialisation (x, y, z); z is replaced by the
            height above the stance feet when ``initial_height_from_feet`` and joints are known.
        initial_height_from_feet: put the base above the mean of the stance feet (ground at z = 0).
        init_wait_for_loaded_feet: with joints streaming, initialise (static or moving) only once at least one
            foot is loaded (foot sensor or torque-estimated normal force above its contact on threshold; without
            either, the lowest feet still), and take the height from the loaded feet only: a robot held in the air
            then put down starts at the right height (:mod:`~robot_state_estimator.estimation.initial_support`).
            Event ``init_waiting_for_load`` (info, once) while it waits.
        initial_position_std: m, initial position stddev (per axis).
        initial_velocity_std: m/s, initial velocity stddev (per axis).
        initial_roll_pitch_std: rad, initial roll and pitch stddev.
        initial_yaw_std: rad, initial yaw stddev (yaw starts at 0 by definition).
        initial_accel_bias_std: m/s^2, initial accelerometer bias stddev.
        initial_gyro_bias_std: rad/s, initial gyroscope bias stddev (after the static average; never below the
            average's own noise, the gyro's per-sample stddev over sqrt(``init_imu_samples``)).
        init_imu_samples: size of the sliding window of IMU samples averaged (robot static) for roll, pitch
            and gyro bias when no explicit initial state is given.
        init_max_gyro_std_rad_s: rad/s, the window counts as static only when the standard deviation of its
            gyro readings is below this on every axis (motion shows as variation; a constant gyro bias, however
            large, does not); 0 disables the check.
        init_max_accel_deviation_m_s2: m/s^2, and when its mean accelerometer norm is within this of
            ``gravity_m_s2`` (standing up, being carried); 0 disables. The default 0.3 keeps the real Go1's
            stand-up out of the static window (0.5 let it in: ATE 1.24 % instead of 0.98 % of the path).
        init_timeout_s: s of IMU time, when no window counted as static this long after the first IMU sample,
            initialise from the moving robot anyway (roll and pitch from the mean specific force since that
            first sample, yaw 0, gyro bias 0, velocity from the leg kinematics); 0 disables (wait for a static
            window however long it takes).
        init_moving_roll_pitch_std: rad, initial roll and pitch stddev of the initialisation from a moving
            robot (the mean base acceleration over the timeout tilts the mean specific force by about
            ``|a| / g``: 0.05 rad for 0.5 m/s^2; 0.1 doubles the attitude transient of the real Go1 trot).
        init_moving_velocity_std: m/s, initial velocity stddev (per axis) of the initialisation from a moving
            robot.
        init_moving_gyro_bias_std: rad/s, initial gyroscope bias stddev of the initialisation from a moving
            robot (the bias is not averaged: the prior spread of the gyro's turn-on bias).
        max_dt_s: s, largest IMU period that is propagated with the IMU; over a larger gap (up to the node's
            ``max_time_gap_s``, beyond which it resets) the position is carried at the estimated velocity and the
            covariance grows by the gap's transition, its process noise and an unknown mean acceleration and rate
            (``gap_accel_std``, ``gap_rate_std``; ``BaseEkf.propagate_to``).
        gap_accel_std: m/s^2, stddev per axis of the base's mean acceleration over an IMU gap (no reading there):
            the velocity's variance grows by ``(gap_accel_std T)^2``, the position's by ``(gap_accel_std T^2 / 2)^2``
            for a gap of ``T`` s (constant unknown acceleration). 3 m/s^2: a trot's accelerations.
        gap_rate_std: rad/s, stddev per axis of the base's mean angular rate over an IMU gap (the attitude is kept
            across it): the attitude's variance grows by ``(gap_rate_std T)^2``. 0.5 rad/s: a trot's sway, a turn.
        static_bias_lock: while the robot is static (small gyro, still joints, all feet in contact), apply a
            zero-angular-rate pseudo-measurement (ZARU), which pins the gyro bias to the measured rate.
        static_gyro_threshold_rad_s: rad/s, gyro norm below which the robot may be static.
        static_joint_velocity_threshold_rad_s: rad/s, largest joint speed for static.
        zero_rate_noise_rad_s: rad/s, stddev of the ZARU pseudo-measurement.
        gravity_m_s2: m/s^2, magnitude of gravity; ``g_world = (0, 0, -gravity_m_s2)``.
        use_angular_acceleration: include the ``alpha x r`` lever-arm term (alpha from differentiated gyro).
        max_gyro_rad_s: rad/s, IMU samples with a larger gyro component are refused as implausible.
        max_accel_m_s2: m/s^2, IMU samples with a larger accelerometer component are refused.
    """

    use_description_noise: bool = True
    nominal_imu_rate_hz: float = 1000.0
    accel_noise_density: float = 0.02
    gyro_noise_density: float = 0.002
    accel_bias_random_walk: float = 1.0e-3
    gyro_bias_random_walk: float = 1.0e-4
    accel_noise_floor: float = 0.02
    gyro_noise_floor: float = 0.002
    foot_velocity_noise: float = 0.1
    foot_creep_density: float = 0.0
    encoder_velocity_noise: float = 0.05
    encoder_noise_rad: float = 1.0e-3
    encoder_resolution_rad: float = 0.0
    leg_scale_std: float = 0.02
    foot_gate_nis: float = 16.27
    slip_nis_window_s: float = 0.2
    slip_nis_fraction: float = 0.5
    flat_foot_update: str = "auto"
    foot_angular_velocity_noise: float = 0.05
    foot_radius_m: float = -1.0
    initial_position: tuple[float, ...] = (0.0, 0.0, 0.0)
    initial_height_from_feet: bool = True
    init_wait_for_loaded_feet: bool = True
    initial_position_std: float = 1.0e-3
    initial_velocity_std: float = 0.1
    initial_roll_pitch_std: float = 0.02
    initial_yaw_std: float = 1.0e-3
    initial_accel_bias_std: float = 0.1
    initial_gyro_bias_std: float = 0.005
    init_imu_samples: int = 100
    init_max_gyro_std_rad_s: float = 0.05
    init_max_accel_deviation_m_s2: float = 0.3
    init_timeout_s: float = 1.0
    init_moving_roll_pitch_std: float = 0.05
    init_moving_velocity_std: float = 0.5
    init_moving_gyro_bias_std: float = 0.01
    max_dt_s: float = 0.05
    gap_accel_std: float = 3.0
    gap_rate_std: float = 0.5
    static_bias_lock: bool = False
    static_gyro_threshold_rad_s: float = 0.02
    static_joint_velocity_threshold_rad_s: float = 0.05
    zero_rate_noise_rad_s: float = 0.005
    gravity_m_s2: float = 9.81
    use_angular_acceleration: bool = True
    max_gyro_rad_s: float = 100.0
    max_accel_m_s2: float = 500.0

    def __post_init__(self) -> None:
        _check_positive(
            "ekf",
            nominal_imu_rate_hz=self.nominal_imu_rate_hz,
            accel_noise_density=self.accel_noise_density,
            gyro_noise_density=self.gyro_noise_density,
            foot_velocity_noise=self.foot_velocity_noise,
            foot_angular_velocity_noise=self.foot_angular_velocity_noise,
            initial_position_std=self.initial_position_std,
            initial_velocity_std=self.initial_velocity_std,
            initial_roll_pitch_std=self.initial_roll_pitch_std,
            initial_yaw_std=self.initial_yaw_std,
            initial_accel_bias_std=self.initial_accel_bias_std,
            initial_gyro_bias_std=self.initial_gyro_bias_std,
            init_moving_roll_pitch_std=self.init_moving_roll_pitch_std,
            init_moving_velocity_std=self.init_moving_velocity_std,
            init_moving_gyro_bias_std=self.init_moving_gyro_bias_std,
            max_dt_s=self.max_dt_s,
            zero_rate_noise_rad_s=self.zero_rate_noise_rad_s,
            gravity_m_s2=self.gravity_m_s2,
            max_gyro_rad_s=self.max_gyro_rad_s,
            max_accel_m_s2=self.max_accel_m_s2,
        )
        _check_non_negative(
            "ekf",
            accel_bias_random_walk=self.accel_bias_random_walk,
            gyro_bias_random_walk=self.gyro_bias_random_walk,
            encoder_velocity_noise=self.encoder_velocity_noise,
            foot_creep_density=self.foot_creep_density,
            encoder_noise_rad=self.encoder_noise_rad,
            encoder_resolution_rad=self.encoder_resolution_rad,
            leg_scale_std=self.leg_scale_std,
            gap_accel_std=self.gap_accel_std,
            gap_rate_std=self.gap_rate_std,
            accel_noise_floor=self.accel_noise_floor,
            gyro_noise_floor=self.gyro_noise_floor,
            foot_gate_nis=self.foot_gate_nis,
            slip_nis_window_s=self.slip_nis_window_s,
            init_max_gyro_std_rad_s=self.init_max_gyro_std_rad_s,
            init_max_accel_deviation_m_s2=self.init_max_accel_deviation_m_s2,
            init_timeout_s=self.init_timeout_s,
            static_gyro_threshold_rad_s=self.static_gyro_threshold_rad_s,
            static_joint_velocity_threshold_rad_s=self.static_joint_velocity_threshold_rad_s,
        )
        if len(self.initial_position) != 3 or not all(math.isfinite(x) for x in self.initial_position):
            raise SettingsError(f"ekf.initial_position must be 3 finite numbers, got {self.initial_position!r}")
        if not 0.0 < self.slip_nis_fraction <= 1.0:
            raise SettingsError(f"ekf.slip_nis_fraction must be in (0, 1], got {self.slip_nis_fraction!r}")
        if self.init_imu_samples < 1:
            raise SettingsError(f"ekf.init_imu_samples must be >= 1, got {self.init_imu_samples}")
        if self.flat_foot_update not in ("auto", "all", "none"):
            raise SettingsError(
                f"ekf.flat_foot_update must be auto, all or none (a YAML string), got {self.flat_foot_update!r}"
            )
        if not math.isfinite(self.foot_radius_m):
            raise SettingsError(f"ekf.foot_radius_m must be finite, got {self.foot_radius_m!r}")


@dataclass(frozen=True)
class ContactSettings:
    """Contact detection (:class:`~robot_state_estimator.estimation.contact.ContactDetector`) and forces.

    Attributes:
        source: ``auto`` (foot sensors when they are streaming, else torques when the joint message has
            efforts, else kinematic), ``torque``, ``foot_sensor`` (foot wrench sensors when every foot's is
            streaming, else the JointState form), ``kinematic`` or ``schedule`` (a controller's contact schedule;
            stale: the torques, else kinematic).
        threshold_mode: ``absolute`` (``on_threshold``/``off_threshold`` in N) or ``weight_relative``
            (fractions of the robot weight divided by the number of feet) for the torque-based normal force.
        on_threshold: contact starts when the normal force rises above this (N, or fraction of the per-foot
            weight share).
        off_threshold: contact ends when the normal force falls below this; must be <= on_threshold.
        sensor_on_threshold: the same for foot sensors, in the sensor's unit (raw counts on Go1: 60).
        sensor_off_threshold: the same (Go1: 30).
        kinematic_on_height_m: m, kinematic fallback: a foot is in contact when it is less than this above
            the lowest foot (heights along the world vertical, from the estimated attitude).
        kinematic_off_height_m: m, and leaves contact when more than this above it (>= on height).
        kinematic_on_speed_m_s: m/s, kinematic fallback: a foot touches down only when, besides being low, its
            contact point moves slower than this relative to the lowest foot's (leg kinematics and gyro; a swing
            foot near the ground moves fast, a stance foot is still); a large value (1e6) = the height alone
            decides.
        kinematic_off_speed_m_s: m/s, and lifts off when it moves faster than this (>= on speed), however low.
        min_on_duration_s: s, a new contact is reported only after the raw trigger has held "on" this long.
        min_off_duration_s: s, a lift-off is reported only after the raw trigger has held "off" this long.
        foot_sensor_timeout_s: s, in ``auto`` mode foot sensors count as streaming when their last sample is
            at most this old.
        use_full_dynamics: use ``M a + h`` (with the estimated base motion and the joint accelerations, the
            backward difference of the joint velocities) instead of the gravity torques ``g(q)`` for the contact
            forces when the joint message carries velocities, so that swing-leg inertia does not read as foot
            force; ``g(q)`` when the velocities are differentiated positions (their lag makes the accelerations
            worse than none). False: always ``g(q)``.
        flat_feet: estimate a 6-D contact wrench per foot (least-norm when a leg has fewer than 6 joints)
            instead of a 3-D point-foot force.
        schedule_timeout_s: s, ``schedule`` source: a joint sample at stamp t uses the latest contact schedule
            stamped at or before t when it is at most this old, else the schedule is stale.
        schedule_disagreement_s: s, a foot whose schedule and force-based contact state differ for this long
            counts one disagreement (event ``contact_schedule_disagrees``); the schedule still decides.
    """

    source: str = "auto"
    threshold_mode: str = "weight_relative"
    on_threshold: float = 0.3
    off_threshold: float = 0.15
    sensor_on_threshold: float = 60.0
    sensor_off_threshold: float = 30.0
    kinematic_on_height_m: float = 0.02
    kinematic_off_height_m: float = 0.03
    kinematic_on_speed_m_s: float = 0.2
    kinematic_off_speed_m_s: float = 0.3
    min_on_duration_s: float = 0.0
    min_off_duration_s: float = 0.0
    foot_sensor_timeout_s: float = 0.1
    use_full_dynamics: bool = True
    flat_feet: bool = False
    schedule_timeout_s: float = 0.1
    schedule_disagreement_s: float = 0.1

    def __post_init__(self) -> None:
        if self.source not in CONTACT_SOURCES:
            raise SettingsError(f"contact.source must be one of {CONTACT_SOURCES}, got {self.source!r}")
        if self.threshold_mode not in THRESHOLD_MODES:
            raise SettingsError(f"contact.threshold_mode must be one of {THRESHOLD_MODES}, got {self.threshold_mode!r}")
        _check_non_negative(
            "contact",
            min_on_duration_s=self.min_on_duration_s,
            min_off_duration_s=self.min_off_duration_s,
            kinematic_on_height_m=self.kinematic_on_height_m,
            kinematic_on_speed_m_s=self.kinematic_on_speed_m_s,
        )
        _check_positive(
            "contact", foot_sensor_timeout_s=self.foot_sensor_timeout_s, schedule_timeout_s=self.schedule_timeout_s
        )
        _check_non_negative("contact", schedule_disagreement_s=self.schedule_disagreement_s)
        for on, off, name in (
            (self.on_threshold, self.off_threshold, "threshold"),
            (self.sensor_on_threshold, self.sensor_off_threshold, "sensor_threshold"),
        ):
            if not (math.isfinite(on) and math.isfinite(off) and off <= on):
                raise SettingsError(f"contact.off_{name} ({off}) must be <= contact.on_{name} ({on})")
        if self.kinematic_off_height_m < self.kinematic_on_height_m:
            raise SettingsError(
                f"contact.kinematic_off_height_m ({self.kinematic_off_height_m}) must be >= "
                f"contact.kinematic_on_height_m ({self.kinematic_on_height_m})"
            )
        if not self.kinematic_off_speed_m_s >= self.kinematic_on_speed_m_s:
            raise SettingsError(
                f"contact.kinematic_off_speed_m_s ({self.kinematic_off_speed_m_s}) must be >= "
                f"contact.kinematic_on_speed_m_s ({self.kinematic_on_speed_m_s})"
            )


@dataclass(frozen=True)
class JointVelocitySettings:
    """Joint velocities estimated from positions (:mod:`~robot_state_estimator.estimation.joint_velocity`).

    Attributes:
        use_measured: use the velocities of the joint message when it has them (and they are finite).
        cutoff_hz: Hz, cutoff of the first-order low-pass applied to the backward difference; 0 = none.
            Lag at low frequency: half a sample period (difference) plus ``1 / (2 pi cutoff_hz)``.
        max_dt_s: s, a larger gap between joint samples restarts the differentiator.
    """

    use_measured: bool = True
    cutoff_hz: float = 100.0
    max_dt_s: float = 0.1

    def __post_init__(self) -> None:
        _check_non_negative("joint_velocity", cutoff_hz=self.cutoff_hz)
        _check_positive("joint_velocity", max_dt_s=self.max_dt_s)


@dataclass(frozen=True)
class DeclaredImuSettings:
    """An IMU declared by settings, for a description without one (example-robot-data's Go2 and ANYmal URDFs).

    Used when ``link`` is not empty; it then replaces the description's IMUs, if any (an explicit declaration
    wins; event ``imu_declared_replaces``, warn, names the ones replaced). Its name is ``imu_name``, or
    ``declared_imu`` when that is empty. See :mod:`robot_state_estimator.estimation.imu_setup` for how the
    numbers become the IMU's SDFormat noise (what the filter then reads, as a description's ``<noise>``).

    Attributes:
        link: the link or SDF ``<frame>`` of the description the IMU sits on (URDF links lumped by fixed joints,
            such as the Go2's ``imu``, included); "" = no IMU declared (the description's IMU is used).
        pose: m and rad, the IMU frame S in ``link``: ``x y z roll pitch yaw``, SDFormat pose semantics
            (translation, then the fixed-axis rotation ``Rz(yaw) Ry(pitch) Rx(roll)``, as
            ``<pose relative_to="link">`` of a sensor).
        frame_id: the ``header.frame_id`` its messages carry; "" = ``link`` when ``pose`` is zero, else the
            IMU's name (frames of the description coinciding with S are accepted as well).
        update_rate_hz: Hz, its sample rate; 0 = unknown (``ekf.nominal_imu_rate_hz`` converts the densities).
        gyro_noise_density_rad_s_sqrt_hz: rad/s/sqrt(Hz), gyroscope white noise (datasheet "rate noise
            density", deg/s/sqrt(Hz) * pi/180); 0 = not given (``ekf.gyro_noise_density`` is assumed).
        accel_noise_density_m_s2_sqrt_hz: m/s^2/sqrt(Hz), accelerometer white noise (datasheet ug/sqrt(Hz) *
            9.81e-6); 0 = not given (``ekf.accel_noise_density`` is assumed).
        gyro_bias_instability_rad_s: rad/s, stddev of the gyroscope bias (bias instability or turn-on bias);
            the filter's prior on the bias; 0 = not given.
        accel_bias_instability_m_s2: m/s^2, the same for the accelerometer; 0 = not given.
        gyro_bias_random_walk_rad_s2_sqrt_hz: rad/s^2/sqrt(Hz), density of the gyroscope bias random walk;
            0 = not given (``ekf.gyro_bias_random_walk`` is assumed).
        accel_bias_random_walk_m_s3_sqrt_hz: m/s^3/sqrt(Hz), density of the accelerometer bias random walk;
            0 = not given (``ekf.accel_bias_random_walk`` is assumed).
    """

    link: str = ""
    pose: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    frame_id: str = ""
    update_rate_hz: float = 0.0
    gyro_noise_density_rad_s_sqrt_hz: float = 0.0
    accel_noise_density_m_s2_sqrt_hz: float = 0.0
    gyro_bias_instability_rad_s: float = 0.0
    accel_bias_instability_m_s2: float = 0.0
    gyro_bias_random_walk_rad_s2_sqrt_hz: float = 0.0
    accel_bias_random_walk_m_s3_sqrt_hz: float = 0.0

    def __post_init__(self) -> None:
        _check_non_negative(
            "declared_imu",
            **{f.name: getattr(self, f.name) for f in dataclasses.fields(self) if isinstance(f.default, float)},
        )
        pose = self.pose
        if len(pose) != 6 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in pose
        ):
            raise SettingsError(
                f"declared_imu.pose must be 6 finite numbers (x y z in m, roll pitch yaw in rad), got {list(pose)!r}"
            )

    @property
    def declared(self) -> bool:
        """Whether an IMU is declared (``link`` set)."""
        return bool(self.link)


@dataclass(frozen=True)
class EstimatorSettings:
    """All settings of :class:`~robot_state_estimator.estimation.pipeline.RobotStateEstimator`.

    Attributes:
        ekf: filter noise, initialisation and guards.
        contact: contact detection and force estimation.
        joint_velocity: joint-velocity estimation from positions.
        foot_frames: foot frame names; empty = take them from the description (``desc.foot_frames()``).
        imu_name: the IMU to use, by its sensor name, when the description has several (a humanoid's one per
            body part); "" = the only one. With an IMU declared (``declared_imu.link``), the declared IMU's name.
        declared_imu: an IMU declared by settings (its link or frame, pose and noise), for a description
            without one; replaces the description's IMUs when set.
        ignore_unknown_joints: accept joint samples that also name joints not in the model (a gripper, a head,
            wheels on the same ``/joint_states``): those names and their values are ignored, reported once per
            change of the ignored set (event ``ignored_joints``, info). False = such samples are rejected
            (core event ``unknown_joint``; the node and replay count them as ``rejected.joint_unknown_names``). A
            sample lacking a model joint is rejected either way.
        max_measurement_delay_s: s, a joint sample older than the filter time by at most this is applied
            at the filter time (its velocity information is still current enough); older ones are dropped.
        max_pending_joint_samples: joint samples ahead of the IMU are held, at most this many (oldest dropped).
        out_of_order_tolerance_s: s, an IMU sample older than the last one by at most this is dropped as
            out of order; a larger step back in time (a looping bag, a restarted clock) resets the filter.
    """

    ekf: EkfSettings = field(default_factory=EkfSettings)
    contact: ContactSettings = field(default_factory=ContactSettings)
    joint_velocity: JointVelocitySettings = field(default_factory=JointVelocitySettings)
    foot_frames: tuple[str, ...] = ()
    imu_name: str = ""
    declared_imu: DeclaredImuSettings = field(default_factory=DeclaredImuSettings)
    ignore_unknown_joints: bool = False
    max_measurement_delay_s: float = 0.02
    max_pending_joint_samples: int = 200
    out_of_order_tolerance_s: float = 0.05

    def __post_init__(self) -> None:
        _check_non_negative(
            "settings",
            max_measurement_delay_s=self.max_measurement_delay_s,
            out_of_order_tolerance_s=self.out_of_order_tolerance_s,
        )
        if self.max_pending_joint_samples < 1:
            raise SettingsError("max_pending_joint_samples must be >= 1")
