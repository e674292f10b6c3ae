"""A model's frames: pose (``relative_to``) and attachment (``attached_to``) graphs, and their queries.

Both SDFormat and URDF descriptions are turned into one :class:`FrameGraph` whose vertices are the
implicit and explicit frames of libsdformat's frame semantics (``__model__``, links, joints, ``<frame>``s,
nested model frames; names scoped with ``::``). Each vertex has one pose edge (the frame its raw pose is
relative to) and one attachment edge (what it moves with).

Source: libsdformat ``src/FrameSemantics.cc`` (``resolvePoseRelativeToRoot``, ``resolveFrameAttachedToBody``),
the SDFormat "pose frame semantics" proposal (sdformat.org, 1.7/1.8) and CONVENTIONS.md. Poses are those of
the zero configuration (joint positions 0), which is what a description's poses describe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pinocchio as pin

from .errors import DescriptionError, ErrorCode, Problem, Where

MODEL_FRAME = "__model__"


def _chain_text(names: list[str], keep: int = 5) -> str:
    """``a -> b -> c``, with the middle of a long chain left out (a cycle can run through thousands of frames)."""
    if len(names) <= 2 * keep + 1:
        return " -> ".join(names)
    return " -> ".join([*names[:keep], f"... ({len(names) - 2 * keep} more)", *names[-keep:]])


@dataclass
class FrameNode:
    """One vertex.

    Attributes:
        name: scoped name (``link``, ``nested::link``; the top model frame is ``__model__`` and a nested
            model's frame is its scoped name).
        kind: ``model``, ``link``, ``joint`` or ``frame``.
        relative_to: scoped name of the frame ``raw_pose`` is expressed in (None only for ``__model__``).
        raw_pose: ``X_relative_to_self`` as written (or, for a nested model with a placement frame, the
            pose of that placement frame: see ``placement``).
        attached_to: scoped name of what this frame moves with (links: None = themselves; joints: their
            child; frames: their ``attached_to``; models: their canonical link).
        placement: scoped name of a nested model's placement frame ("" when none).
        element: XML tag it came from; line: its line (for errors).
    """

    name: str
    kind: str
    relative_to: str | None
    raw_pose: pin.SE3
    attached_to: str | None = None
    placement: str = ""
    element: str = ""
    line: int | None = None


@dataclass
class FrameGraph:
    """Frames of one model (see module docstring). Build it, then call :meth:`validate`."""

    nodes: dict[str, FrameNode] = field(default_factory=dict)
    file: str | None = None
    _pose_cache: dict[str, pin.SE3] = field(default_factory=dict, repr=False)

    def add(self, node: FrameNode) -> None:
        """Add a vertex (the caller checks duplicate names)."""
        self.nodes[node.name] = node
        self._pose_cache.clear()

    def __contains__(self, name: object) -> bool:
        return name in self.nodes

    def _where(self, node: FrameNode) -> Where:
        return {"element": node.element, "name": node.name, "line": node.line, "file": self.file}

    # ---------------------------------------------------------------- validation
    def validate(self) -> list[Problem]:
        """Check every edge; returns the problems (invalid names, cycles) instead of raising."""
        problems: list[Problem] = []
        for node in self.nodes.values():
            default_rel = node.relative_to == node.attached_to  # reported as an attached_to problem
            if node.relative_to is not None and node.relative_to not in self.nodes and not default_rel:
                problems.append(
                    Problem(
                        ErrorCode.POSE_RELATIVE_TO_INVALID,
                        f"{node.kind} {node.name!r}: relative_to frame {node.relative_to!r} does not exist",
                        **self._where(node),
                    )
                )
            if node.placement and node.placement not in self.nodes:
                problems.append(
                    Problem(
                        ErrorCode.MODEL_PLACEMENT_FRAME_INVALID,
                        f"model {node.name!r}: placement_frame {node.placement!r} does not exist",
                        **self._where(node),
                    )
                )
            if node.attached_to is not None and node.attached_to not in self.nodes:
                code = {
                    "joint": ErrorCode.JOINT_CHILD_LINK_INVALID,
                    "model": ErrorCode.MODEL_CANONICAL_LINK_INVALID,
                }.get(node.kind, ErrorCode.FRAME_ATTACHED_TO_INVALID)
                problems.append(
                    Problem(
                        code,
                        f"{node.kind} {node.name!r}: attached_to {node.attached_to!r} does not exist",
                        **self._where(node),
                    )
                )
        if problems:
            return problems
        for node in self.nodes.values():
            try:
                self.frame_body(node.name)
            except DescriptionError as exc:
                problems.extend(p for p in exc.problems if p not in problems)
        for node in self.nodes.values():
            try:
                self.pose_in_root(node.name)
            except DescriptionError as exc:
                problems.extend(p for p in exc.problems if p not in problems)
        return problems

    # ---------------------------------------------------------------- attached_to
    def frame_body(self, name: str) -> str:
        """The link ``name`` is attached to (libsdformat ``resolveFrameAttachedToBody``).

        Raises:
            DescriptionError: ``FRAME_ATTACHED_TO_INVALID`` (unknown name), ``FRAME_ATTACHED_TO_CYCLE``.
        """
        self._require(name, ErrorCode.FRAME_ATTACHED_TO_INVALID)
        seen: list[str] = []
        cur = name
        while True:
            node = self.nodes[cur]
            if node.kind == "link":
                return cur
            if cur in seen or node.attached_to == cur:
                first = self.nodes[name]
                chain = _chain_text([*seen, cur])
                raise DescriptionError(
                    Problem(ErrorCode.FRAME_ATTACHED_TO_CYCLE, f"attached_to cycle: {chain}", **self._where(first))
                )
            seen.append(cur)
            if node.attached_to is None or node.attached_to not in self.nodes:
                raise DescriptionError(
                    Problem(
                        ErrorCode.FRAME_ATTACHED_TO_INVALID,
                        f"{node.kind} {cur!r} is attached to {node.attached_to!r}, which does not exist",
                        **self._where(node),
                    )
                )
            cur = node.attached_to

    # ---------------------------------------------------------------- poses
    def pose_in_root(self, name: str) -> pin.SE3:
        """``X___model___name`` at the zero configuration.

        Raises:
            DescriptionError: ``POSE_RELATIVE_TO_INVALID`` (unknown frame on the way),
                ``POSE_RELATIVE_TO_CYCLE``.
        """
        self._require(name, ErrorCode.POSE_RELATIVE_TO_INVALID)
        # Resolve the relative_to chain from its top down, so that each _pose_in_root finds its relative_to
        # cached: a chain of thousands of frames (a cable of links each posed relative to the previous one) would
        # exceed Python's recursion limit otherwise.
        chain = [name]
        on_chain = {name}
        cur = name
        while cur not in self._pose_cache:
            rel = self.nodes[cur].relative_to
            if rel is None or rel not in self.nodes:
                break
            if rel in on_chain:
                # the cycle alone, from its least name: one problem per cycle, whichever frame leads to it
                cycle = chain[chain.index(rel) :]
                k = cycle.index(min(cycle))
                cycle = cycle[k:] + cycle[:k]
                raise DescriptionError(
                    Problem(
                        ErrorCode.POSE_RELATIVE_TO_CYCLE,
                        "relative_to cycle: " + _chain_text([*cycle, cycle[0]]),
                        **self._where(self.nodes[cycle[0]]),
                    )
                )
            chain.append(rel)
            on_chain.add(rel)
            cur = rel
        for k in range(len(chain) - 1, -1, -1):
            X = self._pose_in_root(chain[k], chain[:k])
        return X

    def _pose_in_root(self, name: str, stack: list[str]) -> pin.SE3:
        if name in self._pose_cache:
            return self._pose_cache[name]
        node = self.nodes[name]
        if node.relative_to is None:
            return pin.SE3.Identity()
        if name in stack:
            first = self.nodes[stack[0]]
            raise DescriptionError(
                Problem(
                    ErrorCode.POSE_RELATIVE_TO_CYCLE,
                    "relative_to cycle: " + " -> ".join([*stack[stack.index(name) :], name]),
                    **self._where(first),
                )
            )
        if node.relative_to not in self.nodes:
            raise DescriptionError(
                Problem(
                    ErrorCode.POSE_RELATIVE_TO_INVALID,
                    f"{node.kind} {name!r}: relative_to frame {node.relative_to!r} does not exist",
                    **self._where(node),
                )
            )
        stack = [*stack, name]
        X_root_rel = self._pose_in_root(node.relative_to, stack)
        X_rel_self = node.raw_pose
        if node.placement:
            # raw pose places the placement frame P; X_rel_model = X_rel_P * X_model_P^-1, where X_model_P
            # is resolved inside the nested model (its chain of poses ends at this model frame).
            X_model_P = self._pose_relative_chain(node.placement, name, stack)
            X_rel_self = X_rel_self * X_model_P.inverse()
        X = X_root_rel * X_rel_self
        self._pose_cache[name] = X
        return X

    def _pose_relative_chain(self, name: str, stop: str, stack: list[str]) -> pin.SE3:
        """Compose raw poses from ``name`` up to ``stop`` (must be reached before the root)."""
        X = pin.SE3.Identity()
        cur = name
        seen: list[str] = []
        while cur != stop:
            node = self.nodes.get(cur)
            if node is None or node.relative_to is None or cur in seen or cur in stack:
                where = self._where(self.nodes[stop])
                if node is not None and (cur in seen or cur in stack):
                    raise DescriptionError(
                        Problem(ErrorCode.POSE_RELATIVE_TO_CYCLE, f"relative_to cycle through {cur!r}", **where)
                    )
                raise DescriptionError(
                    Problem(
                        ErrorCode.MODEL_PLACEMENT_FRAME_INVALID,
                        f"placement frame {name!r} is not posed inside model {stop!r}",
                        **where,
                    )
                )
            seen.append(cur)
            raw = node.raw_pose
            if node.placement:
                raw = raw * self._pose_relative_chain(node.placement, cur, [*stack, *seen]).inverse()
            X = raw * X
            cur = node.relative_to
        return X

    def resolve_pose(self, frame: str, relative_to: str = MODEL_FRAME) -> pin.SE3:
        """``X_relative_to_frame`` at the zero configuration (``sdf::SemanticPose::Resolve``).

        Resolving a frame relative to itself gives exactly the identity.

        Raises:
            DescriptionError: ``POSE_RELATIVE_TO_INVALID`` naming an unknown frame, or a cycle.
        """
        self._require(frame, ErrorCode.POSE_RELATIVE_TO_INVALID)
        self._require(relative_to, ErrorCode.POSE_RELATIVE_TO_INVALID)
        if frame == relative_to:
            return pin.SE3.Identity()
        return self.pose_in_root(relative_to).actInv(self.pose_in_root(frame))

    def _require(self, name: str, code: ErrorCode) -> None:
        if name not in self.nodes:
            known = ", ".join(sorted(self.nodes)[:20])
            raise DescriptionError(
                Problem(
                    code, f"frame {name!r} does not exist (known: {known}{', ...' if len(self.nodes) > 20 else ''})"
                )
            )
