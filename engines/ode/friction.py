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
  force the nearest contact of the patch carried last step, in newtons (see
  :meth:`Patch._orient`). A new contact takes its slip's direction; a contact with hardly any
  tangential force keeps ODE's default direction.

A :class:`Patch` remembers a step's contacts between two links: where each was, the normal
force each carried and the patch's net tangential force. A contact of a new patch sticks (no
slip on placement or landing), as do those of a young patch that keeps gaining contacts (see
:meth:`Patch._landing`); otherwise a contact of a patch that was there last step slides while
its point moves faster than :data:`SLIP_SPEED`, so a sticking contact still moving that fast
after a step needed more than the static limit, and a sliding one that slows under it sticks
again.

The model runs on every tick, between ODE's steps, for a handful of contacts: its cost is a few
pyode calls per contact and the Python around them. Plain floats, not numpy: a numpy call costs
more than a contact's whole arithmetic here. A contact that barely moves, in a patch with no
force to follow, takes the shortest path (see :meth:`Patch.apply`): every foot of a robot
standing still, about a third of them in the sample walk.
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
NEW_CONTACT = 0.01  # m: a contact farther than this from every contact of last step's patch is new

Vec = tuple[float, float, float]

_STICK_FLAGS = odeparams.CONTACT_SLIP1 | odeparams.CONTACT_SLIP2
_STILL = (SLIP_SPEED / 2) ** 2  # (m/s)^2: a point this slow is far from slipping, rounding or not


