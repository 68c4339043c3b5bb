"""``Resource`` nodes of a Choreonoid body file: the files they name, read once each.

- a mesh file (STL, OBJ, DAE, PLY ... through modelloader.meshes) becomes one mesh;
- a VRML97 scene (``.wrl``) gives the shapes of its whole scene, or with ``node: NAME`` those
  of the node DEF'd as NAME. As in Choreonoid, the chosen node keeps the rotation (and scale)
  of the nodes above it but not their translation, nor its own;
- a YAML or body file gives its elements (the whole document, or with ``node: NAME`` the value
  anchored as ``&NAME``), read as if they were written where the Resource is.

Relative uris are relative to the file that names them; ``${SHARE}``-style path variables need
a Choreonoid installation and are refused. What one body reads is bounded (:meth:`Resources.charge`):
at most MAX_NODES YAML nodes in all, a YAML Resource counted each time it is used, and at most
MAX_SUB_BODIES SubBodies.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from hrpsim.bodyinfo import Shape
from hrpsim.errors import AccessDenied, HrpsimError, ModelError
from hrpsim.files import allowed_path, read_regular
from hrpsim.modelloader.body_values import BodyFile
from hrpsim.modelloader.body_yaml import MAX_NODES, YamlDocument, YMap, load_yaml
from hrpsim.modelloader.meshes import MeshError, load_mesh
from hrpsim.modelloader.openhrp import transform_matrix
from hrpsim.modelloader.vrml.fields import FieldReader
from hrpsim.modelloader.vrml.files import SceneLoader
from hrpsim.modelloader.vrml.nodes import Node, ParsedFile
from hrpsim.modelloader.vrml.parser import decode, parse_text
from hrpsim.modelloader.vrml.scope import resolve_file
from hrpsim.modelloader.vrml_shapes import place_mesh, shape_of

YAML_SUFFIXES = (".body", ".yaml", ".yml")
MAX_SUB_BODIES = 256  # SubBodies one body reads in all; the real ones read up to three
_GROUPS = ("Group", "Anchor", "Collision", "Billboard")
_TYPE_AS_NAME = re.compile(r"\bDEF\s+(Transform|Group|Shape|Switch|Collision)\s*\{")


class ReadingBound(ModelError):
    """A body that reads more than the bounds allow: the whole reading stops."""


class Resources:
    """Every file the body refers to, read once; ``files`` lists them in the order first read."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self._meshes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._scenes = SceneLoader()
        self._yaml: dict[str, YamlDocument] = {}
        self._parsed: dict[str, ParsedFile | None] = {}
        self.notes: list[str] = []
        self.nodes = 0  # YAML nodes read, aliases expanded (see charge)
        self.sub_bodies = 0
        self.plugin_track = ""  # what a simulator plugin's track was refused as, if one was

    def path_of(self, file: BodyFile, node: YMap, what: str) -> Path | None:
        uri = file.string(node, "uri", what)
        if not uri:
            file.add(node, what, "uri is missing")
            return None
        if uri.startswith("${") or "://" in uri:
            file.add(node, what, f"uri {uri!r} needs a Choreonoid path variable or a url; give a relative path", "uri")
            return None
        if "metadata" in node:  # a unit or an up axis would scale or turn the mesh: refuse, not guess
            file.add(node, what, "metadata (length unit, upper axis) is not read: give the mesh in metres, Z up",
                     "metadata")  # fmt: skip
            return None
        path = Path(os.path.normpath(file.path.parent / uri))
        try:  # the folders first: a refusal says nothing of whether the file exists
            allowed_path(path, f"{what} file", shown=uri)
        except AccessDenied as exc:
            file.add(node, what, str(exc), "uri")
            return None
        if not os.path.lexists(path):
            file.add(node, what, f"uri {uri!r}: no such file {path}", "uri")
            return None
        return path  # a folder or a FIFO is refused by the reader, which reads regular files only

    def is_yaml(self, path: Path) -> bool:
        return path.suffix.lower() in YAML_SUFFIXES

    def geometry(self, file: BodyFile, node: YMap, placed: np.ndarray) -> list[Shape]:
        """The shapes of a mesh or scene file, placed in the link frame."""
        path = self.path_of(file, node, "Resource")
        if path is None:
            return []
        if self.is_yaml(path):
            file.add(node, "Resource", "a body or YAML file cannot be a Shape's geometry; use a Resource element")
            return []
        if path.suffix.lower() == ".wrl":
            return self._scene(file, node, path, placed)
        if file.key(node, "node"):
            file.add(node, "Resource", f"node selection is read in VRML, YAML and body files, not in {path.name}")
        try:
            mesh = self._mesh(path)
        except (MeshError, HrpsimError) as exc:
            file.add(node, "Resource", str(exc), "uri")
            return []
        shape = place_mesh(mesh, placed)
        return [shape] if shape is not None else []

    def elements(self, file: BodyFile, node: YMap) -> tuple[Any, BodyFile] | None:
        """The elements a YAML or body file holds (the anchored ``node`` if named), and the file
        context to read them in (their uris are relative to that file)."""
        path = self.path_of(file, node, "Resource")
        if path is None:
            return None
        document = self._document(file, node, path)
        if document is None:
            return None
        name = file.string(node, "node", "Resource")
        value, size = document.anchored(name) if name else (document.top, document.size)
        if value is None:
            file.add(node, "Resource", f"{path.name} has no node anchored as &{name}", "node")
            return None
        self.charge(size, file.where(node))
        return value, file.inside(path)

    # --- bounds ---

    def charge(self, nodes: int, where: str) -> None:
        """Count ``nodes`` more YAML nodes read for the body (a SubBody's, or a Resource's at each
        use); past MAX_NODES in all the reading stops."""
        self.nodes += nodes
        if self.nodes > MAX_NODES:
            raise ReadingBound(
                f"{where}: the body and what it includes (SubBodies, and YAML Resources each time one is "
                f"used) hold more than {MAX_NODES} YAML nodes once aliases are expanded; a body holds far fewer"
            )

    def count_sub_body(self, where: str) -> None:
        self.sub_bodies += 1
        if self.sub_bodies > MAX_SUB_BODIES:
            raise ReadingBound(
                f"{where}: the body reads more than {MAX_SUB_BODIES} SubBodies in all (one including the next twice?)"
            )

    # --- the files ---

    def note(self, path: Path) -> None:
        """Count ``path`` among the files the body was read from."""
        if str(path) not in self.files:
            self.files.append(str(path))

    def _mesh(self, path: Path) -> tuple[np.ndarray, np.ndarray]:
        key = str(path)
        if key not in self._meshes:
            self._meshes[key] = load_mesh(path)
            self.note(path)
        return self._meshes[key]

    def _document(self, file: BodyFile, node: YMap, path: Path) -> YamlDocument | None:
        key = str(path)
        if key not in self._yaml:
            try:
                self._yaml[key] = load_yaml(path)
            except HrpsimError as exc:
                file.add(node, "Resource", str(exc), "uri")
                return None
            self.note(path)
        return self._yaml[key]

    def _parse_scene(self, file: BodyFile, node: YMap, path: Path) -> ParsedFile | None:
        try:
            return self._scenes.load(path)
        except AccessDenied as exc:  # not a file the rules let be read: nothing to mend
            file.add(node, "Resource", str(exc), "uri")
            return None
        except HrpsimError as exc:
            refusal = str(exc)
        # Choreonoid's VRML reader takes ``DEF Transform {`` (a type where the name belongs, in
        # Tank's tank.wrl) as an unnamed node of that type.
        text = decode(read_regular(path, "VRML file"))
        mended = _TYPE_AS_NAME.sub(r"\1 {", text)
        if mended == text:
            file.add(node, "Resource", refusal, "uri")
            return None
        try:
            parsed = parse_text(mended, str(path))
        except HrpsimError:
            file.add(node, "Resource", refusal, "uri")
            return None
        resolve_file(parsed, self._scenes.problems)
        self.note(path)
        self.notes.append(f"{path}: 'DEF <node type> {{' read as an unnamed node of that type, as Choreonoid does")
        return parsed

    def _scene(self, file: BodyFile, node: YMap, path: Path, placed: np.ndarray) -> list[Shape]:
        key = str(path)
        if key not in self._parsed:
            self._parsed[key] = self._parse_scene(file, node, path)
        parsed = self._parsed[key]
        if parsed is None:
            return []
        for loaded in self._scenes.files:
            self.note(Path(loaded))
        name = file.string(node, "node", "Resource")
        roots: list[tuple[Node, np.ndarray]] = [(s, np.eye(4)) for s in parsed.statements if isinstance(s, Node)]
        if name:
            found = _find_named(roots, name)
            if found is None:
                file.add(node, "Resource", f"{path.name} has no node DEF'd as {name!r}", "node")
                return []
            roots = [found]
        walk = _SceneWalk(self._scenes, FieldReader(file.problems))
        for root, above in roots:
            walk.visit(root, placed @ above)
        file.problems.extend(self._scenes.problems)
        self._scenes.problems.clear()
        return walk.shapes


