"""What only the MuJoCo engine has: what it refuses at load, its settings, its safety guard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sim_helpers import CLOSED_LINK, box_body, floor_body, model, pendulum_body, project

from hrpsim.bodyinfo import Shape
from hrpsim.engines.base import JointCommand, make_engine
from hrpsim.errors import ConfigError
from hrpsim.modelloader import load_body
from hrpsim.project import CollisionPair

pytest.importorskip("mujoco")


def build(tmp_path: Path, models: list, **world: object):
    proj, bodies = project(tmp_path, models, engine="mujoco", **world)
    return make_engine(proj, bodies)


def test_crawler_joints_are_refused_naming_model_and_link(tmp_path: Path) -> None:
    body = pendulum_body()
    body.links[1].joint_type = "crawler"
    with pytest.raises(ConfigError, match=r"model 'tank' link 'ROD': crawler joints .* world\.engine: ode"):
        build(tmp_path, [(model("tank"), body)])


def test_ode_only_contact_settings_are_refused_naming_the_pair(tmp_path: Path) -> None:
    models = [(model("floor", static=True), floor_body()), (model("box", position=(0, 0, 0.2)), box_body())]
    with pytest.raises(ConfigError, match=r"pair floor/box: soft_erp/soft_cfm are ODE"):
        build(tmp_path, models, collisions=[CollisionPair("floor", "box", soft_cfm=1e-5)])
    with pytest.raises(ConfigError, match=r"pair floor/box: .*sliding_friction \(0\.3\) cannot differ"):
        build(tmp_path, models, collisions=[CollisionPair("floor", "box", friction=0.5, sliding_friction=0.3)])
    with pytest.raises(ConfigError, match=r"world\.collision: 'service' is for the ODE engine"):
        build(tmp_path, models, collision="service")


def test_engine_settings_are_checked_naming_the_key(tmp_path: Path) -> None:
    models = [(model("box", position=(0, 0, 1.0)), box_body())]
    with pytest.raises(ConfigError, match=r"world\.mujoco\.substeps: unknown setting"):
        build(tmp_path, models, mujoco={"substeps": 4})
    with pytest.raises(ConfigError, match=r"world\.mujoco\.solver: must be one of Newton, CG, PGS, got 'Dantzig'"):
        build(tmp_path, models, mujoco={"solver": "Dantzig"})
    with pytest.raises(ConfigError, match=r"world\.mujoco\.iterations: must be an integer, got 2\.5"):
        build(tmp_path, models, mujoco={"iterations": 2.5})
    world = build(tmp_path, models, mujoco={"solver": "CG", "iterations": 30, "cone": "elliptic"})
    assert (world.m.opt.solver, world.m.opt.iterations, world.m.opt.cone) == (1, 30, 1)


def test_a_plane_on_a_moving_link_is_refused(tmp_path: Path) -> None:
    body = box_body()
    body.links[0].shapes.append(Shape("plane"))
    with pytest.raises(ConfigError, match=r"model 'box' link 'BOX': a plane can only belong to a static model"):
        build(tmp_path, [(model("box"), body)])


def test_external_force_at_the_link_origin_pushes_and_turns_as_it_should(tmp_path: Path) -> None:
    world = build(tmp_path, [(model("box", position=(0.0, 0.0, 5.0)), box_body(mass=10.0))], gravity=[0.0, 0.0, 0.0])
    world.set_external_force("box", "BOX", [10.0, 0.0, 0.0])
    for _ in range(1000):
        world.step()
    state = world.read("box")
    assert state.root_velocity[:3] == pytest.approx([1.0, 0.0, 0.0], abs=1e-6)  # F t / m
    assert np.abs(state.root_velocity[3:]).max() < 1e-9  # at the origin, which is the COM here


def test_set_link_data_places_joints_and_root(tmp_path: Path) -> None:
    world = build(tmp_path, [(model("closed"), load_body(CLOSED_LINK))])
    q = world.read("closed").q + 0.0
    world.set_link_data("closed", root_position=[0.5, 0.0, 0.0])
    assert world.read("closed").root_position == pytest.approx([0.5, 0.0, 0.0])
    assert world.link_states("closed").positions[0] == pytest.approx([0.5, 0.0, 0.0])
    assert world.read("closed").q == pytest.approx(q)
    pend = build(tmp_path, [(model("pend", drive="high_gain"), pendulum_body())])
    pend.set_link_data("pend", q=[0.7], dq=[0.0])
    pend.step()
    assert pend.read("pend").q[0] == pytest.approx(0.7, abs=1e-4)  # the hold target followed
    assert pend.link_values("pend")[0][1] == pytest.approx(0.7, abs=1e-4)


def test_switching_into_velocity_mode_at_run_time_keeps_the_state(tmp_path: Path) -> None:
    # Velocity drives are added to the model when a joint first needs one (the model is recompiled).
    world = build(
        tmp_path,
        [
            (model("floor", static=True), floor_body()),
            (model("pend", joints={"ROD": 0.5}, position=(0.0, 0.0, 1.0)), pendulum_body()),
        ],
    )
    for _ in range(100):
        world.step()
    before = world.read("pend")
    nv = world.m.nv
    world.apply("pend", JointCommand(dq_ref=np.array([-1.0]), modes={"ROD": "velocity"}))
    assert world.m.nv == nv + 1  # the rotor
    after = world.read("pend")
    assert (after.tick, after.q[0], after.dq[0]) == (before.tick, before.q[0], before.dq[0])
    world.step()
    assert world.read("pend").dq[0] == pytest.approx(-1.0, abs=1e-4)
    assert world.drive_modes("pend") == ["velocity"]


def _notched_prism() -> Shape:
    """An L-shaped prism 1 m high: concave, so its convex hull fills the notch."""
    outline = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], float)
    vertices = np.vstack([np.c_[outline, np.zeros(6)], np.c_[outline, np.ones(6)]])
    bottom = [[0, 2, 1], [0, 3, 2], [0, 4, 3], [0, 5, 4]]
    top = [[6 + a, 6 + c, 6 + b] for a, b, c in bottom]
    sides = [tri for i in range(6) for tri in ([i, (i + 1) % 6, 6 + (i + 1) % 6], [i, 6 + (i + 1) % 6, 6 + i])]
    return Shape("mesh", vertices=vertices, triangles=np.array(bottom + top + sides))


def test_a_concave_mesh_is_named_in_a_warning_because_it_collides_as_its_hull(tmp_path: Path, caplog) -> None:
    room = floor_body()
    room.links[0].shapes = [_notched_prism()]
    with caplog.at_level("WARNING", logger="hrpsim.simserver"):
        build(tmp_path, [(model("room", static=True), room), (model("box", position=(0, 0, 3.0)), box_body())])
    assert any("model 'room' link 'BASE'" in r.message and "convex hull" in r.message for r in caplog.records)
    caplog.clear()
    wedge = floor_body()
    wedge.links[0].shapes = [
        Shape(
            "mesh",
            vertices=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float),
            triangles=np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]),
        )
    ]
    with caplog.at_level("WARNING", logger="hrpsim.simserver"):
        build(tmp_path, [(model("tetra", static=True), wedge), (model("box", position=(0, 0, 3.0)), box_body())])
    assert not any("convex hull" in r.message for r in caplog.records)  # a convex mesh is exact
