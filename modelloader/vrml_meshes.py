"""Triangle meshes from VRML geometry: the polygon nodes (IndexedFaceSet, ElevationGrid,
Extrusion), and the primitives for when a primitive cannot stay one (a non-uniform scale).

Each function returns ``(vertices (N, 3) float64, triangles (M, 3) int32)`` in the geometry's
own frame, counter-clockwise seen from outside, and raises :class:`GeometryError` with a
readable message for data that does not describe a mesh.
"""

from __future__ import annotations

import math

import numpy as np

Mesh = tuple[np.ndarray, np.ndarray]

# An Extrusion's vertex count is a product of two lists: a small file could ask for gigabytes.
MAX_SWEEP_VERTICES = 5_000_000


class GeometryError(ValueError):
    pass


def polygons_to_triangles(index: np.ndarray, vertex_count: int, *, ccw: bool = True) -> np.ndarray:
    """Fan-triangulate ``coordIndex`` (polygons separated by -1); polygons of < 3 corners are dropped."""
    if index.size == 0:
        return np.zeros((0, 3), dtype=np.int32)
    if not np.all(np.isfinite(index)) or np.any(index != np.round(index)):
        raise GeometryError("coordIndex holds a value that is not an integer")
    idx = index.astype(np.int64)
    if np.any(idx < -1):
        raise GeometryError(f"coordIndex holds {int(idx.min())}: only -1 (end of face) may be negative")
    if np.any(idx >= vertex_count):
        raise GeometryError(f"coordIndex refers to vertex {int(idx.max())} but there are only {vertex_count}")
    ends = np.flatnonzero(idx < 0)
    if idx[-1] >= 0:
        ends = np.append(ends, idx.size)
    starts = np.concatenate(([0], ends[:-1] + 1))
    counts = ends - starts
    keep = counts >= 3
    starts, counts = starts[keep], counts[keep]
    per_face = counts - 2
    total = int(per_face.sum())
    if total == 0:
        return np.zeros((0, 3), dtype=np.int32)
    face = np.repeat(np.arange(len(starts)), per_face)
    corner = np.arange(total) - np.repeat(np.cumsum(per_face) - per_face, per_face)
    first = starts[face]
    tris = np.stack([idx[first], idx[first + 1 + corner], idx[first + 2 + corner]], axis=1)
    if not ccw:
        tris = tris[:, [0, 2, 1]]
    return tris.astype(np.int32)


def ear_clip(points: np.ndarray, face: list[int]) -> list[tuple[int, int, int]]:
    """Triangles of one simple polygon (convex or not) by ear clipping in its own plane.

    Falls back to a fan when the polygon is degenerate or self-intersecting (no ear found).
    """
    corners = np.asarray(points[face], dtype=np.float64)
    normal = np.zeros(3)
    for a, b in zip(corners, np.roll(corners, -1, axis=0), strict=True):  # Newell's method
        normal += np.cross(a, b)
    if np.linalg.norm(normal) < 1e-15:
        return [(face[0], face[i], face[i + 1]) for i in range(1, len(face) - 1)]
    drop = int(np.argmax(np.abs(normal)))
    flat = np.delete(corners, drop, axis=1)
    if normal[drop] < 0:  # keep the polygon counter-clockwise in the projection
        flat[:, [0, 1]] = flat[:, [1, 0]]
    remaining = list(range(len(face)))
    triangles = []
    while len(remaining) > 3:
        for k in range(len(remaining)):
            i, j, m = remaining[k - 1], remaining[k], remaining[(k + 1) % len(remaining)]
            if _is_ear(flat, i, j, m, remaining):
                triangles.append((face[i], face[j], face[m]))
                remaining.pop(k)
                break
        else:
            break
    first = face[remaining[0]]
    triangles += [(first, face[remaining[i]], face[remaining[i + 1]]) for i in range(1, len(remaining) - 1)]
    return triangles


def _is_ear(flat: np.ndarray, i: int, j: int, m: int, remaining: list[int]) -> bool:
    a, b, c = flat[i], flat[j], flat[m]
    if (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) <= 0:
        return False  # a reflex corner
    for other in remaining:
        if other in (i, j, m):
            continue
        p = flat[other]
        d1 = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
        d2 = (c[0] - b[0]) * (p[1] - b[1]) - (c[1] - b[1]) * (p[0] - b[0])
        d3 = (a[0] - c[0]) * (p[1] - c[1]) - (a[1] - c[1]) * (p[0] - c[0])
        if d1 >= 0 and d2 >= 0 and d3 >= 0:
            return False
    return True


