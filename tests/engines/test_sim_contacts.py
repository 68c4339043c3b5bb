"""Contact surfaces from the project's collision pairs: restitution, sliding friction, self-collision."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sim_helpers import box_body, floor_body, folded_chain, model, project

from hrpsim.bodyinfo import Body, Link, Shape
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.project import CollisionPair

G = 9.8


def _ball(radius: float = 0.1, mass: float = 1.0) -> Body:
    inertia = np.eye(3) * 0.4 * mass * radius**2
    return Body(
        "ball",
        links=[Link("BALL", joint_type="free", mass=mass, inertia=inertia, shapes=[Shape("sphere", radius=radius)])],
    )


def test_restitution_sets_the_rebound_height(tmp_path: Path) -> None:
    proj, bodies = project(
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("ball", position=(0.0, 0.0, 1.1)), _ball())],
        collisions=[CollisionPair("floor", "ball", restitution=0.8)],
    )
    world = OdeEngine(proj, bodies)
    heights, bounced = [], False
    for _ in range(1200):
        world.step()
        state = world.read("ball")
        bounced = bounced or state.root_velocity[2] > 0
        if bounced:
            heights.append(state.root_position[2] - 0.1)
    assert max(heights) == pytest.approx(0.8**2 * 1.0, rel=0.05)


@pytest.mark.parametrize(("sliding", "mu_used"), [(None, 0.5), (0.3, 0.3)])
def test_a_sliding_box_stops_where_its_sliding_friction_says(
    tmp_path: Path, sliding: float | None, mu_used: float
) -> None:
    proj, bodies = project(
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("box", position=(0.0, 0.0, 0.1)), box_body())],
        collisions=[CollisionPair("floor", "box", friction=0.5, sliding_friction=sliding)],
    )
    world = OdeEngine(proj, bodies)
    for _ in range(20):
        world.step()  # settle onto the floor
    world.set_link_data("box", root_velocity=[2.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    start = world.read("box").root_position[0]
    for _ in range(1000):
        world.step()
    travelled = world.read("box").root_position[0] - start
    assert travelled == pytest.approx(2.0**2 / (2 * mu_used * G), rel=0.05)


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
