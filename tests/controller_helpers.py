"""Helpers for the tick and controller tests: a real controller hub serving a kinematic world in the
test process (registered with a real nameserver as a simserver), and real controller processes."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import zmq
from process_helpers import MODELS, REPO, ManagedProcess, spawn, wait_registered

from hrpsim import tick_protocol as proto
from hrpsim.bodyinfo import Body
from hrpsim.engines.kinematic.engine import KinematicEngine
from hrpsim.naming import Registration, host_identity
from hrpsim.project import Project, parse_project
from hrpsim.rpc import DEFAULT_BIND
from hrpsim.simserver.tick_record import TickRecord
from hrpsim.simserver.world import World

SR1_URDF = MODELS / "choreonoid" / "model" / "SR1" / "SR1.urdf"
EXAMPLES = REPO / "examples"


def sr1_body() -> Body:
    from hrpsim.modelloader.urdf import load_urdf

    return load_urdf(SR1_URDF)


def kinematic_project(
    folder: Path,
    controllers: list[dict[str, Any]],
    *,
    sync: str = "lockstep",
    timestep: float = 0.001,
    command_delay: int = 0,
) -> Project:
    data = {
        "world": {"timestep": timestep, "sync": sync, "command_delay": command_delay},
        "models": [{"name": "robot", "file": str(SR1_URDF)}],
        "controllers": [{"command": "external", "robot": "robot", **c} for c in controllers],
    }
    return parse_project(data, str(folder / "project.yaml"))


class HubUnderTest:
    """A real World (its ControllerHub and TickLoop) on the kinematic engine, in the test process,
    registered as simserver ``sim`` with the nameserver (so a test can step the loop tick by tick)."""

    def __init__(self, nameserver: str, project: Project, body: Body, *, transport: str = "tcp") -> None:
        """``transport``: what the registration offers controllers: ``tcp`` alone, or ``ipc`` / ``unix``
        with this host's identity (the SDK then takes that endpoint)."""
        self.context = zmq.Context()
        self.engine = KinematicEngine(project, {"robot": body})
        self.world = World(project, engine=self.engine, hub_bind=DEFAULT_BIND, context=self.context, record=False)
        self.hub, self.loop = self.world.hub, self.world.loop
        self.loop.begin()
        self.registration = Registration(
            "sim",
            "simserver",
            self.hub.endpoint,
            nameserver=nameserver,
            metadata={"controllers": self.hub.endpoint, "robots": ["robot"], **self._local(transport)},
        )
        self.registration.start()

    def _local(self, transport: str) -> dict[str, str]:
        if transport == "tcp":
            return {}
        endpoint = {"ipc": self.hub.ipc_endpoint, "unix": self.hub.unix_endpoint}[transport]
        return {"host": host_identity(), f"controllers_{transport}": endpoint}

    def step(self) -> None:
        self.loop.tick_once()

    def record(self) -> TickRecord:
        """A record of the current tick, for tests that drive the hub's phases one by one."""
        return TickRecord(tick=self.engine.tick, time=self.engine.time, engine=self.engine)

    def run(self, ticks: int) -> None:
        for _ in range(ticks):
            self.step()

    def close(self) -> None:
        self.registration.stop()
        self.world.close()
        self.context.destroy(linger=0)  # also closes sockets a test made from it

    def __enter__(self) -> HubUnderTest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def hub_dealer(sim: HubUnderTest) -> zmq.Socket:
    """A DEALER connected to the hub under test, as a hand-written controller holds (it closes with
    the hub's context)."""
    sock = sim.context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(sim.hub.endpoint)
    return sock


def attach_by_hand(sim: HubUnderTest, name: str) -> tuple[zmq.Socket, dict[str, Any]]:
    """Say hello as controller ``name`` of robot ``robot`` and read the welcome: (socket, welcome)."""
    sock = hub_dealer(sim)
    sock.send(proto.hello(name, "robot"))
    assert sim.hub.wait_for_controllers([name], 5.0) == [], f"{name} was not attached"
    assert sock.poll(5000), "no welcome from the hub within 5 s"
    return sock, proto.decode(sock.recv(), expect=proto.TO_CONTROLLER)


