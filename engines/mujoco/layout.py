"""Where one model's pieces are in the MuJoCo model: element names per link, and how they are made
(names are global in a MuJoCo model, so each is prefixed by its model's name)."""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from hrpsim.bodyinfo import Body, Link
from hrpsim.conventions import simulated_mass
from hrpsim.project import ModelConfig

HELPER_MASS = 1e-3  # kg of helper bodies (a loop's intermediate body, a drive's rotor)
HELPER_INERTIA = 1e-6  # kg m^2: a 1 g sphere of 5 cm radius


@dataclass
class ModelLayout:
    """Names of one model's MuJoCo elements, per link (link order); "" where there is none."""

    name: str
    info: Body
    config: ModelConfig
    static: bool
    initial_values: list[float]
    bodies: list[str] = field(default_factory=list)
    joints: list[str] = field(default_factory=list)
    geoms: list[list[str]] = field(default_factory=list)
    sensors: dict[str, str] = field(default_factory=dict)  # sensor name -> site name
    # a model built from its MJCF (native.py): each link's frame in its MuJoCo body's frame, the
    # links posed from their parents (a body's links but its own), the ball joints and their links
    offsets: list[np.ndarray] = field(default_factory=list)
    derived: list[int] = field(default_factory=list)
    balls: list[tuple[str, list[int]]] = field(default_factory=list)

    def where(self, index: int) -> str:
        return f"model {self.name!r} link {self.info.links[index].name!r}"


def element(model: str, *parts: str) -> str:
    """The MuJoCo name of a model's element (names are global in a MuJoCo model)."""
    return "/".join((model, *parts))


def helper_body(parent: mujoco.MjsBody, name: str, **placement: object) -> mujoco.MjsBody:
    """A 1 g helper body (a loop's intermediate, a drive's rotor)."""
    body = parent.add_body(name=name, **placement)
    body.mass, body.ipos, body.explicitinertial = HELPER_MASS, [0.0, 0.0, 0.0], True
    body.fullinertia = [HELPER_INERTIA] * 3 + [0.0] * 3
    return body


def set_inertia(body: mujoco.MjsBody, link: Link, where: str, offset: np.ndarray | None = None) -> None:
    """The link's mass, centre of mass and inertia as the body's (its frame ``offset`` from the
    body's, if it is not the body's own); massless links get 1 g, small moments are raised."""
    mass, inertia = simulated_mass(link, where)
    body.mass = mass
    body.ipos = np.asarray(link.com, float) + (0.0 if offset is None else offset)
    body.fullinertia = [inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2]]
    body.inertia = [0.0, 0.0, 0.0]  # an inertia the file gave would clash with the full one
    body.explicitinertial = True
