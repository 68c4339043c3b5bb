"""The controller SDK: subclass :class:`Controller`, run it with ``hrpsim controller FILE.py --robot NAME``."""

from controllers.base import Controller
from controllers.command import Command
from controllers.runner import run_controller, run_main
from controllers.state import JointReading, State

__all__ = ["Command", "Controller", "JointReading", "State", "run_controller", "run_main"]
