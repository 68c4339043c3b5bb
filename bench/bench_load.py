"""Model loading: cold parse of real models, and a cached load through the modelloader service.

Cold figures are medians of in-process loads with nothing cached (the parser tables are built
once per process beforehand, as in a running modelloader). `house_scan_ms` is the baseline: one
regular-expression pass splitting house.wrl (+ its Inline) into tokens, the floor for any
Python reader; `house_ratio` = house_cold_ms / house_scan_ms. `cached_ms` is a load of
sample1.wrl answered from the service's cache (request, sha256 check of the file, reply,
decode), against `service_cold_ms`, the same request after `clear`; `cached_ratio` is their
ratio. `info_process_ms` is a whole `hrpsim model info --json sample1.wrl` process, against
`python_imports_ms`, a process that only imports numpy, lark and pyzmq.
Aims: sample1 under 150 ms cold, house under 2 s, a cached load under 5 ms.
`sr1_cold_ms` (URDF) and `wam_cold_ms` (COLLADA .zae) appear when those readers exist.
`humanoid_cold_ms` is dm_control's humanoid.xml (MJCF) when dm_control and MuJoCo are installed,
against `humanoid_compile_ms`, MuJoCo's own load of the file (MjModel.from_xml_path, textures and
all; the reader drops textures before compiling), measured in alternation; `humanoid_ratio` is the
median of the pairs' ratios.
`gr001_cold_ms` (Choreonoid body, 21 STL meshes) with `gr001_ratio` = gr001_cold_ms / sample1_cold_ms.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from procs import REPO, nameserver_process

from hrpsim.client import Client
from hrpsim.modelloader import load_body
from hrpsim.naming import NameClient

MODELS = REPO / "models"
SAMPLE1 = MODELS / "openhrp3/model/sample1.wrl"
PA10 = MODELS / "openhrp3/model/PA10/pa10.main.wrl"
HOUSE = MODELS / "openhrp3/model/house/house.main.wrl"
SR1 = MODELS / "choreonoid/model/SR1/SR1.urdf"
WAM = MODELS / "openrave/robots/barrett-wam-sensors.zae"
GR001 = MODELS / "choreonoid-body/GR001/GR001.body"
TOKEN = re.compile(r'#[^\n]*|"(?:[^"\\]|\\.)*"|[^\s,\[\]{}#"]+|[\[\]{}]')


def median_ms(action: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def scan(paths: list[Path]) -> int:
    return sum(len(TOKEN.findall(p.read_bytes().decode("utf-8", "replace"))) for p in paths)


@contextmanager
def modelloader(nameserver: str) -> Iterator[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HRPSIM_LOG_LEVEL": "WARNING"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hrpsim",
            "run",
            "modelloader",
            "--nameserver",
            nameserver,
            "--name",
            "bench-loader",
            "--model-root",
            str(MODELS),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
        cwd=tempfile.gettempdir(),
    )
    try:
        deadline = time.monotonic() + 30
        with NameClient(nameserver) as ns:
            while True:
                entries = {e["name"]: e["endpoint"] for e in ns.list()}
                if "bench-loader" in entries:
                    yield entries["bench-loader"]
                    break
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the modelloader did not register")
                time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


def process_ms(args: list[str], rounds: int = 5) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return median_ms(
        lambda: subprocess.run([sys.executable, *args], env=env, check=True, capture_output=True, timeout=120), rounds
    )


def mjcf_figures() -> dict[str, float]:
    """dm_control's humanoid.xml: our load and MuJoCo's own compile of it (none without them)."""
    if importlib.util.find_spec("dm_control") is None or importlib.util.find_spec("mujoco") is None:
        return {}
    import mujoco

    humanoid = Path(importlib.util.find_spec("dm_control").submodule_search_locations[0]) / "suite" / "humanoid.xml"
    load_body(humanoid)  # imports MuJoCo once, as a running service has
    loads, compiles = [], []
    for _ in range(15):  # interleaved, so that a busy machine slows both alike
        loads.append(median_ms(lambda: load_body(humanoid), 1))
        compiles.append(median_ms(lambda: mujoco.MjModel.from_xml_path(str(humanoid)), 1))
    return {
        "humanoid_cold_ms": statistics.median(loads),
        "humanoid_compile_ms": statistics.median(compiles),
        "humanoid_ratio": statistics.median(a / b for a, b in zip(loads, compiles, strict=True)),
    }


def run() -> dict[str, float]:
    load_body(SAMPLE1)  # builds the parser tables once, as a running service has
    figures = {
        "sample1_cold_ms": median_ms(lambda: load_body(SAMPLE1), 15),
        "pa10_cold_ms": median_ms(lambda: load_body(PA10), 15),
        "house_cold_ms": median_ms(lambda: load_body(HOUSE), 5),
    }
    house_files = [Path(p) for p in load_body(HOUSE).metadata["files"]]
    figures["house_scan_ms"] = median_ms(lambda: scan(house_files), 5)
    figures["house_ratio"] = figures["house_cold_ms"] / figures["house_scan_ms"]
    if importlib.util.find_spec("modelloader.urdf") is not None:
        figures["sr1_cold_ms"] = median_ms(lambda: load_body(SR1), 15)
    if importlib.util.find_spec("modelloader.collada") is not None:
        figures["wam_cold_ms"] = median_ms(lambda: load_body(WAM), 5)
    figures.update(mjcf_figures())
    if importlib.util.find_spec("modelloader.choreonoid") is not None:
        figures["gr001_cold_ms"] = median_ms(lambda: load_body(GR001), 15)
        figures["gr001_ratio"] = figures["gr001_cold_ms"] / figures["sample1_cold_ms"]
    with (
        nameserver_process() as address,
        modelloader(address) as endpoint,
        Client(endpoint, peer="bench-loader", timeout=60.0) as client,
    ):

        def cold() -> None:
            client.call("clear")
            client.call("load", path=str(SAMPLE1))

        figures["service_cold_ms"] = median_ms(cold, 10)
        client.call("load", path=str(SAMPLE1))
        figures["cached_ms"] = median_ms(lambda: client.call("load", path=str(SAMPLE1)), 200)
    figures["cached_ratio"] = figures["cached_ms"] / figures["service_cold_ms"]
    figures["info_process_ms"] = process_ms(["-m", "hrpsim", "model", "info", "--json", str(SAMPLE1)])
    figures["python_imports_ms"] = process_ms(["-c", "import numpy, lark, zmq"])
    return figures
