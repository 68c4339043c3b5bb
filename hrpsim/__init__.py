"""hrpsim: a distributed controller-simulator middleware in the tradition of OpenHRP3."""

__version__ = "0.1.0"
