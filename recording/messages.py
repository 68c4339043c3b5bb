"""The JSON of every recorded message: field order and number formatting are the file format
(docs/recording.md).

States, commands, events and contacts are encoded on the tick thread: orjson makes each in about
10 µs, less than packing their arrays for the writer process would cost. Link poses go to the
writer process as arrays and become foxglove.FrameTransforms there (:class:`FrameTransforms`):
a Python loop over every link, the largest part of a recording's encoding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from hrpsim.recording import schemas

if TYPE_CHECKING:
    from hrpsim.simserver.tick_record import AppliedCommand, ControllerEvent, TickRecord


def to_json(value: Any) -> bytes:
    """JSON with numpy arrays as lists. Floats keep every bit (the shortest repr that reads back
    the same double); NaN and infinities, which JSON lacks, become null."""
    return orjson.dumps(value, default=_plain, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)


def _plain(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):  # the layouts orjson does not take as they are (non-contiguous, int8 ...)
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, bytes):
        return obj.hex()
    raise TypeError(f"cannot record a {type(obj).__name__}")


def nanoseconds(t: float) -> int:
    return max(0, round(t * 1e9))


def timestamp(t: float) -> dict[str, int]:
    """A Foxglove message's ``timestamp``: simulated time as whole seconds and nanoseconds."""
    sec, nsec = divmod(nanoseconds(t), 1_000_000_000)
    return {"sec": sec, "nsec": nsec}


def state_message(state: Any) -> bytes:
    return to_json(
        {
            "tick": state.tick,
            "time": state.time,
            "q": state.q,
            "dq": state.dq,
            "tau": state.tau,
            "root_position": state.root_position,
            "root_rotation": np.ravel(state.root_rotation),
            "root_velocity": state.root_velocity,
            "sensors": state.sensors,
        }
    )


def command_message(record: TickRecord, command: AppliedCommand) -> bytes:
    message: dict[str, Any] = {
        "tick": record.tick,
        "time": record.time,
        "robot": command.robot,
        "received": command.received,
    }
    for key in ("torque", "q_ref", "dq_ref", "modes", "rtt_us"):
        value = getattr(command, key)
        if value is not None:
            message[key] = value
    return to_json(message)


def event_message(record: TickRecord, event: ControllerEvent) -> bytes:
    return to_json(
        {"tick": record.tick, "time": record.time, "robot": event.robot, "kind": event.kind, "detail": event.detail}
    )


def contacts_message(record: TickRecord) -> bytes:
    return to_json({"tick": record.tick, "time": record.time, "contacts": record.contacts()})


def disturbances_message(record: TickRecord) -> bytes:
    return to_json({"tick": record.tick, "time": record.time, "applied": record.disturbances})


class FrameTransforms:
    """foxglove.FrameTransforms of every link (frames ``MODEL/LINK`` in ``world``) from each
    model's link positions (n, 3) and quaternions (n, 4, wxyz), as raw float64 bytes.

    The dicts of each model's transforms are built once and refilled every tick: building them
    anew was most of the writer process's time per tick."""

    def __init__(self, frames: dict[str, list[str]]) -> None:
        self.frames = frames  # model -> frame id of each link, in link order
        self._stamp: dict[str, int] = {"sec": 0, "nsec": 0}
        self._transforms: dict[str, list[tuple[dict, dict, dict]]] = {}

    def encode(self, values: list[Any]) -> bytes:
        time, models = values
        self._stamp.update(timestamp(time))
        transforms = []
        for name, positions, quaternions in models:
            p_rows = np.frombuffer(positions, dtype=np.float64).reshape(-1, 3).tolist()
            q_rows = np.frombuffer(quaternions, dtype=np.float64).reshape(-1, 4).tolist()
            for (transform, t, r), p, q in zip(self._model(name), p_rows, q_rows, strict=True):
                t["x"], t["y"], t["z"] = p
                r["w"], r["x"], r["y"], r["z"] = q
                transforms.append(transform)
        return orjson.dumps({"transforms": transforms})

    def _model(self, name: str) -> list[tuple[dict, dict, dict]]:
        built = self._transforms.get(name)
        if built is None:
            built = self._transforms[name] = [self._transform(child) for child in self.frames[name]]
        return built

    def _transform(self, child: str) -> tuple[dict, dict, dict]:
        translation = {"x": 0.0, "y": 0.0, "z": 0.0}
        rotation = {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}
        transform = {
            "timestamp": self._stamp,
            "parent_frame_id": schemas.WORLD_FRAME,
            "child_frame_id": child,
            "translation": translation,
            "rotation": rotation,
        }
        return transform, translation, rotation
