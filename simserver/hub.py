"""The controller hub: the simulator's side of the tick protocol (hrpsim/tick.py).

One ROUTER socket serves every controller. The tick loop (simserver/loop.py) calls, per tick k::

    hub.poll(); hub.before_collide(record); engine.collide(); hub.after_collide(record, slot_end)

``before_collide`` sends the state of tick k to every controller whose turn it is, so controllers
compute while the engine detects collisions; ``after_collide`` collects their commands (lockstep:
waits for each up to its deadline; realtime: serves answers until the tick's wall-clock slot ends;
pipelined lockstep, ``world.command_delay: 1``: the answers to tick k are waited for at the start of
tick k + 1 and act from then on, so the controllers compute while the engine integrates),
merges them into the robot's held arrays (simserver/held_commands.py) and applies them through the
engine, in controller-name order so that a lockstep run does not depend on which answer came first.
Each applied command and controller event goes into the tick record for the observers.

Who may attach is decided in simserver/admission.py; statistics are kept in constant memory in
simserver/controller_stats.py. A controller that misses its deadline, disconnects (its TCP
connection drops: noticed at once through the socket monitor), says bye, or sends a bad command
gets its policy applied: ``stop`` raises :class:`RunStopped`, ``hold`` keeps its last command,
``zero`` switches its robot's joints to zero torque.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zmq
from zmq.utils.monitor import parse_monitor_message

from hrpsim import tick as proto
from hrpsim import unix_channel
from hrpsim.controllers.base import Controller
from hrpsim.controllers.command import Command
from hrpsim.controllers.state import JointIndex, State
from hrpsim.engines.base import Engine, RobotState
from hrpsim.errors import ProtocolError, RequestError, SimulationError
from hrpsim.hil.devices import RobotDevices, devices_of
from hrpsim.project import Project
from hrpsim.security import admit_controller, identity
from hrpsim.service import DEFAULT_BIND, bind_router
from hrpsim.simserver.admission import AttachedController, admit
from hrpsim.simserver.controller_stats import ControllerStats
from hrpsim.simserver.held_commands import HeldCommands
from hrpsim.simserver.record import AppliedCommand, ControllerEvent, TickRecord
from hrpsim.simserver.sensor_delivery import SensorDelivery, with_readings
from hrpsim.simserver.unix_peers import UNIX_PREFIX, UnixPeers
from hrpsim.sockets import readable

log = logging.getLogger("hrpsim.simserver.hub")

MAX_COMMAND_BYTES = 64 * 1024
IDLE_SPIN_S = 0.001  # pyzmq polls in whole milliseconds and wakes late by up to ~0.2 ms here: spin the rest
SERVE_SLICE_S = 0.02  # a lockstep wait this long or longer answers the simulator's requests every slice


class RunStopped(SimulationError):
    """A controller's policy is ``stop`` and it missed its deadline, left, died or sent a bad command."""


