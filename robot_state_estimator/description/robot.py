"""``RobotDescription``: what the rest of the estimator needs from a robot description."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pinocchio as pin

from .errors import DescriptionError, ErrorCode, Problem
from .feet import FootFrameChoice, foot_frame_choice
from .frame_graph import MODEL_FRAME, FrameGraph
from .types import CollisionSpheres, ImuSpec

#: How a user chooses one of several IMUs (the node parameter, the CLI option, the settings key): in messages.
CHOOSE_HOW = (
    "the node parameter imu_name (-p imu_name:=NAME), the option --imu NAME (replay, simulate, info) or the "
    "settings key imu_name"
)
#: How a user declares an IMU the description lacks: in messages.
DECLARE_HOW = (
    "the settings declared_imu.link (the link or frame it sits on), declared_imu.pose and the declared_imu.* "
    'noise (robot-state-estimator info DESCRIPTION --write-config FILE writes them; README.md, "Add your robot")'
)


def imu_list_text(imus: Sequence[ImuSpec]) -> str:
    """``'imu' (link 'base', frame_id 'imu_link'), ...``: the IMUs by name, link and header frame_id."""
    return ", ".join(f"{i.name!r} (link {i.link!r}, frame_id {i.frame_id!r})" for i in imus)


@dataclass
class RobotDescription:
    """A loaded robot description.

    Attributes:
        name: model / robot name.
        format: ``"sdf"`` or ``"urdf"``.
        xml: the XML text after xacro expansion.
        model: pinocchio model; ``q = [p_world_base (3), quat_world_base xyzw (4), joints]`` with the free-flyer
            ``root_joint`` at ``base_link``; every link (also fixed ones) and joint is a frame of it.
        base_link: name of the floating-base link B.
        imus: IMU sensors found, in document order.
        graph: the frames of the description (see ``frame_graph``), for ``resolve_pose``/``frame_body``.
        imu_choice: name of the IMU :attr:`imu` returns ("" = the single one); set by :meth:`with_imu` and
            :meth:`with_declared_imu` (the estimator applies its ``imu_name`` / ``declared_imu`` settings so:
            ``estimation.imu_setup``).
    """

    name: str
    format: str
    xml: str
    model: pin.Model
    base_link: str
    imus: list[ImuSpec] = field(default_factory=list)
    graph: FrameGraph = field(default_factory=FrameGraph, repr=False)
    imu_choice: str = ""
    #: The collision spheres of ``xml`` (``collision.collision_spheres``), read by the first :meth:`foot_radius`.
    _collision_spheres: CollisionSpheres | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def joint_names(self) -> list[str]:
        """Actuated joints in pinocchio order (``model.names`` without ``universe`` and ``root_joint``)."""
        return [n for n in list(self.model.names)[1:] if n != "root_joint"]

    @property
    def imu(self) -> ImuSpec:
        """The IMU the estimator uses: the one chosen by :meth:`with_imu` / :meth:`with_declared_imu`, else the
        single IMU of the description.

        Raises:
            DescriptionError: ``SENSOR_NOT_FOUND`` when there is none (the message says how to declare one by
                settings), ``ELEMENT_INVALID`` listing the candidates (name, link, frame_id) and how to choose
                when there are several.
        """
        if self.imu_choice:
            return self.imu_by_name(self.imu_choice)
        if len(self.imus) == 1:
            return self.imus[0]
        if not self.imus:
            raise DescriptionError(
                Problem(
                    ErrorCode.SENSOR_NOT_FOUND,
                    f'robot {self.name!r} has no IMU sensor (<sensor type="imu">): declare one with '
                    f'{DECLARE_HOW}; or add one to the IMU link (SDFormat), or a <gazebo reference="LINK"> block '
                    "holding one (URDF), as the bundled config/robots/*.urdf.xacro do",
                )
            )
        raise DescriptionError(
            Problem(
                ErrorCode.ELEMENT_INVALID,
                f"robot {self.name!r} has {len(self.imus)} IMUs: {imu_list_text(self.imus)}; choose one with "
                f"{CHOOSE_HOW}",
            )
        )

    def imu_by_name(self, name: str) -> ImuSpec:
        """The IMU called ``name`` (``ImuSpec.name``).

        Raises:
            DescriptionError: ``SENSOR_NOT_FOUND`` naming ``name``, with the closest names ("did you mean") and
                the IMUs there are.
        """
        for i in self.imus:
            if i.name == name:
                return i
        close = difflib.get_close_matches(name, [i.name for i in self.imus], n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        known = f"its IMUs: {imu_list_text(self.imus)}" if self.imus else f"it has none (declare one: {DECLARE_HOW})"
        message = f"robot {self.name!r} has no IMU {name!r}{hint}; {known}"
        raise DescriptionError(Problem(ErrorCode.SENSOR_NOT_FOUND, message))

    def with_imu(self, name: str) -> RobotDescription:
        """This description with the IMU ``name`` chosen (:attr:`imu` returns it; ``imus`` are unchanged).

        Raises:
            DescriptionError: as :meth:`imu_by_name`.
        """
        self.imu_by_name(name)
        return dataclasses.replace(self, imu_choice=name)

    def with_declared_imu(self, spec: ImuSpec) -> RobotDescription:
        """This description with ``spec`` (an IMU declared by settings, ``description.declared_imu``) appended
        to ``imus`` and chosen; it replaces a previously declared IMU (``source == "settings"``), so applying
        the same declaration twice gives the same description. The description's own IMUs stay in ``imus``.
        """
        kept = [i for i in self.imus if i.source != "settings"]
        clash = [i for i in kept if i.name == spec.name]
        if clash:
            raise DescriptionError(
                Problem(
                    ErrorCode.DUPLICATE_NAME,
                    f"the declared IMU is called {spec.name!r}, as an IMU of the description (on {clash[0].link!r}): "
                    "give the declared IMU another name (imu_name)",
                )
            )
        return dataclasses.replace(self, imus=[*kept, spec], imu_choice=spec.name)

    def imu_frame_mismatch(self, frame_id: str, imu: ImuSpec | None = None) -> str:
        """Why ``frame_id`` is not accepted as ``imu``'s frame (default: the single IMU) when it names a link or
        ``<frame>`` of the description: S's rotation and offset in it, or that it is on another body; "" when
        it names no such frame (or denotes S). See ``description.imu_frames``.

        Raises:
            DescriptionError: as :attr:`imu` when ``imu`` is None and there is not exactly one IMU.
        """
        from .imu_frames import imu_frame_mismatch

        imu = self.imu if imu is None else imu
        if imu.link not in self.graph:
            return ""
        return imu_frame_mismatch(self.graph, self.model, imu.link, imu.pose_in_link, frame_id, imu.name)

    def base_frame_mismatch(self, frame: str) -> str:
        """Why ``frame`` cannot name the floating base B when it is a link or ``<frame>`` of the description
        that does not coincide with :attr:`base_link` (B's offset and rotation in it, or that it moves relative
        to B); "" when it coincides with B, or names no frame of the description (``base_link`` for a base
        link called ``trunk``: a name the odometry and the TF may give B, as REP-105 names it).

        The node and replay refuse such an output frame (``base_frame``, ``tf_child_frame``): the odometry
        would label B's pose and twist with the name of another frame of the robot's TF tree.
        """
        from .imu_frames import frame_mismatch

        if self.base_link not in self.graph:
            return ""
        what = f"the base link {self.base_link!r}"
        return frame_mismatch(
            self.graph, self.model, self.base_link, pin.SE3.Identity(), frame, what, "the base link", "the base link"
        )

    def resolve_pose(self, frame: str, relative_to: str = MODEL_FRAME) -> pin.SE3:
        """``X_relative_to_frame`` (m, SE3) at the zero configuration, with libsdformat's semantics.

        Args:
            frame: any frame of the description: ``__model__``, a link, a joint, a ``<frame>``, a nested
                model, scoped with ``::``.
            relative_to: the frame to express it in.

        Raises:
            DescriptionError: ``POSE_RELATIVE_TO_INVALID`` naming a frame that does not exist.
        """
        return self.graph.resolve_pose(frame, relative_to)

    def frame_body(self, frame: str) -> str:
        """The link ``frame`` is attached to (moves with).

        Raises:
            DescriptionError: ``FRAME_ATTACHED_TO_INVALID`` for an unknown frame.
        """
        return self.graph.frame_body(frame)

    def foot_radius(self, foot: str) -> float:
        """Radius (m) of the foot's spherical ``<collision>`` centred at the foot frame origin; 0.0 when none.

        Looked up on the links rigidly attached to the foot frame (see ``description.collision``); a sphere
        whose centre is not the foot frame origin, or a mesh, gives 0.0 (point foot).

        Raises:
            KeyError: ``foot`` is not a frame of ``model``.
        """
        from .collision import foot_radius

        return foot_radius(self, foot)

    def foot_frames(self, names: Iterable[str] | None = None) -> tuple[str, ...]:
        """Contact frames (pinocchio frame names of ``model``).

        Args:
            names: frames to use; each must be a frame of ``model``. None = detect (:meth:`foot_frame_choice`):
                BODY or OP frames whose names end in foot/sole/toe (any case, a ``_link``/``_frame`` suffix
                dropped) on joints with no child joint (leaves of the kinematic tree), one per rigid body, in
                pinocchio frame order.

        Raises:
            DescriptionError: ``ELEMENT_MISSING`` for given names that are not frames, or when detection
                finds nothing (pass the names explicitly).
        """
        model = self.model
        if names is not None:
            names = tuple(names)
            missing = [n for n in names if not model.existFrame(n)]
            if missing:
                raise DescriptionError(
                    Problem(ErrorCode.ELEMENT_MISSING, f"foot frames {missing} are not frames of the model")
                )
            return names
        return self.foot_frame_choice().frames

    def foot_frame_choice(self) -> FootFrameChoice:
        """Detect the feet: one contact frame per rigid body (``description.feet.foot_frame_choice``).

        Returns:
            :class:`FootFrameChoice`: the frames (pinocchio frame order) and, per kept frame, the dropped ones.

        Raises:
            DescriptionError: ``ELEMENT_MISSING`` when detection finds nothing (pass the names explicitly).
        """
        return foot_frame_choice(self.model, self.name)
