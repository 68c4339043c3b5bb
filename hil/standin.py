"""A hardware-in-the-loop stand-in: the simulator's side of the tick protocol for one robot, without
physics, so a controller runs against it unchanged (same runner, same messages, same nameserver).

    hrpsim run hil --project P.yaml --robot NAME [--replay FILE.pos] [--until T]

It is the simulator with the kinematic engine (engines/kinematic): the same service, tick loop and
controller hub. The joints follow the controller's commands kinematically, or, with ``--replay``,
replay recorded joint angles (an OpenHRP motion table: time + one column per joint) whatever the
controller sends, as a robot whose data is played back would. It is paced by the wall clock
(``realtime``) unless ``--lockstep``. It registers as kind ``simserver`` with ``metadata.hil`` true.
The model is loaded in this process when no modelloader is registered (or with ``--local-loader``).
It joins the nameserver at ``--nameserver`` (or ``$HRPSIM_NAMESERVER``, or port 2809); when none
answers there, it serves one itself at that address for as long as it runs, so a bench of one
robot needs nothing else started first.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import threading
from pathlib import Path

from hrpsim.bodyinfo import Body
from hrpsim.cli_options import add_service_options
from hrpsim.engines.kinematic.engine import KinematicEngine
from hrpsim.errors import ConfigError, HrpsimError, NotFound, Timeout
from hrpsim.logs import setup_logging
from hrpsim.motion_data import Motion, read_motion
from hrpsim.nameserver.name_service import NameServer
from hrpsim.naming import NameClient, nameserver_address
from hrpsim.project import Project, load_project
from hrpsim.simserver.sim_service import SimServer

log = logging.getLogger("hrpsim.hil")


def stand_in_project(project: Project, robot: str, *, lockstep: bool) -> Project:
    """The project reduced to one robot and its controllers, paced as hardware is."""
    world = dataclasses.replace(project.world, sync="lockstep" if lockstep else "realtime", engine="kinematic")
    return dataclasses.replace(
        project,
        world=world,
        models=[project.model(robot)],
        controllers=[c for c in project.controllers if c.robot == robot],
        collisions=[],
    )


def make_stand_in(
    project: Project,
    robot: str,
    body: Body,
    *,
    replay: Motion | None = None,
    lockstep: bool = False,
    until: float | None = None,
    name: str = "hil",
    nameserver: str | None = None,
    bind: str | None = None,
) -> SimServer:
    reduced = stand_in_project(project, robot, lockstep=lockstep)
    engine = KinematicEngine(reduced, {robot: body}, motion=replay)
    options = {} if bind is None else {"bind": bind}
    return SimServer(
        reduced, nameserver=nameserver, until=until, name=name, engine=engine, metadata={"hil": True}, **options
    )


def join_or_serve_nameserver(address: str | None, *, wait: float = 1.0) -> NameServer | None:
    """None when a nameserver answers at ``address``; else a nameserver this process serves there
    (from a background thread, until the process ends). Binding fails with a clear error when the
    address is not this host's."""
    address = nameserver_address(address)
    try:
        with NameClient(address, timeout=wait) as ns:
            ns.list()
        return None
    except Timeout:
        pass
    server = NameServer(bind=address)
    threading.Thread(target=server.serve_forever, kwargs={"install_signals": False}, daemon=True).start()
    log.info("no nameserver answered at %s: serving one in this process while it runs", server.endpoint)
    return server


def _body(project: Project, robot: str, nameserver: str | None, local: bool) -> Body:
    model = project.model(robot)
    if not local:
        from hrpsim.models import fetch_body

        try:
            result = fetch_body(model.file, nameserver=nameserver, options=model.options or None, wait=0.5)
            return result if isinstance(result, Body) else Body.from_wire(result)
        except NotFound:
            log.info("no modelloader is registered: loading %s in this process", model.file)
    from hrpsim.modelloader import load_body

    return load_body(model.file)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hrpsim run hil", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--project",
        required=True,
        type=Path,
        help="project file: the robot's model, placement, time step and controllers",
    )
    p.add_argument("--robot", required=True, help="the model to stand in for")
    p.add_argument("--replay", type=Path, help="play back joint angles from this motion table instead")
    p.add_argument("--lockstep", action="store_true", help="wait for controllers instead of the wall clock")
    p.add_argument("--until", type=float, help="sim time to stop at (default: the project's end_time)")
    p.add_argument("--start", action="store_true", help="start at once instead of waiting for 'start'")
    add_service_options(p, name="hil")
    p.add_argument(
        "--local-loader",
        action="store_true",
        help="load the model in this process even when a modelloader is registered",
    )
    args = p.parse_args(argv)
    setup_logging("hil")
    try:
        project = load_project(args.project)
        if args.robot not in [m.name for m in project.models]:
            raise ConfigError(f"{args.project}: no model named {args.robot!r}")
        join_or_serve_nameserver(args.nameserver)
        body = _body(project, args.robot, args.nameserver, args.local_loader)
        replay = read_motion(args.replay, joints=len(body.joints)) if args.replay else None
        stand_in = make_stand_in(
            project,
            args.robot,
            body,
            replay=replay,
            lockstep=args.lockstep,
            until=args.until,
            name=args.name,
            nameserver=args.nameserver,
            bind=args.bind,
        )
    except HrpsimError as exc:
        log.error("%s", exc)
        return 2
    if args.start:
        stand_in.op_start()
    stand_in.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
