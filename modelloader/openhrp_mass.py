"""Mass properties of a link from its Segments: the parallel-axis rule.

Each Segment gives a mass, a centre of mass and an inertia tensor about that centre, in the
Segment's own frame; a link gathers all its Segments (through any Transforms between) into
one mass, one centre of mass and one inertia about it, all in the link frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The heaviest link a model may have: a billion kilograms is no robot, and a mass near the float
# limit makes the body's total infinite (and every dynamics computation with it).
MAX_LINK_MASS_KG = 1e9


@dataclass
class MassPart:
    mass: float
    com: np.ndarray  # in the link frame
    inertia: np.ndarray  # about ``com``, axes of the link frame


def place(mass: float, com: np.ndarray, inertia: np.ndarray, transform: np.ndarray) -> MassPart:
    """A Segment's properties moved into the link frame by ``transform`` (4x4).

    The centre of mass follows the full map; the inertia turns with its rotation only (a scale
    on a Transform above a Segment resizes its shapes, not its written mass properties).
    """
    linear = transform[:3, :3]
    scales = np.linalg.norm(linear, axis=0)
    rotation = linear / np.where(scales > 0, scales, 1.0)
    return MassPart(mass, linear @ com + transform[:3, 3], rotation @ inertia @ rotation.T)


def combine(parts: list[MassPart]) -> MassPart:
    """One body from several: masses add, centres average by mass, inertias shift to the new
    centre by m (|d|^2 E - d d^T)."""
    total = float(sum(p.mass for p in parts))
    if not parts:
        return MassPart(0.0, np.zeros(3), np.zeros((3, 3)))
    if total == 0.0:
        return MassPart(0.0, parts[0].com.copy(), sum((p.inertia for p in parts), np.zeros((3, 3))))
    com = sum((p.mass * p.com for p in parts), np.zeros(3)) / total
    inertia = np.zeros((3, 3))
    for part in parts:
        d = part.com - com
        inertia += part.inertia + part.mass * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return MassPart(total, com, inertia)


def nearest_inertia(inertia: np.ndarray) -> np.ndarray:
    """A usable stand-in for a broken tensor: symmetric, eigenvalues clipped at 0."""
    if not np.all(np.isfinite(inertia)):
        return np.zeros((3, 3))
    symmetric = (inertia + inertia.T) / 2.0
    values, vectors = np.linalg.eigh(symmetric)
    return (vectors * np.clip(values, 0.0, None)) @ vectors.T


def inertia_problem(inertia: np.ndarray) -> str:
    """Why ``inertia`` cannot be an inertia tensor, or "" when it can."""
    if not np.all(np.isfinite(inertia)):
        return "inertia holds non-finite values"
    if not np.allclose(inertia, inertia.T, rtol=1e-6, atol=1e-9):
        return "inertia is not symmetric"
    eigen = np.linalg.eigvalsh((inertia + inertia.T) / 2.0)
    if eigen.min() < -1e-9 * max(1.0, float(np.abs(eigen).max())):
        return f"inertia is not positive semi-definite (eigenvalues {', '.join(f'{e:.6g}' for e in eigen)})"
    return ""
