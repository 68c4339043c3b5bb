"""The simulator's end of a recording: a writer process and the pipe that feeds it.

Why a process and not a thread: the tick loop holds the GIL for most of a tick, so a writer
thread's Python (JSON, mcap's chunk building) did not overlap the simulation but stretched
every tick by its own cost (+20 % for the sample walk, docs/recording.md). A process runs on the
other core; the tick thread only packs each tick's values (hrpsim's msgpack codec, a few
microseconds) and hands them to the pipe.

It holds them and writes a batch at a time (HOLD_FRAMES, HOLD_BYTES, and whenever the tick loop
stops: ``flush``). A write that wakes the sleeping writer costs the tick thread ~50 µs on a
virtual machine, more than all of a tick's encoding; one write per batch also wakes the writer
once per batch instead of every tick.

Frames on the pipe: ``u32 length | msgpack value``, the framing of hrpsim/unix_channel.py. The
file is opened here, so a path that cannot be written is an error in the simulator, and handed
to the process as a descriptor.
Closing the pipe (or dying: the kernel closes it) tells the process to finish the file.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hrpsim.codec import CODEC
from hrpsim.unix_channel import framed

log = logging.getLogger("hrpsim.recording")

HOLD_FRAMES = 16  # ticks held before a write: a killed simulator loses at most these
HOLD_BYTES = 256 * 1024  # or fewer, when they are this large (camera images)
PIPE_BYTES = 1024 * 1024  # the pipe's buffer: ticks the simulator may run ahead of its writer
SEND_TIMEOUT_S = 30.0  # a writer that takes nothing for this long is given up (the run goes on)
CLOSE_TIMEOUT_S = 60.0  # how long the end of a run waits for the writer to finish the file
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


class WriterProcess:
    """Starts ``python -m hrpsim.recording.writer_process`` on ``path``; ``send`` hands it values."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.failed: str | None = None
        file_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        read_fd, self._fd = os.pipe()  # neither end is inherited by other children (non-inheritable)
        try:
            with contextlib.suppress(OSError):  # a smaller pipe only means an earlier wait
                fcntl.fcntl(self._fd, _F_SETPIPE_SZ, PIPE_BYTES)
            fds = [str(read_fd), str(file_fd), str(os.getpid()), str(path)]
            argv = [sys.executable, "-m", "hrpsim.recording.writer_process", *fds]
            self.process = subprocess.Popen(argv, pass_fds=(read_fd, file_fd), stdin=subprocess.DEVNULL)
        except BaseException:
            os.close(self._fd)
            raise
        finally:
            os.close(read_fd)
            os.close(file_fd)
        self._held: list[bytes] = []
        self._held_bytes = 0
        self._reported = False  # its failed exit has been logged
        os.set_blocking(self._fd, False)
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLOUT)

    def send(self, value: Any, *, now: bool = False) -> None:
        """Pack one frame and hold it; the held frames are written when there are enough of them,
        or ``now``."""
        if self.failed is not None:
            return
        frame = framed(CODEC.encode(value))
        self._held.append(frame)
        self._held_bytes += len(frame)
        if now or len(self._held) >= HOLD_FRAMES or self._held_bytes >= HOLD_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the held frames; waits (up to SEND_TIMEOUT_S) only while the pipe is full."""
        if self.failed is not None or not self._held:
            return
        data = b"".join(self._held)
        self._held, self._held_bytes = [], 0
        try:
            self._write(data)
        except OSError as exc:  # the writer died (disk full, killed): the run goes on unrecorded
            self._give_up(f"its writer process is gone ({type(exc).__name__}: {exc}; status {self.process.poll()})")
        except TimeoutError:
            self._give_up(f"its writer process took nothing for {SEND_TIMEOUT_S:g} s")

    def close(self, *, wait: bool = True) -> None:
        """Write what is held and close the pipe: the writer finishes the file on its own. ``wait``:
        until it has (see :meth:`wait`)."""
        self.flush()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if wait:
            self.wait()

    def finished(self) -> bool:
        """Whether the writer has ended (its failure, if it failed, logged)."""
        if self.process.poll() is None:
            return False
        self._check(self.process.returncode)
        return True

    def wait(self) -> None:
        """Until the writer has finished the file (closed first); one that takes longer than
        CLOSE_TIMEOUT_S is killed, its file then read back up to its last chunk."""
        try:
            status = self.process.wait(CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log.error(
                "recording: %s was not finished within %g s; it reads back up to its last chunk",
                self.path,
                CLOSE_TIMEOUT_S,
            )
            self.process.kill()
            self.process.wait(5.0)
            return
        self._check(status)

    def _check(self, status: int) -> None:
        if status != 0 and self.failed is None and not self._reported:
            self._reported = True
            log.error("recording: the writer of %s ended with status %s (its error is in this log)", self.path, status)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        deadline: float | None = None  # SEND_TIMEOUT_S from the first write that made no progress
        while view:
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                written = 0
            if written:
                view, deadline = view[written:], None
                continue
            now = time.monotonic()
            if deadline is None:
                deadline = now + SEND_TIMEOUT_S
            elif now >= deadline:
                raise TimeoutError
            self._poll.poll((deadline - now) * 1000)

    def _give_up(self, why: str) -> None:
        self.failed = why
        log.error("recording to %s stopped: %s", self.path, why)
        os.close(self._fd)  # the writer finishes what it has
        self._fd = -1
