"""A lifeline between a supervisor and the process groups it starts: a small watchdog process
reads the group ids the supervisor sends down a pipe; when the pipe closes without a goodbye (the
supervisor died, whatever killed it, SIGKILL included) it kills every group it was told about, so
nothing the supervisor started outlives it — grandchildren included, since each child leads its
own group.

    lifeline = Lifeline.start()
    lifeline.watch(child_pid)        # a child started with start_new_session=True
    ...
    lifeline.keep_alive()            # now and then: a watchdog killed on its own is replaced
    lifeline.release()               # a clean shutdown: the children were stopped already

A write to a watchdog that died is no error (BrokenPipeError, never SIGPIPE: the supervisor goes on
and writes its summary); a new watchdog takes over every group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

GOODBYE = b"release\n"


class Lifeline:
    """The supervisor's end: the write end of the pipe and the watchdog process. A watchdog that died
    (killed on its own, SIGKILL included) is replaced by a new one told every group again, the moment
    the supervisor writes to the pipe or looks (:meth:`keep_alive`)."""

    def __init__(self, write_fd: int, watchdog: subprocess.Popen) -> None:
        self._fd = write_fd
        self.watchdog = watchdog
        self.groups: list[int] = []

    @classmethod
    def start(cls) -> Lifeline:
        return cls(*_start_watchdog())

    def watch(self, pgid: int) -> bool:
        """Kill this process group if the supervisor dies; whether it is new to the watchdog."""
        if pgid in self.groups:
            return False
        self.groups.append(pgid)
        self._send(f"{pgid}\n".encode())
        return True

    def keep_alive(self) -> int | None:
        """Replace a watchdog that died; its exit status when it did (None: it lives)."""
        status = self.watchdog.poll()
        if status is not None and self._fd >= 0:
            self._replace()
        return status

    def _send(self, data: bytes) -> None:
        try:
            os.write(self._fd, data)
        except BrokenPipeError:  # the watchdog died: a new one is told every group, this one included
            self._replace()

    def _replace(self) -> None:
        os.close(self._fd)
        _reap(self.watchdog)
        self._fd, self.watchdog = _start_watchdog()
        os.write(self._fd, "".join(f"{pgid}\n" for pgid in self.groups).encode())

    def release(self) -> None:
        """The supervisor stopped its children itself: the watchdog exits without killing."""
        if self._fd < 0:
            return
        try:
            os.write(self._fd, GOODBYE)
        except BrokenPipeError:
            pass  # the watchdog is gone: there is nobody to release
        finally:
            os.close(self._fd)
            self._fd = -1
        _reap(self.watchdog)


def _reap(watchdog: subprocess.Popen) -> None:
    """Wait for a watchdog whose pipe is closed (it exits at once), killing it if it does not."""
    try:
        watchdog.wait(5.0)
    except subprocess.TimeoutExpired:
        watchdog.kill()
        watchdog.wait(5.0)


def _start_watchdog() -> tuple[int, subprocess.Popen]:
    """A new watchdog process and the write end of its pipe."""
    read_fd, write_fd = os.pipe()  # not inherited by other children (close_fds, non-inheritable)
    watchdog = subprocess.Popen(
        [sys.executable, "-m", "hrpsim.lifeline", str(read_fd)],
        pass_fds=(read_fd,),
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.close(read_fd)
    return write_fd, watchdog


def watch(read_fd: int) -> None:
    """The watchdog: collect group ids until the pipe closes; kill them unless released."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the pipe ends its watch
    groups: list[int] = []
    released = False
    with os.fdopen(read_fd, "rb") as pipe:
        for line in pipe:
            if line == GOODBYE:
                released = True
                break
            groups.append(int(line))
    if released:
        return
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


if __name__ == "__main__":
    watch(int(sys.argv[1]))
