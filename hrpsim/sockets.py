"""Socket checks for hot paths: pyzmq's ``Socket.poll`` builds a Poller per call and its enum-typed
``getsockopt`` converts flags through Python's enum machinery; a request/reply round trip made
several of each. These do the same with plain integers."""

from __future__ import annotations

import zmq

_EVENTS = int(zmq.EVENTS)
_POLLIN = int(zmq.POLLIN)


def readable(sock: zmq.Socket) -> bool:
    """A message (or monitor event) is waiting on ``sock`` now."""
    return bool(sock.get(_EVENTS) & _POLLIN)


def poller_for(sock: zmq.Socket) -> zmq.Poller:
    """A Poller watching ``sock`` for input, to keep and reuse."""
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    return poller
