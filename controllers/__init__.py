"""The controller SDK: subclass :class:`Controller`, run it with ``hrpsim controller FILE.py --robot NAME``."""

from hrpsim.controllers.base import Controller
from hrpsim.controllers.command import Command
from hrpsim.controllers.runner import run_controller, run_main
from hrpsim.controllers.state import JointReading, State

__all__ = ["Command", "Controller", "JointReading", "State", "run_controller", "run_main"]
