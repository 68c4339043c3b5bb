"""The camera rendering process: a real child process over a real ZeroMQ socket, which leaves when
the simulator that started it is gone and says why it could not start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import psutil
import pytest
from sensor_helpers import FORWARD, camera, stand

from hrpsim.errors import ConfigError
from hrpsim.simserver.render_process import RenderProcess

SIMULATOR = """
    import sys, time
    sys.path.insert(0, {tests!r})
    from sensor_helpers import FORWARD, camera, stand
    from hrpsim.simserver.render_process import RenderProcess

    process = RenderProcess({{"stand": stand([camera("eye", FORWARD)])}})
    print(process.child.pid, flush=True)
    time.sleep(120)
"""


def test_the_rendering_process_leaves_when_the_simulator_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "simulator.py"
    script.write_text(textwrap.dedent(SIMULATOR.format(tests=str(Path(__file__).resolve().parents[1]))))
    simulator = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        child = psutil.Process(int(simulator.stdout.readline()))
        assert child.is_running() and child.ppid() == simulator.pid
        os.kill(simulator.pid, signal.SIGKILL)
        simulator.wait(10)
        gone, _ = psutil.wait_procs([child], timeout=30)  # it checks for its parent every second
        assert gone == [child]
    finally:
        if simulator.poll() is None:
            simulator.kill()


def test_a_camera_the_renderer_refuses_is_reported_by_the_simulator() -> None:
    body = stand([camera("eye", FORWARD, width=0)])
    with pytest.raises(ConfigError, match=r"rendering process could not start: .*'eye': width must be"):
        RenderProcess({"stand": body})


def test_frames_come_back_in_the_order_they_were_sent() -> None:
    process = RenderProcess({"stand": stand([camera("eye", FORWARD)])})
    try:
        assert process.cameras == ["eye"]
        assert process.collect() is None  # nothing outstanding
        for tick in (0, 34):
            process.submit(tick, tick * 0.001, ["eye"], {"stand": np.eye(4)[None]})
            answer = process.collect()
            assert answer["tick"] == tick and answer["time"] == tick * 0.001
            assert answer["images"]["eye"]["color"].shape == (240, 320, 3)
    finally:
        process.close()
    assert process.child.poll() == 0  # it stopped when asked
