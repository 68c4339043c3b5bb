"""Camera frames/s, a 1081-ray scan, and lockstep ticks/s with a camera or a laser against none.

World: sample1.wrl on floor.wrl facing box.wrl (examples/sample_camera.yaml's scene), 1 ms step.
The camera is sample1's LeftCamera made 320x240 COLOR_DEPTH at 30 fps (RightCamera off); the laser
is examples/models/laser_post.wrl's, widened to 270 degrees in 0.25 degree steps (1081 beams) at 10 Hz.
`camera_frames_per_s`: the camera rendered in a loop (Mesa's software renderer through EGL);
`frame_in_ticks` is one frame's time over one tick's (`tick_us`, collide + integrate of the same
world). `scan_ms` / `scan_rays`: one laser scan; `scan_in_ticks` likewise.
`ticks_per_s_*`: lockstep runs through the real controller hub with a PD controller process holding
sample1 (as bench `tick`), with no sensors, with the camera rendered in the simulator's process
(`inline`), in a rendering process of its own (`process`), and with the laser; blocks of ticks
alternate between the five worlds (each round starting with the next) so they see the same machine
load. `*_ratio` = with / without (the mean of two worlds without sensors), the median of the rounds'
ratios. `none_again_ratio` compares those two equal worlds: how far apart they measure on this
machine at this time, the yardstick for the other ratios. Aim: `camera_process_ratio` >= 0.9.
"""

from __future__ import annotations

import copy
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import zmq

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "models" / "openhrp3" / "model"
LASER_POST = REPO / "examples" / "models" / "laser_post.wrl"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tick import External  # noqa: E402
from procs import nameserver_process  # noqa: E402

from hrpsim.bodyinfo import Body  # noqa: E402
from hrpsim.engines.ode.engine import OdeEngine  # noqa: E402
from hrpsim.modelloader import load_body  # noqa: E402
from hrpsim.naming import Registration, host_identity  # noqa: E402
from hrpsim.project import Project, parse_project  # noqa: E402
from hrpsim.rpc import DEFAULT_BIND  # noqa: E402
from hrpsim.simserver.range_sensors import RangeScanner  # noqa: E402
from hrpsim.simserver.vision_sensors import SceneRenderer  # noqa: E402
from hrpsim.simserver.world import World  # noqa: E402

TIMESTEP = 0.001
FRAMES = 60
SCANS = 10
TICKS = 500
BLOCK = 300
ROUNDS = 12
CONTROLLER = Path(__file__).resolve().parent / "tick_pd_controller.py"


def _bodies(camera: bool, laser: bool) -> dict[str, Body]:
    robot = copy.deepcopy(load_body(MODELS / "sample1.wrl"))
    for sensor in robot.sensors:
        if sensor.type == "vision":
            keep = camera and sensor.params.get("name") == "LeftCamera"
            sensor.params.update(type="COLOR_DEPTH" if keep else "NONE", imageType="COLOR_DEPTH" if keep else "NONE")
    post = copy.deepcopy(load_body(LASER_POST))
    post.sensors = [s for s in post.sensors if laser]
    for sensor in post.sensors:
        sensor.params.update(scanAngle=math.radians(270.0), scanStep=math.radians(0.25))
    scene = {name: load_body(MODELS / f"{name}.wrl") for name in ("floor", "box")}
    return {**scene, "robot": robot, "laser": post}


def _project(name: str, cameras: str) -> Project:
    data = {
        "world": {"timestep": TIMESTEP, "cameras": cameras},
        "models": [
            {"name": "floor", "file": str(MODELS / "floor.wrl"), "static": True, "position": [0, 0, -0.1]},
            {"name": "robot", "file": str(MODELS / "sample1.wrl"), "position": [0, 0, 0.7235], "drive": "torque"},
            {"name": "box", "file": str(MODELS / "box.wrl"), "static": True, "position": [1.55, -0.2, 0.9]},
            {"name": "laser", "file": str(LASER_POST), "position": [0, 0.8, 0], "drive": "high_gain"},
        ],
        "controllers": [{"name": f"pd-{name}", "robot": "robot", "command": "external", "deadline": 10.0}],
        "collisions": [{"a": "floor", "b": "robot", "friction": 0.5}],
    }
    return parse_project(data, str(Path(tempfile.gettempdir()) / f"bench_sensors_{name}.yaml"))


