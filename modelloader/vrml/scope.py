"""Name scopes of one VRML file: DEF/USE, and which node types are PROTOs.

Each file is its own DEF scope (an Inline does not see its includer's names, nor the other way
round), and so is each PROTO body. A USE is replaced by the very node its DEF named, so a
shared node is one object; a USE of an unknown name is a problem, reported with its location.

:func:`instantiate` copies a PROTO body for one instance, putting the instance's field values
where the body says ``IS``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hrpsim.modelloader.vrml.nodes import MF, ExternProto, IsRef, Node, ParsedFile, Proto, Use

ProtoTable = dict[str, Proto | ExternProto]


def resolve_file(parsed: ParsedFile, problems: list[str]) -> None:
    """Bind every USE and PROTO instance in ``parsed`` (in place)."""
    protos: ProtoTable = {}
    for proto in parsed.protos:
        _declare(proto, protos, problems)
    names: dict[str, Node] = {}
    parsed.statements = _resolve_list(parsed.statements, names, protos, problems)


def _declare(proto: Proto | ExternProto, protos: ProtoTable, problems: list[str]) -> None:
    protos[proto.name] = proto
    if isinstance(proto, Proto):
        local = dict(protos)
        for inner in proto.body:
            if isinstance(inner, Proto | ExternProto):
                _declare(inner, local, problems)
        statements = [s for s in proto.body if isinstance(s, Node | Use)]
        proto.body = _resolve_list(statements, {}, local, problems)
        for decl in proto.interface.values():
            decl.default = _resolve_value(decl.default, {}, local, problems)
        proto.defaults = {n: f.default for n, f in proto.interface.items() if f.default is not None}


def _resolve_list(items: list[Any], names: dict[str, Node], protos: ProtoTable, problems: list[str]) -> list[Any]:
    out = []
    for item in items:
        resolved = _resolve_value(item, names, protos, problems)
        if resolved is not None:
            out.append(resolved)
    return out


def _resolve_value(value: Any, names: dict[str, Node], protos: ProtoTable, problems: list[str]) -> Any:
    if isinstance(value, Node):
        _resolve_node(value, names, protos, problems)
        return value
    if isinstance(value, Use):
        node = names.get(value.name)
        if node is None:
            problems.append(f"{value.where}: USE {value.name}: no node of that name was DEF'd before in this file")
        return node
    if isinstance(value, MF) and any(isinstance(v, Node | Use) for v in value):
        return MF(_resolve_list(value, names, protos, problems))
    return value


def _resolve_node(node: Node, names: dict[str, Node], protos: ProtoTable, problems: list[str]) -> None:
    proto = protos.get(node.type)
    if proto is not None:
        node.proto = proto
    for name, value in node.fields.items():
        if isinstance(value, Node | Use | MF):
            node.fields[name] = _resolve_value(value, names, protos, problems)
    # Bound after its own fields: a node cannot USE itself, so shared nodes never form a cycle.
    if node.def_name:
        names[node.def_name] = node


def instantiate(instance: Node) -> list[Node]:
    """The nodes of ``instance``'s PROTO body, copied with the instance's field values put in."""
    proto = instance.proto
    if proto is None:
        return []
    memo: dict[int, Node] = {}
    return [c for c in (_copy(s, instance, memo) for s in proto.body) if isinstance(c, Node)]


def _copy(value: Any, instance: Node, memo: dict[int, Node]) -> Any:
    if isinstance(value, IsRef):
        return instance.get(value.name)
    if isinstance(value, Node):
        done = memo.get(id(value))
        if done is not None:
            return done
        copy = Node(value.type, {}, value.where, value.field_where, value.def_name, value.proto)
        memo[id(value)] = copy
        for name, field_value in value.fields.items():
            copy.fields[name] = _copy(field_value, instance, memo)
        return copy
    if isinstance(value, MF):
        return MF(c for c in (_copy(v, instance, memo) for v in value) if c is not None)
    if isinstance(value, np.ndarray | list):
        return value  # plain values are never changed in place: sharing is safe
    return value
