"""A process tree that ends with its root: whatever the processes under it do (a controller or a
metric that starts a daemon with ``setsid``, double forks included), none outlives it.

Linux's child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``) makes the root the parent of every
orphan below it instead of PID 1, so every process started under it stays its descendant, in
whatever session or group; at its end the root kills its descendants (again, until none is left,
so one that forks meanwhile is caught too) and reaps them. Process groups alone cannot do this: a
process that calls ``setsid`` leaves its group.

The pieces, for whatever holds a tree (the launcher, a sweep's run, a worker that runs many runs):

- :func:`become_subreaper` once, at the start;
- :func:`die_with_parent` where the tree must also end when the process that started it dies,
  SIGKILL included (the kernel sends the signal; it is tied to the *thread* that started the
  process, so that thread must outlive it);
- :func:`adopted` now and then, to reap orphans that ended (and learn of those that did not);
- :func:`end_descendants` at the end (of the tree, or of each run a worker holds).

``python -m hrpsim.process_tree COMMAND ...`` is a keeper: it runs COMMAND as the root of such a
tree, ends the tree when COMMAND ends, when it gets SIGTERM, SIGINT or SIGHUP, or when its own
parent dies, and exits with COMMAND's status (128 + the signal that ended it). A sweep runs each run
under one.

On other systems than Linux there is no subreaper: the tree is then what process groups give.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import time
from collections.abc import Collection

import psutil

log = logging.getLogger("hrpsim.process_tree")

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
END_TIMEOUT_S = 10.0  # descendants that keep appearing (a fork bomb) are given up on after this
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
PARENT_LOOK_S = 0.1  # how often a keeper looks whether its parent still runs, should its signal be missed


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0


def become_subreaper() -> bool:
    """Orphans below this process become its children (not PID 1's). False where the system has no
    subreaper (not Linux)."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(signum: int, parent: int) -> bool:
    """The kernel sends ``signum`` to this process when the thread of ``parent`` (its parent's pid,
    read at its start) that started it ends (on Linux). False when the parent is gone already: the
    caller ends now."""
    _prctl(PR_SET_PDEATHSIG, signum)
    return os.getppid() == parent


def adopted(managed: Collection[int] = ()) -> list[int]:
    """The children of this process it did not start itself (orphans it adopted as subreaper), those
    that ended reaped; the pids of those still running. ``managed``: the children this process started
    and waits for itself (a Popen's, whose status must stay for it to read)."""
    running = []
    for child in psutil.Process().children():
        if child.pid in managed:
            continue
        if _reaped(child.pid):
            continue
        running.append(child.pid)
    return running


def end_descendants(spare: Collection[int] = (), timeout: float = END_TIMEOUT_S) -> int:
    """SIGKILL every descendant of this process but ``spare`` (pids this process waits for itself), over
    and over until none is left, and reap those that are its children; how many there were."""
    me, ended, deadline = psutil.Process(), set(), time.monotonic() + timeout
    while True:
        below = _read_descendants(me, attempts=1)
        found = [p for p in below or () if p.pid not in spare]
        if below is not None and not found:
            return len(ended)
        for process in found:
            ended.add(process.pid)
            try:
                os.kill(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for process in found:
            _reaped(process.pid)
        if time.monotonic() > deadline:
            log.warning("%d processes below pid %d would not end within %g s", len(found), me.pid, timeout)
            return len(ended)
        time.sleep(0.005)


def descendants(me: psutil.Process | None = None) -> list[psutil.Process]:
    """Every process below ``me`` (this process), in whatever session or group."""
    return _read_descendants(me or psutil.Process(), attempts=3) or []


def _read_descendants(me: psutil.Process, attempts: int) -> list[psutil.Process] | None:
    """The processes below ``me``; None when the process table could not be read in ``attempts`` (a
    process ended while it was read each time), which is not the same as none."""
    for _ in range(attempts):
        try:
            return me.children(recursive=True)
        except psutil.Error:
            continue
    return None


def _reaped(pid: int) -> bool:
    """Whether ``pid``, a child of this process, has ended (and is reaped now); False for a process
    that is not its child."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == pid


class _Ended(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_ended(signum: int, _frame: object) -> None:
    for ending in ENDING_SIGNALS:  # a second signal must not cut short the ending of the tree
        signal.signal(ending, signal.SIG_IGN)
    raise _Ended(signum)


def keep(argv: list[str]) -> int:
    """Run ``argv`` as the root of a tree that ends with it (the keeper's main); its exit status."""
    parent = os.getppid()
    become_subreaper()
    for signum in ENDING_SIGNALS:
        signal.signal(signum, _raise_ended)
    try:
        if not die_with_parent(signal.SIGTERM, parent):
            raise _Ended(signal.SIGTERM)
        try:
            pid = os.posix_spawnp(argv[0], argv, os.environ)
        except OSError as exc:
            print(f"hrpsim.process_tree: cannot start {argv[0]}: {exc.strerror or exc}", file=sys.stderr)
            return 127
        while True:  # every child is reaped here: the command, and the orphans adopted meanwhile
            done, status = os.waitpid(-1, os.WNOHANG)
            if done == pid:
                code = os.waitstatus_to_exitcode(status)
                return code if code >= 0 else 128 - code
            if done == 0:
                if os.getppid() != parent:  # the parent died and its signal was not seen: end all the same
                    raise _Ended(signal.SIGTERM)
                time.sleep(PARENT_LOOK_S)
    except _Ended as ended:
        return 128 + ended.signum
    finally:
        for signum in ENDING_SIGNALS:  # ending the tree is not to be cut short
            signal.signal(signum, signal.SIG_IGN)
        end_descendants()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: python -m hrpsim.process_tree COMMAND [ARG ...]", file=sys.stderr)
        sys.exit(2)
    sys.exit(keep(sys.argv[1:]))
