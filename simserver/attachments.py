"""The controllers attached to the hub: admitted by the rules of simserver/attached_controllers.py, known by
name and (for connections) by identity, kept in name order (the order their commands apply in, so a
lockstep run does not depend on which answer came first), and welcomed with what they need to know."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from hrpsim import tick_protocol as proto
from hrpsim.engines.base import Engine
from hrpsim.placement import root_placement
from hrpsim.project import Project
from hrpsim.simserver.attached_controllers import AttachedController, admit
from hrpsim.simserver.peers import Peer

log = logging.getLogger("hrpsim.simserver.hub")


class Attachments:
    def __init__(self, changed: Callable[[], None] = lambda: None) -> None:
        self.changed = changed  # called whenever a controller comes or goes
        self.by_name: dict[str, AttachedController] = {}
        self._by_identity: dict[bytes, AttachedController] = {}
        self.ordered: list[AttachedController] = []
        self.remote: list[AttachedController] = []  # those at the end of a connection: they answer later

    def with_identity(self, identity: bytes) -> AttachedController | None:
        return self._by_identity.get(identity)

    def admit(self, peer: Peer, hello: proto.Hello, *, project: Project, engine: Engine) -> AttachedController:
        """The controller the hello asks for, not yet attached (:meth:`add`); RequestError naming the
        hello's field when the rules refuse it. It may take the place of one of the same name."""
        others = {name: c for name, c in self.by_name.items() if name != hello.controller}
        return admit(hello, peer, project=project, robots=list(engine.robots), tick=int(engine.tick), attached=others)

    def add(self, ctl: AttachedController) -> None:
        if ctl.identity is not None:
            self._by_identity[ctl.identity] = ctl
        self.by_name[ctl.name] = ctl
        self._reorder()

    def detach(self, ctl: AttachedController) -> bool:
        """Forget ``ctl``; True when it was the controller attached under its name."""
        if ctl.identity is not None and self._by_identity.get(ctl.identity) is ctl:
            del self._by_identity[ctl.identity]
        if self.by_name.get(ctl.name) is not ctl:
            return False
        del self.by_name[ctl.name]
        self._reorder()
        return True

    def waiting_on(self, tick: int) -> list[AttachedController]:
        """Attached controllers whose answer to ``tick`` has not come yet."""
        return [c for c in self.remote if c.outstanding == tick]  # an in-process one answers at once

    def _reorder(self) -> None:
        self.ordered = sorted(self.by_name.values(), key=lambda c: c.name)
        self.remote = [c for c in self.ordered if not c.peer.in_process]
        self.changed()


def welcome(
    ctl: AttachedController,
    project: Project,
    engine: Engine,
    joints: list[str],
    end_time: float | None,
    **transport: Any,
) -> bytes:
    """The welcome frame: the terms of the attachment and the robot's model (and ``transport``:
    what the peer's way of being reached needs said, such as a shared memory layout)."""
    body = engine.body(ctl.robot)
    position, rotation = root_placement(project.model(ctl.robot), body)
    return proto.encode(
        proto.WELCOME,
        controller=ctl.name,
        robot=ctl.robot,
        period=ctl.period,
        every=ctl.every,
        timestep=project.world.timestep,
        sync=project.world.sync,
        policy=ctl.policy,
        deadline=ctl.deadline,
        joints=joints,
        end_time=end_time,
        gravity=[float(g) for g in project.world.gravity],
        root_position=position.tolist(),
        root_rotation=rotation.tolist(),
        sensors=[{"name": s.name, "type": s.type, "id": s.id} for s in body.sensors],
        body=body.to_wire(),
        **transport,
    )
