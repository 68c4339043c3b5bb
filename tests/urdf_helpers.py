"""Helpers for the URDF / COLLADA / convert tests: the corpus location and its facts."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from process_helpers import MODEL_FACTS, MODELS

SR1 = MODELS / "choreonoid" / "model" / "SR1" / "SR1.urdf"
PUMA = MODELS / "openrave" / "robots" / "pumaarm.zae"
WAM = MODELS / "openrave" / "robots" / "barrett-wam-sensors.zae"
URDF_TO_COLLADA = Path("/usr/lib/collada_urdf/urdf_to_collada")


def facts(relative: str) -> dict[str, Any]:
    return json.loads(MODEL_FACTS.read_text())["models"][relative]


def corpus_models() -> list[Path]:
    """Every model file listed in the corpus facts that loads (VRML and Choreonoid bodies included)."""
    data = json.loads(MODEL_FACTS.read_text())
    return [MODELS / name for name, facts in data["models"].items() if "refusals" not in facts]


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def robot(body: str, name: str = "r") -> str:
    return f'<robot name="{name}">\n{body}\n</robot>\n'


def inertial(mass: float = 1.0) -> str:
    return (
        f'<inertial><mass value="{mass}"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
    )


DEG = math.pi / 180.0
