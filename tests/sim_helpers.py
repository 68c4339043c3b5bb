"""Small BodyInfo models and projects for simulator tests (no model loader needed)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from process_helpers import MODELS

from hrpsim.bodyinfo import Body, Link, Sensor, Shape
from hrpsim.engine_registry import engine_names, physics_engines
from hrpsim.kinematics import forward_kinematics, link_values, starting_joints
from hrpsim.placement import root_placement
from hrpsim.project import CollisionPair, ModelConfig, Project, WorldConfig

SAMPLE1 = MODELS / "openhrp3" / "model" / "sample1.wrl"
FLOOR = MODELS / "openhrp3" / "model" / "floor.wrl"
CLOSED_LINK = MODELS / "openhrp3" / "model" / "closed-link-sample.wrl"


# A URDF pendulum: a rod of {mass} kg hanging from a continuous joint about Y, its COM {half} m below.
PENDULUM_URDF_TEMPLATE = """<?xml version="1.0"?>
<robot name="pendulum">
  <link name="world"/>
  <link name="base"/>
  <joint name="mount" type="fixed"><parent link="world"/><child link="base"/></joint>
  <link name="rod">
    <inertial>
      <origin xyz="0 0 -{half}"/>
      <mass value="{mass}"/>
      <inertia ixx="{i}" iyy="{i}" izz="0.0001" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <joint name="swing" type="continuous">
    <parent link="base"/><child link="rod"/><axis xyz="0 1 0"/>
  </joint>
