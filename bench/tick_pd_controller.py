"""The PD law of bench_tick, as a controller program (external) and as a function (in-process)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hrpsim.controllers import Controller, run_main

P_GAIN, D_GAIN = 8000.0, 100.0


def pd_torque(q_ref: np.ndarray, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
    return P_GAIN * (q_ref - q) - D_GAIN * dq


class HoldPD(Controller):
    def start(self, body) -> None:
        self.q_ref = None

    def control(self, state):
        if self.q_ref is None:
            self.q_ref = state.q.copy()
        return pd_torque(self.q_ref, state.q, state.dq)


if __name__ == "__main__":
    sys.exit(run_main(HoldPD))
