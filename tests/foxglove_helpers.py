"""Helpers for the Foxglove and ROS 2 tests: a recorded stand of the sample humanoid, Foxglove's
JSON schemas (tests/data/foxglove_schemas, from @foxglove/schemas), and a Foxglove WebSocket
client written from the protocol's public description (subscribe, receive)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

import jsonschema
from process_helpers import HRPSIM, REPO

FOXGLOVE_SCHEMAS = REPO / "tests" / "data" / "foxglove_schemas"
SUBPROTOCOLS = ["foxglove.sdk.v1", "foxglove.websocket.v1"]  # the SDK server, older servers
MESSAGE_DATA = 0x01  # binary opcode: u32 subscription id, u64 log time, payload

STAND = """world: {{timestep: 0.002, end_time: {end_time}, sync: {sync}}}
services: {{loader: local}}
models:
  - {{name: floor, file: {models}/openhrp3/model/floor.wrl, static: true, position: [0, 0, -0.1]}}
  - {{name: robot, file: {models}/openhrp3/model/sample1.wrl, position: [0, 0, 0.7235], drive: high_gain}}
collisions:
  - {{a: floor, b: robot}}
"""
RECORD = "record: {{file: {record}, contacts: true}}\n"


def stand_project(
    folder: Path, models: Path, *, end_time: float = 0.2, sync: str = "lockstep", record: bool = True
) -> Path:
    """The sample humanoid standing on the floor, recorded with its contacts to ``folder/stand.mcap``."""
    project = folder / "stand.yaml"
    text = (STAND + (RECORD if record else "")).format(
        models=models, end_time=end_time, sync=sync, record=folder / "stand.mcap"
    )
    project.write_text(text)
    return project


def hrpsim(*args: str, timeout: float = 300.0) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([*HRPSIM, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)


def launch(project: Path, folder: Path, *extra: str) -> None:
    run = hrpsim(
        "launch", str(project), "--quiet", "--nameserver", "tcp://127.0.0.1:*", "--run-dir", str(folder / "run"), *extra
    )
    assert run.returncode == 0, run.stdout + run.stderr


def foxglove_validators() -> dict[str, jsonschema.protocols.Validator]:
    """Schema name (foxglove.SceneUpdate ...) -> a validator of Foxglove's published JSON schema."""
    validators = {}
    for path in FOXGLOVE_SCHEMAS.glob("*.json"):
        schema = json.loads(path.read_text())
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validators[schema["title"]] = cls(schema)
    return validators


class FoxgloveClient:
    """The client side of the Foxglove WebSocket protocol: channels advertised, subscribe, messages."""

    def __init__(self, url: str, *, timeout: float = 60.0) -> None:
        from websockets.sync.client import connect

        deadline = time.monotonic() + timeout
        while True:
            try:
                self.socket = connect(url, subprotocols=SUBPROTOCOLS, open_timeout=10, max_size=None)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.channels: dict[str, dict[str, Any]] = {}  # topic -> advertised channel
        self.subscriptions: dict[int, str] = {}  # subscription id -> topic

    def wait_for_channels(self, topics: set[str], *, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not topics <= set(self.channels):
            if time.monotonic() > deadline:
                raise AssertionError(f"channels {sorted(topics - set(self.channels))} never advertised")
            self._receive(deadline)

    def subscribe(self, topics: list[str]) -> None:
        subscriptions = []
        for topic in topics:
            sub_id = len(self.subscriptions) + 1
            self.subscriptions[sub_id] = topic
            subscriptions.append({"id": sub_id, "channelId": self.channels[topic]["id"]})
        self.socket.send(json.dumps({"op": "subscribe", "subscriptions": subscriptions}))

    def messages(self, *, timeout: float = 60.0) -> Any:
        """(topic, log time ns, decoded JSON) as they arrive, until ``timeout`` passes without one."""
        while True:
            received = self._receive(time.monotonic() + timeout)
            if received is None:
                continue
            yield received

    def _receive(self, deadline: float) -> tuple[str, int, Any] | None:
        frame = self.socket.recv(timeout=max(0.1, deadline - time.monotonic()))
        if isinstance(frame, str):
            op = json.loads(frame)
            if op.get("op") == "advertise":
                self.channels.update({c["topic"]: c for c in op["channels"]})
            return None
        if frame[0] != MESSAGE_DATA:
            return None
        sub_id, log_time = struct.unpack_from("<IQ", frame, 1)
        return self.subscriptions[sub_id], log_time, json.loads(frame[13:])

    def close(self) -> None:
        self.socket.close()
