"""Helpers for the tick and controller tests: a real controller hub serving a kinematic world in the
test process (registered with a real nameserver as a simserver), and real controller processes."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import zmq
from process_helpers import REPO, ManagedProcess, spawn

from controllers.kinematic_world import KinematicWorld
from hrpsim.bodyinfo import Body
from hrpsim.naming import Registration
from hrpsim.project import Project, parse_project
from simserver.hub import ControllerHub

MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
SR1_URDF = MODELS / "choreonoid" / "model" / "SR1" / "SR1.urdf"
EXAMPLES = REPO / "examples"


def sr1_body() -> Body:
    from modelloader.urdf import load_urdf

    return load_urdf(SR1_URDF)


def kinematic_project(folder: Path, controllers: list[dict[str, Any]], *, sync: str = "lockstep",
                      timestep: float = 0.001) -> Project:
    data = {
        "world": {"timestep": timestep, "sync": sync},
        "models": [{"name": "robot", "file": str(SR1_URDF)}],
        "controllers": [{"command": "external", "robot": "robot", **c} for c in controllers],
    }
    return parse_project(data, str(folder / "project.yaml"))


class HubUnderTest:
    """The real ControllerHub on a KinematicWorld, registered as simserver ``sim`` with the nameserver."""

    def __init__(self, nameserver: str, project: Project, body: Body) -> None:
        self.context = zmq.Context()
        self.world = KinematicWorld({"robot": body}, timestep=project.world.timestep)
        self.hub = ControllerHub(self.world, project, context=self.context)
        self.registration = Registration("sim", "simserver", self.hub.endpoint, nameserver=nameserver,
                                         metadata={"controllers": self.hub.endpoint, "robots": ["robot"]})
        self.registration.start()

    def step(self) -> None:
        k = self.world.tick
        self.hub.poll()
        self.hub.before_collide(k)
        self.world.collide()
        self.hub.after_collide(k)
        self.world.integrate()

    def run(self, ticks: int) -> None:
        for _ in range(ticks):
            self.step()

    def close(self) -> None:
        self.registration.stop()
        self.hub.close()
        self.context.destroy(linger=0)  # also closes sockets a test made from it

    def __enter__(self) -> HubUnderTest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_controller(folder: Path, name: str, body: str) -> Path:
    """A controller file in ``folder`` from source text (dedented)."""
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


def start_controller(folder: Path, spec: str | Path, *, nameserver: str, robot: str = "robot", name: str = "",
                     extra: list[str] | None = None) -> ManagedProcess:
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
