"""A bound on the connections one server socket holds: past it, the one idle the longest is closed.

zmq accepts every TCP connection and offers no call to close one, so a peer could open thousands
and keep them idle. A socket monitor tells which connections exist (by file descriptor); each
request says which one it came on (``SRCFD``); when there are more than the bound, the least
recently used one is shut down at the TCP level, and zmq then closes it as it would a dropped peer.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import OrderedDict

import zmq
from zmq.utils.monitor import parse_monitor_message

from hrpsim.sockets import readable

ENV_MAX_CONNECTIONS = "HRPSIM_MAX_CONNECTIONS"
DEFAULT_MAX_CONNECTIONS = 256

log = logging.getLogger("hrpsim.connections")


def max_connections() -> int:
    """``$HRPSIM_MAX_CONNECTIONS`` or 256: enough for a lab's controllers, viewers and tools."""
    try:
        return max(1, int(os.environ.get(ENV_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS)))
    except ValueError:
        return DEFAULT_MAX_CONNECTIONS


class ConnectionBound:
    def __init__(self, sock: zmq.Socket, limit: int, who: str) -> None:
        self.limit, self.who = limit, who
        self._sock = sock
        self._monitor = sock.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)
        self._used: OrderedDict[int, None] = OrderedDict()  # fd, least recently used first

    def __len__(self) -> int:
        return len(self._used)

    def seen(self, frame: zmq.Frame) -> None:
        """A request arrived on ``frame``'s connection: it is the most recently used now."""
        try:
            fd = int(frame.get(zmq.SRCFD))
        except (zmq.ZMQError, TypeError, ValueError):
            return
        if fd in self._used:
            self._used.move_to_end(fd)

    def enforce(self) -> None:
        """Take in the connections opened and closed since the last look; close the idlest ones
        while there are more than the bound."""
        self._drain()
        while len(self._used) > self.limit:
            fd, _ = self._used.popitem(last=False)
            log.warning("%s holds more than %d connections: closing the one idle the longest", self.who, self.limit)
            _shut_down(fd)

    def close(self) -> None:
        try:
            self._sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(linger=0)

    def _drain(self) -> None:
        while readable(self._monitor):
            event = parse_monitor_message(self._monitor.recv_multipart())
            fd = int(event["value"])
            if event["event"] == zmq.EVENT_ACCEPTED:
                self._used[fd] = None
            else:
                self._used.pop(fd, None)


def _shut_down(fd: int) -> None:
    """End the TCP connection under ``fd`` without closing zmq's descriptor (zmq sees the peer
    go and closes it itself)."""
    try:
        with socket.socket(fileno=os.dup(fd)) as conn:
            conn.shutdown(socket.SHUT_RDWR)
    except OSError as exc:
        log.info("could not shut down connection %d: %s", fd, exc)
