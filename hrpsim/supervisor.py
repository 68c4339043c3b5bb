"""Supervising child processes: each in its own session, its output in its own log and (prefixed)
on the terminal, and one way to stop them all — in reverse order of start: a polite request,
then SIGTERM, then SIGKILL — so that no process is ever left behind.

A child also dies with the supervisor whatever kills it (SIGKILL included): a watchdog at the
other end of a lifeline pipe (hrpsim/lifeline.py) kills every child's process group when the pipe
closes without a goodbye, so a launcher that is killed leaves no orphan holding the nameserver's
port. Each child has a restart policy (``on-failure`` with a bounded number of restarts and a
growing delay, or ``never``), as circus and systemd give their watched processes;
:meth:`Supervisor.due_restarts` applies it.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from hrpsim.lifeline import Lifeline
from hrpsim.process_tree import adopted, become_subreaper, descendants, end_descendants

log = logging.getLogger("hrpsim.launch")

BACKOFF_FIRST_S, BACKOFF_MAX_S = 0.5, 8.0  # the delay before restart n is first * 2**(n-1), capped
LOOK_INTERVAL_S = 1.0  # how often a supervisor that holds its tree looks at the processes below it


@dataclass
class RestartPolicy:
    """``on-failure``: a child that exits with a non-zero status or is killed by a signal starts
    again after a delay that doubles each time, at most ``max_restarts`` times; ``never``: not."""

    restart: str = "never"
    max_restarts: int = 3

    def wants_restart(self, returncode: int | None, restarts: int) -> bool:
        return self.restart == "on-failure" and returncode not in (None, 0) and restarts < self.max_restarts

    @staticmethod
    def delay(restart_number: int) -> float:
        return min(BACKOFF_FIRST_S * 2 ** (restart_number - 1), BACKOFF_MAX_S)


@dataclass
class Child:
    """A process the supervisor started. ``request_stop`` asks it to stop by its own protocol
    (a ``quit`` request for a service, SIGINT for a controller)."""

    name: str
    argv: list[str]
    log_path: Path
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    request_stop: Callable[[], None] | None = None
    popen: subprocess.Popen | None = None
    expected_exit: bool = False
    policy: RestartPolicy = field(default_factory=RestartPolicy)
    restarts: int = 0
    restart_at: float | None = None  # monotonic s: when the next start is due, while one is
    lost: bool = False  # died for good: not restarted (policy never, or out of restarts)
    ready_to_restart: Callable[[], bool] | None = None  # e.g. its old registration has expired
    _pump: threading.Thread | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid if self.popen else -1

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self.popen is None else self.popen.poll()

    def tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


class Supervisor:
    """Starts children and stops them all, whatever happens. ``holds_tree``: this process exists to
    supervise (the launcher), so every process below it is the supervisor's: it becomes their subreaper
    (hrpsim.process_tree), tells the lifeline each of their groups as it finds them (a child's child
    that left its child's group with setsid included) and ends them all at the end."""

    def __init__(
        self,
        *,
        echo: IO[str] | None = sys.stdout,
        grace: float = 3.0,
        term_grace: float = 3.0,
        holds_tree: bool = False,
    ) -> None:
        self.children: list[Child] = []
        self._echo = echo
        self._echo_lock = threading.Lock()
        self._grace = grace
        self._term_grace = term_grace
        self._width = 12
        self._lifeline: Lifeline | None = None
        self.holds_tree = holds_tree and become_subreaper()
        self._next_look = 0.0  # monotonic time of the next look at the tree

    def start(self, child: Child) -> Child:
        env = {**os.environ, **child.env, "PYTHONUNBUFFERED": "1"}
        child.log_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            child.popen = subprocess.Popen(
                child.argv,
                cwd=child.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise OSError(f"cannot start {child.name} ({' '.join(child.argv)}): {exc.strerror}") from None
        if self._lifeline is None:
            self._lifeline = Lifeline.start()
        self._lifeline.watch(child.pid)  # its own session: the group id is its pid
        if child not in self.children:
            self.children.append(child)
        self._width = max(self._width, len(child.name))
        child._pump = threading.Thread(target=self._pump_output, args=(child,), daemon=True, name=f"log-{child.name}")
        child._pump.start()
        log.info("started %s (pid %d): %s", child.name, child.pid, " ".join(child.argv))
        return child

    def _pump_output(self, child: Child) -> None:
        assert child.popen is not None and child.popen.stdout is not None
        with open(child.log_path, "ab") as out:
            for raw in iter(child.popen.stdout.readline, b""):
                out.write(raw)
                out.flush()
                if self._echo is not None:
                    line = raw.decode(errors="replace").rstrip("\n")
                    with self._echo_lock:
                        print(f"{child.name:>{self._width}} | {line}", file=self._echo, flush=True)

    def look_after_tree(self) -> None:
        """Replace a lifeline watchdog that died (saying so); with ``holds_tree``, at most once every
        LOOK_INTERVAL_S, tell the lifeline the group of every process below this one and reap the
        orphans it adopted that ended."""
        if self._lifeline is not None and (status := self._lifeline.keep_alive()) is not None:
            self.echo(f"launch: the lifeline's watchdog died (exit status {status}); another took its place")
        if not self.holds_tree or self._lifeline is None or time.monotonic() < self._next_look:
            return
        self._next_look = time.monotonic() + LOOK_INTERVAL_S
        watchdog, own_group = self._lifeline.watchdog.pid, os.getpgrp()
        for process in descendants():
            try:
                pgid = os.getpgid(process.pid)
            except ProcessLookupError:
                continue
            # never this process's own group (its shell pipeline's, say), which the watchdog would kill
            if process.pid != watchdog and pgid != own_group and self._lifeline.watch(pgid):
                log.info("the lifeline watches group %d, of pid %d below the children", pgid, process.pid)
        adopted(managed={c.pid for c in self.children} | {watchdog})

    def echo(self, text: str) -> None:
        if self._echo is not None:
            with self._echo_lock:
                print(text, file=self._echo, flush=True)

    def child(self, name: str) -> Child | None:
        return next((c for c in self.children if c.name == name), None)

    def died(self) -> list[Child]:
        """Children that exited on their own while they were expected to run, not yet dealt with
        (a restart scheduled or given up)."""
        return [
            c
            for c in self.children
            if c.returncode is not None and not c.expected_exit and c.restart_at is None and not c.lost
        ]

    def schedule_restart(self, child: Child) -> bool:
        """Apply the child's policy to its exit: schedule its restart (True) or mark it lost."""
        if child.policy.wants_restart(child.returncode, child.restarts):
            child.restarts += 1
            child.restart_at = time.monotonic() + child.policy.delay(child.restarts)
            return True
        child.lost = True
        return False

    def due_restarts(self) -> list[Child]:
        """Children whose restart delay is over: started again here, the caller re-wires them."""
        due = [
            c
            for c in self.children
            if c.restart_at is not None
            and time.monotonic() >= c.restart_at
            and (c.ready_to_restart is None or c.ready_to_restart())
        ]
        for child in due:
            child.restart_at = None
            if child._pump is not None:
                child._pump.join(timeout=2.0)
            self.start(child)
        return due

    def stop_all(self) -> dict[str, int | None]:
        """Stop every child, newest first; returns each child's exit status."""
        for child in reversed(self.children):
            self._stop(child)
        for child in self.children:
            self._reap_group(child)
        if self._lifeline is not None:
            self._lifeline.release()
            self._lifeline = None
        if self.holds_tree:
            leftover = end_descendants()  # orphans adopted from the children: setsid daemons, say
            if leftover:
                log.info("ended %d processes left below the children", leftover)
        return {c.name: c.returncode for c in self.children}

    def _stop(self, child: Child) -> None:
        child.expected_exit = True
        child.restart_at = None
        if not child.running:
            return
        if child.request_stop is not None:
            try:
                child.request_stop()
            except Exception as exc:  # the peer may already be half gone; escalate below
                log.info("stop request to %s failed: %s", child.name, exc)
            if self._wait(child, self._grace):
                return
        log.info("sending SIGTERM to %s (pid %d)", child.name, child.pid)
        self.signal_group(child, signal.SIGTERM)
        self.signal_group(child, signal.SIGCONT)  # a stopped process acts on SIGTERM only once continued
        if self._wait(child, self._term_grace):
            return
        log.warning("%s (pid %d) ignored SIGTERM: sending SIGKILL", child.name, child.pid)
        self.signal_group(child, signal.SIGKILL)
        self._wait(child, 5.0)

    @staticmethod
    def _wait(child: Child, timeout: float) -> bool:
        assert child.popen is not None
        try:
            child.popen.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    @staticmethod
    def signal_group(child: Child, sig: int) -> None:
        try:
            os.killpg(child.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _reap_group(self, child: Child) -> None:
        """Grandchildren left in the child's session are killed too: nothing outlives the launch."""
        self.signal_group(child, signal.SIGKILL)
        if child._pump is not None:
            child._pump.join(timeout=2.0)


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
