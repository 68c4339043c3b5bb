"""Metrics of the example sweeps: each takes one finished run (hrpsim.sweep.run_one.RunResult)."""

import math


def slid(run):
    """How far the box's root moved in the run, in metres."""
    box = run.summary["robots"]["box"]
    return math.dist(box["root_start"], box["root_end"])
