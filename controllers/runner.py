"""Running a controller against a simulator: ``hrpsim controller FILE.py[:Class] --robot NAME``.

The runner finds the simserver through the nameserver (the simserver publishes its controller
endpoint as ``metadata["controllers"]``), attaches to the robot, registers itself with the
nameserver under the controller's name (kind ``controller``), then answers every state with the
controller's command until the run ends.

Ending, documented behaviour:
- the simulator says bye (the run is over): ``stop()``, exit status 0;
- SIGINT/SIGTERM: bye to the simulator, ``stop()``, exit status 0 — in every state: attached, or
  still looking for (or waiting for) a simulator, where the signal ends the wait at once;
- the simulator goes away (its connection drops): the runner says so, calls ``stop()`` and waits up
  to ``--reconnect-wait`` seconds (default 10) for a simulator to appear again; it then attaches
  afresh and calls ``start(body)`` again. If none appears in time it exits with status 3;
- the controller raises: the traceback is logged, bye is sent, exit status 1;
- the simulator detaches it (a missed deadline): it says hello again and goes on;
- the simulator refuses the controller (unknown robot, bad period ...), or another process attaches
  under the same name: the message, exit status 2;
- the nameserver still holds the controller's name for another process (the one this controller
  replaced, until it has stopped): the controller runs, and takes the name once the other lets go.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import inspect
import logging
import math
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hrpsim import tick_protocol as proto
from hrpsim import unix_channel
from hrpsim.bodyinfo import Body
from hrpsim.cli_options import NAMESERVER, add_security_options
from hrpsim.controllers.base import Controller
from hrpsim.controllers.command import answer_fields
from hrpsim.controllers.link import Link, open_link
from hrpsim.controllers.options import convert_options, split_options
from hrpsim.controllers.services import Services
from hrpsim.controllers.state import JointIndex, State
from hrpsim.errors import ConfigError, HrpsimError, NotFound, PeerGone, ProtocolError, RequestError, Timeout
from hrpsim.logs import setup_logging
from hrpsim.naming import NameClient, Registration, host_identity, nameserver_address
from hrpsim.security import identity

log = logging.getLogger("hrpsim.controller")

EXIT_OK, EXIT_CRASHED, EXIT_REFUSED, EXIT_SIMULATOR_GONE = 0, 1, 2, 3
POLL_S = 0.2  # how often a waiting runner checks for signals
FIND_POLL_S = 0.02  # between asks for a simulator that is not registered yet (it starts beside this one)
RECONNECT_PAUSE_S = 0.2  # between attempts to find a simulator again
ENV_ROBOT, ENV_NAME = "HRPSIM_ROBOT", "HRPSIM_CONTROLLER_NAME"  # set by ``hrpsim launch``
ENV_CONNECT_TIMEOUT = "HRPSIM_CONNECT_TIMEOUT"  # set by ``hrpsim launch``, which starts the simulator beside it


@dataclass
class RunOptions:
    robot: str
    name: str
    default_name: bool = False  # the name was not chosen: the simulator may give the project's
    period: float | None = None
    nameserver: str | None = None
    simserver: str | None = None  # a simserver's registered name; default: the one that has the robot
    connect_timeout: float = 15.0
    reconnect_wait: float = 10.0
    register: bool = True
    spin_s: float = 0.0  # busy-poll this long for the next state before sleeping
    shared_memory: bool = True  # on the simulator's host, take states and give commands in shared memory


class _Interrupted(BaseException):
    """A signal ended the run; a BaseException, so a controller's ``except Exception`` lets it through."""


def load_controller(spec: str, **options: Any) -> Controller:
    """``FILE.py`` or ``FILE.py:Class`` -> an instance. Without a class, the file's one Controller subclass."""
    return controller_class(spec)(**options)


