"""Runs benchmarks and keeps bench/RESULTS.md up to date.

A benchmark is a module ``bench/bench_NAME.py`` with ``run() -> dict[str, float]`` whose keys are
the figure names without the ``NAME.`` prefix, and a docstring whose first line says what it
measures. Every benchmark measures its own baseline in the same run and reports the ratio.

``--repeat N`` runs the named benchmarks N times, interleaved (all of them once, then all again),
so that a slow minute of the machine lands on every benchmark alike; each figure is then reported
as the median of its N readings with their least and greatest beside it. Aims are judged on medians.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import platform
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
RESULTS = HERE / "RESULTS.md"
HEADER = """# Benchmark results

Written by `bench/run`; each section is replaced when its benchmark runs again. Every figure
comes with a baseline measured in the same run, so ratios compare like with like.
"""


def available() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    system = f"{platform.system()} {platform.release()}"
    return f"{system}, {os.cpu_count()} cores, {cpu}, Python {platform.python_version()}"


def section(name: str, doc: str, readings: dict[str, list[float]], command: str) -> str:
    """A RESULTS.md section: one reading per figure as a value, several as median and spread."""
    repeated = any(len(values) > 1 for values in readings.values())
    lines = [
        f"## {name}",
        "",
        doc.strip().splitlines()[0] if doc.strip() else "",
        "",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {machine()}",
        f"- command: `{command}`",
        "",
        *(
            ["| figure | median | min - max | runs |", "|---|---:|---:|---:|"]
            if repeated
            else ["| figure | value |", "|---|---:|"]
        ),
    ]
    lines += [_row(f"{name}.{k}", values, repeated) for k, values in readings.items()]
    rest = doc.strip().splitlines()[1:]
    if rest:
        lines += ["", *[r.strip() for r in rest if r.strip()]]
    return "\n".join(lines) + "\n"


def _row(figure: str, values: list[float], repeated: bool) -> str:
    if not repeated:
        return f"| `{figure}` | {values[0]:.4g} |"
    return f"| `{figure}` | {statistics.median(values):.4g} | {min(values):.4g} - {max(values):.4g} | {len(values)} |"


def update_results(name: str, text: str) -> None:
    current = RESULTS.read_text() if RESULTS.exists() else HEADER
    pattern = re.compile(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(current):
        current = pattern.sub(lambda _m: text + "\n", current)
    else:
        current = current.rstrip() + "\n\n" + text
    RESULTS.write_text(current.rstrip() + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/run", description="Run hrpsim benchmarks.")
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default all: {', '.join(available())})")
    parser.add_argument("--json", action="store_true", help='print {"NAME": {"FIGURE": value}} on stdout')
    parser.add_argument("--no-record", action="store_true", help="do not update bench/RESULTS.md")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run the benchmarks N times, interleaved, and report each figure's median and min-max",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat takes a whole number of at least 1, got {args.repeat}")
    names = args.names or available()
    unknown = [n for n in names if n not in available()]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(available())}")
    command = "bench/run " + " ".join(argv if argv is not None else sys.argv[1:])
    readings: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for rep in range(args.repeat):
        for name in names:
            module = importlib.import_module(f"bench_{name}")
            print(f"bench {name} ({rep + 1} of {args.repeat}) ...", file=sys.stderr, flush=True)
            for k, v in module.run().items():
                readings[name].setdefault(k, []).append(float(v))
                print(f"  {name}.{k} = {float(v):.4g}", file=sys.stderr)
    for name in names:
        if not args.no_record:
            module = importlib.import_module(f"bench_{name}")
            update_results(name, section(name, module.__doc__ or "", readings[name], command.strip()))
    if args.json:
        out = {name: {k: statistics.median(v) for k, v in figures.items()} for name, figures in readings.items()}
        print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
