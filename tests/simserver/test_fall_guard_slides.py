"""The fall guard stops a run whose robot fell through the world, but not one whose links slide
away along the robot's own slide joints (an arm with no controller, as in OpenHRP)."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_helpers import MODELS

from hrpsim import Simulation
from hrpsim.errors import SimulationError
from hrpsim.simserver.guard import FAR_BELOW_M


def test_fingers_sliding_away_on_their_joints_do_not_stop_the_run() -> None:
    with Simulation(MODELS / "openhrp3/project/PA10Sample.xml") as sim:
        summary = sim.run()
        assert summary["error"] is None and sim.time == pytest.approx(10.0)
        names = [link.name for link in sim.bodies["pa10"].links]
        z = sim.engine.link_states("pa10").positions[:, 2]
        assert z[names.index("HAND_R")] < -0.2 - FAR_BELOW_M  # below the bound, and no stop


def test_a_robot_through_the_floor_still_stops_the_run_naming_a_link_not_on_a_slide(tmp_path: Path) -> None:
    project = tmp_path / "through.yaml"
    project.write_text(
        "world: {timestep: 0.001, end_time: 3.0}\n"
        "models:\n"
        f"  - {{name: floor, file: {MODELS}/openhrp3/model/floor.wrl, static: true}}\n"
        f"  - {{name: spring, file: {MODELS}/openhrp3/model/springJoint.wrl, position: [0, 0, 0.1]}}\n"
        "collisions: []\n"
    )
    with (
        Simulation(project) as sim,
        pytest.raises(SimulationError, match=r"model 'spring' link 'ROOT' .* fell through"),
    ):
        sim.run()
