"""Which frames are the feet (description/feet.py): the configured names, else detection, else an error naming
the parameter to set and the links at the ends of the chains."""

from __future__ import annotations

import pytest

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.description import load_description
from robot_state_estimator.description.feet import chosen_feet, leaf_bodies

#: a base with one leg: the leg's link is at the end of the chain, its name is no foot name
STICK_URDF = """<robot name="stick">
  <link name="base"><inertial><mass value="5"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="lower_leg"><inertial><mass value="0.5"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="knee" type="revolute"><parent link="base"/><child link="lower_leg"/><origin xyz="0 0 -0.1"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="10"/></joint>
</robot>"""


def test_the_configured_feet_come_first_then_detection() -> None:
    desc = load_description(str(robot_description_path("go1")))
    assert sorted(chosen_feet(desc)) == ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
    assert chosen_feet(desc, ("FL_foot", "RR_foot")) == ["FL_foot", "RR_foot"]


def test_no_detectable_foot_names_the_parameter_and_the_ends_of_the_chains() -> None:
    desc = load_description(STICK_URDF)
    assert leaf_bodies(desc.model) == ["lower_leg"]
    with pytest.raises(ValueError, match=r"no foot frames detected in 'stick'") as info:
        chosen_feet(desc)
    assert '-p foot_frames:="[lower_leg]"' in str(info.value) and "names=" not in str(info.value)
