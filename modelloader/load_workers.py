"""Loads in worker processes, so that no model file can stop the modelloader service.

The service reads no model itself: it hands each load (that its cache cannot answer) to one of a
few worker processes (``python -m hrpsim.modelloader.load_workers``) and goes on answering
requests. A load that takes longer than its deadline has its worker killed, and so has one whose
worker grows by more resident memory than a load may take (the service reads the worker's size
from /proc at every turn of its loop, every 2 ms while a load runs); either way the peer gets an
error naming the file, and a fresh worker takes the next load. (An address-space limit inside the
worker would not do: at it, CPython 3.11 was seen spinning for ever while unwinding the
MemoryError.) A worker ends with the service (it is killed when its parent dies, and stops at the
end of its input).

Requests and replies are hrpsim's msgpack values, each preceded by its length (4 bytes, big
endian), on the worker's standard input and output; everything else the worker prints goes to
its standard error, the service's log.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import signal
import struct
import subprocess
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hrpsim.codec import CODEC
from hrpsim.errors import HrpsimError, ModelError, ProtocolError, error_from_wire
from hrpsim.files import ReadPolicy, reading_under
from hrpsim.modelloader import FORMATS, load_body
from hrpsim.modelloader.cache import body_digests

DEFAULT_WORKERS = 2
DEFAULT_TIMEOUT_S = 50.0  # below a client's own 60 s, so that it hears why
DEFAULT_MEMORY_MB = 2048
START_TIMEOUT_S = 120.0  # a worker's imports, on a busy machine; a load's deadline counts from its end
MAX_QUEUED = 64  # loads waiting for a worker; past that a load is refused at once
_LENGTH = struct.Struct(">I")
_PR_SET_PDEATHSIG = 1
_PAGE = os.sysconf("SC_PAGE_SIZE")

Reply = dict[str, Any]  # {"wire": ..., "digests": ...} or {"error": an HrpsimError's wire form}


@dataclass(frozen=True)
class LoadLimits:
    """What one load may take: ``timeout`` seconds and ``memory_mb`` MB of memory beyond the
    worker's own before the load."""

    timeout: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * 1024 * 1024


DEFAULT_LIMITS = LoadLimits()


@dataclass
class _Job:
    request: dict[str, Any]
    done: Callable[[Reply], None]
    started: float = 0.0  # when its worker was ready to read it: the deadline counts from there
    resident: int = 0  # its worker's resident memory then: the bound counts from there


@dataclass
class _Worker:
    process: subprocess.Popen
    spawned: float
    ready: bool = False  # its readers imported (it says so in its first frame)
    resident: int = 0  # its resident memory once ready
    job: _Job | None = None
    received: bytearray = field(default_factory=bytearray)


