"""The values a sweep computes from its variables (``set:`` in a sweep file): arithmetic on numbers
and lists with the math functions researchers reach for, nothing else (no names but the sweep's
variables and pi, no attribute access, no calls but those below).

    set:
      disturbances[0].force: "[size * cos(radians(angle)), size * sin(radians(angle)), 0]"
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any

from hrpsim.errors import ConfigError

FUNCTIONS = {
    name: getattr(math, name)
    for name in ("sin", "cos", "tan", "asin", "acos", "atan2", "radians", "degrees", "sqrt", "exp", "log", "hypot")
}
FUNCTIONS.update(abs=abs, min=min, max=max, round=round)
CONSTANTS = {"pi": math.pi}
OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def check(text: str) -> set[str]:
    """The variables an expression uses; ConfigError when it is not one this module evaluates."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ConfigError(f"cannot read {text!r}: {exc.msg}") from None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in FUNCTIONS and node.id not in CONSTANTS:
            names.add(node.id)
        elif not isinstance(node, _ALLOWED):
            raise ConfigError(
                f"{text!r}: {type(node).__name__} is not allowed (numbers, lists, + - * / ** %, "
                f"variables and {', '.join(sorted(FUNCTIONS))})"
            )
        elif isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
            raise ConfigError(f"{text!r}: only these functions can be called: {', '.join(sorted(FUNCTIONS))}")
    return names


def evaluate(text: str, variables: dict[str, Any]) -> Any:
    return _value(ast.parse(text, mode="eval").body, variables)


_ALLOWED = (
    ast.Expression,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.BinOp,
    ast.UnaryOp,
    ast.Call,
    ast.List,
    ast.Tuple,
    *OPERATORS,
)


def _value(node: ast.AST, variables: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        return variables[node.id]
    if isinstance(node, ast.List | ast.Tuple):
        return [_value(item, variables) for item in node.elts]
    if isinstance(node, ast.BinOp):
        return OPERATORS[type(node.op)](_value(node.left, variables), _value(node.right, variables))
    if isinstance(node, ast.UnaryOp):
        return OPERATORS[type(node.op)](_value(node.operand, variables))
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id](*(_value(arg, variables) for arg in node.args))
    raise ConfigError(f"cannot evaluate {ast.unparse(node)!r}")
