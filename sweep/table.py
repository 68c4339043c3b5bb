"""The results table: one row per run, written as runs finish (so an interrupted sweep loses no
finished run and ``--resume`` starts where it stopped), and sorted by run once the sweep ends.

Columns: ``run``, ``seed``, ``status`` (ok, failed, timeout, crashed, error), ``error``, ``mode``
(in_process or launch), ``wall_s``, ``sim_time``, then the parameters by name, then per robot
``ROBOT.stayed_up`` (empty where the summary gives no verdict), ``ROBOT.x/y/z`` (the root at the end)
and ``ROBOT.min_z``, per controller ``CTL.ticks``, ``CTL.missed`` and ``CTL.errors``, then the metrics.
Cells hold numbers as Python writes them (exact), true/false, JSON for lists, and nothing for none.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from typing import Any

from hrpsim.summary_report import fallen

FIXED = ["run", "seed", "status", "error", "mode", "wall_s", "sim_time"]
TIMING = {"wall_s"}  # the only column that differs between two runs of the same sweep
ROBOT_FIGURES = ["stayed_up", "x", "y", "z", "min_z"]
CONTROLLER_FIGURES = ["ticks", "missed", "errors"]


def columns(params: list[str], robots: list[str], controllers: list[str], metrics: list[str]) -> list[str]:
    cols = [*FIXED, *params]
    cols += [f"{robot}.{figure}" for robot in robots for figure in ROBOT_FIGURES]
    cols += [f"{ctl}.{figure}" for ctl in controllers for figure in CONTROLLER_FIGURES]
    return cols + metrics


def row_of(index: int, seed: int, params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """A run's row from its result (hrpsim.sweep.run_one)."""
    summary = result.get("summary") or {}
    row: dict[str, Any] = {
        "run": index,
        "seed": seed,
        "status": result.get("status"),
        "error": one_line(result.get("error")),
        "mode": result.get("mode"),
        "wall_s": result.get("wall_s"),
        "sim_time": summary.get("sim_time"),
        **params,
    }
    for robot, figures in (summary.get("robots") or {}).items():
        verdict = fallen(figures)
        end = figures.get("root_end") or [None] * 3
        row[f"{robot}.stayed_up"] = None if verdict is None else not verdict
        row.update({f"{robot}.{axis}": value for axis, value in zip("xyz", end, strict=True)})
        row[f"{robot}.min_z"] = figures.get("min_root_z")
    for ctl, stats in (summary.get("controllers") or {}).items():
        row.update({f"{ctl}.{figure}": stats.get(figure) for figure in CONTROLLER_FIGURES})
    row.update(result.get("metrics") or {})
    return row


def one_line(text: str | None) -> str | None:
    """An error as one line of plain text (a remote traceback comes with newlines and colours)."""
    return None if text is None else " ".join(re.sub(r"\x1b\[[0-9;]*m", "", text).split())


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


def value_of(text: str) -> Any:
    """A cell back as a value: the inverse of :func:`cell` for the types it writes."""
    if text == "":
        return None
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


class ResultsTable:
    def __init__(self, path: Path, cols: list[str]) -> None:
        self.path, self.columns = path, cols
        self.rows: dict[int, dict[str, str]] = {}

    def resume(self) -> set[int]:
        """Take the rows an earlier, interrupted sweep wrote; returns their runs. A line cut short
        when that sweep was killed is dropped (its run runs again)."""
        if not self.path.is_file():
            return set()
        with open(self.path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header != self.columns:
                raise ValueError(
                    f"{self.path}: its columns are not this sweep's: resume the sweep that wrote it, or "
                    "give another results file"
                )
            for fields in reader:
                if len(fields) == len(self.columns) and fields[0].isdigit() and fields[2]:
                    self.rows[int(fields[0])] = dict(zip(self.columns, fields, strict=True))
        self._rewrite(sorted(self.rows))
        return set(self.rows)

    def start(self) -> None:
        """A new table (a sweep that does not resume)."""
        self.rows = {}
        self._rewrite([])

    def add(self, row: dict[str, Any]) -> None:
        cells = {col: cell(row.get(col)) for col in self.columns}
        self.rows[int(row["run"])] = cells
        with open(self.path, "a", newline="") as f:
            csv.writer(f).writerow([cells[c] for c in self.columns])
            f.flush()
            os.fsync(f.fileno())

    def finish(self, parquet: Path | None = None) -> None:
        """Sort the rows by run; also write them as Parquet when asked."""
        self._rewrite(sorted(self.rows))
        if parquet is not None:
            write_parquet(parquet, self.columns, [self.rows[i] for i in sorted(self.rows)])

    def _rewrite(self, order: list[int]) -> None:
        temporary = self.path.with_name(self.path.name + ".tmp")
        with open(temporary, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(self.columns)
            writer.writerows([self.rows[i][c] for c in self.columns] for i in order)
        os.replace(temporary, self.path)


def read_table(path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """A results file's columns and rows, cells as values."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = [{k: value_of(v) for k, v in row.items()} for row in reader]
        return list(reader.fieldnames or []), rows


def write_parquet(path: Path, cols: list[str], rows: list[dict[str, str]]) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(
            "Parquet output needs pyarrow, hrpsim's sweep extra: pip install 'hrpsim[sweep]' "
            "(in a checkout: pip install -e '.[sweep]')"
        ) from None
    data = {c: [value_of(r[c]) for r in rows] for c in cols}
    table = pa.table(
        {c: pa.array([json.dumps(v) if isinstance(v, list | dict) else v for v in vs]) for c, vs in data.items()}
    )
    pq.write_table(table, path)
