"""Where one model's pieces are in the MuJoCo model: element names per link, and how they are made
(names are global in a MuJoCo model, so each is prefixed by its model's name)."""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.project import ModelConfig
from hrpsim.transforms import axis_angle_matrix

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

    def where(self, index: int) -> str:
        return f"model {self.name!r} link {self.info.links[index].name!r}"


def element(model: str, *parts: str) -> str:
    """The MuJoCo name of a model's element (names are global in a MuJoCo model)."""
    return "/".join((model, *parts))


def root_pose(config: ModelConfig) -> tuple[np.ndarray, np.ndarray]:
    rot = config.rotation
    return np.asarray(config.position, float), axis_angle_matrix(rot[:3], float(rot[3]))


def helper_body(parent: mujoco.MjsBody, name: str, **placement: object) -> mujoco.MjsBody:
    """A 1 g helper body (a loop's intermediate, a drive's rotor)."""
    body = parent.add_body(name=name, **placement)
    body.mass, body.ipos, body.explicitinertial = HELPER_MASS, [0.0, 0.0, 0.0], True
    body.fullinertia = [HELPER_INERTIA] * 3 + [0.0] * 3
    return body
