"""Contacts, intersection and rays through MuJoCo's own collision functions, on a scene's bodies at
the poses the scene gives (the collision service's queries, and range sensors off the MuJoCo engine).

The scene's bodies go into one MuJoCo model that never steps, built with the engine's own shape
mapping (geometry.py), so the shapes are what the mujoco engine collides: a cone is a cylinder and
a mesh collides as its convex hull (rays hit its triangles). Each link with solid shapes is a body
with a free joint, so posing it is writing the joint's seven coordinates; a plane, which MuJoCo
lets only static bodies carry, hangs on the world body and is posed by moving the geom itself.
The model is built again when the scene's bodies change.

Contacts are MuJoCo's (``mj_collision`` over the whole model, kept for the pairs asked), in the
convention of hrpsim.geometry_queries: ``normal`` points into link1 (MuJoCo's points from geom1 to
geom2) and ``depth`` >= 0 is the penetration. Rays are ``mj_multiRay`` from each origin, the geoms
a query may hit put in group 0 for the cast and every other geom in group 1.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass, field

import mujoco
import numpy as np

from hrpsim.bodyinfo import Shape
from hrpsim.engines.mujoco.geometry import add_shape, quaternion
from hrpsim.engines.mujoco.layout import helper_body
from hrpsim.errors import ModelError
from hrpsim.geometry_queries import Hits, LinkPair, PairContacts, PosedScene, SceneBody

_HIT_GROUPS = np.array([1, 0, 0, 0, 0, 0], dtype=np.uint8)  # rays see group 0 only
_MODEL_ERRORS = (ValueError, mujoco.FatalError)
HULL_THICKNESS = 1e-6  # m, a flat mesh's hull is this thick each side

LinkKey = tuple[str, int]  # (scene body, link index)


@dataclass
class _Link:
    joint_qpos: int  # address of the link body's free joint, -1 when the link has only planes
    planes: list[tuple[int, Shape]] = field(default_factory=list)  # (geom id, shape) on the world body


class MujocoScene:
    """One MuJoCo model of every body of a scene, posed as the scene's bodies are."""

    def __init__(self, scene: PosedScene) -> None:
        self.key = _bodies_key(scene)
        spec = _spec()
        geom_links: list[LinkKey] = []
        plane_shapes: dict[LinkKey, list[tuple[int, Shape]]] = {}
        solid_links: list[LinkKey] = []
        for name, entry in scene.bodies.items():
            for index, shapes in enumerate(_usable(entry)):
                where = f"body {name!r} link {entry.body.links[index].name!r}"
                solid = [s for s in shapes if s.kind != "plane"]
                if solid:
                    body = helper_body(spec.worldbody, f"b{len(solid_links)}")
                    body.add_freejoint()
                    solid_links.append((name, index))
                    for shape in solid:
                        _add(spec, body, shape, f"g{len(geom_links)}", where)
                        geom_links.append((name, index))
                for shape in (s for s in shapes if s.kind == "plane"):
                    plane_shapes.setdefault((name, index), []).append((len(geom_links), shape))
                    _add(spec, spec.worldbody, shape, f"g{len(geom_links)}", where, static=True)
                    geom_links.append((name, index))
        self.m = _compile(spec, "the collision scene")
        self.d = mujoco.MjData(self.m)
        # MuJoCo numbers geoms body by body (the world's first), not in the order they were added
        ids = [mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_GEOM, f"g{k}") for k in range(len(geom_links))]
        self.geom_link: list[LinkKey] = [("", -1)] * self.m.ngeom  # geom id -> (body, link index)
        for k, geom in enumerate(ids):
            self.geom_link[geom] = geom_links[k]
        self.links: dict[LinkKey, _Link] = {}
        for k, key in enumerate(solid_links):
            body = mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_BODY, f"b{k}")
            self.links[key] = _Link(int(self.m.jnt_qposadr[self.m.body_jntadr[body]]))
        for key, planes in plane_shapes.items():
            self.links.setdefault(key, _Link(-1)).planes = [(ids[k], shape) for k, shape in planes]
        self._found: dict[tuple[LinkKey, LinkKey], list[np.ndarray]] | None = None

    def place(self, scene: PosedScene) -> None:
        """Pose every link as the scene says; the contacts found before are forgotten."""
        for (name, index), link in self.links.items():
            pose = scene.bodies[name].poses[index]
            rotation, origin = pose[:3, :3], pose[:3, 3]
            if link.joint_qpos >= 0:
                self.d.qpos[link.joint_qpos : link.joint_qpos + 3] = origin
                self.d.qpos[link.joint_qpos + 3 : link.joint_qpos + 7] = quaternion(rotation)
            for geom, shape in link.planes:
                self.m.geom_pos[geom] = rotation @ np.asarray(shape.translation, float) + origin
                self.m.geom_quat[geom] = quaternion(rotation @ np.asarray(shape.rotation, float))
        mujoco.mj_kinematics(self.m, self.d)
        self._found = None

    def found(self, pair: LinkPair, most_per_geom_pair: int = 0) -> PairContacts | None:
        """The contacts between the pair's links at the current poses (all found at once), at most
        ``most_per_geom_pair`` (0: all) between any two geoms."""
        if self._found is None:
            self._found = self._collide()
        first, second = (pair.body1, pair.link1), (pair.body2, pair.link2)
        rows = self._found.get((first, second), []) + [row * _FLIP for row in self._found.get((second, first), [])]
        if most_per_geom_pair > 0:
            rows = _first_per_geom_pair(rows, most_per_geom_pair)
        if not rows:
            return None
        table = np.array(rows)
        return PairContacts(pair, table[:, 0:3], table[:, 3:6], table[:, 6])

    def _collide(self) -> dict[tuple[LinkKey, LinkKey], list[np.ndarray]]:
        mujoco.mj_collision(self.m, self.d)
        out: dict[tuple[LinkKey, LinkKey], list[np.ndarray]] = {}
        for contact in self.d.contact[: self.d.ncon]:
            depth = -float(contact.dist)
            if depth < 0:
                continue
            key = (self.geom_link[contact.geom1], self.geom_link[contact.geom2])
            row = np.concatenate([contact.pos, -contact.frame[:3], [depth], [contact.geom1, contact.geom2]])
            out.setdefault(key, []).append(row)
        return out

    def cast(
        self, origin: np.ndarray, directions: np.ndarray, max_distance: float, seen: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """From one origin along unit directions (n, 3): distance (inf: none), geom id, surface normal;
        ``seen`` says per geom whether the rays may hit it."""
        self.m.geom_group[:] = np.where(seen, 0, 1)
        count = len(directions)
        geom, distance, normal = np.empty(count, dtype=np.int32), np.empty(count), np.empty(3 * count)
        vectors = np.ascontiguousarray(directions, dtype=np.float64).reshape(-1)
        mujoco.mj_multiRay(
            self.m, self.d, np.ascontiguousarray(origin, float), vectors, _HIT_GROUPS, True, -1,
            geom, distance, normal, count, max_distance,
        )  # fmt: skip
        missed = (geom < 0) | (distance > max_distance)
        distance[missed] = np.inf
        return distance, geom, normal.reshape(count, 3)


# A contact row (position, normal, depth, geom1, geom2) seen from the other link: the normal turns round.
_FLIP = np.array([1, 1, 1, -1, -1, -1, 1, 1, 1], dtype=float)


def _first_per_geom_pair(rows: list[np.ndarray], most: int) -> list[np.ndarray]:
    kept, counts = [], {}
    for row in rows:
        geoms = (min(row[7], row[8]), max(row[7], row[8]))
        counts[geoms] = counts.get(geoms, 0) + 1
        if counts[geoms] <= most:
            kept.append(row)
    return kept


def _spec() -> mujoco.MjSpec:
    spec = mujoco.MjSpec()
    # every two links of the scene may be asked about, a link and its parent's included
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_FILTERPARENT
    return spec


def _add(spec: mujoco.MjSpec, body: mujoco.MjsBody, shape: Shape, name: str, where: str, static: bool = False) -> None:
    geom = add_shape(spec, body, shape, name, static=static, where=where)
    geom.rgba = [0.5, 0.5, 0.5, 1.0]  # MuJoCo's rays skip fully transparent geoms


def _compile(spec: mujoco.MjSpec, what: str) -> mujoco.MjModel:
    try:
        return spec.compile()
    except _MODEL_ERRORS as exc:
        raise ModelError(f"{what} cannot be used for collision queries: MuJoCo refuses it: {exc}") from None


def _usable(entry: SceneBody) -> list[list[Shape]]:
    """Per link, the shapes that have volume or surface (a mesh without triangles of some area has
    neither), a flat mesh given a hull (MuJoCo refuses a mesh without volume)."""
    return [[_with_hull(s) for s in link.shapes if s.kind != "mesh" or _has_area(s)] for link in entry.body.links]


def _has_area(mesh: Shape) -> bool:
    if not len(mesh.vertices) or not len(mesh.triangles):
        return False
    corners = np.asarray(mesh.vertices, float)[np.asarray(mesh.triangles, int)]
    area = np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1).sum() / 2
    return bool(area > HULL_THICKNESS**2)


