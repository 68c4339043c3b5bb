"""Range sensors' rays through MuJoCo's own ray casts (``mj_multiRay``) on the running model.

Every beam of a scan leaves one point, which is what ``mj_multiRay`` casts: one call per scan,
against the geoms as the last step left them. MuJoCo's ray casts pass through fully transparent
geoms (alpha 0 without a material) as if they were not there; a range sensor sees collision shapes
whatever their colour, so such geoms get an alpha too small to see before the first cast. A mesh
is hit on its triangles, not on the convex hull it collides as.
"""

from __future__ import annotations

import mujoco
import numpy as np

# The alpha that makes a fully transparent geom count for MuJoCo's ray casts, and that no renderer shows.
NEARLY_TRANSPARENT = 1e-6


class RayCaster:
    """Casts on one engine's model; notices when the engine compiled a new one."""

    def __init__(self) -> None:
        self._prepared: mujoco.MjModel | None = None

    def distances(
        self,
        m: mujoco.MjModel,
        d: mujoco.MjData,
        origin: np.ndarray,
        directions: np.ndarray,
        max_distance: float,
        exclude_body: int,
    ) -> np.ndarray:
        """Per unit direction (n, 3), the distance from ``origin`` to the nearest geom of any body but
        ``exclude_body``; inf where nothing lies within ``max_distance``."""
        if m is not self._prepared:
            _make_transparent_geoms_solid(m)
            self._prepared = m
        count = len(directions)
        hit_geom = np.empty(count, dtype=np.int32)
        distance = np.empty(count)
        vectors = np.ascontiguousarray(directions, dtype=np.float64).reshape(-1)
        origin = np.ascontiguousarray(origin, dtype=np.float64)
        mujoco.mj_multiRay(
            m, d, origin, vectors, None, True, exclude_body, hit_geom, distance, None, count, max_distance
        )
        distance[(hit_geom < 0) | (distance > max_distance)] = np.inf
        return distance


def _make_transparent_geoms_solid(m: mujoco.MjModel) -> None:
    alpha = m.geom_rgba[:, 3]
    alpha[(m.geom_matid < 0) & (alpha == 0)] = NEARLY_TRANSPARENT
