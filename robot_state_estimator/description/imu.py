"""``<sensor type="imu">`` -> the IMU fields of :class:`~.types.ImuSpec` (everything but link and pose).

Source: SDFormat spec ``imu.sdf`` and ``noise.sdf`` (1.6-1.11), ``sensor.sdf`` (``update_rate``),
libsdformat ``src/Imu.cc`` and ``src/Noise.cc`` (defaults), and ``sdf/1.6/1_5.convert`` (SDF 1.5's single
``<imu><noise>`` with ``<rate>`` and ``<accel>`` blocks: its ``<type>`` goes to the ``type`` attribute of
all six axis noises, ``<rate>`` mean/stddev/bias_mean/bias_stddev to each ``angular_velocity`` axis and
``<accel>`` ones to each ``linear_acceleration`` axis).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import ErrorCode, ProblemList, Where, warn
from .pose import PoseTextError, parse_bool, parse_sdf_double, parse_vector3, shown
from .types import ImuSpec, Localization, NoiseSpec, NoiseType

if TYPE_CHECKING:
    import pinocchio as pin

NOISE_FIELDS = (
    "mean",
    "stddev",
    "bias_mean",
    "bias_stddev",
    "dynamic_bias_stddev",
    "dynamic_bias_correlation_time",
    "precision",
)
LEGACY_NOISE_FIELDS = ("mean", "stddev", "bias_mean", "bias_stddev")


def local_tag(elem: ET.Element) -> str:
    """Tag without a ``{namespace}`` prefix."""
    return elem.tag.rsplit("}", 1)[-1]


def is_imu_sensor(elem: ET.Element) -> bool:
    """Whether ``elem`` is an IMU sensor: ``<sensor type="imu">`` (any case of ``imu``) or the old
    ``<sensor:imu>`` form (namespaced tag ``imu`` of a ``...#sensor`` namespace)."""
    if elem.tag == "sensor":
        return (elem.get("type") or "").strip().lower() == "imu"
    return elem.tag.startswith("{") and elem.tag.split("}", 1)[0].endswith("sensor") and local_tag(elem) == "imu"


@dataclass(frozen=True)
class ImuFields:
    """IMU fields read from a ``<sensor>`` (see ``ImuSpec`` for meanings and units)."""

    update_rate: float
    frame_id: str | None
    localization: Localization
    custom_rpy: tuple[float, float, float]
    custom_rpy_parent_frame: str
    grav_dir_x: tuple[float, float, float]
    grav_dir_x_parent_frame: str
    has_orientation_reference_frame: bool
    orientation_enabled: bool
    angular_velocity_noise: tuple[NoiseSpec, NoiseSpec, NoiseSpec]
    linear_acceleration_noise: tuple[NoiseSpec, NoiseSpec, NoiseSpec]

    def imu_spec(
        self,
        *,
        name: str,
        link: str,
        frame_id: str,
        gz_frame_id: str,
        pose_in_link: pin.SE3,
        pose_in_base: pin.SE3,
        accepted_frame_ids: tuple[str, ...],
    ) -> ImuSpec:
        """The :class:`ImuSpec` with these fields and the given names and poses (``frame_id`` given, since the
        loader falls back to a default when ``self.frame_id`` is None)."""
        return ImuSpec(
            name=name,
            link=link,
            frame_id=frame_id,
            gz_frame_id=gz_frame_id,
            pose_in_link=pose_in_link,
            pose_in_base=pose_in_base,
            accepted_frame_ids=accepted_frame_ids,
            update_rate=self.update_rate,
            localization=self.localization,
            custom_rpy=self.custom_rpy,
            custom_rpy_parent_frame=self.custom_rpy_parent_frame,
            grav_dir_x=self.grav_dir_x,
            grav_dir_x_parent_frame=self.grav_dir_x_parent_frame,
            has_orientation_reference_frame=self.has_orientation_reference_frame,
            orientation_enabled=self.orientation_enabled,
            angular_velocity_noise=self.angular_velocity_noise,
            linear_acceleration_noise=self.linear_acceleration_noise,
        )


def _warn(message: str, where: Where) -> None:
    """A :class:`~.errors.DescriptionWarning` with the sensor and its file/line appended."""
    loc = [f"sensor {where.get('name')!r}"] if where.get("name") else []
    if where.get("file"):
        loc.append(f"{where['file']}:{where.get('line')}")
    elif where.get("line") is not None:
        loc.append(f"line {where['line']}")
    warn(f"{message} ({', '.join(loc)})" if loc else message)


def _float(elem: ET.Element | None, default: float, what: str, problems: ProblemList, where: Where) -> float:
    """The number in ``elem``'s text (``default`` when absent or empty); a problem when it is not one finite
    number (:func:`~.pose.parse_sdf_double`)."""
    if elem is None or elem.text is None or not elem.text.strip():
        return default
    try:
        return parse_sdf_double(elem.text, what=what)
    except PoseTextError as exc:
        problems.add(ErrorCode.ELEMENT_INVALID, str(exc), **where)
        return default


#: Fields of ``noise.sdf`` with ``min="0.0"``: libsdformat refuses a negative value (``PARAMETER_ERROR``).
NONNEGATIVE_NOISE_FIELDS = ("stddev", "bias_stddev", "dynamic_bias_stddev")


def _check_nonnegative(values: dict[str, float], what: str, problems: ProblemList, where: Where) -> None:
    for f in NONNEGATIVE_NOISE_FIELDS:
        if f in values and values[f] < 0.0:
            problems.add(
                ErrorCode.PARAMETER_ERROR,
                f"{what} <{f}> is {values[f]!r}: it must be >= 0 (noise.sdf min 0.0; libsdformat refuses it)",
                **where,
            )


def parse_noise(elem: ET.Element | None, problems: ProblemList, where: Where, *, what: str = "noise") -> NoiseSpec:
    """``<noise type="...">`` -> NoiseSpec (spec defaults: type none, every number 0).

    As libsdformat: the ``type`` attribute is required (``ATTRIBUTE_MISSING`` when absent, e.g. a
    ``<type>`` child element written the SDF 1.5 way), read case-insensitively (an unknown type is
    ``ELEMENT_INVALID``); ``stddev``, ``bias_stddev`` and ``dynamic_bias_stddev`` must be >= 0
    (``PARAMETER_ERROR``). ``what`` names the noise in messages (``angular_velocity x noise``).
    """
    if elem is None:
        return NoiseSpec()
    type_attr = elem.get("type")
    if type_attr is None:
        hint = ""
        child = elem.find("type")
        if child is not None and child.text and child.text.strip():
            hint = f' (found a <type>{child.text.strip()}</type> element: write <noise type="{child.text.strip()}">)'
        problems.add(
            ErrorCode.ATTRIBUTE_MISSING,
            f"{what}: <noise> needs its type attribute (none, gaussian, gaussian_quantized){hint}",
            **where,
        )
    type_text = (type_attr or "none").strip().lower()
    try:
        ntype = NoiseType(type_text)
    except ValueError:
        problems.add(
            ErrorCode.ELEMENT_INVALID,
            f"{what}: type {shown(type_text)} is not one of none, gaussian, gaussian_quantized",
            **where,
        )
        ntype = NoiseType.NONE
    values = {f: _float(elem.find(f), 0.0, f"{what} {f}", problems, where) for f in NOISE_FIELDS}
    _check_nonnegative(values, what, problems, where)
    return NoiseSpec(type=ntype, **values)


def _axes(parent: ET.Element | None, problems: ProblemList, where: Where) -> tuple[NoiseSpec, NoiseSpec, NoiseSpec]:
    if parent is None:
        return (NoiseSpec(), NoiseSpec(), NoiseSpec())
    out = []
    for axis in ("x", "y", "z"):
        a = parent.find(axis)
        what = f"{local_tag(parent)} {axis} noise"
        out.append(parse_noise(None if a is None else a.find("noise"), problems, where, what=what))
    return (out[0], out[1], out[2])


def _legacy_axes(
    noise: ET.Element, block: str, problems: ProblemList, where: Where
) -> tuple[NoiseSpec, NoiseSpec, NoiseSpec]:
    type_elem = noise.find("type")
    type_text = (type_elem.text if type_elem is not None and type_elem.text else "none").strip().lower()
    try:
        ntype = NoiseType(type_text)
    except ValueError:
        problems.add(ErrorCode.ELEMENT_INVALID, f"legacy imu noise type {shown(type_text)} unknown", **where)
        ntype = NoiseType.NONE
    sub = noise.find(block)
    values = {
        f: _float(None if sub is None else sub.find(f), 0.0, f"noise {block} {f}", problems, where)
        for f in LEGACY_NOISE_FIELDS
    }
    _check_nonnegative(values, f"imu noise {block}", problems, where)
    spec = NoiseSpec(type=ntype, **values)
    return (spec, spec, spec)


@dataclass(frozen=True)
class _OrientationReference:
    """``//imu/orientation_reference_frame`` as read (spec defaults for what is absent; see :class:`ImuFields`)."""

    localization: Localization = Localization.CUSTOM
    custom_rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    custom_rpy_parent_frame: str = ""
    grav_dir_x: tuple[float, float, float] = (1.0, 0.0, 0.0)
    grav_dir_x_parent_frame: str = ""


def _sensor_frame_id(sensor: ET.Element, where: Where) -> str | None:
    """The frame id ``sensor`` names: ``<gz_frame_id>``, ``<frame_id>`` or ``<ignition_frame_id>``, else the
    ``<frame_name>`` (or ``<frameName>``) of the last plugin that has one; None when none does. Plugins that name
    different frames are warned about (each Gazebo Classic plugin publishes with its own frame: which topic the
    node reads decides which frame is right)."""
    for tag in ("gz_frame_id", "frame_id", "ignition_frame_id"):
        e = sensor.find(tag)
        if e is not None and e.text and e.text.strip():
            return e.text.strip()
    named: list[str] = []
    for plugin in sensor.findall("plugin"):
        for tag in ("frame_name", "frameName"):
            e = plugin.find(tag)
            if e is not None and e.text and e.text.strip():
                named.append(e.text.strip())
                break
    if len(set(named)) > 1:
        _warn(
            f"the sensor's plugins name different frames {named}: the last, {named[-1]!r}, is taken as the IMU "
            "messages' frame_id; set <frame_id> on the sensor (or keep one plugin) to choose",
            where,
        )
    return named[-1] if named else None


def _localization(loc: ET.Element | None, problems: ProblemList, where: Where) -> Localization:
    """``<localization>`` (upper case; other cases warned, read in upper case); CUSTOM when absent or unknown
    (the problem added)."""
    if loc is None or not loc.text or not loc.text.strip():
        return Localization.CUSTOM
    text = loc.text.strip()
    if text.upper() in Localization.__members__ and text not in Localization.__members__:
        _warn(
            f"localization {text!r} is read as {text.upper()!r} here, but gz-sensors "
            "compares it exactly and reports the orientation relative to the sensor's initial orientation "
            "for anything else: write it in upper case",
            where,
        )
    try:
        return Localization(loc.text.strip().upper())
    except ValueError:
        problems.add(
            ErrorCode.ELEMENT_INVALID,
            f"localization {shown(loc.text.strip())} is not one of {[m.value for m in Localization]}",
            **where,
        )
        return Localization.CUSTOM


def _orientation_reference(orf: ET.Element, problems: ProblemList, where: Where) -> _OrientationReference:
    """The localization, ``custom_rpy`` (rad) and ``grav_dir_x`` with their ``parent_frame`` attributes of an
    ``<orientation_reference_frame>``; an unreadable vector keeps its default (the problem added)."""
    localization = _localization(orf.find("localization"), problems, where)
    custom_rpy, custom_parent = (0.0, 0.0, 0.0), ""
    grav, grav_parent = (1.0, 0.0, 0.0), ""
    for tag in ("custom_rpy", "grav_dir_x"):
        e = orf.find(tag)
        if e is None:
            continue
        try:
            x, y, z = parse_vector3(e.text, what=tag, default=(0.0, 0.0, 0.0))
        except PoseTextError as exc:
            problems.add(ErrorCode.ELEMENT_INVALID, str(exc), **where)
            continue
        vec = (float(x), float(y), float(z))
        if tag == "custom_rpy":
            custom_rpy, custom_parent = vec, e.get("parent_frame", "")
        else:
            grav, grav_parent = vec, e.get("parent_frame", "")
    return _OrientationReference(localization, custom_rpy, custom_parent, grav, grav_parent)


def _orientation_enabled(imu: ET.Element | None, problems: ProblemList, where: Where) -> bool:
    """``//imu/enable_orientation`` (true when absent or unreadable, the problem added)."""
    eo = None if imu is None else imu.find("enable_orientation")
    if eo is not None:
        try:
            return parse_bool(eo.text, default=True, what="enable_orientation")
        except PoseTextError as exc:
            problems.add(ErrorCode.ELEMENT_INVALID, str(exc), **where)
    return True


def _imu_noise(
    imu: ET.Element | None, problems: ProblemList, where: Where, *, legacy_noise: bool
) -> tuple[tuple[NoiseSpec, NoiseSpec, NoiseSpec], tuple[NoiseSpec, NoiseSpec, NoiseSpec]]:
    """The gyroscope (rad/s) and accelerometer (m/s^2) noise of the x, y, z axes: per axis, or with
    ``legacy_noise`` a 1.5 ``<imu><noise>`` block (when there is no per-axis noise) for all three."""
    av = None if imu is None else imu.find("angular_velocity")
    la = None if imu is None else imu.find("linear_acceleration")
    legacy = None if imu is None else imu.find("noise")
    if legacy_noise and legacy is not None and av is None and la is None:
        return _legacy_axes(legacy, "rate", problems, where), _legacy_axes(legacy, "accel", problems, where)
    return _axes(av, problems, where), _axes(la, problems, where)


def parse_imu_fields(sensor: ET.Element, problems: ProblemList, where: Where, *, legacy_noise: bool) -> ImuFields:
    """Read the IMU fields of ``sensor``.

    Args:
        sensor: the ``<sensor>`` element.
        problems: collects problems (bad numbers, unknown noise type or localization).
        where: location keywords for problems (element, name, line, file).
        legacy_noise: apply an ``<imu><noise>`` block the way SDF 1.5 -> 1.6 conversion does (used for
            SDF < 1.6, and for URDF ``<gazebo>`` blocks when there is no per-axis noise).

    Returns:
        The fields; spec defaults for whatever is absent (update_rate 0 Hz, CUSTOM, custom_rpy 0,
        grav_dir_x (1, 0, 0), enable_orientation true, no noise).
    """
    imu = sensor.find("imu")
    if imu is None and local_tag(sensor) == "imu" and sensor.tag != "sensor":
        imu = sensor  # <sensor:imu> keeps its settings inline
    if sensor.tag == "sensor" and (sensor.get("type") or "").strip() != "imu":
        _warn(
            f'sensor type {sensor.get("type")!r} is read as "imu" here, but libsdformat compares it exactly '
            '(an invalid sensor type there, so Gazebo has no such IMU): write type="imu"',
            where,
        )
    update_rate = _float(sensor.find("update_rate"), 0.0, "update_rate", problems, where)
    frame_id = _sensor_frame_id(sensor, where)
    orf = None if imu is None else imu.find("orientation_reference_frame")
    ref = _OrientationReference() if orf is None else _orientation_reference(orf, problems, where)
    enabled = _orientation_enabled(imu, problems, where)
    gyro, accel = _imu_noise(imu, problems, where, legacy_noise=legacy_noise)
    return ImuFields(
        update_rate=update_rate,
        frame_id=frame_id,
        localization=ref.localization,
        custom_rpy=ref.custom_rpy,
        custom_rpy_parent_frame=ref.custom_rpy_parent_frame,
        grav_dir_x=ref.grav_dir_x,
        grav_dir_x_parent_frame=ref.grav_dir_x_parent_frame,
        has_orientation_reference_frame=orf is not None,
        orientation_enabled=enabled,
        angular_velocity_noise=gyro,
        linear_acceleration_noise=accel,
    )


def default_frame_id(sensor_name: str) -> str:
    """``ImuSpec.frame_id`` when the sensor names none: the (scoped) sensor name with ``::`` -> ``/``."""
    return sensor_name.replace("::", "/")


def gz_frame_id(sensor: ET.Element, model_name: str, host: str) -> str:
    """The ``header.frame_id`` gz-sim + ``ros_gz_bridge`` give this sensor's messages.

    gz-sensors uses ``<gz_frame_id>`` (``<ignition_frame_id>`` in Fortress) when given, else the sensor
    name, which gz-sim sets to the entity's scoped name without the world (``model::link::sensor``,
    ``removeParentScope(scopedName(...))`` in its sensor systems); ``ros_gz_bridge`` replaces ``::`` by ``/``
    (``frame_id_gz_to_ros``).

    Args:
        sensor: the ``<sensor>`` element.
        model_name: the top model's name.
        host: scoped name of the link (after URDF lumping) or joint holding the sensor.
    """
    for tag in ("gz_frame_id", "ignition_frame_id"):
        e = sensor.find(tag)
        if e is not None and e.text and e.text.strip():
            return e.text.strip().replace("::", "/")
    name = (sensor.get("name") or "").strip()
    return "::".join(p for p in (model_name, host, name) if p).replace("::", "/")
