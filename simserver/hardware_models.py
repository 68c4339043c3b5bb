"""Hardware models: what a robot's hardware does to its signals, between the controller and the engine.

Configured per robot in the project (``models[i].devices``, hrpsim/project.py HardwareModelConfig) and
applied by the controller hub, so the simulator and the hardware stand-in behave alike:

- sensor path (the state a controller receives): joint angles quantised to the encoder's resolution
  (2 pi / (counts per motor revolution x gear ratio)); Gaussian noise and a constant bias on joint
  angles, gyros, accelerometers and force sensors (seeded: the same seed gives the same noise); a
  latency of N ticks (the state of tick k carries the measurements of tick k - N);
- command path: a latency of N ticks (a command answering tick k acts from tick k + N), torques
  clipped to the model's torque limits, commands lost with a given probability (seeded), and a
  watchdog that zeroes every torque when no command has come for a given time, as motor drivers do.

The true state stays what observers and recordings see; only the controller's view and the
commands that reach the engine pass through here.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import deque
from typing import Any

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.engines.base import JointCommand, RobotState
from hrpsim.project import HardwareModelConfig


class RobotHardwareModels:
    """The hardware models of one robot."""

    def __init__(self, body: Body, config: HardwareModelConfig, timestep: float) -> None:
        self.config = config
        self.timestep = timestep
        self._rng = np.random.default_rng(config.noise_seed)
        self._resolution = _encoder_resolution(body, config)
        self._sensor_types = {s.name: s.type for s in body.sensors}
        self._lower = np.array([lk.torque_lower for lk in body.joints])
        self._upper = np.array([lk.torque_upper for lk in body.joints])
        self._measured: deque[RobotState] = deque(maxlen=config.sensor_latency + 1)
        self._pending: deque[tuple[int, JointCommand]] = deque()
        self._last_command_time: float | None = None
        self.watchdog_tripped = False
        self.dropped = 0

    # --- snapshots ---

    def memory(self) -> dict[str, Any]:
        """Everything the devices carry from tick to tick (the noise generator's state, the delayed
        readings and commands, the watchdog), for a snapshot: the same noise and delays follow."""
        return copy.deepcopy(
            {
                "rng": self._rng.bit_generator.state,
                "measured": list(self._measured),
                "pending": list(self._pending),
                "last_command_time": self._last_command_time,
                "watchdog_tripped": self.watchdog_tripped,
                "dropped": self.dropped,
            }
        )

    def restore(self, memory: dict[str, Any]) -> None:
        memory = copy.deepcopy(memory)
        self._rng.bit_generator.state = memory["rng"]
        self._measured = deque(memory["measured"], maxlen=self._measured.maxlen)
        self._pending = deque(memory["pending"])
        self._last_command_time = memory["last_command_time"]
        self.watchdog_tripped, self.dropped = memory["watchdog_tripped"], memory["dropped"]

    # --- sensor path ---

    def sense(self, state: RobotState) -> RobotState:
        """The state the controller receives at this tick."""
        self._measured.append(self._measure(state))
        oldest = self._measured[0]
        return dataclasses.replace(oldest, time=state.time, tick=state.tick)

    def _measure(self, state: RobotState) -> RobotState:
        q = state.q.copy()
        if self._resolution is not None:
            steps = np.divide(q, self._resolution, out=np.zeros_like(q), where=self._resolution > 0)
            q = np.where(self._resolution > 0, np.round(steps) * self._resolution, q)
        q = self._noisy("q", q)
        sensors = {name: self._noisy(self._sensor_types.get(name, ""), value) for name, value in state.sensors.items()}
        return dataclasses.replace(state, q=q, sensors=sensors)

    def _noisy(self, kind: str, values: np.ndarray) -> np.ndarray:
        noise = self.config.noise.get(kind)
        if noise is None:
            return values
        return values + noise.bias + (self._rng.normal(0.0, noise.std, np.shape(values)) if noise.std else 0.0)

    # --- command path ---

    def command(self, tick: int, command: JointCommand) -> None:
        """A controller's (merged) command arrived at ``tick``."""
        if self.config.drop_commands and self._rng.random() < self.config.drop_commands:
            self.dropped += 1
            return
        if command.torque is not None and self.config.saturate_torque:
            command = dataclasses.replace(command, torque=np.clip(command.torque, self._lower, self._upper))
        self._pending.append((tick + self.config.command_latency, command))

    def due(self, tick: int, time: float) -> list[JointCommand]:
        """Commands to apply at ``tick`` (in arrival order), and the watchdog's zero torques if it trips."""
        out = []
        while self._pending and self._pending[0][0] <= tick:
            out.append(self._pending.popleft()[1])
        if out:
            self._last_command_time, self.watchdog_tripped = time, False
        elif self._watchdog_trips(time):
            self.watchdog_tripped = True
            out.append(JointCommand(torque=np.zeros(len(self._lower))))
        return out

    def _watchdog_trips(self, time: float) -> bool:
        limit = self.config.watchdog
        if limit is None or self.watchdog_tripped:
            return False
        if self._last_command_time is None:
            self._last_command_time = time
        return time - self._last_command_time >= limit - 1e-12


def _encoder_resolution(body: Body, config: HardwareModelConfig) -> np.ndarray | None:
    if config.encoder_counts is None:
        return None
    gear = np.array([config.encoder_gear_ratio or lk.gear_ratio or 1.0 for lk in body.joints])
    rotary = np.array([lk.joint_type == "rotate" for lk in body.joints])
    resolution = 2.0 * np.pi / (config.encoder_counts * gear)
    # Slide joints have linear encoders whose resolution the formats do not give: left exact.
    return np.where(rotary, resolution, 0.0) if rotary.any() else None


def hardware_models_of(
    project_models: list, bodies: dict[str, Body], timestep: float
) -> dict[str, RobotHardwareModels]:
    """The hardware models of every robot the project gives ``devices`` to."""
    return {
        m.name: RobotHardwareModels(bodies[m.name], m.devices, timestep)
        for m in project_models
        if m.devices is not None and m.name in bodies
    }