class ControllerHub:
    """Serves the tick protocol for every controller of one world."""

    def __init__(
        self,
        engine: Engine,
        project: Project,
        *,
        context: zmq.Context | None = None,
        bind: str | None = DEFAULT_BIND,
        spin_s: float = 0.0005,
    ) -> None:
        """``bind=None``: no socket, in-process controllers only (the Python API)."""
        self.engine = engine
        self._spin_s = spin_s  # busy-poll this long before sleeping in poll(): answers come back fast
        # Called between slices of a long lockstep wait, so that the simulator's service keeps answering
        # (status, summary, pause, quit) while a controller is late or stopped. It may raise RunStopped.
        self.serve_requests: Callable[[], None] | None = None
        self._held = HeldCommands(engine)
        self._events: list[ControllerEvent] = []  # since the last tick record
        self._seen: dict[str, RobotState] = {}  # this tick's states as the devices let controllers see them
        self._configure(project)
        self._by_identity: dict[bytes, AttachedController] = {}
        self._by_name: dict[str, AttachedController] = {}
        self._fd_owner: dict[int, bytes] = {}  # socket number of each connection that said hello
        self._stale_disconnects: dict[int, int] = {}
        self._ordered: list[AttachedController] = []  # attached controllers by name: the order commands apply in
        self._router: zmq.Socket | None = None
        self.endpoint: str | None = None
        self.ipc_endpoint: str | None = None  # the same hub for controllers on this host
        self.unix_endpoint: str | None = None  # the same again without ZeroMQ (hrpsim/unix_channel.py)
        self._unix: UnixPeers | None = None
        if bind is not None:
            ctx = context or zmq.Context.instance()
            self._router, self.endpoint = bind_router(
                ctx, bind, "controller hub", mandatory=True, domain="controllers", max_message=MAX_COMMAND_BYTES
            )
            self.ipc_endpoint = _bind_ipc(self._router)
            self._monitor = self._router.get_monitor_socket(zmq.EVENT_DISCONNECTED)
            self._poller = zmq.Poller()
            self._poller.register(self._router, zmq.POLLIN)
            self._poller.register(self._monitor, zmq.POLLIN)
            if identity() is None:  # with keys, every controller comes through CurveZMQ
                self._unix = UnixPeers(self._poller, max_message=MAX_COMMAND_BYTES)
                self.unix_endpoint = self._unix.endpoint
            log.info("controller hub serving at %s (%s)", self.endpoint, project.world.sync)

    # --- the simulator's loop ---

    def poll(self) -> None:
        """Handle joining and leaving controllers (hello/bye) without blocking."""
        self._receive(0.0)

    def before_collide(self, record: TickRecord) -> None:
        """Send the state of the record's tick to every controller whose turn it is. Pipelined, first
        collect the answers to the tick before (computed while the engine integrated it)."""
        tick = record.tick
        if self.pipelined:
            self._wait_for_answers(tick - 1)
        frames: dict[str, bytes] = {}
        sensed = self._seen = {robot: devices.sense(record.state(robot)) for robot, devices in self._devices.items()}
        sensing = self._sensor_delivery()
        if sensing is not None:
            record.readings = sensing.produce(tick, record.time, record.links)
        for ctl in self._ordered:
            if not ctl.due(tick):
                continue
            if ctl.local is not None:
                if not self.pipelined:  # pipelined: after this tick's commands are applied (after_collide)
                    self._run_local(ctl, record, self._seen_by(ctl, record))
                continue
            if ctl.outstanding is not None:  # realtime: still busy with an earlier tick, this turn is lost
                self._stats[ctl.name].missed += 1
                continue
            readings = sensing.take(ctl.name, ctl.robot) if sensing is not None else {}
            frame = frames.get(ctl.robot)
            if readings:  # range and vision frames this controller has not had: a state of its own
                frame = proto.state(with_readings(sensed.get(ctl.robot) or record.state(ctl.robot), readings).to_wire())
            elif frame is None:
                state = sensed.get(ctl.robot) or record.state(ctl.robot)
                frame = frames[ctl.robot] = proto.state(state.to_wire())
            # an answer that came in since the last tick (realtime) stays: after_collide applies it
            ctl.outstanding, ctl.sent_at = tick, time.perf_counter()
            if not self._send(ctl.identity, frame):
                self._lost(ctl, f"its connection dropped (the state of tick {tick} could not be sent)")

    def after_collide(self, record: TickRecord, slot_end: float | None = None) -> None:
        """Collect, check and apply the commands answering the record's tick; apply policies;
        RunStopped to stop. In realtime, answers are served until ``slot_end`` (perf_counter s)."""
        tick = record.tick
        if self.pipelined:
            pass  # answers to this tick come during the step; before_collide of the next collects them
        elif self.lockstep:
            self._wait_for_answers(tick)
        else:
            self._serve_slot(tick, slot_end)
            self._check_realtime(tick)
        for ctl in self._ordered:
            # pipelined: only answers to earlier ticks act now, however early this tick's came back
            if ctl.answer is not None and (not self.pipelined or ctl.answer.tick < tick):
                self._apply(ctl, ctl.answer, record)
                ctl.answer = None
        if self.pipelined:
            for ctl in [c for c in self._ordered if c.local is not None and c.due(tick)]:
                self._run_local(ctl, record, self._seen_by(ctl, record))
        self._actuate(record)
        record.events.extend(self._events)
        self._events.clear()
        if self._stop_reason is not None:
            reason, self._stop_reason = self._stop_reason, None
            raise RunStopped(reason)

    def idle_until(self, wall: float) -> None:
        """Serve hellos and answers until ``wall`` (perf_counter s); the last IDLE_SPIN_S are spun, so
        a realtime tick starts on time without taking a core from the controllers for long."""
        while True:
            remaining = wall - time.perf_counter()
            if remaining <= 0:
                return
            self._receive(remaining - IDLE_SPIN_S if remaining > 2 * IDLE_SPIN_S else 0.0)

    def wait_for_controllers(self, names: list[str], timeout: float) -> list[str]:
        """Wait until every named controller has attached; return the names still missing."""
        deadline = time.monotonic() + timeout
        while True:
            missing = [n for n in names if n not in self._by_name]
            remaining = deadline - time.monotonic()
            if not missing or remaining <= 0:
                return missing
            self._receive(min(remaining, 0.1))

    def summary(self) -> dict[str, Any]:
        return {name: stats.public() for name, stats in sorted(self._stats.items())}

    def waiting_for(self) -> list[str]:
        """Controllers whose answer the current tick is waiting for (lockstep)."""
        return sorted(c.name for c in self._by_name.values() if c.outstanding is not None)

    @property
    def attached(self) -> list[str]:
        return sorted(self._by_name)

    def _configure(self, project: Project) -> None:
        self.project = project
        self.lockstep = project.world.sync == "lockstep"
        self.pipelined = self.lockstep and project.world.command_delay == 1
        self.end_time: float = float(project.world.end_time)
        self._stats: dict[str, ControllerStats] = {c.name: ControllerStats() for c in project.controllers}
        self._devices: dict[str, RobotDevices] = devices_of(project.models, self.engine.bodies, project.world.timestep)
        self._held.clear()
        self._joints: dict[str, tuple[list[str], dict[str, int]]] = {}
        self._stop_reason: str | None = None
        self._close_sensors()
        self._sensors: SensorDelivery | bool | None = False  # False: not built yet (built at the first tick)

    def _sensor_delivery(self) -> SensorDelivery | None:
        """Range and vision readings for the controllers (simserver/sensor_delivery.py), or None."""
        if self._sensors is False:
            self._sensors = SensorDelivery.for_world(self.engine)
        return self._sensors

    def _close_sensors(self) -> None:
        if getattr(self, "_sensors", None):
            self._sensors.close()

    def _seen_by(self, ctl: AttachedController, record: TickRecord) -> RobotState:
        """The state an in-process controller gets: as its robot's devices see it, with the range and
        vision readings it has not had yet."""
        seen = self._seen.get(ctl.robot) or record.state(ctl.robot)
        sensing = self._sensor_delivery()
        return with_readings(seen, sensing.take(ctl.name, ctl.robot)) if sensing is not None else seen

    def reconfigure(self, project: Project) -> None:
        """The simulator loaded another project: controllers of the old one are sent away, and
        the new project's controllers, robots and joints are what attach from now on."""
        self.end_run("the simulator loaded another project")
        self._configure(project)

    def end_run(self, reason: str = "the run has ended") -> None:
        """Tell every attached controller the run is over (they exit) and detach them."""
        for ctl in list(self._by_name.values()):
            self._send(ctl.identity, proto.bye(reason))
            self._detach(ctl)

    def attach_local(self, controller: Controller, *, name: str, robot: str, period: float | None = None) -> None:
        """Run ``controller`` in this process, at its turns, as if it were attached over the wire: same
        admission rules, command merging, order, policies and statistics."""
        hello = proto.Hello(controller=name, robot=robot, period=period)
        ctl = self._admit(b"local/" + name.encode(), hello)
        ctl.local = controller
        names, _ = self._joint_table(robot)
        controller.joints = JointIndex(names)
        controller.period, controller.timestep = ctl.period, self.project.world.timestep
        controller.attached(self.engine.body(robot))
        controller.start(self.engine.body(robot))
        self._events.append(ControllerEvent(ctl.name, ctl.robot, "attach", f"in process, every {ctl.every} ticks"))
        log.info("controller %s runs in process on %s (every %d ticks)", ctl.name, ctl.robot, ctl.every)

    def _run_local(self, ctl: AttachedController, record: TickRecord, seen: RobotState) -> None:
        names, index_of = self._joint_table(ctl.robot)
        state = State(seen.to_wire(), ctl.local.joints)
        started = time.perf_counter()
        try:
            ctl.local.sees(state)
            result = ctl.local.control(state)
            if result is None:
                fields = proto.command_fields(record.tick)
            elif isinstance(result, Command):
                fields = proto.command_fields(record.tick, **result.fields())
            else:
                fields = proto.command_fields(record.tick, torque=result)
            cmd = proto.parse_command(fields, joint_names=names, index_of=index_of, expected_tick=record.tick)
        except Exception as exc:  # a controller's bug is its failure, handled by its policy, not the simulator's
            log.exception("controller %s raised at tick %d", ctl.name, record.tick)
            self._stats[ctl.name].errors += 1
            self._detach(ctl)
            self._apply_policy(ctl, f"raised {type(exc).__name__}: {exc}")
            return
        self._stats[ctl.name].rtt.add((time.perf_counter() - started) * 1e6)
        ctl.answer = cmd

    def close(self) -> None:
        self._close_sensors()
        for ctl in [c for c in self._by_name.values() if c.local is not None]:
            self._detach(ctl)
        if self._router is None or self._router.closed:
            return
        self.end_run("the simulator is closing")
        try:
            self._router.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(linger=0)
        self._router.close(linger=0)
        if self.ipc_endpoint is not None:
            Path(self.ipc_endpoint[len("ipc://") :]).unlink(missing_ok=True)
        if self._unix is not None:
            self._unix.close()

    # --- receiving ---

    def _receive(self, timeout: float) -> None:
        """Handle every waiting message, waiting up to ``timeout`` s for the first."""
        if self._router is None:
            if timeout > 0:
                time.sleep(timeout)
            return
        ready = self._ready(timeout)
        if not ready:
            return
        while True:  # messages first: a controller's bye arrives before its connection drops
            try:
                frames = self._router.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                break
            if len(frames) != 2:
                log.warning("dropped a controller message of %d frames (expected 2)", len(frames))
                continue
            self._handle(frames[0].bytes, frames[1])
        for source, _ in ready:
            if isinstance(source, int):
                self._read_unix(source)
        if readable(self._monitor):
            self._handle_disconnects()

    def _ready(self, timeout: float) -> list[tuple[Any, int]]:
        """What has something to read, busy-polling the first ``spin_s`` of the wait."""
        spin_until = time.perf_counter() + min(timeout, self._spin_s)
        while True:
            ready = self._poller.poll(0)
            if ready or time.perf_counter() >= spin_until:
                break
        remaining_ms = (timeout - self._spin_s) * 1000
        if ready or remaining_ms <= 0:
            return ready
        return self._poller.poll(remaining_ms)

    def _read_unix(self, fd: int) -> None:
        got = self._unix.read(fd) if self._unix is not None else None
        if got is None:
            return
        who, messages, closed = got
        for message in messages:
            self._handle(who, _UnixFrame(message))
        ctl = self._by_identity.get(who) if closed else None
        if ctl is not None:
            self._lost(ctl, "its connection dropped (the process died or closed its socket)")

    def _serve_slot(self, tick: int, slot_end: float | None) -> None:
        """Realtime: take answers as they come until every answer to ``tick`` is in or the slot ends.

        A controller always has one time step from the moment its state went out: when the
        simulator itself started the tick late (behind the wall clock), the lateness is the
        simulator's (the loop's jitter and overruns), not a miss of a controller that answered in time."""
        if slot_end is None:
            self._receive(0.0)
            return
        step = self.project.world.timestep
        while True:
            self._receive(0.0)
            waiting = [c for c in self._by_name.values() if c.outstanding == tick]
            if not waiting:
                return
            end = max(slot_end, max(c.sent_at for c in waiting) + step)
            remaining = end - time.perf_counter()
            if remaining <= 0:
                return
            self._receive(remaining)

    def _handle(self, identity: bytes, frame: zmq.Frame) -> None:
        ctl = self._by_identity.get(identity)
        try:
            msg = proto.decode(frame.bytes, expect=proto.TO_SIMULATOR)
        except ProtocolError as exc:
            self._bad_message(identity, ctl, f"malformed message: {exc}", "", kind="ProtocolError")
            return
        kind = msg["type"]
        if kind == proto.COMMAND:
            self._on_command(identity, ctl, msg)
        elif kind == proto.HELLO:
            self._on_hello(identity, msg, frame)
        elif ctl is not None:  # bye
            reason = msg.get("reason") or "no reason given"
            self._detach(ctl)
            self._apply_policy(ctl, f"left ({reason})", level=logging.INFO)  # a clean goodbye is no fault

    def _note_connection(self, fd: int, identity: bytes) -> None:
        previous = self._fd_owner.get(fd)
        if previous is not None and previous != identity:
            # The socket number was reused: that connection closed and its disconnect event is
            # still queued behind this hello. Act on it now, and skip the event when it comes.
            self._stale_disconnects[fd] = self._stale_disconnects.get(fd, 0) + 1
            old = self._by_identity.get(previous)
            if old is not None:
                self._lost(old, "its connection dropped (the process died or closed its socket)")
        self._fd_owner[fd] = identity

    def _handle_disconnects(self) -> None:
        while readable(self._monitor):
            event = parse_monitor_message(self._monitor.recv_multipart())
            fd = int(event["value"])
            if self._stale_disconnects.get(fd):
                self._stale_disconnects[fd] -= 1
                continue
            identity = self._fd_owner.pop(fd, None)
            ctl = self._by_identity.get(identity) if identity is not None else None
            if ctl is not None:
                self._lost(ctl, "its connection dropped (the process died or closed its socket)")

    # --- hello ---

    def _on_hello(self, identity: bytes, msg: dict[str, Any], frame: zmq.Frame) -> None:
        fd = _source_fd(frame)
        if fd is not None:
            # Noted for refused hellos too: when that peer's socket number is reused by the next
            # connection, its late disconnect event must not detach the newcomer.
            self._note_connection(fd, identity)
        if readable(self._monitor):
            # The peer this controller replaces may have closed on another socket number, its
            # disconnect event queued behind this hello: act on it first, or the newcomer is
            # refused for a robot that only a dead connection still holds.
            self._handle_disconnects()
        try:
            hello = proto.parse_hello(msg)
            key = admit_controller(frame, hello.robot, self._by_name.get(hello.controller))
            ctl = self._admit(identity, hello)
            ctl.key = key
        except RequestError as exc:
            log.warning("refused a controller: %s", exc)
            self._send(identity, proto.error_for(exc, default_field="hello", fatal=True))
            return
        ctl.fd = fd
        body = self.engine.body(ctl.robot)
        names, _ = self._joint_table(ctl.robot)
        self._send(
            identity,
            proto.encode(
                proto.WELCOME,
                controller=ctl.name,
                robot=ctl.robot,
                period=ctl.period,
                every=ctl.every,
                timestep=self.project.world.timestep,
                sync=self.project.world.sync,
                policy=ctl.policy,
                deadline=ctl.deadline,
                joints=names,
                end_time=self.end_time,
                sensors=[{"name": s.name, "type": s.type, "id": s.id} for s in body.sensors],
                body=body.to_wire(),
            ),
        )
        log.info(
            "controller %s attached to %s (every %d ticks from tick %d, policy %s, deadline %g s)",
            ctl.name,
            ctl.robot,
            ctl.every,
            ctl.start_tick,
            ctl.policy,
            ctl.deadline,
        )
        self._events.append(ControllerEvent(ctl.name, ctl.robot, "attach", f"every {ctl.every} ticks"))

    def _admit(self, identity: bytes, hello: proto.Hello) -> AttachedController:
        old = self._by_name.get(hello.controller)
        others = {name: c for name, c in self._by_name.items() if name != hello.controller}
        ctl = admit(
            hello,
            identity,
            project=self.project,
            robots=list(self.engine.robots),
            tick=int(self.engine.tick),
            attached=others,
        )
        if old is not None:
            log.warning("controller %s attached again; the previous connection is dropped", hello.controller)
            self._send(
                old.identity,
                proto.error(
                    f"another process attached as controller {old.name!r}", field_name="controller", fatal=True
                ),
            )
            self._detach(old)
        self._by_identity[identity] = ctl
        self._by_name[ctl.name] = ctl
        self._reorder()
        stats = self._stats.setdefault(ctl.name, ControllerStats())
        stats.attached, stats.joined_tick = True, ctl.start_tick
        return ctl

    # --- commands ---

    def _on_command(self, identity: bytes, ctl: AttachedController | None, msg: dict[str, Any]) -> None:
        if ctl is None:
            self._send(
                identity,
                proto.error(
                    "not attached: send hello first (or again, after a missed deadline)",
                    field_name="type",
                    tick=msg.get("tick"),
                    fatal=True,
                ),
            )
            return
        names, index_of = self._joint_table(ctl.robot)
        expected = ctl.outstanding
        try:
            cmd = proto.parse_command(msg, joint_names=names, index_of=index_of, expected_tick=expected)
        except RequestError as exc:
            self._bad_message(identity, ctl, str(exc), exc.field)
            return
        if expected is None:
            self._bad_message(
                identity, ctl, f"command for tick {cmd.tick}, but no state is waiting for an answer", "tick"
            )
            return
        stats = self._stats[ctl.name]
        ctl.rtt_us = (time.perf_counter() - ctl.sent_at) * 1e6
        stats.rtt.add(ctl.rtt_us)
        if ctl.answered_late:
            stats.late_applied += 1
        ctl.outstanding, ctl.answer, ctl.answered_late = None, cmd, False

    def _bad_message(
        self, identity: bytes, ctl: AttachedController | None, message: str, field_name: str, kind: str = "RequestError"
    ) -> None:
        tick = ctl.outstanding if ctl is not None else None
        self._send(identity, proto.error(message, field_name=field_name, tick=tick, kind=kind))
        if ctl is None:
            log.warning("message from an unattached peer refused: %s", message)
            return
        self._stats[ctl.name].errors += 1
        log.warning("controller %s: bad command: %s", ctl.name, message)
        if ctl.outstanding is not None:  # it was its answer: the tick goes on under its policy
            ctl.outstanding = None
            self._apply_policy(ctl, f"bad command at tick {tick}: {message}")

    def _actuate(self, record: TickRecord) -> None:
        """Commands that have come through their robot's device models this tick reach the engine."""
        for robot, devices in self._devices.items():
            tripped = devices.watchdog_tripped
            for command in devices.due(record.tick, record.time):
                try:
                    self.engine.apply(robot, command)
                except RequestError as exc:
                    log.warning("robot %s: a delayed command was refused by the engine: %s", robot, exc)
            if devices.watchdog_tripped and not tripped:
                log.warning(
                    "robot %s: no command for %g s: the watchdog zeroes its torques", robot, devices.config.watchdog
                )
                self._events.append(ControllerEvent("", robot, "watchdog", f"tick {record.tick}"))

    def _apply(self, ctl: AttachedController, cmd: proto.Command, record: TickRecord) -> None:
        if cmd.sensors:
            try:
                self._switch_sensors(ctl.robot, cmd.sensors)
            except RequestError as exc:
                self._bad_message(ctl.identity, ctl, str(exc), "sensors")
                self._apply_policy(ctl, f"command refused: {exc}")
                return
        merged = self._held.merge(ctl.robot, cmd)
        devices = self._devices.get(ctl.robot)
        try:
            if devices is not None:
                devices.command(record.tick, merged)
            else:
                self.engine.apply(ctl.robot, merged)
        except RequestError as exc:
            self._bad_message(ctl.identity, ctl, str(exc), exc.field)
            self._apply_policy(ctl, f"command refused by the engine: {exc}")
            return
        self._stats[ctl.name].ticks += 1
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

    def _switch_sensors(self, robot: str, switches: dict[str, bool]) -> None:
        sensing = self._sensor_delivery()
        if sensing is None:
            raise RequestError(
                f"command field 'sensors': robot {robot!r} has no range or vision sensors", field="sensors"
            )
        sensing.switch(robot, switches)

    def _joint_table(self, robot: str) -> tuple[list[str], dict[str, int]]:
        table = self._joints.get(robot)
        if table is None:
            names = list(self.engine.body(robot).joint_names)
            table = self._joints[robot] = (names, {n: i for i, n in enumerate(names)})
        return table

    # --- deadlines and policies ---

    def _wait_for_answers(self, tick: int) -> None:
        started = time.perf_counter()
        while True:
            waiting = [c for c in self._by_name.values() if c.outstanding == tick]
            if not waiting:
                return
            now = time.perf_counter()
            for ctl in waiting:
                if now >= ctl.sent_at + ctl.deadline:
                    self._stats[ctl.name].missed += 1
                    self._lost(
                        ctl, f"no answer to tick {tick} within its deadline of {ctl.deadline:g} s", cause="deadline"
                    )
            waiting = [c for c in waiting if c.name in self._by_name]
            if not waiting:
                continue
            remaining = min(c.sent_at + c.deadline for c in waiting) - now
            if self.serve_requests is None:
                self._receive(remaining)
                continue
            self._receive(min(remaining, SERVE_SLICE_S))
            if time.perf_counter() - started >= SERVE_SLICE_S:  # answers in time cost no request polling
                self.serve_requests()

    def _check_realtime(self, tick: int) -> None:
        now = time.perf_counter()
        for ctl in list(self._by_name.values()):
            if ctl.outstanding is None:
                continue
            if ctl.outstanding == tick:  # its slot is over: the last command holds for this step
                self._stats[ctl.name].missed += 1
                ctl.answered_late = True
                self._events.append(ControllerEvent(ctl.name, ctl.robot, "miss", f"tick {tick}"))
            if now >= ctl.sent_at + ctl.deadline:
                self._lost(
                    ctl,
                    f"no answer to tick {ctl.outstanding} within its deadline of {ctl.deadline:g} s",
                    cause="deadline",
                )

    def _lost(self, ctl: AttachedController, reason: str, *, cause: str = "connection") -> None:
        """The controller is gone (or as good as gone): detach it and apply its policy. ``cause`` is
        the error's field: ``connection`` (it dropped) or ``deadline`` (no answer in time)."""
        self._send(
            ctl.identity,
            proto.error(
                f"detached: {reason}; send hello to attach again", field_name=cause, tick=ctl.outstanding, fatal=True
            ),
        )
        self._detach(ctl)
        self._apply_policy(ctl, reason)

    def _detach(self, ctl: AttachedController) -> None:
        if self._by_identity.get(ctl.identity) is ctl:
            del self._by_identity[ctl.identity]
        if self._by_name.get(ctl.name) is ctl:
            del self._by_name[ctl.name]
            self._reorder()
            self._stats[ctl.name].attached = False
        self._events.append(ControllerEvent(ctl.name, ctl.robot, "detach"))
        if ctl.local is not None:
            try:
                ctl.local.stop()
            except Exception:
                log.exception("controller %s raised in stop()", ctl.name)
        # _fd_owner keeps the entry: only the connection's disconnect event removes it

    def _reorder(self) -> None:
        self._ordered = sorted(self._by_name.values(), key=lambda c: c.name)

    def _apply_policy(self, ctl: AttachedController, reason: str, *, level: int = logging.WARNING) -> None:
        stats = self._stats[ctl.name]
        stats.policy_applied = ctl.policy
        event = f"tick {int(self.engine.tick)}: {reason}; policy {ctl.policy}"
        stats.event(event)
        self._events.append(ControllerEvent(ctl.name, ctl.robot, "policy", event))
        log.log(level, "controller %s (robot %s): %s", ctl.name, ctl.robot, event)
        if ctl.policy == "stop":
            if self._stop_reason is None:
                self._stop_reason = f"controller {ctl.name!r} (robot {ctl.robot!r}): {reason}; its policy is stop"
        elif ctl.policy == "zero":
            self._zero(ctl.robot)

    def _zero(self, robot: str) -> None:
        names, _ = self._joint_table(robot)
        self.engine.apply(robot, self._held.zero_torque(robot, names))

    def _send(self, identity: bytes, frame: bytes) -> bool:
        if self._router is None or identity.startswith(b"local/"):
            return False
        if identity.startswith(UNIX_PREFIX):
            return self._unix is not None and self._unix.send(identity, frame)
        try:
            self._router.send_multipart([identity, frame], zmq.NOBLOCK)
            return True
        except zmq.ZMQError:  # EHOSTUNREACH: that peer is gone; EAGAIN: its queue is full
            return False


