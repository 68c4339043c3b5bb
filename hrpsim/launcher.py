"""``hrpsim launch PROJECT.yaml``: start the stack a project needs, supervise it, stop it cleanly.

Order: the nameserver first (the others need its address), then everything else at once
(modelloader, collision, simserver, controllers): each waits for what it needs (the simulator for
its modelloader, a controller for its simulator), and the launcher waits until every one has
registered with the nameserver, within a deadline that names what did not come up and shows its
log. ``--serial-start`` starts them one at a time instead, each once the one before it has
registered. Then the simulation runs, with a progress line, and the run summary is printed (and
written with ``--summary``), whatever ended the run: Ctrl-C, SIGTERM or SIGHUP, a lost simulator,
an error, the end of the run all leave through the same shutdown path.

Once the run is going, a process that dies follows its restart policy (docs/faults.md): services
(nameserver, modelloader, collision; ``services: {NAME: {restart, restarts}}``, default
``on-failure``, 5 times) start again and register again; a controller (``controllers[].restart``,
default ``never``) is started again only when its project entry says ``on-failure`` — meanwhile
the simulator applies its ``policy``, and only ``stop`` ends the run. The simulator's death ends
the run, with the end of its log.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hrpsim import interrupts
from hrpsim.cli_options import NAMESERVER, add_security_options
from hrpsim.client import Client
from hrpsim.errors import AccessDenied, ConfigError, HrpsimError, NotFound, PeerGone, Timeout
from hrpsim.joint_names import check_joint_names
from hrpsim.logs import setup_logging
from hrpsim.naming import (
    ADDRESS_FILE,
    DEFAULT_NAMESERVER,
    ENV_NAMESERVER,
    ENV_REGISTRATION_OWNER,
    NameClient,
    new_owner,
    write_address_file,
)
from hrpsim.project import RECORD_PROFILES, Project, apply_record_profile, load_project, record_profiles_help
from hrpsim.security import ENV_KEYS, check_bind
from hrpsim.summary_report import empty_summary, format_summary
from hrpsim.supervisor import Child, RestartPolicy, Supervisor, wait_until

SERVICES = ("modelloader", "collision", "simserver")  # the components others reach at a registered endpoint
REGISTER_POLL_S = 0.02  # how often the start looks at what has registered
FOXGLOVE_ADDRESS = "127.0.0.1:8765"  # hrpsim view's default too (viewer/foxglove_live.py), not imported: it is heavy

HRPSIM = [sys.executable, "-m", "hrpsim"]

log = logging.getLogger("hrpsim.launch")


class LaunchError(HrpsimError):
    """A component did not come up, or died: the message names it and shows its log."""


class Launch:
    """One run of a project: the supervisor, the nameserver address, and the stop flag."""

    def __init__(self, project: Project, args: argparse.Namespace) -> None:
        self.project = project
        self.args = args
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.run_dir = Path(args.run_dir or Path("runs") / f"{Path(project.path).stem}-{stamp}-{os.getpid()}")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.sup = Supervisor(echo=None if args.quiet else sys.stdout, holds_tree=True)
        self.stop_requested = threading.Event()
        self.stop_reason = ""
        self.nameserver = ""
        self.address_file = self.run_dir / "nameserver.address"  # the nameserver's, once it serves
        self._nameserver_started: tuple[Child, str, Path] | None = None
        self.endpoints: dict[str, str] = {}
        self.owners: dict[str, str] = {}  # service -> the secret its registration is owned by
        self.last_status: dict[str, Any] = {}  # the simulator's latest status: the summary if it dies
        self.started_at: float | None = None  # wall-clock time (Unix s) the run started ticking

    # --- signals: the same path as any other stop ---

    def install_signals(self) -> None:
        def on_signal(signum: int, _frame: object) -> None:
            self.stop_reason = f"interrupted by {signal.Signals(signum).name}"
            self.stop_requested.set()

        for signum in interrupts.HELD:
            signal.signal(signum, on_signal)
        held = interrupts.pending()  # one that came while the launcher was still starting
        if held is not None:
            on_signal(held, None)

    def check_interrupted(self) -> None:
        if self.stop_requested.is_set():
            raise LaunchError(self.stop_reason or "stop requested")

    # --- starting ---

    def child_env(self) -> dict[str, str]:
        repo = str(Path(__file__).resolve().parents[1])
        path = os.pathsep.join(filter(None, [repo, os.environ.get("PYTHONPATH", "")]))
        return {ENV_NAMESERVER: self.nameserver_for_services(), "PYTHONPATH": path}

    def nameserver_for_services(self) -> str:
        """The nameserver's address, or while it is not known yet the file it will be written to:
        hrpsim's own services start beside their nameserver and wait for its address there."""
        return self.nameserver or f"{ADDRESS_FILE}{self.address_file}"

    def start_nameserver(self) -> None:
        """Start the nameserver (or join one); :meth:`await_nameserver` waits until it serves."""
        self.address_file.unlink(missing_ok=True)  # a run directory used before holds the last run's
        if self.args.join:
            self.nameserver = self.args.join
            write_address_file(self.address_file, self.nameserver)
            self.sup.echo(f"launch: joining the nameserver at {self.nameserver}")
            return
        self._nameserver_started = self._spawn_nameserver(self._nameserver_explicit() or DEFAULT_NAMESERVER)

    def _nameserver_explicit(self) -> str | None:
        return self.args.nameserver or os.environ.get(ENV_NAMESERVER)

    def await_nameserver(self) -> None:
        """Until the nameserver serves; its address goes to the address file for the services."""
        if self.nameserver:
            return
        try:
            self._await_nameserver(*self._nameserver_started)
        except LaunchError:
            if self._nameserver_explicit():
                raise
            # OpenHRP's port is taken (another stack runs): a private nameserver on a free port.
            self.sup.echo(f"launch: {DEFAULT_NAMESERVER} is in use; starting a private nameserver instead")
            self._await_nameserver(*self._spawn_nameserver("tcp://127.0.0.1:*", attempt="nameserver-2"))
            # hrpsim sim, hrpsim ns ... go to 2809 unless told: the line that points them at this run
            self.sup.echo(
                f"launch: the stack at {DEFAULT_NAMESERVER} is another one; for this run's, in another shell:\n"
                f"export {ENV_NAMESERVER}={self.nameserver}"
            )
        write_address_file(self.address_file, self.nameserver)

    def _spawn_nameserver(self, bind: str, attempt: str = "nameserver") -> tuple[Child, str, Path]:
        endpoint_file = self.run_dir / f"{attempt}.endpoint"
        endpoint_file.unlink(missing_ok=True)  # a run directory used before holds the last run's address
        argv = [*HRPSIM, "run", "nameserver", "--bind", bind, "--endpoint-file", str(endpoint_file)]
        child = Child(
            attempt,
            argv,
            self.run_dir / f"{attempt}.log",
            env=self.child_env(),
            policy=self._service_policy("nameserver"),
        )
        self.sup.start(child)
        return child, bind, endpoint_file

    def _await_nameserver(self, child: Child, bind: str, endpoint_file: Path) -> None:
        """Until ``child`` serves (its endpoint file is written). One killed before it served starts
        again by its restart policy; one that exits (its address is in use, say) is a LaunchError."""
        deadline = time.monotonic() + self.args.startup_timeout
        while not endpoint_file.exists():
            self.check_interrupted()
            if not child.running and child.restart_at is None:
                if not (child.returncode < 0 and self.sup.schedule_restart(child)):
                    child.expected_exit = True
                    raise LaunchError(
                        f"nameserver exited with status {child.returncode} (bind {bind}); its log:\n{child.tail()}"
                    )
                self.sup.echo(
                    f"launch: {child.name} (pid {child.pid}) died with status {child.returncode} before it "
                    f"served; restart {child.restarts} of {child.policy.max_restarts} in "
                    f"{child.policy.delay(child.restarts):g} s"
                )
            if child.restart_at is not None and child in self.sup.due_restarts():
                self.sup.echo(f"launch: restarted {child.name} (pid {child.pid})")
            if time.monotonic() >= deadline:
                raise LaunchError(
                    f"nameserver did not come up within {self.args.startup_timeout:g} s "
                    f"(bind {bind}); its log:\n{child.tail()}"
                )
            time.sleep(REGISTER_POLL_S)
        self.nameserver = endpoint_file.read_text().strip()
        child.argv[child.argv.index(bind)] = self.nameserver  # a restart binds the address everyone knows
        child.request_stop = lambda: self._quit(self.nameserver)
        self.sup.echo(f"launch: nameserver at {self.nameserver} (run directory {self.run_dir})")

    def _joined_service(self, name: str) -> bool:
        """With --join: whether the stack already runs ``name`` (then this launch uses it)."""
        if not self.args.join:
            return False
        with NameClient(self.nameserver, timeout=2.0) as ns:
            try:
                ns.resolve(name)
            except NotFound:
                return False
        self.sup.echo(f"launch: using the {name} already registered with {self.nameserver}")
        return True

    def start_service(self, component: str, extra: list[str] | None = None) -> Child:
        """Start ``component``; it is waited for by :meth:`wait_registered`."""
        argv = [*HRPSIM, "run", component, "--nameserver", self.nameserver_for_services(), *(extra or [])]
        child = Child(
            component,
            argv,
            self.run_dir / f"{component}.log",
            env={**self.child_env(), ENV_REGISTRATION_OWNER: self.owners.setdefault(component, new_owner())},
            policy=self._service_policy(component),
        )
        child.request_stop = lambda: self._quit(self._current_endpoint(component))
        child.ready_to_restart = lambda: self._name_free(component)
        return self.sup.start(child)

    def _service_policy(self, component: str) -> RestartPolicy:
        if component == "simserver":
            return RestartPolicy("never", 0)  # its death ends the run: the world state went with it
        config = self.project.service_restart(component)
        return RestartPolicy(config.restart, config.restarts)

    def _current_endpoint(self, name: str) -> str:
        """Where ``name`` serves now: a restarted service registered a new endpoint."""
        if name not in self.endpoints:
            raise LaunchError(f"{name} never registered")
        try:
            with NameClient(self.nameserver, timeout=1.0) as ns:
                self.endpoints[name] = ns.resolve(name)["endpoint"]
        except HrpsimError:
            pass
        return self.endpoints[name]

    def _name_free(self, name: str) -> bool:
        """A dead service's entry lives until its TTL runs out; its successor registers after that."""
        if not self.nameserver:
            return True  # none serves yet, so none holds the name
        try:
            with NameClient(self.nameserver, timeout=0.5) as ns:
                ns.resolve(name)
        except NotFound:
            return True
        except HrpsimError:
            return True  # no nameserver to ask: the restart tells
        return False

    def start_controller(self, index: int) -> Child:
        """Start the project's controller ``index``; it finds its simulator (waiting up to the
        start-up deadline for one to register) and is waited for by :meth:`wait_registered`."""
        ctl = self.project.controllers[index]
        argv = shlex.split(ctl.command)
        if argv and argv[0] in ("python", "python3"):
            argv[0] = sys.executable  # the interpreter hrpsim runs in, with its packages
        env = {
            **self.child_env(),
            **ctl.env,
            "HRPSIM_ROBOT": ctl.robot,
            "HRPSIM_CONTROLLER_NAME": ctl.name,
            "HRPSIM_PERIOD": repr(ctl.period),
            "HRPSIM_CONNECT_TIMEOUT": repr(self.args.startup_timeout),  # it may start before its simulator
        }
        child = Child(
            ctl.name,
            argv,
            self.run_dir / f"controller-{ctl.name}.log",
            cwd=ctl.cwd,
            env=env,
            policy=RestartPolicy(ctl.restart, ctl.restarts),
        )
        child.request_stop = lambda: self.sup.signal_group(child, signal.SIGINT)
        return self.sup.start(child)

    def wait_registered(self, starting: list[Child]) -> None:
        """Until every child in ``starting`` has registered under its name (a service's endpoint is
        kept). Meanwhile every process started so far keeps its restart policy (the nameserver or
        modelloader may die during startup too), and a dead simulator ends the start with its own
        name."""
        waiting = {child.name: child for child in starting}
        deadline = time.monotonic() + self.args.startup_timeout
        with NameClient(self.nameserver, timeout=1.0) as ns:
            while waiting:
                if time.monotonic() >= deadline:
                    child = next(iter(waiting.values()))
                    raise LaunchError(
                        f"{child.name} did not register as {child.name!r} with the nameserver at "
                        f"{self.nameserver} within {self.args.startup_timeout:g} s; the end of its log "
                        f"({child.log_path}):\n{child.tail()}"
                    )
                self.check_interrupted()
                for child in waiting.values():
                    self._check_started(child)
                self._check_children()
                try:
                    registered = {entry["name"]: entry for entry in ns.list()}
                except (Timeout, PeerGone):  # the nameserver is being restarted: ask again
                    registered = {}
                for name in [name for name in waiting if name in registered]:
                    del waiting[name]
                    if name in SERVICES:
                        self.endpoints[name] = registered[name]["endpoint"]
                if waiting:
                    time.sleep(REGISTER_POLL_S)

    def _check_started(self, child: Child) -> None:
        """LaunchError when ``child`` died before registering and is not to be restarted (a dead
        simulator is named first: a controller that found no simulator is not the news)."""
        if (
            child.running
            or child.restart_at is not None
            or child.policy.wants_restart(child.returncode, child.restarts)
        ):
            return
        self._check_simulator()
        raise LaunchError(
            f"{child.name} exited with status {child.returncode} before registering "
            f"as {child.name!r}; the end of its log ({child.log_path}):\n{child.tail()}"
        )

    @staticmethod
    def _quit(endpoint: str) -> None:
        with Client(endpoint, peer="component", timeout=1.0) as client:
            client.call("quit")

    def start_all(self) -> None:
        self.check_interrupted()
        p = self.project
        for note in p.notes:
            print(f"launch: note: {note}", file=sys.stderr)
        self.start_nameserver()
        if self.args.serial_start:
            self.await_nameserver()
        # The project is the operator's: its folder and its models' folders are where files come from.
        roots = dict.fromkeys([str(Path(p.path).parent), *(str(Path(m.file).parent) for m in p.models)])
        root_args = [arg for root in roots for arg in ("--model-root", root)]
        starting: list[Child] = []

        def started(child: Child) -> None:
            starting.append(child)
            if self.args.serial_start:
                self.wait_registered([child])

        if self._modelloader_wanted() and not self._joined_service("modelloader"):
            started(self.start_service("modelloader", root_args))
        if self._collision_service_wanted():
            started(self.start_service("collision"))
        if p.models:
            record = ["--record", str(self.args.record.resolve())] if self.args.record else []
            if self.args.record_profile:
                record += ["--record-profile", self.args.record_profile]
            started(self.start_service("simserver", ["--project", p.path, *root_args, *record]))
        # A controller's command is the user's: it gets the nameserver's address itself.
        self.await_nameserver()
        for i, ctl in enumerate(p.controllers):
            if not ctl.in_process:  # the simulator runs those itself
                started(self.start_controller(i))
        self.wait_registered(starting)
        if self.args.view is not None and p.models:
            self.start_viewer()
        if self.args.foxglove and p.models:
            self.start_foxglove()

    def _collision_service_wanted(self) -> bool:
        p = self.project
        return p.world.collision == "service" or bool(p.services.get("collision"))

    def _modelloader_wanted(self) -> bool:
        """Whether anything started here asks the modelloader for models: the simulator, unless it
        loads them itself (``services: {loader: local}``), and the collision service, which reads a
        body a client names by model file through it."""
        p = self.project
        simulator_asks = p.services.get("loader") != "local"
        return bool(p.models) and (simulator_asks or self._collision_service_wanted())

    def start_viewer(self) -> None:
        """The browser view beside the run; a viewer that fails does not stop the run."""
        argv = [*HRPSIM, "view", "--live", "--nameserver", self.nameserver, "--port", str(self.args.view)]
        child = Child("viewer", argv, self.run_dir / "viewer.log", env=self.child_env())
        child.request_stop = lambda: self.sup.signal_group(child, signal.SIGINT)
        child.expected_exit = True  # its death (a port in use, say) is in its log, not a reason to stop
        self.sup.start(child)
        self.sup.echo(f"launch: the 3D view serves on http://127.0.0.1:{self.args.view}/ (log {child.log_path})")

    def start_foxglove(self) -> None:
        """The Foxglove WebSocket server beside the run, fed by the simulator's world-state stream;
        like the browser view, one that fails does not stop the run."""
        argv = [*HRPSIM, "view", "--live", "--nameserver", self.nameserver, "--foxglove", self.args.foxglove]
        child = Child("foxglove", argv, self.run_dir / "foxglove.log", env=self.child_env())
        child.request_stop = lambda: self.sup.signal_group(child, signal.SIGINT)
        child.expected_exit = True
        self.sup.start(child)
        where = (
            f"ws://{self.args.foxglove}/"
            if not self.args.foxglove.endswith(":0")
            else "the free port its log names (hrpsim view: open ws://...)"
        )
        self.sup.echo(f"launch: Foxglove connects to {where} (log {child.log_path})")

    # --- running ---

    def run(self) -> dict[str, Any]:
        if "simserver" not in self.endpoints:
            return self._idle()
        with Client(self.endpoints["simserver"], peer="simserver", timeout=5.0) as sim:
            sim.call("start", until=self.args.until)
            self.started_at = time.time()
            progress = Progress(self.sup, self.project.world.end_time if self.args.until is None else self.args.until)
            silent_since: float | None = None
            while True:
                self.check_interrupted()
                self._check_children()
                try:
                    status = sim.call("status", timeout=1.0)
                except PeerGone:  # it died: its exit (and log) is what the next check reports
                    wait_until(lambda: not self.sup.child("simserver").running, 2.0)
                    continue
                except Timeout:  # stopped (SIGSTOP) or busy: the run goes on when it answers again
                    silent_since = silent_since or time.monotonic()
                    self.sup.echo(f"launch: the simulator has not answered for {time.monotonic() - silent_since:.0f} s")
                    continue
                silent_since = None
                self.last_status = status
                progress.show(status)
                if status.get("finished"):
                    progress.done()
                    # a controller whose death ended the run died before the simulator noticed: count it
                    self._check_children()
                    return sim.call("summary", timeout=10.0)
                self.stop_requested.wait(0.2)

    def final_summary(self, error: str) -> dict[str, Any]:
        """The summary of a run that did not finish: the simulator's own when it still answers,
        else what its last status said; ``error`` says why the run ended."""
        summary = empty_summary(sim_time=self.last_status.get("time"), ticks=self.last_status.get("tick", 0))
        sim = self.sup.child("simserver")
        if sim is not None and sim.running and "simserver" in self.endpoints:
            try:
                with Client(self.endpoints["simserver"], peer="simserver", timeout=2.0) as client:
                    client.call("pause")
                    summary = client.call("summary")
            except HrpsimError as exc:
                log.info("no summary from the simulator: %s", exc)
        summary["error"] = error
        return summary

    def _idle(self) -> dict[str, Any]:
        """A project without models: the stack stays up until --until seconds or a signal."""
        names = ", ".join(c.name for c in self.sup.children)
        self.sup.echo(
            f"launch: running {names} (no models, so no simulation); "
            + (f"stopping after {self.args.until:g} s" if self.args.until else "Ctrl-C stops")
        )
        start = time.monotonic()
        while self.args.until is None or time.monotonic() - start < self.args.until:
            self.check_interrupted()
            self._check_children()
            self.stop_requested.wait(0.1)
        return empty_summary(wall_time=time.monotonic() - start)

    def _check_simulator(self) -> None:
        """LaunchError naming the simulator when it died."""
        sim = self.sup.child("simserver")
        if sim is not None and sim.returncode is not None and not sim.expected_exit:
            raise LaunchError(
                f"simserver (pid {sim.pid}) died with status {sim.returncode}; "
                f"the end of its log ({sim.log_path}):\n{sim.tail()}"
            )

    def _check_children(self) -> None:
        """Apply each dead child's restart policy; the simulator's death ends the run. A controller that
        exits with status 0 left on its own (the run's bye, or its own choice): nothing is lost."""
        controllers = {c.name for c in self.project.controllers}
        self.sup.look_after_tree()
        self._check_simulator()  # first: the controllers that die with it are not what ended the run
        for child in self.sup.died():
            self._unregister_dead(child.name)
            if child.name in controllers and child.returncode == 0:
                child.expected_exit = True
                self.sup.echo(f"launch: {child.name} (pid {child.pid}) finished (exit status 0)")
                continue
            what = f"{child.name} (pid {child.pid}) died with status {child.returncode}"
            if self.sup.schedule_restart(child):
                self.sup.echo(
                    f"launch: {what}; restart {child.restarts} of {child.policy.max_restarts} "
                    f"in {child.policy.delay(child.restarts):g} s"
                )
            else:
                why = (
                    "its restart policy is never"
                    if child.policy.restart == "never"
                    else f"it was restarted {child.restarts} times already"
                )
                self.sup.echo(f"launch: {what}; not restarted ({why}); {self._without(child.name)}")
        for child in self.sup.due_restarts():
            self.sup.echo(f"launch: restarted {child.name} (pid {child.pid})")

    def _unregister_dead(self, name: str) -> None:
        """A dead service's registration goes at once (its secret is the launcher's too), so that
        whoever asks for it waits for its successor instead of trying the dead address until the
        entry expires."""
        if name not in self.owners or not self.nameserver:
            return
        try:
            with NameClient(self.nameserver, timeout=1.0) as ns:
                ns.unregister(name, owner=self.owners[name])
        except HrpsimError as exc:  # expired already, or the nameserver is being restarted: the TTL does it
            log.info("could not remove the registration of %s: %s", name, exc)

    def _without(self, name: str) -> str:
        """What a lost process means for the run: a controller whose policy is stop ends it."""
        policies = {c.name: c.policy for c in self.project.controllers}
        if policies.get(name) == "stop":
            return "its policy is stop, so the simulator ends the run"
        return "the run goes on without it"


