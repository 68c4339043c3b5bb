"""What the hub does in a tick, composed once per configuration (the controllers attached, their
peers, the sync mode, the robots' devices, the range and vision sensors): a tick calls nothing for
what the run does not have. ``ControllerHub.changed`` drops the composition; the next tick makes a
new one.

A tick's stages run in the order the hub's per-tick loop always had: the sync mode's wait for the
answers to the tick before (pipelined), the devices' view of the states, then per controller in name
order its state sent (over the wire) or its answer asked for (in process); after collision, the sync
mode's wait for this tick's answers, each answer applied in name order, the in-process answers that
act from the next tick (pipelined), the devices' commands.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hrpsim.simserver.attached_controllers import AttachedController
    from hrpsim.simserver.hub import ControllerHub
    from hrpsim.simserver.tick_record import TickRecord

Stage = Callable[["TickRecord"], None]


class HubStages:
    """One configuration's tick, as lists of calls. ``waits_first`` / ``waits_after``: the sync mode
    waits for answers before the states go out / after collision (a controller may attach or be lost
    in a wait, so the hub looks at its composition again after one)."""

    def __init__(self, hub: ControllerHub) -> None:
        self.hub = hub
        sync, ordered = hub.sync, hub.attachments.ordered
        remote = bool(hub.attachments.remote)
        self.waits_first = remote and sync.collects_before_send
        self.waits_after = remote
        self.frames: dict[str, bytes] = {}  # each robot's state frame, made once a tick for its controllers
        self.before: list[Stage] = []
        self.after: list[Stage] = []
        devices = bool(hub.actuation.devices)
        if remote:
            self.before.append(self._new_frames)
        if devices:
            self.before.append(self._sense)
        # an in-process controller reads its state from the engine, field by field, when nothing
        # (devices' noise or delays, range or vision readings) stands between
        live = not devices and not hub.sensors.produces
        for ctl in ordered:
            if not ctl.peer.in_process:
                self.before.append(functools.partial(self._send_state, ctl))
            elif not sync.in_process_after_apply:
                self.before.append(functools.partial(hub.answer_in_process, ctl, live))
        self.after += [functools.partial(self._take_answer, ctl) for ctl in ordered]
        if sync.in_process_after_apply:
            in_process = [ctl for ctl in ordered if ctl.peer.in_process]
            self.after += [functools.partial(hub.answer_in_process, ctl, live) for ctl in in_process]
        if devices:
            self.after.append(self._actuate)

    def _new_frames(self, record: TickRecord) -> None:
        self.frames = {}

    def _sense(self, record: TickRecord) -> None:
        self.hub.seen = self.hub.actuation.sense(record)

    def _send_state(self, ctl: AttachedController, record: TickRecord) -> None:
        tick, hub = record.tick, self.hub
        if tick % ctl.every or tick < ctl.start_tick:  # not its turn (AttachedController.due, inlined)
            return
        if ctl.outstanding is not None:  # realtime: still busy with an earlier tick, this turn is lost
            hub.policies.of(ctl.name).missed += 1
            return
        state, frame = hub.state_out(ctl, record, self.frames)
        # an answer that came in since the last tick (realtime) stays: after_collide applies it
        ctl.outstanding, ctl.sent_at = tick, time.perf_counter()
        if not ctl.peer.send_state(state, frame):
            hub.lost(ctl, f"its connection dropped (the state of tick {tick} could not be sent)")

    def _take_answer(self, ctl: AttachedController, record: TickRecord) -> None:
        answer = ctl.answer
        if answer is not None and self.hub.sync.acts_now(answer, record.tick):
            self.hub.apply_answer(ctl, answer, record)
            ctl.answer = None

    def _actuate(self, record: TickRecord) -> None:
        self.hub.policies.events.extend(self.hub.actuation.actuate(record))
