"""The PD law of bench_tick as a controller (external with ``hrpsim controller``, or in process).

``-o work_us=300`` makes each turn also compute for that long (a busy loop), the stand-in for a
controller with real work to do."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hrpsim.controllers import Controller, run_main

P_GAIN, D_GAIN = 8000.0, 100.0


def pd_torque(q_ref: np.ndarray, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
    return P_GAIN * (q_ref - q) - D_GAIN * dq


class HoldPD(Controller):
    def __init__(self, *, work_us: float = 0.0) -> None:
        super().__init__()
        self.work_s = work_us * 1e-6

    def start(self, body) -> None:
        self.q_ref = None

    def control(self, state):
        if self.q_ref is None:
            self.q_ref = state.q.copy()
        if self.work_s:
            until = time.perf_counter() + self.work_s
            while time.perf_counter() < until:
                pass
        return pd_torque(self.q_ref, state.q, state.dq)


if __name__ == "__main__":
    sys.exit(run_main(HoldPD))
