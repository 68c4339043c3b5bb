"""Launch time: from `hrpsim launch` to the first tick of the demo (examples/sample_walk.yaml), with the
components started at once after the nameserver (each waiting for what it needs) and one at a time
(`--serial-start`: each once the one before it has registered, the baseline, measured in the same run).
Each figure is the median of 5 launches, the two ways alternating, each with a private nameserver on a
free port; the time runs from starting the `hrpsim launch` process to the launcher's `launch.started_at`
in the run summary (when the simulator began to tick). `ratio` = at once / one at a time (aim <= 0.5).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "examples" / "sample_walk.yaml"
LAUNCHES = 5


def _startup_s(folder: Path, *extra: str) -> float:
    summary = folder / "summary.json"
    command = [sys.executable, "-m", "hrpsim", "launch", str(DEMO), "--until", "0.01", "--quiet"]
    command += ["--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(folder / "run"), "--summary", str(summary)]
    started = time.time()
    subprocess.run([*command, *extra], check=True, capture_output=True, cwd=REPO, timeout=300)
    return float(json.loads(summary.read_text())["launch"]["started_at"]) - started


def run() -> dict[str, float]:
    together, serial = [], []
    with tempfile.TemporaryDirectory() as folder:
        for i in range(LAUNCHES):
            serial.append(_startup_s(Path(folder) / f"serial-{i}", "--serial-start"))
            together.append(_startup_s(Path(folder) / f"together-{i}"))
    at_once, one_by_one = statistics.median(together), statistics.median(serial)
    return {"first_tick_s": at_once, "serial_first_tick_s": one_by_one, "ratio": at_once / one_by_one}
