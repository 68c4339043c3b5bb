"""The run summary: its fields (docs/architecture.md, "The run summary") and how it reads on a terminal."""

from __future__ import annotations

from typing import Any

# A robot whose root drops below this fraction of its starting height is reported as fallen.
FALLEN_FRACTION = 0.6


def empty_summary(**known: Any) -> dict[str, Any]:
    summary: dict[str, Any] = {"sim_time": None, "wall_time": None, "real_time_factor": None, "ticks": 0,
                               "robots": {}, "controllers": {}, "error": None}
    summary.update(known)
    return summary


def fallen(robot: dict[str, Any]) -> bool | None:
    start, lowest = robot.get("root_start"), robot.get("min_root_z")
    if not start or lowest is None or start[2] <= 0:
        return None
    return lowest < FALLEN_FRACTION * start[2]


def _num(value: Any, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


def _xyz(v: Any) -> str:
    return "-" if not v else "(" + ", ".join(f"{x:.3f}" for x in v) + ")"


def format_summary(s: dict[str, Any]) -> str:
    lines = ["", "run summary",
             f"  sim time {_num(s.get('sim_time'))} s, wall time {_num(s.get('wall_time'), '.2f')} s, "
             f"real-time factor {_num(s.get('real_time_factor'), '.2f')}, ticks {s.get('ticks', 0)}"]
    for name, r in (s.get("robots") or {}).items():
        fell = fallen(r)
        verdict = "" if fell is None else (", FELL" if fell else ", stayed up")
        lines.append(f"  robot {name}: root {_xyz(r.get('root_start'))} -> {_xyz(r.get('root_end'))}, "
                     f"lowest root z {_num(r.get('min_root_z'))} m{verdict}")
    for name, c in (s.get("controllers") or {}).items():
        rtt = f"p50 {_num(c.get('rtt_p50_us'), '.0f')} us, p99 {_num(c.get('rtt_p99_us'), '.0f')} us"
        lines.append(f"  controller {name}: {c.get('ticks', 0)} ticks, round trip {rtt}, missed {c.get('missed', 0)}")
    lines.append(f"  error: {s['error']}" if s.get("error") else "  finished without error")
    if s.get("launch", {}).get("run_dir"):
        lines.append(f"  logs in {s['launch']['run_dir']}")
    return "\n".join(lines)
