"""Every sensor type is one descriptor (hrpsim/sensor_types.py): the model readers' names for it, the
engines' measurements, the device noise, the recording's text, plot axes and ROS 2 messages all read
the table. A type added in the test (a velocimeter) is its descriptor plus one measuring class per
physics engine, and a model file's sensor of that type is then read, measured and recorded."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import mujoco
import numpy as np
import pytest
from lxml import etree
from sim_helpers import PHYSICS_ENGINES, build, model, run, sensing_box_body

from hrpsim import sensor_types
from hrpsim.bodyinfo import Sensor
from hrpsim.engine_registry import ENGINES
from hrpsim.engines.mujoco.sensors import MujocoGyro
from hrpsim.modelloader import load_body
from hrpsim.modelloader.body_devices import is_device
from hrpsim.modelloader.collada_sensors import sensor_types as collada_types
from hrpsim.modelloader.mjcf_parts import sensor_type_of
from hrpsim.modelloader.openhrp_sensors import sensor_protos
from hrpsim.project import noise_kinds
from hrpsim.recording import schemas
from hrpsim.sensor_types import SENSOR_TYPES, Aliases, Param, SensorType, engine_sensor_types


def _named(fmt: str) -> dict[str, set[str]]:
    """What the descriptors say model format ``fmt`` calls each type: its name -> the types."""
    named: dict[str, set[str]] = {}
    for kind in SENSOR_TYPES.values():
        for alias in getattr(kind.aliases, fmt):
            named.setdefault(alias, set()).add(kind.name)
    return named


def test_the_model_readers_know_the_names_the_descriptors_give():
    assert {proto: {kind} for proto, kind in sensor_protos().items()} == _named("vrml")
    assert all(is_device(device) for device in _named("body"))
    for alias, kinds in _named("collada").items():
        for written in (alias, alias.replace("_", "").upper()):  # the spec's name and OpenRAVE's
            assert set(collada_types(etree.Element("sensor", type=written))) == kinds, written
    for alias, kinds in _named("mjcf").items():
        assert sensor_type_of(mujoco, int(getattr(mujoco.mjtSensor, f"mjSENS_{alias.upper()}"))) == (alias, *kinds)


def test_noise_the_state_schema_and_the_ros2_messages_come_from_the_descriptors():
    assert noise_kinds() == ("q", *engine_sensor_types())
    described = schemas.ROBOT_STATE["properties"]["sensors"]["description"]
    for kind in SENSOR_TYPES.values():
        if kind.axes:
            assert kind.name in described and " ".join(kind.axes) in described
    pytest.importorskip("rosbags")
    from hrpsim.recording.ros2_bag import _reading_messages

    body = sensing_box_body()
    per_sensor, per_link = _reading_messages("box", body)
    carried = {s.type: m.type for m in [*per_sensor.values(), *per_link] for s in body.sensors if s.name in _filling(m)}
    assert carried == {
        s.type: SENSOR_TYPES[s.type].ros2.message.type for s in body.sensors if SENSOR_TYPES[s.type].ros2
    }


def _filling(message) -> set[str]:  # -> the names of the sensors whose readings fill the message
    return {name for name, _ in message.fills.values()}


def test_a_descriptor_that_clashes_is_refused_naming_what_clashes():
    with pytest.raises(ValueError, match=r"'gyro'.*exists already.*'Gyro' is the 'gyro' type's"):
        sensor_types.register(SensorType("gyro", ("x",), by_engine=True, aliases=Aliases(vrml=("Gyro",))))
    with pytest.raises(ValueError, match="reading at rest has 2 values, its reading 3"):
        sensor_types.register(SensorType("odd", ("x", "y", "z"), by_engine=True, rest_per_g=(0.0, 1.0)))
    assert "odd" not in SENSOR_TYPES


# --- a type added as a new one would be: its descriptor, and one measuring class per engine ---

VELOCIMETER = SensorType(
    "velocimeter",
    ("vx", "vy", "vz"),
    by_engine=True,
    params=(Param("maxVelocity", "vec3", (-1.0, -1.0, -1.0)),),
    aliases=Aliases(vrml=("VelocitySensor",), body=("VelocitySensor",), mjcf=("velocimeter",)),
)


class MujocoVelocimeter(MujocoGyro):
    """MuJoCo's velocimeter on the sensor's site: the site's linear velocity in its frame, now."""

    types = ("velocimeter",)
    elements = (mujoco.mjtSensor.mjSENS_VELOCIMETER,)


