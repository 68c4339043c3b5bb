"""A controller written in C (examples/c, libzmq + msgpack-c) holds sample1's pose against the real
simulator: the protocol as docs/protocol.md writes it is enough to write one without Python."""

from __future__ import annotations

import subprocess

from controller_helpers import EXAMPLES
from process_helpers import REPO, spawn, wait_registered

from hrpsim.client import Client


def test_the_c_controller_holds_sample1_and_leaves_on_bye(nameserver, tmp_path):
    binary = tmp_path / "hold_pose"
    build = subprocess.run(
        ["make", "-s", "-C", str(EXAMPLES / "c"), f"OUT={binary}"], capture_output=True, text=True, timeout=120
    )
    assert build.returncode == 0, build.stderr
    loader = spawn(["run", "modelloader", "--nameserver", nameserver], tmp_path / "loader.log")
    sim = spawn(
        [
            "run",
            "simserver",
            "--project",
            str(EXAMPLES / "sample_hold.yaml"),
            "--until",
            "1.0",
            "--nameserver",
            nameserver,
            "--start",
        ],
        tmp_path / "sim.log",
    )
    try:
        wait_registered(nameserver, "modelloader", loader)
        entry = wait_registered(nameserver, "simserver", sim)
        controller = subprocess.run(
            [str(binary), nameserver, "robot", "hold", "400", "20"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert controller.returncode == 0, controller.stdout + controller.stderr + sim.log_text()
        assert "bye after 500 ticks: the run reached its end" in controller.stdout
        with Client(entry["endpoint"], peer="simserver", timeout=5.0) as client:
            summary = client.call("summary")
        assert summary["controllers"]["hold"]["ticks"] == 500 and summary["error"] is None
        robot = summary["robots"]["robot"]
        assert robot["min_root_z"] > 0.7  # it stood: sample1's root starts at 0.7235
    finally:
        sim.stop()
        loader.stop()
