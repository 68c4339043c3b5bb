"""In-process MuJoCo beside dm_control: sample1 standing under a torque PD hold, the same model.

The model is the one hrpsim's MuJoCo engine compiles for examples/sample_walk.yaml (sample1 on the
floor, 2 ms step), written out as MJCF (its MjSpec's XML), with the engine's initial state and every
joint in torque mode under the PD law of bench/tick_pd_controller.py (P 8000, D 100, holding the
initial pose). dm_control pins a MuJoCo of its own, so its side runs in a virtual environment of its
own that this bench makes on first use (``pip install dm_control 'mujoco<4'`` into DM_CONTROL_VENV, or the
directory ``HRPSIM_DM_CONTROL_VENV`` names): there, blocks of ticks alternate between dm_control's
``Physics`` loop (the PD law written into ``physics.data.ctrl``, ``physics.step()``) and a bare loop of
``mj_step`` with the same law on its own MjData of the same model; `dm_control_ratio` is the median of
the blocks' time ratios (dm_control over bare), `dm_control_z` / `dm_control_bare_z` the root's height
at the end of each (the same physics). Beside it, in turns with it, `hrpsim_ratio` is bench/bench_engines.py's
`raw_mujoco_ratio` (hrpsim's Python API with the same controller attached, over a bare loop in this
environment's MuJoCo), each the median over REPEATS turns. When the environment cannot be made or
dm_control's MuJoCo refuses the model, `dm_control_skipped` is 1 and the reason is printed.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DM_CONTROL_VENV = Path(
    os.environ.get("HRPSIM_DM_CONTROL_VENV", Path.home() / ".cache" / "hrpsim" / "bench-dm_control-venv")
)
REPEATS = 3
SECONDS = 4.0
BLOCK = 250
P_GAIN, D_GAIN = 8000.0, 100.0  # bench/tick_pd_controller.py's


# dm_control's struct indexer names MjModel fields of the MuJoCo it was released with: its release
# allows newer MuJoCo majors than it can index, so the MuJoCo is held below the next major.
DM_CONTROL_REQUIREMENTS = ("dm_control", "mujoco<4")


def _environment() -> tuple[Path | None, str]:
    """dm_control's interpreter (made on first use), or None and why not."""
    python, marker = DM_CONTROL_VENV / "bin" / "python", DM_CONTROL_VENV / "hrpsim-requirements.txt"
    wanted = " ".join(DM_CONTROL_REQUIREMENTS)
    if not marker.exists() or marker.read_text() != wanted:
        try:
            if not python.exists():
                subprocess.run([sys.executable, "-m", "venv", str(DM_CONTROL_VENV)], check=True, timeout=300)
            pip = [str(python), "-m", "pip", "install", "--quiet", *DM_CONTROL_REQUIREMENTS]
            subprocess.run(pip, check=True, timeout=1800, capture_output=True, text=True)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
            detail = getattr(exc, "stderr", "") or ""
            return None, f"could not make dm_control's environment in {DM_CONTROL_VENV}: {exc} {detail[-500:]}"
        marker.write_text(wanted)
    check = subprocess.run([str(python), "-c", "import dm_control.mujoco"], capture_output=True, text=True, timeout=120)
    if check.returncode != 0:
        return None, f"dm_control does not import in {DM_CONTROL_VENV}: {check.stderr[-500:]}"
    return python, ""


def _standing_model(folder: Path) -> Path:
    """The engine's model as MJCF and what the loops need of it, in ``folder``; the settings file."""
    sys.path.insert(0, str(REPO))
    from bench_engines import BareMujoco, _mujoco_world

    from hrpsim.modelloader import load_body
    from hrpsim.project import load_project

    bodies = {m.name: load_body(m.file) for m in load_project(REPO / "examples" / "sample_walk.yaml").models}
    engine = _mujoco_world(bodies).engine
    bare = BareMujoco(engine, "robot")
    (folder / "model.xml").write_text(engine.spec.to_xml())
    settings = {
        "xml": str(folder / "model.xml"),
        "qpos": engine.d.qpos.tolist(),
        "qvel": engine.d.qvel.tolist(),
        "ctrl": engine.d.ctrl.tolist(),
        "actuators": [int(a) for a in bare.actuators],
        "qpos_addresses": [int(a) for a in bare.qpos],
        "dof_addresses": [int(a) for a in bare.dofs],
        "q_ref": bare.q_ref.tolist(),
        "root": bare.root,
        "ticks": round(SECONDS / engine.timestep),
    }
    path = folder / "settings.json"
    path.write_text(json.dumps(settings))
    return path


