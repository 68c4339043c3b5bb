"""Typed reading of untyped field values: each accessor knows the type it wants.

A value of the wrong shape is a problem recorded with the field's location, and the accessor
returns the default, so one load reports every bad field rather than stopping at the first.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hrpsim.modelloader.vrml.nodes import MF, Node
from hrpsim.transforms import axis_angle_matrix, is_degenerate_rotation


class FieldReader:
    def __init__(self, problems: list[str]) -> None:
        self.problems = problems

    def _bad(self, node: Node, name: str, message: str) -> None:
        self.problems.append(f"{node.where_of(name)}: {node.label}: field {name}: {message}")

    # --- numbers ---

    def numbers(self, node: Node, name: str, default: Any = ()) -> np.ndarray:
        """All numbers of an SF or MF numeric field, flat."""
        value = node.get(name)
        if value is None:
            return np.asarray(default, dtype=np.float64).reshape(-1)
        if isinstance(value, np.ndarray):
            return value
        if isinstance(value, list) and all(isinstance(v, float) and not isinstance(v, bool) for v in value):
            return np.array(value, dtype=np.float64)
        self._bad(node, name, f"expected numbers, got {_describe(value)}")
        return np.asarray(default, dtype=np.float64).reshape(-1)

    def float(self, node: Node, name: str, default: float) -> float:
        values = self.numbers(node, name, [default])
        if len(values) != 1:
            self._bad(node, name, f"expected one number, got {len(values)}")
            return default
        return float(values[0])

    def int(self, node: Node, name: str, default: int) -> int:
        value = self.float(node, name, float(default))
        if not math.isfinite(value) or value != int(value):
            self._bad(node, name, f"expected an integer, got {value}")
            return default
        return int(value)

    def vector(self, node: Node, name: str, default: Any, size: int = 3) -> np.ndarray:
        values = self.numbers(node, name, default)
        if len(values) != size:
            self._bad(node, name, f"expected {size} numbers, got {len(values)}")
            return np.asarray(default, dtype=np.float64).reshape(size)
        return values.astype(np.float64, copy=True)

    def rotation(self, node: Node, name: str) -> np.ndarray:
        """An SFRotation (axis x y z, angle) as a 3x3 matrix."""
        values = self.vector(node, name, (0.0, 0.0, 1.0, 0.0), 4)
        if not np.all(np.isfinite(values)):
            self._bad(node, name, "not finite")
            return np.eye(3)
        if is_degenerate_rotation(values[:3], values[3]):
            self._bad(node, name, "zero rotation axis with a non-zero angle")
            return np.eye(3)
        return axis_angle_matrix(values[:3], values[3])

    def bool(self, node: Node, name: str, default: bool) -> bool:
        value = node.get(name)
        if value is None:
            return default
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], bool):
            return value[0]
        self._bad(node, name, f"expected TRUE or FALSE, got {_describe(value)}")
        return default

    # --- strings ---

    def strings(self, node: Node, name: str) -> list[str]:
        value = node.get(name)
        if value is None or (isinstance(value, np.ndarray) and value.size == 0):
            return []
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        self._bad(node, name, f"expected strings, got {_describe(value)}")
        return []

    def string(self, node: Node, name: str, default: str = "") -> str:
        values = self.strings(node, name)
        if not values:
            return default
        if len(values) > 1:
            self._bad(node, name, f"expected one string, got {len(values)}")
        return values[0]

    # --- nodes ---

    def nodes(self, node: Node, name: str) -> list[Node]:
        value = node.get(name)
        if value is None:
            return []
        if isinstance(value, Node):
            return [value]
        if isinstance(value, np.ndarray) and value.size == 0:
            return []
        if isinstance(value, list) and all(isinstance(v, Node) for v in value):
            return list(value)
        self._bad(node, name, f"expected nodes, got {_describe(value)}")
        return [v for v in value if isinstance(v, Node)] if isinstance(value, list) else []

    def node(self, node: Node, name: str) -> Node | None:
        found = self.nodes(node, name)
        if len(found) > 1:
            self._bad(node, name, f"expected one node, got {len(found)}")
        return found[0] if found else None


def _describe(value: Any) -> str:
    if isinstance(value, Node):
        return f"a {value.type} node"
    if isinstance(value, np.ndarray):
        return f"{value.size} numbers"
    if isinstance(value, MF | list):
        kinds = sorted({type(v).__name__.replace("NoneType", "NULL") for v in value})
        return f"[{', '.join(kinds)}]" if kinds else "[]"
    return type(value).__name__