class _UnixFrame:
    """A message from the Unix channel, looking like the ZeroMQ frame the handlers take: it has
    no metadata (no socket number, no authenticated key)."""

    __slots__ = ("bytes",)

    def __init__(self, data: bytes) -> None:
        self.bytes = data

    def get(self, option: Any) -> Any:
        raise zmq.ZMQError(zmq.EINVAL)


def _source_fd(frame: zmq.Frame) -> int | None:
    try:
        return int(frame.get(zmq.SRCFD))
    except (zmq.ZMQError, ValueError, TypeError):
        return None


def attach_in_process(hub: ControllerHub, project: Project) -> None:
    """Load and attach every controller the project runs in process (``in_process: true``)."""
    from hrpsim.controllers.runner import load_controller

    for config in project.controllers:
        if config.in_process and config.name not in hub.attached:
            controller = load_controller(config.file, **config.options)
            hub.attach_local(controller, name=config.name, robot=config.robot, period=config.period)


def _bind_ipc(router: zmq.Socket) -> str | None:
    """Also bind an ipc:// endpoint: controllers on this host skip the TCP stack (a shorter round trip)."""
    path = unix_channel.fresh_path(".sock")
    try:
        router.bind(f"ipc://{path}")
    except zmq.ZMQError as exc:  # a platform without ipc: tcp alone still works
        log.info("no ipc endpoint for the controller hub: %s", exc)
        return None
    return f"ipc://{path}"
