"""What the adapter (``io.stream.EstimatorStream``) uses of the core, the description and the settings, as
:class:`typing.Protocol` classes: ``io`` imports neither ``estimation`` nor ``description`` (the simulator writes bags
through ``io`` and must not reach the estimator), so the stream is typed by these views of them.
``estimation.RobotStateEstimator``, ``description.RobotDescription`` and ``estimation.settings.EstimatorSettings``
meet them (mypy checks it where the node and replay make their stream); test stand-ins need only these members.

Optional members the stream reads with ``getattr`` (a stand-in may lack them) are not part of the protocols: the
estimator's ``imu`` (the IMU its settings chose), ``contact_source`` and ``forces_estimated``; the IMU's
``accepted_frame_ids`` and ``gz_frame_id``; the description's ``imu_frame_mismatch``; the settings'
``ignore_unknown_joints``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    Estimate,
    Event,
    FootForceSample,
    FootWrenchSample,
    ImuSample,
    JointSample,
)


class EstimatorCore(Protocol):
    """The estimator the stream feeds (``estimation.RobotStateEstimator``)."""

    def add_imu(self, sample: ImuSample) -> Estimate | None: ...
    def add_joints(self, sample: JointSample) -> Estimate | None: ...
    def add_foot_forces(self, sample: FootForceSample) -> object: ...
    def add_foot_wrench(self, sample: FootWrenchSample) -> object: ...
    def add_contact_schedule(self, sample: ContactScheduleSample) -> object: ...
    def pop_events(self) -> list[Event]: ...
    def reset(self, reason: str = ...) -> None: ...


class ImuFrames(Protocol):
    """The IMU of a description (``description.types.ImuSpec``): its frame and link names."""

    @property
    def frame_id(self) -> str: ...
    @property
    def link(self) -> str: ...


class RobotModel(Protocol):
    """The description the stream checks joint names and IMU frames against (``description.RobotDescription``)."""

    @property
    def joint_names(self) -> Sequence[str]: ...
    @property
    def imu(self) -> ImuFrames: ...


class ContactSourceSetting(Protocol):
    """``estimation.settings.ContactSettings``' source (``auto``, ``torque``, ...)."""

    @property
    def source(self) -> str: ...


class StreamSettings(Protocol):
    """The estimator settings the stream reads (``estimation.settings.EstimatorSettings``)."""

    @property
    def out_of_order_tolerance_s(self) -> float: ...
    @property
    def contact(self) -> ContactSourceSetting: ...


__all__ = ["ContactSourceSetting", "EstimatorCore", "ImuFrames", "RobotModel", "StreamSettings"]
