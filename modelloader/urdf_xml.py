"""XML reading shared by the URDF and COLLADA readers: parsing with located errors, collecting
problems (file:line and element path), numeric attributes, and rotation helpers."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
from lxml import etree

from hrpsim.errors import ModelError
from hrpsim.files import read_model


class Problems:
    """Every problem found in one file, each located by file, line and element path, so that a
    user fixes them all in one pass instead of one per run."""

    def __init__(self, path: Path, what: str, *, tolerant: bool = False) -> None:
        self.path = path
        self.what = what
        self.items: list[str] = []
        self.warnings: list[str] = []  # deviations read anyway, each with what was assumed
        self.tolerant = tolerant  # read numbers as the tools people use do (see ``floats``)

    def add(self, element: etree._Element | None, message: str) -> None:
        self.items.append(f"{self.locate(element)}: {message}")

    def warn(self, element: etree._Element | None, message: str) -> None:
        self.warnings.append(f"{self.locate(element)}: {message}")

    def locate(self, element: etree._Element | None) -> str:
        if element is None:
            return str(self.path)
        line = element.sourceline or 0
        return f"{self.path}:{line}: {element_path(element)}"

    def raise_if_any(self) -> None:
        if self.items:
            count = len(self.items)
            if count == 1:  # ModelError shows a lone problem only through its message
                raise ModelError(f"cannot load {self.what}: {self.items[0]}", self.items)
            raise ModelError(f"{self.path}: cannot load {self.what} ({count} problems)", self.items)


def element_path(element: etree._Element) -> str:
    """``/robot/joint[3]/limit`` style path, without namespaces; a ``name`` attribute is shown
    because it is what a reader searches for."""
    steps = []
    node: etree._Element | None = element
    while node is not None:
        name = local_name(node)
        parent = node.getparent()
        step = name
        if parent is not None:
            same = [c for c in parent if local_name(c) == name]
            if len(same) > 1:
                step += f"[{same.index(node) + 1}]"
        label = node.get("name")
        if label is not None:
            step += f"(name={label!r})"
        steps.append(step)
        node = parent
    return "/" + "/".join(reversed(steps))


def parse_xml(data: bytes, path: Path, what: str, problems: Problems | None = None) -> etree._Element:
    """Parse ``data``; malformed XML becomes a ModelError naming the file, line and column.

    Real files start with whitespace before the XML declaration or end in NUL bytes; both are
    harmless and are trimmed rather than refused. Given tolerant ``problems``, a namespace
    prefix used without its declaration (``<drake:gear_ratio>``, ``<xacro:include>``, which
    tinyxml-based tools read) is a warning and the element keeps the prefix in its tag."""
    data = _without_declaration(data.lstrip().rstrip(b"\x00 \t\r\n"))
    parser = etree.XMLParser(remove_comments=True, resolve_entities=False, no_network=True, huge_tree=True)
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        if problems is not None and problems.tolerant and _only_undeclared_prefixes(parser):
            return _parse_undeclared(data, problems)
        line, column = exc.position if exc.position else (0, 0)
        message = f"{path}:{line}:{column}: malformed XML: {exc.msg}"
        raise ModelError(f"cannot load {what}: {message}", [message]) from None


def _only_undeclared_prefixes(parser: etree.XMLParser) -> bool:
    errors = [e for e in parser.error_log if e.level_name in ("ERROR", "FATAL")]
    return bool(errors) and all(e.type_name == "NS_ERR_UNDEFINED_NAMESPACE" for e in errors)


def _parse_undeclared(data: bytes, problems: Problems) -> etree._Element:
    parser = etree.XMLParser(
        remove_comments=True, resolve_entities=False, no_network=True, huge_tree=True, recover=True
    )
    root = etree.fromstring(data, parser)
    for error in parser.error_log:
        problems.warnings.append(f"{problems.path}:{error.line}: {error.message}; read with the prefix as written")
    return root


_DECLARATION = re.compile(rb"^<\?xml[^>]*\?>")
_ENCODING = re.compile(rb"""encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def _without_declaration(data: bytes) -> bytes:
    """The document as UTF-8 without its XML declaration, which real files get wrong (version
    "0.0"); dropping it on its own line keeps every line number."""
    match = _DECLARATION.match(data)
    if match is None:
        return data
    encoding = _ENCODING.search(match.group(0))
    body = data[match.end() :]
    if encoding is not None and encoding.group(1).lower() not in (b"utf-8", b"utf8", b"us-ascii", b"ascii"):
        try:
            body = body.decode(encoding.group(1).decode()).encode("utf-8")
        except (LookupError, UnicodeDecodeError):
            pass  # let the parser report the bytes it cannot read
    return body


