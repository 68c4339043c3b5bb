"""Contacts and intersection through ODE's collision functions, on the simulator's own geoms.

The geoms come from :func:`hrpsim.engines.ode.geometry.make_geoms`, the module the simulator builds its world
with, so both see the same geometry (a cone is a cylinder there, and a mesh is its oriented
bounding box when the ODE binding has no trimesh support). Each link with shapes gets a carrier
``ode.Body`` in a private world that never steps: the link's geoms hang on it at their offsets,
and posing a link is one ``setPosition``/``setRotation`` of its carrier. A plane (static in ODE)
is re-made in place when its link moves.

Contacts follow ODE's ``dContactGeom`` for (link1's geom, link2's geom): ``normal`` points into
link1 (moving link1 along it by ``depth`` separates the two), ``depth`` >= 0.

The scene itself is the collision service's (hrpsim.collision.scene, which stands on this package):
here it is only what these functions read of it, :class:`hrpsim.geometry_queries.PosedScene`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import ode

from hrpsim.bodyinfo import Shape
from hrpsim.engines.ode import trimesh as odemesh
from hrpsim.engines.ode.geometry import Frame, make_geoms, ode_rotation
from hrpsim.geometry_queries import LinkPair, PairContacts, PosedScene, SceneBody

_WORLD = ode.World()  # holds the carriers; it never steps


@dataclass
class OdeLink:
    carrier: ode.Body | None
    geoms: list[ode.GeomObject]  # every geom of the link, planes included
    shapes: list[Shape]  # the shape each geom was made from (same order)
    planes: list[tuple[int, Shape]]  # (index in geoms, shape) of the link's planes


class OdeGeometry:
    """The ODE side of one scene body: a carrier per link, geoms from the shared module."""

    def __init__(self, entry: SceneBody) -> None:
        self.links: list[OdeLink] = []
        for link in entry.body.links:
            shapes = [s for s in link.shapes if s.kind != "mesh" or (len(s.vertices) and len(s.triangles))]
            self.links.append(self._link(shapes, f"body {entry.name} link {link.name}"))
        self._posed: np.ndarray | None = None

    @staticmethod
    def _link(shapes: list[Shape], where: str) -> OdeLink:
        solid = [s for s in shapes if s.kind != "plane"]
        carrier = ode.Body(_WORLD) if solid else None
        geoms = make_geoms(solid, None, body=carrier, where=where) if solid else []
        planes = []
        for shape in (s for s in shapes if s.kind == "plane"):
            planes.append((len(geoms), shape))
            geoms.extend(make_geoms([shape], None, where=where))
        return OdeLink(carrier, geoms, solid + [s for _, s in planes], planes)

    def place(self, poses: np.ndarray) -> None:
        """Move every carrier (and re-make moved planes) to ``poses``; a no-op when unchanged."""
        if self._posed is not None and np.array_equal(self._posed, poses):
            return
        for link, link_pose in zip(self.links, poses, strict=True):
            if link.carrier is not None:
                link.carrier.setPosition(tuple(float(v) for v in link_pose[:3, 3]))
                link.carrier.setRotation(ode_rotation(link_pose[:3, :3]))
            for slot, shape in link.planes:
                frame = Frame(link_pose[:3, 3].copy(), link_pose[:3, :3].copy())
                link.geoms[slot] = make_geoms([shape], None, frame=frame)[0]
        self._posed = poses.copy()


def geometry_of(entry: SceneBody) -> OdeGeometry:
    geometry = entry.extra.get("ode")
    if geometry is None:
        geometry = entry.extra["ode"] = OdeGeometry(entry)
    geometry.place(entry.poses)
    return geometry


def place_bodies(scene: PosedScene, pairs: list[LinkPair]) -> None:
    """Pose the ODE geometry of every body the pairs name (once per query, not per pair)."""
    for name in {p.body1 for p in pairs} | {p.body2 for p in pairs}:
        geometry_of(scene.bodies[name])


def _link_geoms(scene: PosedScene, body: str, link: int) -> list[ode.GeomObject]:
    return scene.bodies[body].extra["ode"].links[link].geoms  # placed by place_bodies


def pair_contacts(scene: PosedScene, pair: LinkPair, max_per_geom_pair: int = 0) -> PairContacts | None:
    """ODE contacts between the geoms of the two links (placed); None when they do not touch."""
    rows: list[tuple] = []
    for g1 in _link_geoms(scene, pair.body1, pair.link1):
        for g2 in _link_geoms(scene, pair.body2, pair.link2):
            found = odemesh.collide(g1, g2)
            if max_per_geom_pair > 0:
                found = found[:max_per_geom_pair]
            rows.extend(c.getContactGeomParams()[:3] for c in found)
    if not rows:
        return None
    return PairContacts(
        pair,
        np.array([r[0] for r in rows], dtype=np.float64),
        np.array([r[1] for r in rows], dtype=np.float64),
        np.array([r[2] for r in rows], dtype=np.float64),
    )


def contacts(scene: PosedScene, pairs: dict[LinkPair, float], max_per_geom_pair: int = 0) -> list[PairContacts]:
    out = []
    near = scene.near_pairs(pairs)
    place_bodies(scene, near)
    for pair in near:
        found = pair_contacts(scene, pair, max_per_geom_pair)
        if found is not None:
            out.append(found)
    return out


def pair_touches(scene: PosedScene, pair: LinkPair) -> bool:
    """Whether ODE finds any contact between the two links (placed; stops at the first)."""
    for g1 in _link_geoms(scene, pair.body1, pair.link1):
        for g2 in _link_geoms(scene, pair.body2, pair.link2):
            if odemesh.collide(g1, g2):
                return True
    return False