def controller_class(spec: str) -> type[Controller]:
    """``FILE.py`` or ``FILE.py:Class`` -> the class. Without a class, the file's one Controller subclass."""
    path_text, _, class_name = spec.partition(":")
    path = Path(path_text)
    if not path.is_file():
        raise ConfigError(f"controller file {path} does not exist (give FILE.py or FILE.py:ClassName)")
    module_spec = importlib.util.spec_from_file_location(f"hrpsim_user_controller_{path.stem}", path)
    if module_spec is None or module_spec.loader is None:
        raise ConfigError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    folder = str(path.resolve().parent)
    if folder not in sys.path:  # once: a process that loads it for run after run (a sweep's worker)
        sys.path.insert(0, folder)
    module_spec.loader.exec_module(module)
    classes = [
        c
        for c in vars(module).values()
        if inspect.isclass(c) and issubclass(c, Controller) and c is not Controller and c.__module__ == module.__name__
    ]
    if class_name:
        cls = getattr(module, class_name, None)
        if not (inspect.isclass(cls) and issubclass(cls, Controller)):
            raise ConfigError(
                f"{path} has no Controller subclass named {class_name!r} "
                f"(it has: {', '.join(c.__name__ for c in classes) or 'none'})"
            )
    elif len(classes) == 1:
        cls = classes[0]
    else:
        raise ConfigError(
            f"{path} defines {len(classes)} Controller subclasses "
            f"({', '.join(c.__name__ for c in classes) or 'none'}): name one as {path}:ClassName"
        )
    return cls


def find_controller_endpoint(
    robot: str, *, nameserver: str | None, simserver: str | None, timeout: float, exclude: str = ""
) -> tuple[str, str]:
    """(simserver name, controller endpoint) of the simserver that has ``robot``, waiting up to ``timeout``."""
    deadline = time.monotonic() + timeout
    last_problem = "no simserver is registered"
    with NameClient(nameserver, timeout=min(2.0, max(timeout, 0.1))) as ns:
        while True:
            try:
                entries = [ns.resolve(simserver)] if simserver else ns.list(kind="simserver")
                live = [
                    e
                    for e in entries
                    if exclude
                    not in (
                        e["metadata"].get("controllers"),
                        e["metadata"].get("controllers_ipc"),
                        e["metadata"].get("controllers_unix"),
                    )
                ]
                found = _pick_simserver(live, robot)
                if found is not None:
                    return found
                last_problem = (
                    f"no registered simserver offers controllers for robot {robot!r} "
                    f"(simservers: {', '.join(e['name'] for e in entries) or 'none'})"
                )
            except (NotFound, Timeout) as exc:
                last_problem = str(exc)
            if time.monotonic() >= deadline:
                raise NotFound(
                    f"cannot find a simulator for robot {robot!r} through the nameserver at "
                    f"{ns.address}: {last_problem}. Start the simulator first, or pass "
                    "--nameserver / $HRPSIM_NAMESERVER"
                )
            time.sleep(FIND_POLL_S)


def _pick_simserver(entries: list[dict[str, Any]], robot: str) -> tuple[str, str] | None:
    offering = [e for e in entries if isinstance(e.get("metadata"), dict) and e["metadata"].get("controllers")]
    with_robot = [e for e in offering if robot in (e["metadata"].get("robots") or [])]
    chosen = with_robot or offering
    if not chosen:
        return None
    return chosen[0]["name"], _nearest_endpoint(chosen[0]["metadata"])


def _nearest_endpoint(metadata: dict[str, Any]) -> str:
    """On the simulator's host, its Unix channel (no ZeroMQ threads in the way) or else its ipc
    endpoint (no TCP stack); from another host, its tcp endpoint."""
    if metadata.get("host") == host_identity():
        unix = metadata.get("controllers_unix")
        if isinstance(unix, str) and identity() is None and Path(unix_channel.path_of(unix)).exists():
            return unix
        ipc = metadata.get("controllers_ipc")
        if isinstance(ipc, str) and Path(ipc[len("ipc://") :]).exists():
            return ipc
    return metadata["controllers"]


