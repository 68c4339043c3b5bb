"""The simulator's operations, each declared once (hrpsim/operations.py): what simserver/sim_service.py
serves, what ``hrpsim sim`` offers and what docs/protocol.md tabulates. Each names the method that
serves it: the World's (``world.NAME``), or the server's own where the wire wants a translation
(``op_NAME``: a state as the message's fields, a snapshot by name, a step answered between batches).

Adding an operation is a declaration here plus the World method it names."""

from __future__ import annotations

import dataclasses

from hrpsim.operations import PING, QUIT, Arg, Op

CONTROLLER_WAIT_S = 30.0  # how long start() waits for the project's controllers to attach
MAX_STEP_TICKS = 1_000_000  # one step request's bound; a longer advance is a run: start(until=...)
STATUS = "status"

_ROBOT = Arg("robot", cli="")
_LINK = Arg("link", cli="")
_SNAPSHOT = Arg("name", "the snapshot's name; default: default", default="default", cli="", metavar="NAME")


def _vector(name: str, doc: str, cli: str, metavar: str, default: object = None) -> Arg:
    return Arg(name, doc, default=default, cli=cli, type=float, count=3, metavar=metavar)


SIMULATOR: tuple[Op, ...] = (
    Op(
        "status",
        "where the run stands: its phase (`paused`, `waiting` for the project's controllers, `running`, "
        "`ended`) and why, its one end time, what a tick or a start waits for",
        result="`{time, tick, status, reason, running, finished, error, real_time_factor, wall_time, end_time, "
        "waiting_for}`",
        role="observer",
        within_tick=True,
        cli="status",
        method="world.status",
        cli_doc="time, tick, running or not and why, what it waits for",
    ),
    Op(
        "start",
        "run to `until` once the project's controllers have attached; it pauses there, or ends at the end time",
        args=(
            Arg(
                "until",
                "sim time to stop at, s; default: the end time; a later one becomes the end time",
                default=None,
                cli="--until",
                type=float,
            ),
            Arg(
                "wait",
                f"s to wait for the project's controllers; nil: as long as it takes; 0: start at once; default: "
                f"{CONTROLLER_WAIT_S:g} s, from the command line as long as it takes",
                default=CONTROLLER_WAIT_S,
                cli="--wait",
                type=float,
                cli_default=None,
            ),
        ),
        result=STATUS,
        within_tick=True,
        cli="start",
        method="op_start",
        cli_doc="run (once the project's controllers have attached)",
    ),
    Op(
        "pause",
        "stop ticking (a step being made ends after its current tick); the state stays",
        result=STATUS,
        within_tick=True,
        cli="pause",
        method="op_pause",
    ),
    Op(
        "step",
        "advance `n` ticks while paused, and never beyond the end time (reaching it ends the run); "
        "requests are answered between batches of ticks, and `pause` or `quit` ends the step early",
        args=(Arg("n", "ticks to make, 1 to 1 000 000; default: 1", default=1, cli="", type=int),),
        result=f"{STATUS} with `stepped`, the ticks made",
        cli="step",
        method="op_step",
        cli_doc="advance N ticks while paused (no further than the end time)",
    ),
    Op(
        "reset",
        "back to the project's initial state, as a new run (while paused): attached controllers hear `bye`, "
        "in-process ones start afresh, the summary starts from zero, a recorder starts its next file",
        result=STATUS,
        cli="reset",
        method="op_reset",
        cli_doc="back to the project's initial state (while paused)",
    ),
    Op(
        "snapshot",
        "keep the world as it is now under `name` (while paused; at most 16, one of a name replaced), to go "
        "back to: docs/python-api.md says what a snapshot holds",
        args=(_SNAPSHOT,),
        result="`{name, tick, time, snapshots}`",
        cli="snapshot",
        method="op_snapshot",
        cli_doc="keep the world as it is now, to go back to (while paused)",
    ),
    Op(
        "restore",
        "go back to the snapshot kept under `name` (while paused): the ticks that follow are those that "
        "followed it; refused while the run is recorded",
        args=(_SNAPSHOT,),
        result=STATUS,
        cli="restore",
        method="op_restore",
        cli_doc="go back to a snapshot (while paused)",
    ),
    Op(
        "init",
        "load the project again, or another of this simulator's engine, and rebuild the world (while paused)",
        args=(Arg("project", "path; nil: reload", default=None),),
        result=STATUS,
        method="op_init",
        also=("load",),
    ),
    Op(
        "summary",
        "the run summary so far (docs/architecture.md)",
        result="the summary",
        role="observer",
        within_tick=True,
        cli="summary",
        method="world.summary",
    ),
    Op(
        "models",
        "every model: static or not, links, joints, drive modes, sensors",
        result="`{model: {static, links, joints, modes, sensors}}`",
        role="observer",
        within_tick=True,
        method="world.models",
    ),
    Op(
        "state",
        "the robot's state as its controllers receive it: through its hardware models (encoder, noise, latency)",
        args=(_ROBOT,),
        result="the `state` message's fields",
        role="observer",
        within_tick=True,
        method="op_state",
    ),
    Op(
        "raw_state",
        "the robot's true state, as the engine measures it",
        args=(_ROBOT,),
        result="the `state` message's fields",
        role="observer",
        within_tick=True,
        method="op_raw_state",
    ),
    Op(
        "sensor_state",
        "the robot's sensors, as its controllers receive them",
        args=(_ROBOT,),
        result="`{sensor: reading}`",
        role="observer",
        within_tick=True,
        method="op_sensor_state",
    ),
    Op(
        "world_state",
        "every model's link poses now, as the state stream sends them",
        result="a world-state frame",
        role="observer",
        within_tick=True,
        method="world.world_state",
    ),
    Op(
        "get_link_data",
        "a link's world pose and velocity, its joint's value, rate and torque",
        args=(_ROBOT, _LINK),
        result="`{position, rotation, linear_velocity, angular_velocity, joint_value, joint_velocity, joint_torque?}`",
        role="observer",
        within_tick=True,
        method="world.link_data",
    ),
    Op(
        "set_link_data",
        "put a robot into a configuration; unset quantities keep their values",
        args=(
            _ROBOT,
            Arg("q", "controller order", default=None),
            Arg("dq", default=None),
            Arg("root_position", default=None),
            Arg("root_rotation", "3x3", default=None),
            Arg("root_velocity", "linear, angular, world", default=None),
        ),
        result="the robot's raw state after it",
        method="op_set_link_data",
    ),
    Op(
        "set_external_force",
        "a force at the link origin and a torque, world frame, every tick until changed",
        args=(_ROBOT, _LINK, Arg("force", "3, N"), Arg("torque", "3, N m", default=(0.0, 0.0, 0.0))),
        result="true",
        method="op_set_external_force",
    ),
    Op(
        "push",
        "push a link: a force for a time, at a point (docs/controllers.md)",
        args=(
            _ROBOT,
            _LINK,
            Arg("force", "N, world frame: x y z", cli="", type=float, count=3, metavar="F"),
            Arg("duration", "how long it acts, s", cli="--duration", type=float),
            Arg("time", "sim time it starts, s; default: now", default=None, cli="--at", type=float),
            _vector("point", "where it acts, m, link frame: x y z; default: the link origin", "--point", "X Y Z"),
            _vector("torque", "a torque too, N m, world frame: x y z", "--torque", "TX TY TZ"),
        ),
        result="what the push will do: `{start, duration, impulse, ...}`",
        cli="push",
        method="world.push",
        cli_doc="push a link: a force (N, world frame) for a time, at a point (m, link frame)",
    ),
    Op(
        "command",
        "hold these commands from now on, as a controller's for this tick: merged into the robot's held "
        "arrays and through its hardware models",
        args=(
            _ROBOT,
            Arg("torque", "full length, controller order", default=None),
            Arg("q_ref", default=None),
            Arg("dq_ref", default=None),
            Arg("modes", "joint -> mode", default=None),
        ),
        result="true",
        role="controller",
        method="op_command",
    ),
    Op(
        "set_drive_modes",
        "drive modes by joint, as a command of modes alone",
        args=(_ROBOT, Arg("modes", "joint -> mode")),
        result="each joint's mode",
        role="controller",
        method="world.set_drive_modes",
    ),
    Op(
        "forward_kinematics",
        "every link's world pose for these joints and root, moving nothing",
        args=(_ROBOT, Arg("q", default=None), Arg("root_position", default=None), Arg("root_rotation", default=None)),
        result="`{links, positions, rotations}`",
        role="observer",
        within_tick=True,
        method="world.link_poses",
    ),
    dataclasses.replace(
        QUIT,
        doc="end the simulator process: its controllers hear `bye`, a recorder finishes its file",
        cli="stop",
        cli_doc="end the simulator process",
    ),
    PING,
)
