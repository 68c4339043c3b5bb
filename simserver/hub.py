"""The controller hub: the simulator's side of the tick protocol (hrpsim/tick_protocol.py).

The tick loop (simserver/loop.py) calls, per tick k::

    hub.poll(); hub.before_collide(record); engine.collide(); hub.after_collide(record, slot_end)

``before_collide`` sends the state of tick k to every controller whose turn it is, so controllers
compute while the engine detects collisions; ``after_collide`` takes their commands as the sync mode
says (simserver/sync_modes.py), merges them into the robot's held arrays and applies them through the
robot's hardware models (simserver/actuation.py), in controller-name order so that a lockstep run does
not depend on which answer came first. Each applied command and controller event goes into the tick
record for the observers.

The hub composes one piece per job: the wire (simserver/hub_wire.py: tcp, ipc and the Unix channel)
and the peers on it or in this process (simserver/peers.py); who may attach (simserver/attachments.py
and attached_controllers.py); the sync mode; actuation; policies and statistics (simserver/policies.py); the
range and vision readings (simserver/sensor_delivery.py), which the loop produces and the hub hands out.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

import zmq

from hrpsim import tick_protocol as proto
from hrpsim.controllers.base import Controller
from hrpsim.controllers.state import JointIndex, LiveState, State
from hrpsim.engines.base import Engine, RobotState
from hrpsim.errors import RequestError
from hrpsim.placement import root_placement
from hrpsim.project import Project
from hrpsim.rpc import DEFAULT_BIND
from hrpsim.simserver.actuation import Actuation
from hrpsim.simserver.attached_controllers import AttachedController
from hrpsim.simserver.attachments import Attachments
from hrpsim.simserver.hub_inbox import Inbox
from hrpsim.simserver.hub_stages import HubStages
from hrpsim.simserver.peers import InProcessPeer, WirePeer
from hrpsim.simserver.policies import Policies
from hrpsim.simserver.run_state import RunState
from hrpsim.simserver.sensor_delivery import WorldSensors, with_readings
from hrpsim.simserver.sync_modes import sync_mode
from hrpsim.simserver.tick_record import AppliedCommand, TickRecord

__all__ = ["ControllerHub", "attach_in_process"]

log = logging.getLogger("hrpsim.simserver.hub")

MAX_COMMAND_BYTES = 64 * 1024
IDLE_SPIN_S = 0.001  # pyzmq polls in whole milliseconds and wakes late by up to ~0.2 ms here: spin the rest


class ControllerHub:
    """Serves the tick protocol for every controller of one world."""

    def __init__(
        self,
        engine: Engine,
        project: Project,
        run: RunState,
        *,
        context: zmq.Context | None = None,
        bind: str | None = DEFAULT_BIND,
        spin_s: float = 0.0005,
    ) -> None:
        """``run``: the run's state (its end time; a controller's ``stop`` policy halts it).
        ``bind=None``: no socket, in-process controllers only (the Python API)."""
        from hrpsim.simserver.hub_wire import NoWire, WireTransport

        self.engine = engine
        self.run = run
        # Called between slices of a long lockstep wait, so that the simulator's service keeps answering
        # (status, summary, pause, quit) while a controller is late or stopped; it may halt the run.
        self.serve_requests: Callable[[], None] | None = None
        self.listeners: list[Callable[[], None]] = []  # told when the stages change (changed())
        self._stages: HubStages | None = None  # this configuration's tick (simserver/hub_stages.py)
        self.attachments = Attachments(self.changed)
        self.inbox = Inbox(self)
        self.sensors = WorldSensors(engine)
        self._configure(project)
        if bind is None:
            self.wire: WireTransport | NoWire = NoWire()
            return
        self.wire = WireTransport(
            context or zmq.Context.instance(),
            bind,
            max_message=MAX_COMMAND_BYTES,
            spin_s=spin_s,
            on_message=self.inbox.handle,
            on_dropped=self.inbox.dropped,
            on_command=self.inbox.command,
        )
        log.info("controller hub serving at %s (%s)", self.endpoint, project.world.sync)

    @property
    def endpoint(self) -> str | None:
        return self.wire.endpoint

    @property
    def ipc_endpoint(self) -> str | None:
        """The same hub for controllers on this host."""
        return self.wire.ipc_endpoint

    @property
    def unix_endpoint(self) -> str | None:
        """The same again without ZeroMQ (hrpsim/unix_channel.py)."""
        return self.wire.unix_endpoint

    # --- the simulator's loop ---

    def poll(self) -> None:
        """Handle joining and leaving controllers (hello/bye) without blocking."""
        self.wire.receive(0.0)

    def receive(self, timeout: float) -> None:
        """Handle every waiting message, waiting up to ``timeout`` s for the first."""
        self.wire.receive(timeout)

    def before_collide(self, record: TickRecord) -> None:
        """Send the state of the record's tick to every controller whose turn it is (the sync mode may
        first collect answers to the tick before)."""
        stages = self._stages or self._compose()
        if stages.waits_first:
            self.sync.before_send(self, record.tick)
            stages = self._stages or self._compose()  # a controller came or was lost in the wait
        for stage in stages.before:
            stage(record)

    def after_collide(self, record: TickRecord, slot_end: float | None = None) -> None:
        """Collect, check and apply the commands answering the record's tick; apply policies (a ``stop``
        halts the run). In realtime, answers are served until ``slot_end`` (perf_counter s)."""
        stages = self._stages or self._compose()
        if stages.waits_after:
            self.sync.collect(self, record.tick, slot_end)
            stages = self._stages or self._compose()
        for stage in stages.after:
            stage(record)
        if self.policies.events:
            record.events.extend(self.policies.take_events())

    def changed(self) -> None:
        """What a tick does changed (a controller came or went, another project): the stages are
        composed again before the next tick, and whoever listens (the tick loop) hears it."""
        self._stages = None
        for listener in self.listeners:
            listener()

    def _compose(self) -> HubStages:
        self._stages = HubStages(self)
        return self._stages

    def idle_until(self, wall: float) -> None:
        """Serve hellos and answers until ``wall`` (perf_counter s); the last IDLE_SPIN_S are spun, so
        a realtime tick starts on time without taking a core from the controllers for long."""
        while True:
            remaining = wall - time.perf_counter()
            if remaining <= 0:
                return
            self.receive(remaining - IDLE_SPIN_S if remaining > 2 * IDLE_SPIN_S else 0.0)

    def wait_for_controllers(self, names: list[str], timeout: float) -> list[str]:
        """Wait until every named controller has attached; return the names still missing."""
        deadline = time.monotonic() + timeout
        while True:
            missing = [n for n in names if n not in self.attachments.by_name]
            remaining = deadline - time.monotonic()
            if not missing or remaining <= 0:
                return missing
            self.receive(min(remaining, 0.1))

    def summary(self) -> dict[str, Any]:
        return self.policies.summary()

    def waiting_for(self) -> list[str]:
        """Controllers whose answer the current tick is waiting for (lockstep)."""
        return sorted(c.name for c in self.attachments.by_name.values() if c.outstanding is not None)

    @property
    def end_time(self) -> float | None:
        """The run's end time, what a welcome tells a controller (nil for a run without one)."""
        return self.run.end_time if math.isfinite(self.run.end_time) else None

    @property
    def attached(self) -> list[str]:
        return sorted(self.attachments.by_name)

    # --- projects, runs and in-process controllers ---

    def _configure(self, project: Project) -> None:
        self.project = project
        self.sync = sync_mode(project.world)
        self.actuation = Actuation(self.engine, project)
        self.policies = Policies(
            project, tick=lambda: int(self.engine.tick), zero=self.actuation.zero, halt=self.run.halt
        )
        self.seen: dict[str, RobotState] = {}  # this tick's states as the devices let controllers see them
        self.sensors.close()
        self.changed()

    def reconfigure(self, project: Project) -> None:
        """The simulator loaded another project: controllers of the old one are sent away, and
        the new project's controllers, robots and joints are what attach from now on."""
        self.end_run("the simulator loaded another project")
        self._configure(project)

    def end_run(self, reason: str = "the run has ended") -> None:
        """Tell every attached controller the run is over (they exit) and detach them."""
        for ctl in list(self.attachments.by_name.values()):
            ctl.peer.send(proto.bye(reason))
            self.detach(ctl)

    def attach_local(self, controller: Controller, *, name: str, robot: str, period: float | None = None) -> None:
        """Run ``controller`` in this process, at its turns, as if it were attached over the wire: same
        admission rules, command merging, order, policies and statistics."""
        ctl = self.admit(InProcessPeer(controller), proto.Hello(controller=name, robot=robot, period=period))
        names, _ = self.actuation.joint_table(robot)
        controller.joints = JointIndex(names)
        controller.period, controller.timestep = ctl.period, self.project.world.timestep
        controller.gravity = tuple(float(g) for g in self.project.world.gravity)
        controller.root_placement = root_placement(self.project.model(robot), self.engine.body(robot))
        controller.attached(self.engine.body(robot))
        controller.start(self.engine.body(robot))
        self.policies.event(ctl, "attach", f"in process, every {ctl.every} ticks")
        log.info("controller %s runs in process on %s (every %d ticks)", ctl.name, ctl.robot, ctl.every)

    def close(self) -> None:
        self.sensors.close()
        for ctl in [c for c in self.attachments.by_name.values() if c.peer.in_process]:
            self.detach(ctl)
        if self.wire.closed:
            return
        self.end_run("the simulator is closing")
        self.wire.close()

    # --- states out ---

    def state_out(
        self, ctl: AttachedController, record: TickRecord, frames: dict[str, bytes]
    ) -> tuple[RobotState, Callable[[], bytes]]:
        """The state for ``ctl`` and how to encode it as a frame (for a peer that sends messages):
        its robot's frame is made once and shared by the controllers of that robot, unless range or
        vision readings it has not had make one of its own."""
        readings = self.sensors.take(ctl.name, ctl.robot)
        if readings:
            state = with_readings(self._seen_state(ctl, record), readings)
            return state, lambda: proto.state(state.to_wire())
        seen = self._seen_state(ctl, record)

        def shared_frame() -> bytes:
            frame = frames.get(ctl.robot)
            if frame is None:
                frame = frames[ctl.robot] = proto.state(seen.to_wire())
            return frame

        return seen, shared_frame

    def _seen_state(self, ctl: AttachedController, record: TickRecord) -> RobotState:
        return self.seen.get(ctl.robot) or record.state(ctl.robot)

    def answer_in_process(self, ctl: AttachedController, live: bool, record: TickRecord) -> None:
        """Ask an in-process controller for its answer to the record's tick, if it is its turn. ``live``:
        its state is read from the engine field by field (no devices or range sensors between)."""
        tick = record.tick
        if tick % ctl.every or tick < ctl.start_tick:  # not its turn
            return
        peer = ctl.peer
        source = self.engine.state_source(ctl.robot) if live else None
        if source is not None:
            state: State = LiveState(source, tick, record.time, peer.controller.joints)
        else:
            seen = with_readings(self._seen_state(ctl, record), self.sensors.take(ctl.name, ctl.robot))
            state = State.of(seen, peer.controller.joints)
        started = time.perf_counter()
        try:
            ctl.answer = peer.answer(tick, state, *self.actuation.joint_table(ctl.robot))
        except Exception as exc:  # a controller's bug is its failure, handled by its policy, not the simulator's
            log.exception("controller %s raised at tick %d", ctl.name, tick)
            self.policies.of(ctl.name).errors += 1
            self.detach(ctl)
            self.policies.apply(ctl, f"raised {type(exc).__name__}: {exc}")
            return
        self.policies.of(ctl.name).rtt.add((time.perf_counter() - started) * 1e6)

    def admit(self, peer: InProcessPeer | WirePeer, hello: proto.Hello) -> AttachedController:
        old = self.attachments.by_name.get(hello.controller)
        ctl = self.attachments.admit(peer, hello, project=self.project, engine=self.engine)
        if old is not None:
            log.warning("controller %s attached again; the previous connection is dropped", hello.controller)
            text = f"another process attached as controller {old.name!r}"
            old.peer.send(proto.error(text, field_name="controller", fatal=True))
            self.detach(old)
        self.attachments.add(ctl)
        stats = self.policies.of(ctl.name)
        stats.attached, stats.joined_tick = True, ctl.start_tick
        return ctl

    # --- commands applied ---

    def apply_answer(self, ctl: AttachedController, cmd: proto.Command, record: TickRecord) -> None:
        if cmd.sensors and not self._switched(ctl, cmd.sensors):
            return
        try:
            merged = self.actuation.command(ctl.robot, cmd, record.tick)
        except RequestError as exc:
            self._refuse(ctl, exc, exc.field, "command refused by the engine")
            return
        self.policies.of(ctl.name).ticks += 1
        record.commands.append(
            AppliedCommand(
                controller=ctl.name,
                robot=ctl.robot,
                received=cmd.received,
                torque=merged.torque,
                q_ref=merged.q_ref,
                dq_ref=merged.dq_ref,
                modes=merged.modes,
                rtt_us=ctl.rtt_us,
            )
        )

    def _switched(self, ctl: AttachedController, switches: dict[str, bool]) -> bool:
        try:
            self.sensors.switch(ctl.robot, switches)
        except RequestError as exc:
            self._refuse(ctl, exc, "sensors", "command refused")
            return False
        return True

    def _refuse(self, ctl: AttachedController, exc: RequestError, field_name: str, what: str) -> None:
        self.inbox.bad_message(ctl.peer, ctl, str(exc), field_name)
        self.policies.apply(ctl, f"{what}: {exc}")

    # --- leaving ---

    def lost(self, ctl: AttachedController, reason: str, cause: str = "connection") -> None:
        """The controller is gone (or as good as gone): detach it and apply its policy. ``cause`` is
        the error's field: ``connection`` (it dropped) or ``deadline`` (no answer in time)."""
        text = f"detached: {reason}; send hello to attach again"
        ctl.peer.send(proto.error(text, field_name=cause, tick=ctl.outstanding, fatal=True))
        self.detach(ctl)
        self.policies.apply(ctl, reason)

    def detach(self, ctl: AttachedController) -> None:
        if self.attachments.detach(ctl):
            self.policies.of(ctl.name).attached = False
        self.policies.event(ctl, "detach")
        try:
            ctl.peer.stop()  # a process's peer closes what it held (a shared memory segment)
        except Exception:
            log.exception("controller %s raised in stop()", ctl.name)


def attach_in_process(hub: ControllerHub, project: Project) -> None:
    """Load and attach every controller the project runs in process (``in_process: true``)."""
    from hrpsim.controllers.runner import load_controller

    for config in project.controllers:
        if config.in_process and config.name not in hub.attached:
            controller = load_controller(config.file, **config.options)
            hub.attach_local(controller, name=config.name, robot=config.robot, period=config.period)
