"""Which IMU the estimator uses: the settings ``imu_name`` and ``declared_imu`` applied to a description.

:func:`apply_imu_settings` returns the description whose ``.imu`` is the IMU to use:

- ``declared_imu.link`` set: an IMU declared on that link or frame (``description.declared_imu``), named
  ``imu_name`` (or ``declared_imu``), replacing the description's IMUs if it has any. An explicit declaration
  wins over the description, as a user who writes one for a robot means it (the description's may be a
  datasheet noise, or on another board); event ``imu_declared_replaces`` (warn) names the IMUs it replaces.
- else ``imu_name`` set: that IMU of the description (``DescriptionError`` naming it, with a "did you mean"
  and the IMUs there are, when it has none of that name);
- else the description's only IMU (``DescriptionError`` listing them and how to choose when it has several).

The declared noise becomes SDFormat ``<noise type="gaussian">`` numbers, the inverse of the mapping the filter
applies to a description's noise (``ekf.imu_noise_from_spec``), so the filter reads the declared densities
back as given: per axis ``stddev = density * sqrt(rate)`` (per-sample white noise at the IMU rate
``declared_imu.update_rate_hz``, else ``ekf.nominal_imu_rate_hz``), ``bias_stddev`` = the bias instability (a
constant turn-on bias of that spread), and the bias random walk density as gz-sensors' Gauss-Markov
``dynamic_bias_stddev`` with a correlation time of :data:`RANDOM_WALK_CORRELATION_TIME_S` (a random walk for
any run: ``exp(-dt / tau)`` = 1 to 1e-9 over 1 s). A value left at 0 is "not given": the filter then uses its
``ekf.*`` setting for it, as for a description without noise, and event ``imu_noise_assumed`` (warn) names
what is assumed. How the filter turns these numbers into process noise is ``ekf.imu_noise_from_spec``'s
business, not this module's.

:func:`imu_settings_events` gives the events that describe the choice (keys ``imu_declared``,
``imu_noise_assumed``, ``imu_declared_replaces``); ``RobotStateEstimator.from_description`` queues them.
"""

from __future__ import annotations

import math
from typing import Any

from robot_state_estimator.common.samples import Event
from robot_state_estimator.description.declared_imu import declared_imu_spec
from robot_state_estimator.description.types import ImuSpec, NoiseSpec, NoiseType
from robot_state_estimator.estimation.settings import EstimatorSettings

#: s, correlation time of the Gauss-Markov bias that stands for a declared bias random walk.
RANDOM_WALK_CORRELATION_TIME_S = 1.0e9
#: Name of a declared IMU when ``imu_name`` is empty.
DEFAULT_DECLARED_NAME = "declared_imu"


def declared_rate_hz(settings: EstimatorSettings) -> float:
    """Hz, the rate that converts the declared densities to per-sample stddevs (``update_rate_hz`` or the
    filter's nominal IMU rate)."""
    rate = settings.declared_imu.update_rate_hz
    return rate if rate > 0.0 else settings.ekf.nominal_imu_rate_hz


def _noise(
    density: float, bias_std: float, random_walk: float, rate_hz: float
) -> tuple[NoiseSpec, NoiseSpec, NoiseSpec]:
    if density == 0.0 and bias_std == 0.0 and random_walk == 0.0:
        return (NoiseSpec(), NoiseSpec(), NoiseSpec())
    spec = NoiseSpec(
        type=NoiseType.GAUSSIAN,
        stddev=density * math.sqrt(rate_hz),
        bias_stddev=bias_std,
        dynamic_bias_stddev=random_walk,
        dynamic_bias_correlation_time=RANDOM_WALK_CORRELATION_TIME_S if random_walk > 0.0 else 0.0,
    )
    return (spec, spec, spec)