class OdeVelocimeter:
    """The sensor point's linear velocity in the sensor frame, from the ODE body of its link."""

    types = ("velocimeter",)
    steps = False

    def __init__(self, model, sensors: list[Sensor], timestep: float, gravity: np.ndarray) -> None:
        from hrpsim.engines.ode.sensors import OdeLinkMotion

        self.motion = OdeLinkMotion(model)
        self.sensors = [s for s in sensors if model.links[s.link].body is not None]

    def read(self, out: dict[str, np.ndarray], stepped: bool) -> None:
        for s in self.sensors:
            world = np.asarray(self.motion.point_velocity(s.link, tuple(s.translation)))
            link = np.asarray(self.motion.rotation(s.link)).reshape(3, 3)
            out[s.name] = np.asarray(s.rotation).T @ link.T @ world

    def memory(self) -> list:
        return []

    def restore(self, memory: list) -> None:
        pass


MEASURING = {"mujoco": MujocoVelocimeter, "ode": OdeVelocimeter}

BODY = """format: ChoreonoidBody
format_version: 2.0
name: probe
root_link: BOX
links:
  - name: BOX
    joint_type: free
    mass: 2.0
    inertia: [0.02, 0, 0, 0, 0.02, 0, 0, 0, 0.02]
    elements:
      - {type: Shape, geometry: {type: Box, size: [0.2, 0.2, 0.2]}}
      - {type: VelocitySensor, name: VEL, id: 0, translation: [0.05, 0, 0], maxVelocity: [3, 3, 3]}
"""


@pytest.fixture
def velocimeter(monkeypatch: pytest.MonkeyPatch) -> Iterator[SensorType]:
    for engine in PHYSICS_ENGINES:  # an engine without its measurement fails here, naming itself
        measured = importlib.import_module(f"{ENGINES[engine]}.sensors").MEASURED
        monkeypatch.setitem(measured, VELOCIMETER.name, MEASURING[engine])
    sensor_types.register(VELOCIMETER)
    try:
        yield VELOCIMETER
    finally:
        sensor_types.unregister(VELOCIMETER.name)


@pytest.mark.parametrize("engine", [*PHYSICS_ENGINES, "kinematic"])
def test_a_new_type_is_its_descriptor_and_each_engines_measurement(
    engine: str, velocimeter: SensorType, tmp_path: Path
) -> None:
    path = tmp_path / "probe.body"
    path.write_text(BODY)
    body = load_body(path)
    (sensor,) = body.sensors
    assert (sensor.name, sensor.type, sensor.params["maxVelocity"]) == ("VEL", "velocimeter", [3.0, 3.0, 3.0])
    assert "velocimeter" in noise_kinds() and "velocimeter" in engine_sensor_types()

    world = build(engine, tmp_path, [(model("probe", position=(0, 0, 2.0)), body)])
    run(world, 0.1)  # falling freely, nothing below
    reading = world.read("probe").sensors["VEL"]
    assert reading.shape == (3,)
    if engine == "kinematic":
        assert list(reading) == [0.0, 0.0, 0.0]  # the stand-in reads every type at rest
    else:
        np.testing.assert_allclose(reading, [0.0, 0.0, -9.8 * 0.1], atol=0.03)
    assert "vx vy vz" in sensor_types.reading_layouts()