def concave_polygons_to_triangles(index: np.ndarray, points: np.ndarray, *, ccw: bool = True) -> np.ndarray:
    """Like :func:`polygons_to_triangles` for faces that may be concave (``convex FALSE``)."""
    fan = polygons_to_triangles(index, len(points), ccw=True)  # validates the indices
    if fan.size == 0:
        return fan
    idx = index.astype(np.int64)
    triangles: list[tuple[int, int, int]] = []
    face: list[int] = []
    for value in [*idx.tolist(), -1]:
        if value >= 0:
            face.append(value)
            continue
        if len(face) == 3:
            triangles.append((face[0], face[1], face[2]))
        elif len(face) > 3:
            triangles += ear_clip(points, face)
        face = []
    tris = np.array(triangles, dtype=np.int32).reshape(-1, 3)
    return tris if ccw else tris[:, [0, 2, 1]]


def elevation_grid(heights: np.ndarray, nx: int, nz: int, dx: float, dz: float, *, ccw: bool = True) -> Mesh:
    if nx < 0 or nz < 0:
        raise GeometryError(f"negative dimensions {nx} x {nz}")
    if heights.size != nx * nz:
        raise GeometryError(f"{nx} x {nz} grid needs {nx * nz} heights, got {heights.size}")
    if nx < 2 or nz < 2:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int32)
    i, j = np.meshgrid(np.arange(nx), np.arange(nz))
    vertices = np.stack([i.ravel() * dx, heights, j.ravel() * dz], axis=1)
    ci, cj = np.meshgrid(np.arange(nx - 1), np.arange(nz - 1))
    v00 = (cj * nx + ci).ravel()
    v10, v01, v11 = v00 + 1, v00 + nx, v00 + nx + 1
    tris = np.concatenate([np.stack([v00, v01, v11], 1), np.stack([v00, v11, v10], 1)])
    if not ccw:
        tris = tris[:, [0, 2, 1]]
    return vertices.astype(np.float64), tris.astype(np.int32)


def extrusion(
    cross: np.ndarray,
    spine: np.ndarray,
    scales: np.ndarray,
    orientations: list[np.ndarray],
    *,
    begin_cap: bool = True,
    end_cap: bool = True,
    ccw: bool = True,
) -> Mesh:
    """VRML Extrusion: ``cross`` (K, 2) in the XZ plane swept along ``spine`` (S, 3)."""
    if len(cross) < 2 or len(spine) < 2:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int32)
    if len(cross) * len(spine) > MAX_SWEEP_VERTICES:
        raise GeometryError(
            f"{len(cross)} cross-section points x {len(spine)} spine points is more than {MAX_SWEEP_VERTICES} vertices"
        )
    frames = _spine_frames(spine)
    k, s = len(cross), len(spine)
    rings = []
    for i in range(s):
        sx, sz = scales[min(i, len(scales) - 1)]
        local = np.stack([cross[:, 0] * sx, np.zeros(k), cross[:, 1] * sz], axis=1)
        local = local @ orientations[min(i, len(orientations) - 1)].T
        rings.append(local @ frames[i].T + spine[i])
    vertices = np.concatenate(rings)
    ring, seg = np.meshgrid(np.arange(s - 1), np.arange(k - 1), indexing="ij")
    a = (ring * k + seg).ravel()
    b, c, d = a + 1, a + k + 1, a + k
    tris = [np.stack([a, c, b], 1), np.stack([a, d, c], 1)]
    closed_cross = np.allclose(cross[0], cross[-1])
    corners = k - 1 if closed_cross else k
    if begin_cap and corners >= 3:
        fan = np.arange(1, corners - 1)
        tris.append(np.stack([np.zeros_like(fan), fan, fan + 1], 1))
    if end_cap and corners >= 3:
        base = (s - 1) * k
        fan = np.arange(1, corners - 1)
        tris.append(np.stack([np.full_like(fan, base), base + fan + 1, base + fan], 1))
    triangles = np.concatenate(tris).astype(np.int32)
    if not ccw:
        triangles = triangles[:, [0, 2, 1]]
    return vertices, triangles


