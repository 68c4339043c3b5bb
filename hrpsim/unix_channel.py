"""Length-prefixed messages over a Unix stream socket: the tick protocol's path within one host.

ZeroMQ hands every message to an I/O thread on each side, so one tick's state and answer wake
six threads in two processes; a Unix socket between the simulator and a controller on the same
host wakes only the two that do the work (bench/RESULTS.md, `tick`). The messages are the same
bytes as over ZeroMQ; only the framing differs: a 4-byte little-endian length before each.

The channel is offered only when the simulator runs without keys: it is protected by its socket
file's permissions (owner only), not by CurveZMQ.
"""

from __future__ import annotations

import os
import secrets
import select
import socket
import struct
import tempfile
import time
from pathlib import Path

from hrpsim.errors import ProtocolError

SCHEME = "unix://"
_HEADER = struct.Struct("<I")
SEND_TIMEOUT_S = 5.0  # a peer that reads nothing for this long is treated as gone
_READ_CHUNK = 1 << 18
_MAX_FDS = 8  # descriptors taken with one read; the fast path passes 3 (hrpsim/shared_state.py)


def framed(data: bytes) -> bytes:
    """A message as it travels on a local stream: its length (4 bytes, little-endian), then itself."""
    return _HEADER.pack(len(data)) + data


def cut(buffer: bytearray, *, max_message: int, peer: str) -> list[bytes]:
    """Take the complete messages off the front of ``buffer`` (what has been read of a stream of
    :func:`framed` messages); a message still arriving stays. ProtocolError when one announces more
    than ``max_message`` bytes."""
    messages = []
    start = 0
    while len(buffer) - start >= _HEADER.size:
        (size,) = _HEADER.unpack_from(buffer, start)
        if size > max_message:
            raise ProtocolError(f"a message of {size} bytes from the {peer} exceeds the limit of {max_message}")
        end = start + _HEADER.size + size
        if len(buffer) < end:
            break
        messages.append(bytes(buffer[start + _HEADER.size : end]))
        start = end
    del buffer[:start]
    return messages


class Channel:
    """One connected end: ``send`` whole messages, ``read_ready``/``receive`` whole messages back."""

    def __init__(self, sock: socket.socket, *, max_message: int, peer: str, takes_fds: bool = False) -> None:
        """``takes_fds``: keep file descriptors the peer passes (:attr:`fds`); else they are closed."""
        # Non-blocking, waits done here with select: a socket with a timeout makes Python poll before
        # every send and receive, a system call more per message.
        sock.setblocking(False)
        self._sock = sock
        self._buffer = bytearray()
        self._scratch = bytearray(_READ_CHUNK)  # reused: a fresh 1 MB bytes per recv() costs an mmap
        self._scratch_view = memoryview(self._scratch)
        self._pending: list[bytes] = []  # complete messages not handed out yet
        self.max_message = max_message
        self.peer = peer  # who is at the other end, for error messages
        self._takes_fds = takes_fds
        self.fds: list[int] = []  # descriptors passed with the messages read so far, in order

    def fileno(self) -> int:
        return self._sock.fileno()

    @property
    def pending(self) -> bool:
        """Whether complete messages have been read and not handed out yet."""
        return bool(self._pending)

    def send(self, data: bytes, fds: tuple[int, ...] = ()) -> None:
        """The whole message, or OSError (the peer is gone, or read nothing for SEND_TIMEOUT_S).
        ``fds``: descriptors passed along with the message's first bytes (SCM_RIGHTS)."""
        view = memoryview(framed(data))
        deadline = None
        if fds:
            view = view[self._send_with_fds(view, fds) :]
        while view:
            try:
                view = view[self._sock.send(view) :]
                continue
            except (BlockingIOError, InterruptedError):
                pass
            deadline = deadline or time.monotonic() + SEND_TIMEOUT_S
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([], [self._sock], [], remaining)[1]:
                raise TimeoutError(f"the {self.peer} read nothing for {SEND_TIMEOUT_S:g} s")

    def _send_with_fds(self, view: memoryview, fds: tuple[int, ...]) -> int:
        ready = select.select([], [self._sock], [], SEND_TIMEOUT_S)[1]
        if not ready:
            raise TimeoutError(f"the {self.peer} read nothing for {SEND_TIMEOUT_S:g} s")
        return socket.send_fds(self._sock, [view], list(fds))

    def read_ready(self) -> tuple[list[bytes], bool]:
        """When the socket is readable: every message now complete, and whether the peer has closed.
        ProtocolError when a message announces more than ``max_message`` bytes."""
        closed = self._fill()
        messages, self._pending = self._pending, []
        return messages, closed

    def receive(self, timeout: float) -> bytes | None:
        """The next message within ``timeout`` s (None if none came); EOFError if the peer closed."""
        deadline = time.monotonic() + timeout
        while not self._pending:
            remaining = deadline - time.monotonic()
            if not select.select([self._sock], [], [], max(0.0, remaining))[0]:
                return None
            if self._fill() and not self._pending:
                raise EOFError(f"the {self.peer} closed the connection")
        return self._pending.pop(0)

    def close(self) -> None:
        self._sock.close()

    def _fill(self) -> bool:
        """Read what has arrived and cut it into messages; True when the peer has closed."""
        try:
            size = self._receive_with_fds() if self._takes_fds else self._sock.recv_into(self._scratch)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        self._buffer += self._scratch_view[:size]
        self._pending.extend(cut(self._buffer, max_message=self.max_message, peer=self.peer))
        return size == 0

    def _receive_with_fds(self) -> int:
        size, ancillary, _, _ = self._sock.recvmsg_into([self._scratch], socket.CMSG_SPACE(_MAX_FDS * 4))
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                count = len(data) // 4
                self.fds.extend(struct.unpack(f"<{count}i", data[: count * 4]))
        return size


def fresh_path(suffix: str) -> Path:
    """A new socket file name for this process's hub in the temporary folder."""
    return Path(tempfile.gettempdir()) / f"hrpsim-hub-{os.getpid()}-{secrets.token_hex(4)}{suffix}"


def listen(backlog: int = 16) -> tuple[socket.socket, str]:
    """A listening socket on a fresh path in the temporary folder (owner only) and its endpoint."""
    path = fresh_path(".unix")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)  # the socket file is created rw for its owner only
    try:
        listener.bind(str(path))
    finally:
        os.umask(old_mask)
    listener.listen(backlog)
    listener.setblocking(False)
    return listener, SCHEME + str(path)


def accept(listener: socket.socket, *, max_message: int, peer: str) -> Channel | None:
    try:
        sock, _ = listener.accept()
    except (BlockingIOError, InterruptedError):
        return None
    return Channel(sock, max_message=max_message, peer=peer)


def connect(endpoint: str, *, timeout: float, max_message: int, peer: str, takes_fds: bool = False) -> Channel:
    """Connect to ``unix://PATH``; OSError if nothing listens there."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)  # for the connect only: a Channel is non-blocking
    try:
        sock.connect(path_of(endpoint))
    except OSError:
        sock.close()
        raise
    return Channel(sock, max_message=max_message, peer=peer, takes_fds=takes_fds)


def path_of(endpoint: str) -> str:
    return endpoint[len(SCHEME) :]