def _with_hull(shape: Shape) -> Shape:
    """A mesh whose vertices span no volume (a flat sheet, a line, a point) gets copies of them
    ``HULL_THICKNESS`` off along every direction it lacks: the triangles, which rays hit, stay."""
    if shape.kind != "mesh":
        return shape
    vertices = np.asarray(shape.vertices, float).reshape(-1, 3)
    _, singular, axes = np.linalg.svd(vertices - vertices.mean(axis=0))
    flat = [axes[k] for k in range(3) if k >= len(singular) or singular[k] <= HULL_THICKNESS]
    if not flat:
        return shape
    offsets = np.array([sign * HULL_THICKNESS * axis for axis in flat for sign in (1.0, -1.0)])
    extra = (vertices[:, None, :] + offsets[None, :, :]).reshape(-1, 3)
    return dataclasses.replace(shape, vertices=np.vstack([vertices, extra]))


def _bodies_key(scene: PosedScene) -> tuple[tuple[str, int], ...]:
    return tuple((name, id(entry.body)) for name, entry in scene.bodies.items())


def _world(scene: PosedScene) -> MujocoScene:
    """The scene's MuJoCo model (built again when its bodies changed), posed as the scene is now."""
    world = scene.extra.get("mujoco")
    if world is None or world.key != _bodies_key(scene):
        world = scene.extra["mujoco"] = MujocoScene(scene)
    world.place(scene)
    return world


