"""Where one contact couples two joints' rates in a fixed ratio: the geometry of a gear contact.

Two wheels rolling on each other without slip at their pitch point turn in the ratio of their
radii: one contact, whose friction holds the two bodies' velocities equal along one direction
at one point, couples two joints. Here the joints are a mimic and its master, and the contact
is between the two bodies whose relative motion those two joints, and no other, make
(:func:`gear_bodies`). At a point P the two joints move the first body against the second at
``u_mimic dq + u_master dq_master``; a direction n at right angles to
``w = u_master + multiplier u_mimic`` reads ``c (dq - multiplier dq_master)`` there, with
``c = n . u_mimic`` (:func:`gear_mesh`). Plain floats throughout: it runs for every mimic joint
every step, and numpy's overhead on 3-vectors costs more than the arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hrpsim.bodyinfo import Link

Vector = tuple[float, float, float]
ZERO: Vector = (0.0, 0.0, 0.0)
MIN_LEVERAGE = 0.1  # of P's speed under the mimic alone: below it n is too oblique to hold the ratio
MIN_LEVER = 1e-4  # m (hinges): P this close to the mimic's own axis moves too little to carry a torque
_TINY = 1e-18


@dataclass
class JointMotion:
    """How one unit of a joint's rate moves the first gear body against the second (world frame)."""

    rotation: Vector  # rad/s about this axis (zero for a slider)
    anchor: Vector  # a point on the hinge's axis (for a slider, any point of its body)
    translation: Vector  # m/s along this (zero for a hinge)

    def velocity_at(self, point: Vector) -> Vector:
        return plus(self.translation, cross(self.rotation, minus(point, self.anchor)))


@dataclass
class GearMesh:
    point: Vector  # P, world frame
    direction: Vector  # n, the contact's one friction direction
    normal: Vector  # at right angles to every motion the two joints give P
    leverage: float  # c: the row reads c (dq - multiplier dq_master)


@dataclass
class _Candidate:
    point: Vector
    direction: Vector
    u_mimic: Vector
    leverage: float
    usable: bool


def gear_mesh(
    mimic: JointMotion, master: JointMotion, multiplier: float, scale: Callable[[], float]
) -> GearMesh | None:
    """The gear contact for ``dq = multiplier dq_master`` in this configuration, or None where none holds.

    |w| is least on the screw axis of the combined motion ``master + multiplier mimic`` (it vanishes
    there for parallel hinges: the pitch point of two wheels). The point of that axis nearest the
    mimic's anchor serves unless it lies on the mimic's own axis (axes that cross) or leaves n too
    oblique; then the better of two a ``scale()`` (a length of the mechanism) along that axis, or, for
    a combined motion that is a translation, the best of six around the anchor."""
    rotation = plus(master.rotation, times(multiplier, mimic.rotation))
    reference = mimic.anchor
    combined = plus(master.velocity_at(reference), times(multiplier, mimic.velocity_at(reference)))
    turning = dot(rotation, rotation)
    nearest = plus(reference, times(1.0 / turning, cross(rotation, combined))) if turning > _TINY else reference
    best = _candidate(mimic, master, multiplier, nearest)
    if not best.usable:
        length = scale()
        steps = (
            [times(turning**-0.5, rotation)] if turning > _TINY else [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]
        )
        others = [plus(nearest, times(side * length, step)) for step in steps for side in (1.0, -1.0)]
        best = max((_candidate(mimic, master, multiplier, p) for p in others), key=lambda c: c.leverage)
        if not best.usable:
            return None
    normal = cross(best.u_mimic, master.velocity_at(best.point))
    if dot(normal, normal) < _TINY * dot(best.u_mimic, best.u_mimic) ** 2:  # both along n: any normal across it
        normal = cross(best.direction, (1.0, 0.0, 0.0) if abs(best.direction[0]) < 0.6 else (0.0, 1.0, 0.0))
    return GearMesh(best.point, best.direction, times(dot(normal, normal) ** -0.5, normal), best.leverage)


def _candidate(mimic: JointMotion, master: JointMotion, multiplier: float, point: Vector) -> _Candidate:
    u_mimic = mimic.velocity_at(point)
    w = plus(master.velocity_at(point), times(multiplier, u_mimic))
    ww = dot(w, w)
    across = minus(u_mimic, times(dot(u_mimic, w) / ww, w)) if ww > _TINY else u_mimic
    leverage = dot(across, across) ** 0.5
    speed = dot(u_mimic, u_mimic) ** 0.5
    direction = times(1.0 / leverage, across) if leverage > 0.0 else across
    return _Candidate(point, direction, u_mimic, leverage, speed >= MIN_LEVER and leverage >= MIN_LEVERAGE * speed)


def gear_bodies(links: list[Link], mimic: int, master: int) -> tuple[int, int, tuple[float, float]] | None:
    """(first, second, signs): the links whose relative motion the two joints, and no other moving
    joint, make (second -1: the world); per joint (mimic, master) +1 where it moves the first link
    against the second, -1 the reverse. None where no two links are joined by those two alone."""
    mimic_up, master_up = _ancestry(links, mimic), _ancestry(links, master)
    first = links[mimic].parent if mimic in master_up else mimic
    second = links[master].parent if master in mimic_up else master
    if first < 0:
        return None
    first_up, second_up = _ancestry(links, first), _ancestry(links, second)
    common = next((i for i in first_up if i in second_up), None)
    first_side = first_up[: first_up.index(common)] if common is not None else first_up
    second_side = second_up[: second_up.index(common)] if common is not None else second_up
    if {i for i in first_side + second_side if links[i].joint_type not in ("fixed", "crawler")} != {mimic, master}:
        return None
    return first, second, (1.0 if mimic in first_side else -1.0, 1.0 if master in first_side else -1.0)


def _ancestry(links: list[Link], index: int) -> list[int]:
    """The link and its ancestors, up to the root."""
    chain = []
    while index >= 0:
        chain.append(index)
        index = links[index].parent
    return chain


def plus(a: Vector, b: Vector) -> Vector:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def minus(a: Vector, b: Vector) -> Vector:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def times(k: float, a: Vector) -> Vector:
    return (k * a[0], k * a[1], k * a[2])


def dot(a: Vector, b: Vector) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a: Vector, b: Vector) -> Vector:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
