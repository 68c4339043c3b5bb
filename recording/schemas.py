"""What a recording holds: its topics, the JSON Schema of each, and the names of its metadata.

Every message is JSON (``message_encoding: json``) with a JSON Schema (``schema encoding:
jsonschema``), which Foxglove and PlotJuggler read as they are; link poses also go out as
``foxglove.FrameTransforms`` so Foxglove's 3D panel shows every link's frame. docs/recording.md
describes the layout for people; this module is its single source for programs.

Log times are simulated time in nanoseconds (tick * timestep), so a tool's timeline is the
simulation's clock.
"""

from __future__ import annotations

import json
from typing import Any

from hrpsim.sensor_types import reading_layouts

FORMAT_VERSION = "1"
PROFILE = "hrpsim"

# --- topics ---


def state_topic(robot: str) -> str:
    return f"/robots/{robot}/state"


def command_topic(controller: str) -> str:
    return f"/controllers/{controller}/command"


def events_topic(controller: str) -> str:
    return f"/controllers/{controller}/events"


def sensor_topic(robot: str, sensor: str, image: str | None = None) -> str:
    """A range sensor's scans, or one kind of image (color, mono, depth) of a camera."""
    return f"/robots/{robot}/sensors/{sensor}" + (f"/{image}" if image else "")


TF_TOPIC = "/tf"


def bulky(topic: str) -> bool:
    """Link poses, scans and images: most of a file's bytes, kept in chunks of their own so a
    reader of states and commands skips them whole."""
    parts = topic.split("/")  # ["", "robots", ROBOT, "sensors", SENSOR, ...] for sensor_topic's
    return topic == TF_TOPIC or (len(parts) > 4 and parts[1] == "robots" and parts[3] == "sensors")


CONTACTS_TOPIC = "/contacts"
SCENE_TOPIC = "/scene"  # foxglove.SceneUpdate: every link's shapes, once at the start of a run
CONTACTS_SCENE_TOPIC = "/contacts/scene"  # foxglove.SceneUpdate of each tick's contacts


def joint_states_topic(robot: str) -> str:
    return f"/robots/{robot}/joint_states"


# --- metadata records and attachments ---

META_RECORDING = "hrpsim.recording"  # {format, timestep, flush_every_s}
META_PROJECT = "hrpsim.project"  # {path, text (the project file as written), wire (the parsed project, JSON)}
META_FILES = "hrpsim.files"  # {absolute path: sha256} of the project file and every model file
META_SUMMARY = "hrpsim.summary"  # {json: the run summary}, written when the run ends
FILE_MEDIA_TYPE = "application/octet-stream"  # attachments named by a file's absolute path
BODY_PREFIX = "body:"  # attachment "body:MODEL": the loaded BodyInfo (hrpsim codec, msgpack)
BODY_MEDIA_TYPE = "application/x-hrpsim-body+msgpack"

_NUMBERS = {"type": "array", "items": {"type": "number"}}


def _vector(n: int, what: str) -> dict[str, Any]:
    return {**_NUMBERS, "minItems": n, "maxItems": n, "description": what}


def _object(title: str, properties: dict[str, Any], required: list[str], description: str) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "type": "object",
        "description": description,
        "properties": properties,
        "required": required,
    }


_TICK = {
    "tick": {"type": "integer", "description": "tick number, 0 at the start of the run"},
    "time": {"type": "number", "description": "simulated time in seconds"},
}

ROBOT_STATE = _object(
    "hrpsim.RobotState",
    {
        **_TICK,
        "q": {**_NUMBERS, "description": "joint values (rad or m), in the order of the channel's 'joints' metadata"},
        "dq": {**_NUMBERS, "description": "joint rates, same order"},
        "tau": {**_NUMBERS, "description": "joint torques or forces applied in the last step, same order"},
        "root_position": _vector(3, "root link frame origin in the world frame (m)"),
        "root_rotation": _vector(9, "root link orientation, 3x3 rotation matrix row by row"),
        "root_velocity": _vector(6, "root origin linear velocity then angular velocity, world frame"),
        "sensors": {
            "type": "object",
            "additionalProperties": _NUMBERS,
            "description": f"sensor name -> reading ({reading_layouts()})",
        },
    },
    ["tick", "time", "q", "dq", "tau", "root_position", "root_rotation", "root_velocity"],
    "One robot's state as the tick began (what its controllers were sent); the last message is the "
    "state the run ended in.",
)

