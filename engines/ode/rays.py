"""Ray casts and range scans against the bodies at their current poses.

Primitives are hit through ODE ray geoms on the same geoms the contacts use. Meshes are hit on
their true triangles (Möller–Trumbore, vectorised over rays and triangles): ODE here may only
know a mesh's bounding box, and a range sensor must see the real surface.

A scan follows OpenHRP's RangeSensor: in the sensor frame the front is -Z and the scan lies in the
X-Z plane; the beam at angle ``a`` (rotation about the sensor's +Y) points along
(-sin a, 0, -cos a). Angles run from -range/2 to +range/2 in multiples of ``step`` from 0.
A ray that hits nothing within ``max_distance`` reports ``inf``.
"""

from __future__ import annotations

import math
from collections.abc import Collection

import numpy as np
import ode

from hrpsim.bodyinfo import Shape
from hrpsim.engines.ode.scene import geometry_of
from hrpsim.geometry_queries import Hits, PosedScene

TRIANGLE_CHUNK = 200_000  # rays x triangles evaluated at once; bounds memory to a few MB


def cast(
    scene: PosedScene,
    origins: np.ndarray,
    directions: np.ndarray,
    max_distance: float,
    bodies: list[str] | None = None,
    skip_links: Collection[tuple[str, int]] = (),
) -> Hits:
    """The nearest hit of each ray (origins and unit directions (R, 3), world frame); ``skip_links``
    names (body, link index) pairs the rays pass through (a sensor's own link, say)."""
    hits = Hits.empty(len(origins))
    for name in bodies if bodies is not None else list(scene.bodies):
        entry = scene.body(name)
        geometry = geometry_of(entry)
        centres = entry.world_bound_centers()
        for index, link in enumerate(entry.body.links):
            if (name, index) in skip_links:
                continue
            rays = _rays_near(origins, directions, centres[index], entry.bound_radii[index], max_distance)
            if len(rays) == 0:
                continue
            _cast_link(
                hits,
                rays,
                origins,
                directions,
                max_distance,
                entry.poses[index],
                geometry.links[index],
                name,
                link.name,
            )
    return hits


def _rays_near(
    origins: np.ndarray, directions: np.ndarray, centre: np.ndarray, radius: float, max_distance: float
) -> np.ndarray:
    """Indices of the rays whose segment passes within ``radius`` of ``centre``."""
    if radius < 0:
        return np.zeros(0, dtype=int)
    if math.isinf(radius):
        return np.arange(len(origins))
    along = np.clip(np.einsum("ij,ij->i", centre - origins, directions), 0.0, max_distance)
    closest = origins + directions * along[:, None]
    return np.flatnonzero(np.linalg.norm(closest - centre, axis=1) <= radius)


def _cast_link(
    hits: Hits,
    rays: np.ndarray,
    origins: np.ndarray,
    directions: np.ndarray,
    max_distance: float,
    link_pose: np.ndarray,
    ode_link,
    body: str,
    link: str,
) -> None:
    for geom, shape in zip(ode_link.geoms, ode_link.shapes, strict=True):
        if shape.kind == "mesh":
            _cast_mesh(hits, rays, origins, directions, max_distance, link_pose, shape, body, link)
            continue
        probe = ode.GeomRay(None, float(max_distance))
        # plain floats once per link: converting each ray's numpy row costs more than ODE's test
        for r, start, direction in zip(rays.tolist(), origins[rays].tolist(), directions[rays].tolist(), strict=True):
            probe.set(start, direction)
            for contact in ode.collide(probe, geom):
                point, normal, depth = contact.getContactGeomParams()[:3]
                # With the ray first, ODE's normal is the hit surface's outward normal.
                hits.offer(r, float(depth), body, link, np.array(point), np.array(normal))


def _cast_mesh(
    hits: Hits,
    rays: np.ndarray,
    origins: np.ndarray,
    directions: np.ndarray,
    max_distance: float,
    link_pose: np.ndarray,
    shape: Shape,
    body: str,
    link: str,
) -> None:
    rotation = link_pose[:3, :3] @ np.asarray(shape.rotation, dtype=np.float64)
    translation = link_pose[:3, :3] @ np.asarray(shape.translation, dtype=np.float64) + link_pose[:3, 3]
    local_origins = (origins[rays] - translation) @ rotation  # R^T (o - t), row-wise
    local_dirs = directions[rays] @ rotation
    triangles = np.asarray(shape.vertices, dtype=np.float64)[np.asarray(shape.triangles, dtype=np.int64)]
    distance, tri = ray_triangles(local_origins, local_dirs, triangles)
    for k, r in enumerate(rays):
        if tri[k] < 0 or distance[k] > max_distance:
            continue
        a, b, c = triangles[tri[k]]
        normal = np.cross(b - a, c - a)
        normal /= np.linalg.norm(normal)
        if normal @ local_dirs[k] > 0:
            normal = -normal
        hits.offer(int(r), float(distance[k]), body, link, origins[r] + directions[r] * distance[k], rotation @ normal)


def ray_triangles(origins: np.ndarray, directions: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest hit of each ray on any of the triangles (T, 3, 3): (distance, triangle or -1)."""
    n = len(origins)
    best = np.full(n, np.inf)
    which = np.full(n, -1)
    if len(triangles) == 0 or n == 0:
        return best, which
    chunk = max(1, TRIANGLE_CHUNK // n)
    for start in range(0, len(triangles), chunk):
        part = triangles[start : start + chunk]
        t = _moller_trumbore(origins, directions, part)  # (R, T)
        local = np.argmin(t, axis=1)
        nearest = t[np.arange(n), local]
        better = nearest < best
        best[better] = nearest[better]
        which[better] = start + local[better]
    return best, which


def _moller_trumbore(origins: np.ndarray, directions: np.ndarray, tri: np.ndarray) -> np.ndarray:
    edge1 = tri[:, 1] - tri[:, 0]
    edge2 = tri[:, 2] - tri[:, 0]
    p = np.cross(directions[:, None, :], edge2[None, :, :])  # (R, T, 3)
    det = np.einsum("tk,rtk->rt", edge1, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / det
        s = origins[:, None, :] - tri[None, :, 0]
        u = np.einsum("rtk,rtk->rt", s, p) * inv
        q = np.cross(s, edge1[None, :, :])
        v = np.einsum("rk,rtk->rt", directions, q) * inv
        t = np.einsum("tk,rtk->rt", edge2, q) * inv
        ok = (np.abs(det) > 1e-12) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
    return np.where(ok, t, np.inf)
