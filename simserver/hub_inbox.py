"""The controller hub's inbox: what controller processes send (hello, command, bye), checked and
turned into attachments and answers waiting to act. A malformed or out-of-turn message gets an
error reply naming the field; a controller whose answer it was goes on under its policy."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hrpsim import tick_protocol as proto
from hrpsim.errors import ProtocolError, RequestError
from hrpsim.security import admit_controller
from hrpsim.shared_state import layout_for
from hrpsim.simserver.attached_controllers import AttachedController
from hrpsim.simserver.attachments import welcome
from hrpsim.simserver.peers import Peer, WirePeer

if TYPE_CHECKING:
    from hrpsim.simserver.hub import ControllerHub

log = logging.getLogger("hrpsim.simserver.hub")

LOST_CONNECTION = "its connection dropped (the process died or closed its socket)"


class Inbox:
    def __init__(self, hub: ControllerHub) -> None:
        self._hub = hub

    def handle(self, identity: bytes, frame: Any) -> None:
        ctl = self._hub.attachments.with_identity(identity)
        try:
            msg = proto.decode(frame.bytes, expect=proto.TO_SIMULATOR)
        except ProtocolError as exc:
            self.bad_message(WirePeer(self._hub.wire, identity), ctl, f"malformed message: {exc}", "", "ProtocolError")
            return
        kind = msg["type"]
        if kind == proto.COMMAND:
            self._on_command(identity, ctl, msg)
        elif kind == proto.HELLO:
            self._on_hello(identity, msg, frame)
        elif ctl is not None:  # bye
            reason = msg.get("reason") or "no reason given"
            self._hub.detach(ctl)
            self._hub.policies.apply(ctl, f"left ({reason})", level=logging.INFO)  # a clean goodbye is no fault

    def command(self, identity: bytes, fields: dict[str, Any]) -> None:
        """A command that came without a message (read from a shared memory segment: its tick and
        full-length arrays): checked and taken as one that came on the wire."""
        ctl = self._hub.attachments.with_identity(identity)
        self._on_command(identity, ctl, fields, parse=proto.parse_full_command)

    def dropped(self, identity: bytes) -> None:
        ctl = self._hub.attachments.with_identity(identity)
        if ctl is not None:
            self._hub.lost(ctl, LOST_CONNECTION)

    def _on_hello(self, identity: bytes, msg: dict[str, Any], frame: Any) -> None:
        fd = self._hub.wire.note_hello(identity, frame)
        peer = WirePeer(self._hub.wire, identity)
        try:
            hello = proto.parse_hello(msg)
            key = admit_controller(frame, hello.robot, self._hub.attachments.by_name.get(hello.controller))
            ctl = self._hub.admit(peer, hello)
            ctl.key = key
        except RequestError as exc:
            log.warning("refused a controller: %s", exc)
            peer.send(proto.error_for(exc, default_field="hello", fatal=True))
            return
        ctl.fd = fd
        if hello.shared_memory:
            ctl.peer = self._fast_peer(identity, ctl) or peer
        names, _ = self._hub.actuation.joint_table(ctl.robot)
        frame = welcome(
            ctl, self._hub.project, self._hub.engine, names, self._hub.end_time, **ctl.peer.welcome_fields()
        )
        ctl.peer.send_welcome(frame)
        log.info(
            "controller %s attached to %s (every %d ticks from tick %d, policy %s, deadline %g s)",
            *(ctl.name, ctl.robot, ctl.every, ctl.start_tick, ctl.policy, ctl.deadline),
        )
        self._hub.policies.event(ctl, "attach", f"every {ctl.every} ticks")

    def _fast_peer(self, identity: bytes, ctl: AttachedController) -> Peer | None:
        """The shared memory peer for a controller that asked for it, if its connection can take it."""
        names, _ = self._hub.actuation.joint_table(ctl.robot)
        sensors = self._hub.engine.read(ctl.robot).sensors
        try:
            return self._hub.wire.shared_memory_peer(identity, layout_for(len(names), sensors))
        except OSError as exc:  # out of memory or descriptors: the channel still serves it
            log.warning("controller %s: no shared memory (%s); its states go as messages", ctl.name, exc)
            return None

    def _on_command(
        self,
        identity: bytes,
        ctl: AttachedController | None,
        msg: dict[str, Any],
        parse: Callable[..., proto.Command] = proto.parse_command,
    ) -> None:
        if ctl is None:
            text = "not attached: send hello first (or again, after a missed deadline)"
            WirePeer(self._hub.wire, identity).send(
                proto.error(text, field_name="type", tick=msg.get("tick"), fatal=True)
            )
            return
        names, index_of = self._hub.actuation.joint_table(ctl.robot)
        expected = ctl.outstanding
        try:
            cmd = parse(msg, joint_names=names, index_of=index_of, expected_tick=expected)
        except RequestError as exc:
            self.bad_message(ctl.peer, ctl, str(exc), exc.field)
            return
        if expected is None:
            text = f"command for tick {cmd.tick}, but no state is waiting for an answer"
            self.bad_message(ctl.peer, ctl, text, "tick")
            return
        stats = self._hub.policies.of(ctl.name)
        ctl.rtt_us = (time.perf_counter() - ctl.sent_at) * 1e6
        stats.rtt.add(ctl.rtt_us)
        if ctl.answered_late:
            stats.late_applied += 1
        ctl.outstanding, ctl.answer, ctl.answered_late = None, cmd, False

    def bad_message(
        self, peer: Peer, ctl: AttachedController | None, message: str, field_name: str, kind: str = "RequestError"
    ) -> None:
        tick = ctl.outstanding if ctl is not None else None
        peer.send(proto.error(message, field_name=field_name, tick=tick, kind=kind))
        if ctl is None:
            log.warning("message from an unattached peer refused: %s", message)
            return
        self._hub.policies.of(ctl.name).errors += 1
        log.warning("controller %s: bad command: %s", ctl.name, message)
        if ctl.outstanding is not None:  # it was its answer: the tick goes on under its policy
            ctl.outstanding = None
            self._hub.policies.apply(ctl, f"bad command at tick {tick}: {message}")
