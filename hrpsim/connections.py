"""A bound on the connections one server socket holds, and with keys a bound per key, so one key
cannot crowd out the others.

Past the bound per key, that key's connection idle the longest is closed. Past the bound of the
socket, the crowding group loses its connection idle the longest: the key holding the most
connections, where connections that have not made a request yet (their key is not known) count as
one group of their own, so a key that floods the socket, or whose closed connections keep coming
back unannounced, loses its own connections while the other keys' stay, however idle. Without keys
there are two groups: the connections that have asked and those that have not.

A flood closes connections by the thousand: each bound's warning is written at most once every
WARN_INTERVAL_S seconds, with the number of connections it closed meanwhile.

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
from collections import Counter, OrderedDict

import zmq

from hrpsim.sockets import monitor_event, readable

ENV_MAX_CONNECTIONS = "HRPSIM_MAX_CONNECTIONS"
DEFAULT_MAX_CONNECTIONS = 256
ENV_MAX_CONNECTIONS_PER_KEY = "HRPSIM_MAX_CONNECTIONS_PER_KEY"
DEFAULT_MAX_CONNECTIONS_PER_KEY = 32
LOOK_INTERVAL = 0.01  # seconds between looks at the connections opened and closed
WARN_INTERVAL_S = 10.0  # at most one warning per bound in this many seconds
_UNANNOUNCED = "(connections that have made no request yet)"  # the group of a connection whose key is unknown

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


class ThrottledWarning:
    """A warning written at once, then at most once every ``interval`` s, counting what it stood for."""

    def __init__(self, interval: float = WARN_INTERVAL_S) -> None:
        self.interval = interval
        self._unsaid = 0
        self._next = 0.0

    def warn(self, message: str, *args: object) -> None:
        self._unsaid += 1
        now = time.monotonic()
        if now < self._next:
            return
        times = f" ({self._unsaid} times since the last such warning)" if self._unsaid > 1 else ""
        log.warning(message + times, *args)
        self._unsaid, self._next = 0, now + self.interval


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
        self._key_warning, self._bound_warning = ThrottledWarning(), ThrottledWarning()

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
        self._key_warning.warn(
            "%s: key %s holds more than %d connections: closing its one idle the longest",
            self.who,
            _key_name(key),
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
            group = self._crowding_group()
            fd = next(f for f in self._used if self._group_of(f) == group)
            self._bound_warning.warn(
                "%s holds more than %d connections: closing the one idle the longest of %s",
                self.who,
                self.limit,
                group if group == _UNANNOUNCED else f"key {_key_name(group)}" if group else "the connections",
            )
            self._forget(fd)
            _shut_down(fd)

    def _group_of(self, fd: int) -> str | None:
        """The key a connection's requests came with (None without keys), or the group of those that
        have made no request yet."""
        return self._key.get(fd, _UNANNOUNCED)

    def _crowding_group(self) -> str | None:
        """The group holding the most connections (of two as large, the one whose idlest is idler)."""
        counts = Counter(self._group_of(fd) for fd in self._used)
        most = max(counts.values())
        return next(group for group in map(self._group_of, self._used) if counts[group] == most)

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


def _key_name(key: str) -> str:
    """A key's name out of its User-Id (``role:name:...``)."""
    return key.partition(":")[2].partition(":")[0] or key


def _shut_down(fd: int) -> None:
    """End the TCP connection under ``fd`` without closing zmq's descriptor (zmq sees the peer
    go and closes it itself)."""
    try:
        with socket.socket(fileno=os.dup(fd)) as conn:
            conn.shutdown(socket.SHUT_RDWR)
    except OSError as exc:
        log.info("could not shut down connection %d: %s", fd, exc)
