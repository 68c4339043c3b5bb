"""What the collision service knows: bodies, their link poses, and the pairs to check.

Every name that comes over the wire is checked here, so each bad request fails with a message
naming the body, link or field: an unknown body or link is :class:`NotFound`; a malformed pose,
a non-finite number or a pair that would make a body collide with itself at an adjacent link is
:class:`RequestError`.

A pair names a link or, with ``""`` / ``None``, all links of a body. A body against itself with
"all" expands to its non-adjacent link pairs (minus the body's own collision exclusions); an
explicit adjacent or identical link pair is refused.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from hrpsim.bodyinfo import Body, Shape
from hrpsim.collision.fclgeom import FclShape, link_shapes
from hrpsim.collision.geometry import Geometry, collision_geometry
from hrpsim.collision.kinematics import link_poses
from hrpsim.conventions import excluded_link_pairs
from hrpsim.errors import NotFound, RequestError

ROTATION_TOLERANCE = 1e-6  # how far R R^T may be from I in a link pose


class LinkPair(NamedTuple):
    body1: str
    link1: int
    body2: str
    link2: int


@dataclass
class SceneBody:
    name: str
    body: Body
    fcl_links: list[list[FclShape]]
    poses: np.ndarray  # (n_links, 4, 4) world poses of the link frames
    bound_centers: np.ndarray  # (n_links, 3) in the link frame
    bound_radii: np.ndarray  # (n_links,), inf for a plane, -1 for a link without shapes
    adjacent: set[tuple[int, int]]
    excluded: set[tuple[int, int]]
    extra: dict[str, Any] = field(default_factory=dict)  # per-engine geometry (ODE geoms ...)

    @property
    def link_names(self) -> list[str]:
        return [lk.name for lk in self.body.links]

    def link_index(self, link: str) -> int:
        for i, lk in enumerate(self.body.links):
            if lk.name == link:
                return i
        raise NotFound(f"body {self.name!r} has no link {link!r} (links: {', '.join(self.link_names)})")

    def world_bound_centers(self) -> np.ndarray:
        return np.einsum("nij,nj->ni", self.poses[:, :3, :3], self.bound_centers) + self.poses[:, :3, 3]


def shape_bound(shape: Shape) -> tuple[np.ndarray, float]:
    """A sphere (centre in the link frame, radius) holding the shape."""
    centre = np.asarray(shape.translation, dtype=np.float64)
    kind = shape.kind
    if kind == "box":
        return centre, float(np.linalg.norm(shape.size)) / 2
    if kind == "sphere":
        return centre, float(shape.radius)
    if kind in ("cylinder", "cone"):
        return centre, math.hypot(shape.radius, shape.height / 2)
    if kind == "capsule":
        return centre, shape.height / 2 + shape.radius
    if kind == "plane":
        return centre, math.inf
    vertices = np.asarray(shape.vertices, dtype=np.float64)
    if len(vertices) == 0:
        return centre, 0.0
    local_mid = (vertices.min(axis=0) + vertices.max(axis=0)) / 2
    radius = float(np.max(np.linalg.norm(vertices - local_mid, axis=1)))
    return centre + np.asarray(shape.rotation) @ local_mid, radius


def link_bound(shapes: list[Shape]) -> tuple[np.ndarray, float]:
    if not shapes:
        return np.zeros(3), -1.0
    bounds = [shape_bound(s) for s in shapes]
    centre = np.mean([c for c, _ in bounds], axis=0)
    return centre, max(float(np.linalg.norm(c - centre)) + r for c, r in bounds)


def usable_shapes(shapes: list[Shape]) -> list[Shape]:
    """Shapes that have volume or surface; an empty mesh is dropped."""
    return [s for s in shapes if s.kind != "mesh" or (len(s.vertices) and len(s.triangles))]


class Scene:
    def __init__(self, geometry: Geometry | None = None) -> None:
        """``geometry``: the library that answers the queries (default: ODE where installed, else MuJoCo)."""
        self.geometry = geometry or collision_geometry()
        self.bodies: dict[str, SceneBody] = {}
        self.pairs: dict[LinkPair, float] = {}  # -> tolerance
        self.extra: dict[str, Any] = {}  # what the library builds of the whole scene
        self._layout_cache: _PairLayout | None = None

    # --- bodies ---

    def add_body(self, name: str, body: Body) -> SceneBody:
        if not isinstance(name, str) or not name:
            raise RequestError("add_body: 'name' must be a non-empty string")
        if name in self.bodies:
            raise RequestError(f"add_body: a body named {name!r} is already here; remove_body it first")
        links = [usable_shapes(lk.shapes) for lk in body.links]
        bounds = [link_bound(s) for s in links]
        entry = SceneBody(
            name=name,
            body=body,
            fcl_links=[link_shapes(s) for s in links],
            poses=link_poses(body),
            bound_centers=np.array([c for c, _ in bounds]).reshape(-1, 3),
            bound_radii=np.array([r for _, r in bounds], dtype=np.float64),
            adjacent=_adjacent_links(body),
            excluded=excluded_link_pairs(body),
        )
        self.bodies[name] = entry
        return entry

    def remove_body(self, name: str) -> int:
        """Forget a body and every pair that names it; returns the number of pairs dropped."""
        self.body(name)
        del self.bodies[name]
        gone = [p for p in self.pairs if name in (p.body1, p.body2)]
        for p in gone:
            del self.pairs[p]
        return len(gone)

    def body(self, name: Any) -> SceneBody:
        entry = self.bodies.get(name) if isinstance(name, str) else None
        if entry is None:
            known = ", ".join(sorted(self.bodies)) or "none"
            raise NotFound(f"no body {name!r} in the collision service (bodies: {known})")
        return entry

    # --- poses ---

    def set_poses(self, poses: Any) -> None:
        """``{body: (n_links, 4, 4) array}``; all are checked before any is stored."""
        if poses is None:
            return
        if not isinstance(poses, dict):
            raise RequestError(f"poses must be a map body name -> (n_links, 4, 4) array, got {type(poses).__name__}")
        checked = {name: self._checked_pose(name, value) for name, value in poses.items()}
        for name, value in checked.items():
            self.bodies[name].poses = value

    def _checked_pose(self, name: str, value: Any) -> np.ndarray:
        entry = self.body(name)
        n = len(entry.body.links)
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise RequestError(f"poses[{name!r}]: not an array of numbers") from None
        if arr.shape != (n, 4, 4):
            raise RequestError(
                f"poses[{name!r}]: body {name!r} has {n} links, so its poses must have shape "
                f"({n}, 4, 4), got {arr.shape}"
            )
        bad = ~np.isfinite(arr).all(axis=(1, 2))
        if bad.any():
            links = [entry.body.links[i].name for i in np.flatnonzero(bad)]
            raise RequestError(f"poses[{name!r}]: non-finite values for link(s) {', '.join(links)}")
        rotations = arr[:, :3, :3]
        error = np.abs(np.einsum("nij,nkj->nik", rotations, rotations) - np.eye(3)).max(axis=(1, 2))
        bad = (error > ROTATION_TOLERANCE) | (np.linalg.det(rotations) < 0)
        if bad.any():
            links = [entry.body.links[i].name for i in np.flatnonzero(bad)]
            raise RequestError(f"poses[{name!r}]: the 3x3 block of link(s) {', '.join(links)} is not a rotation")
        return arr.copy()

    # --- pairs ---

    def expand_pair(self, body1: Any, link1: Any, body2: Any, link2: Any) -> list[LinkPair]:
        first, second = self.body(body1), self.body(body2)
        links1 = self._links(first, link1)
        links2 = self._links(second, link2)
        if first is not second:
            return [LinkPair(first.name, i, second.name, j) for i in links1 for j in links2]
        explicit = not _all_links(link1) and not _all_links(link2)
        if explicit:
            self._check_self_pair(first, links1[0], links2[0])
        seen: set[tuple[int, int]] = set()
        out = []
        for i in links1:
            for j in links2:
                key = (min(i, j), max(i, j))
                if i == j or key in seen or key in first.adjacent or key in first.excluded:
                    continue
                seen.add(key)
                out.append(LinkPair(first.name, key[0], first.name, key[1]))
        return out

    def _links(self, entry: SceneBody, link: Any) -> list[int]:
        if _all_links(link):
            return list(range(len(entry.body.links)))
        if not isinstance(link, str):
            raise RequestError(f"a link must be a link name or '' for all links of {entry.name!r}, got {link!r}")
        return [entry.link_index(link)]

    def _check_self_pair(self, entry: SceneBody, i: int, j: int) -> None:
        names = entry.link_names
        if i == j:
            raise RequestError(f"pair {entry.name}/{names[i]} with itself: a link cannot collide with itself")
        if (min(i, j), max(i, j)) in entry.adjacent:
            raise RequestError(
                f"pair {entry.name}/{names[i]} - {entry.name}/{names[j]}: adjacent links of one "
                "body (joined by a joint) cannot be a collision pair"
            )

    def add_pair(self, body1: Any, link1: Any, body2: Any, link2: Any, tolerance: Any = 0.0) -> list[LinkPair]:
        tol = checked_tolerance(tolerance)
        pairs = self.expand_pair(body1, link1, body2, link2)
        for p in pairs:
            self.pairs[p] = tol
        return pairs

    def remove_pair(self, body1: Any, link1: Any, body2: Any, link2: Any) -> int:
        removed = 0
        for p in self.expand_pair(body1, link1, body2, link2):
            for key in (p, LinkPair(p.body2, p.link2, p.body1, p.link1)):
                if self.pairs.pop(key, None) is not None:
                    removed += 1
        return removed

    def pairs_for(self, given: Any) -> dict[LinkPair, float]:
        """The defined pairs, or the pairs a query names (each a dict body1, link1, body2, link2[, tolerance])."""
        if given is None:
            return dict(self.pairs)
        if not isinstance(given, list | tuple):
            raise RequestError(f"pairs must be a list of {{body1, link1, body2, link2}} maps, got {given!r}")
        out: dict[LinkPair, float] = {}
        for k, spec in enumerate(given):
            if not isinstance(spec, dict) or "body1" not in spec or "body2" not in spec:
                raise RequestError(
                    f"pairs[{k}] must be a map with body1, body2 (and link1, link2: '' for all links), got {spec!r}"
                )
            unknown = set(spec) - {"body1", "link1", "body2", "link2", "tolerance"}
            if unknown:
                raise RequestError(f"pairs[{k}]: unknown field(s) {', '.join(sorted(map(str, unknown)))}")
            tol = checked_tolerance(spec.get("tolerance", 0.0))
            for p in self.expand_pair(spec["body1"], spec.get("link1"), spec["body2"], spec.get("link2")):
                out[p] = tol
        return out

    def describe(self, pair: LinkPair) -> dict[str, Any]:
        return {
            "body1": pair.body1,
            "link1": self.bodies[pair.body1].link_names[pair.link1],
            "body2": pair.body2,
            "link2": self.bodies[pair.body2].link_names[pair.link2],
        }

    # --- broad phase ---

    def near_pairs(self, pairs: Iterable[LinkPair], margin: dict[LinkPair, float] | None = None) -> list[LinkPair]:
        """The pairs whose bounding spheres come within their tolerance (links without shapes drop out)."""
        pairs = tuple(pairs)
        if not pairs:
            return []
        layout = self._layout(pairs)
        centres = {name: self.bodies[name].world_bound_centers() for name in layout.bodies}
        radii = {name: self.bodies[name].bound_radii for name in layout.bodies}
        c1, c2 = np.empty((len(pairs), 3)), np.empty((len(pairs), 3))
        r1, r2 = np.empty(len(pairs)), np.empty(len(pairs))
        for (b1, b2), (rows, i1, i2) in layout.groups.items():
            c1[rows], r1[rows] = centres[b1][i1], radii[b1][i1]
            c2[rows], r2[rows] = centres[b2][i2], radii[b2][i2]
        reach = r1 + r2 + 1e-9
        if margin:
            reach += np.array([margin.get(p, 0.0) for p in pairs])
        with np.errstate(invalid="ignore"):
            near = np.einsum("ij,ij->i", c1 - c2, c1 - c2) <= np.where(np.isinf(reach), np.inf, reach * reach)
        near &= (r1 >= 0) & (r2 >= 0)
        return [pairs[k] for k in np.flatnonzero(near)]

    def _layout(self, pairs: tuple[LinkPair, ...]) -> _PairLayout:
        """Index arrays per body pair; the last one is kept, since a simulator asks for the same pairs each tick."""
        cached = self._layout_cache
        if cached is not None and cached.pairs == pairs:
            return cached
        grouped: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
        for row, p in enumerate(pairs):
            grouped.setdefault((p.body1, p.body2), []).append((row, p.link1, p.link2))
        groups = {
            key: tuple(np.array(col, dtype=np.intp) for col in zip(*items, strict=True))
            for key, items in grouped.items()
        }
        layout = _PairLayout(pairs, groups, {b for key in groups for b in key})
        self._layout_cache = layout
        return layout


@dataclass
class _PairLayout:
    pairs: tuple[LinkPair, ...]
    groups: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]]  # rows, links of body1, of body2
    bodies: set[str]


def _all_links(link: Any) -> bool:
    """Whether a pair's link field means every link of the body ('' or None)."""
    return link is None or (isinstance(link, str) and link == "")


def checked_tolerance(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise RequestError(f"tolerance must be a finite number >= 0 (metres), got {value!r}")
    return float(value)


def _adjacent_links(body: Body) -> set[tuple[int, int]]:
    return {(min(i, lk.parent), max(i, lk.parent)) for i, lk in enumerate(body.links) if lk.parent >= 0}
