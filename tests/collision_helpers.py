"""Test helpers for the collision service: start it as a real process, hand-made bodies."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import yaml
from process_helpers import MODELS, ManagedProcess, spawn  # noqa: F401  (tests import MODELS from here)
from process_helpers import wait_registered as registered_entry

from hrpsim.bodyinfo import Body, Link, Shape
from hrpsim.client import Client
from hrpsim.collision.geometry import LIBRARIES
from hrpsim.engine_registry import installed
from hrpsim.transforms import pose  # noqa: F401  (tests import it from here)


def example_project(example: Path, path: Path, **world: object) -> Path:
    """``example`` (a project in examples/) written to ``path`` with ``world`` settings changed and
    its models' files and controllers' folders made absolute, so it runs from any folder."""
    project = yaml.safe_load(example.read_text())
    project["world"].update(world)
    for model in project["models"]:
        model["file"] = str((example.parent / model["file"]).resolve())
    for controller in project.get("controllers", []):
        controller["cwd"] = str((example.parent / controller.get("cwd", ".")).resolve())
    path.write_text(yaml.safe_dump(project))
    return path


def wait_registered(nameserver: str, name: str, proc: ManagedProcess, timeout: float = 20.0) -> str:
    """The endpoint ``name`` registered, once it has."""
    return registered_entry(nameserver, name, proc, timeout)["endpoint"]


def installed_geometries() -> list[str]:
    """The collision geometry libraries installed here (ODE's, MuJoCo's)."""
    return [name for name in LIBRARIES if installed(name)]


@contextmanager
def collision_service(
    nameserver: str, folder: Path, name: str = "collision", geometry: str | None = None
) -> Iterator[Client]:
    """A real ``hrpsim run collision`` process and a client connected to it; ``geometry``: the
    library that answers (``--geometry``), the service's default when None."""
    choice = [] if geometry is None else ["--geometry", geometry]
    proc = spawn(["run", "collision", "--nameserver", nameserver, "--name", name, *choice], folder / f"{name}.log")
    try:
        endpoint = wait_registered(nameserver, name, proc)
        with Client(endpoint, peer=name, timeout=20.0) as client:
            yield client
    finally:
        proc.stop()


def rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def one_link_body(name: str, *shapes: Shape, static: bool = False) -> Body:
    return Body(
        name, links=[Link("BASE", joint_type="fixed" if static else "free", shapes=list(shapes))], static=static
    )


def box(size, translation=(0.0, 0.0, 0.0)) -> Shape:
    return Shape("box", size=np.array(size, dtype=float), translation=np.array(translation, dtype=float))


def box_mesh(size, translation=(0.0, 0.0, 0.0)) -> Shape:
    """A box given as 12 triangles (to take the mesh paths)."""
    hx, hy, hz = (v / 2 for v in size)
    corners = np.array([[x, y, z] for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)])
    faces = np.array(
        [
            [0, 1, 3],
            [0, 3, 2],
            [4, 6, 7],
            [4, 7, 5],
            [0, 4, 5],
            [0, 5, 1],
            [2, 3, 7],
            [2, 7, 6],
            [0, 2, 6],
            [0, 6, 4],
            [1, 5, 7],
            [1, 7, 3],
        ],
        dtype=np.int32,
    )
    return Shape("mesh", vertices=corners, triangles=faces, translation=np.array(translation, dtype=float))


def chain_body(name: str, n: int = 4, length: float = 0.3) -> Body:
    """A planar arm: n links, each a box of ``length`` along X, joined by Z hinges at their ends."""
    links = []
    for i in range(n):
        links.append(
            Link(
                f"L{i}",
                parent=i - 1,
                joint_type="free" if i == 0 else "rotate",
                joint_id=i - 1,
                translation=np.array([0.0 if i == 0 else length, 0.0, 0.0]),
                shapes=[box([length * 0.9, 0.05, 0.05], (length / 2, 0.0, 0.0))],
            )
        )
    return Body(name, links=links)
