"""The MuJoCo engine: a project's models in one MuJoCo model built in memory (``mujoco.MjSpec``).

Its settings (``world.mujoco`` in a project file) are declared here, without importing MuJoCo.
"""

from hrpsim.engine_options import Option

OPTIONS = (
    Option("solver", "Newton", "MuJoCo's constraint solver", ("Newton", "CG", "PGS")),
    Option("cone", "pyramidal", "the friction cone's shape", ("pyramidal", "elliptic")),
    # velocity drives are implicit dampers: an implicit integrator keeps them stable
    Option("integrator", "implicitfast", "the time integrator", ("implicitfast", "implicit")),
    Option("iterations", 100, "the solver's most iterations per step", minimum=0),
    Option("noslip_iterations", 0, "iterations of the no-slip solver (0: none)", minimum=0),
    # friction 3x harder than normal contact: a box held by friction creeps 0.6 mm/s, not 2
    Option("impratio", 3.0, "friction-to-normal impedance ratio", minimum=0.0),
    # MuJoCo's 1e-8 lets the solver stop at once on a hard drive that needs no force any more
    Option("tolerance", 1e-12, "the solver's tolerance", minimum=0.0),
)
ENGINE = ".engine:MujocoEngine"
REQUIRES = ("mujoco",)
INSTALL = "pip install 'hrpsim[mujoco]'"
