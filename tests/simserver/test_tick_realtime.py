"""Realtime sync: the hub never waits; a late answer is counted and then used as the latest command."""

from __future__ import annotations

import numpy as np
import zmq
from controller_helpers import HubUnderTest, attach_by_hand, kinematic_project, sr1_body

from hrpsim import tick_protocol as proto


def test_a_late_answer_is_counted_and_applied_at_the_next_tick(shared_nameserver, tmp_path):
    body = sr1_body()
    project = kinematic_project(tmp_path, [{"name": "slow", "policy": "hold", "deadline": 5.0}], sync="realtime")
    with HubUnderTest(shared_nameserver, project, body) as sim:
        sock, _ = attach_by_hand(sim, "slow")
        n = len(body.joint_names)

        record = sim.record()
        sim.hub.poll()
        sim.hub.before_collide(record)
        sim.engine.collide()
        sim.hub.after_collide(record)  # nothing has come and no slot is given: the tick is missed
        sim.engine.integrate()
        assert sim.hub.summary()["slow"]["missed"] == 1
        assert sock.poll(5000)
        state = proto.decode(sock.recv(), expect=proto.TO_CONTROLLER)
        sock.send(proto.command(state["tick"], q_ref=np.full(n, 0.3), dq_ref=np.zeros(n)))
        sim.hub.wait_for_controllers(["nobody"], 0.2)  # the answer arrives between ticks
        sim.step()
        report = sim.hub.summary()["slow"]
        np.testing.assert_allclose(sim.engine.read("robot").q, 0.3)
        assert report["ticks"] == 1 and report["errors"] == 0


def test_an_answer_inside_its_slot_is_applied_to_that_tick(shared_nameserver, tmp_path):
    """Realtime: a controller that answers a while after the state (inside its slot) is still in time; the hub serves
    answers while the tick's wall-clock slot lasts and applies them to that tick."""
    import threading
    import time

    body = sr1_body()
    # A slot far longer than the controller's delay: the test checks what the hub does with an answer
    # that comes inside its slot, so a busy machine must not push the answer out of it.
    slot, delay = 1.0, 0.1
    project = kinematic_project(
        tmp_path, [{"name": "half", "policy": "hold", "deadline": 5.0, "period": slot}], sync="realtime", timestep=slot
    )
    n = len(body.joint_names)
    ticks = 3  # each tick lasts its one-second slot; the ticks after the first show each answer applied to its own

    def slow_controller(sock: zmq.Socket) -> None:
        for _ in range(ticks):
            if not sock.poll(5000):
                return
            state = proto.decode(sock.recv(), expect=proto.TO_CONTROLLER)
            time.sleep(delay)  # the answer is not there yet when the hub first looks
            sock.send(proto.command(state["tick"], q_ref=np.full(n, 0.01 * state["tick"]), dq_ref=np.zeros(n)))

    with HubUnderTest(shared_nameserver, project, body) as sim:
        sock, _ = attach_by_hand(sim, "half")
        worker = threading.Thread(target=slow_controller, args=(sock,), daemon=True)
        worker.start()
        applied = []
        for _ in range(ticks):
            sim.step()
            applied.append(float(sim.engine.read("robot").q[0]))
        worker.join(10)
        report = sim.hub.summary()["half"]
    assert applied == [0.01 * k for k in range(ticks)]
    assert report["missed"] == 0 and report["late_applied"] == 0 and report["ticks"] == ticks


def test_a_tick_the_simulator_started_late_still_gives_the_controller_its_time_step(shared_nameserver, tmp_path):
    """The slot is already over when the hub looks for answers (the simulator fell behind the wall
    clock): an answer that comes within a time step of the state is the controller's in time, not a miss."""
    import threading
    import time

    body = sr1_body()
    step = 1.0  # the grace the hub gives is one time step: long, so that a busy machine stays inside it
    project = kinematic_project(
        tmp_path, [{"name": "quick", "policy": "hold", "deadline": 5.0}], sync="realtime", timestep=step
    )
    n = len(body.joint_names)

    def quick_controller(sock: zmq.Socket) -> None:
        if sock.poll(5000):
            state = proto.decode(sock.recv(), expect=proto.TO_CONTROLLER)
            time.sleep(0.05)
            sock.send(proto.command(state["tick"], q_ref=np.full(n, 0.2), dq_ref=np.zeros(n)))

    with HubUnderTest(shared_nameserver, project, body) as sim:
        sock, _ = attach_by_hand(sim, "quick")
        worker = threading.Thread(target=quick_controller, args=(sock,), daemon=True)
        worker.start()
        record = sim.record()
        sim.hub.poll()
        sim.hub.before_collide(record)
        sim.engine.collide()
        sim.hub.after_collide(record, slot_end=time.perf_counter() - 1.0)  # a slot that ended long ago
        sim.engine.integrate()
        worker.join(10)
        report = sim.hub.summary()["quick"]
    np.testing.assert_allclose(sim.engine.read("robot").q, 0.2)
    assert report["missed"] == 0 and report["ticks"] == 1
