"""The controller hub: the simulator's side of the tick protocol (hrpsim/tick.py).

One ROUTER socket serves every controller. The simulator's loop calls, per tick k::

    hub.poll(); hub.before_collide(k); world.collide(); ...; hub.after_collide(k); world.integrate()

``before_collide`` sends the state of tick k to each controller whose turn it is, so the
controllers compute while the world detects collisions; ``after_collide`` collects their commands
(lockstep: waits for each up to its deadline; realtime: takes what has arrived), validates them and
hands them to ``world.command``. Validated commands are applied in controller-name order, so the
result does not depend on which answer arrived first: lockstep runs are deterministic.

A controller that misses its deadline, disconnects (its TCP connection drops: noticed at once
through the socket monitor), says bye, or sends a bad command gets its policy applied: ``stop``
raises :class:`RunStopped`, ``hold`` keeps its last command, ``zero`` switches its robot's joints
to zero torque. Each is logged and counted in :meth:`ControllerHub.summary`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import zmq
from hrpsim.simserver.sensor_delivery import SensorDelivery, with_readings
from zmq.utils.monitor import parse_monitor_message

from hrpsim import tick as proto
from hrpsim.errors import ProtocolError, RequestError, SimulationError
from hrpsim.project import ControllerConfig, Project
from hrpsim.service import DEFAULT_BIND, bind_router

log = logging.getLogger("hrpsim.simserver.hub")

ADHOC_POLICY = "hold"  # for a controller the project does not list
ADHOC_DEADLINE = 5.0


class RunStopped(SimulationError):
    """A controller's policy is ``stop`` and it missed its deadline, left, died or sent a bad command."""


@dataclass
class _Stats:
    ticks: int = 0
    missed: int = 0
    errors: int = 0
    rtts_us: list[float] = field(default_factory=list)
    policy_applied: str | None = None
    events: list[str] = field(default_factory=list)
    attached: bool = False

    def public(self) -> dict[str, Any]:
        rtts = np.asarray(self.rtts_us) if self.rtts_us else None
        return {
            "ticks": self.ticks,
            "rtt_p50_us": float(np.percentile(rtts, 50)) if rtts is not None else None,
            "rtt_p99_us": float(np.percentile(rtts, 99)) if rtts is not None else None,
            "missed": self.missed,
            "errors": self.errors,
            "policy_applied": self.policy_applied,
            "events": list(self.events[-20:]),
            "attached": self.attached,
        }


@dataclass
class _Controller:
    """One attached controller."""

    name: str
    robot: str
    identity: bytes
    every: int
    period: float
    policy: str
    deadline: float
    start_tick: int
    fd: int | None = None
    outstanding: int | None = None  # the tick whose state it has and has not answered yet
    sent_at: float = 0.0
    answer: proto.Command | None = None

    def due(self, tick: int) -> bool:
        return tick >= self.start_tick and tick % self.every == 0


@dataclass
class _Held:
    """The full-length command arrays of one robot (what partial commands are merged into)."""

    torque: np.ndarray
    q_ref: np.ndarray
    dq_ref: np.ndarray


