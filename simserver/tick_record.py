"""The record of one tick, and the observers that receive it.

The tick loop (simserver/loop.py) makes one :class:`TickRecord` per tick, after the commands of
that tick are known and before the world integrates, and hands it to every observer in order.
An observer watches; it never changes the world. The state publisher, the run summary and the
recorder are observers; adding a feature that watches the simulation is adding one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from hrpsim.engines.base import Engine, LinkStates, RobotState


@dataclass(slots=True)
class AppliedCommand:
    """One controller's answer for one tick: what it sent (``received``: the message's fields,
    partial arrays and all) and the full-length arrays the robot holds after merging it (the held
    arrays themselves: this tick's values while the tick lasts; an observer that keeps them for
    later keeps copies)."""

    controller: str
    robot: str
    received: dict[str, Any]
    torque: np.ndarray | None = None
    q_ref: np.ndarray | None = None
    dq_ref: np.ndarray | None = None
    modes: dict[str, str] | None = None
    rtt_us: float | None = None  # state sent -> this command received


@dataclass
class ControllerEvent:
    """Something that happened to a controller: ``attach``, ``detach``, ``miss``, ``policy``, ``error``."""

    controller: str
    robot: str
    kind: str
    detail: str = ""


class TickRecord:
    """What happened in tick ``tick`` (simulated time ``time``, before the step).

    States and link states are read from the engine on first use and kept, so an observer pays
    only for what it reads and every observer sees the same values. Made every tick: a plain
    class of slots, cheaper to make than a dataclass with default factories.
    """

    __slots__ = (
        "_contacts",
        "_links",
        "_states",
        "commands",
        "disturbances",
        "engine",
        "events",
        "readings",
        "tick",
        "time",
    )

    def __init__(self, tick: int, time: float, engine: Engine) -> None:
        self.tick, self.time, self.engine = tick, time, engine
        self.commands: list[AppliedCommand] = []
        self.events: list[ControllerEvent] = []
        # range and vision readings that reached the simulator this tick: model -> sensor -> reading
        self.readings: dict[str, dict[str, dict[str, Any]]] = {}
        # external forces pushes put on links this tick: {robot, link, force, torque} (world, at the link origin)
        self.disturbances: list[dict[str, Any]] = []
        self._states: dict[str, RobotState] = {}
        self._links: dict[str, LinkStates] = {}
        self._contacts: list[dict[str, Any]] | None = None

    def state(self, robot: str) -> RobotState:
        """The robot's state at this tick (what its controllers were sent)."""
        cached = self._states.get(robot)
        if cached is None:
            cached = self._states[robot] = self.engine.read(robot)
        return cached

    def root_height(self, robot: str) -> float:
        """The height of the robot's root at this tick: from its state if it was read, else its pose."""
        cached = self._states.get(robot)
        if cached is not None:
            return cached.root_position[2]
        return self.engine.root_height(robot)

    def links(self, model: str) -> LinkStates:
        cached = self._links.get(model)
        if cached is None:
            cached = self._links[model] = self.engine.link_states(model)
        return cached

    def contacts(self) -> list[dict[str, Any]]:
        """This tick's contact points as the engine reports them (Engine.contact_points)."""
        if self._contacts is None:
            self._contacts = self.engine.contact_points()
        return self._contacts

    @property
    def robots(self) -> list[str]:
        return self.engine.robots


class Observer(Protocol):
    """Receives every tick record of a run. ``begin`` comes before the first tick of a run (and
    after a reset), ``end`` when the run ends for any reason, with the summary so far.

    One that holds records before passing them on may also have ``flush()``: the loop calls it
    whenever it stops ticking for now (a pause, the end of a run, steps served), and one with
    figures for the run summary ``contribute(summary)``, which adds them to the summary dict."""

    def begin(self, engine: Engine) -> None: ...

    def observe(self, record: TickRecord) -> None: ...

    def end(self, summary: dict[str, Any]) -> None: ...
