"""RobotDescription.foot_radius: spherical foot collisions centred at the foot frame origin."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.description import load_description

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    ("robot", "radius"),
    [
        ("go1", 0.02),  # example-robot-data go1.urdf: <collision><sphere radius="0.02"/> at the foot origin
        ("solo12", 0.0),  # mesh collision (solo_foot.stl): no sphere
        ("anymal_c", 0.0),  # sphere r = 0.03 centred 22.5 mm above *_FOOT: not the foot frame origin
    ],
)
def test_bundled_robots_foot_radius(robot, radius):
    desc = load_description(robot_description_path(robot))
    feet = desc.foot_frames()
    assert len(feet) == 4
    assert [desc.foot_radius(f) for f in feet] == [radius] * 4


def test_foot_radius_unknown_frame():
    desc = load_description(robot_description_path("go1"))
    with pytest.raises(KeyError):
        desc.foot_radius("no_such_foot")
    assert desc.foot_radius("FL_calf") == 0.0  # the calf's own origin is not a sphere centre


def test_urdf_sphere_on_lumped_parent_link_and_offset():
    urdf = load_description(robot_description_path("go1")).xml
    # move FL's sphere off the origin: no longer a rolling foot
    marker = '<link name="FL_foot">'
    i = urdf.index(marker)
    j = urdf.index('<sphere radius="0.02"/>', i)
    k = urdf.rindex('xyz="0 0 0"', i, j)
    shifted = urdf[:k] + 'xyz="0 0 0.01"' + urdf[k + len('xyz="0 0 0"') :]
    desc = load_description(shifted)
    assert desc.foot_radius("FL_foot") == 0.0
    assert desc.foot_radius("FR_foot") == 0.02


def _sdf_with_collisions() -> str:
    sdf = (FIXTURES / "solo12.sdf").read_text()
    col = '<collision name="sole"><geometry><sphere><radius>0.0165</radius></sphere></geometry></collision>'
    # FL: sphere on the foot link at its origin
    sdf = sdf.replace('<link name="FL_FOOT">', '<link name="FL_FOOT">' + col, 1)
    # FR: sphere on the lower leg (the foot's fixed parent), posed relative to the foot frame
    col_rel = (
        '<collision name="sole"><pose relative_to="FR_FOOT">0 0 0 0 0 0</pose>'
        "<geometry><sphere><radius>0.012</radius></sphere></geometry></collision>"
    )
    sdf = sdf.replace('<link name="FR_LOWER_LEG">', '<link name="FR_LOWER_LEG">' + col_rel, 1)
    # HL: sphere 1 cm above the foot origin
    col_off = (
        '<collision name="sole"><pose>0 0 0.01 0 0 0</pose>'
        "<geometry><sphere><radius>0.02</radius></sphere></geometry></collision>"
    )
    return sdf.replace('<link name="HL_FOOT">', '<link name="HL_FOOT">' + col_off, 1)


def test_sdf_foot_radius():
    desc = load_description(_sdf_with_collisions())
    assert desc.format == "sdf"
    assert desc.foot_radius("FL_FOOT") == 0.0165
    assert desc.foot_radius("FR_FOOT") == 0.012
    assert desc.foot_radius("HL_FOOT") == 0.0
    assert desc.foot_radius("HR_FOOT") == 0.0
