"""``load_description``: file / URI / XML text -> :class:`RobotDescription`."""

from __future__ import annotations

import os

from .errors import DescriptionError, ErrorCode, Problem
from .imu import local_tag
from .robot import RobotDescription
from .urdf import read_urdf
from .xml_input import load_xml


def load_description(
    source: str | os.PathLike[str], *, model_name: str | None = None, base_link: str | None = None
) -> RobotDescription:
    """Load an SDFormat (1.6-1.11) or URDF robot description.

    Args:
        source: a file path (``.urdf``, ``.sdf``, ``.xacro`` ...), a ``package://``/``model://`` URI, or the
            XML text itself (what a ``robot_description`` parameter carries). SDF or URDF is told by the
            root element (``<sdf>`` or ``<robot>``); xacro is expanded first.
        model_name: for SDF with several models (e.g. a ``<world>``), the one to use.
        base_link: floating-base link; default: the URDF root link, or the SDF model's canonical link.

    Returns:
        The description, with a pinocchio model whose ``root_joint`` free-flyer sits at ``base_link``.

    Raises:
        DescriptionError: listing every problem found (codes as libsdformat's ``sdf::ErrorCode``).
    """
    doc = load_xml(source)
    tag = local_tag(doc.root)
    if tag == "robot":
        res = read_urdf(doc, base_link=base_link)
        if model_name is not None and model_name != res.name:
            raise DescriptionError(
                Problem(ErrorCode.ELEMENT_MISSING, f"URDF robot is {res.name!r}, not {model_name!r}", file=doc.file)
            )
        return RobotDescription(
            name=res.name,
            format="urdf",
            xml=doc.text,
            model=res.model,
            base_link=res.root_link,
            imus=res.imus,
            graph=res.graph,
        )
    if tag == "sdf":
        from .sdf_model import read_sdf

        sres = read_sdf(doc, model_name=model_name, base_link=base_link)
        return RobotDescription(
            name=sres.name,
            format="sdf",
            xml=doc.text,
            model=sres.model,
            base_link=sres.base_link,
            imus=sres.imus,
            graph=sres.graph,
        )
    raise DescriptionError(
        Problem(
            ErrorCode.ELEMENT_INCORRECT_TYPE,
            f"root element is <{tag}>, expected <sdf> (SDFormat) or <robot> (URDF)",
            element=tag,
            line=doc.line(doc.root),
            file=doc.file,
        )
    )
