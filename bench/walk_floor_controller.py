"""The floor of an external walk's tick (bench_engines): a controller process that answers each state
of the sample walk with the torques the walk's own controller gave at that tick in an in-process run
(a .npy file, one row per tick), and does nothing else: no state check, no pattern, no PD law. It
takes the SDK's link as ``hrpsim controller`` does (shared memory on the simulator's host), so the
launched walk's tick keeps everything but the controller's own Python. A lockstep run is
deterministic, so the replayed torques walk the same path as the controller that computed them.

    python bench/walk_floor_controller.py TORQUES.npy   (started by ``hrpsim launch``: it reads
    $HRPSIM_ROBOT, $HRPSIM_CONTROLLER_NAME and $HRPSIM_NAMESERVER)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hrpsim import tick_protocol as proto
from hrpsim.controllers.link import open_link
from hrpsim.controllers.runner import ENV_NAME, ENV_ROBOT, find_controller_endpoint
from hrpsim.naming import Registration, nameserver_address

TIMEOUT_S = 30.0


def main(torques_file: str) -> int:
    robot, name = os.environ[ENV_ROBOT], os.environ[ENV_NAME]
    nameserver = nameserver_address(None)
    torques = np.load(torques_file)
    last = len(torques) - 1
    _, endpoint = find_controller_endpoint(robot, nameserver=nameserver, simserver=None, timeout=TIMEOUT_S)
    link = open_link(endpoint, peer="simulator", timeout=TIMEOUT_S)
    registration = Registration(name, "controller", endpoint, nameserver=nameserver)
    try:
        link.attach(name, robot, period=None, timeout=TIMEOUT_S)
        registration.start()
        while (msg := link.receive(TIMEOUT_S)) is not None:
            if msg["type"] == proto.STATE:
                tick = msg["tick"]
                link.send_command(tick, torque=torques[min(tick, last)])
            elif msg["type"] == proto.BYE:
                return 0
        return 1  # no state and no bye within the timeout
    finally:
        registration.stop()
        link.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
