"""Settings of a simulated run: frozen dataclasses, built from keyword arguments or a YAML-like dict."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, TypedDict

from robot_state_estimator.simulation.errors import SimulationError

GAITS = ("stand", "stand_up", "trot", "walk")
#: Foot contact models (None: sphere when the description has foot spheres, else point; a biped's soles: flat).
FOOT_MODELS = (None, "point", "sphere", "flat")


@dataclass(frozen=True)
class SlipEvent:
    """A foot sliding on the ground while in contact.

    Attributes:
        foot: foot frame name, or its index in the robot's foot order (as a string, e.g. ``"0"``).
        start_s: time the slip starts (s from the start of the run); the foot must be in stance then.
        duration_s: slip duration (s); clipped to end before the foot lifts off.
        displacement_m: (dx, dy) horizontal displacement in the world (m), reached with a quintic profile: of
            the foot origin for a point foot, of the contact point for a rolling sphere (whose centre also rolls).
    """

    foot: str = "0"
    start_s: float = 3.0
    duration_s: float = 0.05
    displacement_m: tuple[float, float] = (0.03, 0.0)


class RealRobotErrors(TypedDict, total=False):
    """Settings of :data:`REAL_ROBOT_ERRORS` (the fields of :class:`SimulationSettings` of the same names)."""

    encoder_resolution_rad: float
    stance_slip_m: float
    imu_vibration_accel_m_s2: float
    imu_vibration_gyro_rad_s: float
    imu_accel_bias_walk: float
    imu_gyro_turn_on_bias_rad_s: float
    jitter_s: float


#: Errors of a real legged robot (``SimulationSettings(**REAL_ROBOT_ERRORS)``, ``simulate --real-errors``), each
#: documented in :class:`SimulationSettings`: 16-bit joint encoders, 2 mm random slips per stance, IMU vibration
#: that brings the Go1's 1 kHz IMU to the estimator's legged-robot noise floor (0.02 m/s^2/sqrt(Hz), 0.002
#: rad/s/sqrt(Hz): per-sample 0.63 m/s^2 and 0.063 rad/s), an accelerometer bias that wanders under the gait's
#: vibration at the density the real Go1 trot shows (0.03 m/s^3/sqrt(Hz), ``config/go1.yaml``'s
#: ``ekf.accel_bias_random_walk``: docs/uncertainty.md), a gyroscope turn-on offset of 1 deg/s per axis (the BMI088
#: datasheet's typical zero-rate offset, a 1-sigma figure; the description's ``bias_stddev`` of 9.7e-6 rad/s is the
#: in-run bias stability, 2 deg/h), 0.1 ms stamp jitter.
REAL_ROBOT_ERRORS: RealRobotErrors = {
    "encoder_resolution_rad": 2.0 * 3.141592653589793 / 2**16,
    "stance_slip_m": 0.002,
    "imu_vibration_accel_m_s2": 0.63,
    "imu_vibration_gyro_rad_s": 0.063,
    "imu_accel_bias_walk": 0.03,
    "imu_gyro_turn_on_bias_rad_s": 3.141592653589793 / 180.0,
    "jitter_s": 1.0e-4,
}

#: Hz, the IMU rate at which :data:`REAL_ROBOT_ERRORS` states the vibration's per-sample stddevs (the estimator's
#: noise floor densities at 1 kHz)
VIBRATION_RATE_HZ = 1000.0


def real_robot_errors(imu_rate_hz: float) -> RealRobotErrors:
    """:data:`REAL_ROBOT_ERRORS` for an IMU sampled at ``imu_rate_hz``: the vibration's per-sample stddevs times
    ``sqrt(imu_rate_hz / VIBRATION_RATE_HZ)``, the same density (the noise floor) at that rate; the rest unchanged."""
    errors = REAL_ROBOT_ERRORS.copy()
    k = math.sqrt(imu_rate_hz / VIBRATION_RATE_HZ)
    errors["imu_vibration_accel_m_s2"] = REAL_ROBOT_ERRORS["imu_vibration_accel_m_s2"] * k
    errors["imu_vibration_gyro_rad_s"] = REAL_ROBOT_ERRORS["imu_vibration_gyro_rad_s"] * k
    return errors


@dataclass(frozen=True)
class SimulationSettings:
    """Everything that defines a generated run (the same settings and seed give the same run).

    Attributes:
        robot: ``go1``, ``solo12`` or ``anymal_c``; or the biped ``talos`` (``stand`` and a straight ``walk`` on
            flat soles, :mod:`.biped`).
        gait: ``stand`` (standing still), ``stand_up`` (base rising from a crouch, feet fixed), ``trot`` or
            ``walk`` (4-beat, with turns).
        duration_s: length of the run (s).
        seed: seed of every random draw (IMU bias and noise, encoder noise, jitter).
        settle_s: standing still at the start before any motion (s), for static IMU initialisation.
        ramp_s: time over which speed and oscillations ramp up after ``settle_s`` (s).
        speed_m_s: forward speed (m/s) of trot and walk (None: the robot's default).
        yaw_rate_rad_s: constant turn rate added after the ramp (rad/s).
        turn_amplitude_rad: amplitude of the heading oscillation of ``walk`` (rad; 0 disables).
        turn_period_s: period of that oscillation (s).
        gait_period_s, duty_factor, step_height_m: gait timing and swing apex (None: robot defaults).
        body_height_amplitude_m: vertical bobbing amplitude (m, at twice the gait frequency).
        body_roll_amplitude_rad, body_pitch_amplitude_rad: roll and pitch oscillation amplitudes (rad).
        crouch_m: for ``stand_up``, how much lower the base starts (m).
        imu_rate_hz, joint_rate_hz: output rates (Hz).
        jitter_s: stamps are ``k / rate + U(-jitter, jitter)`` (s); must be below half a period.
        start_stamp_ns: stamp of t = 0 (ns; non-zero, since zero stamps are invalid in ROS).
        noise: add IMU noise (from the IMU spec) and encoder/torque noise.
        encoder_noise_rad: joint position noise stddev (rad), with ``noise``.
        joint_velocity_noise_rad_s: joint velocity noise stddev (rad/s), with ``noise``.
        torque_noise_nm: joint effort noise stddev (N m), with ``noise``.
        slip: an optional foot slip.
        encoder_resolution_rad: quantisation step of the joint positions (rad; 0 = none): the reading is
            ``step * round(q / step)`` (after ``encoder_noise_rad`` when ``noise``). Independent of ``noise``.
        stance_slip_m: stddev (m, per horizontal world axis) of a small random slip of every foot in every stance
            after ``settle_s`` (0 = none): the contact point moves by ``N(0, stance_slip_m^2)`` in x and y over
            the middle half of the stance (smoothstep), as a real foot creeps, scuffs or its rubber deforms. The
            ground truth keeps the feet where they are (``slipping`` marks those samples). Independent of ``noise``.
        imu_vibration_accel_m_s2: per-sample stddev (m/s^2) of white noise added to the accelerometer on top of
            the description's noise (foot impacts, motor and gearbox vibration, a flexible mount; 0 = none).
            Independent of ``noise``.
        imu_vibration_gyro_rad_s: the same for the gyroscope (rad/s).
        imu_accel_bias_walk: m/s^3/sqrt(Hz), density of a random walk of the accelerometer bias per axis, from 0 at
            the first sample on top of the description's turn-on bias (a MEMS accelerometer's offset shifts with the
            vibration a gait makes: rectification; 0 = none): between stamps ``dt`` apart the bias moves by
            ``N(0, q^2 dt)``. ``imu_accel_bias`` stays the turn-on bias. Independent of ``noise``.
        imu_gyro_turn_on_bias_rad_s: rad/s, stddev per axis of a constant gyroscope offset drawn once per run and
            added to the description's turn-on bias (a MEMS gyroscope's zero-rate offset at power-on, which
            gz-sensors' ``bias_stddev`` of a description may not hold; 0 = none). ``imu_gyro_bias`` is the sum.
            Independent of ``noise``.
        friction_coefficient: friction cone used to report violations.
        heading_rad: world heading of the IMU orientation reference (rad).
        foot_model: contact model of the feet: ``"sphere"`` (rolling spheres of the description's radii: the
            contact point, ``rho`` below the sphere centre = foot frame origin, is at rest in stance and the
            centre moves with ``omega_foot x (rho e_z)``), ``"point"`` (the foot frame origins rest in stance), or
            None (the default): ``"sphere"`` when the robot's description has foot spheres (Go1), else
            ``"point"``. The run's settings hold the resolved value; the description stored with a point-foot
            run has its foot spheres removed, so an estimator taking the radius from it models the same feet.
            ``"flat"``: soles holding position and orientation in stance (bipeds only, their only model).
        extra: free-form values kept with the settings in ``run.yaml`` (the generator reads none of them).
    """

    robot: str = "go1"
    gait: str = "trot"
    duration_s: float = 10.0
    seed: int = 0
    settle_s: float = 1.0
    ramp_s: float = 1.0
    speed_m_s: float | None = None
    yaw_rate_rad_s: float = 0.0
    turn_amplitude_rad: float = 0.6
    turn_period_s: float = 8.0
    gait_period_s: float | None = None
    duty_factor: float | None = None
    step_height_m: float | None = None
    body_height_amplitude_m: float = 0.005
    body_roll_amplitude_rad: float = 0.01
    body_pitch_amplitude_rad: float = 0.01
    crouch_m: float = 0.08
    imu_rate_hz: float = 1000.0
    joint_rate_hz: float = 1000.0
    jitter_s: float = 0.0
    start_stamp_ns: int = 1_700_000_000_000_000_000
    noise: bool = False
    encoder_noise_rad: float = 1e-4
    joint_velocity_noise_rad_s: float = 1e-2
    torque_noise_nm: float = 0.05
    slip: SlipEvent | None = None
    encoder_resolution_rad: float = 0.0
    stance_slip_m: float = 0.0
    imu_vibration_accel_m_s2: float = 0.0
    imu_vibration_gyro_rad_s: float = 0.0
    imu_accel_bias_walk: float = 0.0
    imu_gyro_turn_on_bias_rad_s: float = 0.0
    friction_coefficient: float = 0.8
    heading_rad: float = 0.0
    foot_model: str | None = None
    extra: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.gait not in GAITS:
            raise SimulationError(f"unknown gait {self.gait!r}; known: {list(GAITS)}")
        if self.duration_s <= 0:
            raise SimulationError(f"duration_s must be > 0, got {self.duration_s}")
        for name in ("imu_rate_hz", "joint_rate_hz"):
            if getattr(self, name) <= 0:
                raise SimulationError(f"{name} must be > 0, got {getattr(self, name)}")
        max_jitter = 0.5 / max(self.imu_rate_hz, self.joint_rate_hz)
        if not 0 <= self.jitter_s < max_jitter:
            raise SimulationError(f"jitter_s must be in [0, {max_jitter}) s (half a period), got {self.jitter_s}")
        for name in ("encoder_resolution_rad", "stance_slip_m", "imu_vibration_accel_m_s2", "imu_vibration_gyro_rad_s",
                     "imu_accel_bias_walk", "imu_gyro_turn_on_bias_rad_s"):  # fmt: skip
            value = getattr(self, name)
            if not (value >= 0.0 and value < float("inf")):
                raise SimulationError(f"{name} must be finite and >= 0, got {value!r}")
        if self.foot_model not in FOOT_MODELS:
            raise SimulationError(f"unknown foot_model {self.foot_model!r}; known: {list(FOOT_MODELS)}")
        if self.start_stamp_ns <= 0:
            raise SimulationError("start_stamp_ns must be > 0 (zero stamps are invalid)")
        if self.gait in ("stand", "stand_up"):
            moving = [n for n, v in (("yaw_rate_rad_s", self.yaw_rate_rad_s), ("speed_m_s", self.speed_m_s)) if v]
            if moving:  # the standing gaits keep the base's yaw and position: these would be recorded, not simulated
                raise SimulationError(f"gait {self.gait!r} does not move the base: {moving} apply to trot and walk")
        if self.duty_factor is not None and not 0.5 <= self.duty_factor < 1.0:
            raise SimulationError(f"duty_factor must be in [0.5, 1), got {self.duty_factor}")

    def to_dict(self) -> dict[str, object]:
        """Plain dict (for ``run.yaml``)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> SimulationSettings:
        """Inverse of :meth:`to_dict` (unknown keys raise :class:`SimulationError`). ``values`` is read from YAML
        (hence ``Any``): the constructor checks the values it validates, the YAML reader the rest.

        ``foot_radius_m: 0`` of runs written before ``foot_model`` existed (always point feet) reads as
        ``foot_model: point``.
        """
        values = dict(values)
        if "foot_radius_m" in values and "foot_model" not in values:
            if values.pop("foot_radius_m") not in (0, 0.0):
                raise SimulationError("foot_radius_m is obsolete (runs had point feet); use foot_model")
            values["foot_model"] = "point"
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise SimulationError(f"unknown simulation settings {unknown}")
        if isinstance(values.get("slip"), dict):
            slip = dict(values["slip"])
            if "displacement_m" in slip:
                slip["displacement_m"] = tuple(slip["displacement_m"])
            values["slip"] = SlipEvent(**slip)
        return cls(**values)
