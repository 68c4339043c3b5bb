"""``hrpsim replay RUN.mcap [--summary FILE]``: run a recorded run again, in this process, without controllers.

The world is rebuilt from the recording alone (its project, its model files, the bodies the
simulator loaded) as the simulator's own core (simserver/world.py) and driven tick by tick with
the recorded applied commands, applied where the controller hub applied them. Every recorded
state is compared with the replayed one bit for bit; the first difference is named (tick,
robot, field, joint or sensor) and the exit status is 1. Identical: status 0. ``--summary``
writes the replayed run's summary (JSON): its ticks, times and robot figures are the recorded
run's.

``--controller CMD`` instead runs the recorded project again with CMD as the robot's controller,
through ``hrpsim launch`` (real processes), from the same start: for trying a controller offline
against a run that went wrong. ``--record OUT.mcap`` keeps that run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from hrpsim.errors import HrpsimError, RecordingError
from hrpsim.project import Project, world_file_section
from hrpsim.recording import schemas
from hrpsim.recording.reader import Recording, open_recording
from hrpsim.recording.writer import file_digest

STATE_FIELDS = ("q", "dq", "tau", "root_position", "root_rotation", "root_velocity")


def extract_files(rec: Recording, folder: Path) -> dict[str, str]:
    """Write every recorded file under ``folder`` at its recorded path (so relative references
    between them hold) and check its sha256; recorded path -> extracted path."""
    moved = {}
    for path, digest in rec.files.items():
        data = rec.file_bytes(path)
        if file_digest(data) != digest:
            raise RecordingError(f"{rec.path}: the recorded copy of {path} does not match its sha256")
        target = folder / path.lstrip("/\\").replace(":", "")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        moved[path] = str(target)
    return moved


def relocated_project(rec: Recording, moved: dict[str, str]) -> Project:
    project = rec.project
    for model in project.models:
        model.file = moved.get(model.file, model.file)
    project.path = moved.get(project.path, project.path)
    return project


# --- lockstep replay ---


def ticks(
    rec: Recording,
) -> Iterator[tuple[int, dict[str, dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]]:
    """(tick, recorded state per robot, applied commands, applied pushes) in tick order."""
    state_topics = {schemas.state_topic(r): r for r in rec.robots}
    topics = [*state_topics, *(schemas.command_topic(c) for c in rec.controllers), schemas.DISTURBANCES_TOPIC]
    current: int | None = None
    states: dict[str, dict[str, Any]] = {}
    commands: list[dict[str, Any]] = []
    pushes: list[dict[str, Any]] = []
    for topic, _stamp, message in rec.messages(topics):
        if message["tick"] != current:
            if current is not None:
                yield current, states, commands, pushes
            current, states, commands, pushes = message["tick"], {}, [], []
        if topic in state_topics:
            states[state_topics[topic]] = message
        elif topic == schemas.DISTURBANCES_TOPIC:
            pushes.extend(message["applied"])
        else:
            commands.append(message)
    if current is not None:
        yield current, states, commands, pushes


def first_difference(recorded: dict[str, Any], state: Any, joints: list[str]) -> str | None:
    """The first field where the replayed state is not the recorded one, bit for bit."""
    replayed = state.to_wire()
    for name in STATE_FIELDS:
        want = np.array(recorded[name], dtype=np.float64).reshape(-1)
        got = np.asarray(replayed[name], dtype=np.float64).reshape(-1)
        if want.shape != got.shape:
            return f"{name} has {got.size} values, the recording {want.size}"
        bad = np.flatnonzero(~((want == got) | (np.isnan(want) & np.isnan(got))))
        if bad.size:
            k = int(bad[0])
            where = joints[k] if name in ("q", "dq", "tau") and k < len(joints) else str(k)
            return f"{name}[{where}]: recorded {want[k]!r}, replayed {got[k]!r}"
    for sensor, values in (recorded.get("sensors") or {}).items():
        want = np.array(values, dtype=np.float64)
        got = np.asarray(state.sensors.get(sensor, ()), dtype=np.float64)
        if want.shape != got.shape or not np.array_equal(want, got, equal_nan=True):
            return f"sensor {sensor}: recorded {want.tolist()}, replayed {got.tolist()}"
    return None


class RecordedCommands:
    """A tick action: the applied commands and pushes recorded for the tick, applied again."""

    def __init__(self) -> None:
        self.pending: list[dict[str, Any]] = []
        self.pushes: list[dict[str, Any]] = []
        self._held: set[tuple[str, str]] = set()  # links a recorded push acted on in the tick before

    def apply(self, record: Any) -> None:
        from hrpsim.engines.base import JointCommand
        from hrpsim.simserver.disturbances import replay_forces

        for c in self.pending:
            command = JointCommand(
                torque=_array(c.get("torque")),
                q_ref=_array(c.get("q_ref")),
                dq_ref=_array(c.get("dq_ref")),
                modes=c.get("modes"),
            )
            record.engine.apply(c["robot"], command)
        self._held = replay_forces(record.engine, self.pushes, self._held)
        self.pending, self.pushes = [], []


def replay_lockstep(rec: Recording, project: Project) -> tuple[bool, str, dict[str, Any]]:
    """(identical, what happened in one line, the replayed run's summary)."""
    from hrpsim.simserver.world import World

    # The recorded run, and nothing else: no controllers (their commands are recorded), no
    # recording over the one being read, ticks as fast as they go, no images rendered for nobody
    # (they never act on the world).
    project.controllers, project.record, project.world.sync = [], None, "lockstep"
    project.disturbances = []  # the pushes that acted are recorded: they are applied from the recording
    project.world.cameras = "off"
    project.world.end_time = math.inf  # the recording says which ticks there are
    world = World(project, bodies=rec.bodies(), record=False)
    commands = RecordedCommands()
    world.add_action(commands)
    try:
        identical, message = _compare(rec, world, commands)
        world.pause()
        return identical, message, world.summary()
    finally:
        world.close()


def _compare(rec: Recording, world: Any, commands: RecordedCommands) -> tuple[bool, str]:
    engine = world.engine
    joints = {r: rec.joints(r) for r in rec.robots}
    compared = 0
    for tick, states, applied, pushes in ticks(rec):
        world.step(tick - engine.tick)  # the commands of the tick before, applied inside it
        for robot, recorded in states.items():
            difference = first_difference(recorded, engine.read(robot), joints[robot])
            if difference:
                return False, f"tick {tick} (t={recorded['time']:.6g} s): robot {robot}: {difference}"
            compared += 1
        commands.pending, commands.pushes = applied, pushes
    return True, (
        f"{compared} recorded states of {len(joints)} robot(s) over {engine.tick} ticks reproduced bit-identically"
    )


def _array(values: Any) -> np.ndarray | None:
    return None if values is None else np.array(values, dtype=np.float64)


# --- a new controller against the same start ---


def with_controller(project: Project, rec: Recording, command: str, name: str | None, folder: Path) -> Path:
    """The recorded project as a project file with ``command`` as the controller ``name`` (by
    default the first recorded one), every other controller dropped."""
    data = project.to_wire()
    data["world"] = world_file_section(data["world"])
    controllers = data["controllers"]
    chosen = next((c for c in controllers if c["name"] == name), controllers[0] if controllers and not name else None)
    if chosen is None:
        robot = rec.robots[0] if rec.robots else None
        if robot is None:
            raise RecordingError(f"{rec.path}: no robot to control in this recording")
        chosen = {"name": name or "controller", "robot": robot, "period": project.world.timestep}
    chosen = {**chosen, "command": command, "cwd": str(Path.cwd())}
    data["controllers"] = [chosen]
    # unset optional keys (a model placed where its file puts it) are left out, not written as null
    data["models"] = [{k: v for k, v in m.items() if v is not None} for m in data["models"]]
    if not data.pop("only_listed_pairs", False) and not data.get("collisions"):
        data.pop("collisions", None)  # no collisions section: every two models collide, as recorded
    for key in ("path", "notes", "record"):  # never write over the recording being replayed
        data.pop(key, None)
    keys = data.pop("keys", None)  # the project file's form of it: security: {keys: DIR}
    if keys:
        data["security"] = {"keys": keys}
    path = folder / "replay-project.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hrpsim replay", description="Run a recorded run again.")
    parser.add_argument("recording", help="the .mcap file of a run (hrpsim launch --record)")
    parser.add_argument(
        "--controller", metavar="CMD", help="run this controller command instead of replaying the recorded commands"
    )
    parser.add_argument("--name", help="with --controller: which controller it replaces (default: the first)")
    parser.add_argument("--record", metavar="OUT.mcap", help="with --controller: record the new run")
    parser.add_argument("--until", type=float, help="with --controller: stop at this simulated time")
    parser.add_argument("--summary", type=Path, help="write the replayed run's summary (JSON) to this file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        rec = open_recording(args.recording)
        if rec.cut_note:
            print(f"hrpsim replay: note: {rec.cut_note}", file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix="hrpsim-replay-") as tmp:
            project = relocated_project(rec, extract_files(rec, Path(tmp)))
            if args.controller:
                return _launch(with_controller(project, rec, args.controller, args.name, Path(tmp)), args)
            identical, message, summary = replay_lockstep(rec, project)
        if args.summary:
            args.summary.write_text(json.dumps(summary, indent=2))
    except RecordingError as exc:
        print(f"hrpsim replay: {exc}", file=sys.stderr)
        return 2
    except HrpsimError as exc:
        print(f"hrpsim replay: {exc}", file=sys.stderr)
        return 1
    print(f"hrpsim replay: {message}" if identical else f"hrpsim replay: DIFFERS at {message}")
    return 0 if identical else 1


def _launch(project_file: Path, args: argparse.Namespace) -> int:
    from hrpsim.launcher import main as launch

    extra = ["--record", args.record] if args.record else []
    extra += ["--until", repr(args.until)] if args.until else []
    extra += ["--summary", str(args.summary)] if args.summary else []
    return launch([str(project_file), "--nameserver", "tcp://127.0.0.1:*", *extra])