</robot>
"""


def box_inertia(mass: float, size: tuple[float, float, float]) -> np.ndarray:
    x, y, z = size
    return np.diag([mass * (y * y + z * z) / 12, mass * (x * x + z * z) / 12, mass * (x * x + y * y) / 12])


def floor_body(size: float = 20.0) -> Body:
    """A static slab whose top face is at z = 0 in its own frame."""
    shape = Shape("box", translation=np.array([0.0, 0.0, -0.05]), size=np.array([size, size, 0.1]))
    return Body("floor", links=[Link("BASE", joint_type="fixed", shapes=[shape])], static=True)


def floor_under(body: Body, config: ModelConfig, gap: float) -> tuple[ModelConfig, Body]:
    """A 50 m static floor ``gap`` below the lowest point of a model in its starting pose."""
    return model("floor", static=True, position=(0.0, 0.0, lowest_point(body, config) - gap)), floor_body(50.0)


def lowest_point(body: Body, config: ModelConfig) -> float:
    """A height no shape of the model reaches below in its starting pose (each shape within a
    sphere round its origin)."""
    values = link_values(body, starting_joints(body, config.joints))
    poses = forward_kinematics(body, *root_placement(config, body), values)
    lowest = [
        position[2] + (rotation @ shape.translation)[2] - reach(shape)
        for (position, rotation), link in zip(poses, body.links, strict=True)
        for shape in link.shapes
    ]
    return min(lowest, default=min(p[2] for p, _ in poses))


def reach(shape: Shape) -> float:
    if shape.kind == "mesh" and len(shape.vertices):
        return float(np.linalg.norm(shape.vertices, axis=1).max())
    if shape.kind == "box":
        return float(np.linalg.norm(shape.size)) / 2.0
    return float(shape.radius + shape.height / 2.0)


def box_body(mass: float = 10.0, size: tuple[float, float, float] = (0.2, 0.2, 0.2)) -> Body:
    """A free box, its frame at its centre."""
    link = Link(
        "BOX", joint_type="free", mass=mass, inertia=box_inertia(mass, size), shapes=[Shape("box", size=np.array(size))]
    )
    return Body("box", links=[link])


def sensing_box_body(mass: float = 10.0, sole_mass: float = 0.5) -> Body:
    """A box on a thin sole plate, fixed to it; a force sensor at the joint, a gyro and an
    accelerometer on the box. The box frame is at its centre (0.2 m cube); the sole is 2 cm thick."""
    box = Link(
        "BOX",
        joint_type="free",
        mass=mass,
        inertia=box_inertia(mass, (0.2, 0.2, 0.2)),
        shapes=[Shape("box", size=np.array([0.2, 0.2, 0.2]))],
    )
    sole = Link(
        "SOLE",
        parent=0,
        joint_type="fixed",
        translation=np.array([0.0, 0.0, -0.1]),
        mass=sole_mass,
        com=np.array([0.0, 0.0, -0.01]),
        inertia=box_inertia(sole_mass, (0.2, 0.2, 0.02)),
        shapes=[Shape("box", translation=np.array([0.0, 0.0, -0.01]), size=np.array([0.2, 0.2, 0.02]))],
    )
    sensors = [
        Sensor("FS", "force", 0, 1),
        Sensor("GYRO", "gyro", 0, 0),
        Sensor("ACC", "accel", 0, 0, translation=np.array([0.05, 0.0, 0.0])),
    ]
    return Body("sensing_box", links=[box, sole], sensors=sensors)


def pendulum_body(mass: float = 1.0, length: float = 0.5, rod_radius: float = 0.02) -> Body:
    """A fixed base with one hinge about Y; the bob is a uniform rod hanging down (COM at -length/2)."""
    base = Link("BASE", joint_type="fixed", mass=1.0, inertia=np.eye(3) * 0.01)
    ixx = mass * length**2 / 12 + mass * rod_radius**2 / 4
    rod = Link(
        "ROD",
        parent=0,
        joint_type="rotate",
        joint_axis=np.array([0.0, 1.0, 0.0]),
        joint_id=0,
        mass=mass,
        com=np.array([0.0, 0.0, -length / 2]),
        inertia=np.diag([ixx, ixx, mass * rod_radius**2 / 2]),
        torque_upper=50.0,
        torque_lower=-50.0,
    )
    return Body("pendulum", links=[base, rod])


def folded_chain(width: float = 0.05) -> Body:
    """Three 0.3 m links (boxes ``width`` wide along their Y hinges); folded by 2.8 rad twice, the
    third lies across the first."""

    def rod(name: str, parent: int, joint_id: int, x: float) -> Link:
        return Link(
            name,
            parent=parent,
            joint_type="rotate" if parent >= 0 else "fixed",
            joint_axis=np.array([0.0, 1.0, 0.0]),
            joint_id=joint_id,
            translation=np.array([x, 0.0, 0.0]),
            mass=1.0,
            com=np.array([0.15, 0.0, 0.0]),
            inertia=np.eye(3) * 0.01,
            shapes=[Shape("box", translation=np.array([0.15, 0.0, 0.0]), size=np.array([0.3, width, 0.05]))],
        )

    return Body("chain", links=[rod("L0", -1, -1, 0.0), rod("L1", 0, 0, 0.3), rod("L2", 1, 1, 0.3)])


def project(
    tmp: Path,
    models: list[tuple[ModelConfig, Body]],
    *,
    timestep: float = 0.001,
    collisions: list[CollisionPair] | None = None,
    **world: object,
) -> tuple[Project, dict[str, Body]]:
    """A Project object (no file) and its bodies, for building an engine directly. ``world`` holds
    WorldConfig fields, engine sections by name (``mujoco={...}``), and ODE settings (``erp=...``)."""
    fields = {f.name for f in dataclasses.fields(WorldConfig)}
    sections = {k: dict(v) for k, v in world.items() if k in engine_names()}  # type: ignore[call-overload]
    ode = {k: v for k, v in world.items() if k not in fields and k not in sections}
    if ode:
        sections["ode"] = {**sections.get("ode", {}), **ode}
    rest = {k: v for k, v in world.items() if k in fields}
    cfg = WorldConfig(timestep=timestep, engine_settings=sections, **rest)  # type: ignore[arg-type]
    proj = Project(path=str(tmp / "test.yaml"), world=cfg, models=[m for m, _ in models], collisions=collisions or [])
    return proj, {m.name: b for m, b in models}


def model(
    name: str,
    *,
    position: tuple[float, float, float] = (0.0, 0.0, 0.0),
    static: bool = False,
    rotation: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 0.0),
    **kw: object,
) -> ModelConfig:
    return ModelConfig(
        name=name, file=f"/{name}.wrl", static=static, position=list(position), rotation=list(rotation), **kw
    )  # type: ignore[arg-type]


# --- model files and a simulator process, for tests across processes ---

BOX_URDF = """<?xml version="1.0"?>
<robot name="box">
  <link name="body">
    <inertial><mass value="{mass}"/>
      <inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