def prepare(entry: SceneBody) -> None:
    """Check that MuJoCo takes the body's shapes (ModelError naming the body if not)."""
    spec = _spec()
    for index, shapes in enumerate(_usable(entry)):
        where = f"body {entry.name!r} link {entry.body.links[index].name!r}"
        body = helper_body(spec.worldbody, f"{index}")
        body.add_freejoint()
        for k, shape in enumerate(shapes):
            _add(spec, spec.worldbody if shape.kind == "plane" else body, shape, f"g{index}_{k}", where, static=True)
    _compile(spec, f"body {entry.name!r}")


def place_bodies(scene: PosedScene, pairs: list[LinkPair]) -> None:
    _world(scene)


def pair_contacts(scene: PosedScene, pair: LinkPair, max_per_geom_pair: int = 0) -> PairContacts | None:
    """MuJoCo's contacts between the two links (placed by :func:`place_bodies`); None when they do not touch."""
    return scene.extra["mujoco"].found(pair, max_per_geom_pair)


def pair_touches(scene: PosedScene, pair: LinkPair) -> bool:
    return scene.extra["mujoco"].found(pair) is not None


def contacts(scene: PosedScene, pairs: dict[LinkPair, float], max_per_geom_pair: int = 0) -> list[PairContacts]:
    world = _world(scene)
    out = []
    for pair in scene.near_pairs(pairs):
        found = world.found(pair, max_per_geom_pair)
        if found is not None:
            out.append(found)
    return out


def cast(
    scene: PosedScene,
    origins: np.ndarray,
    directions: np.ndarray,
    max_distance: float,
    bodies: list[str] | None = None,
    skip_links: Collection[tuple[str, int]] = (),
) -> Hits:
    """The nearest hit of each ray (origins and unit directions (R, 3), world frame) on the named
    bodies (None: all), passing through the (body, link index) pairs of ``skip_links``."""
    world = _world(scene)
    wanted = set(scene.bodies) if bodies is None else set(bodies)
    skipped = set(skip_links)
    seen = np.array([key[0] in wanted and key not in skipped for key in world.geom_link], dtype=bool)
    hits = Hits.empty(len(origins))
    unique, which = np.unique(origins, axis=0, return_inverse=True)
    for k, origin in enumerate(unique):
        rays = np.flatnonzero(which.reshape(-1) == k)
        distance, geom, normal = world.cast(origin, directions[rays], max_distance, seen)
        for ray, dist, g, n in zip(rays, distance, geom, normal, strict=True):
            if np.isfinite(dist):
                name, link = world.geom_link[g]
                point = origins[ray] + directions[ray] * dist
                hits.offer(int(ray), float(dist), name, scene.bodies[name].body.links[link].name, point, n)
    return hits
