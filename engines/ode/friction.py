"""Coulomb friction on ODE's pyramid: the same limit in every direction, static and sliding with memory.

ODE bounds each contact's friction separately along two directions (``dContactApprox1``): a
square in the tangent plane whose edges follow the first friction direction, so along its
diagonals it holds up to sqrt(2) mu N. Each contact here gets its first direction along the
way friction must act, where the square's limit is exactly mu N:

- a **sliding** contact: along its relative tangential velocity, with the sliding coefficient,
  so friction is mu N against the motion. ODE's second direction still resists a change of the
  slip's course up to mu N across it: without it (``mu2 = 0``) contacts hovering at the
  stick/slip speed switch a whole direction of friction on and off, and a robot's scuffing feet
  turn 1e-11 m of difference into centimetres within a second;
- a **sticking** contact: along the tangential force its patch (all contacts between the same
  two links) carried last step, read back from ODE's joint feedback, with the static
  coefficient; near the limit its limit is instead the static coefficient times the normal
  force it carried last step, in newtons (see :func:`apply_friction`). A new contact takes its
  slip's direction; a contact with hardly any tangential force keeps ODE's default direction.

Each contact remembers whether it sticks or slides; the next step's contact of the same pair of
links nearest to it inherits that. A new contact sticks (no slip on placement or landing); a
sticking contact whose point still moves faster than :data:`SLIP_SPEED` after a step needed
more than the static limit, and slides from then on; a sliding contact sticks again when its
speed falls under that speed.
"""

from __future__ import annotations

import math

import ode

from hrpsim.engines.ode import params as odeparams

SLIP_SPEED = 1e-3  # m/s: a sticking contact moving faster has broken loose; a sliding one slower has stopped
STICK_SLIP = 1e-7  # (m/s)/N: a sticking contact creeps this fast per newton of friction (0.1 mm/s at 1 kN)
NEAR_LIMIT = 0.5  # a patch using more than this part of its static friction is near its limit
ALIGN_RATIO = 0.05  # tangential / normal force of a patch under which its direction is not followed
DIRECTION_FLOOR = 1e-9  # N: a projected force this small has no direction

Vec = tuple[float, float, float]

_STICK_FLAGS = odeparams.CONTACT_SLIP1 | odeparams.CONTACT_SLIP2


class ContactMemory:
    """What one contact did last step: where it was, whether it slid, its tangential force."""

    __slots__ = ("force", "normal", "sliding", "used", "x", "y", "z")

    def __init__(self, position: Vec, sliding: bool) -> None:
        self.x, self.y, self.z = position
        self.sliding = sliding
        self.normal = 0.0  # N: the normal force it carried, read back after the step
        self.force: Vec | None = None  # N: its tangential force on body 1, if it had one
        self.used = 0.0  # its patch's tangential force over its normal force


def nearest(memories: list[ContactMemory], x: float, y: float, z: float) -> ContactMemory | None:
    """The remembered contact of this pair of links closest to (x, y, z), or None for a new pair."""
    if len(memories) == 1:
        return memories[0]
    best, best_d2 = None, math.inf
    for memory in memories:
        dx, dy, dz = memory.x - x, memory.y - y, memory.z - z
        d2 = dx * dx + dy * dy + dz * dz
        if d2 < best_d2:
            best, best_d2 = memory, d2
    return best


