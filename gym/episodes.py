"""How an episode starts: the world put back to the project's start, and what a seed varies.

Two ways back, both through the Python API:

- ``snapshot``: restore the snapshot taken when the env was built (``Simulation.restore``). The
  fast path (about a millisecond on MuJoCo; bench/bench_gym.py measures it), and exact: the same
  start every time, ODE's random constraint order (its ``quickstep`` solver) included.
- ``world``: the World's own reset (``Simulation.reset``), as a new run. The one that reseeds the
  project's hardware models: before it, each model's ``devices.noise_seed`` is drawn from the env's
  generator, so the sensor noise and the commands lost (``drop_commands``) differ from episode to
  episode and follow the env's seed. (A snapshot restores the noise generator it holds: the same
  noise every episode.)

``auto`` takes ``world`` when a model of the project has such random devices and ``snapshot``
otherwise. After either, ``reset_noise_scale`` > 0 moves the robot's joints off the project's
initial angles (at rest) by uniform noise in [-scale, scale] on every angle and speed, drawn from
the env's generator, as Gymnasium's MuJoCo environments do. An episode begun from a snapshot the
caller gives starts exactly there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hrpsim.errors import ConfigError
from hrpsim.project import ModelConfig

if TYPE_CHECKING:
    from hrpsim.simserver.world import Snapshot
    from hrpsim.simulation import Simulation

RESET_WAYS = ("auto", "snapshot", "world")


def has_random_devices(model: ModelConfig) -> bool:
    devices = model.devices
    if devices is None:
        return False
    return devices.drop_commands > 0 or any(noise.std > 0 for noise in devices.noise.values())


class EpisodeStart:
    """Puts ``sim`` back at its start for each episode (the way ``reset_with`` says), and moves
    ``robot``'s joints by ``noise_scale``."""

    def __init__(self, sim: Simulation, robot: str, reset_with: str = "auto", noise_scale: float = 0.0) -> None:
        if reset_with not in RESET_WAYS:
            raise ConfigError(f"reset_with: {reset_with!r} is not one of {', '.join(RESET_WAYS)}")
        if not noise_scale >= 0:
            raise ConfigError(f"reset_noise_scale: must be a number >= 0, got {noise_scale!r}")
        self.sim, self.robot, self.noise_scale = sim, robot, float(noise_scale)
        config, joints = sim.project.model(robot), sim.bodies[robot].joint_names
        self.initial_q = np.array([config.joints.get(name, 0.0) for name in joints], dtype=np.float64)
        self.seeded = [m for m in sim.project.models if m.devices is not None]
        if reset_with == "auto":
            reset_with = "world" if any(has_random_devices(m) for m in sim.project.models) else "snapshot"
        self.way = reset_with
        self.start = sim.snapshot()

    def begin(self, rng: np.random.Generator, snapshot: Snapshot | None = None) -> None:
        """A new episode from the start (or from ``snapshot``, one of this world's)."""
        if snapshot is not None:
            self.sim.restore(snapshot)
            return
        if self.way == "world":
            for model in self.seeded:
                model.devices.noise_seed = int(rng.integers(2**63))
            self.sim.reset()
        else:
            self.sim.restore(self.start)
        if self.noise_scale > 0:
            self._perturb(rng)

    def _perturb(self, rng: np.random.Generator) -> None:
        scale, shape = self.noise_scale, self.initial_q.shape
        q = self.initial_q + rng.uniform(-scale, scale, shape)
        self.sim.set_link_data(self.robot, q=q, dq=rng.uniform(-scale, scale, shape))
