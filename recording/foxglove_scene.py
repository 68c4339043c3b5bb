"""The models as Foxglove draws them: ``foxglove.SceneUpdate`` entities, one per link, attached
to the link's frame (``MODEL/LINK`` of ``/tf``); contacts as a SceneUpdate in the world frame;
joint values as ``foxglove.JointStates``.

A link's entity holds its shapes (``visuals``, else its collision ``shapes``, as our viewer draws
them) in the colours of the model file: boxes as cubes, spheres as spheres, cylinders and cones as
cylinders (a cone is one whose top is scaled to 0), capsules, planes and meshes as triangle lists
with indices. VRML puts the axis of cylinders, cones and capsules along the shape's Y; Foxglove's
cylinder has it along Z, so their orientation turns Z onto Y (:data:`Z_TO_Y`).

Entities are ``frame_locked`` with no lifetime: sent once, they move with their frames for good.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import orjson

from hrpsim.bodyinfo import Body, Link, Shape
from hrpsim.recording import schemas
from hrpsim.recording.messages import timestamp
from hrpsim.shape_meshes import PLANE_HALF_SIZE, Z_TO_Y, shape_mesh
from hrpsim.transforms import matrix_quaternion

_FOREVER = {"sec": 0, "nsec": 0}
_PRIMITIVES = ("arrows", "cubes", "spheres", "cylinders", "lines", "triangles", "texts", "models")
CONTACT_ENTITY = "contacts"
CONTACT_SPHERE_M = 0.01  # diameter of a contact point's marker
CONTACT_ARROW_M = 0.05  # length of a contact normal's arrow
CONTACT_COLOUR = {"r": 1.0, "g": 0.2, "b": 0.1, "a": 1.0}


def _vector(v: Sequence[float]) -> dict[str, float]:
    return {"x": float(v[0]), "y": float(v[1]), "z": float(v[2])}


def _pose(translation: Sequence[float], rotation: np.ndarray) -> dict[str, Any]:
    w, x, y, z = (float(c) for c in matrix_quaternion(np.asarray(rotation, dtype=float)))
    return {"position": _vector(translation), "orientation": {"x": x, "y": y, "z": z, "w": w}}


def shape_colour(shape: Shape) -> dict[str, float]:
    """The shape's diffuse colour, its transparency as alpha."""
    r, g, b = (float(c) for c in np.clip(np.asarray(shape.appearance.diffuse, dtype=float).reshape(3), 0.0, 1.0))
    return {"r": r, "g": g, "b": b, "a": float(np.clip(1.0 - shape.appearance.transparency, 0.0, 1.0))}


def _entity(stamp: dict[str, int], frame: str, entity_id: str) -> dict[str, Any]:
    entity: dict[str, Any] = {
        "timestamp": stamp,
        "frame_id": frame,
        "id": entity_id,
        "lifetime": _FOREVER,
        "frame_locked": True,
        "metadata": [],
    }
    entity.update({kind: [] for kind in _PRIMITIVES})
    return entity


def add_shape(entity: dict[str, Any], shape: Shape) -> None:
    """One shape of a link into its entity, as the primitive that draws it."""
    colour, kind = shape_colour(shape), shape.kind
    rotation = np.asarray(shape.rotation, dtype=float)
    if kind == "box":
        size = _vector(np.maximum(shape.size, 1e-6))
        entity["cubes"].append({"pose": _pose(shape.translation, rotation), "size": size, "color": colour})
    elif kind == "sphere":
        d = 2.0 * shape.radius
        entity["spheres"].append(
            {"pose": _pose(shape.translation, rotation), "size": _vector((d, d, d)), "color": colour}
        )
    elif kind in ("cylinder", "cone"):
        d = 2.0 * shape.radius
        entity["cylinders"].append(
            {
                "pose": _pose(shape.translation, rotation @ Z_TO_Y[:3, :3]),
                "size": _vector((d, d, shape.height)),
                "bottom_scale": 1.0,
                "top_scale": 0.0 if kind == "cone" else 1.0,
                "color": colour,
            }
        )
    elif kind == "plane":  # a half-space: a thin square of PLANE_HALF_SIZE, its top face on the plane
        centre = np.asarray(shape.translation, dtype=float) + rotation @ (0.0, 0.0, -0.001)
        size = _vector((2 * PLANE_HALF_SIZE, 2 * PLANE_HALF_SIZE, 0.002))
        entity["cubes"].append({"pose": _pose(centre, rotation), "size": size, "color": colour})
    else:
        _add_triangles(entity, shape, colour)


