"""Print the URDF regression corpus as the Markdown table of docs/formats-urdf-collada.md.

    .venv/bin/python scripts/urdf_corpus.py > /tmp/corpus.md

Every ``.urdf`` shipped by example-robot-data and by pybullet (pybullet_data), loaded by hrpsim:
links, joints in controller order, mimic joints and the number of warnings, or the error. The
1000 procedurally generated objects of pybullet_data/random_urdfs are summed in one line.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from hrpsim.errors import ModelError
from hrpsim.modelloader.urdf import load_urdf

PACKAGES = {
    "example-robot-data": "cmeel.prefix/share/example-robot-data/robots",
    "pybullet": "pybullet_data",
}


def _row(package: str, relative: str, path: Path) -> tuple[str, bool]:
    try:
        body = load_urdf(path)
    except ModelError as exc:
        first = exc.problems[0] if exc.problems else str(exc)
        reason = first.split(": ", 2)[-1].split(";")[0][:80]  # after "file:line: element path: "
        return f"| {package} | `{relative}` | error: {reason} | | | |", False
    mimics = sum(1 for link in body.links if link.mimic is not None)
    warnings = len(body.metadata.get("warnings", []))
    return f"| {package} | `{relative}` | {len(body.links)} | {len(body.joints)} | {mimics} | {warnings} |", True


def main() -> None:
    print("| package | file | links | joints | mimic | warnings |")
    print("|---|---|---|---|---|---|")
    generated = [0, 0]
    for package, inside in PACKAGES.items():
        folder = Path(str(importlib.metadata.distribution(package).locate_file(inside)))
        for path in sorted(folder.rglob("*.urdf")):
            relative = str(path.relative_to(folder))
            row, loaded = _row(package, relative, path)
            if "random_urdfs" in path.parts:
                generated[0] += 1
                generated[1] += loaded
            else:
                print(row)
    print(f"| pybullet | `random_urdfs/*/*.urdf` | {generated[1]} of {generated[0]} objects load | | | |")


if __name__ == "__main__":
    main()
