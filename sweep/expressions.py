"""The values a sweep computes from its variables (``set:`` in a sweep file): arithmetic on numbers
and lists with the math functions researchers reach for, nothing else (no names but the sweep's
variables and pi, no attribute access, no calls but those below).

    set:
      disturbances[0].force: "[size * cos(radians(angle)), size * sin(radians(angle)), 0]"

An expression runs in the sweep's own process, once per run, so its cost is bounded: at most
MAX_EXPRESSION_CHARS characters nested at most MAX_DEPTH deep, every value on the way a finite real
number, a whole number of at most MAX_INT_BITS bits or a list of at most MAX_LIST_ITEMS items (a
power or a repetition that would pass a bound is refused before it is computed), and all the
expressions of one plan compute at most MAX_COMPUTED_VALUES values together. What cannot be
computed (a division by zero, ``sqrt(-1)``, a variable the run does not set) is an
:class:`ExpressionError` saying so, never a Python exception of the arithmetic.
"""

from __future__ import annotations

import ast
import functools
import math
import operator
from collections.abc import Callable
from typing import Any

from hrpsim.errors import ConfigError

MAX_EXPRESSION_CHARS = 1000
MAX_DEPTH = 32  # operations, calls and lists inside one another
MAX_INT_BITS = 1024  # a float's range: about 308 decimal digits
MAX_LIST_ITEMS = 100  # a vector, a pose, a robot's joints
MAX_ROUND_DIGITS = 30  # round(x, n): more digits than a float has, either way
MAX_COMPUTED_VALUES = 10_000_000  # by all of a plan's expressions together (Budget): seconds, 200 MB


class ExpressionError(ConfigError):
    """An expression that cannot be read or computed; the message says why."""


def _round(value: Any, digits: Any = None) -> Any:
    if digits is not None and (not isinstance(digits, int) or abs(digits) > MAX_ROUND_DIGITS):
        raise ExpressionError(f"round's digits must be a whole number from -{MAX_ROUND_DIGITS} to {MAX_ROUND_DIGITS}")
    return round(value) if digits is None else round(value, digits)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    name: getattr(math, name)
    for name in ("sin", "cos", "tan", "asin", "acos", "atan2", "radians", "degrees", "sqrt", "exp", "log", "hypot")
}
FUNCTIONS.update(abs=abs, min=min, max=max, round=_round)
CONSTANTS = {"pi": math.pi}


def _power(base: Any, exponent: Any) -> Any:
    # base >= 2 ** (bits - 1), so past this the power is past the bound; below it, it is cheap to compute
    whole = isinstance(base, int) and isinstance(exponent, int)
    if whole and exponent > 0 and (base.bit_length() - 1) * exponent > MAX_INT_BITS:
        raise ExpressionError(f"{base} ** {exponent} is larger than {MAX_INT_BITS}-bit whole numbers")
    return operator.pow(base, exponent)


def _times(left: Any, right: Any) -> Any:
    for items, count in ((left, right), (right, left)):
        if isinstance(items, list) and isinstance(count, int) and len(items) * max(count, 0) > MAX_LIST_ITEMS:
            raise ExpressionError(f"a list repeated {count} times is longer than {MAX_LIST_ITEMS} items")
    return operator.mul(left, right)


OPERATORS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _times,
    ast.Div: operator.truediv,
    ast.Pow: _power,
    ast.Mod: operator.mod,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
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
_ALLOWED_TEXT = f"numbers, lists, + - * / ** %, variables and {', '.join(sorted(FUNCTIONS))}"


def check(text: str) -> set[str]:
    """The variables an expression uses; ExpressionError when it is not one this module evaluates."""
    tree = _parse(text)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in FUNCTIONS and node.id not in CONSTANTS:
            names.add(node.id)
    return names


class Budget:
    """How many values a sweep's expressions may still compute (intermediate ones included; a list
    counts its items): it bounds the time and memory a plan's expressions take together."""

    def __init__(self, values: int = MAX_COMPUTED_VALUES) -> None:
        self.total = self.left = values

    def spend(self, values: int) -> None:
        self.left -= values
        if self.left < 0:
            raise OverBudget(
                f"the set expressions compute more than {self.total} values over the sweep's runs: "
                "make the sweep or its expressions smaller"
            )


class OverBudget(ExpressionError):
    """A plan's expressions spent their :class:`Budget`."""


