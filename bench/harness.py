"""Runs benchmarks and keeps bench/RESULTS.md up to date.

A benchmark is a module ``bench/bench_NAME.py`` with ``run() -> dict[str, float]`` whose keys are
the figure names without the ``NAME.`` prefix, and a docstring whose first line says what it
measures. Every benchmark measures its own baseline in the same run and reports the ratio.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import platform
import re
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


def section(name: str, doc: str, figures: dict[str, float], command: str) -> str:
    lines = [
        f"## {name}",
        "",
        doc.strip().splitlines()[0] if doc.strip() else "",
        "",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {machine()}",
        f"- command: `{command}`",
        "",
        "| figure | value |",
        "|---|---:|",
    ]
    lines += [f"| `{name}.{k}` | {v:.4g} |" for k, v in figures.items()]
    rest = doc.strip().splitlines()[1:]
    if rest:
        lines += ["", *[r.strip() for r in rest if r.strip()]]
    return "\n".join(lines) + "\n"


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
    args = parser.parse_args(argv)
    names = args.names or available()
    unknown = [n for n in names if n not in available()]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(available())}")
    command = "bench/run " + " ".join(argv if argv is not None else sys.argv[1:])
    out: dict[str, dict[str, float]] = {}
    for name in names:
        module = importlib.import_module(f"bench_{name}")
        print(f"bench {name} ...", file=sys.stderr, flush=True)
        figures = {k: float(v) for k, v in module.run().items()}
        out[name] = figures
        for k, v in figures.items():
            print(f"  {name}.{k} = {v:.4g}", file=sys.stderr)
        if not args.no_record:
            update_results(name, section(name, module.__doc__ or "", figures, command.strip()))
    if args.json:
        print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