APPLIED_COMMAND = _object(
    "hrpsim.AppliedCommand",
    {
        **_TICK,
        "robot": {"type": "string"},
        "received": {
            "type": "object",
            "description": "the controller's command message as it arrived (partial arrays, named joints and all)",
        },
        "torque": {**_NUMBERS, "description": "full-length torques the robot holds after this command"},
        "q_ref": {**_NUMBERS, "description": "full-length joint targets held after this command"},
        "dq_ref": {**_NUMBERS, "description": "full-length joint rate targets held after this command"},
        "modes": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "drive mode changes made by this command, joint -> mode",
        },
        "rtt_us": {"type": "number", "description": "microseconds from the state going out to this command arriving"},
    },
    ["tick", "time", "robot", "received"],
    "One controller's command for one tick: as received and as applied.",
)

CONTROLLER_EVENT = _object(
    "hrpsim.ControllerEvent",
    {
        **_TICK,
        "robot": {"type": "string"},
        "kind": {"type": "string", "enum": ["attach", "detach", "miss", "policy", "error"]},
        "detail": {"type": "string"},
    },
    ["tick", "time", "robot", "kind"],
    "Something that happened to a controller.",
)

CONTACTS = _object(
    "hrpsim.Contacts",
    {
        **_TICK,
        "contacts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "a": {"type": "string", "description": "MODEL/LINK"},
                    "b": {"type": "string", "description": "MODEL/LINK"},
                    "position": {"type": "array", "items": {"type": "number"}, "description": "world, m"},
                    "normal": {
                        "type": "array",
                        "items": {"type": "number"},
                        "description": "unit, world, pointing into a",
                    },
                    "depth": {"type": "number", "description": "penetration, m"},
                },
                "required": ["a", "b", "position", "normal", "depth"],
            },
            "description": "this tick's contact points as the engine reports them",
        },
    },
    ["tick", "time", "contacts"],
    "The contacts of one tick (recorded with record: {contacts: true}).",
)

DISTURBANCES_TOPIC = "/disturbances"
DISTURBANCES = _object(
    "hrpsim.Disturbances",
    {
        **_TICK,
        "applied": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "robot": {"type": "string"},
                    "link": {"type": "string"},
                    "force": _vector(3, "N, world frame, at the link origin"),
                    "torque": _vector(3, "N m, world frame (a push's own torque and its lever's)"),
                },
                "required": ["robot", "link", "force", "torque"],
            },
            "description": "the external forces pushes put on links in this tick",
        },
    },
    ["tick", "time", "applied"],
    "The pushes acting in one tick (project disturbances, sim.push, hrpsim sim push); only ticks with one.",
)

# Foxglove's well-known schema, reproduced so the file is self-describing.
_VECTOR3 = {"type": "object", "properties": {k: {"type": "number"} for k in "xyz"}}
_QUATERNION = {"type": "object", "properties": {k: {"type": "number"} for k in "xyzw"}}
_TIMESTAMP = {"type": "object", "properties": {"sec": {"type": "integer"}, "nsec": {"type": "integer"}}}
FRAME_TRANSFORMS = {
    "title": "foxglove.FrameTransforms",
    "type": "object",
    "description": "Every link frame (child 'MODEL/LINK') relative to the world frame ('world').",
    "properties": {
        "transforms": {
            "type": "array",
            "items": {
                "type": "object",
                "title": "foxglove.FrameTransform",
                "properties": {
                    "timestamp": _TIMESTAMP,
                    "parent_frame_id": {"type": "string"},
                    "child_frame_id": {"type": "string"},
                    "translation": _VECTOR3,
                    "rotation": _QUATERNION,
                },
            },
        }
    },
}

