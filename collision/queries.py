"""The collision service's answers, in wire form: plain dicts of names, numbers and numpy arrays.

Each function takes the scene (poses already applied) and the checked arguments of one query; the
scene's geometry (ODE's or MuJoCo's: hrpsim.collision.geometry) finds contacts and casts rays, fcl
measures separations.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np

from hrpsim.collision.fclgeom import link_separation
from hrpsim.collision.scene import LinkPair, Scene
from hrpsim.geometry_queries import scan_directions


def contacts(scene: Scene, pairs: dict[LinkPair, float], max_per_geom_pair: int = 0) -> list[dict[str, Any]]:
    """Per touching pair: ``position`` (k, 3), ``normal`` (k, 3, into link1), ``depth`` (k,)."""
    return [
        {**scene.describe(found.pair), "position": found.position, "normal": found.normal, "depth": found.depth}
        for found in scene.geometry.contacts(scene, pairs, max_per_geom_pair)
    ]


def intersecting(scene: Scene, pairs: dict[LinkPair, float]) -> list[dict[str, Any]]:
    """The pairs that overlap, or (with a tolerance) come closer than their tolerance."""
    out = []
    near = scene.near_pairs(pairs, margin=pairs)
    scene.geometry.place(scene, near)
    for pair in near:
        tolerance = pairs[pair]
        if scene.geometry.touches(scene, pair) or (tolerance > 0 and _separation(scene, pair) <= tolerance):
            out.append(scene.describe(pair))
    return out


def _separation(scene: Scene, pair: LinkPair) -> float:
    sep = _link_separation(scene, pair)
    return np.inf if sep is None else sep.distance


def _link_separation(scene: Scene, pair: LinkPair):
    first, second = scene.bodies[pair.body1], scene.bodies[pair.body2]
    return link_separation(
        first.fcl_links[pair.link1], first.poses[pair.link1], second.fcl_links[pair.link2], second.poses[pair.link2]
    )


def distances(scene: Scene, pairs: dict[LinkPair, float]) -> list[dict[str, Any]]:
    """Per pair (links without shapes left out): ``distance`` and a closest point on each link.

    Overlapping links get minus the depth of their deepest contact (the penetration the contacts
    report), both points at that contact; 0 and a point in the overlap when the scene's geometry
    sees no contact there (it differs from fcl's: ODE and MuJoCo make a cone a cylinder).
    """
    out = []
    for pair in pairs:
        sep = _link_separation(scene, pair)
        if sep is None:
            continue
        distance, point1, point2 = sep.distance, sep.point1, sep.point2
        if sep.overlapping:
            scene.geometry.place(scene, [pair])
            found = scene.geometry.pair_contacts(scene, pair)
            if found is not None:
                deepest = int(np.argmax(found.depth))
                distance = -float(found.depth[deepest])
                point1 = point2 = found.position[deepest]
        out.append({**scene.describe(pair), "distance": distance, "point1": point1, "point2": point2})
    return out


def ray(
    scene: Scene, origin: np.ndarray, direction: np.ndarray, max_distance: float, bodies: list[str] | None
) -> dict[str, Any]:
    hits = scene.geometry.cast(scene, origin[None, :], direction[None, :], max_distance, bodies, ())
    hit = bool(np.isfinite(hits.distance[0]))
    return {
        "hit": hit,
        "distance": float(hits.distance[0]),
        "body": hits.body[0],
        "link": hits.link[0],
        "point": hits.point[0],
        "normal": hits.normal[0],
    }


def scan(
    scene: Scene,
    pose: np.ndarray,
    angle_range: float,
    step: float,
    max_distance: float,
    bodies: list[str] | None,
    skip_links: Collection[tuple[str, int]] = (),
) -> dict[str, Any]:
    """A range sensor's scan from ``pose`` (4x4, world); ``skip_links``: (body, link index) pairs the
    beams pass through (the sensor's own link)."""
    angles, local = scan_directions(angle_range, step)
    directions = local @ pose[:3, :3].T
    origins = np.repeat(pose[None, :3, 3], len(angles), axis=0)
    hits = scene.geometry.cast(scene, origins, directions, max_distance, bodies, skip_links)
    return {"angles": angles, "distances": hits.distance, "points": hits.point}
