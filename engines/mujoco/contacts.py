"""Collision pairs: only the project's pairs collide, each pair of geoms an explicit MuJoCo pair with
the pair's friction (sliding friction, condim 3) and restitution.

Restitution e becomes the contact's damping ratio zeta = -ln(e) / sqrt(pi^2 + ln(e)^2), the ratio at
which a damped spring contact gives back e of the impact speed. A pair naming one model twice
collides its links except a link with its parent and the model's excluded pairs. ODE's contact
softness (soft_erp, soft_cfm) and a sliding friction different from the static one have no MuJoCo
form and are refused.
"""

from __future__ import annotations

import math

import mujoco

from hrpsim.conventions import excluded_link_pairs
from hrpsim.engines.mujoco.layout import ModelLayout
from hrpsim.errors import ConfigError
from hrpsim.project import CollisionPair, Project

CONTACT_TIMECONST = 0.02  # s: MuJoCo's default contact stiffness
TORSION_FRICTION, ROLLING_FRICTION = 0.005, 0.0001  # unused with condim 3, MuJoCo's defaults


def restitution_damping(restitution: float) -> float:
    """The damping ratio of a spring contact that returns ``restitution`` of the impact speed."""
    if restitution <= 0.0:
        return 1.0
    log_e = math.log(min(restitution, 1.0 - 1e-9))
    return -log_e / math.sqrt(math.pi**2 + log_e**2)


def add_pairs(spec: mujoco.MjSpec, project: Project, layouts: dict[str, ModelLayout]) -> None:
    for pair in project.collision_pairs():
        _check_surface(project.path, pair)
        a, b = layouts.get(pair.a), layouts.get(pair.b)
        if a is None or b is None or (a.static and b.static):
            continue
        friction = [float(pair.friction)] * 2 + [TORSION_FRICTION, ROLLING_FRICTION, ROLLING_FRICTION]
        solref = [CONTACT_TIMECONST, restitution_damping(float(pair.restitution))]
        for g1, g2 in _geom_pairs(a, b):
            spec.add_pair(geomname1=g1, geomname2=g2, condim=3, friction=friction, solref=solref)


def _check_surface(path: str, pair: CollisionPair) -> None:
    name = f"collisions: pair {pair.a}/{pair.b}"
    if pair.links_a or pair.links_b:
        raise ConfigError(
            f"{path}: {name}: links_a/links_b (contacts limited to some links) are not carried "
            f"to the mujoco engine yet; use world.engine: ode for this project"
        )
    if pair.soft_erp is not None or pair.soft_cfm is not None:
        raise ConfigError(
            f"{path}: {name}: soft_erp/soft_cfm are ODE contact parameters with no mujoco "
            f"equivalent; remove them or use world.engine: ode"
        )
    if pair.sliding_friction is not None and pair.sliding_friction != pair.friction:
        raise ConfigError(
            f"{path}: {name}: MuJoCo has one friction coefficient, so sliding_friction "
            f"({pair.sliding_friction}) cannot differ from friction ({pair.friction}) there"
        )


def _geom_pairs(a: ModelLayout, b: ModelLayout) -> list[tuple[str, str]]:
    if a is not b:
        return [(g1, g2) for geoms1 in a.geoms for g1 in geoms1 for geoms2 in b.geoms for g2 in geoms2]
    links = a.info.links
    excluded = excluded_link_pairs(a.info)
    out = []
    for i in range(len(links)):
        for j in range(i + 1, len(links)):
            if (i, j) not in excluded:
                out += [(g1, g2) for g1 in a.geoms[i] for g2 in a.geoms[j]]
    return out
