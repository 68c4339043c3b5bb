"""A toy engine, registered by the tests to show what adding an engine takes: this folder and one
line in hrpsim/engine_registry.py (``"toy": "toy_engine"``). Every moving model's root is a point
that falls under gravity, slowed by linear drag; joints sit at their commanded targets."""

from hrpsim.engine_options import Option

OPTIONS = (Option("drag", 0.0, "linear drag on a falling root, 1/s", minimum=0.0),)
ENGINE = ".engine:ToyEngine"
