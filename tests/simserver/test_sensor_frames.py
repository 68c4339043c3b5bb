"""Sensor readings on the ticks their rates say, with the time they were taken; cameras rendered in
the simulator's process or in a rendering process of their own give the same images."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sensor_helpers import FORWARD, FRONT, ground, known_scene, range_sensor
from sensor_helpers import camera as camera_sensor
from sim_helpers import model, project

from hrpsim.controllers import Controller
from hrpsim.engines.ode.engine import OdeEngine
from hrpsim.errors import SimulationError
from hrpsim.modelloader import load_body
from hrpsim.simserver.sensor_delivery import SensorDelivery
from hrpsim.simserver.sensor_frames import SensorFrames
from hrpsim.simserver.world import World


def _run(tmp_path: Path, cameras: str, ticks: int) -> dict[int, dict]:
    proj, bodies = known_scene(tmp_path, [range_sensor("laser", FRONT), camera_sensor("eye", FORWARD)])
    world = OdeEngine(proj, bodies)
    frames = SensorFrames(bodies, proj.world.timestep, cameras=cameras)
    try:
        states = world.link_states
        return {k: got for k in range(ticks) if (got := frames.frames(k, k * proj.world.timestep, states))}
    finally:
        frames.close()


def test_readings_come_on_their_ticks_with_their_time(tmp_path: Path) -> None:
    got = _run(tmp_path, "inline", 101)
    assert sorted(got) == [0, 34, 67, 100]  # 30 fps camera; the 10 Hz laser at 0 and 100
    assert set(got[0]["stand"]) == {"laser", "eye"} and set(got[34]["stand"]) == {"eye"}
    eye = got[34]["stand"]["eye"]
    assert eye["time"] == 0.034 and eye["color"].shape == (240, 320, 3) and eye["depth"].shape == (240, 320)
    assert got[100]["stand"]["laser"]["time"] == 0.1 and len(got[100]["stand"]["laser"]["distances"]) == 201


def test_a_rendering_process_delivers_the_same_images_one_frame_later(tmp_path: Path) -> None:
    inline = _run(tmp_path / "inline", "inline", 101)
    separate = _run(tmp_path / "process", "process", 101)
    assert "eye" not in separate[0]["stand"]  # its image of tick 0 is still being rendered
    for tick, earlier in ((34, 0), (67, 34), (100, 67)):
        got = separate[tick]["stand"]["eye"]
        want = inline[earlier]["stand"]["eye"]
        assert got["time"] == want["time"]
        assert np.array_equal(got["color"], want["color"]) and np.array_equal(got["depth"], want["depth"])


def test_a_switched_off_sensor_gives_nothing(tmp_path: Path) -> None:
    proj, bodies = known_scene(tmp_path, [range_sensor("laser", FRONT), camera_sensor("eye", FORWARD)])
    world = OdeEngine(proj, bodies)
    frames = SensorFrames(bodies, proj.world.timestep)
    try:
        frames.switch("eye", on=False)
        got = frames.frames(0, 0.0, world.link_states)
        assert set(got["stand"]) == {"laser"}
    finally:
        frames.close()


def test_a_bad_camera_stops_the_run_naming_the_model_the_sensor_and_the_field(tmp_path: Path) -> None:
    proj, bodies = known_scene(tmp_path, [camera_sensor("eye", FORWARD, fieldOfView=4.0)])
    bodies["stand"].static = False  # a robot, so that its sensors are delivered
    proj.models[-1].static = False
    proj.world.cameras = "inline"
    engine = OdeEngine(proj, bodies)
    assert "stand" in engine.robots
    with pytest.raises(SimulationError, match=r"model 'stand' vision sensor 'eye': fieldOfView must be in"):
        SensorDelivery.for_world(engine)


def test_the_wam_models_laser_and_camera_give_readings(models_dir: Path, tmp_path: Path) -> None:
    wam = load_body(models_dir / "openrave" / "robots" / "barrett-wam-sensors.zae")
    proj, bodies = project(tmp_path, [(model("floor", static=True), ground()), (model("wam"), wam)])
    engine = OdeEngine(proj, bodies)
    frames = SensorFrames(bodies, proj.world.timestep, sensing={"wam"})
    try:
        got = frames.frames(0, 0.0, engine.link_states)["wam"]
    finally:
        frames.close()
    # the file gives the laser no scan fields: the format's defaults, 3.14159 rad in 0.1 rad steps
    assert got["base_laser"]["distances"].shape == (31,)
    assert np.all((got["base_laser"]["distances"] > 0) & (got["base_laser"]["distances"] <= 10.0))
    assert got["base_camera"]["color"].shape == (480, 640, 3)  # the file's 640x480 COLOR camera
    assert set(got["base_camera"]) == {"time", "color"}


def test_a_controller_running_every_other_tick_gets_each_frame_once_with_its_time(tmp_path: Path) -> None:
    proj, bodies = known_scene(tmp_path, [range_sensor("laser", FRONT, scanRate=300.0)])
    proj.world.timestep = 0.002  # a 300 Hz laser at 2 ms: frames at ticks 0, 2, 4, 5, 7, 9, 10, ...
    engine = OdeEngine(proj, bodies)
    delivery = SensorDelivery(SensorFrames(bodies, proj.world.timestep), engine.link_states)
    produced, received = [], []
    try:
        for tick in range(40):
            delivery.produce(tick, tick * 0.002)
            if delivery.frames.schedule.is_due("laser", tick):
                produced.append(tick * 0.002)
            if tick % 2 == 0:  # this controller's turn
                received += [r["time"] for r in delivery.take("every_other", "stand").values()]
    finally:
        delivery.close()
    odd = [t for t in produced if round(t / 0.002) % 2]
    assert odd and set(received) < set(produced)  # two frames before one turn: the controller gets the later
    assert received == sorted(set(received))  # none twice, in order
    turns = {(round(t / 0.002) + 1) // 2 * 2 for t in produced}  # the first even tick at or after each frame
    assert len(received) == len([turn for turn in turns if turn < 40])  # one reading per turn after a frame


def test_after_a_reset_no_reading_of_the_run_before_is_delivered(tmp_path: Path) -> None:
    proj, bodies = known_scene(tmp_path, [range_sensor("laser", FRONT), camera_sensor("eye", FORWARD)])
    engine = OdeEngine(proj, bodies)
    frames = SensorFrames(bodies, proj.world.timestep, cameras="process")
    delivery = SensorDelivery(frames, engine.link_states)
    try:
        for tick in range(35):  # the camera's frame of tick 34 is out being rendered when the world resets
            delivery.produce(tick, tick * 0.001)
        delivery.take("watcher", "stand")
        frames.switch("laser", on=False)
        delivery.produce(0, 0.0)  # tick 0 again: a reset
        assert delivery.take("late_comer", "stand") == {}  # neither the old laser scan nor the old image
        for tick in range(1, 35):
            delivery.produce(tick, tick * 0.001)
        assert delivery.take("late_comer", "stand")["eye"]["time"] == 0.0  # the new run's first image
    finally:
        delivery.close()


class _Watcher(Controller):
    """In process: notes each laser reading's time; switches the laser off after t = 0.2."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def control(self, state):
        if "laser" in state.sensors:
            self.times.append(state.sensors["laser"]["time"])
        return self.command().sensor("laser", False) if state.time >= 0.2 - 1e-9 else None


def test_an_in_process_controller_gets_readings_and_switches_a_sensor_off(tmp_path: Path) -> None:
    proj, bodies = known_scene(tmp_path, [range_sensor("laser", FRONT)])
    bodies["stand"].static = proj.models[-1].static = False  # a robot, so that a controller can drive it
    world = World(proj, bodies=bodies, record=False)
    watcher = _Watcher()
    try:
        world.attach(watcher, name="watcher", robot="stand")
        world.step(350)
    finally:
        world.close()
    assert watcher.times == pytest.approx([0.0, 0.1, 0.2])
