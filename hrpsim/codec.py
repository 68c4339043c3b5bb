"""The wire codec: msgpack with numpy arrays as an extension type, and the message envelope.

One object, :class:`Codec`, owns every byte that crosses a socket. ``encode``/``decode`` turn any
value (dicts, lists, str, bytes, numbers, None, numpy arrays) into one frame and back, exactly.
``request``/``reply``/``error`` build the envelope, and ``parse_request``/``parse_reply`` check it:
every envelope carries the protocol version, and a peer of another version is refused.

Array extension (type code 1): ``u8 len(dtype) | dtype str | u8 ndim | u32 shape[ndim] | raw``,
all little-endian. docs/protocol.md describes it for writers of controllers in other languages.
"""

from __future__ import annotations

import struct
import threading
from typing import Any, NamedTuple

import msgpack
import numpy as np

from hrpsim.errors import ProtocolError

PROTOCOL_VERSION = 1
ARRAY_EXT = 1
MAX_ARRAY_DIMS = 8
MAX_MESSAGE_BYTES = 256 * 1024 * 1024

_ALLOWED_KINDS = "biufc"  # bool, int, uint, float, complex: no objects, no strings


_HEADER_CACHE_LIMIT = 4096
# (dtype, shape) -> the extension's header, for arrays already checked once
_encode_headers: dict[tuple[np.dtype, tuple[int, ...]], bytes] = {}
# header bytes -> (dtype, shape, header length, whole extension length)
_decode_headers: dict[bytes, tuple[np.dtype, tuple[int, ...], int, int]] = {}
# An ExtType made as the tuple it is: its constructor's argument checks cost more than the
# copy of the array on the hot path, and this module only ever makes well-formed ones.
_new_ext = tuple.__new__


def _remember(cache: dict, key: object, value: object) -> None:
    if len(cache) >= _HEADER_CACHE_LIMIT:  # bounded: a peer sending many odd shapes cannot grow it
        cache.clear()
    cache[key] = value


def _encode_array(arr: np.ndarray) -> msgpack.ExtType:
    header = _encode_headers.get((arr.dtype, arr.shape))
    if header is None:
        arr, header = _checked_header(arr)
    return _new_ext(msgpack.ExtType, (ARRAY_EXT, header + arr.tobytes()))  # tobytes: C order, whatever the strides


def _checked_header(arr: np.ndarray) -> tuple[np.ndarray, bytes]:
    """The array as it travels (little-endian) and its header, checked; cached for its dtype and shape."""
    dtype = arr.dtype
    if dtype.kind not in _ALLOWED_KINDS:
        raise ProtocolError(f"cannot send a numpy array of dtype {dtype}: only numeric arrays travel")
    if arr.ndim > MAX_ARRAY_DIMS:
        raise ProtocolError(f"cannot send a {arr.ndim}-dimensional array (at most {MAX_ARRAY_DIMS})")
    if dtype.byteorder == ">":
        return _checked_header(arr.astype(dtype.newbyteorder("<")))
    code = dtype.str.replace("=", "<").encode()
    header = struct.pack(f"<B{len(code)}sB{arr.ndim}I", len(code), code, arr.ndim, *arr.shape)
    _remember(_encode_headers, (dtype, arr.shape), header)
    return arr, header


def _parse_header(data: bytes) -> tuple[np.dtype, tuple[int, ...], int, int]:
    try:
        dlen = data[0]
        ndim = data[1 + dlen]
        offset = 2 + dlen + 4 * ndim
        key = data[:offset]
    except IndexError:
        raise ProtocolError("malformed array header: truncated") from None
    cached = _decode_headers.get(key)
    if cached is not None:
        return cached
    try:
        dtype = np.dtype(key[1 : 1 + dlen].decode())
        if ndim > MAX_ARRAY_DIMS:
            raise ProtocolError(f"array with {ndim} dimensions (at most {MAX_ARRAY_DIMS})")
        shape = struct.unpack_from(f"<{ndim}I", key, 2 + dlen)
    except (struct.error, UnicodeDecodeError, TypeError, ValueError) as exc:
        raise ProtocolError(f"malformed array header: {exc}") from None
    if dtype.kind not in _ALLOWED_KINDS:
        raise ProtocolError(f"array of dtype {dtype} refused: only numeric arrays travel")
    if len(key) != offset:
        raise ProtocolError("malformed array header: truncated")
    count = 1
    for side in shape:
        count *= side
    parsed = (dtype, shape, offset, offset + count * dtype.itemsize)
    _remember(_decode_headers, key, parsed)
    return parsed


def _decode_ext(code: int, data: bytes) -> Any:
    if code != ARRAY_EXT:
        raise ProtocolError(f"unknown msgpack extension type {code}")
    dtype, shape, offset, size = _parse_header(data)
    if len(data) != size:
        raise ProtocolError(
            f"array of shape {tuple(shape)} {dtype} needs {size - offset} bytes, got {len(data) - offset}"
        )
    arr = np.frombuffer(data, dtype, -1, offset)
    arr = arr.copy() if dtype.isnative else arr.astype(dtype.newbyteorder("="))
    return arr if len(shape) == 1 else arr.reshape(shape)