def _find_named(nodes: list[tuple[Node, np.ndarray]], name: str) -> tuple[Node, np.ndarray] | None:
    """The node DEF'd as ``name`` (depth first) and its placement: the linear part of what is
    above it and of its own transform, without translations (Choreonoid's rule)."""
    stack = list(reversed(nodes))
    while stack:
        node, linear = stack.pop()
        own = transform_matrix(node, FieldReader([])) if node.type == "Transform" else np.eye(4)
        if node.def_name == name:
            placement = np.eye(4)
            placement[:3, :3] = linear[:3, :3] @ own[:3, :3]
            return _Detached(node), placement
        below = np.eye(4)
        below[:3, :3] = linear[:3, :3] @ own[:3, :3]
        children = node.get("children") if node.type in ("Transform", *_GROUPS) else None
        items = [children] if isinstance(children, Node) else children if isinstance(children, list) else []
        stack.extend((c, below) for c in reversed(items) if isinstance(c, Node))
    return None


class _Detached:
    """A named node whose own transform is already in its placement: only its children count."""

    def __init__(self, node: Node) -> None:
        self.node = node


class _SceneWalk:
    """Shapes of a plain VRML scene (Transforms, groups, Switch, Inline, Shape)."""

    def __init__(self, loader: SceneLoader, fields: FieldReader) -> None:
        self.loader = loader
        self.fields = fields
        self.shapes: list[Shape] = []
        self.depth = 0

    def visit(self, node: Node | _Detached, transform: np.ndarray) -> None:
        if isinstance(node, _Detached):
            if node.node.type in ("Transform", *_GROUPS):
                self._children(node.node, transform)
            else:
                self.visit(node.node, transform)
            return
        if node.type == "Transform":
            self._children(node, transform @ transform_matrix(node, self.fields))
        elif node.type in _GROUPS:
            self._children(node, transform)
        elif node.type == "Switch":
            choices = self.fields.nodes(node, "choice")
            which = self.fields.int(node, "whichChoice", -1)
            for child in choices[which : which + 1] if 0 <= which < len(choices) else []:
                self.visit(child, transform)
        elif node.type == "Inline":
            parsed = self.loader.load_url(self.fields.strings(node, "url"), node.where, "Inline")
            if parsed is not None and self.depth < 16:
                self.depth += 1
                for statement in parsed.statements:
                    if isinstance(statement, Node):
                        self.visit(statement, transform)
                self.depth -= 1
        elif node.type == "Shape":
            shape = shape_of(node, transform, self.fields)
            if shape is not None:
                self.shapes.append(shape)

    def _children(self, node: Node, transform: np.ndarray) -> None:
        for child in self.fields.nodes(node, "children"):
            self.visit(child, transform)
