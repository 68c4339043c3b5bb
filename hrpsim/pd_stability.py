"""How stiff an explicit PD law can be on a joint: the bound every engine's explosion message and the
stock hold controller's default gains come from (docs/physics.md, *Stable PD gains*).

A controller computes ``tau = P (q_ref - q) - D dq`` from the state at one tick and the simulator holds
that torque for h seconds (the controller's period) while the joint, of effective inertia I, moves
semi-implicitly (``dq += h tau / I``, then ``q += h dq``). Per step the error e and rate v follow

    v' = (1 - a) v - (b / h) e,    e' = (1 - b) e + h (1 - a) v,    a = h D / I,  b = h^2 P / I,

whose characteristic polynomial is z^2 - (2 - a - b) z + (1 - a). Both roots lie inside the unit circle
(Jury's test) exactly when 0 < a < 2, b > 0 and b < 4 - 2a, that is

    D < 2 I / h    and    P < 4 I / h^2 - 2 D / h.

Beyond the first the rate flips sign and grows every step: the "exploding" joint. The bound is the
engine's step when the controller's period is one step, and it shrinks in proportion to a longer period.
"""

from __future__ import annotations


def max_damping(inertia: float, h: float) -> float:
    """The D gain (N m s/rad, or N s/m) above which the joint explodes at this hold time."""
    return 2.0 * inertia / h


def max_stiffness(inertia: float, h: float, damping: float = 0.0) -> float:
    """The P gain (N m/rad, or N/m) above which the joint explodes with this D gain."""
    return 4.0 * inertia / h**2 - 2.0 * damping / h


def is_stable(inertia: float, h: float, stiffness: float, damping: float) -> bool:
    return 0.0 <= damping < max_damping(inertia, h) and 0.0 <= stiffness < max_stiffness(inertia, h, damping)


def step_gains(inertia: float, h: float, damping_step: float, stiffness_step: float) -> tuple[float, float]:
    """(P, D) with a = h D / I = ``damping_step`` and b = h^2 P / I = ``stiffness_step``: the gains whose
    per-step effect on the joint is the same whatever its inertia. a = 1, b <= 1 puts the poles at 0 and
    1 - b: the rate error is gone after one step and the position error shrinks by 1 - b per step."""
    return stiffness_step * inertia / h**2, damping_step * inertia / h
