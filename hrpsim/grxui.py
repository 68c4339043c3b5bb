"""OpenHRP3 GrxUI project files (``.xml``) read into the same :class:`Project` as our YAML.

What maps: the simulation item (totalTime, timeStep, gravity), each model item (url with
``$(PROJECT_DIR)``/``$(CURRENT_DIR)``, isRobot=false as a static model, the root's
``.translation``/``.rotation``, ``JOINT.angle`` initial values, ``JOINT.mode`` Torque/HighGain
drives; a joint without a jointId is simulated too, outside the controller's arrays, so only
its angle and Torque mode apply), the collision pairs (static and sliding friction; exactly the
listed pairs collide, as in GrxUI, so a project without pair items has no contacts; a pair naming
a link, jointName1/2, collides that link only) and the extra-joint items (closed loops between links of one model or
of two). What cannot map is kept in ``Project.notes``, one line per item, which ``hrpsim
launch`` prints: GrxUI controllers and RT systems are OpenHRP RT components, not programs hrpsim
can start, so the run goes on without them; a property for a joint the model lacks is ignored,
as GrxUI ignores it; the collision pairs' spring-damper contact settings are not carried over.
Log and graph items only concern GrxUI's own windows and are passed over.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from lxml import etree

from hrpsim.bodyinfo import EXTRA_JOINT_TYPES
from hrpsim.errors import ConfigError, HrpsimError
from hrpsim.files import read_regular

MODEL_ITEM = "GrxModelItem"
SIMULATION_ITEM = "GrxSimulationItem"
PAIR_ITEM = "GrxCollisionPairItem"
EXTRA_JOINT_ITEM = "GrxExtraJointItem"
RTS_ITEM = "GrxRTSItem"
WINDOW_ITEMS = ("GrxWorldStateItem", "GrxGraphItem")  # logging and plotting: no physics
MODES = {"torque": "torque", "highgain": "high_gain", "high_gain": "high_gain", "velocity": "velocity"}
_VARIABLE = re.compile(r"\$\((PROJECT_DIR|CURRENT_DIR)\)")


def _properties(item: etree._Element) -> list[tuple[str, str, int]]:
    return [(p.get("name", ""), (p.get("value") or "").strip(), p.sourceline or 0) for p in item.iter("property")]


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.replace(",", " ").split()]


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.spring_pairs: list[str] = []  # collision pair items with spring-damper contact settings

    def bad(self, line: int, message: str) -> None:
        self.problems.append(f"{self.path}:{line}: {message}")

    def url(self, text: str, line: int) -> str:
        resolved = _VARIABLE.sub(str(self.path.parent), text)
        if "$(" in resolved:
            self.bad(line, f"url {text!r} uses a variable other than $(PROJECT_DIR) and $(CURRENT_DIR)")
        return str(Path(resolved).resolve())

    def number_list(self, name: str, value: str, line: int, length: int) -> list[float] | None:
        try:
            numbers = _floats(value)
        except ValueError:
            numbers = []
        if len(numbers) != length:
            self.bad(line, f"property {name!r} needs {length} numbers, got {value!r}")
            return None
        return numbers

    def simulation(self, item: etree._Element) -> dict[str, Any]:
        world: dict[str, Any] = {}
        keys = {"totalTime": "end_time", "timeStep": "timestep"}
        for name, value, line in _properties(item):
            if name in keys and (v := self.number_list(name, value, line, 1)) is not None:
                world[keys[name]] = v[0]
            elif name == "gravity" and (g := self.number_list(name, value, line, 1)) is not None:
                world["gravity"] = [0.0, 0.0, -g[0]]
            elif name == "method":
                self.notes.append(f"integration method {value} is OpenHRP's; hrpsim integrates with ODE")
        return world

    def model(self, item: etree._Element) -> dict[str, Any]:
        name, line = item.get("name", ""), item.sourceline or 0
        model: dict[str, Any] = {"name": name, "file": self.url(item.get("url", ""), line), "joints": {}}
        joint_properties = any(prop.endswith((".angle", ".mode")) for prop, _, _ in _properties(item))
        known, numbered = _joint_names(model["file"]) if joint_properties else (None, None)
        drives: dict[str, str] = {}
        roots: set[str] = set()
        for prop, value, pline in _properties(item):
            head, _, field = prop.rpartition(".")
            if prop == "isRobot":
                model["static"] = value.lower() != "true"
            elif prop == "controller" and value:
                self.notes.append(
                    f"model {name!r}: GrxUI controller {value!r} is an OpenHRP RT component that "
                    "hrpsim cannot start; the run goes on without it, so the model's joints take no "
                    "commands and move in their GrxUI modes (Torque unless a mode property says "
                    "otherwise: under gravity and contacts alone); add a `controllers:` entry for an "
                    "hrpsim controller"
                )
            elif field == "translation" and head and (v := self.number_list(prop, value, pline, 3)):
                model["position"] = v
                roots.add(head)
            elif field == "rotation" and head and (v := self.number_list(prop, value, pline, 4)):
                model["rotation"] = v
            elif field in ("angle", "mode") and head not in ("", "view") and known is not None and head not in known:
                self.notes.append(
                    f"{self.path}:{pline}: model {name!r} has no joint {head!r}: "
                    f"property {prop!r} ignored, as GrxUI ignores it"
                )
            elif field == "angle" and head and (v := self.number_list(prop, value, pline, 1)):
                model["joints"][head] = v[0]
            elif field == "mode" and head and head != "view":
                mode = MODES.get(value.lower())
                if mode is None:
                    self.bad(pline, f"property {prop!r}: unknown mode {value!r} (Torque or HighGain)")
                else:
                    drives[head] = mode
        drives = {joint: mode for joint, mode in drives.items() if joint not in roots}  # a root has no motor
        drives = self.numbered_drives(name, drives, numbered)
        if drives:
            model["drive"] = drives
        return model

    def numbered_drives(self, model: str, drives: dict[str, str], numbered: set[str] | None) -> dict[str, str]:
        """The modes of the joints with a jointId. A joint without one is simulated all the same,
        outside the controller's arrays, as in OpenHRP: nothing commands it, which is Torque mode
        (no torque); a HighGain mode for it has nothing to hold it to, which a note says."""
        if numbered is None:
            return drives
        for joint, mode in drives.items():
            if joint not in numbered and mode != "torque":
                self.notes.append(
                    f"model {model!r}: joint {joint!r} has no jointId, so no controller commands it and "
                    f"hrpsim cannot drive it in mode {mode}: it moves freely (Torque, no torque)"
                )
        return {joint: mode for joint, mode in drives.items() if joint in numbered}

    def pair(self, item: etree._Element) -> dict[str, Any] | None:
        props = {name: value for name, value, _ in _properties(item)}
        a, b = props.get("objectName1", ""), props.get("objectName2", "")
        if not a or not b:
            self.bad(item.sourceline or 0, "a collision pair needs objectName1 and objectName2")
            return None
        pair: dict[str, Any] = {"a": a, "b": b}
        for key, side in (("jointName1", "links_a"), ("jointName2", "links_b")):
            pair[side] = [props[key]] if props.get(key) else []  # a pair of one link, or of the whole model
        if "springConstant" in props or "damperConstant" in props:
            self.spring_pairs.append(item.get("name", "") or f"{a}/{b}")
        for key, target in (("staticFriction", "friction"), ("slidingFriction", "sliding_friction")):
            if key in props:
                try:
                    pair[target] = float(props[key])
                except ValueError:
                    self.bad(item.sourceline or 0, f"{key} {props[key]!r} is not a number")
        return pair

    def extra_joint(self, item: etree._Element) -> dict[str, Any] | None:
        """A closed loop the project adds (GrxExtraJointItem): link1 of object1, link2 of object2."""
        props = {name: (value, line) for name, value, line in _properties(item)}
        line = item.sourceline or 0
        names = {"object1Name": "model1", "link1Name": "link1", "object2Name": "model2", "link2Name": "link2"}
        joint: dict[str, Any] = {"name": item.get("name", "")}
        for prop, key in names.items():
            joint[key] = props.get(prop, ("", line))[0]
        missing = [prop for prop, key in names.items() if not joint[key]]
        if missing:
            self.bad(line, f"extra joint {joint['name']!r} needs {', '.join(missing)}")
            return None
        kind = props.get("jointType", ("piston", line))
        if kind[0].lower() not in EXTRA_JOINT_TYPES:
            self.bad(
                kind[1],
                f"extra joint {joint['name']!r}: unknown jointType {kind[0]!r} (known: {', '.join(EXTRA_JOINT_TYPES)})",
            )
            return None
        joint["type"] = kind[0].lower()
        for prop, key in (("jointAxis", "axis"), ("link1LocalPos", "point1"), ("link2LocalPos", "point2")):
            if prop in props and (v := self.number_list(prop, props[prop][0], props[prop][1], 3)) is not None:
                joint[key] = v
        return joint

    def not_carried_over(self, item: etree._Element, kind: str) -> None:
        line, name = item.sourceline or 0, item.get("name", "")
        if kind == RTS_ITEM:
            count = sum(1 for prop, _, _ in _properties(item) if prop == "connection")
            self.notes.append(
                f"{self.path}:{line}: RT system {name!r} ({count} port connections between OpenHRP "
                "RT components) not carried over: hrpsim controllers talk to the simulator directly"
            )
        elif kind not in WINDOW_ITEMS:
            self.notes.append(f"{self.path}:{line}: item {name!r} ({kind}) has no hrpsim counterpart; not carried over")


def _add_pair(pairs: dict[tuple[str, str], dict[str, Any]], pair: dict[str, Any]) -> None:
    """Items naming the same two models become one pair (the first item's surface) whose links
    are all the items' links; an item naming no link on a side opens that side to every link."""
    if (pair["b"], pair["a"]) in pairs:
        pair = {**pair, "a": pair["b"], "b": pair["a"], "links_a": pair["links_b"], "links_b": pair["links_a"]}
    first = pairs.setdefault((pair["a"], pair["b"]), pair)
    if first is pair:
        return
    for side in ("links_a", "links_b"):
        both = first[side] and pair[side]
        first[side] = list(dict.fromkeys(first[side] + pair[side])) if both else []


def _joint_names(file: str) -> tuple[set[str] | None, set[str] | None]:
    """The joint and link names of a model, which GrxUI checks joint properties against, and the
    names of its joints with a jointId (the controller's); None, None when the model cannot be
    read here (the simulator then reports why)."""
    # The model reader is a component the kernel stands under: reached by name, as the command line
    # reaches its subcommands, so the kernel imports no component.
    load_body = importlib.import_module("hrpsim.modelloader").load_body

    try:
        body = load_body(file)
    except HrpsimError:
        return None, None
    known = {link.joint_label for link in body.links} | {link.name for link in body.links}
    return known, set(body.joint_names)


def read_grxui(path: str | Path) -> tuple[dict[str, Any], list[str]]:
    """The project as the YAML form's data, and the notes on what did not map."""
    path = Path(path)
    try:
        parser = etree.XMLParser(resolve_entities=False, no_network=True)
        root = etree.fromstring(read_regular(path, "project file"), parser)
    except (OSError, etree.XMLSyntaxError) as exc:
        raise ConfigError(f"{path}: not a readable GrxUI project: {exc}") from None
    reader = _Reader(path)
    data: dict[str, Any] = {"world": {}, "models": [], "collisions": [], "extra_joints": []}
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    for item in root.iter("item"):
        kind = (item.get("class") or "").rsplit(".", 1)[-1]
        if kind == SIMULATION_ITEM:
            data["world"].update(reader.simulation(item))
        elif kind == MODEL_ITEM:
            data["models"].append(reader.model(item))
        elif kind == PAIR_ITEM:
            pair = reader.pair(item)
            if pair is not None:
                _add_pair(pairs, pair)
        elif kind == EXTRA_JOINT_ITEM:
            joint = reader.extra_joint(item)
            if joint is not None:
                data["extra_joints"].append(joint)
        else:
            reader.not_carried_over(item, kind)
    data["collisions"] = list(pairs.values())
    if reader.spring_pairs:
        reader.notes.append(
            f"collision pair(s) {', '.join(reader.spring_pairs)}: springConstant/damperConstant (OpenHRP's "
            "spring-damper contact model) not carried over: contacts are the engine's rigid contacts"
        )
    if reader.problems:
        raise ConfigError("\n  ".join([f"{path}: {len(reader.problems)} problem(s):", *reader.problems]))
    return data, reader.notes
