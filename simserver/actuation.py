"""Commands on their way to the engine: each merged into its robot's held arrays
(simserver/held_commands.py), then through the robot's hardware models (latency, saturation, dropped
commands, a watchdog: simserver/hardware_models.py) before the engine applies them. The same hardware models
decide what a controller sees of its robot's state."""

from __future__ import annotations

import copy
import logging
from typing import Any

from hrpsim import tick_protocol as proto
from hrpsim.engines.base import Engine, JointCommand, RobotState
from hrpsim.errors import RequestError
from hrpsim.project import Project
from hrpsim.simserver.hardware_models import RobotHardwareModels, hardware_models_of
from hrpsim.simserver.held_commands import HeldCommands
from hrpsim.simserver.tick_record import ControllerEvent, TickRecord

log = logging.getLogger("hrpsim.simserver.hub")


class Actuation:
    def __init__(self, engine: Engine, project: Project) -> None:
        self.engine = engine
        self._held = HeldCommands(engine)
        self.devices: dict[str, RobotHardwareModels] = hardware_models_of(
            project.models, engine.bodies, project.world.timestep
        )
        self._joints: dict[str, tuple[list[str], dict[str, int]]] = {}
        self._sensed: tuple[int, dict[str, RobotState]] | None = None  # (tick, states) the devices gave

    def joint_table(self, robot: str) -> tuple[list[str], dict[str, int]]:
        """The robot's joints in controller order, and each one's index."""
        table = self._joints.get(robot)
        if table is None:
            names = list(self.engine.body(robot).joint_names)
            table = self._joints[robot] = (names, {n: i for i, n in enumerate(names)})
        return table

    def sense(self, record: TickRecord) -> dict[str, RobotState]:
        """This tick's states as each robot's devices let controllers see them (robots with devices only).
        Once per tick: the devices' noise and delays advance with it, so a second look at the same tick
        (the API's before the tick's own) gets what the first got."""
        if not self.devices:
            return {}
        if self._sensed is not None and self._sensed[0] == record.tick:
            return self._sensed[1]
        states = {robot: devices.sense(record.state(robot)) for robot, devices in self.devices.items()}
        self._sensed = (record.tick, states)
        return states

    def forget_sensed(self) -> None:
        """The robots were moved by hand: what the devices gave for this tick is not what they see now."""
        self._sensed = None

    def command(self, robot: str, cmd: proto.Command, tick: int) -> JointCommand:
        """Merge a controller's command into what ``robot`` holds and send it on; RequestError when the
        engine refuses it. Returns the full command as merged (the held arrays: this tick's values)."""
        merged = self._held.merge(robot, cmd)
        devices = self.devices.get(robot)
        if devices is not None:  # it keeps the command for later (a latency): a copy of the held arrays
            devices.command(tick, copy.deepcopy(merged))
        else:  # checked on arrival (tick.parse_command) and merged into full-length arrays
            self.engine.apply_checked(robot, merged)
        return merged

    def hold(self, robot: str, command: JointCommand, tick: int) -> JointCommand:
        """A command from outside the tick protocol (the API's, the ``command`` operation's), checked as
        the engine checks one (RequestError naming the field and joint) and then taken as a
        controller's answer to ``tick``: merged, and through the robot's hardware models."""
        self.engine.require_robot(robot)
        checked = self.engine.check_command(robot, command)
        every = proto.every_joint(len(self.joint_table(robot)[0]))
        cmd = proto.Command(tick, every, checked.torque, checked.q_ref, checked.dq_ref, modes=dict(checked.modes or {}))
        return self.command(robot, cmd, tick)

    def actuate(self, record: TickRecord) -> list[ControllerEvent]:
        """Commands that have come through their robot's hardware models this tick reach the engine;
        returns the watchdog events."""
        events: list[ControllerEvent] = []
        if not self.devices:
            return events
        for robot, devices in self.devices.items():
            tripped = devices.watchdog_tripped
            for command in devices.due(record.tick, record.time):
                try:
                    self.engine.apply(robot, command)
                except RequestError as exc:
                    log.warning("robot %s: a delayed command was refused by the engine: %s", robot, exc)
            if devices.watchdog_tripped and not tripped:
                log.warning(
                    "robot %s: no command for %g s: the watchdog zeroes its torques", robot, devices.config.watchdog
                )
                events.append(ControllerEvent("", robot, "watchdog", f"tick {record.tick}"))
        return events

    def memory(self) -> dict[str, Any]:
        """The held commands and the hardware models' state, for a snapshot."""
        return {
            "held": self._held.memory(),
            "devices": {robot: devices.memory() for robot, devices in self.devices.items()},
        }

    def restore(self, memory: dict[str, Any]) -> None:
        self._held.restore(memory["held"])
        self._sensed = None
        for robot, devices in self.devices.items():
            devices.restore(memory["devices"][robot])

    def zero(self, robot: str) -> None:
        names, _ = self.joint_table(robot)
        self.engine.apply(robot, self._held.zero_torque(robot, names))
