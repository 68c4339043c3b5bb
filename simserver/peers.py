"""The two kinds of controller peer the hub serves alike: a process at the other end of a connection
(tcp, ipc or the Unix channel: simserver/hub_wire.py), and a Controller object in the simulator's
own process. The hub sends a wire peer its state as a frame and receives its answer later; it asks
an in-process peer for its answer directly. Everything else (admission, order, merging, policies,
statistics) is the same for both."""

from __future__ import annotations

from typing import Protocol

from hrpsim import tick as proto
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

    def answer(self, tick: int, seen: RobotState, joint_names: list[str], index_of: dict[str, int]) -> proto.Command:
        """The controller's command for ``tick``, checked as a wire command is; raises what its
        ``control()`` raised, or RequestError for a malformed answer."""
        state = State(seen.to_wire(), self.controller.joints)
        self.controller.sees(state)  # its robot model (self.model) follows this state when next read
        fields = proto.command_fields(tick, **answer_fields(self.controller.control(state)))
        return proto.parse_command(fields, joint_names=joint_names, index_of=index_of, expected_tick=tick)

    def stop(self) -> None:
        self.controller.stop()
