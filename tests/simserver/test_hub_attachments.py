"""Who is attached (simserver/attachments.py): name order (the order commands apply in), a controller
replacing one of its name, and the welcome a connection gets."""

from __future__ import annotations

import msgpack
from controller_helpers import kinematic_project, sr1_body

from hrpsim import tick_protocol as proto
from hrpsim.engines.kinematic.engine import KinematicEngine
from hrpsim.simserver.attachments import Attachments, welcome
from hrpsim.simserver.hub_wire import NoWire
from hrpsim.simserver.peers import WirePeer


def _setup(tmp_path):
    project = kinematic_project(tmp_path, [{"name": n} for n in ("b", "a", "c")])
    return project, KinematicEngine(project, {"robot": sr1_body()})


def test_controllers_are_kept_in_name_order_whatever_order_they_attach_in(tmp_path):
    project, engine = _setup(tmp_path)
    attachments = Attachments()
    for name in ("c", "a", "b"):
        peer = WirePeer(NoWire(), name.encode())
        attachments.add(
            attachments.admit(
                peer, proto.Hello(controller=name, robot="robot", period=None), project=project, engine=engine
            )
        )
    assert [c.name for c in attachments.ordered] == ["a", "b", "c"]
    assert attachments.with_identity(b"b").name == "b"
    assert attachments.detach(attachments.by_name["b"])
    assert [c.name for c in attachments.ordered] == ["a", "c"] and attachments.with_identity(b"b") is None


def test_a_controller_of_the_same_name_replaces_the_one_before(tmp_path):
    project, engine = _setup(tmp_path)
    attachments = Attachments()
    hello = proto.Hello(controller="a", robot="robot", period=None)
    old = attachments.admit(WirePeer(NoWire(), b"old"), hello, project=project, engine=engine)
    attachments.add(old)
    new = attachments.admit(WirePeer(NoWire(), b"new"), hello, project=project, engine=engine)
    assert not attachments.detach(new)  # not attached yet: the old one holds the name
    assert attachments.detach(old)
    attachments.add(new)
    assert attachments.by_name["a"] is new and attachments.with_identity(b"old") is None


def test_the_welcome_carries_the_terms_and_the_robot(tmp_path):
    project, engine = _setup(tmp_path)
    attachments = Attachments()
    ctl = attachments.admit(
        WirePeer(NoWire(), b"x"),
        proto.Hello(controller="a", robot="robot", period=None),
        project=project,
        engine=engine,
    )
    names = list(engine.body("robot").joint_names)
    msg = msgpack.unpackb(welcome(ctl, project, engine, names, 3.0), raw=False, strict_map_key=False)
    assert msg["controller"] == "a" and msg["robot"] == "robot" and msg["joints"] == names
    assert msg["end_time"] == 3.0 and msg["timestep"] == project.world.timestep and msg["sync"] == "lockstep"