def read_file(path: Path, what: str) -> bytes:
    return read_model(path, what)


def local_name(element: etree._Element) -> str:
    tag = element.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def floats(
    text: str | None, count: int | None, problems: Problems, element: etree._Element, field: str
) -> np.ndarray | None:
    """``count`` finite numbers from ``text`` (any count when None), or None after recording why not.

    With ``problems.tolerant`` a number with trailing junk (``-1.57.``) is read as its leading
    number and surplus numbers are dropped, each with a warning, as PyBullet and Gazebo read them."""
    if text is None:
        problems.add(element, f"missing {field}")
        return None
    try:
        values = np.array(text.replace(",", " ").split(), dtype=np.float64)
    except ValueError:
        values = _leading_numbers(text) if problems.tolerant else None
        if values is None:
            problems.add(element, f"{field} {text.strip()!r} is not a list of numbers")
            return None
        problems.warn(element, f"{field} {text.strip()!r} read as {' '.join(f'{v:g}' for v in values)}")
    if count is not None and values.size > count and problems.tolerant:
        problems.warn(element, f"{field} {text.strip()!r} has {values.size} numbers; the first {count} used")
        values = values[:count]
    if count is not None and values.size != count:
        problems.add(element, f"{field} {text.strip()!r} has {values.size} numbers, expected {count}")
        return None
    if not np.all(np.isfinite(values)):
        problems.add(element, f"{field} {text.strip()!r} holds a non-finite number")
        return None
    return values


_LEADING_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _leading_numbers(text: str) -> np.ndarray | None:
    """Each word's leading number (C's strtod reading), or None when a word starts with none."""
    values = []
    for word in text.replace(",", " ").split():
        match = _LEADING_NUMBER.match(word)
        if match is None:
            return None
        values.append(float(match.group(0)))
    return np.array(values, dtype=np.float64)


def number(
    text: str | None, problems: Problems, element: etree._Element, field: str, default: float | None = None
) -> float | None:
    if text is None:
        if default is None:
            problems.add(element, f"missing {field}")
        return default
    values = floats(text, 1, problems, element, field)
    return None if values is None else float(values[0])


def integer(text: str | None, problems: Problems, element: etree._Element, field: str, minimum: int = 0) -> int | None:
    """A whole number >= ``minimum`` from an attribute, or None after recording why not."""
    try:
        value = int((text or "").strip())
    except ValueError:
        problems.add(element, f"{field} {text!r} is not a whole number")
        return None
    if value < minimum:
        problems.add(element, f"{field} {value} is below {minimum}")
        return None
    return value


def rpy_matrix(rpy: np.ndarray) -> np.ndarray:
    """URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll) (fixed axes X, then Y, then Z)."""
    roll, pitch, yaw = (float(v) for v in rpy)
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def matrix_rpy(rotation: np.ndarray) -> np.ndarray:
    """The inverse of :func:`rpy_matrix` (pitch in [-pi/2, pi/2])."""
    r = np.asarray(rotation, dtype=np.float64)
    sp = -r[2, 0]
    if abs(sp) < 1.0 - 1e-12:
        pitch = math.asin(max(-1.0, min(1.0, sp)))
        roll = math.atan2(r[2, 1], r[2, 2])
        yaw = math.atan2(r[1, 0], r[0, 0])
    else:  # gimbal lock: put all of the remaining rotation into yaw
        pitch = math.copysign(math.pi / 2, sp)
        roll = 0.0
        yaw = math.atan2(-r[0, 1], r[1, 1])
    return np.array([roll, pitch, yaw])


def homogeneous(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = rotation
    m[:3, 3] = translation
    return m


def inverse(transform: np.ndarray) -> np.ndarray:
    r = transform[:3, :3]
    return homogeneous(r.T, -r.T @ transform[:3, 3])
