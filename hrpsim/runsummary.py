"""The run summary: its fields (docs/architecture.md, "The run summary") and how it reads on a terminal."""

from __future__ import annotations

import math
from typing import Any

# A robot whose root drops below this fraction of its starting height is reported as fallen.
FALLEN_FRACTION = 0.6
# A root whose own z axis leans less than this from the world's z started upright.
UPRIGHT_TILT = math.radians(30.0)


def upright(rotation: Any) -> bool:
    """Whether a root with this rotation (3x3, world from link) stands with its z axis up."""
    return bool(rotation[2][2] >= math.cos(UPRIGHT_TILT))


def empty_summary(**known: Any) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "sim_time": None,
        "wall_time": None,
        "real_time_factor": None,
        "ticks": 0,
        "robots": {},
        "controllers": {},
        "error": None,
    }
    summary.update(known)
    return summary


def fallen(robot: dict[str, Any]) -> bool | None:
    """True or False for a robot with joints that started upright; None (no verdict) for anything
    else: a dropped box, or a body that started lying down, has nothing to fall from."""
    start, lowest = robot.get("root_start"), robot.get("min_root_z")
    if not robot.get("has_joints") or not robot.get("upright_start"):
        return None
    if not start or lowest is None or start[2] <= 0:
        return None
    return lowest < FALLEN_FRACTION * start[2]


def _num(value: Any, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


def _xyz(v: Any) -> str:
    return "-" if not v else "(" + ", ".join(f"{x:.3f}" for x in v) + ")"


def format_summary(s: dict[str, Any]) -> str:
    lines = [
        "",
        "run summary",
        f"  sim time {_num(s.get('sim_time'))} s, wall time {_num(s.get('wall_time'), '.2f')} s, "
        f"real-time factor {_num(s.get('real_time_factor'), '.2f')}, ticks {s.get('ticks', 0)}",
    ]
    for name, r in (s.get("robots") or {}).items():
        fell = fallen(r)
        verdict = "" if fell is None else (", FELL" if fell else ", stayed up")
        lines.append(
            f"  robot {name}: root {_xyz(r.get('root_start'))} -> {_xyz(r.get('root_end'))}, "
            f"lowest root z {_num(r.get('min_root_z'))} m{verdict}"
        )
    loops = s.get("loops")
    if loops:
        lines.append(
            f"  closed loops: largest gap {_num(loops.get('gap_max'), '.3g')} m, "
            f"largest angle {_num(loops.get('angle_max'), '.3g')} rad"
        )
    for name, c in (s.get("controllers") or {}).items():
        rtt = f"p50 {_num(c.get('rtt_p50_us'), '.0f')} us, p99 {_num(c.get('rtt_p99_us'), '.0f')} us"
        lines.append(f"  controller {name}: {c.get('ticks', 0)} ticks, round trip {rtt}, missed {c.get('missed', 0)}")
    components = (s.get("launch") or {}).get("components") or {}
    lost = [f"{name} (exit status {c.get('exit_status')})" for name, c in components.items() if c.get("lost")]
    restarted = [f"{name} ({c['restarts']}x)" for name, c in components.items() if c.get("restarts")]
    if restarted:
        lines.append(f"  restarted: {', '.join(restarted)}")
    if s.get("error"):
        lines.append(f"  error: {s['error']}")
    elif lost:
        lines.append(f"  finished, without: {', '.join(lost)}")
    else:
        lines.append("  finished without error")
    if s.get("launch", {}).get("run_dir"):
        lines.append(f"  logs in {s['launch']['run_dir']}")
    return "\n".join(lines)
