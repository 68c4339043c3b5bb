"""ODE behind the engine boundary: the only package that imports ``ode`` or loads libode.

Its settings (``world.ode`` in a project file) are declared here, without importing ODE.
"""

from hrpsim.engine_options import Option

OPTIONS = (
    Option("solver", "step", "ODE's stepper: step (exact, dense) or quickstep (iterative)", ("step", "quickstep")),
    Option("quickstep_iterations", 50, "quickstep's iterations per step", minimum=1),
    Option("erp", 0.2, "error reduction parameter: the share of a joint's error corrected per step", minimum=0.0),
    Option("cfm", 1e-10, "constraint force mixing: the softness of every joint", minimum=0.0, exclusive=True),
)
ENGINE = ".engine:OdeEngine"
REQUIRES = ("ode",)
# PyPI's pyode is Python 2 only: the binding comes from the distribution
INSTALL = (
    "ODE's Python binding comes from the distribution: apt install python3-pyode (Debian, Ubuntu), "
    "then make the virtual environment with --system-site-packages so that it sees the binding; "
    "or run the project on MuJoCo (world: {engine: mujoco}, pip install 'hrpsim[mujoco]')"
)
