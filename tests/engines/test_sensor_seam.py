"""A sensor type measured by engines is one descriptor in the kernel's table (hrpsim.sensor_types)
plus one class per engine (each engine's sensors module, ``MEASURED``): every engine measures every
such type, and gives each reading the size the table says."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from sim_helpers import PHYSICS_ENGINES, build, floor_body, model, sensing_box_body

from hrpsim.engine_registry import ENGINES
from hrpsim.sensor_types import SENSOR_TYPES, engine_sensor_types


@pytest.mark.parametrize("engine", PHYSICS_ENGINES)
def test_each_engine_has_one_class_for_every_type_engines_measure(engine: str) -> None:
    measured = importlib.import_module(f"{ENGINES[engine]}.sensors").MEASURED  # the engine's sensors module
    assert sorted(measured) == sorted(engine_sensor_types())
    for kind, cls in measured.items():
        assert kind in cls.types


@pytest.mark.parametrize("engine", [*PHYSICS_ENGINES, "kinematic"])
def test_every_reading_has_the_values_its_type_names(engine: str, tmp_path: Path) -> None:
    body = sensing_box_body()
    assert {s.type for s in body.sensors} == set(engine_sensor_types())  # one of each
    world = build(
        engine, tmp_path, [(model("floor", static=True), floor_body()), (model("box", position=(0, 0, 0.12)), body)]
    )
    world.step()
    readings = world.read("box").sensors
    assert sorted(readings) == sorted(s.name for s in body.sensors)
    for sensor in body.sensors:
        assert readings[sensor.name].shape == (len(SENSOR_TYPES[sensor.type].axes),), sensor.name