_POSE = {"type": "object", "properties": {"position": _VECTOR3, "orientation": _QUATERNION}}
LASER_SCAN = {
    "title": "foxglove.LaserScan",
    "type": "object",
    "description": "One scan of a range sensor: beam i at start_angle + i (end_angle - start_angle) / "
    "(n - 1) from the pose's +x towards its +y, in the frame of the sensor's link ('MODEL/LINK').",
    "properties": {
        "timestamp": _TIMESTAMP,
        "frame_id": {"type": "string"},
        "pose": _POSE,
        "start_angle": {"type": "number"},
        "end_angle": {"type": "number"},
        "ranges": {**_NUMBERS, "description": "metres; maxDistance where a beam hits nothing"},
        "intensities": _NUMBERS,
    },
}
RAW_IMAGE = {
    "title": "foxglove.RawImage",
    "type": "object",
    "description": "One image of a camera, top row first (rgb8, mono8, or 32FC1 depth in metres).",
    "properties": {
        "timestamp": _TIMESTAMP,
        "frame_id": {"type": "string"},
        "width": {"type": "integer"},
        "height": {"type": "integer"},
        "encoding": {"type": "string"},
        "step": {"type": "integer"},
        "data": {"type": "string", "contentEncoding": "base64"},
    },
}

_COLOR = {"type": "object", "properties": {k: {"type": "number"} for k in "rgba"}}
_PRIMITIVE = {"type": "array", "items": {"type": "object", "properties": {"pose": _POSE, "color": _COLOR}}}
SCENE_UPDATE = {
    "title": "foxglove.SceneUpdate",
    "type": "object",
    "description": "Shapes attached to frames: one entity per link ('MODEL/LINK', frame_locked) holding its "
    "cubes, spheres, cylinders and triangle lists in the model's colours; contacts in 'world'.",
    "properties": {
        "deletions": {"type": "array", "items": {"type": "object"}},
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "title": "foxglove.SceneEntity",
                "properties": {
                    "timestamp": _TIMESTAMP,
                    "frame_id": {"type": "string"},
                    "id": {"type": "string"},
                    "frame_locked": {"type": "boolean"},
                    **{kind: _PRIMITIVE for kind in ("arrows", "cubes", "spheres", "cylinders", "triangles")},
                },
            },
        },
    },
}
JOINT_STATES = {
    "title": "foxglove.JointStates",
    "type": "object",
    "description": "A robot's joints as its state was recorded (the hrpsim.RobotState of the same tick).",
    "properties": {
        "timestamp": _TIMESTAMP,
        "joints": {
            "type": "array",
            "items": {
                "type": "object",
                "title": "foxglove.JointState",
                "properties": {
                    "name": {"type": "string"},
                    "position": {"type": "number"},
                    "velocity": {"type": "number"},
                    "effort": {"type": "number"},
                },
            },
        },
    },
}

SCHEMAS: dict[str, dict[str, Any]] = {
    s["title"]: s
    for s in (
        ROBOT_STATE,
        APPLIED_COMMAND,
        CONTROLLER_EVENT,
        CONTACTS,
        DISTURBANCES,
        FRAME_TRANSFORMS,
        LASER_SCAN,
        RAW_IMAGE,
        SCENE_UPDATE,
        JOINT_STATES,
    )
}


def schema_bytes(title: str) -> bytes:
    return json.dumps(SCHEMAS[title], separators=(",", ":")).encode()


WORLD_FRAME = "world"


def frame_id(model: str, link: str) -> str:
    return f"{model}/{link}"


def schema_of(topic: str) -> dict[str, Any] | None:
    """The schema of a recording's topic, from its name; None for a topic hrpsim does not write."""
    parts = topic.split("/")
    fixed = {
        TF_TOPIC: FRAME_TRANSFORMS,
        SCENE_TOPIC: SCENE_UPDATE,
        CONTACTS_TOPIC: CONTACTS,
        CONTACTS_SCENE_TOPIC: SCENE_UPDATE,
        DISTURBANCES_TOPIC: DISTURBANCES,
    }
    if topic in fixed:
        return fixed[topic]
    if len(parts) == 4 and parts[1] == "controllers":
        return {"command": APPLIED_COMMAND, "events": CONTROLLER_EVENT}.get(parts[3])
    if len(parts) == 4 and parts[1] == "robots":
        return {"state": ROBOT_STATE, "joint_states": JOINT_STATES}.get(parts[3])
    if len(parts) in (5, 6) and parts[1] == "robots" and parts[3] == "sensors":
        return RAW_IMAGE if len(parts) == 6 else LASER_SCAN
    return None
