"""Commands on their way to the engine: each merged into its robot's held arrays
(simserver/held_commands.py), then through the robot's device models (latency, saturation, dropped
commands, a watchdog: simserver/devices.py) before the engine applies them. The same device models
decide what a controller sees of its robot's state."""

from __future__ import annotations

import logging
from typing import Any

from hrpsim import tick as proto
from hrpsim.engines.base import Engine, JointCommand, RobotState
from hrpsim.errors import RequestError
from hrpsim.project import Project
from hrpsim.simserver.devices import RobotDevices, devices_of
from hrpsim.simserver.held_commands import HeldCommands
from hrpsim.simserver.record import ControllerEvent, TickRecord

log = logging.getLogger("hrpsim.simserver.hub")


class Actuation:
    def __init__(self, engine: Engine, project: Project) -> None:
        self.engine = engine
        self._held = HeldCommands(engine)
        self.devices: dict[str, RobotDevices] = devices_of(project.models, engine.bodies, project.world.timestep)
        self._joints: dict[str, tuple[list[str], dict[str, int]]] = {}

    def joint_table(self, robot: str) -> tuple[list[str], dict[str, int]]:
        """The robot's joints in controller order, and each one's index."""
        table = self._joints.get(robot)
        if table is None:
            names = list(self.engine.body(robot).joint_names)
            table = self._joints[robot] = (names, {n: i for i, n in enumerate(names)})
        return table

    def sense(self, record: TickRecord) -> dict[str, RobotState]:
        """This tick's states as each robot's devices let controllers see them (robots with devices only)."""
        if not self.devices:
            return {}
        return {robot: devices.sense(record.state(robot)) for robot, devices in self.devices.items()}

    def command(self, robot: str, cmd: proto.Command, tick: int) -> JointCommand:
        """Merge a controller's command into what ``robot`` holds and send it on; RequestError when the
        engine refuses it. Returns the full command as merged."""
        merged = self._held.merge(robot, cmd)
        devices = self.devices.get(robot)
        if devices is not None:
            devices.command(tick, merged)
        else:  # checked on arrival (tick.parse_command) and merged into full-length arrays
            self.engine.apply_checked(robot, merged)
        return merged

    def actuate(self, record: TickRecord) -> list[ControllerEvent]:
        """Commands that have come through their robot's device models this tick reach the engine;
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
        """The held commands and the device models' state, for a snapshot."""
        return {
            "held": self._held.memory(),
            "devices": {robot: devices.memory() for robot, devices in self.devices.items()},
        }

    def restore(self, memory: dict[str, Any]) -> None:
        self._held.restore(memory["held"])
        for robot, devices in self.devices.items():
            devices.restore(memory["devices"][robot])

    def zero(self, robot: str) -> None:
        names, _ = self.joint_table(robot)
        self.engine.apply(robot, self._held.zero_torque(robot, names))
