"""The shared memory fast path leaves nothing behind: a controller killed while it holds a tick's
state is noticed by its dropped channel, its policy applies, and its segment is gone from both
processes (it never had a name under /dev/shm); one detached for a missed deadline comes back on a
fresh segment, the old one closed. Real hub, real controller process, real segments."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from controller_helpers import HubUnderTest, attach, kinematic_project, sr1_body, start_controller, write_controller

STALLS = """
    import time
    from pathlib import Path
    from hrpsim.controllers import Command, Controller

    class Stalls(Controller):
        # Answers until tick 5, then says so in a file and computes for ever.

        def control(self, state):
            if state.tick >= 5:
                Path(__file__).with_suffix(".stalled").write_text(str(state.tick))
                time.sleep(600)
            cmd = Command(self.joints)
            cmd.q_ref = 0.5 * state.q
            return cmd
"""


def _segments_of(pid: int | str) -> set[int]:
    """The hrpsim memfd segments a process holds open or mapped, by inode (a segment may be open on
    more than one descriptor: Python's mmap keeps a duplicate)."""
    held = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if "memfd:hrpsim-" in os.readlink(fd):
                held.add(fd.stat().st_ino)
        except OSError:  # closed while listed
            continue
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 6 and "memfd:hrpsim-" in fields[5]:
            held.add(int(fields[4]))
    return held


def _wait_for(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} did not appear within {timeout} s"
        time.sleep(0.02)


def test_a_controller_killed_mid_tick_leaves_no_shared_memory(nameserver, tmp_path):
    shm_before = set(os.listdir("/dev/shm"))
    project = kinematic_project(tmp_path, [{"name": "stalls", "policy": "hold", "deadline": 60.0}])
    spec = write_controller(tmp_path, "stalls", STALLS)
    with HubUnderTest(nameserver, project, sr1_body(), transport="unix") as sim:
        proc = start_controller(tmp_path, spec, nameserver=nameserver, name="stalls")
        try:
            attach(sim, ["stalls"], [proc])
            sim.run(5)
            record = sim.record()
            sim.hub.poll()
            sim.hub.before_collide(record)  # the state of tick 5: the controller stalls on it
            _wait_for(spec.with_suffix(".stalled"))
            assert "via shared memory" in proc.log_text()
            assert _segments_of(proc.popen.pid), "the controller does not map its segment"
            assert _segments_of("self"), "the hub holds no segment for it"
            assert sim.hub.waiting_for() == ["stalls"]
            proc.popen.send_signal(signal.SIGKILL)
            proc.popen.wait(10)
            sim.engine.collide()
            sim.hub.after_collide(record)  # returns once the dropped channel is seen, not after 60 s
            report = sim.hub.summary()["stalls"]
        finally:
            proc.stop()
        assert sim.hub.attached == []
        assert _segments_of("self") == set()
    assert report["policy_applied"] == "hold"
    assert any("connection dropped" in event for event in report["events"]), report["events"]
    assert not any("deadline" in event for event in report["events"]), report["events"]
    assert set(os.listdir("/dev/shm")) - shm_before == set()


LATE_ONCE = """
    import time
    from hrpsim.controllers import Command, Controller

    class LateOnce(Controller):
        # Misses its deadline once, at tick 5, then answers every tick.

        def control(self, state):
            if state.tick == 5 and not getattr(self, "was_late", False):
                self.was_late = True
                time.sleep(2.0)
            cmd = Command(self.joints)
            cmd.q_ref = 0.5 * state.q
            return cmd
"""


def test_a_controller_past_its_deadline_comes_back_on_a_fresh_segment(nameserver, tmp_path):
    project = kinematic_project(tmp_path, [{"name": "late", "policy": "hold", "deadline": 0.5}])
    spec = write_controller(tmp_path, "late", LATE_ONCE)
    with HubUnderTest(nameserver, project, sr1_body(), transport="unix") as sim:
        proc = start_controller(tmp_path, spec, nameserver=nameserver, name="late")
        try:
            attach(sim, ["late"], [proc])
            sim.run(6)  # tick 5 waits out the deadline: detached, its segment closed
            assert sim.hub.attached == []
            attach(sim, ["late"], [proc])  # it said hello again on the same channel
            sim.run(20)
            report = sim.hub.summary()["late"]
            held = _segments_of("self")
            mapped = _segments_of(proc.popen.pid)
            peer = type(sim.hub.attachments.by_name["late"].peer).__name__
        finally:
            proc.stop()
    assert report["ticks"] == 25 and report["attached"], report  # every tick but the late one
    assert any("deadline" in event for event in report["events"]), report["events"]
    assert len(held) == 1, held  # the new segment; the old one was closed
    assert mapped == held, mapped  # the controller unmapped the old one too
    assert peer == "SharedMemoryPeer"  # its second hello asked for shared memory again and got it