class ControllerRunner:
    """Drives one controller instance through attachments until the run ends."""

    def __init__(self, controller: Controller, options: RunOptions) -> None:
        self.controller = controller
        self.options = options
        self._interrupted = threading.Event()
        self._serving = False  # in the serve loop, which looks at the flag every POLL_S; elsewhere a signal raises
        self._registration: Registration | None = None
        self._started = False
        self._dead_endpoint = ""  # a simulator that went away stays registered until its entry expires
        self._lost_since: float | None = None  # when the simulator was lost, until one is found again
        self._lost_reports = 0

    def interrupt(self) -> None:
        """Ask the runner to stop. Called from a signal handler: outside the serve loop (finding,
        attaching to or waiting for a simulator) it raises, which ends that wait at once."""
        first = not self._interrupted.is_set()
        self._interrupted.set()
        if first and not self._serving:
            raise _Interrupted

    def run(self) -> int:
        """Attach, control, and reattach after a simulator restart; returns the exit status."""
        first = True
        try:
            while True:
                timeout = self.options.connect_timeout if first else self.options.reconnect_wait
                try:
                    status = self._session(timeout)
                except PeerGone as exc:
                    self._dead_endpoint = getattr(exc, "endpoint", "")
                    self._stop_controller()
                    first = False
                    if not self._reconnect_pause(exc):
                        return EXIT_SIMULATOR_GONE
                    continue
                except (NotFound, Timeout) as exc:
                    if first:
                        log.error("%s", exc)
                        return EXIT_SIMULATOR_GONE
                    log.error("the simulator did not come back: %s", exc)
                    return EXIT_SIMULATOR_GONE
                return status
        except _Interrupted:
            log.info("controller %s interrupted: stopping", self.options.name)
            return EXIT_OK
        except RequestError as exc:
            log.error("%s", exc)
            return EXIT_REFUSED
        finally:
            self._stop_controller()
            self._unregister()

    def _reconnect_pause(self, exc: PeerGone) -> bool:
        """After losing the simulator: say so once (a repeat is counted, not logged: a dead
        simulator's address refuses within microseconds), pause, and tell whether to try again."""
        if self._lost_since is None:
            self._lost_since, self._lost_reports = time.monotonic(), 0
        waited = time.monotonic() - self._lost_since
        self._lost_reports += 1
        if self._lost_reports == 1:
            log.warning("%s; waiting up to %g s for a simulator to come back", exc, self.options.reconnect_wait)
        if waited >= self.options.reconnect_wait:
            log.error(
                "no simulator came back within %g s (%d attempt(s)): %s",
                self.options.reconnect_wait,
                self._lost_reports,
                exc,
            )
            return False
        self._interrupted.wait(min(RECONNECT_PAUSE_S, self.options.reconnect_wait - waited))
        if self._interrupted.is_set():
            raise _Interrupted
        return True

    def _session(self, timeout: float) -> int:
        opts = self.options
        sim_name, endpoint = find_controller_endpoint(
            opts.robot,
            nameserver=opts.nameserver,
            simserver=opts.simserver,
            timeout=timeout,
            exclude=self._dead_endpoint,
        )
        try:
            link = open_link(
                endpoint,
                peer=f"simserver {sim_name!r}",
                spin_s=opts.spin_s,
                timeout=timeout,
                shared_memory=opts.shared_memory,
            )
        except PeerGone as exc:
            exc.endpoint = endpoint  # type: ignore[attr-defined]
            raise
        try:
            welcome = link.attach(
                opts.name, opts.robot, period=opts.period, timeout=timeout, default_name=opts.default_name
            )
            if self._lost_since is not None:
                log.info("found a simulator again after %d failed attempt(s)", self._lost_reports)
                self._lost_since = None
            if welcome.controller != opts.name:
                log.info("attached under the project's name %r for robot %s", welcome.controller, opts.robot)
                opts.name, opts.default_name = welcome.controller, False
            log.info(
                "attached %s to robot %s of simserver %s at %s via %s (period %g s, policy %s)",
                opts.name,
                opts.robot,
                sim_name,
                endpoint,
                link.transport,
                welcome.period,
                welcome.policy,
            )
            joints = self._start_controller(welcome)
            self._register(endpoint, sim_name)
            gc.collect()
            gc.freeze()  # what start() built lives as long as the run: full collections skip it
            return self._serve(link, joints)
        except PeerGone as exc:
            exc.endpoint = endpoint  # type: ignore[attr-defined]
            raise
        finally:
            link.close()

    def _start_controller(self, welcome: proto.Welcome) -> JointIndex:
        joints = JointIndex(welcome.joints)
        self.controller.joints = joints
        self.controller.services = Services(self.options.nameserver)
        self.controller.period = welcome.period
        self.controller.timestep = welcome.timestep
        if welcome.gravity is not None:
            self.controller.gravity = (welcome.gravity[0], welcome.gravity[1], welcome.gravity[2])
        if welcome.root_position is not None and welcome.root_rotation is not None:
            self.controller.root_placement = (np.array(welcome.root_position), np.array(welcome.root_rotation))
        try:
            body = Body.from_wire(welcome.body)
        except Exception:  # a peer's garbage, not this controller's fault
            raise ProtocolError(
                "welcome field 'body' is not a BodyInfo this controller can read; "
                "is the simulator of the same hrpsim version?",
                field="body",
            ) from None
        try:
            self.controller.attached(body)
            self.controller.start(body)
        except HrpsimError:
            raise
        except Exception:
            log.exception("controller %s raised in start()", self.options.name)
            raise SystemExit(EXIT_CRASHED) from None
        self._started = True
        return joints

    def _serve(self, link: Link, joints: JointIndex) -> int:
        self._serving = True
        try:
            return self._serve_states(link, joints)
        finally:
            self._serving = False

    def _serve_states(self, link: Link, joints: JointIndex) -> int:
        if self._interrupted.is_set():
            link.bye("interrupted")
            raise _Interrupted
        while True:
            if self._interrupted.is_set():
                link.bye("interrupted")
                raise _Interrupted
            msg = link.receive(POLL_S)
            if msg is None:
                continue
            kind = msg["type"]
            if kind == proto.STATE:
                self._answer(link, State(self._checked_state(link, msg, len(joints)), joints))
            elif kind == proto.BYE:
                log.info("the simulator ended the run: %s", msg.get("reason"))
                return EXIT_OK
            elif kind == proto.ERROR:
                self._on_error(link, msg)

    @staticmethod
    def _checked_state(link: Link, msg: dict[str, Any], n_joints: int) -> dict[str, Any]:
        """The state, checked; a bad one ends the session with a bye that says why."""
        try:
            return link.checked_state(msg, n_joints)
        except ProtocolError as exc:
            link.bye(f"the controller refused a state: {exc}")
            raise

    def _answer(self, link: Link, state: State) -> None:
        try:
            self.controller.sees(state)
            result = self.controller.control(state)
        except Exception:
            log.exception("controller %s raised in control() at tick %d", self.options.name, state.tick)
            link.bye("the controller raised an exception")
            raise SystemExit(EXIT_CRASHED) from None
        link.send_command(state.tick, **answer_fields(result))

    def _on_error(self, link: Link, msg: dict[str, Any]) -> None:
        log.warning(
            "the simulator reports (field %r, tick %s): %s", msg.get("field"), msg.get("tick"), msg.get("message")
        )
        if msg.get("fatal") and msg.get("field") == "controller":  # replaced: going back would evict the other
            raise RequestError(f"{msg.get('message')}; this one stops (give each controller its own --name)")
        if msg.get("fatal"):
            log.warning("detached by the simulator; attaching again")
            self._serving = False
            link.attach(
                self.options.name, self.options.robot, period=self.options.period, timeout=self.options.connect_timeout
            )
            self._serving = True

    def _stop_controller(self) -> None:
        if self._started:
            self._started = False
            try:
                self.controller.stop()
            except Exception:
                log.exception("controller %s raised in stop()", self.options.name)
            self.controller.services.close()

    def _register(self, endpoint: str, sim_name: str) -> None:
        if not self.options.register:
            return
        self._unregister()
        self._registration = Registration(
            self.options.name,
            "controller",
            endpoint,
            nameserver=self.options.nameserver,
            metadata={"robot": self.options.robot, "simserver": sim_name},
        )
        # The simulator may have attached this controller in place of another of the same name,
        # which holds the name until it has stopped: take the name once it lets go.
        self._registration.start(wait_if_taken=True)

    def _unregister(self) -> None:
        if self._registration is not None:
            self._registration.stop()
            self._registration = None


