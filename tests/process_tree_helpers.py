"""A daemon for the tests of process trees: started from a controller or a metric, it leaves their process
group and session (``start_new_session``, i.e. setsid) through a middle process that exits at once,
as a daemon detaches itself, writes its pid and sleeps an hour."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil

DAEMON = """\
import os
import subprocess
import sys
import time
from pathlib import Path

pid_file = Path(sys.argv[2])
if sys.argv[1] == "start":  # the middle process: the daemon in a session of its own, then gone
    subprocess.Popen(
        [sys.executable, __file__, "run", str(pid_file)],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
else:
    pid_file.with_suffix(".tmp").write_text(str(os.getpid()))
    pid_file.with_suffix(".tmp").rename(pid_file)
    time.sleep(3600)
"""


def write_daemon(folder: Path) -> Path:
    path = folder / "daemon.py"
    path.write_text(DAEMON)
    return path


def start_daemon_code(daemon: Path, pid_file: Path) -> str:
    """Python lines that start the daemon and wait until it has written its pid."""
    return (
        "import subprocess, sys, time\n"
        "from pathlib import Path\n"
        f"subprocess.run([sys.executable, {str(daemon)!r}, 'start', {str(pid_file)!r}], check=True)\n"
        f"while not Path({str(pid_file)!r}).exists():\n"
        "    time.sleep(0.01)\n"
    )


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to reap it does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_ended(pids: list[int], timeout: float = 60.0) -> list[int]:
    """Those of ``pids`` still running after ``timeout`` s (killed then, so no test leaves them behind)."""
    deadline = time.monotonic() + timeout
    while any(map(running, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if running(pid)]
    for pid in left:
        print("still running:", _describe(pid))  # shown with a failing test's output
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def _describe(pid: int) -> str:
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            return f"pid {pid} ppid {process.ppid()} {process.status()} {' '.join(process.cmdline())[:200]}"
    except psutil.Error as exc:
        return f"pid {pid} ({exc})"
