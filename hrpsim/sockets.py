"""Socket checks for hot paths: pyzmq's ``Socket.poll`` builds a Poller per call and its enum-typed
``getsockopt`` converts flags through Python's enum machinery; a request/reply round trip made
several of each. These do the same with plain integers. And a socket monitor's events, read
without pyzmq's helper module, which loads asyncio into every process that imports it."""

from __future__ import annotations

import struct
from typing import Any

import zmq

_EVENTS = int(zmq.EVENTS)
_POLLIN = int(zmq.POLLIN)
NOBLOCK = int(zmq.NOBLOCK)  # the flag as a plain integer, for every hot-path send and receive


def readable(sock: zmq.Socket) -> bool:
    """A message (or monitor event) is waiting on ``sock`` now."""
    return bool(sock.get(_EVENTS) & _POLLIN)


def receive_within(sock: zmq.Socket, remaining_s: float, slice_s: float, *, copy: bool = True) -> Any:
    """The next frame on ``sock`` (bytes, or a Frame with ``copy=False``), waiting up to one slice,
    or ``remaining_s`` when that is less; None when none came. The socket's receive timeout must be
    the slice: a receive that waits costs less than a poll and then a receive (a poll builds and
    reads its item list every call), so only the last, shorter wait polls."""
    try:
        if remaining_s >= slice_s:
            return sock.recv(0, copy=copy)
        if sock.poll(max(0.0, remaining_s) * 1000):
            return sock.recv(NOBLOCK, copy=copy)
    except zmq.Again:
        pass
    return None


def monitor_event(frames: list[bytes]) -> dict[str, Any]:
    """A socket monitor's event: libzmq sends a 16-bit event and a 32-bit value (a file descriptor
    for connections), then the endpoint. ``{event, value, endpoint}``, as integers and bytes."""
    if len(frames) != 2 or len(frames[0]) != 6:
        raise ValueError(f"not a socket monitor event: {frames!r:.120}")
    event, value = struct.unpack("=Hi", frames[0])
    return {"event": event, "value": value, "endpoint": frames[1]}
