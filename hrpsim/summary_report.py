"""The run summary: its fields (docs/architecture.md, "The run summary") and how it reads on a terminal."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# A robot whose root drops below this fraction of its starting height is reported as fallen.
FALLEN_FRACTION = 0.6
# A root whose own z axis leans less than this from the world's z started upright.
UPRIGHT_TILT = math.radians(30.0)
# A link of a fixed-root model that ends farther than this from where it started has moved.
MOVED_M = 1e-3
# Links whose frames start within this fraction of a model's height of its lowest one are its stance.
STANCE_BAND = 0.1

# What a model is, for its summary (docs/architecture.md, "The run summary"):
STANDING = "standing"  # a free root on joints, upright, taller than its stance is wide: can fall
FIXED_ROOT = "fixed root"  # an arm or a model whose root is the world: its links are what move
FREE_BODY = "free body"  # any other free root (a box, a many-legged body, a vehicle): no verdict


def upright(rotation: Any) -> bool:
    """Whether a root with this rotation (3x3, world from link) stands with its z axis up."""
    return bool(rotation[2][2] >= math.cos(UPRIGHT_TILT))


def model_kind(*, free_root: bool, has_joints: bool, root_rotation: Any, link_positions: Any) -> str:
    """STANDING, FIXED_ROOT or FREE_BODY for a model starting with these link frames (links x 3, world)."""
    if not free_root:
        return FIXED_ROOT
    if not has_joints or not upright(root_rotation):
        return FREE_BODY
    positions = np.asarray(link_positions, dtype=float)
    lowest = positions[:, 2].min()
    height = positions[0, 2] - lowest  # of the root above the lowest link frame
    stance = positions[positions[:, 2] <= lowest + STANCE_BAND * max(np.ptp(positions[:, 2]), 1e-9), :2]
    width = float(np.linalg.norm(np.ptp(stance, axis=0)))
    return STANDING if height > width else FREE_BODY


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
    """True or False for a standing robot; None (no verdict) for anything else: a dropped box, an arm,
    a many-legged body settling on its legs, a body that started lying down has nothing to fall from.
    (A summary written before ``kind`` existed: a robot with joints that started upright.)"""
    start, lowest = robot.get("root_start"), robot.get("min_root_z")
    standing = robot["kind"] == STANDING if "kind" in robot else robot.get("has_joints") and robot.get("upright_start")
    if not standing or not start or lowest is None or start[2] <= 0:
        return None
    return lowest < FALLEN_FRACTION * start[2]


def verdict(robot: dict[str, Any]) -> str | None:
    """ "stayed up", "fell" or None: :func:`fallen` in words, as the summary's ``verdict``."""
    fell = fallen(robot)
    return None if fell is None else ("fell" if fell else "stayed up")


def _num(value: Any, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


def _xyz(v: Any) -> str:
    return "-" if not v else "(" + ", ".join(f"{x:.3f}" for x in v) + ")"


def _robot_line(r: dict[str, Any]) -> str:
    if r.get("kind") == FIXED_ROOT:
        moved = sorted((r.get("moved_links") or {}).items(), key=lambda item: -_distance(item[1]))
        if not moved:
            return "fixed root; no link moved"
        shown = ", ".join(f"{link} {_distance(ends):.3f} m" for link, ends in moved[:3])
        more = f" (+{len(moved) - 3} more)" if len(moved) > 3 else ""
        return f"fixed root; links moved: {shown}{more}"
    text = f"root {_xyz(r.get('root_start'))} -> {_xyz(r.get('root_end'))}, "
    if r.get("kind") == FREE_BODY and r.get("has_joints"):
        return text + f"root height {_num(r.get('min_root_z'))}-{_num(r.get('max_root_z'))} m"
    said = verdict(r)
    return (
        text
        + f"lowest root z {_num(r.get('min_root_z'))} m"
        + ("" if said is None else f", {said.upper() if said == 'fell' else said}")
    )


def _distance(ends: dict[str, Any]) -> float:
    start, end = ends.get("start"), ends.get("end")
    return float(np.linalg.norm(np.subtract(end, start))) if start and end else 0.0


def format_summary(s: dict[str, Any]) -> str:
    lines = [
        "",
        "run summary",
        f"  sim time {_num(s.get('sim_time'))} s, wall time {_num(s.get('wall_time'), '.2f')} s, "
        f"real-time factor {_num(s.get('real_time_factor'), '.2f')}, ticks {s.get('ticks', 0)}",
    ]
    for name, r in (s.get("robots") or {}).items():
        lines.append(f"  robot {name}: {_robot_line(r)}")
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
