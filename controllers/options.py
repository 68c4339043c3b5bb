"""Command-line options for a controller's constructor (``-o KEY=VALUE``), converted to the types
the constructor declares: ``int``, ``float``, ``bool``, ``str`` and ``Path`` (and ``X | None`` of
those). A parameter without a hint takes its default's type; without either it stays a string.
A value that does not convert, or a key the constructor does not take, is a ConfigError naming
the option."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from types import NoneType, UnionType
from typing import Any

from hrpsim.errors import ConfigError

TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")


def split_options(pairs: list[str]) -> dict[str, str]:
    """``["p_gain=400", ...]`` -> ``{"p_gain": "400", ...}``, values still text."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise ConfigError(f"--option {pair!r}: write KEY=VALUE with KEY a Python identifier")
        options[key] = value
    return options


def convert_options(cls: type, options: dict[str, str]) -> dict[str, Any]:
    """The text values of ``options`` as the types ``cls``'s constructor declares."""
    parameters = inspect.signature(cls.__init__).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    hints = _hints(cls.__init__)
    known = [
        name
        for name, p in parameters.items()
        if name != "self" and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    converted: dict[str, Any] = {}
    for key, text in options.items():
        if key not in parameters and not takes_any:
            raise ConfigError(
                f"-o {key}={text}: {cls.__name__} takes no option {key!r} (its options: {', '.join(known) or 'none'})"
            )
        target = _target_type(hints.get(key), parameters.get(key))
        converted[key] = _convert(key, text, target)
    return converted


def _hints(function: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(function)
    except Exception:  # a hint naming something the module cannot resolve: fall back to defaults
        return {}


def _target_type(hint: Any, parameter: inspect.Parameter | None) -> Any:
    if hint is None and parameter is not None and parameter.default not in (inspect.Parameter.empty, None):
        return type(parameter.default)
    if typing.get_origin(hint) in (UnionType, typing.Union):
        choices = [a for a in typing.get_args(hint) if a is not NoneType]
        return choices[0] if len(choices) == 1 else str
    return hint if hint is not None else str


def _convert(key: str, text: str, target: Any) -> Any:
    if target is bool:
        word = text.strip().lower()
        if word in TRUE_WORDS or word in FALSE_WORDS:
            return word in TRUE_WORDS
        raise ConfigError(f"-o {key}={text}: {key} is a flag; write one of {', '.join(TRUE_WORDS + FALSE_WORDS)}")
    if target in (int, float):
        try:
            return _number(text, target)
        except ValueError:
            raise ConfigError(
                f"-o {key}={text}: {key} takes {'a whole number' if target is int else 'a number'} "
                f"({target.__name__}), got {text!r}"
            ) from None
    if target is Path or (isinstance(target, type) and issubclass(target, Path)):
        return Path(text).expanduser()
    return text


def _number(text: str, target: type) -> int | float:
    if target is float:
        return float(text)
    try:
        return int(text)
    except ValueError:
        value = float(text)  # 1e3 is a whole number written as a float
        if not value.is_integer():
            raise
        return int(value)