</robot>
"""

FLOOR_URDF = """<?xml version="1.0"?>
<robot name="floor">
  <link name="slab">
    <collision><origin xyz="0 0 -0.05"/><geometry><box size="20 20 0.1"/></geometry></collision>
  </link>
</robot>
"""


def write_box_drop_project(
    folder: Path, *, height: float = 1.0, end_time: float = 1.5, publish_every: int = 10, mass: float = 10.0
) -> Path:
    """A project file dropping a 0.2 m box from ``height`` onto a floor, models loaded in-process."""
    (folder / "box.urdf").write_text(BOX_URDF.format(mass=mass, i=mass * 0.08 / 12))
    (folder / "floor.urdf").write_text(FLOOR_URDF)
    path = folder / "box_drop.yaml"
    path.write_text(
        f"world: {{timestep: 0.001, end_time: {end_time}, publish_every: {publish_every}}}\n"
        "services: {loader: local}\n"
        "models:\n"
        "  - {name: floor, file: floor.urdf, static: true}\n"
        f"  - {{name: box, file: box.urdf, position: [0, 0, {height}]}}\n"
        "collisions:\n"
        "  - {a: floor, b: box, friction: 0.5}\n"
    )
    return path


def start_simserver(
    folder: Path, nameserver: str, project_file: Path, *extra: str, timeout: float = 30.0
):  # -> tuple[ManagedProcess, Client, dict]
    """A real ``hrpsim run simserver`` process, once registered: (process, client, registration)."""
    import time

    from process_helpers import spawn

    from hrpsim.client import Client
    from hrpsim.errors import NotFound
    from hrpsim.naming import NameClient

    proc = spawn(
        ["run", "simserver", "--project", str(project_file), "--nameserver", nameserver, *extra],
        folder / "simserver.log",
    )
    deadline = time.monotonic() + timeout
    with NameClient(nameserver) as ns:
        while True:
            try:
                entry = ns.resolve("simserver")
                break
            except NotFound:
                if proc.popen.poll() is not None or time.monotonic() > deadline:
                    proc.stop()
                    raise RuntimeError(f"simserver did not register:\n{proc.log_text()}") from None
                time.sleep(0.05)
    return proc, Client(entry["endpoint"], peer="simserver", timeout=10.0), entry


def wait_finished(client, timeout: float = 60.0) -> dict:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.call("status")
        if status["finished"]:
            return status
        time.sleep(0.05)
    raise TimeoutError(f"the simulation did not finish within {timeout} s: {status}")


def four_bar_body(loop_type: str = "ball") -> Body:
    """Two 0.5 m rods hanging from a fixed base on parallel Y hinges 0.3 m apart, with a 0.3 m
    coupler hinged (passive, no jointId) at the first rod's tip; an extra joint of ``loop_type`` closes the loop at the
    second rod's tip: a parallelogram, so both rods keep the same angle."""
    from hrpsim.bodyinfo import ExtraJoint

    base = Link("BASE", joint_type="fixed", mass=1.0, inertia=np.eye(3) * 0.01)
    y_axis = np.array([0.0, 1.0, 0.0])
    rod_inertia = np.diag([1.0 * 0.25 / 12, 1.0 * 0.25 / 12, 1e-4])
    rod_a = Link(
        "A",
        parent=0,
        joint_type="rotate",
        joint_axis=y_axis,
        joint_id=0,
        mass=1.0,
        com=np.array([0.0, 0.0, -0.25]),
        inertia=rod_inertia,
    )
    rod_b = Link(
        "B",
        parent=0,
        joint_type="rotate",
        joint_axis=y_axis,
        joint_id=1,
        translation=np.array([0.3, 0, 0]),
        mass=1.0,
        com=np.array([0.0, 0.0, -0.25]),
        inertia=rod_inertia,
    )
    coupler = Link(
        "C",
        parent=1,
        joint_type="rotate",
        joint_axis=y_axis,
        translation=np.array([0.0, 0.0, -0.5]),
        mass=0.5,
        com=np.array([0.15, 0.0, 0.0]),
        inertia=np.eye(3) * 1e-3,
    )
    loop = ExtraJoint(
        "AB",
        link1="C",
        link2="B",
        type=loop_type,
        axis=y_axis,
        point1=np.array([0.3, 0.0, 0.0]),
        point2=np.array([0.0, 0.0, -0.5]),
    )
    return Body("four_bar", links=[base, rod_a, coupler, rod_b], extra_joints=[loop])


