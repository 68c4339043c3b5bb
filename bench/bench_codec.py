"""Encode+decode time of a humanoid state message (30 joints, 4 force sensors, gyro, accel).

Baseline: the same message with every array sent as a msgpack list of floats, in the same run.
`ratio` = ours / lists (below 1 means the array extension is the faster way).
"""

from __future__ import annotations

import time

import msgpack
import numpy as np

from hrpsim.codec import CODEC


def humanoid_state() -> dict:
    rng = np.random.default_rng(0)
    sensors = {f"force{i}": rng.normal(size=6) for i in range(4)}
    sensors |= {"gyro": rng.normal(size=3), "accel": rng.normal(size=3)}
    return {
        "time": 1.234,
        "tick": 1234,
        "q": rng.normal(size=30),
        "dq": rng.normal(size=30),
        "tau": rng.normal(size=30),
        "root_position": rng.normal(size=3),
        "root_rotation": np.eye(3),
        "root_velocity": rng.normal(size=6),
        "sensors": sensors,
    }


def as_lists(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: as_lists(v) for k, v in value.items()}
    return value


def per_call_us(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


def run() -> dict[str, float]:
    state = humanoid_state()
    ours = per_call_us(lambda: CODEC.decode(CODEC.encode(state)), 2000)

    def lists_round_trip() -> None:
        decoded = msgpack.unpackb(msgpack.packb(as_lists(state)))
        {k: np.asarray(v) for k, v in decoded.items() if isinstance(v, list)}

    baseline = per_call_us(lists_round_trip, 2000)
    return {"encode_decode_us": ours, "lists_encode_decode_us": baseline, "ratio": ours / baseline}
