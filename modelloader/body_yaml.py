"""YAML for Choreonoid body files: mappings and lists that remember their line, and the file's
anchors by name (a ``Resource`` with ``node`` picks an anchored node of a YAML file).

Choreonoid reads YAML 1.2 (``on``/``yes`` stay strings); PyYAML's safe loader is YAML 1.1, so
the 1.1-only booleans are read back as the strings they are.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from hrpsim.errors import ModelError
from hrpsim.files import read_regular

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
    """Keeps the anchors of the document (the composer forgets them once it is done)."""

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
    """One parsed YAML file: its top value and its anchors (constructed on demand)."""

    def __init__(self, path: Path, top: Any, loader: _Loader) -> None:
        self.path = path
        self.top = top
        self._loader = loader

    def anchored(self, name: str) -> Any:
        """The value the file anchors as ``&name``, or None."""
        node = self._loader.kept_anchors.get(name)
        if node is None:
            return None
        return self._loader.construct_object(node, deep=True)


def load_yaml(path: Path) -> YamlDocument:
    """Parse a YAML file; a syntax error becomes a ModelError naming the file, line and column."""
    data = read_regular(path, "body file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    # libyaml, which Choreonoid uses, takes a tab after a value as a separator (WAREC1.body has
    # ``0.0058\t]``); PyYAML's scanner does not. Lines and columns stay where they were.
    loader = _Loader(_TAB_AFTER_VALUE.sub(" ", text))
    try:
        node = loader.get_single_node()
        top = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ModelError(f"{where}: YAML syntax error: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ModelError(f"{path}: YAML error: {exc}") from None
    return YamlDocument(path, top, loader)
