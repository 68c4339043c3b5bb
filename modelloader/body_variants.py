"""What to do about a body refused for a simulator plugin's track: the variant beside it.

Choreonoid ships its tracked robots more than once: with AGX Dynamics' or PhysX's continuous tracks
(AgxTank.body, PxTank.body, AizuSpiderNA.body) and with its simple track model (Tank.body,
AizuSpiderNS.body), whose tracks are links with ``jointType: pseudo_continuous_track``, which
hrpsim simulates. When a body is refused for a plugin's track, the body files beside it are looked
at, by the reading rules (regular files under the allowed folders, small ones only): one whose
tracks are pseudo continuous tracks, itself or through the SubBodies it names, is the variant to
load, and the one whose name is nearest (then shares the longest start) is named.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from hrpsim.errors import HrpsimError
from hrpsim.files import check_readable, read_regular

TRACK_DEVICES = ("AGXVehicleContinuousTrackDevice", "PxContinuousTrack")
SIMPLE_TRACK = re.compile(r"\b(pseudo_continuous_track|pseudoContinuousTrack)\b")
PLUGIN_TRACK = re.compile(r"\b(" + "|".join(TRACK_DEVICES) + r"|ContinuousTrack)\b")
_SUB_BODY_URI = re.compile(r"""\buri\s*:\s*["']?([^"'\s#}]+\.body)""")
MAX_SIBLINGS = 64
MAX_BYTES = 1024 * 1024  # a body file is kilobytes; a larger one is not looked at
SAME_ROBOT = 0.6  # how alike two file names must be to call the other the same robot


def track_advice(path: Path, refused: str) -> str:
    """What to change in the body at ``path``, refused for ``refused`` (a plugin's track): a
    sentence to follow the refusal."""
    change = f"give each track as a link with jointType: pseudo_continuous_track instead of the {refused}"
    variants = [p for p in _siblings(path) if _simple_tracks(p)]
    nearest = max(variants, key=lambda p: (_alike(p, path), _shared_start(p, path)), default=None)
    if nearest is not None and _alike(nearest, path) >= SAME_ROBOT:
        return (
            f"{nearest.name} beside it is the same robot with tracks hrpsim simulates (links with "
            f"jointType: pseudo_continuous_track, Choreonoid's simple track model): load that file, or {change}"
        )
    return f"hrpsim simulates Choreonoid's simple track model: {change}"


def _siblings(path: Path) -> list[Path]:
    try:
        found = sorted(p for p in path.parent.iterdir() if p.suffix == ".body" and p.name != path.name)
    except OSError:
        return []
    return found[:MAX_SIBLINGS]


def _simple_tracks(path: Path) -> bool:
    """Whether the body has simple tracks, in itself or a SubBody it names, and no plugin's."""
    text = _text(path)
    texts = [text, *(_text(path.parent / uri) for uri in _SUB_BODY_URI.findall(text))]
    return any(SIMPLE_TRACK.search(t) for t in texts) and not any(PLUGIN_TRACK.search(t) for t in texts)


def _text(path: Path) -> str:
    """The file's text, or "" for one the reading rules refuse or that is not a small text file."""
    try:
        if os.stat(check_readable(path, "body file")).st_size > MAX_BYTES:
            return ""
        return read_regular(path, "body file").decode("utf-8")
    except (HrpsimError, OSError, UnicodeDecodeError):
        return ""


def _shared_start(a: Path, b: Path) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a.stem, b.stem, strict=False)) if x != y), min(len(a.stem), len(b.stem))
    )


def _alike(a: Path, b: Path) -> float:
    return difflib.SequenceMatcher(None, a.stem.lower(), b.stem.lower()).ratio()