def declared_imu(desc: Any, settings: EstimatorSettings) -> ImuSpec:
    """The :class:`ImuSpec` of the IMU ``settings.declared_imu`` declares on ``desc`` (a ``RobotDescription``).

    Raises:
        DescriptionError: ``FRAME_ATTACHED_TO_INVALID`` when ``declared_imu.link`` is no link or frame of
            ``desc`` (the message names it, close names and the frames there are).
    """
    d = settings.declared_imu
    rate = declared_rate_hz(settings)
    return declared_imu_spec(
        desc,
        name=settings.imu_name or DEFAULT_DECLARED_NAME,
        frame=d.link,
        pose_xyz_rpy=d.pose,
        frame_id=d.frame_id,
        update_rate=d.update_rate_hz,
        angular_velocity_noise=_noise(
            d.gyro_noise_density_rad_s_sqrt_hz,
            d.gyro_bias_instability_rad_s,
            d.gyro_bias_random_walk_rad_s2_sqrt_hz,
            rate,
        ),
        linear_acceleration_noise=_noise(
            d.accel_noise_density_m_s2_sqrt_hz,
            d.accel_bias_instability_m_s2,
            d.accel_bias_random_walk_m_s3_sqrt_hz,
            rate,
        ),
    )


def apply_imu_settings(desc: Any, settings: EstimatorSettings) -> Any:
    """``desc`` with the IMU of ``settings`` chosen (module doc); idempotent.

    Args:
        desc: a ``RobotDescription`` (objects without ``with_imu``, hand-made stand-ins, are returned as they are).
        settings: the estimator settings (``imu_name``, ``declared_imu``).

    Returns:
        The description whose ``.imu`` is the IMU to use.

    Raises:
        DescriptionError: an unknown ``imu_name`` (``SENSOR_NOT_FOUND``), ``declared_imu.link`` naming no link
            or frame (``FRAME_ATTACHED_TO_INVALID``), a declared name taken by a description IMU
            (``DUPLICATE_NAME``).
    """
    if not hasattr(desc, "with_imu"):
        return desc
    if settings.declared_imu.declared:
        return desc.with_declared_imu(declared_imu(desc, settings))
    if settings.imu_name:
        return desc.with_imu(settings.imu_name)
    return desc


#: Declared noise key -> the filter setting assumed when it is not given.
_FALLBACKS = (
    ("gyro_noise_density_rad_s_sqrt_hz", "gyro_noise_density"),
    ("accel_noise_density_m_s2_sqrt_hz", "accel_noise_density"),
    ("gyro_bias_random_walk_rad_s2_sqrt_hz", "gyro_bias_random_walk"),
    ("accel_bias_random_walk_m_s3_sqrt_hz", "accel_bias_random_walk"),
)


def _assumed(settings: EstimatorSettings) -> list[str]:
    d, e = settings.declared_imu, settings.ekf
    return [
        f"declared_imu.{key} not given: ekf.{fallback} = {getattr(e, fallback):g} assumed"
        for key, fallback in _FALLBACKS
        if getattr(d, key) == 0.0
    ]


def imu_settings_events(desc: Any, settings: EstimatorSettings) -> list[Event]:
    """Events describing the IMU chosen by :func:`apply_imu_settings` (``desc`` is its result).

    Keys: ``imu_declared`` (info: the declared IMU's link, pose and noise), ``imu_noise_assumed`` (warn: a
    declared noise value not given, the filter setting assumed instead), ``imu_declared_replaces`` (warn: the
    description had IMUs, the declared one is used instead).
    """
    if not settings.declared_imu.declared or not hasattr(desc, "imus"):
        return []
    imu = desc.imu
    d = settings.declared_imu
    events = [
        Event(
            "imu_declared",
            f"IMU {imu.name!r} declared by settings on {d.link!r} (link {imu.link!r}), pose {list(d.pose)} "
            f"(m, rad) in it, frame_id {imu.frame_id!r}, rate {d.update_rate_hz:g} Hz",
            "info",
        )
    ]
    assumed = _assumed(settings)
    if assumed:
        events.append(
            Event(
                "imu_noise_assumed",
                f"IMU {imu.name!r} declared by settings: the noise is assumed, not known ({'; '.join(assumed)}): set "
                "the declared_imu.* noise from the IMU's datasheet",
                "warn",
            )
        )
    replaced = [i.name for i in desc.imus if i.source != "settings"]
    if replaced:
        events.append(
            Event(
                "imu_declared_replaces",
                f"the IMU declared by settings ({imu.name!r} on {d.link!r}) replaces the description's {replaced}: "
                "leave declared_imu.link empty to use the description's",
                "warn",
            )
        )
    return events
