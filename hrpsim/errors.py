"""The exception types of hrpsim. Each failure has its own type, and each message says what
went wrong, where (peer and address, or file and line), and how to fix it where that is known."""

from __future__ import annotations


class HrpsimError(Exception):
    """Base of every error hrpsim raises on purpose."""


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

    def __init__(self, message: str, *, type: str = "Error", peer: str = "", op: str = "") -> None:
        super().__init__(message)
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

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = list(problems) if problems else [message]
        super().__init__(message if len(self.problems) <= 1 else message + "\n  " + "\n  ".join(self.problems))


class SimulationError(HrpsimError):
    """The simulation cannot go on (a non-finite state, an exploding body): names body and link."""


class RecordingError(HrpsimError):
    """A recording that cannot be read, or that lacks what was asked of it (a joint, a sensor)."""


# Remote error replies carry the type's name; the client turns known names back into types.
ERROR_TYPES: dict[str, type[HrpsimError]] = {
    cls.__name__: cls
    for cls in (ProtocolError, Timeout, PeerGone, NotFound, RequestError, ConfigError, ModelError, SimulationError)
}
