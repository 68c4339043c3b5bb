"""The Python API in a notebook-sized script: load the sample humanoid, hold its pose for 2 s with
a PD law written right here, and plot the right knee against time.

    python examples/python/hold_and_plot.py [OUT.png]
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt
import numpy as np

import hrpsim

PROJECT = Path(__file__).resolve().parents[1] / "sample_stand.yaml"


def hold_and_plot(out: Path, seconds: float = 2.0) -> dict:
    with hrpsim.Simulation(PROJECT) as sim:
        start = sim.state("robot")
        sim.command("robot", modes=dict.fromkeys(sim.engine.body("robot").joint_names, "torque"))
        times, angles = [], []
        while sim.time < seconds:
            state = sim.state("robot")
            sim.command("robot", torque=400.0 * (start.q - state.q) - 20.0 * state.dq)
            sim.step()
            times.append(sim.time)
            angles.append(float(state.joint("RLEG_KNEE").q))
        summary = sim.summary()
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot(times, np.degrees(angles))
    ax.set_xlabel("time [s]")
    ax.set_ylabel("RLEG_KNEE [deg]")
    ax.set_title("sample1 holding its pose")
    fig.tight_layout()
    fig.savefig(out)
    return summary


if __name__ == "__main__":
    result = hold_and_plot(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("hold.png"))
    print(result["robots"]["robot"])