def _add_triangles(entity: dict[str, Any], shape: Shape, colour: dict[str, float]) -> None:
    """Meshes (their own vertices) and capsules (tessellated) as an indexed triangle list, already
    placed in the link's frame."""
    mesh = shape_mesh(shape)
    if mesh is None:
        return
    entity["triangles"].append(
        {
            "pose": _pose((0.0, 0.0, 0.0), np.eye(3)),
            "points": [{"x": x, "y": y, "z": z} for x, y, z in np.asarray(mesh.vertices, dtype=float).tolist()],
            "color": colour,
            "colors": [],
            "indices": np.asarray(mesh.faces, dtype=np.int64).ravel().tolist(),
        }
    )


def link_entity(stamp: dict[str, int], model: str, link: Link) -> dict[str, Any]:
    frame = schemas.frame_id(model, link.name)
    entity = _entity(stamp, frame, frame)
    for shape in link.visuals or link.shapes:
        add_shape(entity, shape)
    return entity


def scene_update(time: float, bodies: dict[str, Body]) -> dict[str, Any]:
    """Every link of every model, one entity each (a link without shapes has an empty one)."""
    stamp = timestamp(time)
    entities = [link_entity(stamp, model, link) for model, body in bodies.items() for link in body.links]
    return {"deletions": [], "entities": entities}


def contacts_scene(time: float, contacts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """This tick's contact points as spheres and their normals as arrows, in the world frame.
    The entity replaces the last tick's (same id); the recording keeps no contact forces."""
    stamp = timestamp(time)
    entity = _entity(stamp, schemas.WORLD_FRAME, CONTACT_ENTITY)
    entity["frame_locked"] = False
    size = _vector((CONTACT_SPHERE_M,) * 3)
    for contact in contacts:
        position = contact["position"]
        entity["spheres"].append({"pose": _pose(position, np.eye(3)), "size": size, "color": CONTACT_COLOUR})
        entity["arrows"].append(
            {
                "pose": _pose(position, _x_onto(np.asarray(contact["normal"], dtype=float))),
                "shaft_length": CONTACT_ARROW_M * 0.7,
                "shaft_diameter": CONTACT_SPHERE_M * 0.3,
                "head_length": CONTACT_ARROW_M * 0.3,
                "head_diameter": CONTACT_SPHERE_M * 0.8,
                "color": CONTACT_COLOUR,
            }
        )
    return {"deletions": [], "entities": [entity]}


def _x_onto(direction: np.ndarray) -> np.ndarray:
    """A rotation taking +x (a Foxglove arrow's direction) onto ``direction``."""
    x = direction / (np.linalg.norm(direction) or 1.0)
    helper = np.array([0.0, 0.0, 1.0]) if abs(x[2]) < 0.9 else np.array([0.0, 1.0, 0.0])
    y = np.cross(helper, x)
    y /= np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def joint_states(time: float, names: Sequence[str], state: dict[str, Any]) -> dict[str, Any]:
    """Joint values (a recorded RobotState's ``q``, ``dq``, ``tau``, or only some of them) as
    foxglove.JointStates: position, velocity, effort per joint."""
    columns = [(key, state[field]) for key, field in _JOINT_FIELDS if state.get(field) is not None]
    joints = [{"name": name, **{key: values[i] for key, values in columns}} for i, name in enumerate(names)]
    return {"timestamp": timestamp(time), "joints": joints}


_JOINT_FIELDS = (("position", "q"), ("velocity", "dq"), ("effort", "tau"))


class JointStatesEncoder:
    """foxglove.JointStates of one robot's recorded states, its dicts built once and refilled for
    every state (half the time of building them anew, in the writer process)."""

    def __init__(self, names: Sequence[str]) -> None:
        self._joints = [{"name": n, "position": 0.0, "velocity": 0.0, "effort": 0.0} for n in names]
        self._message: dict[str, Any] = {"timestamp": {"sec": 0, "nsec": 0}, "joints": self._joints}

    def encode(self, time: float, state: dict[str, Any]) -> bytes:
        """The JointStates of a recorded state (decoded from its JSON)."""
        self._message["timestamp"] = timestamp(time)
        for joint, q, dq, tau in zip(self._joints, state["q"], state["dq"], state["tau"], strict=True):
            joint["position"], joint["velocity"], joint["effort"] = q, dq, tau
        return orjson.dumps(self._message)