class Lockstep(External):
    """One world served by the real hub and loop under its own name, its PD controller a separate
    process (bench ``tick``'s External, registered so that several can run side by side)."""

    def __init__(self, name: str, bodies: dict[str, Body], cameras: str, nameserver: str, ctx: zmq.Context) -> None:
        project = _project(name, cameras)
        self.engine = OdeEngine(project, bodies)
        self.world = World(
            project, engine=self.engine, hub_bind=DEFAULT_BIND, context=ctx, record=False, end_time=math.inf
        )
        self.hub, self.loop = self.world.hub, self.world.loop
        metadata = {
            "controllers": self.hub.endpoint,
            "controllers_ipc": self.hub.ipc_endpoint,
            "controllers_unix": self.hub.unix_endpoint,
            "host": host_identity(),
            "robots": self.engine.robots,
        }
        self.reg = Registration(f"sim-{name}", "simserver", self.hub.endpoint, nameserver=nameserver, metadata=metadata)
        self.reg.start()
        env = {**os.environ, "PYTHONPATH": str(REPO), "HRPSIM_LOG_LEVEL": "WARNING"}
        argv = [
            str(CONTROLLER),
            "--robot",
            "robot",
            "--name",
            f"pd-{name}",
            "--nameserver",
            nameserver,
            "--simserver",
            f"sim-{name}",
            "--reconnect-wait",
            "0",
        ]
        self.log = Path(tempfile.gettempdir()) / f"bench_sensors_{name}.log"
        with self.log.open("w") as log:
            self.procs = [subprocess.Popen([sys.executable, *argv], env=env, stdout=log, stderr=log)]
        if self.hub.wait_for_controllers([f"pd-{name}"], 60.0):
            self.close()
            raise RuntimeError(f"the controller of {name} did not attach; its log: {self.log}")
        self.loop.begin()


def _per_call_s(call, count: int) -> float:
    call()
    start = time.perf_counter()
    for _ in range(count):
        call()
    return (time.perf_counter() - start) / count


def _alone() -> dict[str, float]:
    bodies = _bodies(camera=True, laser=True)
    world = OdeEngine(_project("alone", "inline"), bodies)
    states = world.link_states
    tick_s = _per_call_s(world.step, TICKS)
    renderer = SceneRenderer(bodies, {"robot"})
    try:
        frame_s = _per_call_s(lambda: renderer.render(["LeftCamera"], states), FRAMES)
    finally:
        renderer.close()
    scanner = RangeScanner(bodies, {"laser"})
    scan_s = _per_call_s(lambda: scanner.scan(["LASER"], states), SCANS)
    rays = float(len(scanner.sensors["LASER"].angles))
    return {
        "camera_frames_per_s": 1.0 / frame_s,
        "tick_us": tick_s * 1e6,
        "frame_in_ticks": frame_s / tick_s,
        "scan_ms": scan_s * 1e3,
        "scan_rays": rays,
        "scan_in_ticks": scan_s / tick_s,
    }


def _lockstep(nameserver: str, ctx: zmq.Context) -> dict[str, float]:
    worlds = {"none": Lockstep("none", _bodies(False, False), "inline", nameserver, ctx)}
    try:
        worlds["none_again"] = Lockstep("again", _bodies(False, False), "inline", nameserver, ctx)
        worlds["camera_inline"] = Lockstep("inline", _bodies(True, False), "inline", nameserver, ctx)
        worlds["camera_process"] = Lockstep("process", _bodies(True, False), "process", nameserver, ctx)
        worlds["laser"] = Lockstep("laser", _bodies(False, True), "inline", nameserver, ctx)
        for w in worlds.values():
            w.run(100)
        rates: dict[str, list[float]] = {name: [] for name in worlds}
        names = list(worlds)
        for round_ in range(ROUNDS):
            # each round starts with another world, so none always runs first after the others
            for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
                rates[name].append(worlds[name].run(BLOCK))
    finally:
        for w in worlds.values():
            w.close()
    out = {f"ticks_per_s_{name}": statistics.median(r) for name, r in rates.items()}
    out["none_again_ratio"] = statistics.median(a / b for a, b in zip(rates["none_again"], rates["none"], strict=True))
    baseline = [(a + b) / 2 for a, b in zip(rates["none"], rates["none_again"], strict=True)]
    for name in ("camera_inline", "camera_process", "laser"):
        out[f"{name}_ratio"] = statistics.median(a / b for a, b in zip(rates[name], baseline, strict=True))
    return out


def run() -> dict[str, float]:
    figures = _alone()
    ctx = zmq.Context()
    try:
        with nameserver_process() as nameserver:
            figures.update(_lockstep(nameserver, ctx))
    finally:
        ctx.destroy(linger=0)
    return {k: float(v) for k, v in figures.items() if np.isfinite(v)}


if __name__ == "__main__":
    for key, value in run().items():
        print(f"sensors.{key} = {value:.4g}")
