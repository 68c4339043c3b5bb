"""µs per tick that Coulomb friction adds to sample1 standing: our OdeEngine with and without engines/ode/friction.py.

Two copies of bench_step's world (sample1.wrl on floor.wrl, 1 ms steps, every joint held): one
with the contact generator as it is, one with its friction model taken out (each contact gets the
pair's surface, the static coefficient along ODE's own directions, and a joint; nothing is
remembered or read back: the contacts before the friction model). The two tick in turn, one tick
each, so that both see the same machine load and neither keeps the caches warm for itself; each
tick (collision, step, state read) is timed alone. Figures are medians over ticks; `added_us` is
the median of the per-tick differences, `ratio` is 1 + added_us / pyramid_tick_us: what the
friction model adds to `step.tick_us`. Sample1's feet stand still, so both worlds hand ODE the
same contacts and the difference is the friction model's own Python.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import ode

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_step import _world

from hrpsim.engines.ode.contacts import ContactGenerator, Surface, set_surface
from hrpsim.engines.ode.engine import OdeEngine

TICKS = 3000
WARMUP = 200
Body = ode.Body | None


class PyramidContacts(ContactGenerator):
    """The contact generator without the friction model: ODE's pyramid with the pair's surface."""

    def _join_with_friction(self, contacts: list[ode.Contact], surface: Surface, b1: Body, b2: Body, _: object) -> None:
        for contact in contacts:
            set_surface(contact, surface)
            ode.ContactJoint(self.world, self.group, contact).attach(b1, b2)
        self.count += len(contacts)


def _pyramid_world() -> OdeEngine:
    engine = _world()
    drives = engine.drives
    engine.contacts.release()
    engine.contacts = PyramidContacts(
        engine.ode_world,
        engine.space,
        list(engine.models.values()),
        engine.project.collision_pairs(),
        lambda robot, joint_index: drives[robot].crawler_speed(joint_index),
    )
    return engine


def _ticker(engine: OdeEngine) -> Callable[[], float]:
    clock = time.perf_counter

    def tick() -> float:
        start = clock()
        engine.collide()
        engine.integrate()
        engine.read("robot")
        return clock() - start

    return tick


def run() -> dict[str, float]:
    worlds = [_world(), _pyramid_world()]
    ticks = [_ticker(engine) for engine in worlds]
    for tick in ticks:
        for _ in range(WARMUP):
            tick()
    friction_s, pyramid_s = [], []
    for n in range(TICKS):
        if n % 2:
            pyramid_s.append(ticks[1]())
            friction_s.append(ticks[0]())
        else:
            friction_s.append(ticks[0]())
            pyramid_s.append(ticks[1]())
    for engine in worlds:
        upright = engine.read("robot").root_position[2]
        if abs(upright - 0.7235) > 0.01:
            raise RuntimeError(f"sample1 did not stand still in the benchmark (root z {upright:.4f})")
    pyramid_us = statistics.median(pyramid_s) * 1e6
    added_us = statistics.median(f - p for f, p in zip(friction_s, pyramid_s, strict=True)) * 1e6
    return {
        "tick_us": statistics.median(friction_s) * 1e6,
        "pyramid_tick_us": pyramid_us,
        "added_us": added_us,
        "ratio": 1.0 + added_us / pyramid_us,
    }


if __name__ == "__main__":
    print(run())
