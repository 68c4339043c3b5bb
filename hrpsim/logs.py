"""Logging set-up shared by every process: one line per record, prefixed with the component."""

from __future__ import annotations

import logging
import os
import sys


def setup_logging(component: str, level: str | None = None) -> None:
    level = level or os.environ.get("HRPSIM_LOG_LEVEL", "INFO")
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format=f"%(asctime)s {component} %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