class LoadWorkers:
    """Up to ``count`` worker processes, started as loads come; ``poll`` from the service's loop."""

    def __init__(self, count: int = DEFAULT_WORKERS, limits: LoadLimits = DEFAULT_LIMITS) -> None:
        self.count = max(1, count)
        self.limits = limits
        self._workers: list[_Worker] = []
        self._queue: deque[_Job] = deque()

    @property
    def busy(self) -> bool:
        return bool(self._queue) or any(w.job is not None for w in self._workers)

    def submit(self, request: dict[str, Any], done: Callable[[Reply], None]) -> None:
        """Load ``request`` (path, options, roots) in a worker; ``done(reply)`` is called from
        :meth:`poll` with its result or error. ModelError at once when too many loads wait."""
        if len(self._queue) >= MAX_QUEUED:
            raise ModelError(f"{request['path']}: {MAX_QUEUED} loads are already waiting; try again later")
        self._queue.append(_Job(request, done))
        self._start_queued()

    def poll(self) -> None:
        """Take the replies that came, end loads past their deadline, start waiting ones."""
        for worker in list(self._workers):
            self._read(worker)
        now = time.monotonic()
        for worker in [w for w in self._workers if w.job is not None]:
            path = worker.job.request["path"]
            if worker.ready and now - worker.job.started > self.limits.timeout:
                self._end(worker, f"{path}: reading took longer than {self.limits.timeout:g} s; not loaded")
            elif worker.ready and _resident(worker.process.pid) - worker.job.resident > self.limits.memory_bytes:
                self._end(worker, f"{path}: not enough memory to read this model: {self._memory_rule}")
            elif not worker.ready and now - worker.spawned > START_TIMEOUT_S:
                self._end(worker, f"{path}: the process to read it did not start within {START_TIMEOUT_S:g} s")
        self._start_queued()

    def start(self) -> None:
        """Start one worker now, so that the first load does not wait for its imports."""
        if not self._workers:
            self._spawn()

    def close(self) -> None:
        for worker in self._workers:
            _stop(worker.process)
        self._workers.clear()

    # --- the workers ---

    def _start_queued(self) -> None:
        while self._queue:
            worker = next((w for w in self._workers if w.job is None), None)
            if worker is None and len(self._workers) < self.count:
                worker = self._spawn()
            if worker is None:
                return
            job = worker.job = self._queue.popleft()
            job.started, job.resident = time.monotonic(), _resident(worker.process.pid)
            try:
                _send(worker.process.stdin, job.request)  # taken up once the worker is ready
            except OSError:
                self._end(worker, f"{job.request['path']}: the process to read it ended before the load")

    def _spawn(self) -> _Worker:
        process = subprocess.Popen(
            [sys.executable, "-m", "hrpsim.modelloader.load_workers"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        os.set_blocking(process.stdout.fileno(), False)
        worker = _Worker(process, time.monotonic())
        self._workers.append(worker)
        return worker

    def _read(self, worker: _Worker) -> None:
        """The worker's frames that came whole (its readiness, a reply); its end, when it ended."""
        ended = _drain(worker)
        while (frame := _frame(worker.received)) is not None:
            try:
                reply = CODEC.decode(frame)
            except ProtocolError as exc:
                path = worker.job.request["path"] if worker.job is not None else "a model"
                reply = _error(ModelError(f"{path}: the process reading it answered garbage: {exc}"))
            if reply.get("ready"):
                worker.ready, worker.resident = True, _resident(worker.process.pid)
                if worker.job is not None:
                    worker.job.started, worker.job.resident = time.monotonic(), _resident(worker.process.pid)
            elif worker.job is not None:
                job, worker.job = worker.job, None
                # one that ran out of memory, or kept half the bound after a load, makes way for a fresh one
                grown = _resident(worker.process.pid) - worker.resident > self.limits.memory_bytes // 2
                ended = ended or grown or bool(reply.get("exit"))
                job.done(reply)
        if ended:
            self._end(worker, self._ended(worker) if worker.job is not None else "")

    def _ended(self, worker: _Worker) -> str:
        """Why the worker's load failed, when the worker ended under it."""
        try:
            status = worker.process.wait(5.0)
        except subprocess.TimeoutExpired:  # its output closed, itself not yet gone
            status = None
        path = worker.job.request["path"]
        if status == -signal.SIGKILL:  # the kernel's answer to a machine out of memory
            return f"{path}: the process reading it was killed; {self._memory_rule}"
        how = "closed its output" if status is None else f"ended with status {status}"
        return f"{path}: the process reading it {how} (a fault of a reader or of a library it uses)"

    @property
    def _memory_rule(self) -> str:
        return (
            f"a load may take {self.limits.memory_mb} MB (--load-memory), and reading a model takes 4 to 160 "
            "times its size, by format (docs/security.md)"
        )

    def _end(self, worker: _Worker, message: str) -> None:
        """Stop the worker; fail its load, if it has one, with ``message``."""
        job, worker.job = worker.job, None
        _stop(worker.process)
        self._workers.remove(worker)
        if job is not None:
            job.done(_error(ModelError(message)))


def _drain(worker: _Worker) -> bool:
    """Append what the worker wrote to ``worker.received``; True when its output has ended."""
    while True:
        try:
            chunk = os.read(worker.process.stdout.fileno(), 1 << 20)
        except BlockingIOError:
            return False
        if not chunk:
            return True
        worker.received += chunk


def _frame(received: bytearray) -> bytes | None:
    """The first whole frame of ``received``, taken out of it; None until it has all come."""
    if len(received) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack_from(received)
    if len(received) < _LENGTH.size + size:
        return None
    frame = bytes(received[_LENGTH.size : _LENGTH.size + size])
    del received[: _LENGTH.size + size]
    return frame


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(10.0)
    for stream in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):
            stream.close()


def _error(exc: HrpsimError) -> Reply:
    return {"error": exc.to_wire()}


def reply_error(reply: Reply) -> HrpsimError | None:
    """The error a worker's reply carries, as its own type, or None for a loaded body."""
    return error_from_wire(reply["error"]) if "error" in reply else None


def _send(stream: Any, value: Any) -> None:
    _write(stream, CODEC.encode(value))


def _write(stream: Any, frame: bytes) -> None:
    stream.write(_LENGTH.pack(len(frame)) + frame)
    stream.flush()


# --- the worker process ------------------------------------------------------------------------


def serve_loads(requests: Any, replies: Any) -> None:
    """Say it is ready, then answer load requests from ``requests`` on ``replies`` until the
    input ends."""
    _send(replies, {"ready": True})
    while True:
        header = requests.read(_LENGTH.size)
        if len(header) < _LENGTH.size:
            return
        request = CODEC.decode(requests.read(_LENGTH.unpack(header)[0]))
        reply = load_reply(request)
        try:
            frame = CODEC.encode(reply)
        except ProtocolError as exc:  # a value no peer could decode (an integer past 64 bits)
            reply = _error(ModelError(f"{request['path']}: the model holds a value the wire cannot carry: {exc}"))
            frame = CODEC.encode(reply)
        _write(replies, frame)
        if reply.get("exit"):
            return


def load_reply(request: dict[str, Any]) -> Reply:
    """The body at ``request["path"]`` read under the request's roots, or the error that says why not."""
    path = request["path"]
    try:
        with reading_under(ReadPolicy(roots=tuple(Path(root) for root in request["roots"]))):
            body = load_body(path, **request["options"])
            digests = body_digests(body.metadata)
        return {"wire": body.to_wire(), "digests": digests, "name": body.name, "links": len(body.links)}
    except HrpsimError as exc:
        # load_body turns a MemoryError into a ModelError; a process that ran out is not reused
        return {**_error(exc), "exit": isinstance(exc.__context__, MemoryError)}
    except MemoryError:
        return {**_error(ModelError(f"{path}: not enough memory to read this model")), "exit": True}
    except Exception as exc:  # a reader's bug: the traceback to the log, the file's name to the peer
        traceback.print_exc()
        return _error(ModelError(f"{path}: cannot be read: {type(exc).__name__}: {exc} (a fault of hrpsim's reader)"))


def _resident(pid: int) -> int:
    """The resident memory of process ``pid`` in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _import_readers() -> None:
    """Every reader that can be imported, before the first request (a reader that cannot be
    imported says so when a file of its kind is loaded)."""
    for module, _, _ in FORMATS.values():
        with contextlib.suppress(ImportError):
            importlib.import_module(module)


def main() -> None:
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the service stops its workers itself
    requests, replies = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # whatever a library prints goes to the log, not into the replies
    _import_readers()
    try:
        serve_loads(requests, replies)
    except BrokenPipeError:  # the service is gone
        pass
    except Exception:
        traceback.print_exc()
        raise


if __name__ == "__main__":
    main()


__all__ = ["LoadLimits", "LoadWorkers", "reply_error"]