def crawler_body() -> Body:
    """A 5 kg chassis riding on a crawler track (a box below it) whose axis is Y."""
    chassis = Link(
        "CHASSIS",
        joint_type="free",
        mass=5.0,
        inertia=box_inertia(5.0, (0.4, 0.3, 0.1)),
        shapes=[Shape("box", size=np.array([0.4, 0.3, 0.1]))],
    )
    track = Link(
        "TRACK",
        parent=0,
        joint_type="crawler",
        joint_axis=np.array([0.0, 1.0, 0.0]),
        joint_id=0,
        translation=np.array([0.0, 0.0, -0.1]),
        mass=1.0,
        inertia=box_inertia(1.0, (0.4, 0.3, 0.05)),
        shapes=[Shape("box", size=np.array([0.4, 0.3, 0.05]))],
    )
    return Body("crawler", links=[chassis, track])


PENDULUM_URDF = """<?xml version="1.0"?>
<robot name="pendulum">
  <link name="world"/>
  <link name="rod">
    <inertial><origin xyz="0 0 -0.25"/><mass value="1"/>
      <inertia ixx="0.0209" iyy="0.0209" izz="0.0002" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="swing" type="continuous">
    <parent link="world"/><child link="rod"/><axis xyz="0 1 0"/>
  </joint>
</robot>
"""


def pendulum_urdf_project(folder: Path, *, controller: str, end_time: float, start_angle: float) -> Path:
    """A torque-driven pendulum (1 kg, 0.5 m) and one controller slot named ``controller``."""
    (folder / "pendulum.urdf").write_text(PENDULUM_URDF)
    path = folder / "pendulum.yaml"
    path.write_text(
        f"world: {{timestep: 0.001, end_time: {end_time}, sync: lockstep}}\n"
        "services: {loader: local}\n"
        f"models:\n  - {{name: pend, file: pendulum.urdf, joints: {{swing: {start_angle}}}}}\n"
        f"controllers:\n  - {{name: {controller}, robot: pend, command: 'started by the test', period: 0.001,"
        " deadline: 10.0}\n"
    )
    return path


def ode_engine(proj: Project, bodies: dict[str, Body], **options: object):  # -> the ODE engine
    """The ODE engine built in-process on a project: the one place tests name its class."""
    from hrpsim.engines.ode.engine import OdeEngine

    return OdeEngine(proj, bodies, **options)  # type: ignore[arg-type]


# --- every physics engine through the engine boundary (the conformance suite) ---

PHYSICS_ENGINES = physics_engines()  # every registered engine that simulates dynamics


def build(engine: str, tmp: Path, models: list[tuple[ModelConfig, Body]], **world: object):  # -> Engine
    """The named engine built through make_engine for a Project object (see :func:`project`)."""
    from hrpsim.engines.base import make_engine

    proj, bodies = project(tmp, models, engine=engine, **world)
    return make_engine(proj, bodies)


def run(world, seconds: float) -> None:
    """Step an engine for ``seconds`` of simulated time."""
    for _ in range(round(seconds / world.timestep)):
        world.step()


def loop_gap(world, robot: str, index: int = 0) -> float:
    """How far a model's extra joint is from closed (m), from the engine's link poses: the whole
    gap for a ball joint, the gap across the axis for the joints that slide along it (xy, piston)."""
    body = world.body(robot)
    extra = body.extra_joints[index]
    poses = world.forward_kinematics(robot)
    i1, i2 = body.link_index(extra.link1), body.link_index(extra.link2)
    p1 = poses[i1][0] + poses[i1][1] @ np.asarray(extra.point1, float)
    p2 = poses[i2][0] + poses[i2][1] @ np.asarray(extra.point2, float)
    gap = p2 - p1
    if extra.type in ("xy", "piston"):
        axis = poses[i1][1] @ np.asarray(extra.axis, float)
        gap = gap - axis * (gap @ axis)
    return float(np.linalg.norm(gap))