def apply_friction(
    contact: ode.Contact,
    position: Vec,
    normal: Vec,
    mode: int,
    mu: float,
    sliding_mu: float,
    b1: ode.Body | None,
    b2: ode.Body | None,
    before: ContactMemory | None,
) -> ContactMemory:
    """Set the contact's friction direction, mode and limits; return what it will remember."""
    tx, ty, tz = _tangential_velocity(position, normal, b1, b2)
    speed = math.sqrt(tx * tx + ty * ty + tz * tz)
    # Whether it stuck or slid last step, moving now means sliding; but a new contact first gets
    # one step of static friction, which stops the slip a landing or a placement brings.
    sliding = before is not None and speed > SLIP_SPEED
    memory = ContactMemory(position, sliding)
    if sliding:
        contact.setMode(mode | odeparams.CONTACT_FDIR1)
        contact.setMu(sliding_mu)
        contact.setFDir1((tx / speed, ty / speed, tz / speed))
        return memory
    direction = _stick_direction(before, normal, tx, ty, tz, speed)
    if direction is not None:
        mode |= odeparams.CONTACT_FDIR1
        contact.setFDir1(direction)
    if before is None or before.used < NEAR_LIMIT * mu:
        contact.setMode(mode)
        contact.setMu(mu)
    else:
        # Near the limit, a fixed limit in newtons from last step's normal force and a trace of slip:
        # with the limit tied to this step's normal force, or with rigid friction rows that several
        # contacts share, ODE's LCP solver fails ("s <= 0") there, and the contacts it gives up on
        # let go. Far from it the plain pyramid is cheaper for the solver (8 % each, on sample1).
        contact.setMode((mode & ~odeparams.CONTACT_APPROX1) | _STICK_FLAGS)
        contact.setMu(mu * before.normal)
        contact.setSlip1(STICK_SLIP)
        contact.setSlip2(STICK_SLIP)
    return memory


def _stick_direction(
    before: ContactMemory | None, normal: Vec, tx: float, ty: float, tz: float, speed: float
) -> Vec | None:
    """Along last step's tangential force, else along a landing's slip, else None (ODE's own choice)."""
    if before is not None and before.force is not None:
        # The force is the patch's: take its part in this contact's own tangent plane.
        fx, fy, fz = before.force
        nx, ny, nz = normal
        along = fx * nx + fy * ny + fz * nz
        fx, fy, fz = fx - along * nx, fy - along * ny, fz - along * nz
        size = math.sqrt(fx * fx + fy * fy + fz * fz)
        if size > DIRECTION_FLOOR:
            return fx / size, fy / size, fz / size
    if speed > SLIP_SPEED:
        return tx / speed, ty / speed, tz / speed
    return None


def harvest(joints: list[tuple[ode.ContactJoint, ContactMemory, Vec]]) -> None:
    """Keep the normal and tangential force each contact joint applied in the step just taken, then
    free the joint's feedback buffer (pyode frees it through the ODE joint, which must still exist)."""
    for joint, memory, (nx, ny, nz) in joints:
        fx, fy, fz = joint.getFeedback()[0]
        joint.setFeedback(False)
        along = fx * nx + fy * ny + fz * nz
        memory.normal = abs(along)
        memory.force = (fx - along * nx, fy - along * ny, fz - along * nz)


def share_patch_force(memories: list[ContactMemory]) -> None:
    """Give every contact between two links their summed tangential force, if it is worth following.

    How a rigid patch's friction splits among its contacts is undetermined: the solver leaves
    forces across the push that cancel out, and a limit along each contact's own force would add
    up to more than mu N along the push. Along the patch's net force they add up to mu N. A net
    force under :data:`ALIGN_RATIO` of the normal force is far inside any limit, and its direction
    is noise: the contacts keep ODE's own directions then.
    """
    sx = sy = sz = normal = 0.0
    for memory in memories:
        fx, fy, fz = memory.force
        sx, sy, sz = sx + fx, sy + fy, sz + fz
        normal += memory.normal
    size = math.sqrt(sx * sx + sy * sy + sz * sz)
    used = size / normal if normal > 0.0 else 0.0
    total = (sx, sy, sz) if used > ALIGN_RATIO else None
    for memory in memories:
        memory.force, memory.used = total, used


def _tangential_velocity(position: Vec, normal: Vec, b1: ode.Body | None, b2: ode.Body | None) -> Vec:
    """Velocity of body 1's point at the contact relative to body 2's, without its normal part."""
    vx = vy = vz = 0.0
    if b1 is not None:
        vx, vy, vz = b1.getPointVel(position)
    if b2 is not None:
        ux, uy, uz = b2.getPointVel(position)
        vx, vy, vz = vx - ux, vy - uy, vz - uz
    nx, ny, nz = normal
    along = vx * nx + vy * ny + vz * nz
    return vx - along * nx, vy - along * ny, vz - along * nz
