"""The controller hub's shared memory peers (hrpsim/shared_state.py): a controller on the Unix channel
that asked for the fast path in its hello gets a segment and two doorbells with its welcome. Its
states are written into the segment instead of being sent, and its commands are read out of it when
its doorbell rings; everything else (errors, bye, a state with readings) still goes on its channel,
whose end is what tells the hub the controller has gone (simserver/unix_peers.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import zmq

from hrpsim import shared_state
from hrpsim.engines.base import RobotState

log = logging.getLogger("hrpsim.simserver.hub")

Sender = Callable[[bytes, bytes, tuple[int, ...]], bool]  # (identity, frame, descriptors) -> sent
CommandHandler = Callable[[bytes, dict[str, Any]], None]  # (identity, the command's fields)


class SharedMemoryPeer:
    """A controller process reached through a shared memory segment (and its Unix channel)."""

    in_process = False

    def __init__(self, peers: SharedMemoryPeers, identity: bytes, layout: shared_state.Layout) -> None:
        self.identity = identity
        self._peers = peers
        self.segment = shared_state.create(layout, "hrpsim-" + identity.decode().replace("/", "-"))
        self.to_controller = shared_state.Doorbell()
        self.from_controller = shared_state.Doorbell()
        self._commands_read = 0

    def send(self, frame: bytes) -> bool:
        return self._peers.send(self.identity, frame, ())

    def send_state(self, state: RobotState, frame: Callable[[], bytes]) -> bool:
        if not self.segment.write_state(state.to_wire()):
            return self.send(frame())
        self.to_controller.ring()
        return True

    def welcome_fields(self) -> dict[str, Any]:
        return {"shared_memory": self.segment.layout.to_wire()}

    def send_welcome(self, frame: bytes) -> bool:
        fds = (self.segment.fd, self.to_controller.fd, self.from_controller.fd)
        return self._peers.send(self.identity, frame, fds)

    def has_command(self) -> bool:
        """Whether the controller has written a command not taken yet (a look at memory, no system call)."""
        return int(self.segment.header[shared_state.COMMAND_SEQ]) != self._commands_read

    def take_command(self) -> dict[str, Any] | None:
        """The command the controller wrote since the last one taken (its tick and full-length
        arrays: hrpsim.tick_protocol.parse_full_command reads it), or None (a ring already served)."""
        self.from_controller.clear()
        written = int(self.segment.header[shared_state.COMMAND_SEQ])
        if written == self._commands_read:
            return None
        self._commands_read = written
        return self.segment.read_command()

    def stop(self) -> None:
        self._peers.forget(self)

    def close(self) -> None:
        for part in (self.segment, self.to_controller, self.from_controller):
            part.close()


class SharedMemoryPeers:
    """The hub's shared memory peers, their command doorbells registered with the hub's poller."""

    def __init__(self, poller: zmq.Poller, *, send: Sender, on_command: CommandHandler) -> None:
        self._poller = poller
        self._send = send
        self._on_command = on_command
        self._by_doorbell: dict[int, SharedMemoryPeer] = {}

    def open(self, identity: bytes, layout: shared_state.Layout) -> SharedMemoryPeer:
        peer = SharedMemoryPeer(self, identity, layout)
        self._by_doorbell[peer.from_controller.fd] = peer
        self._poller.register(peer.from_controller.fd, zmq.POLLIN)
        return peer

    def send(self, identity: bytes, frame: bytes, fds: tuple[int, ...]) -> bool:
        return self._send(identity, frame, fds)

    def written(self) -> list[tuple[int, int]]:
        """The doorbells of peers with a command waiting, as a poller would report them readable:
        a spinning wait looks here first, without a system call."""
        return [(fd, zmq.POLLIN) for fd, peer in self._by_doorbell.items() if peer.has_command()]

    def read(self, fd: int) -> bool:
        """For a readable descriptor: hand its peer's new command to the hub; False if not ours."""
        peer = self._by_doorbell.get(fd)
        if peer is None:
            return False
        fields = peer.take_command()
        if fields is not None:
            self._on_command(peer.identity, fields)
        return True

    def forget(self, peer: SharedMemoryPeer) -> None:
        """The controller was detached: its segment and doorbells are closed (the controller's
        mapping, if it still lives, is the segment's last user)."""
        if self._by_doorbell.pop(peer.from_controller.fd, None) is peer:
            self._poller.unregister(peer.from_controller.fd)
            peer.close()

    def close(self) -> None:
        for peer in list(self._by_doorbell.values()):
            self.forget(peer)
