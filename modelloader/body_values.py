"""Reading values of a Choreonoid body file: numbers, vectors, angles and poses, each under its
camelCase (format 1.0) or snake_case (2.0) key, every bad value a located problem.

Choreonoid reads both spellings of a key in either format version; angles (rotations, joint
ranges and speeds of revolute joints, fields of view) are degrees unless ``angleUnit: radian``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from hrpsim.modelloader.body_yaml import YList, YMap
from hrpsim.transforms import axis_angle_matrix

Keys = str | tuple[str, ...]
MAX_ID = 2**31 - 1  # joint and device ids, and their offsets, are 32-bit integers on every wire and engine


def spellings(keys: Keys) -> tuple[str, ...]:
    """``"jointType"`` -> ("jointType", "joint_type"): the two spellings Choreonoid accepts."""
    names = (keys,) if isinstance(keys, str) else keys
    found: list[str] = []
    for name in names:
        snake = "".join("_" + c.lower() if c.isupper() else c for c in name)
        for candidate in (name, snake):
            if candidate not in found:
                found.append(candidate)
    return tuple(found)


class BodyFile:
    """One body file being read: its path, its angle unit and the problems found in it."""

    def __init__(self, path: Path, problems: list[str], *, notes: list[str] | None = None, degree: bool = True) -> None:
        self.path = path
        self.problems = problems
        self.notes = [] if notes is None else notes  # what was read differently from what is written
        self.degree = degree

    def inside(self, path: Path) -> BodyFile:
        """The context for another file read on behalf of this one (same problems, notes, unit)."""
        return BodyFile(path, self.problems, notes=self.notes, degree=self.degree)

    # --- problems ---

    def where(self, node: Any, key: str | None = None) -> str:
        line = node.line_of(key) if isinstance(node, YMap) and key else getattr(node, "line", 0)
        return f"{self.path}:{line}" if line else str(self.path)

    def add(self, node: Any, what: str, message: str, key: str | None = None) -> None:
        self.problems.append(f"{self.where(node, key)}: {what}: {message}")

    # --- lookup ---

    def key(self, node: YMap, keys: Keys) -> str | None:
        """The spelling of ``keys`` present in ``node``, or None."""
        return next((k for k in spellings(keys) if k in node), None)

    def raw(self, node: YMap, keys: Keys, default: Any = None) -> Any:
        found = self.key(node, keys)
        return node[found] if found else default

    def string(self, node: YMap, keys: Keys, what: str, default: str = "") -> str:
        found = self.key(node, keys)
        if found is None:
            return default
        value = node[found]
        if isinstance(value, (dict, list)) or value is None:
            self.add(node, what, f"{found} must be a string, not {_describe(value)}", found)
            return default
        return str(value)

    def number(self, node: YMap, keys: Keys, what: str, default: float | None = None) -> float | None:
        """A finite number; a problem and ``default`` for anything else (NaN and infinity too)."""
        found = self.key(node, keys)
        if found is None:
            return default
        value = _as_number(node[found])
        if value is None or not math.isfinite(value):
            self.add(node, what, f"{found} must be a finite number, not {_describe(node[found])}", found)
            return default
        return value

    def integer(self, node: YMap, keys: Keys, what: str, default: int, low: int = -1, high: int = MAX_ID) -> int:
        """A whole number from ``low`` to ``high`` (an id, an offset, a size); a problem and ``default``
        for anything else."""
        found = self.key(node, keys)
        value = self.number(node, keys, what)
        if value is None:
            return default
        if value != int(value) or not low <= value <= high:
            self.add(node, what, f"{found} must be a whole number from {low} to {high}, not {node[found]!r}", found)
            return default
        return int(value)

    def vector(self, node: YMap, keys: Keys, what: str, size: int, default: Any = None) -> np.ndarray | None:
        found = self.key(node, keys)
        if found is None:
            return None if default is None else np.array(default, dtype=np.float64)
        values = self.numbers(node[found], node, found, what)
        if values is None or (size and values.size != size):
            if values is not None:
                self.add(node, what, f"{found} must hold {size} numbers, not {values.size}", found)
            return None if default is None else np.array(default, dtype=np.float64)
        return values

    def numbers(self, value: Any, node: YMap, key: str, what: str) -> np.ndarray | None:
        if not isinstance(value, list):
            self.add(node, what, f"{key} must be a list of numbers, not {_describe(value)}", key)
            return None
        numbers = [_as_number(v) for v in value]
        if any(v is None for v in numbers):
            bad = next(v for v, n in zip(value, numbers, strict=True) if n is None)
            self.add(node, what, f"{key} holds {_describe(bad)} where a number belongs", key)
            return None
        array = np.array(numbers, dtype=np.float64)
        if not np.all(np.isfinite(array)):
            bad = next(v for v in array if not math.isfinite(v))
            self.add(node, what, f"{key} holds {bad} where a finite number belongs", key)
            return None
        return array

    # --- angles and poses ---

    def radians(self, value: float) -> float:
        return float(np.radians(value)) if self.degree else float(value)

    def rotation(self, node: YMap, what: str, keys: Keys = "rotation") -> np.ndarray | None:
        """An axis-angle ``[x, y, z, angle]`` or a list of them applied in order; None if absent."""
        found = self.key(node, keys)
        if found is None:
            return None
        value = node[found]
        parts = value if isinstance(value, list) and value and isinstance(value[0], list) else [value]
        result = np.eye(3)
        for part in parts:
            numbers = self.numbers(part, node, found, what)
            if numbers is None:
                return None
            if numbers.size != 4 or np.linalg.norm(numbers[:3]) < 1e-6:
                self.add(node, what, f"{found} must be [x, y, z, angle] with a non-zero axis", found)
                return None
            result = result @ axis_angle_matrix(numbers[:3] / np.linalg.norm(numbers[:3]), self.radians(numbers[3]))
        return result

    def translation(self, node: YMap, what: str) -> np.ndarray | None:
        """A vector, or a list of vectors that add up; None if absent."""
        if "translation" not in node:
            return None
        value = node["translation"]
        parts = value if isinstance(value, list) and value and isinstance(value[0], list) else [value]
        total = np.zeros(3)
        for part in parts:
            numbers = self.numbers(part, node, "translation", what)
            if numbers is None or numbers.size != 3:
                if numbers is not None:
                    self.add(node, what, "translation must hold 3 numbers", "translation")
                return None
            total += numbers
        return total

    def pose(self, node: YMap, what: str) -> tuple[np.ndarray, bool]:
        """The 4x4 placement a node writes (translation, rotation, scale) and whether it has one."""
        matrix = np.eye(4)
        translation = self.translation(node, what)
        rotation = self.rotation(node, what)
        scale = self.vector(node, "scale", what, 3)
        if translation is not None:
            matrix[:3, 3] = translation
        if rotation is not None:
            matrix[:3, :3] = rotation
        if scale is not None:
            matrix[:3, :3] = matrix[:3, :3] @ np.diag(scale)
        return matrix, translation is not None or rotation is not None or scale is not None


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _describe(value: Any) -> str:
    if isinstance(value, YMap | dict):
        return "a mapping"
    if isinstance(value, YList | list):
        return "a list"
    return repr(value)
