"""The simulator's foot force/torque sensors and contact schedule (``simulate --foot-wrenches --contact-schedule``):
checked by statics, not by the code that wrote them: a Go1 standing still and level, every foot's wrench expressed in
the base frame, carries its weight (sum of the vertical forces = m g) and balances gravity's moment about the base
origin (sum of the sensor moments = c x (0, 0, m g), c the centre of mass in the base)."""

from __future__ import annotations

import argparse

import numpy as np
import pinocchio as pin

from robot_state_estimator.description import load_description
from robot_state_estimator.io import messages
from robot_state_estimator.io.bags import read_messages
from robot_state_estimator.simulation.cli import add_arguments
from robot_state_estimator.simulation.cli import run as cli_run

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


def test_standing_go1_wrench_sensors_balance_its_weight(tmp_path, capsys) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    frames = [f"--foot-wrench-frame={f}=base" for f in FEET]
    args = parser.parse_args(
        ["--gait", "stand", "--duration", "0.2", "--output", str(tmp_path / "o"), *frames, "--contact-schedule"]
    )
    assert cli_run(args) == 0
    capsys.readouterr()
    msgs: dict[str, list] = {}
    for m in read_messages(tmp_path / "o" / "bag"):
        msgs.setdefault(m.topic, []).append(m.msg)
    n = len(msgs["/joint_states"])
    assert all(len(msgs[f"/{f}/wrench"]) == n for f in FEET) and len(msgs["/contact_schedule"]) == n
    desc = load_description(str(tmp_path / "o" / "robot_description.urdf"))
    model = desc.model
    data = model.createData()
    mass = pin.computeTotalMass(model)
    for k in (0, n // 2, n - 1):
        joints = messages.joint_sample_from_msg(msgs["/joint_states"][k])
        q = pin.neutral(model)
        q[7:] = [joints.position[joints.names.index(j)] for j in desc.joint_names]
        com = pin.centerOfMass(model, data, q)  # base at the identity: in the base frame
        w = [messages.foot_wrench_sample_from_msg(msgs[f"/{f}/wrench"][k], f) for f in FEET]
        assert {s.frame_id for s in w} == {"base"}
        total = np.sum([s.wrench for s in w], axis=0)
        np.testing.assert_allclose(total[:3], [0.0, 0.0, mass * 9.81], atol=1e-6)
        np.testing.assert_allclose(total[3:], np.cross(com, [0.0, 0.0, mass * 9.81]), atol=1e-3)
        schedule = messages.contact_schedule_from_msg(msgs["/contact_schedule"][k])
        assert schedule.feet == FEET and schedule.in_contact == (True,) * 4
