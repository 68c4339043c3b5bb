"""YAML for Choreonoid body files: mappings and lists that remember their line, and the file's
anchors by name (a ``Resource`` with ``node`` picks an anchored node of a YAML file).

Choreonoid reads YAML 1.2 (``on``/``yes`` stay strings); PyYAML's safe loader is YAML 1.1, so
the 1.1-only booleans are read back as the strings they are.

Reading is bounded: a file nests at most :data:`MAX_DEPTH` levels (the largest real body files
nest 16), and holds at most :data:`MAX_NODES` nodes once its aliases are expanded (the largest
real ones hold under 10,000), so that a few lines of aliases, each naming the one before twice,
cannot make every later walk of the document take forever. Each document knows its expanded size,
so that a body charges what it reads through SubBodies and Resources against the same bound.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from hrpsim.errors import ModelError
from hrpsim.files import read_regular

MAX_DEPTH = 100
MAX_NODES = 1_000_000
_TAB_AFTER_VALUE = re.compile(r"(?<=\S)\t")
_YAML_11_BOOLEANS = {"yes", "no", "on", "off", "y", "n"}


class YMap(dict):
    """A mapping with the line (from 1) it starts on and the line of each key."""

    line: int = 0
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class YList(list):
    line: int = 0


class _Loader(yaml.SafeLoader):
    """Keeps the anchors of the document (the composer forgets them once it is done), and refuses
    nesting deeper than MAX_DEPTH before Python's recursion limit would."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        if self.depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def compose_document(self) -> yaml.Node:
        self.get_event()  # DocumentStart
        node = self.compose_node(None, None)
        self.get_event()  # DocumentEnd
        self.kept_anchors = dict(self.anchors)
        self.anchors = {}
        return node


def _construct_map(loader: _Loader, node: yaml.MappingNode) -> YMap:
    result = YMap()
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    yield result
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        result[str(key)] = loader.construct_object(value_node, deep=True)
        result.key_lines[str(key)] = key_node.start_mark.line + 1


def _construct_list(loader: _Loader, node: yaml.SequenceNode) -> YList:
    result = YList()
    result.line = node.start_mark.line + 1
    yield result
    result.extend(loader.construct_object(child, deep=True) for child in node.value)


def _construct_bool(loader: _Loader, node: yaml.ScalarNode) -> bool | str:
    if node.value.lower() in _YAML_11_BOOLEANS:
        return node.value
    return loader.construct_yaml_bool(node)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_map)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_list)
_Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
# YAML 1.2 floats PyYAML's 1.1 rules miss: an exponent without a dot (1E6, 1e-05)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9]+[eE][-+]?[0-9]+$"), list("-+0123456789")
)


class YamlDocument:
    """One parsed YAML file: its top value, its anchors (constructed on demand) and the number of
    nodes each holds once aliases are expanded."""

    def __init__(self, path: Path, top: Any, loader: _Loader, sizes: dict[int, int], size: int) -> None:
        self.path = path
        self.top = top
        self.size = size  # nodes of the whole document, aliases expanded
        self._loader = loader
        self._sizes = sizes

    def anchored(self, name: str) -> tuple[Any, int]:
        """The value the file anchors as ``&name`` and its expanded size, or (None, 0)."""
        node = self._loader.kept_anchors.get(name)
        if node is None:
            return None, 0
        return self._loader.construct_object(node, deep=True), self._sizes[id(node)]


def expanded_sizes(top: yaml.Node) -> dict[int, int]:
    """The number of nodes under each node (itself included) with every alias expanded, by the
    node's id: each node is counted once, however many aliases name it, so this is quick."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(top, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            sizes[id(node)] = 1
            continue
        if children_done:
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes


def load_yaml(path: Path) -> YamlDocument:
    """Parse a YAML file; a syntax error becomes a ModelError naming the file, line and column."""
    data = read_regular(path, "body file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        # libyaml, which Choreonoid uses, takes a tab after a value as a separator (WAREC1.body
        # has ``0.0058\t]``); PyYAML's scanner does not. Lines and columns stay where they were.
        loader = _Loader(_TAB_AFTER_VALUE.sub(" ", text))
        node = loader.get_single_node()
        sizes = expanded_sizes(node) if node is not None else {}
        size = sizes[id(node)] if node is not None else 0
        if size > MAX_NODES:
            raise ModelError(
                f"{path}: holds more than {MAX_NODES} YAML nodes once its aliases are expanded "
                f"({size}); a body file holds far fewer (aliases that each name the one before twice?)"
            )
        top = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ModelError(f"{where}: YAML syntax error: {exc.problem or exc.context}") from None
    except yaml.reader.ReaderError as exc:  # a control character: a binary file, most likely
        raise ModelError(
            f"{path}: not a YAML text file: character #x{exc.character:04x} at character {exc.position + 1} "
            "is not allowed in YAML"
        ) from None
    except yaml.YAMLError as exc:
        raise ModelError(f"{path}: YAML error: {' '.join(str(exc).split())}") from None
    return YamlDocument(path, top, loader, sizes, size)