def evaluate(text: str, variables: dict[str, Any], budget: Budget | None = None) -> Any:
    """The expression's value with ``variables``; ExpressionError saying what could not be computed.
    ``budget``: the values it may compute (shared by the calls of one plan)."""
    try:
        return _Evaluation(variables, budget or Budget()).value(_parse(text).body)
    except ExpressionError:
        raise
    except (ArithmeticError, ValueError, TypeError) as exc:  # 1/0, sqrt(-1), [1] + 2, exp(1000), ...
        raise ExpressionError(f"cannot compute {_quoted(text)}: {_why(exc)}") from None


@functools.lru_cache(maxsize=64)
def _parse(text: str) -> ast.Expression:
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"{len(text)} characters, more than {MAX_EXPRESSION_CHARS}: {_quoted(text)}")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ExpressionError(f"cannot read {_quoted(text)}: {getattr(exc, 'msg', None) or _why(exc)}") from None
    _check_nodes(tree, text)
    return tree


def _check_nodes(tree: ast.AST, text: str) -> None:
    """Only the allowed nodes, numbers as constants, calls of FUNCTIONS by name, at most MAX_DEPTH deep."""
    waiting = [(tree, 0)]
    while waiting:
        node, depth = waiting.pop()
        if depth > MAX_DEPTH:
            raise ExpressionError(f"nested more than {MAX_DEPTH} levels deep: {_quoted(text)}")
        if not isinstance(node, _ALLOWED):
            raise ExpressionError(f"{type(node).__name__} is not allowed ({_ALLOWED_TEXT}): {_quoted(text)}")
        if isinstance(node, ast.Constant) and not _is_number(node.value):
            raise ExpressionError(f"{_quoted(repr(node.value))} is not a number ({_ALLOWED_TEXT}): {_quoted(text)}")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
            raise ExpressionError(
                f"only these functions can be called: {', '.join(sorted(FUNCTIONS))}: {_quoted(text)}"
            )
        waiting.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


class _Evaluation:
    def __init__(self, variables: dict[str, Any], budget: Budget) -> None:
        self.variables, self.budget = variables, budget

    def value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return self.bounded(node.value, node)
        if isinstance(node, ast.Name):
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            if node.id not in self.variables:
                raise ExpressionError(f"uses {node.id!r}, which is not set")
            return self.bounded(self.variables[node.id], node)
        if isinstance(node, ast.List | ast.Tuple):
            value = [self.value(item) for item in node.elts]
        elif isinstance(node, ast.BinOp):
            value = OPERATORS[type(node.op)](self.value(node.left), self.value(node.right))
        elif isinstance(node, ast.UnaryOp):
            value = OPERATORS[type(node.op)](self.value(node.operand))
        else:
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)  # _check_nodes saw to it
            value = FUNCTIONS[node.func.id](*(self.value(arg) for arg in node.args))
        return self.bounded(value, node)

    def bounded(self, value: Any, node: ast.AST) -> Any:
        """``value`` when it is a finite real number, a bounded whole number or a bounded list of them
        (a list as a new list: a variable's is not shared with the result)."""
        if isinstance(value, list | tuple):
            if len(value) > MAX_LIST_ITEMS:
                raise ExpressionError(f"{_what(node)} has {len(value)} items, more than {MAX_LIST_ITEMS}")
            self.budget.spend(len(value))
            return [self.bounded(item, node) for item in value]
        self.budget.spend(1)
        if isinstance(value, int) and not isinstance(value, bool):
            if value.bit_length() > MAX_INT_BITS:
                raise ExpressionError(f"{_what(node)} is larger than {MAX_INT_BITS}-bit whole numbers")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise ExpressionError(f"{_what(node)} is {value}, not a finite number")
        else:
            kind = "a complex number" if isinstance(value, complex) else _quoted(repr(value))
            raise ExpressionError(f"{_what(node)} is {kind}, not a real number or a list of them")
        return value


def _what(node: ast.AST) -> str:
    return f"variable {node.id!r}" if isinstance(node, ast.Name) else _quoted(ast.unparse(node))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


QUOTED_CHARS = 60  # of an expression quoted in an error


def _quoted(text: str) -> str:
    return repr(text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 3] + "...")


_REASONS = {
    "float division by zero": "division by zero",
    "math domain error": "outside the function's domain",
    "math range error": "the result is past a float's range",
}


def _why(exc: BaseException) -> str:
    reason = str(exc) or type(exc).__name__
    return _REASONS.get(reason, reason)
