"""``hrpsim sweep report RESULTS.csv``: what a sweep found, printed, and a metric plotted against one
parameter (mean and every run) or two (a map of the mean), to PNG."""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from hrpsim.errors import ConfigError
from hrpsim.sweep.table import FIXED, read_table


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="hrpsim sweep report", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="a results table written by hrpsim sweep")
    parser.add_argument("--metric", help="the column to plot, e.g. robot.stayed_up or a metric")
    parser.add_argument("--x", help="the parameter on the x axis")
    parser.add_argument("--y", help="a second parameter: plot a map of the metric's mean")
    parser.add_argument("-o", "--output", help="the PNG to write (default: RESULTS-METRIC.png)")
    args = parser.parse_args(argv)
    try:
        cols, rows = read_table(Path(args.results))
    except OSError as exc:
        print(f"sweep report: cannot read {args.results}: {exc}", file=sys.stderr)
        return 2
    print(summary_text(cols, rows))
    if args.metric is None:
        return 0
    for name in (args.metric, args.x, args.y):
        if name is not None and name not in cols:
            print(f"sweep report: no column {name!r} (columns: {', '.join(cols)})", file=sys.stderr)
            return 2
    if args.x is None:
        print("sweep report: --metric needs --x (and optionally --y) to plot against", file=sys.stderr)
        return 2
    output = Path(args.output or f"{Path(args.results).with_suffix('')}-{args.metric}.png")
    try:
        plot(rows, args.metric, args.x, args.y, output)
    except ConfigError as exc:
        print(f"sweep report: {exc}", file=sys.stderr)
        return 2
    print(f"sweep report: {args.metric} against {args.x}{f' and {args.y}' if args.y else ''}: {output}")
    return 0


def summary_text(cols: list[str], rows: list[dict[str, Any]]) -> str:
    statuses = Counter(r["status"] for r in rows)
    lines = [f"{len(rows)} runs: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))]
    for col in cols:
        if col in FIXED:
            continue
        values = [_number(r[col]) for r in rows if r["status"] == "ok"]
        values = [v for v in values if v is not None]
        if values:
            mean = sum(values) / len(values)
            lines.append(f"  {col:<32} mean {mean:.6g}  min {min(values):.6g}  max {max(values):.6g}")
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"  run {r['run']} {r['status']}: {r['error']}")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], metric: str, x: str, y: str | None, output: Path) -> None:
    """Every run and the mean per value of ``x``; with ``y``: one mean line per value of ``y`` when it is
    a category (an engine's name), else a map of the mean over the two parameters."""
    try:
        import matplotlib
    except ImportError:
        raise ConfigError(
            "plots need matplotlib, hrpsim's plot extra: pip install 'hrpsim[plot]' "
            "(in a checkout: pip install -e '.[plot]')"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if r["status"] == "ok" and _number(r[metric]) is not None]
    xs = _Axis([r[x] for r in ok])
    fig, ax = plt.subplots(figsize=(7, 5))
    if y is not None and not _Axis([r[y] for r in ok]).categorical:
        ys = _Axis([r[y] for r in ok])
        means = _means(ok, metric, lambda r: (xs.position(r[x]), ys.position(r[y])))
        points = sorted(means)
        scatter = ax.scatter([p[0] for p in points], [p[1] for p in points], c=[means[p] for p in points], s=80)
        fig.colorbar(scatter, ax=ax, label=f"mean {metric}")
        ax.set_ylabel(y)
    else:
        groups = sorted({str(r[y]) for r in ok}) if y is not None else [None]
        for i, group in enumerate(groups):
            members = [r for r in ok if group is None or str(r[y]) == group]
            label = "mean" if group is None else f"{y} = {group}"
            ax.scatter([xs.position(r[x]) for r in members], [_number(r[metric]) for r in members], s=12, alpha=0.4)
            means = _means(members, metric, lambda r: xs.position(r[x]))
            keys = sorted(means)
            ax.plot(keys, [means[k] for k in keys], "o-", color=f"C{i}", label=label)
        ax.set_ylabel(metric)
        ax.legend()
    xs.label(ax.xaxis)
    ax.set_xlabel(x)
    ax.set_title(f"{metric} over {len(ok)} runs")
    fig.tight_layout()
    fig.savefig(output, dpi=100)
    plt.close(fig)


class _Axis:
    """A parameter's values on an axis: numbers as they are, anything else as evenly spaced categories."""

    def __init__(self, values: list[Any]) -> None:
        self.categorical = any(_number(v) is None for v in values)
        self.categories = sorted({str(v) for v in values}) if self.categorical else []

    def position(self, value: Any) -> float:
        return float(self.categories.index(str(value))) if self.categorical else _number(value)

    def label(self, axis: Any) -> None:
        if self.categorical:
            axis.set_ticks(range(len(self.categories)), self.categories)


def _means(rows: list[dict[str, Any]], metric: str, key: Any) -> dict[Any, float]:
    groups: dict[Any, list[float]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(_number(r[metric]))
    return {k: sum(v) / len(v) for k, v in groups.items()}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int) and value.bit_length() > 1023:
        return None  # past a float's range
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None
