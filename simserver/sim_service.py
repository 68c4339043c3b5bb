"""The simulator process: ``hrpsim run simserver --project FILE [--until T] [--nameserver ADDR] [--bind ADDR]``.

The RPC front end of the simulator core (simserver/world.py): the world, its hub, loop, observers,
summary and life are the :class:`World`'s; this module serves them as operations and runs the
world in the background of its request loop.

Registers as ``simserver`` (kind ``simserver``) with the endpoints of its world-state stream
(``state``) and controller hub (``controllers``) in its metadata. Its operations, in the spirit of
OpenHRP's DynamicsSimulator (run control, the world's data, commands, pushes, snapshots), are
declared in simserver/operations.py, each with the World method, or the method here, that serves
it; docs/protocol.md tabulates them.

While running, requests are answered between batches of ticks (every few milliseconds), and every
20 ms while a tick waits for a late controller or a lost collision service (docs/faults.md). A run
stopped by an error (a bad state, a controller policy) leaves the process serving, with the
error in ``status`` and ``summary``, until ``quit``.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from pathlib import Path
from typing import Any

import zmq

from hrpsim.cli_options import add_service_options
from hrpsim.engines.base import Engine
from hrpsim.errors import HrpsimError, NotFound, RequestError, SimulationError
from hrpsim.files import ReadPolicy, add_root_option, model_roots, reading_under
from hrpsim.logs import setup_logging
from hrpsim.naming import host_identity, sibling_bind
from hrpsim.project import RECORD_PROFILES, Project, apply_record_profile, load_project, record_profiles_help
from hrpsim.rpc import DEFAULT_BIND, Service
from hrpsim.simserver.bodies import load_bodies
from hrpsim.simserver.operations import CONTROLLER_WAIT_S, MAX_STEP_TICKS, SIMULATOR
from hrpsim.simserver.publisher import StatePublisher
from hrpsim.simserver.run_state import RUNNING
from hrpsim.simserver.tick_record import Observer
from hrpsim.simserver.world import Snapshot, World, WorldFront

log = logging.getLogger("hrpsim.simserver")

TICK_BATCH_S = 0.005  # wall seconds of ticking between looks at the request socket
MAX_SNAPSHOTS = 16  # named snapshots a simulator keeps (each holds a copy of the world's state)


class SimServer(WorldFront, Service):
    """The World served as operations (docs/protocol.md): each one call into it, and the run advanced
    in slices between requests while it runs."""

    kind = "simserver"
    declared = SIMULATOR  # simserver/operations.py: each operation once, with the method serving it

    def __init__(
        self,
        project: Project,
        *,
        nameserver: str | None = None,
        bind: str = DEFAULT_BIND,
        until: float | None = None,
        name: str = "simserver",
        register: bool = True,
        context: zmq.Context | None = None,
        engine: Engine | None = None,
        observers: list[Observer] | None = None,
        record: str | Path | None = None,
        metadata: dict[str, Any] | None = None,
        roots: tuple[str, ...] = (),
    ) -> None:
        """``record``: record every run to this MCAP file instead of the project's ``record:`` file;
        ``until``: the run's end time instead of the project's ``end_time``."""
        self.nameserver = nameserver
        self.read_policy = ReadPolicy(roots=(Path(project.path).parent, *model_roots(roots)))
        self._extra_metadata = dict(metadata or {})
        ctx = context or zmq.Context.instance()
        self.publisher = StatePublisher(ctx, bind=sibling_bind(bind, "state"))
        try:
            self.world = World(
                project,
                engine=engine,
                nameserver=nameserver,
                hub_bind=sibling_bind(bind, "controllers"),
                context=ctx,
                observers=[self.publisher, *(observers or [])],
                record=record,
                end_time=until,
            )
        except BaseException:
            self.publisher.close()
            raise
        self.world.serve_requests = self._serve_within_tick
        self._within_tick = False
        # What a tick that waits for a late controller still answers (the declarations say): reading,
        # stopping, and start (a no-op while running); nothing that moves the world.
        self._served_within_tick = frozenset(name for op in self.declared if op.within_tick for name in op.names)
        self._snapshots: dict[str, Snapshot] = {}
        super().__init__(name, bind=bind, nameserver=nameserver, register=register, context=ctx)

    def metadata(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "state": self.publisher.endpoint,
            "project": self.project.path,
            "controllers": self.hub.endpoint,
            "controllers_ipc": self.hub.ipc_endpoint,
            "controllers_unix": self.hub.unix_endpoint,
            "host": host_identity(),
            "robots": list(self.engine.robots),
            "engine": self.engine.name,
            **self._extra_metadata,
        }

    # --- the serving loop ---

    def serve_forever(self, *, install_signals: bool = True) -> None:
        if install_signals:
            self.install_signal_handlers()
        self.start()
        try:
            while not self.stopping:
                if self.world.run.phase == RUNNING:
                    self.serve_pending(0.0)
                    if self.world.run.phase == RUNNING and not self.stopping:  # a pause just served stops here
                        self._advance()
                else:
                    self.serve_pending(0.02)
                    self.world.idle()
        finally:
            self.close()

    def _advance(self) -> None:
        try:
            self.world.advance(TICK_BATCH_S)
        except SimulationError:  # the world ended the run with it (status, summary); the process serves on
            pass

    def _serve_within_tick(self) -> bool:
        """Answer requests while the world is in the middle of a tick or a step; False once asked to quit."""
        self._within_tick = True
        try:
            self.serve_pending(0.0)
        finally:
            self._within_tick = False
        return not self.stopping

    def _call(self, op: str, args: dict[str, Any]) -> Any:
        if self._within_tick and op not in self._served_within_tick:
            raise RequestError(f"{op}: the simulator is {self.world.busy_with()}; pause first, or retry")
        return super()._call(op, args)

    def close(self) -> None:
        self.world.close()  # quit or a signal mid-run: the recorder still finishes its file (a no-op if done)
        self.publisher.close()
        super().close()

    # --- run control ---

    def op_init(self, project: str | None = None) -> dict[str, Any]:
        with reading_under(self.read_policy):  # a peer's project: only from the allowed folders
            proj = load_project(project) if project else load_project(self.project.path)
            bodies = load_bodies(proj, self.nameserver)
        self.world.load(proj, bodies)
        return self.world.status()

    def op_start(self, until: float | None = None, wait: float | None = CONTROLLER_WAIT_S) -> dict[str, Any]:
        """Run to ``until`` once the project's controllers have attached (waiting ``wait`` s at most;
        None: as long as it takes; 0: start at once). A controller the run already ended for is waited
        for again."""
        # Everything built so far (the world, parsers, the model) lives as long as the run: moved out
        # of the cyclic collector's sight, a full collection no longer walks it (tens of ms each time,
        # a stall a realtime run would count as missed ticks). Refcounting still frees it.
        gc.collect()
        gc.freeze()
        self.world.start(until, wait=wait)
        return self.world.status()

    def op_pause(self) -> dict[str, Any]:
        self.world.pause()
        return self.world.status()

    def op_step(self, n: int = 1) -> dict[str, Any]:
        """Advance ``n`` ticks while paused, answering requests between batches of ticks: ``pause``
        or ``quit`` ends the step early (the reply's ``stepped`` says how many were made), and so does
        the run's end time."""
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_STEP_TICKS:
            raise RequestError(
                f"step: n must be an integer from 1 to {MAX_STEP_TICKS}, got {n!r}; "
                "for a longer advance, start(until=...) and pause",
                field="n",
            )
        try:
            made = self.world.step(n, batch_s=TICK_BATCH_S, between=self._serve_within_tick)
        finally:
            self.world.hand_over()
        return {**self.world.status(), "stepped": made}

    def op_reset(self) -> dict[str, Any]:
        self.world.reset()
        return self.world.status()

    def op_snapshot(self, name: str = "default") -> dict[str, Any]:
        """Keep the world as it is now under ``name`` (replacing one of that name), to go back to with
        ``restore``; while paused. What the snapshot holds: docs/python-api.md."""
        if name not in self._snapshots and len(self._snapshots) >= MAX_SNAPSHOTS:
            raise RequestError(
                f"snapshot: this simulator keeps at most {MAX_SNAPSHOTS} snapshots "
                f"({', '.join(sorted(self._snapshots))}); reuse one of their names",
                field="name",
            )
        snapshot = self.world.snapshot()
        self._snapshots[name] = snapshot
        return {"name": name, "tick": snapshot.tick, "time": snapshot.time, "snapshots": sorted(self._snapshots)}

    def op_restore(self, name: str = "default") -> dict[str, Any]:
        """Go back to the snapshot kept under ``name`` (while paused); the status after it."""
        snapshot = self._snapshots.get(name)
        if snapshot is None:
            kept = ", ".join(sorted(self._snapshots)) or "none yet: take one with snapshot"
            raise NotFound(f"restore: no snapshot named {name!r} (snapshots: {kept})")
        self.world.restore(snapshot)
        return self.world.status()

    # --- data ---

    def op_state(self, robot: str) -> dict[str, Any]:
        return self.world.state(robot).to_wire()

    def op_raw_state(self, robot: str) -> dict[str, Any]:
        return self.world.raw_state(robot).to_wire()

    def op_sensor_state(self, robot: str) -> dict[str, Any]:
        return self.world.state(robot).sensors

    def op_set_link_data(
        self,
        robot: str,
        q: Any = None,
        dq: Any = None,
        root_position: Any = None,
        root_rotation: Any = None,
        root_velocity: Any = None,
    ) -> dict[str, Any]:
        values = {"q": q, "dq": dq, "root_position": root_position, "root_rotation": root_rotation}
        return self.world.set_link_data(robot, **values, root_velocity=root_velocity).to_wire()

    def op_set_external_force(self, robot: str, link: str, force: Any, torque: Any = (0.0, 0.0, 0.0)) -> bool:
        self.world.set_external_force(robot, link, force, torque)
        return True

    def op_command(
        self, robot: str, torque: Any = None, q_ref: Any = None, dq_ref: Any = None, modes: dict[str, str] | None = None
    ) -> bool:
        self.world.command(robot, torque=torque, q_ref=q_ref, dq_ref=dq_ref, modes=modes)
        return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hrpsim run simserver", description="Run the hrpsim simulator.")
    parser.add_argument("--project", required=True, help="the project file (YAML)")
    parser.add_argument("--until", type=float, help="sim time to stop at (default: the project's world.end_time)")
    add_service_options(parser, name="simserver")
    add_root_option(parser)
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--start",
        action="store_true",
        help="start the run as soon as the project's controllers have attached (default: wait for 'hrpsim sim start')",
    )
    when.add_argument("--start-now", action="store_true", help="start the run at once, controllers or not")
    parser.add_argument("--record", metavar="FILE.mcap", help="record every tick to this file (docs/recording.md)")
    parser.add_argument("--record-profile", choices=RECORD_PROFILES, help=record_profiles_help())
    args = parser.parse_args(argv)
    setup_logging("simserver")
    try:
        project = load_project(args.project)
        apply_record_profile(project, args.record, args.record_profile)
        server = SimServer(
            project,
            nameserver=args.nameserver,
            bind=args.bind,
            until=args.until,
            name=args.name,
            roots=tuple(args.model_root),
            record=args.record,
        )
    except HrpsimError as exc:
        print(f"hrpsim run simserver: {exc}", file=sys.stderr)
        return 1
    if args.start:
        server.op_start(wait=None)
    elif args.start_now:
        server.op_start(wait=0)
    server.serve_forever()
    return 0
