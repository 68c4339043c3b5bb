"""ODE's contact generator on self-collision: the pairs it tries (the physics of contacts on every
engine is the conformance suite's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sim_helpers import box_body, folded_chain, model, project

from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.project import CollisionPair

G = 9.8


@pytest.mark.parametrize("self_collision", [True, False])
def test_self_collision_only_when_the_project_asks_and_never_between_neighbours(
    tmp_path: Path, self_collision: bool
) -> None:
    pairs = (
        [CollisionPair("chain", "chain", self_collision=True)] if self_collision else [CollisionPair("chain", "other")]
    )
    other = box_body()
    proj, bodies = project(
        tmp_path,
        [
            (model("chain", joints={"L1": 2.8, "L2": 2.8}), folded_chain()),
            (model("other", position=(5.0, 5.0, 5.0), static=True), other),
        ],
        collisions=pairs,
        gravity=[0.0, 0.0, 0.0],
    )
    world = OdeEngine(proj, bodies)
    world.collide()
    touching = {
        (world.model("chain").info.links[a].name, world.model("chain").info.links[b].name)
        for a, b in _contact_links(world)
    }
    assert touching == ({("L0", "L2")} if self_collision else set())


def _contact_links(world: OdeEngine) -> list[tuple[int, int]]:
    """Link index pairs of the chain's geoms that collide now, through the world's own generator."""
    made: list[tuple[int, int]] = []
    generator = world.contacts
    original = generator._make_contacts

    def record(g1, g2) -> None:
        made.append(tuple(sorted((g1.link_index, g2.link_index))))
        original(g1, g2)

    generator._make_contacts = record
    try:
        world.contacts.collide()
    finally:
        del generator._make_contacts  # back to the class's method, leaving no reference cycle
    return made