def _spine_frames(spine: np.ndarray) -> list[np.ndarray]:
    """The spine-aligned cross-section planes (columns X, Y, Z) of VRML97 6.18."""
    n = len(spine)
    closed = np.allclose(spine[0], spine[-1])
    ys, zs = [], []
    for i in range(n):
        if 0 < i < n - 1:
            y = spine[i + 1] - spine[i - 1]
            z = np.cross(spine[i + 1] - spine[i], spine[i - 1] - spine[i])
        elif closed and n > 2:
            y = spine[1] - spine[n - 2]
            z = np.cross(spine[1] - spine[0], spine[n - 2] - spine[0])
        elif i == 0:
            y = spine[1] - spine[0]
            z = np.cross(spine[2] - spine[1], spine[0] - spine[1]) if n > 2 else np.zeros(3)
        else:
            y = spine[n - 1] - spine[n - 2]
            z = np.cross(spine[n - 1] - spine[n - 2], spine[n - 3] - spine[n - 2]) if n > 2 else np.zeros(3)
        ys.append(y)
        zs.append(z)
    ys = [_unit(y) for y in ys]
    if all(np.linalg.norm(z) < 1e-12 for z in zs):
        return [_frame_for_straight(y) for y in ys]
    frames, previous = [], None
    for y, z in zip(ys, zs, strict=True):
        z = _unit(z) if np.linalg.norm(z) >= 1e-12 else previous
        if z is None:
            z = next(_unit(q) for q in zs if np.linalg.norm(q) >= 1e-12)
        if previous is not None and np.dot(z, previous) < 0:
            z = -z
        previous = z
        y = y if np.linalg.norm(y) > 0 else np.array([0.0, 1.0, 0.0])
        x = _unit(np.cross(y, z))
        frames.append(np.stack([x, y, np.cross(x, y)], axis=1))
    return frames


def _frame_for_straight(y: np.ndarray) -> np.ndarray:
    """The rotation taking +Y to ``y`` (a straight spine has no curvature to fix Z)."""
    if np.linalg.norm(y) == 0:
        return np.eye(3)
    up = np.array([0.0, 1.0, 0.0])
    axis = np.cross(up, y)
    sin, cos = np.linalg.norm(axis), float(np.dot(up, y))
    if sin < 1e-12:
        return np.eye(3) if cos > 0 else np.diag([1.0, -1.0, -1.0])
    axis = axis / sin
    angle = math.atan2(sin, cos)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


def _unit(v: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v


# --- primitives as meshes ---


def box_mesh(size: np.ndarray) -> Mesh:
    hx, hy, hz = np.asarray(size, dtype=np.float64) / 2.0
    vertices = np.array([[x, y, z] for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)])
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = [(a, b, c) for a, b, c, d in quads] + [(a, c, d) for a, b, c, d in quads]
    return vertices, np.array(tris, dtype=np.int32)


def sphere_mesh(radius: float, segments: int = 16, rings: int = 8) -> Mesh:
    vertices = [[0.0, radius, 0.0]]
    for r in range(1, rings):
        phi = math.pi * r / rings
        for s in range(segments):
            theta = 2 * math.pi * s / segments
            vertices.append(
                [
                    radius * math.sin(phi) * math.sin(theta),
                    radius * math.cos(phi),
                    radius * math.sin(phi) * math.cos(theta),
                ]
            )
    vertices.append([0.0, -radius, 0.0])
    bottom = len(vertices) - 1
    tris = []
    for s in range(segments):
        tris.append((0, 1 + s, 1 + (s + 1) % segments))
        last = 1 + (rings - 2) * segments
        tris.append((bottom, last + (s + 1) % segments, last + s))
    for r in range(rings - 2):
        for s in range(segments):
            a, b = 1 + r * segments + s, 1 + r * segments + (s + 1) % segments
            tris += [(a, a + segments, b), (b, a + segments, b + segments)]
    return np.array(vertices), np.array(tris, dtype=np.int32)


def cylinder_mesh(bottom_radius: float, top_radius: float, height: float, segments: int = 24) -> Mesh:
    """A cylinder (or a cone with ``top_radius`` 0) along Y, centred on the origin."""
    angles = 2 * math.pi * np.arange(segments) / segments
    ring = np.stack([np.sin(angles), np.zeros(segments), np.cos(angles)], axis=1)
    low = ring * bottom_radius + [0.0, -height / 2, 0.0]
    high = ring * top_radius + [0.0, height / 2, 0.0]
    centres = np.array([[0.0, -height / 2, 0.0], [0.0, height / 2, 0.0]])
    vertices = np.concatenate([low, high, centres])
    nxt = (np.arange(segments) + 1) % segments
    cur = np.arange(segments)
    c_low, c_high = 2 * segments, 2 * segments + 1
    tris = np.concatenate(
        [
            np.stack([cur, nxt, nxt + segments], 1),
            np.stack([cur, nxt + segments, cur + segments], 1),
            np.stack([np.full(segments, c_low), nxt, cur], 1),
            np.stack([np.full(segments, c_high), cur + segments, nxt + segments], 1),
        ]
    )
    return vertices, tris.astype(np.int32)
