"""OpenHRP3 GrxUI project files (``.xml``) read into the same :class:`Project` as our YAML.

What maps: the simulation item (totalTime, timeStep, gravity), each model item (url with
``$(PROJECT_DIR)``/``$(CURRENT_DIR)``, isRobot=false as a static model, the root's
``.translation``/``.rotation``, ``JOINT.angle`` initial values, ``JOINT.mode`` Torque/HighGain
drives) and the collision pairs (static and sliding friction). What cannot map is kept in
``Project.notes``: GrxUI controllers are OpenHRP RT components, not programs hrpsim can start,
and a pair restricted to one link (jointName1/2) becomes a pair of whole models.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lxml import etree

from hrpsim.errors import ConfigError
from hrpsim.files import read_regular

MODEL_ITEM = "GrxModelItem"
SIMULATION_ITEM = "GrxSimulationItem"
PAIR_ITEM = "GrxCollisionPairItem"
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
        drives: dict[str, str] = {}
        roots: set[str] = set()
        for prop, value, pline in _properties(item):
            head, _, field = prop.rpartition(".")
            if prop == "isRobot":
                model["static"] = value.lower() != "true"
            elif prop == "controller" and value:
                self.notes.append(f"model {name!r}: GrxUI controller {value!r} is an OpenHRP RT component that "
                                  "hrpsim cannot start; add a `controllers:` entry for an hrpsim controller")
            elif field == "translation" and head and (v := self.number_list(prop, value, pline, 3)):
                model["position"] = v
                roots.add(head)
            elif field == "rotation" and head and (v := self.number_list(prop, value, pline, 4)):
                model["rotation"] = v
            elif field == "angle" and head and (v := self.number_list(prop, value, pline, 1)):
                model["joints"][head] = v[0]
            elif field == "mode" and head and head != "view":
                mode = MODES.get(value.lower())
                if mode is None:
                    self.bad(pline, f"property {prop!r}: unknown mode {value!r} (Torque or HighGain)")
                else:
                    drives[head] = mode
        drives = {joint: mode for joint, mode in drives.items() if joint not in roots}  # a root has no motor
        if drives:
            model["drive"] = drives
        return model

    def pair(self, item: etree._Element) -> dict[str, Any] | None:
        props = {name: value for name, value, _ in _properties(item)}
        a, b = props.get("objectName1", ""), props.get("objectName2", "")
        if not a or not b:
            self.bad(item.sourceline or 0, "a collision pair needs objectName1 and objectName2")
            return None
        links = [props.get("jointName1", ""), props.get("jointName2", "")]
        if any(links):
            self.notes.append(f"collision pair {item.get('name')}: restricted to links {links}; "
                              "hrpsim collides the whole models")
        pair: dict[str, Any] = {"a": a, "b": b}
        for key, target in (("staticFriction", "friction"), ("slidingFriction", "sliding_friction")):
            if key in props:
                try:
                    pair[target] = float(props[key])
                except ValueError:
                    self.bad(item.sourceline or 0, f"{key} {props[key]!r} is not a number")
        return pair


def read_grxui(path: str | Path) -> tuple[dict[str, Any], list[str]]:
    """The project as the YAML form's data, and the notes on what did not map."""
    path = Path(path)
    try:
        parser = etree.XMLParser(resolve_entities=False, no_network=True)
        root = etree.fromstring(read_regular(path, "project file"), parser)
    except (OSError, etree.XMLSyntaxError) as exc:
        raise ConfigError(f"{path}: not a readable GrxUI project: {exc}") from None
    reader = _Reader(path)
    data: dict[str, Any] = {"world": {}, "models": [], "collisions": []}
    seen_pairs: set[frozenset[str]] = set()
    for item in root.iter("item"):
        kind = (item.get("class") or "").rsplit(".", 1)[-1]
        if kind == SIMULATION_ITEM:
            data["world"].update(reader.simulation(item))
        elif kind == MODEL_ITEM:
            data["models"].append(reader.model(item))
        elif kind == PAIR_ITEM and (pair := reader.pair(item)) is not None:
            key = frozenset((pair["a"], pair["b"]))
            if key not in seen_pairs:
                seen_pairs.add(key)
                data["collisions"].append(pair)
    if reader.problems:
        raise ConfigError("\n  ".join([f"{path}: {len(reader.problems)} problem(s):", *reader.problems]))
    return data, reader.notes