def run_controller(
    controller: Controller,
    *,
    robot: str,
    name: str | None = None,
    period: float | None = None,
    nameserver: str | None = None,
    simserver: str | None = None,
    connect_timeout: float = 15.0,
    reconnect_wait: float = 10.0,
    spin_s: float = 0.0,
    install_signals: bool = True,
    default_name: str | None = None,
    shared_memory: bool = True,
) -> int:
    """Run ``controller`` on ``robot`` until the run ends; returns the exit status (see the module doc).

    Without ``name`` the controller attaches under the project's entry for its robot when the project
    has exactly one free entry for it, else under ``default_name`` (its file's name) or its class name."""
    options = RunOptions(
        robot=robot,
        name=name or default_name or type(controller).__name__,
        default_name=not name,
        period=period,
        nameserver=nameserver_address(nameserver),
        simserver=simserver,
        connect_timeout=connect_timeout,
        reconnect_wait=reconnect_wait,
        spin_s=spin_s,
        shared_memory=shared_memory,
    )
    runner = ControllerRunner(controller, options)
    if install_signals:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: runner.interrupt())
    try:
        return runner.run()
    except SystemExit as exc:
        return int(exc.code or 0)


def _env_seconds(name: str, default: float) -> float:
    """A number of seconds from the environment variable ``name``; ConfigError naming it if it is not one."""
    text = os.environ.get(name)
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not seconds >= 0 or math.isinf(seconds):
        raise ConfigError(f"${name} must be a number of seconds, got {text!r}")
    return seconds


