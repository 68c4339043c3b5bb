"""The kinds of controller peer the hub serves alike: a process at the other end of a connection
(tcp, ipc or the Unix channel: simserver/hub_wire.py), the same reached through shared memory
(simserver/shm_peers.py), and a Controller object in the simulator's own process. The hub hands a
process its state (a frame, or the segment written in place) and receives its answer later; it asks
an in-process peer for its answer directly. Everything else (admission, order, merging, policies,
statistics) is the same for all."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from hrpsim import tick_protocol as proto
from hrpsim.controllers.base import Controller
from hrpsim.controllers.command import answer_fields
from hrpsim.controllers.state import State
from hrpsim.engines.base import RobotState
from hrpsim.simserver.hub_wire import NoWire, WireTransport


class Peer(Protocol):
    in_process: bool
    identity: bytes | None  # the connection's identity on the wire; None in process

    def send(self, frame: bytes) -> bool:
        """Send a protocol message (state, welcome, error, bye); False when it could not go."""
        ...

    def send_state(self, state: RobotState, frame: Callable[[], bytes]) -> bool:
        """Hand over this tick's state (``frame()`` encodes it, for a peer that sends messages)."""
        ...

    def welcome_fields(self) -> dict[str, Any]:
        """What the welcome says about this peer's transport beyond the protocol's fields."""
        ...

    def send_welcome(self, frame: bytes) -> bool: ...

    def stop(self) -> None:
        """The controller was detached."""
        ...


class WirePeer:
    in_process = False

    def __init__(self, wire: WireTransport | NoWire, identity: bytes) -> None:
        self._wire = wire
        self.identity = identity

    def send(self, frame: bytes) -> bool:
        return self._wire.send(self.identity, frame)

    def send_state(self, state: RobotState, frame: Callable[[], bytes]) -> bool:
        return self.send(frame())

    def welcome_fields(self) -> dict[str, Any]:
        return {}

    def send_welcome(self, frame: bytes) -> bool:
        return self.send(frame)

    def stop(self) -> None:
        pass  # the process was told (an error or bye) and goes on by itself


class InProcessPeer:
    """A Controller run at its turns inside the simulator. It reads no protocol messages: a welcome,
    an error or a bye has nobody to go to."""

    in_process = True
    identity = None

    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    def send(self, frame: bytes) -> bool:
        return False

    def send_state(self, state: RobotState, frame: Callable[[], bytes]) -> bool:
        return False  # the hub asks it for its answer instead (answer())

    def welcome_fields(self) -> dict[str, Any]:
        return {}

    def send_welcome(self, frame: bytes) -> bool:
        return False

    def answer(self, tick: int, state: State, joint_names: list[str], index_of: dict[str, int]) -> proto.Command:
        """The controller's command for ``tick``, given its ``state``, checked as a wire command is;
        raises what its ``control()`` raised, or RequestError for a malformed answer."""
        self.controller.sees(state)  # its robot model (self.model) follows this state when next read
        result = self.controller.control(state)
        if type(result) is np.ndarray:  # the usual answer, one torque per joint: its values' checks only
            return proto.torque_answer(tick, result, joint_names=joint_names)  # its values' kind is checked there
        fields = proto.command_fields(tick, **answer_fields(result))
        return proto.parse_command(fields, joint_names=joint_names, index_of=index_of, expected_tick=tick)

    def stop(self) -> None:
        self.controller.stop()
