"""A skeleton of a real robot's driver speaking the simulator's side of the tick protocol, so that a
controller written for hrpsim drives the robot unchanged (docs/hil.md walks through it).

Replace the class ``Hardware`` with calls to your robot's API (read encoders and sensors, write
motor commands); everything else is the protocol: register with the nameserver as a ``simserver``
whose metadata names the controller endpoint and the robot, answer a controller's ``hello`` with a
``welcome``, then every control period send ``state`` and apply the ``command`` that answers it,
and say ``bye`` at the end.

    python examples/driver/robot_driver.py --model ROBOT.wrl --robot NAME [--period 0.001] [--ticks N]

As shipped, ``Hardware`` is an in-memory arm whose joints go where they are told, so the skeleton
runs as it is: ``hrpsim controller examples/controllers/hold_pose.py --robot NAME`` attaches to it.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import zmq

from hrpsim import tick_protocol as proto
from hrpsim.bodyinfo import Body
from hrpsim.cli_options import NAMESERVER
from hrpsim.errors import HrpsimError, ProtocolError, RequestError
from hrpsim.modelloader import load_body
from hrpsim.naming import Registration
from hrpsim.rpc import bind_router

log = logging.getLogger("robot_driver")


class Hardware:
    """Replace with your robot: ``read()`` returns joint angles, velocities and torques (controller
    order) and sensor readings; ``write()`` sends torques or position targets to the motor drivers."""

    def __init__(self, body: Body) -> None:
        self.q = np.zeros(len(body.joints))
        self.dq = np.zeros_like(self.q)
        self.tau = np.zeros_like(self.q)

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        return self.q.copy(), self.dq.copy(), self.tau.copy(), {}

    def write(self, command: proto.Command, period: float) -> None:
        if command.q_ref is not None:  # position targets: the drivers get there within the period
            target = self.q.copy()
            target[command.indices] = command.q_ref
            self.dq, self.q = (target - self.q) / period, target
        if command.torque is not None:
            self.tau[command.indices] = command.torque


class Driver:
    def __init__(self, body: Body, robot: str, period: float, *, nameserver: str | None) -> None:
        self.body, self.robot, self.period = body, robot, period
        self.hardware = Hardware(body)
        self.joints = body.joint_names
        self.index_of = {n: i for i, n in enumerate(self.joints)}
        self.context = zmq.Context()
        self.router, endpoint = bind_router(self.context, "tcp://127.0.0.1:*", "robot driver", mandatory=True)
        self.registration = Registration(
            f"driver-{robot}",
            "simserver",
            endpoint,
            nameserver=nameserver,
            metadata={"controllers": endpoint, "robots": [robot], "hil": True},
        )
        self.controller: bytes | None = None

    def serve(self, ticks: int) -> None:
        self.registration.start()
        log.info("driver for %s waiting for a controller", self.robot)
        try:
            while self.controller is None:
                self._receive(timeout=0.1)
            start = time.perf_counter()
            for tick in range(ticks):
                self._wait_until(start + tick * self.period)
                self._tick(tick)
            self._send(proto.bye(f"the driver stopped after {ticks} ticks"))
        finally:
            self.registration.stop()
            self.router.close(linger=200)
            self.context.term()

    def _tick(self, tick: int) -> None:
        q, dq, tau, sensors = self.hardware.read()
        self._send(
            proto.state(
                {
                    "time": tick * self.period,
                    "tick": tick,
                    "q": q,
                    "dq": dq,
                    "tau": tau,
                    "root_position": np.zeros(3),
                    "root_rotation": np.eye(3),
                    "root_velocity": np.zeros(6),
                    "sensors": sensors,
                }
            )
        )
        command = self._receive(timeout=self.period, expect_tick=tick)
        if command is not None:  # no answer in time: the drivers keep the last command
            self.hardware.write(command, self.period)

    def _receive(self, timeout: float, expect_tick: int | None = None) -> proto.Command | None:
        if not self.router.poll(timeout * 1000):
            return None
        identity, frame = self.router.recv_multipart()
        try:
            msg = proto.decode(frame, expect=proto.TO_SIMULATOR)
            if msg["type"] == proto.HELLO:
                self._welcome(identity, proto.parse_hello(msg))
            elif msg["type"] == proto.COMMAND and identity == self.controller:
                return proto.parse_command(
                    msg, joint_names=self.joints, index_of=self.index_of, expected_tick=expect_tick
                )
        except (ProtocolError, RequestError) as exc:
            self.router.send_multipart([identity, proto.error_for(exc)])
        return None

    def _welcome(self, identity: bytes, hello: proto.Hello) -> None:
        if hello.robot != self.robot:
            raise RequestError(
                f"hello field 'robot': this driver runs {self.robot!r}, not {hello.robot!r}", field="robot"
            )
        self.controller = identity
        self.router.send_multipart(
            [
                identity,
                proto.encode(
                    proto.WELCOME,
                    controller=hello.controller,
                    robot=self.robot,
                    period=self.period,
                    every=1,
                    timestep=self.period,
                    sync="realtime",
                    policy="hold",
                    deadline=self.period,
                    joints=self.joints,
                    sensors=[{"name": s.name, "type": s.type, "id": s.id} for s in self.body.sensors],
                    body=self.body.to_wire(),
                    end_time=None,
                ),
            ]
        )
        log.info("controller %s attached", hello.controller)

    def _send(self, frame: bytes) -> None:
        if self.controller is not None:
            self.router.send_multipart([self.controller, frame])

    @staticmethod
    def _wait_until(moment: float) -> None:
        delay = moment - time.perf_counter()
        if delay > 0:
            time.sleep(delay)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, type=Path, help="the robot's model file")
    p.add_argument("--robot", required=True, help="the robot's name, as controllers ask for it")
    p.add_argument("--period", type=float, default=0.001, help="control period in seconds")
    p.add_argument("--ticks", type=int, default=10_000, help="control periods to run before saying bye")
    NAMESERVER.add(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    try:
        Driver(load_body(args.model), args.robot, args.period, nameserver=args.nameserver).serve(args.ticks)
    except HrpsimError as exc:
        log.error("%s", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
