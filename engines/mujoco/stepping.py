"""How the engine's ticks use MuJoCo's step: whole (``mj_step``), or in its two halves.

MuJoCo's step computes the position and velocity stages of the state (poses, contacts, constraints,
velocities, passive forces) and then, from the controls, the accelerations, and integrates. The
engine needs the first half after every step anyway (what is read between ticks describes the state
now), and a next step whose commands change only the controls (every joint in torque mode) finds
that half unchanged when it begins. So then the half is computed once, at the end of a tick
(``mj_step1``), and the next tick finishes the step (``mj_step2``): the same computations in the
same order as ``mj_step``, so the same numbers. A hold or velocity drive changes constraints or
the state before the step, and anything else that touches the state between ticks says so
(:meth:`SplitStep.invalidate`): the next tick then steps whole, and the end of a tick computes only
the stages reading needs. MuJoCo's RK4 has no second half of its own: it always steps whole.
"""

from __future__ import annotations

import mujoco


class SplitStep:
    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        self.m, self.d = model, data
        self.prepared = False  # the state's position and velocity stages are done (mj_step1)
        self.allowed = model.opt.integrator != mujoco.mjtIntegrator.mjINT_RK4

    def step(self) -> None:
        if self.prepared:
            mujoco.mj_step2(self.m, self.d)
        else:
            mujoco.mj_step(self.m, self.d)
        self.prepared = False

    def after_step(self, *, controls_only: bool) -> None:
        """Poses, velocities and gyros of the new state, for reading between ticks. ``controls_only``:
        the next tick's commands change nothing but the controls (and external forces)."""
        m, d = self.m, self.d
        if controls_only and self.allowed:
            mujoco.mj_step1(m, d)
            self.prepared = True
            return
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_comVel(m, d)
        mujoco.mj_sensorVel(m, d)

    def invalidate(self) -> None:
        """The state or a constraint changed since the end of the tick: the next tick steps whole."""
        self.prepared = False

    def find_contacts(self) -> None:
        """``d.contact`` holds the contacts of the state now (the first half found them, if done)."""
        if not self.prepared:
            mujoco.mj_collision(self.m, self.d)  # (which drops what the first half computed)
