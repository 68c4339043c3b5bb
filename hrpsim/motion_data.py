"""Reading OpenHRP controller data: motion tables (time + one column per joint) and PD gain files.

The files OpenHRP3 ships separate values by tabs or runs of spaces, end rows with a separator,
write exponents with three digits (``-7.779e-005``) and put blank lines between groups of gains.
Rows are read token by token; every problem names the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hrpsim.errors import ConfigError


def _rows(path: Path) -> list[tuple[int, list[float]]]:
    try:
        text = path.read_text(encoding="ascii", errors="strict")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read controller data file {path}: {exc}") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()  # any run of spaces and tabs; trailing separators leave no empty token
        if not tokens:
            continue
        try:
            rows.append((number, [float(t) for t in tokens]))
        except ValueError:
            bad = next(t for t in tokens if not _is_number(t))
            raise ConfigError(f"{path}:{number}: {bad!r} is not a number") from None
    if not rows:
        raise ConfigError(f"{path}: no data rows")
    return rows


def _is_number(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def _table(path: Path, width: int | None) -> np.ndarray:
    rows = _rows(path)
    expected = width if width is not None else len(rows[0][1])
    for number, values in rows:
        if len(values) != expected:
            raise ConfigError(f"{path}:{number}: {len(values)} values, expected {expected}")
    return np.array([values for _, values in rows], dtype=np.float64)


@dataclass(frozen=True)
class Motion:
    """Rows of joint values at evenly spaced times (the first column of the file)."""

    times: np.ndarray  # (rows,)
    values: np.ndarray  # (rows, joints)

    @property
    def dt(self) -> float:
        return float(self.times[1] - self.times[0]) if len(self.times) > 1 else 0.0

    @property
    def start(self) -> float:
        return float(self.times[0])

    @property
    def end(self) -> float:
        return float(self.times[-1])

    def row_at(self, t: float) -> int:
        """The row for time ``t`` (nearest, clamped to the table)."""
        dt = self.dt
        if dt <= 0:
            return 0
        # plain Python: this runs every tick, and np.clip on a scalar costs several microseconds
        return min(max(round((t - self.start) / dt), 0), len(self.times) - 1)

    def at(self, t: float) -> np.ndarray:
        return self.values[self.row_at(t)]


def read_motion(path: str | Path, *, joints: int | None = None) -> Motion:
    """A motion table: time, then ``joints`` values per row (checked when given)."""
    path = Path(path)
    table = _table(path, None if joints is None else joints + 1)
    times = table[:, 0]
    steps = np.diff(times)
    if steps.size and (np.any(steps <= 0)):
        bad = int(np.flatnonzero(steps <= 0)[0]) + 2
        raise ConfigError(f"{path}: data row {bad}: time does not increase")
    return Motion(times=times, values=table[:, 1:])


def read_gains(path: str | Path, *, joints: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(P, D) gains, one 'P D' pair per non-blank line, in joint order."""
    path = Path(path)
    table = _table(path, 2)
    if joints is not None and len(table) != joints:
        raise ConfigError(f"{path}: {len(table)} gain pairs, expected {joints} (one per joint)")
    return table[:, 0].copy(), table[:, 1].copy()
