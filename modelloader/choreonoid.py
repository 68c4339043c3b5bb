"""Choreonoid body files (``format: ChoreonoidBody``, format versions 1.0 and 2.0) -> BodyInfo.

Choreonoid's rules, as its loader applies them:

- keys in camelCase (1.0) or snake_case (2.0) alike; angles in degrees unless
  ``angleUnit: radian`` (format 1.0 only);
- ``links`` is a list (or a mapping from node type to node); the root is ``rootLink`` or the
  first link; each other link names its ``parent``; links are ordered pre-order from the root,
  children in file order;
- joints and masses as modelloader.body_joints reads them;
- a ``SubBody`` link includes another body file (``prefix``/``suffix`` on its names,
  ``jointIdOffset`` on its joint ids) under ``parent``, its root overridden by the node's keys;
- ``extraJoints`` close loops: ``ball``, ``piston``, ``hinge`` and ``fixed``, with Choreonoid's
  keys (``link1Name``, ``link2Name``, ``link1LocalPos``/``translationInLink1`` ...,
  ``jointAxis``/``axis`` (default X, as Choreonoid's), ``rotationInLink1`` turning the axis into
  link1's frame).

Elements and devices: modelloader.body_elements, body_geometry, body_resources, body_devices.
Every problem is collected with its file and line and raised as one ModelError.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hrpsim.bodyinfo import Body, ExtraJoint, Link, Sensor
from hrpsim.errors import HrpsimError, ModelError
from hrpsim.modelloader.body_elements import ElementWalk, LinkParts
from hrpsim.modelloader.body_joints import initial_value, read_joint, read_mass
from hrpsim.modelloader.body_resources import ReadingBound, Resources
from hrpsim.modelloader.body_values import BodyFile
from hrpsim.modelloader.body_variants import track_advice
from hrpsim.modelloader.body_yaml import YMap, load_yaml
from hrpsim.modelloader.sensor_names import repeat_message, repeated_names

EXTRA_JOINTS = ("ball", "piston", "hinge", "fixed")  # Choreonoid's ExtraJoint types
EXTRA_AXIS = (1.0, 0.0, 0.0)  # Choreonoid's default axis of a hinge or piston
_MAX_SUB_BODY_DEPTH = 16


def load_choreonoid_body(path: str | Path) -> Body:
    """Read a Choreonoid body file; ModelError listing every problem (file:line: element)."""
    path = Path(path).resolve()
    problems: list[str] = []
    resources = Resources()
    try:
        body = _BodyReader(path, problems, resources, []).read()
    except ModelError as exc:  # a problem that stops the reading: the ones found so far come along
        _add_new(problems, exc.problems)
    if problems:
        # what to do about a plugin's track goes with the headline: it is advice, not another problem
        advice = f"; {track_advice(path, resources.plugin_track)}" if resources.plugin_track else ""
        if len(problems) == 1:
            raise ModelError(problems[0] + advice, problems)
        raise ModelError(f"{path}: cannot load Choreonoid body ({len(problems)} problems){advice}", problems)
    body.metadata["files"] = [str(path), *[f for f in resources.files if f != str(path)]]
    return body


@dataclass
class _Entry:
    link: Link
    parent: str
    node: YMap
    parts: LinkParts = field(default_factory=LinkParts)
    initial: float | None = None  # the joint's starting value, when the file gives one
    file: BodyFile | None = None  # the file the link is written in


class _BodyReader:
    def __init__(self, path: Path, problems: list[str], resources: Resources, stack: list[Path]) -> None:
        self.path = path
        self.problems = problems
        self.resources = resources
        self.stack = [*stack, path]
        self.file = BodyFile(path, problems)
        self.entries: list[_Entry] = []
        self.extra: list[ExtraJoint] = []
        self.notes: list[str] = []

    def read(self) -> Body:
        document = load_yaml(self.path)
        self.resources.charge(document.size, str(self.path))
        top = document.top
        if not isinstance(top, YMap):
            raise ModelError(f"{self.path}: a body file is a YAML mapping with format: ChoreonoidBody")
        self._header(top)
        self._links(top)
        ordered = self._tree(top)
        _check_id_range([e for e in ordered if e.file is self.file], len(ordered))
        name = self.file.string(top, "name", "body") or self.path.stem
        body = Body(name=name, source=str(self.path), format="choreonoid")
        body.links = [e.link for e in ordered]
        if len(self.stack) == 1:  # once the whole body is known: a SubBody's tracks wait for it
            self._number_tracks(body.links)
            _check_id_repeats(ordered)
        body.sensors = _sensors(ordered, self.notes, self.problems)
        body.extra_joints = self.extra + self._extra_joints(top, {e.link.name for e in ordered})
        body.static = len(body.links) == 1 and body.root.joint_type == "fixed"
        body.metadata = self._metadata(ordered)
        return body

    def _links(self, top: YMap) -> None:
        links = top.get("links")
        if isinstance(links, list) and links:
            for node in links:
                self._link_node(node, "")
        elif isinstance(links, YMap):
            for kind, node in links.items():
                self._link_node(node, kind)
        else:
            self.file.add(top, "links", "a body needs a non-empty list of links", "links" if "links" in top else None)
            raise ModelError(self.problems[-1], self.problems)

    def _metadata(self, ordered: list[_Entry]) -> dict[str, object]:
        """Notes (what was kept aside or read differently), and the joints' initial values."""
        notes = self.file.notes + self.notes + [n for e in ordered for n in e.parts.notes] + self.resources.notes
        metadata: dict[str, object] = {"notes": list(dict.fromkeys(notes))} if notes else {}
        initial = {e.link.joint_label: e.initial for e in ordered if e.initial is not None}
        if initial:  # BodyInfo has no field for it; a project's ``joints:`` sets starting values
            metadata["initial_joint_values"] = initial
        return metadata

    def _header(self, top: YMap) -> None:
        fmt = top.get("format")
        if fmt != "ChoreonoidBody":
            if "modelFile" in top or "model_file" in top:
                message = "names a model in another format (modelFile); load that file itself"
            else:
                message = f"format is {fmt!r}, expected ChoreonoidBody"
            self.file.add(top, "format", message, "format")
        version = self.file.number(top, "formatVersion", "header")
        if version is None:
            self.file.add(top, "formatVersion", "the format version (1.0 or 2.0) is missing")
        elif version >= 2.1:
            self.file.add(
                top, "formatVersion", f"version {version} is newer than 2.0", self.file.key(top, "formatVersion")
            )
        unit = self.file.string(top, "angleUnit", "header", "degree")
        if unit not in ("degree", "radian"):
            self.file.add(top, "angleUnit", f"{unit!r} is neither degree nor radian", self.file.key(top, "angleUnit"))
        elif unit == "radian" and version is not None and version >= 2.0:
            self.file.add(top, "angleUnit", "radian is not allowed in format 2.0", self.file.key(top, "angleUnit"))
        self.file.degree = unit != "radian"

    # --- links ---

    def _link_node(self, node: object, kind: str) -> None:
        if not isinstance(node, YMap):
            self.file.add(node, "links", "each link must be a mapping")
            return
        kind = str(node.get("type", kind) or "Link")
        if kind == "Link":
            self._add_link(node, Link(name=self.file.string(node, "name", "link")), sub_body=False)
        elif kind == "SubBody":
            self._sub_body(node)
        elif kind == "ContinuousTrack":
            self.resources.plugin_track = "ContinuousTrack links"
            self.file.add(node, "ContinuousTrack", "a chain of track links whose first link floats free of its parent "
                          "cannot be simulated by hrpsim; use jointType: pseudo_continuous_track")  # fmt: skip
        elif kind != "Skip":
            self.file.add(node, f"link type {kind!r}", "not one of Link, SubBody, ContinuousTrack, Skip", "type")

    def _add_link(self, node: YMap, link: Link, *, sub_body: bool) -> _Entry:
        label = f"link {link.name!r}"
        if not link.name:
            self.file.add(node, "link", "name is missing")
        joint_name = self.file.string(node, "jointName", label)
        if joint_name:
            link.joint_name = joint_name
        translation = self.file.translation(node, label)
        if translation is not None:
            link.translation = translation
        rotation = self.file.rotation(node, label)
        if rotation is not None:
            link.rotation = rotation
        read_joint(self.file, node, link, label)
        entry = _Entry(link, self.file.string(node, "parent", label), node, file=self.file)
        entry.initial = initial_value(self.file, node, link, label)
        walk = ElementWalk(self.resources, len(self.entries), entry.parts)
        walk.contents(self.file, node.get("elements"), np.eye(4), "both")
        collision, visual = entry.parts.shapes()
        link.shapes = [*link.shapes, *collision] if sub_body else collision
        link.visuals = [*link.visuals, *visual] if sub_body and visual else visual
        if not sub_body:
            read_mass(self.file, node, link, entry.parts.rigid, label)
        self.entries.append(entry)
        return entry

    def _sub_body(self, node: YMap) -> None:
        path = self.resources.path_of(self.file, node, "SubBody")
        if path is None:
            return
        if path in self.stack:
            self.file.add(node, "SubBody", f"{path.name} includes itself")
            return
        if len(self.stack) > _MAX_SUB_BODY_DEPTH:
            self.file.add(node, "SubBody", f"SubBodies nest more than {_MAX_SUB_BODY_DEPTH} deep")
            return
        self.resources.count_sub_body(self.file.where(node))
        self.resources.note(path)
        sub = _BodyReader(path, self.problems, self.resources, self.stack)
        try:
            sub_body = sub.read()
        except ReadingBound:
            raise
        except ModelError as exc:
            _add_new(self.problems, exc.problems)
            self.file.add(node, "SubBody", f"{path.name} cannot be loaded", "uri")
            return
        except HrpsimError as exc:  # a file the reading rules refuse: a FIFO, one too large
            self.file.add(node, "SubBody", str(exc), "uri")
            return
        prefix, suffix = self.file.string(node, "prefix", "SubBody"), self.file.string(node, "suffix", "SubBody")
        offset = self.file.integer(node, "jointIdOffset", "SubBody", 0, 0)
        entries = sub._ordered
        for entry in entries:
            entry.link.name = prefix + entry.link.name + suffix
            if entry.link.joint_name:
                entry.link.joint_name = prefix + entry.link.joint_name + suffix
            if entry.link.joint_id >= 0:
                entry.link.joint_id += offset
            entry.parent = prefix + entry.parent + suffix if entry.parent else ""
            for sensor, _ in entry.parts.sensors:
                if sensor.name:  # an unnamed one is named after its (prefixed) link once loaded
                    sensor.name = self.file.string(node, "devicePrefix", "SubBody", prefix) + sensor.name
        root = entries[0]
        root.parent = self.file.string(node, "parent", "SubBody")
        root.node = node
        self.notes.extend(n for n in sub_body.metadata.get("notes", []))
        self.extra.extend(sub_body.extra_joints)
        start = len(self.entries)
        self.entries.extend(entries[1:])
        overriding = self._add_link(node, root.link, sub_body=True)
        overriding.parts.sensors[:0] = root.parts.sensors
        overriding.parent = root.parent
        overriding.initial = root.initial if overriding.initial is None else overriding.initial
        self.entries.insert(start, self.entries.pop())

    # --- the tree ---

    def _tree(self, top: YMap) -> list[_Entry]:
        if not self.entries:
            if not self.problems:
                self.file.add(top, "links", "no link is defined")
            raise ModelError(self.problems[-1], self.problems)
        by_name: dict[str, _Entry] = {}
        for entry in self.entries:
            if entry.link.name in by_name:
                self.file.add(entry.node, f"link {entry.link.name!r}", "a second link of this name")
            by_name.setdefault(entry.link.name, entry)
        root_name = self.file.string(top, "rootLink", "body") or (self.entries[0].link.name if self.entries else "")
        if root_name not in by_name:
            self.file.add(top, "rootLink", f"link {root_name!r} is not defined", self.file.key(top, "rootLink"))
            raise ModelError(self.problems[-1], self.problems)
        children: dict[str, list[_Entry]] = {}
        for entry in self.entries:
            name = entry.link.name
            if name == root_name:
                continue
            if not entry.parent:
                self.file.add(entry.node, f"link {name!r}", "parent is missing (only the root link has none)")
            elif entry.parent not in by_name:
                self.file.add(entry.node, f"link {name!r}", f"parent link {entry.parent!r} is not defined", "parent")
            else:
                children.setdefault(entry.parent, []).append(entry)
        ordered: list[_Entry] = []
        reached: set[int] = set()  # by identity: comparing entries compares every field
        stack = [(by_name[root_name], -1)]
        while stack:
            entry, parent = stack.pop()
            if id(entry) in reached:  # a link under itself, through a name two links share
                continue
            reached.add(id(entry))
            entry.link.parent = parent
            index = len(ordered)
            ordered.append(entry)
            for sensor, _ in entry.parts.sensors:
                sensor.link = index
            stack.extend((child, index) for child in reversed(children.get(entry.link.name, [])))
        unreached = [e.link.name for e in self.entries if id(e) not in reached and e.parent in by_name]
        if unreached:
            self.file.add(top, "links", f"links {', '.join(unreached)} form a loop not attached to the root")
        self._ordered = ordered
        return ordered

    def _number_tracks(self, links: list[Link]) -> None:
        """Choreonoid drives a pseudo continuous track through its link, hrpsim through a joint id:
        a track without ``jointId`` gets the next one after the file's, in link order."""
        next_id = max((lk.joint_id for lk in links), default=-1) + 1
        for link in links:
            if link.joint_type == "crawler" and link.joint_id < 0:
                link.joint_id, next_id = next_id, next_id + 1
                self.notes.append(f"{self.path}: track {link.name!r} has no jointId; it is joint {link.joint_id}")

    def _extra_joints(self, top: YMap, names: set[str]) -> list[ExtraJoint]:
        value = self.file.raw(top, "extraJoints")
        if value is not None and not isinstance(value, list):
            self.file.add(top, "extraJoints", "must be a list of mappings", self.file.key(top, "extraJoints"))
        result = []
        for index, node in enumerate(value if isinstance(value, list) else []):
            label = f"extra joint {index}"
            if not isinstance(node, YMap):
                self.file.add(value, label, "must be a mapping (link1Name, link2Name, jointType ...)")
                continue
            link1, link2 = self.file.string(node, "link1Name", label), self.file.string(node, "link2Name", label)
            kind = self.file.string(node, "jointType", label)
            for link in (link1, link2):
                if link not in names:
                    self.file.add(node, label, f"link {link!r} is not defined")
            if kind not in EXTRA_JOINTS:
                self.file.add(node, label, f"jointType {kind!r} is not one of {', '.join(EXTRA_JOINTS)}")
                continue
            result.append(
                ExtraJoint(
                    name=self.file.string(node, "name", label) or f"{link1}-{link2}",
                    link1=link1,
                    link2=link2,
                    type=kind,
                    axis=self._extra_axis(node, label),
                    point1=self.file.vector(node, ("link1LocalPos", "translationInLink1"), label, 3, (0, 0, 0)),
                    point2=self.file.vector(node, ("link2LocalPos", "translationInLink2"), label, 3, (0, 0, 0)),
                )
            )
        return result

    def _extra_axis(self, node: YMap, label: str) -> np.ndarray:
        """The axis in link1's frame: ``jointAxis`` turned by ``rotationInLink1`` (link2's side of
        it is where the starting pose puts it, as Choreonoid's ODE simulator takes it)."""
        axis = self.file.vector(node, ("jointAxis", "axis"), label, 3, EXTRA_AXIS)
        if not np.linalg.norm(axis) > 1e-9:
            self.file.add(node, label, "the joint axis is zero", self.file.key(node, ("jointAxis", "axis")))
            axis = np.array(EXTRA_AXIS)
        rotation = self.file.rotation(node, label, "rotationInLink1")
        axis = axis / np.linalg.norm(axis)
        return rotation @ axis if rotation is not None else axis