class ControllerHub:
    """Serves the tick protocol for every controller of one world."""

    RunStopped = RunStopped

    def __init__(self, world: Any, project: Project, *, context: zmq.Context | None = None,
                 bind: str = DEFAULT_BIND, spin_s: float = 0.0005) -> None:
        self.world = world
        self._spin_s = spin_s  # busy-poll this long before sleeping in poll(): answers come back fast
        self._configure(project)
        self._by_identity: dict[bytes, _Controller] = {}
        self._by_name: dict[str, _Controller] = {}
        self._fd_owner: dict[int, bytes] = {}  # socket number of each controller's connection
        self._stale_disconnects: dict[int, int] = {}
        self._ordered: list[_Controller] = []  # attached controllers by name: the order commands apply in
        ctx = context or zmq.Context.instance()
        self._router, self.endpoint = bind_router(ctx, bind, "controller hub", mandatory=True)
        self._monitor = self._router.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._poller = zmq.Poller()
        self._poller.register(self._router, zmq.POLLIN)
        self._poller.register(self._monitor, zmq.POLLIN)
        log.info("controller hub serving at %s (%s)", self.endpoint, project.world.sync)

    # --- the simulator's loop ---

    def poll(self) -> None:
        """Handle joining and leaving controllers (hello/bye) without blocking."""
        self._receive(0.0)

    def before_collide(self, tick: int) -> None:
        """Send the state of ``tick`` to every controller whose turn it is."""
        frames: dict[str, bytes] = {}
        sensing = self._sensor_delivery()
        if sensing is not None:
            sensing.produce(tick, self.world.time)
        for ctl in self._ordered:
            if not ctl.due(tick):
                continue
            if ctl.outstanding is not None:  # realtime: still busy with an earlier tick
                self._stats[ctl.name].missed += 1
                continue
            readings = sensing.take(ctl.name, ctl.robot) if sensing is not None else {}
            frame = frames.get(ctl.robot)
            if readings:  # range and vision frames this controller has not had: a state of its own
                frame = proto.state(with_readings(self.world.state(ctl.robot), readings))
            elif frame is None:
                frame = frames[ctl.robot] = proto.state(self.world.state(ctl.robot))
            # an answer that came in since the last tick (realtime) stays: after_collide applies it
            ctl.outstanding, ctl.sent_at = tick, time.perf_counter()
            if not self._send(ctl.identity, frame):
                self._lost(ctl, f"its connection dropped (the state of tick {tick} could not be sent)")

    def after_collide(self, tick: int) -> None:
        """Collect, check and apply the commands answering ``tick``; apply policies; RunStopped to stop."""
        if self.lockstep:
            self._wait_for_answers(tick)
        else:
            self._receive(0.0)
            self._check_realtime(tick)
        for ctl in self._ordered:
            if ctl.answer is not None:
                self._apply(ctl, ctl.answer)
                ctl.answer = None
        if self._stop_reason is not None:
            reason, self._stop_reason = self._stop_reason, None
            raise RunStopped(reason)

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

    @property
    def attached(self) -> list[str]:
        return sorted(self._by_name)

    def _configure(self, project: Project) -> None:
        self.project = project
        self.lockstep = project.world.sync == "lockstep"
        self._configs = {c.name: c for c in project.controllers}
        self._stats: dict[str, _Stats] = {c.name: _Stats() for c in project.controllers}
        self._held: dict[str, _Held] = {}
        self._joints: dict[str, tuple[list[str], dict[str, int]]] = {}
        self._stop_reason: str | None = None
        self._close_sensors()
        self._sensors: SensorDelivery | bool | None = False  # False: not built yet (built at the first tick)

    def _sensor_delivery(self) -> SensorDelivery | None:
        if self._sensors is False:
            self._sensors = SensorDelivery.for_world(self.world)
        return self._sensors

    def _close_sensors(self) -> None:
        if getattr(self, "_sensors", None):
            self._sensors.close()

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

    def close(self) -> None:
        if self._router.closed:
            return
        self.end_run("the simulator is closing")
        self._close_sensors()
        try:
            self._router.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(linger=0)
        self._router.close(linger=0)

    # --- receiving ---

    def _receive(self, timeout: float) -> None:
        """Handle every waiting message, waiting up to ``timeout`` s for the first."""
        if not self._spin_until_ready(timeout):
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
        if self._monitor.poll(0):
            self._handle_disconnects()

    def _spin_until_ready(self, timeout: float) -> bool:
        spin_until = time.perf_counter() + min(timeout, self._spin_s)
        while True:
            if self._router.poll(0) or self._monitor.poll(0):
                return True
            if time.perf_counter() >= spin_until:
                break
        remaining_ms = (timeout - self._spin_s) * 1000
        return remaining_ms > 0 and bool(self._poller.poll(remaining_ms))

    def _handle(self, identity: bytes, frame: zmq.Frame) -> None:
        ctl = self._by_identity.get(identity)
        try:
            msg = proto.decode(frame.bytes, expect=proto.TO_SIMULATOR)
        except ProtocolError as exc:
            self._bad_message(identity, ctl, f"malformed message: {exc}", "")
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
        while self._monitor.poll(0):
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
        try:
            hello = proto.parse_hello(msg)
            ctl = self._admit(identity, hello)
        except RequestError as exc:
            log.warning("refused a controller: %s", exc)
            self._send(identity, proto.error(str(exc), field_name=proto.field_of(str(exc)) or "hello", fatal=True))
            return
        try:
            ctl.fd = int(frame.get(zmq.SRCFD))
        except (zmq.ZMQError, ValueError, TypeError):
            ctl.fd = None
        if ctl.fd is not None:
            self._note_connection(ctl.fd, identity)
        body = self.world.body(ctl.robot)
        names, _ = self._joint_table(ctl.robot)
        self._send(identity, proto.encode(
            proto.WELCOME, controller=ctl.name, robot=ctl.robot, period=ctl.period, every=ctl.every,
            timestep=self.project.world.timestep, sync=self.project.world.sync, policy=ctl.policy,
            deadline=ctl.deadline, joints=names,
            sensors=[{"name": s.name, "type": s.type, "id": s.id} for s in body.sensors], body=body.to_wire()))
        log.info("controller %s attached to %s (every %d ticks from tick %d, policy %s, deadline %g s)",
                 ctl.name, ctl.robot, ctl.every, ctl.start_tick, ctl.policy, ctl.deadline)

    def _admit(self, identity: bytes, hello: proto.Hello) -> _Controller:
        robots = list(self.world.robots)
        if hello.robot not in robots:
            raise RequestError(f"hello field 'robot': no robot named {hello.robot!r} in this world "
                               f"(robots: {', '.join(robots) or 'none'})")
        config = self._configs.get(hello.controller)
        if config is not None and config.robot != hello.robot:
            raise RequestError(f"hello field 'robot': the project attaches controller {hello.controller!r} to "
                               f"{config.robot!r}, not {hello.robot!r}")
        period = self._period(hello, config)
        old = self._by_name.get(hello.controller)
        if old is not None:
            log.warning("controller %s attached again; the previous connection is dropped", hello.controller)
            self._send(old.identity, proto.error(f"another process attached as controller {old.name!r}",
                                                 field_name="controller", fatal=True))
            self._detach(old)
        ctl = _Controller(
            name=hello.controller, robot=hello.robot, identity=identity,
            every=round(period / self.project.world.timestep), period=period,
            policy=config.policy if config else (hello.policy or ADHOC_POLICY),
            deadline=config.deadline if config else (hello.deadline or ADHOC_DEADLINE),
            start_tick=int(self.world.tick))
        self._by_identity[identity] = ctl
        self._by_name[ctl.name] = ctl
        self._reorder()
        stats = self._stats.setdefault(ctl.name, _Stats())
        stats.attached = True
        return ctl

    def _period(self, hello: proto.Hello, config: ControllerConfig | None) -> float:
        timestep = self.project.world.timestep
        if config is not None:
            if hello.period is not None and abs(hello.period - config.period) > 1e-9:
                raise RequestError(f"hello field 'period': {hello.period} differs from the project's "
                                   f"{config.period} for {config.name!r}; drop --period or fix the project")
            return config.period
        period = hello.period if hello.period is not None else timestep
        ratio = period / timestep
        if round(ratio) < 1 or abs(ratio - round(ratio)) > 1e-6:
            raise RequestError(f"hello field 'period': {period} s is not a whole multiple of the time step "
                               f"{timestep} s")
        return period

    # --- commands ---

    def _on_command(self, identity: bytes, ctl: _Controller | None, msg: dict[str, Any]) -> None:
        if ctl is None:
            self._send(identity, proto.error("not attached: send hello first (or again, after a missed deadline)",
                                             field_name="type", tick=msg.get("tick"), fatal=True))
            return
        names, index_of = self._joint_table(ctl.robot)
        expected = ctl.outstanding
        try:
            cmd = proto.parse_command(msg, joint_names=names, index_of=index_of, expected_tick=expected)
        except RequestError as exc:
            self._bad_message(identity, ctl, str(exc), proto.field_of(str(exc)))
            return
        if expected is None:
            self._bad_message(identity, ctl, f"command for tick {cmd.tick}, but no state is waiting for an answer",
                              "tick")
            return
        stats = self._stats[ctl.name]
        stats.rtts_us.append((time.perf_counter() - ctl.sent_at) * 1e6)
        ctl.outstanding, ctl.answer = None, cmd

    def _bad_message(self, identity: bytes, ctl: _Controller | None, message: str, field_name: str) -> None:
        tick = ctl.outstanding if ctl is not None else None
        self._send(identity, proto.error(message, field_name=field_name, tick=tick))
        if ctl is None:
            log.warning("message from an unattached peer refused: %s", message)
            return
        self._stats[ctl.name].errors += 1
        log.warning("controller %s: bad command: %s", ctl.name, message)
        if ctl.outstanding is not None:  # it was its answer: the tick goes on under its policy
            ctl.outstanding = None
            self._apply_policy(ctl, f"bad command at tick {tick}: {message}")

    def _apply(self, ctl: _Controller, cmd: proto.Command) -> None:
        if cmd.sensors:
            try:
                self._switch_sensors(ctl.robot, cmd.sensors)
            except RequestError as exc:
                self._bad_message(ctl.identity, ctl, str(exc), "sensors")
                self._apply_policy(ctl, f"command refused: {exc}")
                return
        held = self._held_of(ctl.robot)
        updates: dict[str, np.ndarray] = {}
        for key in proto.COMMAND_ARRAYS:
            values = getattr(cmd, key)
            if values is not None:
                target = getattr(held, key)
                target[cmd.indices] = values
                updates[key] = target.copy()
        try:
            self.world.command(ctl.robot, modes=cmd.modes or None, **updates)
        except RequestError as exc:
            self._bad_message(ctl.identity, ctl, str(exc), proto.field_of(str(exc)))
            self._apply_policy(ctl, f"command refused by the world: {exc}")
            return
        self._stats[ctl.name].ticks += 1

    def _switch_sensors(self, robot: str, switches: dict[str, bool]) -> None:
        sensing = self._sensor_delivery()
        if sensing is None:
            raise RequestError(f"command field 'sensors': robot {robot!r} has no range or vision sensors")
        sensing.switch(robot, switches)

    def _held_of(self, robot: str) -> _Held:
        held = self._held.get(robot)
        if held is None:
            q = np.array(self.world.state(robot)["q"], dtype=np.float64)
            held = self._held[robot] = _Held(torque=np.zeros_like(q), q_ref=q, dq_ref=np.zeros_like(q))
        return held

    def _joint_table(self, robot: str) -> tuple[list[str], dict[str, int]]:
        table = self._joints.get(robot)
        if table is None:
            names = list(self.world.body(robot).joint_names)
            table = self._joints[robot] = (names, {n: i for i, n in enumerate(names)})
        return table

    # --- deadlines and policies ---

    def _wait_for_answers(self, tick: int) -> None:
        while True:
            waiting = [c for c in self._by_name.values() if c.outstanding == tick]
            if not waiting:
                return
            now = time.perf_counter()
            for ctl in waiting:
                if now >= ctl.sent_at + ctl.deadline:
                    self._stats[ctl.name].missed += 1
                    self._lost(ctl, f"no answer to tick {tick} within its deadline of {ctl.deadline:g} s")
            waiting = [c for c in waiting if c.name in self._by_name]
            if waiting:
                self._receive(min(c.sent_at + c.deadline for c in waiting) - now)

    def _check_realtime(self, tick: int) -> None:
        now = time.perf_counter()
        for ctl in list(self._by_name.values()):
            if ctl.outstanding is None:
                continue
            if ctl.outstanding == tick:
                self._stats[ctl.name].missed += 1  # late: the last command holds for this step
            if now >= ctl.sent_at + ctl.deadline:
                self._lost(ctl, f"no answer to tick {ctl.outstanding} within its deadline of {ctl.deadline:g} s")

    def _lost(self, ctl: _Controller, reason: str) -> None:
        """The controller is gone (or as good as gone): detach it and apply its policy."""
        self._send(ctl.identity, proto.error(f"detached: {reason}; send hello to attach again",
                                             field_name="deadline", tick=ctl.outstanding, fatal=True))
        self._detach(ctl)
        self._apply_policy(ctl, reason)

    def _detach(self, ctl: _Controller) -> None:
        if self._by_identity.get(ctl.identity) is ctl:
            del self._by_identity[ctl.identity]
        if self._by_name.get(ctl.name) is ctl:
            del self._by_name[ctl.name]
            self._reorder()
            self._stats[ctl.name].attached = False
        # _fd_owner keeps the entry: only the connection's disconnect event removes it

    def _reorder(self) -> None:
        self._ordered = sorted(self._by_name.values(), key=lambda c: c.name)

    def _apply_policy(self, ctl: _Controller, reason: str, *, level: int = logging.WARNING) -> None:
        stats = self._stats[ctl.name]
        stats.policy_applied = ctl.policy
        event = f"tick {int(self.world.tick)}: {reason}; policy {ctl.policy}"
        stats.events.append(event)
        log.log(level, "controller %s (robot %s): %s", ctl.name, ctl.robot, event)
        if ctl.policy == "stop":
            if self._stop_reason is None:
                self._stop_reason = f"controller {ctl.name!r} (robot {ctl.robot!r}): {reason}; its policy is stop"
        elif ctl.policy == "zero":
            self._zero(ctl.robot)

    def _zero(self, robot: str) -> None:
        names, _ = self._joint_table(robot)
        held = self._held_of(robot)
        held.torque[:] = 0.0
        self.world.command(robot, torque=held.torque.copy(), modes=dict.fromkeys(names, "torque"))

    def _send(self, identity: bytes, frame: bytes) -> bool:
        try:
            self._router.send_multipart([identity, frame], zmq.NOBLOCK)
            return True
        except zmq.ZMQError:  # EHOSTUNREACH: that peer is gone; EAGAIN: its queue is full
            return False
