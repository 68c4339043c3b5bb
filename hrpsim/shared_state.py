"""The tick protocol's fast path on one host: a robot's state and a controller's command written in
place in a shared memory segment, with an eventfd ("doorbell") rung after each write.

The simulator makes the segment (an anonymous ``memfd``, so it has no name and cannot outlive the two
processes that map it) and two eventfds, and passes the three descriptors to the controller with the
welcome over the Unix channel (hrpsim/unix_channel.py). Nothing on this path is encoded: numbers are
little-endian float64 at fixed offsets, and each side bumps a sequence counter after its write and
rings the other's doorbell (one ``write`` system call). The layout is in docs/protocol.md.

Everything else (hello, welcome, errors, bye, a state with range or vision readings, a command with
drive modes, joint names or sensor switches) still travels as msgpack messages on the Unix channel,
whose end also tells either side that the other has gone.
"""

from __future__ import annotations

import math
import mmap
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from hrpsim.errors import ProtocolError

MAGIC = 0x53505248  # "HRPS" little-endian
VERSION = 1
HEADER_BYTES = 64
STATE_SEQ, COMMAND_SEQ = 2, 3  # the header's u64 words counting states and commands written
COMMAND_ARRAYS = ("torque", "q_ref", "dq_ref")  # in the command block's order; bit i of its mask
_ROOT = (("root_position", (3,)), ("root_rotation", (3, 3)), ("root_velocity", (6,)))


def available() -> bool:
    """Whether this platform has what the fast path needs (Linux: memfd and eventfd)."""
    return hasattr(os, "memfd_create") and hasattr(os, "eventfd")


@dataclass(frozen=True)
class Layout:
    """Where everything sits in one robot's segment (byte offsets from its start)."""

    joints: int
    sensors: tuple[tuple[str, int], ...]  # (name, number of values), in the state block's order

    @property
    def sensor_values(self) -> int:
        return sum(count for _, count in self.sensors)

    @property
    def state(self) -> int:
        return HEADER_BYTES

    @property
    def state_bytes(self) -> int:
        return 8 * (2 + 3 * self.joints + 18 + self.sensor_values)

    @property
    def command(self) -> int:
        return self.state + self.state_bytes

    @property
    def size(self) -> int:
        return self.command + 8 * (2 + 3 * self.joints)

    def to_wire(self) -> dict[str, Any]:
        """The welcome's ``shared_memory`` field."""
        return {
            "version": VERSION,
            "size": self.size,
            "joints": self.joints,
            "state": self.state,
            "command": self.command,
            "sensors": [[name, count] for name, count in self.sensors],
        }

    @classmethod
    def from_wire(cls, fields: dict[str, Any]) -> Layout:
        try:
            layout = cls(int(fields["joints"]), tuple((str(n), int(c)) for n, c in fields["sensors"]))
            mismatch = [k for k in ("size", "state", "command") if fields[k] != getattr(layout, k)]
        except (KeyError, TypeError, ValueError) as exc:
            raise ProtocolError(f"welcome field 'shared_memory' is malformed: {exc!r}") from None
        if fields.get("version") != VERSION or mismatch:
            raise ProtocolError(
                f"welcome field 'shared_memory' describes layout version {fields.get('version')!r} "
                f"(this side reads {VERSION}; offsets differing: {mismatch}): run the same hrpsim on both sides"
            )
        return layout


def layout_for(joints: int, sensors: dict[str, np.ndarray]) -> Layout:
    """The layout for a robot whose states carry ``sensors`` (name -> 1-D readings)."""
    return Layout(joints, tuple((name, int(np.size(value))) for name, value in sensors.items()))


