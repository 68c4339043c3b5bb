"""Reading a body file takes time in proportion to its links: four times the links take about four
times the processor time, not sixteen (the link ordering once compared every link with every other
it had placed). Processor time of this process, so a busy machine does not change the ratio."""

from __future__ import annotations

import time
from pathlib import Path

from hrpsim.modelloader import load_body


def chain(folder: Path, links: int) -> Path:
    path = folder / f"chain{links}.body"
    rest = "".join(
        f"  - {{name: l{i}, parent: l{i - 1}, jointType: revolute, jointAxis: Z, jointId: {i - 1}, mass: 1}}\n"
        for i in range(1, links)
    )
    path.write_text("format: ChoreonoidBody\nformatVersion: 2.0\nname: chain\nlinks:\n  - {name: l0, mass: 1}\n" + rest)
    return path


def cpu_seconds(path: Path) -> float:
    started = time.process_time()
    body = load_body(path)
    spent = time.process_time() - started
    assert body.links[-1].parent == len(body.links) - 2  # a chain, in order
    return spent


def test_four_times_the_links_take_about_four_times_as_long(tmp_path: Path) -> None:
    cpu_seconds(chain(tmp_path, 10))  # the readers' imports and tables, once
    ratio = cpu_seconds(chain(tmp_path, 8_000)) / cpu_seconds(chain(tmp_path, 2_000))
    assert ratio < 8, f"{ratio:.1f} times the time for 4 times the links"
