"""Actuation (simserver/actuation.py): partial commands merge into the robot's held arrays, and reach
the engine through the robot's hardware models."""

from __future__ import annotations

import numpy as np
from controller_helpers import SR1_URDF, kinematic_project, sr1_body

from hrpsim import tick_protocol as proto
from hrpsim.engines.kinematic.engine import KinematicEngine
from hrpsim.project import parse_project
from hrpsim.simserver.actuation import Actuation
from hrpsim.simserver.tick_record import TickRecord


def test_two_partial_commands_merge_into_one_full_command(tmp_path):
    project = kinematic_project(tmp_path, [])
    engine = KinematicEngine(project, {"robot": sr1_body()})
    actuation = Actuation(engine, project)
    names, index_of = actuation.joint_table("robot")
    first, second = names[0], names[1]
    for joint, value in ((first, 0.3), (second, -0.2)):
        msg = {"tick": 0, "joints": [joint], "q_ref": np.array([value])}
        cmd = proto.parse_command(msg, joint_names=names, index_of=index_of, expected_tick=0)
        merged = actuation.command("robot", cmd, 0)
    assert merged.q_ref[index_of[first]] == 0.3 and merged.q_ref[index_of[second]] == -0.2
    engine.integrate()
    q = engine.read("robot").q
    assert q[index_of[first]] == 0.3 and q[index_of[second]] == -0.2


def test_a_command_through_a_latency_device_reaches_the_engine_later(tmp_path):
    data = {"models": [{"name": "robot", "file": str(SR1_URDF), "devices": {"latency": {"command": 2}}}]}
    project = parse_project(data, str(tmp_path / "project.yaml"))
    engine = KinematicEngine(project, {"robot": sr1_body()})
    actuation = Actuation(engine, project)
    names, index_of = actuation.joint_table("robot")
    q_ref = np.full(len(names), 0.1)
    cmd = proto.parse_command({"tick": 0, "q_ref": q_ref}, joint_names=names, index_of=index_of, expected_tick=0)
    actuation.command("robot", cmd, 0)
    reached = []
    for _ in range(4):
        actuation.actuate(TickRecord(tick=engine.tick, time=engine.time, engine=engine))
        engine.integrate()
        reached.append(float(engine.read("robot").q[0]))
    # two ticks of latency: the command acts from the integration of tick 2
    assert reached == [0.0, 0.0, 0.1, 0.1]
