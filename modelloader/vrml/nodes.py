"""The VRML node tree as the parser leaves it: nodes with untyped field values and locations.

A field value is kept as written, because its type is known only to the node (built-in) or to
the PROTO declaration that defines it:

- ``list`` of scalars (float, str, bool, None for NULL) for values written without brackets;
- ``numpy.ndarray`` (float64, flat) for a bracketed list of plain numbers;
- ``MF`` (a list subclass) for any other bracketed list: scalars and nodes;
- :class:`Node` for a single node, :class:`Use` for ``USE name`` until scopes are resolved;
- :class:`IsRef` for ``field IS protoField`` inside a PROTO body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Where:
    """A place in a file: 1-based line and column."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.column}"
        return self.file


class MF(list):
    """A bracketed list of scalars and/or nodes."""

    __slots__ = ()


@dataclass(slots=True)
class Use:
    name: str
    where: Where


@dataclass(slots=True)
class IsRef:
    """``field IS name`` inside a PROTO body: the instance's value of ``name`` goes here."""

    name: str
    where: Where


@dataclass(eq=False, slots=True)
class Node:
    """One node: its type name, the fields written, and where it was written.

    ``proto`` is set (by scope resolution) when the type is a PROTO or EXTERNPROTO of the file.
    """

    type: str
    fields: dict[str, Any]
    where: Where
    field_where: dict[str, Where] = field(default_factory=dict)
    def_name: str = ""
    proto: Any = None  # Proto | ExternProto

    def has(self, name: str) -> bool:
        return name in self.fields or (self.proto is not None and name in self.proto.defaults)

    def get(self, name: str, default: Any = None) -> Any:
        """The written value, else the PROTO's declared default, else ``default``."""
        if name in self.fields:
            return self.fields[name]
        if self.proto is not None and name in self.proto.defaults:
            return self.proto.defaults[name]
        return default

    def where_of(self, name: str) -> Where:
        return self.field_where.get(name, self.where)

    @property
    def label(self) -> str:
        return f"{self.type} {self.def_name!r}" if self.def_name else self.type


@dataclass(slots=True)
class Interface:
    """One field of a PROTO interface (or a Script's): kind, VRML type, default value."""

    kind: str  # field, exposedField, eventIn, eventOut
    type: str  # SFVec3f, MFNode, ...
    name: str
    default: Any = None


@dataclass(eq=False, slots=True)
class Proto:
    name: str
    interface: dict[str, Interface]
    body: list[Any]  # statements: Node, Use, routes dropped
    where: Where
    defaults: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.defaults = {n: f.default for n, f in self.interface.items() if f.default is not None}


@dataclass(eq=False, slots=True)
class ExternProto:
    """An EXTERNPROTO: the interface (no defaults) and the urls to find the definition in.
    ``resolved`` is the Proto found there, if any."""

    name: str
    interface: dict[str, Interface]
    urls: list[str]
    where: Where
    resolved: Proto | None = None

    @property
    def defaults(self) -> dict[str, Any]:
        return self.resolved.defaults if self.resolved is not None else {}

    @property
    def body(self) -> list[Any]:
        return self.resolved.body if self.resolved is not None else []


@dataclass(slots=True)
class ParsedFile:
    """One file's statements (nodes at the top level, in order) and its PROTO declarations."""

    path: str
    statements: list[Any]
    protos: list[Proto | ExternProto]
