"""What only the ODE engine has: its objects' life under the cycle collector, and its quickstep solver.
The physics every engine shares is the conformance suite's (tests/test_engine_conformance.py,
tests/engines/test_conformance_physics.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sim_helpers import box_body, floor_body, model, project

from hrpsim.engines.ode.engine import OdeEngine

G = 9.8


def run(world: OdeEngine, seconds: float) -> None:
    for _ in range(round(seconds / world.timestep)):
        world.step()


def test_released_worlds_in_reference_cycles_are_collected_without_crashing(tmp_path: Path) -> None:
    # ODE objects freed by the cycle collector in the wrong order crash the process, so this
    # runs in a child process: a OdeEngine held by a cycle (as a service's bound methods make one),
    # released and then collected, many times over.
    import subprocess
    import sys

    script = (
        "import gc, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "from pathlib import Path\n"
        "from sim_helpers import box_body, floor_body, model, project\n"
        "from hrpsim.engines.ode.engine import OdeEngine\n"
        "class Holder:\n"
        "    def __init__(self, world):\n"
        "        self.world, self.me = world, self\n"
        "for _ in range(30):\n"
        "    proj, bodies = project(Path('.'), [(model('floor', static=True), floor_body()),\n"
        "                                      (model('box', position=(0, 0, 0.2)), box_body())])\n"
        "    holder = Holder(OdeEngine(proj, bodies))\n"
        "    for _ in range(20):\n"
        "        holder.world.step()\n"
        "    holder.world.reset()\n"
        "    holder.world.step()\n"
        "    holder.world.contacts.me = holder.world.contacts  # a cycle through the contact joints too\n"
        "    holder.world.release()\n"
        "    del holder\n"
        "    gc.collect()\n"
        "print('collected')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0 and "collected" in result.stdout, result.stderr[-2000:]


def test_quickstep_solver_when_the_project_asks_for_it(tmp_path: Path) -> None:
    proj, bodies = project(
        tmp_path,
        [(model("floor", static=True), floor_body()), (model("box", position=(0.0, 0.0, 0.5)), box_body())],
        solver="quickstep",
        quickstep_iterations=30,
    )
    world = OdeEngine(proj, bodies)
    run(world, 1.0)
    state = world.read("box")
    assert state.root_position[2] == pytest.approx(0.1, abs=3e-3)  # landed and resting
    assert np.abs(state.root_velocity).max() < 1e-2
