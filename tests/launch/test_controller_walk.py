"""The demo, end to end: ``hrpsim launch examples/sample_walk.yaml`` starts the nameserver, model
loader, simulator and the sample controller as processes; the humanoid walks the OpenHRP3 pattern
in torque mode, stays upright, moves forward, then reaches until its wrist feels the box."""

from __future__ import annotations

import json

from controller_helpers import EXAMPLES
from process_helpers import REPO, launch_summary

# The walk's summary recorded before the simulator core was reorganised; every figure but the
# wall-clock ones must stay bit-identical across refactors of the engine and the tick loop.
REFERENCE = REPO / "tests" / "data" / "sample_walk_summary.json"


def _physical_figures(summary: dict) -> dict:
    walker = summary["controllers"]["walker"]
    robots = {
        name: {k: r[k] for k in ("root_start", "root_end", "min_root_z")} for name, r in summary["robots"].items()
    }
    return {
        "sim_time": summary["sim_time"],
        "ticks": summary["ticks"],
        "robots": robots,
        "controllers": {"walker": {k: walker[k] for k in ("ticks", "missed", "errors", "policy_applied")}},
        "error": summary["error"],
        "published": summary["published"],
    }


def test_the_sample_walk_finishes_upright_and_forward(tmp_path):
    run_dir = tmp_path / "run"
    summary = launch_summary(EXAMPLES / "sample_walk.yaml", tmp_path).summary
    robot = summary["robots"]["robot"]
    walker = summary["controllers"]["walker"]
    assert summary["error"] is None
    assert summary["sim_time"] == 16.0 and walker["ticks"] == 8000 and walker["missed"] == 0
    assert robot["min_root_z"] > 0.5  # never fell
    assert robot["root_end"][0] - robot["root_start"][0] > 0.6  # the pattern walks about 0.9 m forward
    assert _physical_figures(summary) == json.loads(REFERENCE.read_text())
    log = (run_dir / "controller-walker.log").read_text()
    assert "contact: the right wrist feels" in log