class Segment:
    """One mapped segment: numpy views on its header, state block and command block."""

    def __init__(self, fd: int, layout: Layout, *, create: bool) -> None:
        if create:
            os.ftruncate(fd, layout.size)
        elif os.fstat(fd).st_size < layout.size:
            raise ProtocolError(f"the shared memory segment is smaller than its layout's {layout.size} bytes")
        self.fd = fd
        self.layout = layout
        self._map = mmap.mmap(fd, layout.size)
        n = layout.joints
        self.header = np.frombuffer(self._map, dtype="<u8", count=HEADER_BYTES // 8)
        self._state_ints = np.frombuffer(self._map, dtype="<i8", count=1, offset=layout.state)
        self._state = np.frombuffer(self._map, dtype="<f8", count=layout.state_bytes // 8 - 1, offset=layout.state + 8)
        self._command_head = np.frombuffer(self._map, dtype="<i8", count=2, offset=layout.command)
        self._command = np.frombuffer(self._map, dtype="<f8", count=3 * n, offset=layout.command + 16).reshape(3, n)
        # (field, shape), then where each sits in the state's float block
        arrays = (("q", (n,)), ("dq", (n,)), ("tau", (n,)), *_ROOT)
        spans = _spans([(key, int(np.prod(shape))) for key, shape in arrays], 1)
        # (field, slice, shape to give it or None for a flat array: most need no reshape)
        self._array_spans = [
            (key, span, shape if len(shape) > 1 else None)
            for (key, span), (_, shape) in zip(spans, arrays, strict=True)
        ]
        self._array_views = [
            (key, self._state[span].reshape(shape)) for (key, span), (_, shape) in zip(spans, arrays, strict=True)
        ]
        self._sensor_spans = _spans(list(layout.sensors), 1 + 3 * n + 18)
        self._sensor_views = [(name, self._state[span]) for name, span in self._sensor_spans]
        # q, dq, tau and the root's arrays, one run of the block: one finiteness test covers them all
        self._arrays_span = slice(1, 1 + 3 * n + 18)
        self.state_finite = False  # whether the arrays of the state last read are all finite
        if create:
            self.header[:2] = (MAGIC | (VERSION << 32), n | (layout.sensor_values << 32))
        elif int(self.header[0]) != MAGIC | (VERSION << 32):
            raise ProtocolError("the shared memory segment does not start with the hrpsim magic and version 1")

    # --- the state block (simulator writes, controller reads) ---

    def write_state(self, fields: dict[str, Any]) -> bool:
        """Write one state (the fields of a ``state`` message) and count it; False when its sensors do
        not fit the layout (readings of range or vision sensors: that state goes as a message)."""
        sensors = fields["sensors"]
        if len(sensors) != len(self._sensor_views):
            return False
        try:
            for name, view in self._sensor_views:
                view[:] = sensors[name]
        except (KeyError, ValueError):
            return False
        self._state_ints[0] = fields["tick"]
        self._state[0] = fields["time"]
        for key, view in self._array_views:
            view[...] = fields[key]
        self.header[STATE_SEQ] += 1
        return True

    def read_state(self) -> dict[str, Any]:
        """The state last written, as the fields of a ``state`` message (copies: the next write
        does not change them). ``state_finite`` tells whether its arrays are all finite (one test
        over the block; a reader that finds them so needs no check array by array)."""
        values = self._state.copy()
        arrays = values[self._arrays_span]
        # The sum of squares is finite only if every value is (a NaN or an infinity carries through;
        # values beyond 1e154 overflow it too, and then only cost the full check): one BLAS call.
        self.state_finite = math.isfinite(arrays.dot(arrays))
        fields: dict[str, Any] = {"type": "state", "tick": int(self._state_ints[0]), "time": float(values[0])}
        for key, span, shape in self._array_spans:
            fields[key] = values[span] if shape is None else values[span].reshape(shape)
        fields["sensors"] = {name: values[span] for name, span in self._sensor_spans}
        return fields

    # --- the command block (controller writes, simulator reads) ---

    def write_command(self, tick: int, arrays: dict[str, Any]) -> bool:
        """Write one command of full-length arrays (``torque``/``q_ref``/``dq_ref``, None: unchanged)
        and count it; False when one does not fit (it goes as a message, checked there)."""
        mask = 0
        for i, key in enumerate(COMMAND_ARRAYS):
            value = arrays.get(key)
            if value is None:
                continue
            value = np.asarray(value)
            if value.shape != (self.layout.joints,) or value.dtype.kind not in "iuf":
                return False
            self._command[i] = value
            mask |= 1 << i
        self._command_head[:] = (tick, mask)
        self.header[COMMAND_SEQ] += 1
        return True

    def read_command(self) -> dict[str, Any]:
        """The command last written, as the fields of a ``command`` message (copied out)."""
        tick, mask = self._command_head.tolist()
        fields: dict[str, Any] = {"tick": tick}
        for i, key in enumerate(COMMAND_ARRAYS):
            if mask & (1 << i):
                fields[key] = self._command[i].copy()
        return fields

    def close(self) -> None:
        self._array_views, self._sensor_views = [], []
        self.header = self._state_ints = self._state = self._command_head = self._command = None  # type: ignore[assignment]
        try:
            self._map.close()
        except BufferError:  # a view still held somewhere: the mapping goes with it
            pass
        os.close(self.fd)


def _spans(sizes: list[tuple[str, int]], start: int) -> list[tuple[str, slice]]:
    """Consecutive slices of the given sizes from ``start``, by name."""
    spans = []
    for name, count in sizes:
        spans.append((name, slice(start, start + count)))
        start += count
    return spans


def create(layout: Layout, name: str) -> Segment:
    """A new anonymous segment (``name`` shows in /proc/PID/fd, nowhere else)."""
    return Segment(os.memfd_create(name, os.MFD_CLOEXEC), layout, create=True)


class Doorbell:
    """An eventfd one side rings after a write and the other waits on (non-blocking)."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC) if fd is None else fd
        if fd is not None:
            os.set_blocking(fd, False)

    def fileno(self) -> int:
        return self.fd

    def ring(self) -> None:
        os.eventfd_write(self.fd, 1)

    def clear(self) -> None:
        """Take the rings so far (the descriptor is readable again only after the next ring)."""
        try:
            os.eventfd_read(self.fd)
        except BlockingIOError:
            pass

    def close(self) -> None:
        os.close(self.fd)