def _default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return _encode_array(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, tuple):
        return list(obj)
    raise ProtocolError(f"cannot encode a value of type {type(obj).__name__}")


# Named tuples: as immutable as frozen dataclasses, made in a third of the time (one per message).
class Request(NamedTuple):
    id: int
    op: str
    args: dict[str, Any]


class Reply(NamedTuple):
    id: int
    ok: bool
    result: Any = None
    error_type: str = ""
    error_message: str = ""
    error: dict[str, Any] | None = None  # the whole error map: type, message and any details


class Codec:
    """Serialises values and envelopes. ``decode(encode(x)) == x`` for every supported value."""

    version = PROTOCOL_VERSION

    def __init__(self) -> None:
        # One packer per thread: a packer's buffer is not thread-safe, and a process encodes from
        # its main loop and from its registration heartbeat at once (a shared one corrupted frames).
        self._local = threading.local()

    def _packer(self) -> msgpack.Packer:
        packer = getattr(self._local, "packer", None)
        if packer is None:
            packer = self._local.packer = msgpack.Packer(default=_default, use_bin_type=True, autoreset=True)
        return packer

    # --- values ---

    def encode(self, value: Any) -> bytes:
        packer = self._packer()
        try:
            return packer.pack(value)
        except ProtocolError:
            raise
        except (TypeError, ValueError, OverflowError) as exc:
            packer.reset()
            raise ProtocolError(f"cannot encode message: {exc}") from None

    def decode(self, frame: bytes) -> Any:
        if len(frame) > MAX_MESSAGE_BYTES:
            raise ProtocolError(f"message of {len(frame)} bytes exceeds the limit of {MAX_MESSAGE_BYTES}")
        try:
            return msgpack.unpackb(frame, ext_hook=_decode_ext, raw=False, strict_map_key=False)
        except ProtocolError:
            raise
        except Exception as exc:  # msgpack raises many types for garbage; all mean the same here
            raise ProtocolError(f"undecodable message ({type(exc).__name__}: {exc})") from None

    # --- envelopes ---

    def request(self, req_id: int, op: str, args: dict[str, Any] | None = None) -> bytes:
        return self.encode({"v": self.version, "id": req_id, "op": op, "args": args or {}})

    def reply(self, req_id: int | None, result: Any) -> bytes:
        return self.encode({"v": self.version, "id": req_id, "ok": True, "result": result})

    def error(self, req_id: int | None, error_type: str, message: str, **details: Any) -> bytes:
        """An error reply; ``details`` (``field``, ``problems``) travel beside type and message."""
        error = {**details, "type": error_type, "message": message}
        return self.encode({"v": self.version, "id": req_id, "ok": False, "error": error})

    def _envelope(self, frame: bytes) -> dict[str, Any]:
        msg = self.decode(frame)
        if not isinstance(msg, dict):
            raise ProtocolError(f"an envelope must be a map, got {type(msg).__name__}")
        version = msg.get("v")
        if version != self.version:
            raise ProtocolError(
                f"peer speaks hrpsim protocol version {version!r}, this side speaks {self.version}: "
                "run the same hrpsim version on both sides"
            )
        return msg

    def parse_request(self, frame: bytes) -> Request:
        msg = self._envelope(frame)
        req_id, op, args = msg.get("id"), msg.get("op"), msg.get("args", {})
        if not isinstance(req_id, int) or isinstance(req_id, bool):
            raise ProtocolError(f"request field 'id' must be an integer, got {type(req_id).__name__}")
        if not isinstance(op, str):
            raise ProtocolError(f"request field 'op' must be a string, got {type(op).__name__}")
        if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
            raise ProtocolError("request field 'args' must be a map with string keys")
        return Request(req_id, op, args)

    def parse_reply(self, frame: bytes) -> Reply:
        msg = self._envelope(frame)
        req_id, ok = msg.get("id"), msg.get("ok")
        if req_id is not None and not isinstance(req_id, int):
            raise ProtocolError(f"reply field 'id' must be an integer, got {type(req_id).__name__}")
        if ok is True:
            return Reply(req_id, True, msg.get("result"))
        error = msg.get("error")
        if ok is not False or not isinstance(error, dict):
            raise ProtocolError("a reply needs 'ok': true with 'result', or 'ok': false with 'error'")
        return Reply(req_id, False, None, str(error.get("type", "Error")), str(error.get("message", "")), error)

    @staticmethod
    def request_id_of(frame: bytes) -> int | None:
        """Best effort: the id of a request that failed to parse, so its error reply can be matched."""
        try:
            msg = msgpack.unpackb(frame, raw=False, strict_map_key=False, ext_hook=lambda c, d: None)
        except Exception:  # garbage has no id; the caller replies with id None
            return None
        req_id = msg.get("id") if isinstance(msg, dict) else None
        return req_id if isinstance(req_id, int) and not isinstance(req_id, bool) else None


CODEC = Codec()