def _side_by_side(settings_path: str) -> dict[str, float]:
    """dm_control's side (run by dm_control's interpreter): only numpy, mujoco and dm_control here."""
    import mujoco
    import numpy as np
    from dm_control.mujoco import Physics

    s = json.loads(Path(settings_path).read_text())
    xml = Path(s["xml"]).read_text()
    actuators, qadr, dadr = (np.array(s[k]) for k in ("actuators", "qpos_addresses", "dof_addresses"))
    q_ref = np.array(s["q_ref"])
    physics = Physics.from_xml_string(xml)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    for data in (physics.data, d):
        data.qpos[:], data.qvel[:], data.ctrl[:] = s["qpos"], s["qvel"], s["ctrl"]
    physics.forward()
    mujoco.mj_forward(m, d)

    def dm_control_block() -> None:
        data = physics.data
        for _ in range(BLOCK):
            data.ctrl[actuators] = P_GAIN * (q_ref - data.qpos[qadr]) - D_GAIN * data.qvel[dadr]
            physics.step()

    def bare_block() -> None:
        for _ in range(BLOCK):
            d.ctrl[actuators] = P_GAIN * (q_ref - d.qpos[qadr]) - D_GAIN * d.qvel[dadr]
            mujoco.mj_step(m, d)

    ratios = []
    for _ in range(s["ticks"] // BLOCK):
        start = time.perf_counter()
        dm_control_block()
        theirs = time.perf_counter() - start
        start = time.perf_counter()
        bare_block()
        ratios.append(theirs / (time.perf_counter() - start))
    return {
        "dm_control_ratio": statistics.median(ratios),
        "dm_control_z": float(physics.data.xpos[s["root"]][2]),
        "dm_control_bare_z": float(d.xpos[s["root"]][2]),
        "dm_control_mujoco_version": float(".".join(mujoco.__version__.split(".")[:2])),
    }


def _dm_control_turn(python: Path, settings: Path) -> dict[str, float]:
    done = subprocess.run(
        [str(python), __file__, "--inside", str(settings)], capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        raise RuntimeError(f"dm_control's side failed: {done.stderr[-1000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _hrpsim_turn() -> float:
    done = subprocess.run(
        [sys.executable, str(HERE / "bench_engines.py"), "--raw-mujoco"],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    return float(json.loads(done.stdout.splitlines()[-1])["raw_mujoco_ratio"])


def run() -> dict[str, float]:
    python, why = _environment()
    if python is None:
        print(f"dm_control side-by-side skipped: {why}", file=sys.stderr)
        return {"dm_control_skipped": 1.0}
    with tempfile.TemporaryDirectory() as tmp:
        settings = _standing_model(Path(tmp))
        theirs, ours = [], []
        for _ in range(REPEATS):
            try:
                theirs.append(_dm_control_turn(python, settings))
            except RuntimeError as exc:  # e.g. its older MuJoCo refuses the model's XML
                print(f"dm_control side-by-side skipped: {exc}", file=sys.stderr)
                return {"dm_control_skipped": 1.0}
            ours.append(_hrpsim_turn())
    figures = {name: statistics.median(turn[name] for turn in theirs) for name in theirs[0]}
    figures["hrpsim_ratio"] = statistics.median(ours)
    figures["hrpsim_over_dm_control"] = figures["hrpsim_ratio"] / figures["dm_control_ratio"]
    figures["dm_control_skipped"] = 0.0
    return figures


if __name__ == "__main__":
    if sys.argv[1:2] == ["--inside"]:
        print(json.dumps(_side_by_side(sys.argv[2])))
        sys.exit(0)
    for key, value in run().items():
        print(f"dm_control.{key} = {value:.4g}")
