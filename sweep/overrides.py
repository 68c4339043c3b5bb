"""A run's project: the base project's YAML with the run's parameters set in it.

A parameter names a place in the project file: keys joined by dots, list items by index (``[0]``)
or, in ``models`` and ``controllers``, by name (``[robot]``)::

    world.engine                    collisions[0].friction          models[robot].joints.RLEG_HIP_P
    models[robot].position[2]       controllers[hold].options.p_gain disturbances[0].force

Mappings that are missing on the way are created; a list item or a named entry that is missing is
an error naming the parameter. The run's project is written to its own folder, so every path in it
is made absolute first (models, controller files and working folders, the recording, keys).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from hrpsim.errors import ConfigError

_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]+)\]")


def split_parameter(name: str) -> list[str | int]:
    """``a.b[0].c[robot]`` -> ["a", "b", 0, "c", "robot"] (an index as int)."""
    tokens: list[str | int] = []
    position = 0
    for match in _TOKEN.finditer(name):
        gap = name[position : match.start()]
        if gap not in ("", "."):
            raise ConfigError(f"parameter {name!r}: cannot read {gap!r} (write keys.like[0].this)")
        key, selector = match.groups()
        if selector is not None:
            tokens.append(int(selector) if selector.lstrip("-").isdigit() else selector)
        else:
            tokens.append(key)
        position = match.end()
    if not tokens or position != len(name):
        raise ConfigError(f"parameter {name!r}: not a place in the project file (write keys.like[0].this)")
    return tokens


def apply_parameters(project: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """A copy of the project data with every parameter set; ConfigError naming the parameter."""
    data = copy.deepcopy(project)
    for name, value in params.items():
        tokens = split_parameter(name)
        parent = data
        for i, token in enumerate(tokens[:-1]):
            parent = _child(parent, token, tokens[i + 1], name)
        _set(parent, tokens[-1], value, name)
    return data


def _child(parent: Any, token: str | int, following: str | int, name: str) -> Any:
    if isinstance(parent, list):
        return parent[_index(parent, token, name)]
    if not isinstance(parent, dict):
        raise ConfigError(f"parameter {name!r}: {token!r} is inside a value, not a mapping or list")
    if token not in parent or parent[token] is None:
        if isinstance(following, int) or isinstance(parent.get(token), list):
            raise ConfigError(f"parameter {name!r}: the project has no list {token!r}")
        parent[token] = {}
    return parent[token]


def _set(parent: Any, token: str | int, value: Any, name: str) -> None:
    if isinstance(parent, list):
        parent[_index(parent, token, name)] = value
    elif isinstance(parent, dict):
        parent[token] = value
    else:
        raise ConfigError(f"parameter {name!r}: {token!r} is inside a value, not a mapping or list")


def _index(items: list[Any], token: str | int, name: str) -> int:
    if isinstance(token, int):
        if not -len(items) <= token < len(items):
            raise ConfigError(f"parameter {name!r}: the list has {len(items)} item(s), no item [{token}]")
        return token
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get("name") == token:
            return i
    names = [str(item.get("name")) for item in items if isinstance(item, dict) and "name" in item]
    raise ConfigError(f"parameter {name!r}: no entry named {token!r} (entries: {', '.join(names) or 'none'})")


def absolute_paths(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The project data with its paths made absolute against ``folder`` (the base project's), so the
    run's project means the same wherever it is written. Controllers keep their working folder."""
    data = copy.deepcopy(data)

    def absolute(path: str) -> str:
        return str((folder / path).resolve())

    for model in _entries(data.get("models")):
        if isinstance(model.get("file"), str):
            model["file"] = absolute(model["file"])
    for ctl in _entries(data.get("controllers")):
        if isinstance(ctl.get("file"), str):
            file, colon, cls = ctl["file"].partition(":")
            ctl["file"] = absolute(file) + colon + cls
        if ctl.get("command"):
            ctl["cwd"] = absolute(ctl.get("cwd") or ".")
    record = data.get("record")
    if isinstance(record, str):
        data["record"] = absolute(record)
    elif isinstance(record, dict) and isinstance(record.get("file"), str):
        record["file"] = absolute(record["file"])
    security = data.get("security")
    if isinstance(security, dict) and isinstance(security.get("keys"), str):
        security["keys"] = absolute(security["keys"])
    return data


def _entries(items: Any) -> list[dict[str, Any]]:
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