def _parser(*, with_spec: bool = True) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hrpsim controller", description="Run a controller against a simulator.")
    try:
        connect_default = _env_seconds(ENV_CONNECT_TIMEOUT, 15.0)
    except ConfigError as exc:
        p.error(str(exc))
    if with_spec:
        p.add_argument("spec", metavar="FILE.py[:Class]", help="the controller: a Python file and optionally a class")
    robot = os.environ.get(ENV_ROBOT)
    p.add_argument(
        "--robot", required=robot is None, default=robot, help=f"the model (robot) to attach to (default: ${ENV_ROBOT})"
    )
    p.add_argument(
        "--name",
        default=os.environ.get(ENV_NAME),
        help=f"controller name (default: ${ENV_NAME}, else the project's controller for the robot, "
        "else the file's name); the project's settings for that name apply",
    )
    p.add_argument(
        "--period",
        type=float,
        help="control period in seconds (default: the project's, else the "
        "time step); a whole multiple of the time step",
    )
    NAMESERVER.add(p)
    add_security_options(p)
    p.add_argument("--simserver", help="registered name of the simserver (default: the one that has the robot)")
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=connect_default,
        help=f"seconds to wait for the simulator (default: ${ENV_CONNECT_TIMEOUT} or 15)",
    )
    p.add_argument(
        "--reconnect-wait",
        type=float,
        default=10.0,
        help="seconds to wait for a simulator that went away to come back (0: exit at once)",
    )
    p.add_argument(
        "--spin-us",
        type=float,
        default=0.0,
        help="busy-poll this many microseconds for the next state before sleeping: a shorter round "
        "trip for a core's worth of CPU (default 0)",
    )
    p.add_argument(
        "--no-shared-memory",
        dest="shared_memory",
        action="store_false",
        help="on the simulator's host, exchange states and commands as messages on the Unix channel "
        "instead of in shared memory",
    )
    p.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keyword option for the controller's constructor (repeatable), converted to the type "
        "its parameter declares (int, float, bool, str, Path)",
    )
    return p


def make_controller(cls: type[Controller], pairs: list[str]) -> Controller:
    """An instance of ``cls`` from ``-o KEY=VALUE`` pairs, each converted by the constructor's type hints."""
    return cls(**convert_options(cls, split_options(pairs)))


def main(argv: list[str] | None = None) -> int:
    """``hrpsim controller FILE.py[:Class] --robot NAME ...``"""
    args = _parser().parse_args(argv)
    setup_logging(f"controller[{args.name or Path(args.spec.split(':')[0]).stem}]")
    try:
        controller = make_controller(controller_class(args.spec), args.option)
    except (ConfigError, TypeError, ValueError) as exc:
        log.error("%s", exc)
        return EXIT_REFUSED
    return _run_parsed(controller, args, Path(args.spec.split(":")[0]).stem)


def run_main(cls: type[Controller], argv: list[str] | None = None) -> int:
    """For a controller file run as a script: ``sys.exit(run_main(MyController))`` takes the runner's options."""
    args = _parser(with_spec=False).parse_args(argv)
    setup_logging(f"controller[{args.name or cls.__name__}]")
    try:
        controller = make_controller(cls, args.option)
    except (ConfigError, TypeError, ValueError) as exc:
        log.error("cannot create %s: %s", cls.__name__, exc)
        return EXIT_REFUSED
    return _run_parsed(controller, args, Path(sys.argv[0]).stem or cls.__name__)


def _run_parsed(controller: Controller, args: argparse.Namespace, default_name: str) -> int:
    try:
        return run_controller(
            controller,
            robot=args.robot,
            name=args.name,
            default_name=default_name,
            period=args.period,
            nameserver=args.nameserver,
            simserver=args.simserver,
            connect_timeout=args.connect_timeout,
            reconnect_wait=args.reconnect_wait,
            spin_s=args.spin_us * 1e-6,
            shared_memory=args.shared_memory,
        )
    except HrpsimError as exc:
        log.error("%s", exc)
        return EXIT_REFUSED