def _check_id_range(own: list[_Entry], count: int) -> None:
    """A file's own jointIds (before a SubBody's offset) count its joints: below its ``count`` links."""
    for entry in own:
        if entry.link.joint_id >= count:
            why = f"jointId {entry.link.joint_id} is beyond the {count} link(s) of this body (ids count joints from 0)"
            entry.file.add(entry.node, f"link {entry.link.name!r}", why, "jointId")


def _check_id_repeats(ordered: list[_Entry]) -> None:
    """Each jointId names one joint: hrpsim commands joints by id."""
    owners: dict[int, str] = {}
    for entry in ordered:
        link = entry.link
        if link.joint_id >= 0 and link.joint_id in owners:
            why = f"jointId {link.joint_id} is that of {owners[link.joint_id]!r} too"
            entry.file.add(entry.node, f"link {link.name!r}", why, "jointId")
        owners.setdefault(link.joint_id, link.name)


def _add_new(problems: list[str], more: list[str]) -> None:
    """Append the problems of ``more`` that ``problems`` lacks (a SubBody's reach its includer)."""
    known = set(problems)
    problems.extend(p for p in dict.fromkeys(more) if p not in known)


def _sensors(ordered: list[_Entry], notes: list[str], problems: list[str]) -> list[Sensor]:
    """Sensors in link order (Choreonoid sorts devices so). Ids are numbered per type: a file's id
    is kept; a missing one, or one a sensor of the same type already has (Choreonoid allows
    that, e.g. two JACO2 arms on one AizuSpider), becomes the next free id, with a note. A name
    given twice is a problem at the second (modelloader.sensor_names)."""
    found = [(s, where) for entry in ordered for s, where in entry.parts.sensors]
    where_of = {id(s): where for s, where in found}
    links = [entry.link.name for entry in ordered]
    for sensor, earlier in repeated_names(s for s, _ in found):
        problems.append(
            f"{where_of[id(sensor)]}: {repeat_message(sensor, earlier, links)} (first at {where_of[id(earlier)]})"
        )
    used: dict[str, set[int]] = {}
    renumber = []
    for sensor, where in found:
        taken = used.setdefault(sensor.type, set())
        if sensor.id in taken:
            notes.append(f"{where}: {sensor.type} sensor {sensor.name!r}: id {sensor.id} is taken; numbered anew")
        if sensor.id < 0 or sensor.id in taken:
            renumber.append(sensor)
        else:
            taken.add(sensor.id)
    for sensor in renumber:
        taken = used[sensor.type]
        sensor.id = next(i for i in range(len(taken) + 1) if i not in taken)
        taken.add(sensor.id)
    return [s for s, _ in found]


__all__ = ["load_choreonoid_body"]
