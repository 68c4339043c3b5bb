"""A run with ``world: {collision: service}`` outlives its collision service (docs/faults.md): the
simulator waits for a service to register again, registers the world with it and asks for the
tick's contacts again, so the run ends exactly as an undisturbed one; meanwhile it answers its
requests; a service that does not come back stops the run with an error naming it."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from controller_helpers import Stack, write_project
from launched_walks import walk_project
from process_helpers import HRPSIM, REPO, spawn, start_nameserver, wait_registered, wait_unregistered

from hrpsim.client import Client
from hrpsim.errors import HrpsimError, RequestError
from hrpsim.naming import NameClient

KILL_AT_TICK = 300  # well into the run, well before the walk's end (1500 ticks)
SERVICE = "collision service 'collision'"
# s of standing: some 990 ticks, each a round trip to the service, between tick 10, when the test
# kills the service, and the end, which the run must not reach before the test sees it waiting
STANDING_END_TIME = 2.0
SHORT_TTL = 1.0  # s: a dead service's entry expires this soon (the suite's nameservers keep them 3 s)
WAIT_NOT_MET = 1  # s a tick waits for a service that never comes back

STANDING = """
world: {{timestep: 0.002, end_time: {end_time}, sync: lockstep, collision: service{extra}}}
{services}
models:
  - {{name: floor, file: {{models}}/floor.wrl, static: true, position: [0, 0, -0.1]}}
  - {{name: robot, file: {{models}}/sample1.wrl, position: [0, 0, 0.7235], drive: high_gain}}
collisions:
  - {{a: floor, b: robot}}
