"""Every model of the corpus (models/: VRML, URDF, COLLADA, Choreonoid body files), every model we
ship (examples/models/) and every MJCF file we use (dm_control's suite) loads, and each that has
joints runs for one second on both engines, dropped a few centimetres onto a floor with its joints
free; or it is refused, at load or by an engine, with a message that names the element at fault
and the engine (or says no engine of hrpsim's can simulate it). No traceback either way.

The refusals are listed below, so that one appearing or going away is seen."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest
from process_helpers import MODEL_FACTS, MODELS, REPO
from sim_helpers import build, floor_under

from hrpsim.bodyinfo import Body
from hrpsim.errors import HrpsimError
from hrpsim.modelloader import FORMATS, load_body
from hrpsim.project import CollisionPair, ModelConfig

ENGINES = ("ode", "mujoco")
MODEL_KINDS = ("choreonoid-body-model", "openhrp-vrml-model", "collada", "urdf")  # model_facts.json's
STEP, SECONDS = 0.002, 1.0
DROP = 0.03  # m between the lowest point of a model and the floor under it


def corpus() -> list[str]:
    """The model files of models/ (not the files they include: VRML Inlines, a body file's resources,
    GrxUI projects), as model_facts.json sorts them; a URDF anywhere is a model."""
    kinds = {f["path"]: f["kind"] for f in json.loads(MODEL_FACTS.read_text())["files"]}
    files = [p for p in MODELS.rglob("*") if p.suffix.lower() in FORMATS]
    assert all(str(p.relative_to(MODELS)) in kinds for p in files), "a model file model_facts.json does not know"
    return sorted(
        f"models/{p.relative_to(MODELS)}"
        for p in files
        if kinds[str(p.relative_to(MODELS))] in MODEL_KINDS or p.suffix == ".urdf"
    )


def suite() -> list[str]:
    found = importlib.util.find_spec("dm_control")  # found, not imported: importing it starts GLFW
    if found is None or not found.submodule_search_locations:
        return []
    return [f"suite/{p.name}" for p in sorted((Path(found.submodule_search_locations[0]) / "suite").glob("*.xml"))]


SHIPPED = sorted(f"examples/models/{p.name}" for p in (REPO / "examples" / "models").iterdir())
FILES = corpus() + SHIPPED + suite()

AGX, PHYSX = "simulated by the AGX Dynamics plugin", "simulated by the PhysX plugin"
LOAD_REFUSED = {  # file -> words of its refusal (each problem names the file, the line and the element)
    "models/choreonoid-body/AizuSpider/AizuSpiderDA.body": AGX,
    "models/choreonoid-body/AizuSpider/AizuSpiderNA.body": AGX,
    "models/choreonoid-body/AizuSpider/AizuSpiderSA.body": AGX,
    "models/choreonoid-body/Tank/AgxTank.body": AGX,
    "models/choreonoid-body/Tank/PxTank.body": PHYSX,
    "models/choreonoid-body/misc/PxCrawler.body": PHYSX,
    "models/choreonoid-body/misc/ContinuousTrackVehicle.body": "floats free of its parent",
    "models/choreonoid-body/misc/mid360.body": "Livox lidar",
    "suite/dog.xml": "a free joint is held only by the one body",
    "suite/quadruped.xml": "a free joint is held only by the one body",
    "suite/lqr.xml": "no bodies under <worldbody>",
}
CRAWLER, ODE_CANNOT = "crawler joints", "the ode engine cannot simulate"
ENGINE_REFUSED = {  # (file, engine) -> words of the refusal
    ("models/choreonoid-body/AizuSpider/AizuSpiderDS.body", "mujoco"): CRAWLER,
    ("models/choreonoid-body/AizuSpider/AizuSpiderNS.body", "mujoco"): CRAWLER,
    ("models/choreonoid-body/AizuSpider/AizuSpiderSS.body", "mujoco"): CRAWLER,
    ("models/choreonoid-body/Tank/SimpleTank.body", "mujoco"): CRAWLER,
    ("models/choreonoid-body/Tank/Tank.body", "mujoco"): CRAWLER,
    ("models/choreonoid-body/misc/conveyor.body", "mujoco"): CRAWLER,
    ("models/choreonoid-body/misc/crawler.body", "mujoco"): CRAWLER,
    ("models/openhrp3/model/crawler.wrl", "mujoco"): CRAWLER,
    ("models/choreonoid-body/SR1/SR1-floor-box.body", "mujoco"): "a free joint below the root",
    ("examples/models/tendon_humanoid.xml", "ode"): ODE_CANNOT,
    **{(f"suite/{name}", "ode"): ODE_CANNOT for name in ("ball_in_cup.xml", "fish.xml", "humanoid_CMU.xml")},
    **{(f"suite/{name}", "ode"): ODE_CANNOT for name in ("manipulator.xml", "point_mass.xml", "stacker.xml")},
    ("suite/swimmer.xml", "ode"): ODE_CANNOT,
}


# (file, engine) -> why its one second fails, should one: marked strictly, so that the mark goes the
# day it runs. None does now (the Barrett WAM's mimic fingers, on ODE, did: docs/physics.md, Mimic joints).
UNSTABLE: dict[tuple[str, str], str] = {}


# mesh robots whose second on ODE (triangle contacts as they fold onto the floor) takes seconds
SLOW = {
    (f"models/choreonoid-body/{name}", "ode")
    for name in (
        "GR001/GR001.body",
        "WAREC1/WAREC1.body",
        *(f"AizuSpider/AizuSpider{v}.body" for v in ("DS", "NS", "SS")),
    )
}


def runs() -> list:
    params = []
    for name in FILES:
        for engine in ENGINES:
            marks = [pytest.mark.slow] if (name, engine) in SLOW else []
            if (name, engine) in UNSTABLE:
                marks.append(pytest.mark.xfail(reason=UNSTABLE[(name, engine)], strict=True))
            params.append(pytest.param(name, engine, marks=marks))
    return params


def path_of(name: str) -> Path:
    if name.startswith("suite/"):
        return Path(importlib.util.find_spec("dm_control").submodule_search_locations[0]) / name
    return REPO / name


@functools.lru_cache(maxsize=4)  # both engines' cases of a file run one after the other
def loaded(name: str) -> Body | HrpsimError:
    try:
        return load_body(path_of(name))
    except HrpsimError as exc:
        return exc


def test_the_lists_name_files_that_are_there() -> None:
    listed = set(LOAD_REFUSED) | {name for name, _ in (*ENGINE_REFUSED, *UNSTABLE, *SLOW)}
    present = listed if suite() else {name for name in listed if not name.startswith("suite/")}
    assert len(corpus()) >= 70 and present <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_every_model_loads_or_is_refused_naming_the_element(name: str) -> None:
    body = loaded(name)
    if name not in LOAD_REFUSED:
        assert isinstance(body, Body), body
        return
    assert isinstance(body, HrpsimError), f"{name} loads, but is listed as refused"
    problems = [str(p) for p in getattr(body, "problems", [])] or [str(body)]
    assert any(LOAD_REFUSED[name] in p for p in problems), problems
    located = r"\S+:\d+: "  # file (this one, or one it includes) and line, then the element
    assert all(re.match(located, p) for p in problems) or "no bodies" in LOAD_REFUSED[name], problems


def moves(body: Body) -> bool:
    return not body.static and any(lk.joint_type in ("rotate", "slide", "crawler") for lk in body.links)


@pytest.mark.parametrize(("name", "engine"), runs())
def test_every_model_with_joints_runs_a_second_or_is_refused_by_the_engine(name: str, engine: str, tmp_path) -> None:
    body = loaded(name)
    if not isinstance(body, Body) or not moves(body):
        assert (name, engine) not in ENGINE_REFUSED
        return
    config = ModelConfig(name="robot", file=str(path_of(name)), drive="torque")
    models = [floor_under(body, config, DROP), (config, body)]
    expected = ENGINE_REFUSED.get((name, engine))
    try:
        world = build(
            engine, tmp_path, models, timestep=STEP, collisions=[CollisionPair("floor", "robot", friction=0.5)]
        )
        for _ in range(round(SECONDS / STEP)):
            world.step()
    except HrpsimError as exc:
        message = str(exc)
        assert expected is not None and expected in message, message
        assert engine in message.lower()  # names the engine that refuses
        assert re.search(r"link '[^']+'|:\d+: /mujoco/", message), message  # and the element
        return
    assert expected is None, f"{name} runs on {engine}, but is listed as refused ({expected})"
    state = world.read("robot")
    assert world.time == pytest.approx(SECONDS)
    assert np.all(np.isfinite(state.q)) and np.all(np.isfinite(state.root_position))
