"""A lifeline between a supervisor and the process groups it starts: a small watchdog process
reads the group ids the supervisor sends down a pipe; when the pipe closes without a goodbye (the
supervisor died, whatever killed it, SIGKILL included) it kills every group it was told about, so
nothing the supervisor started outlives it — grandchildren included, since each child leads its
own group.

    lifeline = Lifeline.start()
    lifeline.watch(child_pid)        # a child started with start_new_session=True
    ...
    lifeline.release()               # a clean shutdown: the children were stopped already
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

GOODBYE = b"release\n"


class Lifeline:
    """The supervisor's end: the write end of the pipe and the watchdog process."""

    def __init__(self, write_fd: int, watchdog: subprocess.Popen) -> None:
        self._fd = write_fd
        self.watchdog = watchdog

    @classmethod
    def start(cls) -> Lifeline:
        read_fd, write_fd = os.pipe()  # not inherited by other children (close_fds, non-inheritable)
        watchdog = subprocess.Popen(
            [sys.executable, "-m", "hrpsim.lifeline", str(read_fd)],
            pass_fds=(read_fd,),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        os.close(read_fd)
        return cls(write_fd, watchdog)

    def watch(self, pgid: int) -> None:
        """Kill this process group if the supervisor dies."""
        os.write(self._fd, f"{pgid}\n".encode())

    def release(self) -> None:
        """The supervisor stopped its children itself: the watchdog exits without killing."""
        if self._fd < 0:
            return
        try:
            os.write(self._fd, GOODBYE)
        finally:
            os.close(self._fd)
            self._fd = -1
        try:
            self.watchdog.wait(5.0)
        except subprocess.TimeoutExpired:
            self.watchdog.kill()


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
