"""``hrpsim plot RUN.mcap``: a joint, a sensor, the root or a controller against time, as a PNG
(matplotlib, headless) and/or CSV. Only the channels the plot needs are decoded.

    hrpsim plot run.mcap --joint RLEG_KNEE --field q,tau -o knee.png
    hrpsim plot run.mcap --sensor rhsensor -o hand.png
    hrpsim plot run.mcap --root --csv root.csv
    hrpsim plot run.mcap --controller walker --field rtt -o rtt.png
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hrpsim.errors import RecordingError
from hrpsim.recording import schemas
from hrpsim.recording.reader import Recording, open_recording
from hrpsim.sensor_types import SENSOR_TYPES

JOINT_FIELDS = ("q", "dq", "tau")  # from the robot's state
COMMAND_FIELDS = ("torque", "q_ref", "dq_ref")  # from its controllers' applied commands
FIELD_ALIASES = {"rtt": "rtt_us"}
ROOT_FIELDS = {
    "position": ("root_position", ("x", "y", "z")),
    "velocity": ("root_velocity", ("vx", "vy", "vz", "wx", "wy", "wz")),
}


@dataclass
class Curve:
    label: str
    time: np.ndarray
    values: np.ndarray


def _fields(text: str | None, default: tuple[str, ...]) -> list[str]:
    return [f.strip() for f in text.split(",") if f.strip()] if text else list(default)


def _robot(rec: Recording, name: str | None) -> str:
    robots = rec.robots
    if name is None:
        if not robots:
            raise RecordingError(f"{rec.path}: no robot state in this recording")
        return robots[0]
    if name not in robots:
        raise RecordingError(f"{rec.path}: no robot {name!r} in this recording (robots: {', '.join(robots)})")
    return name


def joint_curves(rec: Recording, robot: str, joint: str, fields: list[str]) -> list[Curve]:
    joints = rec.joints(robot)
    if joint not in joints:
        raise RecordingError(f"{rec.path}: no joint {joint!r} in robot {robot!r} (joints: {', '.join(joints)})")
    unknown = [f for f in fields if f not in JOINT_FIELDS + COMMAND_FIELDS]
    if unknown:
        raise RecordingError(
            f"--field: no joint field {unknown[0]!r} (fields: {', '.join(JOINT_FIELDS + COMMAND_FIELDS)})"
        )
    k = joints.index(joint)
    curves = []
    if any(f in JOINT_FIELDS for f in fields):
        series = rec.series(robot)
        curves += [Curve(f"{joint} {f}", series.time, series.fields[f][:, k]) for f in fields if f in JOINT_FIELDS]
    wanted = [f for f in fields if f in COMMAND_FIELDS]
    if wanted:
        topics = [schemas.command_topic(c) for c in rec.controllers]
        rows = [m for _, _, m in rec.messages(topics) if m.get("robot") == robot]
        for f in wanted:
            kept = [r for r in rows if r.get(f) is not None]
            curves.append(
                Curve(
                    f"{joint} {f}",
                    np.array([r["time"] for r in kept]),
                    np.array([r[f][k] for r in kept], dtype=np.float64),
                )
            )
    return curves


def sensor_curves(rec: Recording, robot: str, sensor: str, fields: list[str]) -> list[Curve]:
    names = rec.sensors(robot)
    if sensor not in names:
        raise RecordingError(
            f"{rec.path}: no sensor {sensor!r} in robot {robot!r} (sensors: {', '.join(names) or 'none'})"
        )
    series = rec.series(robot)
    if sensor not in series.sensor_readings:
        raise RecordingError(f"{rec.path}: sensor {sensor!r} of {robot!r} has no recorded reading")
    values = series.sensor_readings[sensor]
    kind = next((b.type for b in rec.bodies()[robot].sensors if b.name == sensor), "")
    axes = SENSOR_TYPES[kind].axes if kind in SENSOR_TYPES else ()
    axes = axes or tuple(str(i) for i in range(values.shape[1]))
    chosen = fields or list(axes)
    for f in chosen:
        if f not in axes:
            raise RecordingError(f"--field: sensor {sensor!r} has no component {f!r} (components: {', '.join(axes)})")
    return [Curve(f"{sensor} {f}", series.time, values[:, axes.index(f)]) for f in chosen]


def root_curves(rec: Recording, robot: str, fields: list[str]) -> list[Curve]:
    series = rec.series(robot)
    curves = []
    for f in fields:
        if f not in ROOT_FIELDS:
            raise RecordingError(f"--field: no root field {f!r} (fields: {', '.join(ROOT_FIELDS)})")
        key, axes = ROOT_FIELDS[f]
        curves += [Curve(f"root {a}", series.time, series.fields[key][:, i]) for i, a in enumerate(axes)]
    return curves


def controller_curves(rec: Recording, controller: str, fields: list[str]) -> list[Curve]:
    if controller not in rec.controllers:
        raise RecordingError(
            f"{rec.path}: no controller {controller!r} in this recording "
            f"(controllers: {', '.join(rec.controllers) or 'none'})"
        )
    rows = [m for _, _, m in rec.messages([schemas.command_topic(controller)])]
    curves = []
    for f in (FIELD_ALIASES.get(f, f) for f in fields):
        kept = [r for r in rows if _scalar(r, f) is not None]
        if not kept:
            present = sorted({k for r in rows[:1] for k in (*r, *r.get("received", {})) if _scalar(r, k) is not None})
            raise RecordingError(
                f"--field: controller {controller!r} has no numeric field {f!r} "
                f"(fields: {', '.join(present) or 'none'})"
            )
        curves.append(
            Curve(
                f"{controller} {f}",
                np.array([r["time"] for r in kept]),
                np.array([_scalar(r, f) for r in kept], dtype=np.float64),
            )
        )
    return curves


def _scalar(row: dict, name: str) -> float | None:
    value = row.get(name, row.get("received", {}).get(name))
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def write_png(curves: list[Curve], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, axes = plt.subplots(len(curves), 1, sharex=True, squeeze=False, figsize=(9, 2.2 * len(curves) + 0.8))
    for ax, curve in zip(axes[:, 0], curves, strict=True):
        ax.plot(curve.time, curve.values, linewidth=0.9)
        ax.set_ylabel(curve.label)
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("simulated time (s)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_csv(curves: list[Curve], path: Path) -> None:
    """One row per time of the first curve; a curve sampled at other times (commands) fills in
    the value it held at that time."""
    time = curves[0].time
    columns = [_hold(c, time) for c in curves]
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["time", *(c.label for c in curves)])
        for i, t in enumerate(time):
            out.writerow([repr(float(t)), *(repr(float(col[i])) for col in columns)])


def _hold(curve: Curve, time: np.ndarray) -> np.ndarray:
    if len(curve.time) == len(time) and np.array_equal(curve.time, time):
        return curve.values
    index = np.searchsorted(curve.time, time, side="right") - 1
    return np.where(index >= 0, curve.values[np.clip(index, 0, None)], np.nan)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hrpsim plot", description="Plot a recorded run against simulated time.")
    parser.add_argument("recording", help="the .mcap file of a run (hrpsim launch --record)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--joint", help="a joint by name (fields q, dq, tau, torque, q_ref, dq_ref)")
    what.add_argument("--sensor", help="a sensor by name (fields: its components, e.g. fz or x)")
    what.add_argument("--root", action="store_true", help="the root link (fields position, velocity)")
    what.add_argument("--controller", help="a controller by name (fields: numbers in its commands)")
    parser.add_argument("--robot", help="the robot (default: the first in the recording)")
    parser.add_argument(
        "--field",
        help="comma-separated fields (default: q for a joint, all components of a sensor, position for the root)",
    )
    parser.add_argument("-o", "--output", type=Path, help="the PNG to write")
    parser.add_argument("--csv", type=Path, help="also (or only) write the series as CSV to this file")
    args = parser.parse_args(argv)
    if args.output is None and args.csv is None:
        parser.error("say where to write: -o FILE.png and/or --csv FILE.csv")
    if args.controller and not args.field:
        parser.error("--controller needs --field (e.g. --field rtt_us)")
    return args


def curves_for(rec: Recording, args: argparse.Namespace) -> tuple[list[Curve], str]:
    if args.controller:
        return controller_curves(rec, args.controller, _fields(args.field, ())), f"controller {args.controller}"
    robot = _robot(rec, args.robot)
    if args.joint:
        return joint_curves(rec, robot, args.joint, _fields(args.field, ("q",))), f"{robot} joint {args.joint}"
    if args.sensor:
        return sensor_curves(rec, robot, args.sensor, _fields(args.field, ())), f"{robot} sensor {args.sensor}"
    return root_curves(rec, robot, _fields(args.field, ("position",))), f"{robot} root"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        rec = open_recording(args.recording)
        if rec.cut_note:
            print(f"hrpsim plot: note: {rec.cut_note}", file=sys.stderr)
        curves, title = curves_for(rec, args)
        if args.output:
            write_png(curves, args.output, f"{title} ({Path(args.recording).name})")
        if args.csv:
            write_csv(curves, args.csv)
    except RecordingError as exc:
        print(f"hrpsim plot: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"hrpsim plot: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0