class Patch:
    """One step's contacts between two links: set up before the step, their forces read after it."""

    __slots__ = ("before", "force", "joints", "landing", "loads", "normals", "positions", "sliding", "used")

    def __init__(self, before: Patch | None) -> None:
        self.before = before  # last step's patch between the same links, until this one is read back
        self.positions: list[Vec] = []
        self.normals: list[Vec] = []  # unit contact normals, for the forces' normal parts
        self.joints: list[ode.ContactJoint] = []  # one per contact, in order, with joint feedback on
        self.loads: list[float] = []  # N: each contact's normal force, once read back
        self.force: Vec | None = None  # N: the net tangential force on body 1, if worth following
        self.used = 0.0  # the net tangential force over the summed normal force
        self.sliding = False  # whether any of its contacts slides
        self.landing = False  # whether its contacts still land (see _landing)

    def apply(
        self,
        contacts: list[ode.Contact],
        mode: int,
        mu: float,
        sliding_mu: float,
        b1: ode.Body | None,
        b2: ode.Body | None,
    ) -> None:
        """Set each contact's friction direction, mode and limits; remember where it is."""
        before = self.before
        near_limit = before is not None and before.used >= NEAR_LIMIT * mu
        # With no force to follow and far from the limit, a contact whose point barely moves gets
        # the plain pyramid: its slip, at most as fast as the point, is under SLIP_SPEED, so it
        # sticks and takes ODE's own direction.
        plain = not near_limit and (before is None or before.force is None)
        params = [contact.getContactGeomParams() for contact in contacts]
        self.positions.extend([p[0] for p in params])  # lists: cheaper than generators here
        self.normals.extend([p[1] for p in params])
        self.landing = landing = self.landing or self._landing(params)
        for contact, (position, normal, _, _, _) in zip(contacts, params, strict=True):
            # Velocity of body 1's point at the contact relative to body 2's (inline: this loop is
            # the friction model's hottest code).
            vx = vy = vz = 0.0
            if b1 is not None:
                vx, vy, vz = b1.getPointVel(position)
            if b2 is not None:
                ux, uy, uz = b2.getPointVel(position)
                vx, vy, vz = vx - ux, vy - uy, vz - uz
            if plain and vx * vx + vy * vy + vz * vz < _STILL:
                contact.setMode(mode)
                contact.setMu(mu)
                continue
            self._orient(contact, position, normal, (vx, vy, vz), mode, (mu, sliding_mu), near_limit, landing)

    def _landing(self, params: list[tuple]) -> bool:
        """Whether these contacts still land: a new patch, or one that has gained a contact at
        every step since it was new, none sliding (a box placed exactly on a slope first touches
        along one edge, then tips onto its face). Slip then comes from the landing, not from a
        force beyond the static limit. A patch that kept its contacts for a step has landed."""
        before = self.before
        if before is None:
            return True
        return before.landing and not before.sliding and not all(before.had_contact_near(p[0]) for p in params)

    def _orient(
        self,
        contact: ode.Contact,
        position: Vec,
        normal: Vec,
        velocity: Vec,
        mode: int,
        coefficients: tuple[float, float],
        near_limit: bool,
        landing: bool,
    ) -> None:
        """One contact's friction from its relative velocity: sliding, or sticking along a direction."""
        before, (mu, sliding_mu) = self.before, coefficients
        vx, vy, vz = velocity
        nx, ny, nz = normal
        along = vx * nx + vy * ny + vz * nz
        tx, ty, tz = vx - along * nx, vy - along * ny, vz - along * nz
        speed = math.sqrt(tx * tx + ty * ty + tz * tz)
        # Moving now means sliding, whether it stuck or slid last step; but the contacts of a
        # landing patch first get one step of static friction, which stops the slip a landing brings.
        if not landing and speed > SLIP_SPEED:
            contact.setMode(mode | odeparams.CONTACT_FDIR1)
            contact.setMu(sliding_mu)
            contact.setFDir1((tx / speed, ty / speed, tz / speed))
            self.sliding = True
            return
        direction = _stick_direction(before.force if before is not None else None, normal, tx, ty, tz, speed)
        if direction is not None:
            mode |= odeparams.CONTACT_FDIR1
            contact.setFDir1(direction)
        if not near_limit:
            contact.setMode(mode)
            contact.setMu(mu)
            return
        # Near the limit, a fixed limit in newtons from last step's normal force and a trace of slip:
        # with the limit tied to this step's normal force, or with rigid friction rows that several
        # contacts share, ODE's LCP solver fails ("s <= 0") there, and the contacts it gives up on
        # let go. Far from it the plain pyramid is cheaper for the solver (8 % each, on sample1).
        contact.setMode((mode & ~odeparams.CONTACT_APPROX1) | _STICK_FLAGS)
        contact.setMu(mu * before.nearest_load(position))
        contact.setSlip1(STICK_SLIP)
        contact.setSlip2(STICK_SLIP)

    def had_contact_near(self, position: Vec) -> bool:
        """Whether one of this patch's contacts was within :data:`NEW_CONTACT` of ``position``."""
        x, y, z = position
        reach = NEW_CONTACT * NEW_CONTACT
        return any((px - x) ** 2 + (py - y) ** 2 + (pz - z) ** 2 <= reach for px, py, pz in self.positions)

    def nearest_load(self, position: Vec) -> float:
        """The normal force of this patch's contact closest to ``position`` (the first of equals)."""
        loads = self.loads
        if len(loads) == 1:
            return loads[0]
        x, y, z = position
        best, best_d2 = 0, math.inf
        for i, (px, py, pz) in enumerate(self.positions):
            dx, dy, dz = px - x, py - y, pz - z
            d2 = dx * dx + dy * dy + dz * dz
            if d2 < best_d2:
                best, best_d2 = i, d2
        return loads[best]

    def read_back(self) -> None:
        """Keep the forces the contact joints applied in the step just taken, then free the joints'
        feedback buffers (pyode frees them through the ODE joint, which must still exist) and let
        go of last step's patch. A patch without joints (one put back from a snapshot) was read
        back when the snapshot was taken."""
        if self.joints:
            self.loads, self.used, self.force = self._forces(free=True)
        self.joints, self.before = [], None

    def _forces(self, *, free: bool) -> tuple[list[float], float, Vec | None]:
        """Each contact's normal force, the net tangential force over the summed normal force, and
        that net force if worth following, from the joints' feedback (``free``: then free it).

        How a rigid patch's friction splits among its contacts is undetermined: the solver leaves
        forces across the push that cancel out, and a limit along each contact's own force would
        add up to more than mu N along the push. Along the patch's net force they add up to mu N.
        A net force under :data:`ALIGN_RATIO` of the normal force is far inside any limit, and its
        direction is noise: the contacts keep ODE's own directions then.
        """
        sx = sy = sz = total = 0.0
        loads: list[float] = []
        remember_load = loads.append
        for joint, (nx, ny, nz) in zip(self.joints, self.normals, strict=True):
            fx, fy, fz = joint.getFeedback()[0]
            if free:
                joint.setFeedback(False)
            along = fx * nx + fy * ny + fz * nz
            load = abs(along)
            remember_load(load)
            sx += fx - along * nx
            sy += fy - along * ny
            sz += fz - along * nz
            total += load
        size = math.sqrt(sx * sx + sy * sy + sz * sz)
        used = size / total if total > 0.0 else 0.0
        return loads, used, ((sx, sy, sz) if used > ALIGN_RATIO else None)

    def memory(self) -> tuple:
        """What the next step takes from this patch, as plain data (its joints' feedback read, not
        freed): for a snapshot, put back with :meth:`remembered`."""
        loads, used, force = self._forces(free=False) if self.joints else (self.loads, self.used, self.force)
        return list(self.positions), list(self.normals), loads, used, force, self.sliding, self.landing

    @classmethod
    def remembered(cls, memory: tuple) -> Patch:
        """A patch as :meth:`memory` gave it, read back already."""
        patch = cls(None)
        positions, normals, loads, patch.used, patch.force, patch.sliding, patch.landing = memory
        patch.positions, patch.normals, patch.loads = list(positions), list(normals), list(loads)
        return patch

    def drop_feedback(self) -> None:
        """Free the joints' feedback buffers without reading them (before their group is destroyed)."""
        for joint in self.joints:
            joint.setFeedback(False)
        self.joints = []


def _stick_direction(force: Vec | None, normal: Vec, tx: float, ty: float, tz: float, speed: float) -> Vec | None:
    """Along last step's tangential force, else along a landing's slip, else None (ODE's own choice)."""
    if force is not None:
        # The force is the patch's: take its part in this contact's own tangent plane.
        fx, fy, fz = force
        nx, ny, nz = normal
        along = fx * nx + fy * ny + fz * nz
        fx, fy, fz = fx - along * nx, fy - along * ny, fz - along * nz
        size = math.sqrt(fx * fx + fy * fy + fz * fz)
        if size > DIRECTION_FLOOR:
            return fx / size, fy / size, fz / size
    if speed > SLIP_SPEED:
        return tx / speed, ty / speed, tz / speed
    return None