class Progress:
    """One line of progress: a rewritten line on a terminal, a line every few seconds elsewhere."""

    def __init__(self, sup: Supervisor, end_time: float | None) -> None:
        self.sup = sup
        self.end_time = end_time
        self.tty = sys.stdout.isatty()
        self.last = 0.0

    def show(self, status: dict[str, Any]) -> None:
        now = time.monotonic()
        if now - self.last < (0.5 if self.tty else 2.0):
            return
        self.last = now
        end = f" / {self.end_time:.2f}" if self.end_time else ""
        text = (
            f"launch: sim time {status.get('time', 0.0):.3f}{end} s, real-time factor "
            f"{status.get('real_time_factor') or 0.0:.2f}, ticks {status.get('tick', 0)}"
        )
        if self.tty:
            sys.stdout.write("\r" + text + "   ")
            sys.stdout.flush()
        else:
            self.sup.echo(text)

    def done(self) -> None:
        if self.tty:
            sys.stdout.write("\n")


def exit_status_for(stop_reason: str) -> int:
    """128 + the signal that ended the run (the shell's convention), 1 for any other failure."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if stop_reason.endswith(signum.name):
            return 128 + signum
    return 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hrpsim launch", description="Start and supervise the stack of a project.")
    parser.add_argument("project", help="project file (YAML)")
    parser.add_argument("--until", type=float, help="stop at this simulation time (default: the project's end_time)")
    parser.add_argument("--summary", type=Path, help="write the run summary (JSON) to this file")
    NAMESERVER.add(
        parser,
        help=f"address for the nameserver this launch starts (default "
        f"${ENV_NAMESERVER} or {DEFAULT_NAMESERVER}; 'tcp://127.0.0.1:*' for a free port)",
    )
    parser.add_argument("--join", metavar="ADDR", help="use a nameserver that is already running at ADDR")
    parser.add_argument("--run-dir", type=Path, help="where logs go (default runs/PROJECT-TIME-PID)")
    parser.add_argument(
        "--startup-timeout", type=float, default=60.0, help="seconds the components have to register (default 60)"
    )
    parser.add_argument(
        "--serial-start",
        action="store_true",
        help="start the components one at a time, each once the one before has registered "
        "(default: all at once after the nameserver, each waiting for what it needs)",
    )
    parser.add_argument("--quiet", action="store_true", help="do not echo the components' output")
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE.mcap",
        help="record every tick to this MCAP file (overrides the project's record:)",
    )
    parser.add_argument(
        "--view",
        type=int,
        nargs="?",
        const=8080,
        metavar="PORT",
        help="open the browser view of the run on this port (default 8080)",
    )
    parser.add_argument(
        "--record-profile",
        choices=RECORD_PROFILES,
        help=record_profiles_help(),
    )
    parser.add_argument(
        "--foxglove",
        nargs="?",
        const=FOXGLOVE_ADDRESS,
        metavar="HOST:PORT",
        help=f"serve the run to Foxglove over its WebSocket protocol (default {FOXGLOVE_ADDRESS})",
    )
    add_security_options(parser)
    args = parser.parse_args(argv)
    if args.until is not None and args.until <= 0:
        parser.error("--until must be positive")
    if args.record is not None and args.record.suffix != ".mcap":
        parser.error(f"--record: {args.record} must end in .mcap")
    return args


def main(argv: list[str] | None = None) -> int:
    interrupts.hold()  # already held when started as ``hrpsim launch``; here for a direct call
    try:
        return _launch(parse_args(argv))
    except KeyboardInterrupt:  # Ctrl-C before the launcher's own handler was in place: nothing started yet
        print("hrpsim launch: interrupted before anything started", file=sys.stderr)
        return 128 + signal.SIGINT


def _launch(args: argparse.Namespace) -> int:
    setup_logging("launch", os.environ.get("HRPSIM_LOG_LEVEL", "WARNING"))
    try:
        with interrupts.interruptible():  # a large project takes a while to read; nothing has started yet
            project = load_project(args.project)
        check_joint_names(project)
    except (ConfigError, AccessDenied) as exc:  # AccessDenied: not a regular file, or larger than the bound
        print(f"hrpsim launch: {exc}", file=sys.stderr)
        return 2
    except interrupts.Interrupted as exc:
        summary = empty_summary()
        summary["error"] = f"{exc} while the project was read; nothing was started"
        _write_summary(args, summary)
        print(f"hrpsim launch: {summary['error']}", file=sys.stderr)
        return 128 + exc.signum
    if project.keys and not os.environ.get(ENV_KEYS):  # --keys or $HRPSIM_KEYS win over the project
        os.environ[ENV_KEYS] = project.keys
    try:
        if args.foxglove:
            check_bind(f"tcp://{args.foxglove}", "--foxglove")
        if args.record_profile:
            apply_record_profile(project, str(args.record) if args.record else None, args.record_profile)
    except ConfigError as exc:
        print(f"hrpsim launch: {exc}", file=sys.stderr)
        return 2
    launch = Launch(project, args)
    launch.install_signals()
    started = time.monotonic()
    summary: dict[str, Any] = empty_summary()
    status = 0
    try:
        launch.start_all()
        summary = launch.run()
        if summary.get("error"):
            status = 1
    except (HrpsimError, OSError) as exc:
        summary = launch.final_summary(str(exc))
        status = exit_status_for(launch.stop_reason)
        print(f"hrpsim launch: {exc}", file=sys.stderr)
    finally:
        exits = launch.sup.stop_all()
    if summary.get("wall_time") is None:
        summary["wall_time"] = time.monotonic() - started
    summary["launch"] = {
        "nameserver": launch.nameserver,
        "run_dir": str(launch.run_dir),
        "started_at": launch.started_at,
        "components": {
            c.name: {
                "pid": c.pid,
                "exit_status": exits.get(c.name),
                "restarts": c.restarts,
                "lost": c.lost,
                "log": str(c.log_path),
            }
            for c in launch.sup.children
        },
    }
    _write_summary(args, summary)
    print(format_summary(summary))
    return status


def _write_summary(args: argparse.Namespace, summary: dict[str, Any]) -> None:
    if args.summary:
        args.summary.parent.mkdir(parents=True, exist_ok=True)
        args.summary.write_text(json.dumps(summary, indent=2) + "\n")
