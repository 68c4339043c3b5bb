"""Where a model's root starts: the project's ``position``/``rotation`` where it gives them, else
the root's pose in the model file (a VRML root Joint's translation/rotation, a URDF root's origin
under ``world``), as GrxUI and Choreonoid place it. Every engine places models through here."""

from __future__ import annotations

import numpy as np

from hrpsim.bodyinfo import Body
from hrpsim.project import ModelConfig
from hrpsim.transforms import axis_angle_matrix


def root_placement(config: ModelConfig, body: Body) -> tuple[np.ndarray, np.ndarray]:
    """(position, rotation matrix) of the model's root in the world; each defaults to the file's."""
    root = body.root
    position = root.translation if config.position is None else config.position
    if config.rotation is None:
        rotation = np.asarray(root.rotation, float)
    else:
        rotation = axis_angle_matrix(config.rotation[:3], float(config.rotation[3]))
    return np.asarray(position, float).copy(), rotation.copy()