def write_controller(folder: Path, name: str, body: str) -> Path:
    """A controller file in ``folder`` from source text (dedented)."""
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


def start_controller(
    folder: Path,
    spec: str | Path,
    *,
    nameserver: str,
    robot: str = "robot",
    name: str = "",
    extra: list[str] | None = None,
) -> ManagedProcess:
    args = ["controller", str(spec), "--robot", robot, "--nameserver", nameserver]
    if name:
        args += ["--name", name]
    log = folder / f"controller-{name or Path(str(spec)).stem}-{time.monotonic_ns()}.log"
    return spawn(args + list(extra or []), log)


def attach(hub: HubUnderTest, names: list[str], procs: list[ManagedProcess], timeout: float = 20.0) -> None:
    missing = hub.hub.wait_for_controllers(names, timeout)
    if missing:
        logs = "\n".join(p.log_text() for p in procs)
        raise AssertionError(f"controllers {missing} did not attach within {timeout} s:\n{logs}")


def wait_exit(proc: ManagedProcess, timeout: float = 15.0) -> int:
    proc.popen.wait(timeout)
    return proc.popen.returncode


def joint_vector(body: Body, values: dict[str, float]) -> np.ndarray:
    return np.array([values.get(n, 0.0) for n in body.joint_names])


# --- the real stack: modelloader, simserver and controllers as processes ---


def write_project(folder: Path, text: str, name: str = "project.yaml") -> Path:
    """A project file in ``folder``; ``{models}`` in ``text`` becomes models/openhrp3/model."""
    path = folder / name
    path.write_text(textwrap.dedent(text).replace("{models}", str(MODELS / "openhrp3" / "model")))
    return path


class Stack:
    """modelloader + simserver for a project, controllers on demand; every process stopped at the end."""

    def __init__(
        self, folder: Path, nameserver: str, project: Path, *, until: float | None = None, loader: bool = True
    ) -> None:
        """``loader=False``: no modelloader process, for a project that loads its models in the
        simulator (``services: {loader: local}``)."""
        from hrpsim.client import Client

        self.folder, self.nameserver, self.project = folder, nameserver, project
        self.procs: list[ManagedProcess] = []
        if loader:
            loader_proc = self._spawn(["run", "modelloader", "--nameserver", nameserver], "modelloader")
            wait_registered(nameserver, "modelloader", loader_proc)
        extra = ["--until", str(until)] if until is not None else []
        self.sim_proc = self._spawn(
            ["run", "simserver", "--project", str(project), "--nameserver", nameserver, *extra], "simserver"
        )
        self.sim_entry = wait_registered(nameserver, "simserver", self.sim_proc)
        self.sim = Client(self.sim_entry["endpoint"], peer="simserver", timeout=10.0)

    def _spawn(self, args: list[str], label: str) -> ManagedProcess:
        proc = spawn(args, self.folder / f"{label}-{time.monotonic_ns()}.log")
        self.procs.append(proc)
        return proc

    def controller(
        self, spec: Path | str, *, name: str, robot: str = "robot", extra: list[str] | None = None, wait: bool = True
    ) -> ManagedProcess:
        args = [
            "controller",
            str(spec),
            "--robot",
            robot,
            "--name",
            name,
            "--nameserver",
            self.nameserver,
            *(extra or []),
        ]
        proc = self._spawn(args, f"controller-{name}")
        if wait:
            wait_registered(self.nameserver, name, proc)
        return proc

    def run(self, *, until: float | None = None, timeout: float = 120.0) -> dict[str, Any]:
        """Start the run and wait for it to finish; returns the simserver's summary."""
        self.sim.call("start", until=until)
        return self.wait_finished(timeout=timeout)

    def wait_finished(self, *, timeout: float = 120.0) -> dict[str, Any]:
        """Wait for a started run to finish; returns the simserver's summary."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.sim.call("status")["finished"]:
                return self.sim.call("summary")
            time.sleep(0.05)
        raise AssertionError(f"the run did not finish within {timeout} s:\n{self.sim_proc.log_text()}")

    def logs(self) -> str:
        return "\n".join(p.log_text() for p in self.procs)

    def close(self) -> None:
        self.sim.close()
        for proc in reversed(self.procs):
            proc.stop()

    def __enter__(self) -> Stack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
