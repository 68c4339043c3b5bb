"""Fewer contacts between two links: the few that span the patch, in place of every point found.

A sole made of several boxes, or a mesh sole, touches a floor at many points (4 per box, up to 32 per
mesh), and ODE's direct solver (``dWorldStep``) costs about the cube of its constraint rows: three
per contact. Rigid contacts along one normal hold a body up by the polygon they span, not by their
number, so each pair of links keeps :data:`KEEP` contacts per normal direction: the deepest (so that
penetration is still corrected where it is largest), the one farthest from it, the one that spans
the largest triangle with those two, and the one that makes the largest quadrilateral with that
triangle (the polygon's area, as Bullet's contact manifolds keep it). Contacts whose normals differ
by more than :data:`NORMAL_ANGLE_DEG` (a foot on a step's edge and its face) are reduced apart.
The choice depends only on the points, so it is the same from run to run.
"""

from __future__ import annotations

import math

import numpy as np
import ode

KEEP = 4  # contacts kept per pair of links and normal direction
NORMAL_ANGLE_DEG = 30.0  # normals closer than this belong to one patch
_SAME_NORMAL = math.cos(math.radians(NORMAL_ANGLE_DEG))


def reduce_contacts(contacts: list[ode.Contact]) -> list[ode.Contact]:
    """The contacts of one pair of links, at most KEEP per normal direction, in their found order."""
    if len(contacts) <= KEEP:
        return contacts
    params = [contact.getContactGeomParams() for contact in contacts]
    positions = np.array([p[0] for p in params], dtype=np.float64)
    normals = np.array([p[1] for p in params], dtype=np.float64)
    depths = np.array([p[2] for p in params], dtype=np.float64)
    return [contacts[i] for i in kept_indices(positions, normals, depths)]


def kept_indices(positions: np.ndarray, normals: np.ndarray, depths: np.ndarray) -> list[int]:
    """Which of these contacts (rows) to keep: at most KEEP per normal direction, in ascending order."""
    if len(positions) <= KEEP:
        return list(range(len(positions)))
    kept: list[int] = []
    for group in _normal_groups(normals):
        plane = _plane_coordinates(positions[group], normals[group[0]])
        kept.extend(int(group[i]) for i in spanning_points(plane, depths[group]))
    return sorted(kept)


def _normal_groups(normals: np.ndarray) -> list[np.ndarray]:
    """Indices of the contacts grouped by normal: each group's normals lie within NORMAL_ANGLE_DEG of its first."""
    left = np.arange(len(normals))
    groups = []
    while left.size:
        same = normals[left] @ normals[left[0]] >= _SAME_NORMAL
        groups.append(left[same])
        left = left[~same]
    return groups


def _plane_coordinates(positions: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """The points' coordinates (n x 2) in the plane across ``normal``: the patch's own plane."""
    nx, ny, nz = (float(v) for v in normal)
    # a unit vector across the normal, from the world axis it is least aligned with
    if abs(nx) <= abs(ny) and abs(nx) <= abs(nz):
        ax, ay, az = 0.0, nz, -ny
    elif abs(ny) <= abs(nz):
        ax, ay, az = -nz, 0.0, nx
    else:
        ax, ay, az = ny, -nx, 0.0
    scale = 1.0 / math.sqrt(ax * ax + ay * ay + az * az)
    ax, ay, az = ax * scale, ay * scale, az * scale
    axes = np.array([[ax, ny * az - nz * ay], [ay, nz * ax - nx * az], [az, nx * ay - ny * ax]])
    return positions @ axes


def spanning_points(plane: np.ndarray, depths: np.ndarray) -> list[int]:
    """Indices of at most KEEP points (n x 2, in the patch's plane): the deepest, then each next the
    one that widens their polygon most."""
    if len(plane) <= KEEP:
        return list(range(len(plane)))
    first = int(np.argmax(depths))
    offsets = plane - plane[first]
    u, v = offsets[:, 0], offsets[:, 1]
    second = int(np.argmax(u * u + v * v))
    bu, bv = u[second], v[second]
    areas = np.abs(u * bv - v * bu)
    third = int(np.argmax(areas))
    if areas[third] <= 1e-12:  # all on one line: its two ends carry it
        return [first, second]
    cu, cv = u[third], v[third]
    # Twice the area of the hull of the triangle (first, second, third) and each point: the largest
    # polygon the point closes with the triangle's corners (a point inside it adds nothing).
    triangle = bu * cv - bv * cu
    b_p, c_p = bu * v - bv * u, cu * v - cv * u
    hull = np.maximum.reduce(
        [np.abs(triangle + c_p), np.abs(b_p - c_p), np.abs(triangle - b_p), np.full_like(u, abs(triangle))]
    )
    fourth = int(np.argmax(hull))
    return list(dict.fromkeys([first, second, third, fourth]))
