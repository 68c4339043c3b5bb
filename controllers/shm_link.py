"""The controller's side of the fast path (hrpsim/shared_state.py): the Unix channel link, with states
read from and commands written to a shared memory segment the simulator passed with its welcome."""

from __future__ import annotations

import os
import select
import time
from typing import Any

from hrpsim import shared_state
from hrpsim import tick_protocol as proto
from hrpsim.controllers.link import UnixLink
from hrpsim.errors import PeerGone


class SharedMemoryLink(UnixLink):
    """Asks for shared memory in its hello; until a welcome brings a segment (or if it brings none:
    a simulator that cannot give one), it works as the plain Unix channel link."""

    asks_shared_memory = True

    def __init__(self, endpoint: str, *, peer: str = "simulator", spin_s: float = 0.0, timeout: float = 5.0) -> None:
        super().__init__(endpoint, peer=peer, spin_s=spin_s, timeout=timeout)
        self._segment: shared_state.Segment | None = None
        self._bells: tuple[shared_state.Doorbell, shared_state.Doorbell] | None = None  # (to us, to it)
        self._states_read = 0
        self._from_segment: dict[str, Any] | None = None  # the state last read from the segment
        self._poll = select.poll()
        self._poll.register(self._channel.fileno(), select.POLLIN)

    @property
    def transport(self) -> str:  # type: ignore[override]
        return "shared memory" if self._segment is not None else "unix channel"

    def _welcomed(self, msg: dict[str, Any]) -> None:
        self._unmap()
        fds, self._channel.fds = self._channel.fds, []
        fields = msg.get("shared_memory")
        if not isinstance(fields, dict) or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            return
        try:
            self._segment = shared_state.Segment(fds[0], shared_state.Layout.from_wire(fields), create=False)
        except Exception:
            for fd in fds:
                os.close(fd)
            raise
        self._bells = (shared_state.Doorbell(fds[1]), shared_state.Doorbell(fds[2]))
        self._states_read = 0  # a fresh segment: a state the hub wrote before this line is still for us
        self._poll.register(fds[1], select.POLLIN)

    def receive(self, timeout: float) -> dict[str, Any] | None:
        if self._segment is None:
            return super().receive(timeout)
        try:
            return self._next(timeout)
        except EOFError:
            raise PeerGone(f"the {self.peer} at {self.endpoint} went away (its connection dropped)") from None

    def checked_state(self, msg: dict[str, Any], n_joints: int) -> dict[str, Any]:
        """A state read from the segment has its layout's kinds and shapes by construction: when its
        arrays were all finite (tested once over the block as it was read), it needs no more.
        Anything else gets the full check, which names the offending field."""
        segment = self._segment
        if (
            msg is self._from_segment
            and segment is not None
            and segment.state_finite
            and n_joints == segment.layout.joints
        ):
            return msg
        return super().checked_state(msg, n_joints)

    def send_command(self, tick: int, **fields: Any) -> None:
        segment = self._segment
        if (
            segment is not None
            # drive modes, joint names and sensor switches travel only as a message
            and fields.get("modes") is None
            and fields.get("joints") is None
            and fields.get("sensors") is None
            and segment.write_command(tick, fields)
        ):
            self._bells[1].ring()  # type: ignore[index]
            return
        super().send_command(tick, **fields)

    def close(self) -> None:
        self._unmap()
        super().close()

    def _next(self, timeout: float) -> dict[str, Any] | None:
        """A message waiting on the channel, else the next state in the segment (a bounded spin on
        its counter first, when ``spin_s``), else whatever comes within ``timeout``."""
        channel = self._channel
        if channel.pending:
            return self._decoded(channel.receive(0.0))
        if self.spin_s > 0 and self._spin(min(self.spin_s, timeout)):
            return self._state()
        bell = self._bells[0]  # type: ignore[index]
        deadline = time.monotonic() + timeout
        while True:
            for fd, _ in self._poll.poll(max(0.0, deadline - time.monotonic()) * 1000):
                if fd == bell.fd:
                    bell.clear()
                else:
                    data = channel.receive(0.0)
                    if data is not None:
                        return self._decoded(data)
            if self._new_state():
                return self._state()
            if time.monotonic() >= deadline:
                return None

    def _spin(self, seconds: float) -> bool:
        """Watch the state counter for up to ``seconds``: True when a new state came."""
        until = time.perf_counter() + seconds
        while time.perf_counter() < until:
            if self._new_state():
                self._bells[0].clear()  # type: ignore[index]  # its ring is served
                return True
        return False

    def _new_state(self) -> bool:
        return int(self._segment.header[shared_state.STATE_SEQ]) != self._states_read  # type: ignore[union-attr]

    def _state(self) -> dict[str, Any]:
        segment = self._segment
        self._states_read = int(segment.header[shared_state.STATE_SEQ])  # type: ignore[union-attr]
        self._from_segment = segment.read_state()  # type: ignore[union-attr]
        return self._from_segment

    @staticmethod
    def _decoded(data: bytes | None) -> dict[str, Any] | None:
        return None if data is None else proto.decode(data, expect=proto.TO_CONTROLLER)

    def _unmap(self) -> None:
        if self._bells is not None:
            self._poll.unregister(self._bells[0].fd)
            for bell in self._bells:
                bell.close()
            self._bells = None
        if self._segment is not None:
            self._segment.close()
            self._segment = None
