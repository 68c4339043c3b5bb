"""An engine's own settings (``world.<engine>`` in a project file): each engine declares them as
:class:`Option` entries, and this module checks a section against them.

The declaration lives in the engine's folder (its package's ``OPTIONS``, see
hrpsim/engine_registry.py); the kernel only knows how to check one, so a project file reports
every problem of every section at once, each naming its key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from hrpsim.errors import ConfigError


@dataclass(frozen=True)
class Option:
    """One setting: its name, default and meaning. The default's type is the setting's type
    (bool, int, float or str); a str setting takes one of ``choices``. ``minimum`` bounds a number
    from below, inclusively unless ``exclusive``."""

    name: str
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    exclusive: bool = False

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not a valid setting, or None."""
        if isinstance(self.default, bool):
            return None if isinstance(value, bool) else f"must be true or false, got {value!r}"
        if isinstance(self.default, str):
            return None if value in self.choices else f"must be one of {', '.join(self.choices)}, got {value!r}"
        integer = isinstance(self.default, int)
        kind = "an integer" if integer else "a finite number"
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return f"must be {kind}, got {value!r}"
        if integer and value != int(value):
            return f"must be {kind}, got {value!r}"
        if self.minimum is not None and (value <= self.minimum if self.exclusive else value < self.minimum):
            bound = "greater than" if self.exclusive else "at least"
            return f"must be {bound} {self.minimum:g}, got {value!r}"
        return None

    def convert(self, value: Any) -> Any:
        return type(self.default)(value)


def check_section(key: str, data: Any, options: tuple[Option, ...]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The settings ``data`` gives (converted to their types) and every problem as (key, message);
    ``key`` is where the section sits in the project file (``world.ode``)."""
    if data is None:
        return {}, []
    if not isinstance(data, dict):
        return {}, [(key, f"must be a mapping, got {type(data).__name__}")]
    declared = {option.name: option for option in options}
    given: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for name, value in data.items():
        option = declared.get(name)
        if option is None:
            problems.append((f"{key}.{name}", f"unknown setting (settings: {', '.join(sorted(declared)) or 'none'})"))
        elif (problem := option.problem(value)) is not None:
            problems.append((f"{key}.{name}", problem))
        else:
            given[name] = option.convert(value)
    return given, problems


def resolve(key: str, data: Any, options: tuple[Option, ...], *, where: str = "") -> SimpleNamespace:
    """Every setting, given or default, as attributes; ConfigError naming each bad key (for
    settings that did not come through a project file's checks)."""
    given, problems = check_section(key, data, options)
    if problems:
        prefix = f"{where}: " if where else ""
        raise ConfigError("; ".join(f"{prefix}{k}: {message}" for k, message in problems))
    return SimpleNamespace(**{option.name: given.get(option.name, option.default) for option in options})
