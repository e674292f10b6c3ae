"""A small biped URDF for the flat-foot tests: 6-joint legs (hip yaw, roll, pitch, knee, ankle pitch, roll), each
ending in an ``*_foot`` link with a ``*_sole`` link fixed 5 cm below it (one rigid body, two foot-like names), and
an IMU ``<gazebo>`` block on the base (pose ``imu_rpy`` / ``imu_xyz``)."""

from __future__ import annotations

_AXES = (("hip_yaw", "0 0 1"), ("hip_roll", "1 0 0"), ("hip_pitch", "0 1 0"), ("knee", "0 1 0"),
         ("ankle_pitch", "0 1 0"), ("ankle_roll", "1 0 0"))  # fmt: skip
_OFFSETS = ("0 {y} -0.05", "0 0 -0.02", "0 0 -0.02", "0 0 -0.35", "0 0 -0.35", "0 0 -0.02")


def _link(name: str, mass: float = 1.0) -> str:
    return (
        f'<link name="{name}"><inertial><origin xyz="0 0 0"/><mass value="{mass}"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>'
    )


def biped_urdf(imu_rpy: str = "0 0 0", imu_xyz: str = "0 0 0", gyro_stddev: float = 1e-3) -> str:
    parts = ['<?xml version="1.0"?>', '<robot name="test_biped">', _link("base_link", 10.0)]
    for side, y in (("l", 0.1), ("r", -0.1)):
        parent = "base_link"
        for k, (joint, axis) in enumerate(_AXES):
            child = f"{side}_{joint}_link"
            parts.append(_link(child))
            parts.append(
                f'<joint name="{side}_{joint}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{_OFFSETS[k].format(y=y)}"/><axis xyz="{axis}"/>'
                '<limit lower="-3" upper="3" effort="100" velocity="10"/></joint>'
            )
            parent = child
        parts.append(_link(f"{side}_foot", 0.5))
        parts.append(
            f'<joint name="{side}_foot_joint" type="fixed"><parent link="{parent}"/><child link="{side}_foot"/>'
            '<origin xyz="0 0 -0.03"/></joint>'
        )
        parts.append(f'<link name="{side}_sole"/>')
        parts.append(
            f'<joint name="{side}_sole_joint" type="fixed"><parent link="{side}_foot"/><child link="{side}_sole"/>'
            '<origin xyz="0.02 0 -0.05"/></joint>'
        )
    axis = (
        f'<noise type="gaussian"><mean>0</mean><stddev>{gyro_stddev}</stddev><bias_mean>0</bias_mean>'
        "<bias_stddev>0</bias_stddev></noise>"
    )
    acc = (
        '<noise type="gaussian"><mean>0</mean><stddev>0.02</stddev><bias_mean>0</bias_mean>'
        "<bias_stddev>0</bias_stddev></noise>"
    )
    parts.append(
        '<gazebo reference="base_link"><sensor name="imu" type="imu"><update_rate>1000</update_rate>'
        f"<pose>{imu_xyz} {imu_rpy}</pose><imu><angular_velocity>"
        f"<x>{axis}</x><y>{axis}</y><z>{axis}</z></angular_velocity><linear_acceleration>"
        f"<x>{acc}</x><y>{acc}</y><z>{acc}</z></linear_acceleration></imu></sensor></gazebo>"
    )
    parts.append("</robot>")
    return "\n".join(parts)
