"""The controller hub's Unix channel (hrpsim/unix_channel.py): a listening socket and one channel
per connected controller, each known by an identity (``unix/N``) that the hub uses as it uses a
ZeroMQ routing id. The hub polls the file descriptors; this class accepts, reads, sends and
closes."""

from __future__ import annotations

import logging
from pathlib import Path

import zmq

from hrpsim import unix_channel
from hrpsim.errors import ProtocolError

log = logging.getLogger("hrpsim.simserver.hub")

UNIX_PREFIX = b"unix/"


class UnixPeers:
    def __init__(self, poller: zmq.Poller, *, max_message: int) -> None:
        self._poller = poller
        self._max_message = max_message
        self._listener, self.endpoint = unix_channel.listen()
        poller.register(self._listener.fileno(), zmq.POLLIN)
        self._by_identity: dict[bytes, unix_channel.Channel] = {}  # for sending
        self._by_fd: dict[int, tuple[bytes, unix_channel.Channel]] = {}  # for receiving
        self._accepted = 0

    def read(self, fd: int) -> tuple[bytes, list[bytes], bool] | None:
        """For a readable descriptor: None when it was a new connection (accepted) or not one of
        ours; else (identity, the messages now complete, whether the peer has gone)."""
        if fd == self._listener.fileno():
            self._accept()
            return None
        entry = self._by_fd.get(fd)
        if entry is None:
            return None
        who, channel = entry
        try:
            messages, closed = channel.read_ready()
        except ProtocolError as exc:
            log.warning("%s; its connection is closed", exc)
            messages, closed = [], True
        if closed:
            self._drop(fd)
        return who, messages, closed

    def send(self, who: bytes, frame: bytes, fds: tuple[int, ...] = ()) -> bool:
        channel = self._by_identity.get(who)
        if channel is None:
            return False
        try:
            channel.send(frame, fds)
            return True
        except OSError:  # closed, or reading nothing for a long while
            return False

    def close(self) -> None:
        for fd in list(self._by_fd):
            self._drop(fd)
        self._listener.close()
        Path(unix_channel.path_of(self.endpoint)).unlink(missing_ok=True)

    def _accept(self) -> None:
        self._accepted += 1
        who = UNIX_PREFIX + str(self._accepted).encode()
        channel = unix_channel.accept(
            self._listener, max_message=self._max_message, peer=f"controller connection {who.decode()}"
        )
        if channel is None:
            return
        self._by_identity[who] = channel
        self._by_fd[channel.fileno()] = (who, channel)
        self._poller.register(channel.fileno(), zmq.POLLIN)

    def _drop(self, fd: int) -> None:
        who, channel = self._by_fd.pop(fd)
        self._by_identity.pop(who, None)
        self._poller.unregister(fd)
        channel.close()
