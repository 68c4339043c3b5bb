"""A bound on the connections one server socket holds: past it, the one idle the longest is closed.
With keys, a second bound on the connections of each key, so one key cannot crowd out the others:
past it, that key's connection idle the longest is closed.

zmq accepts every TCP connection and offers no call to close one, so a peer could open thousands
and keep them idle. A socket monitor tells which connections exist (by file descriptor); each
request says which one it came on (``SRCFD``); when there are more than the bound, the least
recently used one is shut down at the TCP level, and zmq then closes it as it would a dropped peer.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections import OrderedDict

import zmq

from hrpsim.sockets import monitor_event, readable

ENV_MAX_CONNECTIONS = "HRPSIM_MAX_CONNECTIONS"
DEFAULT_MAX_CONNECTIONS = 256
ENV_MAX_CONNECTIONS_PER_KEY = "HRPSIM_MAX_CONNECTIONS_PER_KEY"
DEFAULT_MAX_CONNECTIONS_PER_KEY = 32
LOOK_INTERVAL = 0.01  # seconds between looks at the connections opened and closed

log = logging.getLogger("hrpsim.connections")


def max_connections() -> int:
    """``$HRPSIM_MAX_CONNECTIONS`` or 256: enough for a lab's controllers, viewers and tools."""
    try:
        return max(1, int(os.environ.get(ENV_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS)))
    except ValueError:
        return DEFAULT_MAX_CONNECTIONS


def max_connections_per_key() -> int:
    """``$HRPSIM_MAX_CONNECTIONS_PER_KEY`` or 32: a process or two per key, each with a few sockets."""
    try:
        return max(1, int(os.environ.get(ENV_MAX_CONNECTIONS_PER_KEY, DEFAULT_MAX_CONNECTIONS_PER_KEY)))
    except ValueError:
        return DEFAULT_MAX_CONNECTIONS_PER_KEY


def _key_of(frame: zmq.Frame) -> str | None:
    """The key a request came with (CURVE's User-Id), None without keys."""
    try:
        return str(frame.get("User-Id"))
    except zmq.ZMQError:
        return None


class ConnectionBound:
    def __init__(self, sock: zmq.Socket, limit: int, who: str, *, per_key: int | None = None) -> None:
        self.limit, self.who = limit, who
        self.per_key = max_connections_per_key() if per_key is None else per_key
        self._sock = sock
        self._monitor = sock.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)
        self._used: OrderedDict[int, None] = OrderedDict()  # fd, least recently used first
        self._key: dict[int, str | None] = {}  # fd -> the key its requests came with (None: no keys)
        self._next_look = 0.0  # monotonic time of the next look at the monitor from enforce()
        self._per_key: dict[str, int] = {}  # key -> how many connections it holds

    def __len__(self) -> int:
        return len(self._used)

    def seen(self, frame: zmq.Frame) -> None:
        """A request arrived on ``frame``'s connection: it is the most recently used now."""
        try:
            fd = int(frame.get(zmq.SRCFD))
        except (zmq.ZMQError, TypeError, ValueError):
            return
        if fd not in self._used:
            self._drain()  # events up to now: a closed connection that had this descriptor is forgotten
            self._used[fd] = None  # and its own ACCEPTED event may still be on its way
        self._used.move_to_end(fd)
        if fd in self._key:
            return
        # A connection's first request: its key and the bounds are looked at once per connection.
        key = self._key[fd] = _key_of(frame)
        if key is not None:
            self._per_key[key] = self._per_key.get(key, 0) + 1
            if self._per_key[key] > self.per_key:
                self._close_idlest_of(key)
        self._close_beyond_the_bound()

    def _close_idlest_of(self, key: str) -> None:
        fd = next(f for f in self._used if self._key.get(f) == key)
        log.warning(
            "%s: key %s holds more than %d connections: closing its one idle the longest",
            self.who,
            key.partition(":")[2].partition(":")[0] or key,
            self.per_key,
        )
        self._forget(fd)
        _shut_down(fd)

    def _forget(self, fd: int) -> None:
        self._used.pop(fd, None)
        key = self._key.pop(fd, None)
        if key is not None:
            self._per_key[key] -= 1

    def enforce(self) -> None:
        """Take in the connections opened and closed since the last look; close the idlest ones
        while there are more than the bound. Looks at most every LOOK_INTERVAL s: a serving loop
        calls it once per request, and a connection's first request is looked at in :meth:`seen`."""
        now = time.monotonic()
        if now < self._next_look:
            return
        self._next_look = now + LOOK_INTERVAL
        self._drain()
        self._close_beyond_the_bound()

    def _close_beyond_the_bound(self) -> None:
        while len(self._used) > self.limit:
            fd = next(iter(self._used))
            log.warning("%s holds more than %d connections: closing the one idle the longest", self.who, self.limit)
            self._forget(fd)
            _shut_down(fd)

    def close(self) -> None:
        try:
            self._sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(linger=0)

    def _drain(self) -> None:
        while readable(self._monitor):
            event = monitor_event(self._monitor.recv_multipart())
            fd = int(event["value"])
            if event["event"] == zmq.EVENT_ACCEPTED:
                self._used.setdefault(fd, None)  # already there when its first request came first
            else:
                self._forget(fd)


def _shut_down(fd: int) -> None:
    """End the TCP connection under ``fd`` without closing zmq's descriptor (zmq sees the peer
    go and closes it itself)."""
    try:
        with socket.socket(fileno=os.dup(fd)) as conn:
            conn.shutdown(socket.SHUT_RDWR)
    except OSError as exc:
        log.info("could not shut down connection %d: %s", fd, exc)
