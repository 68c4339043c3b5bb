"""The exception types of hrpsim. Each failure has its own type, and each message says what
went wrong, where (peer and address, or file and line), and how to fix it where that is known."""

from __future__ import annotations

import re
from typing import Any

# "file:line:column: message" or "file:line: message" (line and column count from 1)
_LOCATED = re.compile(r"^(?P<file>[^:\n]*?[^:\s\n]):(?P<line>\d+)(?::(?P<column>\d+))?: ")


class Problem(str):
    """One problem in a file: its text ("file:line:column: message", as everywhere in hrpsim)
    with the parts a tool can use, ``file``, ``line`` and ``column`` (None where unknown)."""

    file: str
    line: int | None
    column: int | None

    def __new__(cls, text: str, *, file: str = "", line: int | None = None, column: int | None = None) -> Problem:
        problem = super().__new__(cls, text)
        found = _LOCATED.match(text) if not file else None
        problem.file = found["file"] if found else file
        problem.line = int(found["line"]) if found else line
        problem.column = int(found["column"]) if found and found["column"] else column
        return problem

    def to_wire(self) -> dict[str, Any]:
        return {"text": str(self), "file": self.file, "line": self.line, "column": self.column}

    @classmethod
    def from_wire(cls, data: Any) -> Problem:
        if isinstance(data, dict):
            line, column = data.get("line"), data.get("column")
            return cls(
                str(data.get("text", "")),
                file=str(data.get("file") or ""),
                line=line if isinstance(line, int) else None,
                column=column if isinstance(column, int) else None,
            )
        return cls(str(data))


class HrpsimError(Exception):
    """Base of every error hrpsim raises on purpose. ``field`` names the request or message field
    at fault where there is one; :meth:`to_wire` and :func:`error_from_wire` carry an error
    across a process boundary with its type and details."""

    field: str = ""

    def __init__(self, message: str = "", *, field: str = "") -> None:
        super().__init__(message)
        self.field = field

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"type": type(self).__name__, "message": self.message}
        if self.field:
            wire["field"] = self.field
        return wire


class ProtocolError(HrpsimError):
    """A message that is not a well-formed hrpsim message, or of another protocol version."""


class Timeout(HrpsimError):
    """A peer did not answer within the deadline."""


class PeerGone(HrpsimError):
    """A peer that was there is gone (its process died or its socket closed)."""


class RemoteError(HrpsimError):
    """A peer answered a request with an error reply.

    ``type`` is the remote exception's type name; ``peer`` and ``op`` say who failed at what.
    """

    def __init__(self, message: str, *, type: str = "Error", peer: str = "", op: str = "", field: str = "") -> None:
        super().__init__(message, field=field)
        self.type = type
        self.peer = peer
        self.op = op


class NotFound(HrpsimError):
    """A name (service, body, link, joint, sensor) that is not known to whoever was asked."""


class RequestError(HrpsimError):
    """A request whose arguments are wrong: the message names the field."""


class ConfigError(HrpsimError):
    """A project file or command-line setting that is wrong: the message names the file and key."""


class ModelError(HrpsimError):
    """A model file that cannot be loaded. ``problems`` lists every problem found, each with its
    location (file:line:column where known)."""

    def __init__(self, message: str, problems: list[str] | None = None, *, field: str = "") -> None:
        self.problems = [Problem.from_wire(p) if isinstance(p, dict) else Problem(p) for p in problems or [message]]
        self.headline = message
        # A lone problem the message already quotes is not repeated; any other is listed.
        told = len(self.problems) == 1 and self.problems[0] in message
        super().__init__(message if told else message + "\n  " + "\n  ".join(self.problems), field=field)

    @property
    def message(self) -> str:
        return self.headline

    def to_wire(self) -> dict[str, Any]:
        return {**super().to_wire(), "problems": [p.to_wire() for p in self.problems]}


class AccessDenied(HrpsimError):
    """A request for something the peer may not have: a file outside the allowed folders or not
    a regular file, an operation its key's role does not grant, a name it does not own."""


class SimulationError(HrpsimError):
    """The simulation cannot go on (a non-finite state, an exploding body): names body and link."""


class RecordingError(HrpsimError):
    """A recording that cannot be read, or that lacks what was asked of it (a joint, a sensor)."""


# Remote error replies carry the type's name; the client turns known names back into types.
ERROR_TYPES: dict[str, type[HrpsimError]] = {
    cls.__name__: cls
    for cls in (
        ProtocolError,
        Timeout,
        PeerGone,
        NotFound,
        RequestError,
        ConfigError,
        ModelError,
        SimulationError,
        AccessDenied,
    )
}


def error_from_wire(data: dict[str, Any], prefix: str = "") -> HrpsimError:
    """The exception an error map (:meth:`HrpsimError.to_wire`) describes, as its own type where
    hrpsim knows it (RemoteError otherwise); ``prefix`` goes before the message (who failed)."""
    kind, message = str(data.get("type", "Error")), prefix + str(data.get("message", ""))
    field = str(data.get("field") or "")
    cls = ERROR_TYPES.get(kind)
    if cls is ModelError:
        problems = data.get("problems")
        return ModelError(message, problems if isinstance(problems, list) and problems else None, field=field)
    if cls is not None:
        return cls(message, field=field)
    return RemoteError(message, type=kind, field=field)