"""


class LaunchedRun:
    """``hrpsim launch`` of a project in ``folder``, its summary written there."""

    def __init__(self, folder: Path, project: Path) -> None:
        folder.mkdir(exist_ok=True)
        self.folder, self.run_dir = folder, folder / "run"
        self.summary_path = folder / "summary.json"
        argv = [*HRPSIM, "launch", str(project), "--quiet", "--nameserver", "tcp://127.0.0.1:*"]
        argv += ["--run-dir", str(self.run_dir), "--summary", str(self.summary_path)]
        self.proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def wait_for_tick(self, tick: int, timeout: float = 120.0) -> None:
        """Until the simulator's run has reached ``tick`` (and is not over)."""
        deadline = time.monotonic() + timeout
        endpoint_file = self.run_dir / "nameserver.endpoint"
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.communicate()[0]
            if endpoint_file.exists() and endpoint_file.read_text().strip():
                status = self._status(endpoint_file.read_text().strip())
                if status is not None and status["tick"] >= tick:
                    assert not status["finished"], f"the run was over before tick {tick}: {status}"
                    return
            time.sleep(0.02)
        raise AssertionError(f"the run did not reach tick {tick} within {timeout} s")

    @staticmethod
    def _status(nameserver: str) -> dict | None:
        try:
            with NameClient(nameserver, timeout=1.0) as ns:
                endpoint = ns.endpoint_of("simserver")
            with Client(endpoint, peer="simserver", timeout=2.0) as sim:
                return sim.call("status")
        except HrpsimError:  # not registered yet, or still starting
            return None

    def kill_collision_service(self) -> int:
        service = next(p for p in psutil.Process(self.proc.pid).children() if "run collision" in " ".join(p.cmdline()))
        service.send_signal(signal.SIGKILL)
        return service.pid

    def finish(self, timeout: float = 240.0) -> tuple[int, str, dict]:
        try:
            output, _ = self.proc.communicate(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return self.proc.returncode, output, json.loads(self.summary_path.read_text())

    def sim_log(self) -> str:
        return (self.run_dir / "simserver.log").read_text(errors="replace")


def outcome(summary: dict) -> dict:
    """What a run's physics decided: everything in the summary but wall-clock figures."""
    controllers = {
        name: {k: v for k, v in stats.items() if not k.startswith("rtt")}
        for name, stats in summary["controllers"].items()
    }
    return {k: summary[k] for k in ("sim_time", "ticks", "robots", "error")} | {"controllers": controllers}


def test_a_run_whose_collision_service_is_killed_and_restarted_ends_as_an_undisturbed_one(tmp_path, service_walk):
    calm, _ = service_walk  # the same project, launched and left alone
    disturbed = LaunchedRun(tmp_path / "disturbed", walk_project(tmp_path, "service"))
    try:
        disturbed.wait_for_tick(KILL_AT_TICK)
        disturbed.kill_collision_service()
    finally:
        code, output, summary = disturbed.finish()
    log = disturbed.sim_log()
    assert code == 0, output + log
    assert summary["launch"]["components"]["collision"]["restarts"] == 1, output
    assert "lost the collision service" in log and "the collision service is back" in log, log
    assert calm["robots"]["robot"]["root_end"] != calm["robots"]["robot"]["root_start"], "the robot walked"
    assert outcome(summary) == outcome(calm), "bit for bit the same run"


@pytest.fixture
def short_ttl_nameserver(tmp_path):
    """A nameserver whose entries expire soon (the test below waits for a dead service's to go)."""
    proc = start_nameserver(tmp_path, ttl=SHORT_TTL)
    try:
        yield proc.address
    finally:
        proc.stop()


def test_the_simulator_answers_while_a_tick_waits_for_the_collision_service(short_ttl_nameserver, tmp_path):
    nameserver = short_ttl_nameserver
    project = write_project(tmp_path, STANDING.format(end_time=STANDING_END_TIME, extra="", services=""))
    services = [spawn(["run", "collision", "--nameserver", nameserver], tmp_path / "collision-1.log")]
    try:
        wait_registered(nameserver, "collision", services[0])
        with Stack(tmp_path, nameserver, project) as stack:
            stack.sim.call("start")
            while stack.sim.call("status")["tick"] < 10:
                time.sleep(0.01)
            services[0].kill()
            waiting: list[str] = []
            while SERVICE not in waiting:  # a tick already under way may still have had its contacts
                status = stack.sim.call("status", timeout=5.0)
                assert status["error"] is None and not status["finished"], status
                waiting = status["waiting_for"]
            tick = status["tick"]
            assert stack.sim.call("summary", timeout=5.0)["ticks"] == tick
            with pytest.raises(RequestError, match="waiting for the collision service 'collision'"):
                stack.sim.call("set_link_data", robot="robot", root_position=[0, 0, 2.0], timeout=5.0)
            assert stack.sim.call("status", timeout=5.0)["tick"] == tick, "the tick waits for its contacts"
            wait_unregistered(nameserver, "collision")  # a service registers only once the dead one's entry has expired
            services.append(spawn(["run", "collision", "--nameserver", nameserver], tmp_path / "collision-2.log"))
            summary = stack.wait_finished()
            log = stack.sim_proc.log_text()
    finally:  # after the simulator, which takes its world's bodies away from the service as it stops
        for service in services:
            service.stop()
    assert summary["error"] is None and summary["sim_time"] == pytest.approx(STANDING_END_TIME), log
    assert "the collision service is back" in log


def test_a_run_whose_collision_service_does_not_come_back_stops_with_an_error_naming_it(tmp_path):
    project = write_project(
        tmp_path,
        STANDING.format(
            end_time=60.0, extra=f", collision_wait: {WAIT_NOT_MET}", services="services: {collision: {restart: never}}"
        ),
    )
    launched = LaunchedRun(tmp_path, project)
    try:
        launched.wait_for_tick(50)  # under way, the robot on its feet (tick 300 is for the walk)
        launched.kill_collision_service()
    finally:
        code, output, summary = launched.finish()
    nameserver = (launched.run_dir / "nameserver.endpoint").read_text().strip()
    error = summary["error"]
    assert code == 1, output
    assert SERVICE in error and nameserver in error and f"within {WAIT_NOT_MET} s" in error, error
    assert 0 < summary["sim_time"] < 60.0, output
    assert "internal error" not in error, "a lost service is a fault of the run, not a bug"
    assert summary["launch"]["components"]["collision"]["lost"], output
    assert "finished without error" not in output
