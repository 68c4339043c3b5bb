"""The fault suite: each row of the table in docs/faults.md, injected into a real `hrpsim launch`
at a random (seeded) moment of its run, gives the outcome the row documents."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from process_helpers import REPO

FAULTS_DOC = REPO / "docs" / "faults.md"
SEED = 14
STALL_S = 1.5  # how long a SIGSTOPped process stays stopped: under the controller's deadline (3 s)
STARTUP_TIMEOUT_S = 90.0

PACED_CONTROLLER = '''
import sys
import time

from hrpsim.controllers import Controller, run_main


class Paced(Controller):
    """Sends no command (the robot's high-gain drives hold it) and takes 2 ms to think: a run of a
    few seconds, whose length the lockstep simulator owes to this controller."""

    def control(self, state):
        time.sleep(0.002)


if __name__ == "__main__":
    sys.exit(run_main(Paced))
'''


@dataclass(frozen=True)
class Row:
    fault: str
    component: str
    policy: str
    exit: str
    error: str
    lost: str
    restarted: str

    @property
    def target(self) -> str:
        return self.component.split(",")[0]

    @property
    def restart(self) -> str:
        return "on-failure" if "restart on-failure" in self.component else "never"

    def __str__(self) -> str:
        return f"{self.fault} {self.component} ({self.policy})"


def table_rows() -> list[Row]:
    """The rows of the table under '## The table' in docs/faults.md."""
    text = FAULTS_DOC.read_text()
    lines = text[text.index("## The table") :].splitlines()
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines if line.startswith("|")]
    header, body = cells[0], cells[2:]
    assert header[:7] == ["fault", "component", "policy", "exit", "error mentions", "lost", "restarted"]
    return [Row(*c[:7]) for c in body]


ROWS = table_rows()


def write_project(folder: Path, models_dir: Path, row: Row) -> Path:
    controller = folder / "paced.py"
    controller.write_text(PACED_CONTROLLER)
    model = models_dir / "openhrp3" / "model"
    path = folder / "faults.yaml"
    collision = ", collision: service" if row.target == "collision" else ""  # the service is started for it
    path.write_text(
        f"world: {{timestep: 0.002, end_time: 2.0, sync: lockstep{collision}}}\n"
        "models:\n"
        f"  - {{name: floor, file: {model / 'floor.wrl'}, static: true, position: [0, 0, -0.1]}}\n"
        f"  - {{name: robot, file: {model / 'sample1.wrl'}, position: [0, 0, 0.7235], drive: high_gain}}\n"
        "collisions:\n  - {a: floor, b: robot, friction: 0.5}\n"
        "controllers:\n"
        f"  - {{name: ctl, robot: robot, command: 'python {controller}', period: 0.004, policy: {row.policy},"
        f" deadline: 3.0{', restart: on-failure' if row.restart == 'on-failure' else ''}}}\n"
    )
    return path


class Launched:
    """One `hrpsim launch` of the fault project, its output in a file."""

    def __init__(self, folder: Path, project: Path) -> None:
        self.folder = folder
        self.summary_path = folder / "summary.json"
        self.run_dir = folder / "run"
        self.out = open(folder / "launch.out", "w")  # noqa: SIM115 - closed in finish()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hrpsim",
                "launch",
                str(project),
                "--nameserver",
                "tcp://127.0.0.1:*",
                "--run-dir",
                str(self.run_dir),
                "--summary",
                str(self.summary_path),
            ],
            cwd=REPO,
            stdout=self.out,
            stderr=subprocess.STDOUT,
        )
        self.seen: set[int] = set()  # every process the launcher started

    def output(self) -> str:
        return (self.folder / "launch.out").read_text(errors="replace")

    def children(self) -> list[psutil.Process]:
        try:
            found = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        self.seen.update(p.pid for p in found)
        return found

    def component(self, name: str) -> psutil.Process:
        marker = "paced.py" if name == "controller" else f"run {name}"
        for child in self.children():
            try:
                if marker in " ".join(child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        raise AssertionError(f"no {name} among the launcher's children:\n{self.output()}")

    def wait_running(self) -> None:
        """Until the controller has attached: the run is under way."""
        log = self.run_dir / "simserver.log"
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not (log.exists() and "controller ctl attached" in log.read_text(errors="replace")):
            assert self.proc.poll() is None, f"the launcher exited early:\n{self.output()}"
            assert time.monotonic() < deadline, f"the run did not start:\n{self.output()}"
            self.children()
            time.sleep(0.05)
        self.children()

    def finish(self, timeout: float = 120.0) -> int:
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.out.close()
        return code

    def summary(self) -> dict:
        return json.loads(self.summary_path.read_text())

    def left_running(self, timeout: float = 15.0) -> list[psutil.Process]:
        procs = []
        for pid in self.seen:
            try:
                procs.append(psutil.Process(pid))
            except psutil.NoSuchProcess:
                continue
        _, alive = psutil.wait_procs(procs, timeout=timeout)
        return [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]


def wait_for_startup_moment(launched: Launched, row: Row) -> None:
    """Before the first tick: the simulator has started (it loads its models), for a fault in the
    nameserver or modelloader; the controller has started (it attaches), for one in the simulator."""
    waited_for = "controller" if row.target == "simserver" else "simserver"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        assert launched.proc.poll() is None, f"the launcher exited early:\n{launched.output()}"
        assert time.monotonic() < deadline, f"no {waited_for} started:\n{launched.output()}"
        try:
            launched.component(waited_for)
            launched.component(row.target)
            return
        except AssertionError:
            time.sleep(0.01)


def inject(launched: Launched, row: Row) -> None:
    if row.target == "launcher":
        sig = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGHUP": signal.SIGHUP}.get(row.fault)
        launched.proc.send_signal(sig or signal.SIGKILL)
        return
    victim = launched.component(row.target)
    if row.fault.startswith("kill -9"):
        victim.send_signal(signal.SIGKILL)
        return
    victim.send_signal(signal.SIGSTOP)
    time.sleep(STALL_S)
    victim.send_signal(signal.SIGCONT)


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_fault_outcome(row: Row, tmp_path: Path, models_dir: Path) -> None:
    rng = random.Random(f"{SEED}-{row}")
    launched = Launched(tmp_path, write_project(tmp_path, models_dir, row))
    try:
        if "during startup" in row.fault:
            wait_for_startup_moment(launched, row)
        else:
            launched.wait_running()
            time.sleep(rng.uniform(0.1, 0.8))
        inject(launched, row)
        code = launched.finish()
    finally:
        if launched.proc.poll() is None:
            launched.proc.kill()
    where = f"{row}: launch output:\n{launched.output()[-4000:]}"
    assert launched.left_running() == [], where
    if row.exit == "-":  # the launcher was killed: nothing was written, nothing survived it
        assert code == -signal.SIGKILL, where
        return
    assert code == int(row.exit), where
    summary = launched.summary()
    if row.error == "-":
        assert summary["error"] is None, where
    else:
        assert row.error in summary["error"], where
        if "during startup" not in row.fault:  # a run that never started got nowhere
            assert summary["sim_time"] is not None, "the summary says how far the run got: " + where
    components = summary["launch"]["components"]
    lost = sorted(name for name, c in components.items() if c["lost"])
    restarted = sorted(name for name, c in components.items() if c["restarts"])
    assert lost == ([] if row.lost == "-" else [row.lost]), where
    assert restarted == ([] if row.restarted == "-" else [row.restarted]), where
    printed = launched.output()
    assert ("finished without error" in printed) == (row.error == "-" and row.lost == "-"), where


def test_the_table_covers_every_component_and_policy() -> None:
    killed = {r.target for r in ROWS if r.fault == "kill -9"}
    stalled = {r.target for r in ROWS if r.fault.startswith("SIGSTOP")}
    assert {"nameserver", "modelloader", "collision", "simserver", "controller", "launcher"} <= killed
    assert {"nameserver", "modelloader", "simserver", "controller"} <= stalled
    for fault in ("kill -9", "SIGSTOP", "SIGINT"):
        policies = {r.policy for r in ROWS if r.fault.startswith(fault) and r.target in ("controller", "launcher")}
        assert policies == {"stop", "hold", "zero"}, fault


def test_ctrl_c_at_random_times_always_leaves_a_summary_and_no_process(tmp_path: Path, models_dir: Path) -> None:
    rng = random.Random(SEED)
    row = next(r for r in ROWS if r.fault == "SIGINT")
    for attempt in range(2):
        folder = tmp_path / f"attempt-{attempt}"
        folder.mkdir()
        launched = Launched(folder, write_project(folder, models_dir, row))
        started = folder / "run" / "nameserver.endpoint"  # the launcher has started its first process
        while not started.exists() and launched.proc.poll() is None:
            time.sleep(0.02)
        delay = rng.uniform(0.0, 6.0)  # during startup or during the run
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and launched.proc.poll() is None:
            launched.children()
            time.sleep(0.05)
        launched.proc.send_signal(signal.SIGINT)
        code = launched.finish()
        where = f"Ctrl-C after {delay:.2f} s: {launched.output()[-3000:]}"
        assert launched.left_running() == [], where
        if code == 0:  # the run was over before the signal came
            continue
        assert code == 130, where
        assert "SIGINT" in launched.summary()["error"], where
