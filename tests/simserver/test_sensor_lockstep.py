"""sample1's two cameras and a laser in a lockstep run of the whole stack (`hrpsim launch`: name
server, model loader, simulator, controller processes): frames arrive with their time stamps, a
controller switches its laser off, and two identical runs give identical images."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from controller_helpers import EXAMPLES, write_controller, write_project
from PIL import Image
from process_helpers import launch_summary

LASER_WATCH = """
    import json
    import sys
    from pathlib import Path

    import numpy as np
    from hrpsim.controllers import Controller, run_main

    class LaserWatch(Controller):
        '''Writes every LASER reading's time and nearest distance; switches the laser off after t = 0.2.'''

        def __init__(self, *, out: str) -> None:
            super().__init__()
            self.out, self.seen = Path(out), []

        def control(self, state):
            reading = state.sensors.get("LASER")
            if reading is not None:
                self.seen.append([reading["time"], float(np.min(reading["distances"]))])
                self.out.write_text(json.dumps(self.seen))
            if state.time >= 0.2 - 1e-9:
                return self.command().sensor("LASER", False)
            return None

    if __name__ == "__main__":
        sys.exit(run_main(LaserWatch))
"""


def _run(tmp_path: Path, cameras: str = "inline") -> Path:
    laser_watch = write_controller(tmp_path, "laser_watch", LASER_WATCH)
    project = write_project(
        tmp_path,
        f"""
        world: {{timestep: 0.002, end_time: 0.5, sync: lockstep, cameras: {cameras}}}
        models:
          - {{name: floor, file: {{models}}/floor.wrl, static: true, position: [0, 0, -0.1]}}
          - {{name: robot, file: {{models}}/sample1.wrl, position: [0, 0, 0.7235], drive: high_gain}}
          - {{name: box, file: {{models}}/box.wrl, static: true, position: [1.55, -0.2, 0.9]}}
          - {{name: laser, file: {EXAMPLES}/models/laser_post.wrl, position: [0, 0.8, 0], drive: high_gain}}
        controllers:
          - {{name: eyes, robot: robot, period: 0.002, deadline: 30.0, command: "python
              {EXAMPLES}/controllers/camera_watch.py -o camera=LeftCamera,RightCamera -o every=0.1
              -o out={tmp_path}/frames"}}
          - {{name: ranger, robot: laser, period: 0.002, deadline: 30.0,
              command: "python {laser_watch} -o out={tmp_path}/laser.json"}}
        collisions:
          - {{a: floor, b: robot, friction: 0.5}}
    """,
    )
    launch_summary(project, tmp_path, timeout=300)  # asserts the run ended well
    return tmp_path


def _frames(run: Path) -> dict[str, np.ndarray]:
    return {p.name: np.asarray(Image.open(p)) for p in sorted((run / "frames").glob("*.png"))}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("first"))


def test_both_cameras_of_sample1_produce_frames_in_a_lockstep_run(first_run: Path) -> None:
    frames = _frames(first_run)
    times = [f"{t:07.3f}" for t in np.arange(0.0, 0.5, 0.1)]
    assert sorted(frames) == sorted(f"{c}-{t}.png" for c in ("LeftCamera", "RightCamera") for t in times)
    left = frames["LeftCamera-000.000.png"]
    assert left.shape == (240, 320, 3)
    # box.wrl's green box ahead, floor.wrl's blue floor below; the two eyes 10 cm apart see them differently
    green = (left[..., 1] > 150) & (left[..., 0] < 80) & (left[..., 2] < 80)
    blue = (left[..., 2] > 100) & (left[..., 0] < 50) & (left[..., 1] < 50)
    assert green.sum() > 2000 and blue[-1].all() and not blue[0].any()
    assert not np.array_equal(left, frames["RightCamera-000.000.png"])


def test_a_controller_switches_its_laser_off(first_run: Path) -> None:
    import json

    seen = json.loads((first_run / "laser.json").read_text())
    assert [t for t, _ in seen] == pytest.approx([0.0, 0.1, 0.2])  # 10 Hz; off after t = 0.2
    assert all(0.3 < nearest < 0.8 for _, nearest in seen)  # sample1's arm, 0.8 m from the pole's axis


def test_two_identical_runs_give_identical_images(first_run: Path, tmp_path: Path) -> None:
    again = _frames(_run(tmp_path))
    first = _frames(first_run)
    assert sorted(again) == sorted(first)
    assert all(np.array_equal(first[name], again[name]) for name in first)


def test_cameras_in_their_own_process_give_the_same_images(first_run: Path, tmp_path: Path) -> None:
    separate = _frames(_run(tmp_path, cameras="process"))
    first = _frames(first_run)
    # the process delivers each image one frame later, still stamped with the time it was taken
    assert sorted(separate) == sorted(first)
    assert all(np.array_equal(first[name], separate[name]) for name in first)
