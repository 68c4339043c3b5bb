"""Rules every component shares, each written once: drive modes, controller policies, sync modes,
the controller-period rule, the distance bound, the least mass and inertia a simulated link has,
which link pairs never collide, and the rotation
that turns a Z-axis shape (cylinder, capsule as the model formats write them, along Y) into the
collision libraries' Z-axis convention. Joint and shape kinds belong to the data model
(hrpsim/bodyinfo.py), sensor types to their table (hrpsim/sensor_types.py)."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from hrpsim.bodyinfo import Body, Link
from hrpsim.errors import ConfigError

DRIVE_MODES = ("torque", "high_gain", "velocity")
POLICIES = ("stop", "hold", "zero")
RESTART_POLICIES = ("on-failure", "never")  # what ``hrpsim launch`` does when a process it started dies
RESTARTABLE_SERVICES = ("nameserver", "modelloader", "collision")
SYNC_MODES = ("lockstep", "realtime")

# m from the origin: ODE's hash space fails an assertion on far larger coordinates, and no robot
# simulation has a use for them; every engine refuses positions beyond it.
MAX_DISTANCE = 1e6

MIN_MASS = 1e-3  # kg an engine gives a massless link (ODE refuses a body without mass, MuJoCo a moving one)
MIN_INERTIA = 1e-7  # kg m^2: the least principal moment a simulated link keeps


def simulated_mass(link: Link, where: str) -> tuple[float, np.ndarray]:
    """The link's mass and inertia about its centre of mass as the engines simulate them: a
    massless link gets MIN_MASS, moments below MIN_INERTIA are raised to it (symmetrised)."""
    mass = float(link.mass)
    if not np.isfinite(mass) or mass <= 0.0:
        mass = MIN_MASS
    inertia = np.asarray(link.inertia, float)
    inertia = (inertia + inertia.T) / 2.0
    if not np.all(np.isfinite(inertia)):
        raise ConfigError(f"{where}: inertia is not finite")
    values, vectors = np.linalg.eigh(inertia)
    if values.min() < MIN_INERTIA:
        inertia = vectors @ np.diag(np.maximum(values, MIN_INERTIA)) @ vectors.T
    return mass, inertia


# OpenHRP and URDF cylinders/capsules run along their frame's Y (VRML) axis; ODE's and FCL's along Z.
Z_TO_Y = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])

_PERIOD_TOLERANCE = 1e-6


def drive_mode_problem(joint: str, mode: object, joints: Collection[str]) -> str | None:
    """Why ``mode`` cannot be set on ``joint`` of a robot with ``joints``, or None: the one check of
    a drive-mode change, wherever one arrives (a command message, an engine, the controller SDK)."""
    if joint not in joints:
        return f"no joint {joint!r} (joints: {', '.join(joints)})"
    if mode not in DRIVE_MODES:
        return f"unknown drive mode {mode!r} (modes: {', '.join(DRIVE_MODES)})"
    return None


def period_ticks(period: float, timestep: float) -> int | None:
    """Ticks per controller period, or None when the period is not a whole multiple (>= 1) of the
    time step (OpenHRP's controlTime rule)."""
    ratio = period / timestep
    whole = round(ratio)
    if whole < 1 or abs(ratio - whole) > _PERIOD_TOLERANCE:
        return None
    return whole


def excluded_link_pairs(body: Body) -> set[tuple[int, int]]:
    """Link index pairs (low, high) of one body that never collide: a link with its parent, and
    the pairs the model file excludes."""
    out = {(min(i, lk.parent), max(i, lk.parent)) for i, lk in enumerate(body.links) if lk.parent >= 0}
    index = {lk.name: i for i, lk in enumerate(body.links)}
    for a, b in body.collision_exclusions:
        if a in index and b in index:
            out.add((min(index[a], index[b]), max(index[a], index[b])))
    return out


def initial_drive_modes(model: str, drive: str | dict[str, str], joints: list[str]) -> dict[str, str]:
    """Each joint's starting drive mode from a project's ``drive`` (one mode, or joint -> mode);
    ConfigError naming joints the model lacks."""
    if isinstance(drive, str):
        return dict.fromkeys(joints, drive)
    unknown = sorted(set(drive) - set(joints))
    if unknown:
        raise ConfigError(
            f"model {model!r}: drive names unknown joint(s) {', '.join(unknown)} (joints: {', '.join(joints)})"
        )
    return dict(drive)
