"""Who may attach, and how: the hub's rules for a controller's hello.

A hello names a controller and a robot. The robot must exist and move; a controller the project
lists must attach to its own robot with the project's period; a controller the project does not
list gets the ad-hoc policy and deadline; a second controller for a robot that already has one is
refused unless the project lists both for that robot (two controllers driving one robot silently
would fight)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from hrpsim import tick_protocol as proto
from hrpsim.conventions import period_ticks
from hrpsim.errors import RequestError
from hrpsim.project import ControllerConfig, Project

ADHOC_POLICY = "hold"  # for a controller the project does not list
ADHOC_DEADLINE = 5.0
MAX_DEADLINE = 3600.0  # s: a longer wait is a mistake, not a choice


@dataclass
class AttachedController:
    """One attached controller and where it is in the tick protocol."""

    name: str
    robot: str
    peer: Any  # where it is: simserver/peers.py (a connection, or a Controller in this process)
    every: int
    period: float
    policy: str
    deadline: float
    start_tick: int
    fd: int | None = None
    outstanding: int | None = None  # the tick whose state it has and has not answered yet
    sent_at: float = 0.0
    answer: proto.Command | None = None
    answered_late: bool = False
    key: str = ""  # the name of the key it attached with (hrpsim.security)
    rtt_us: float | None = None  # the round trip of its last answer

    @property
    def identity(self) -> bytes | None:
        return self.peer.identity

    def due(self, tick: int) -> bool:
        return tick >= self.start_tick and tick % self.every == 0


def admit(
    hello: proto.Hello,
    peer: Any,
    *,
    project: Project,
    robots: list[str],
    tick: int,
    attached: dict[str, AttachedController],
) -> AttachedController:
    """The controller a hello asks for; RequestError naming the hello field that is wrong."""
    if hello.robot not in robots:
        raise RequestError(
            f"hello field 'robot': no robot named {hello.robot!r} in this world "
            f"(robots: {', '.join(robots) or 'none'})",
            field="robot",
        )
    configs = {c.name: c for c in project.controllers}
    if hello.default_name and hello.controller not in configs:
        hello = _project_name(hello, project, attached)
    config = configs.get(hello.controller)
    if config is not None and config.robot != hello.robot:
        raise RequestError(
            f"hello field 'robot': the project attaches controller {hello.controller!r} to "
            f"{config.robot!r}, not {hello.robot!r}",
            field="robot",
        )
    _check_robot_free(hello, project, attached)
    period = _period(hello, config, project.world.timestep)
    deadline = config.deadline if config else (hello.deadline or ADHOC_DEADLINE)
    if not math.isfinite(deadline) or deadline > MAX_DEADLINE:
        raise RequestError(f"hello field 'deadline': {deadline} s is longer than {MAX_DEADLINE:g} s", field="deadline")
    return AttachedController(
        name=hello.controller,
        robot=hello.robot,
        peer=peer,
        every=period_ticks(period, project.world.timestep) or 1,
        period=period,
        policy=config.policy if config else (hello.policy or ADHOC_POLICY),
        deadline=deadline,
        start_tick=tick,
    )


def _project_name(hello: proto.Hello, project: Project, attached: dict[str, AttachedController]) -> proto.Hello:
    """A controller that did not choose its name takes the project's entry for its robot, when there
    is exactly one such entry still free."""
    free = [
        c.name for c in project.controllers if c.robot == hello.robot and not c.in_process and c.name not in attached
    ]
    return dataclasses.replace(hello, controller=free[0]) if len(free) == 1 else hello


def _check_robot_free(hello: proto.Hello, project: Project, attached: dict[str, AttachedController]) -> None:
    listed = {c.name for c in project.controllers if c.robot == hello.robot}
    for other in attached.values():
        if other.robot != hello.robot or other.name == hello.controller:
            continue
        if hello.controller in listed and other.name in listed:
            continue
        raise RequestError(
            f"hello field 'controller': robot {hello.robot!r} is already driven by controller "
            f"{other.name!r}; two controllers may share a robot only when the project lists both "
            f"for it (or attach under the name {other.name!r} to replace it)",
            field="controller",
        )


def _period(hello: proto.Hello, config: ControllerConfig | None, timestep: float) -> float:
    if config is not None:
        if hello.period is not None and abs(hello.period - config.period) > 1e-9:
            raise RequestError(
                f"hello field 'period': {hello.period} differs from the project's "
                f"{config.period} for {config.name!r}; drop --period or fix the project",
                field="period",
            )
        return config.period
    period = hello.period if hello.period is not None else timestep
    if period_ticks(period, timestep) is None:
        raise RequestError(
            f"hello field 'period': {period} s is not a whole multiple of the time step {timestep} s", field="period"
        )
    return period
