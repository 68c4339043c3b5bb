"""COLLADA 1.5 reader (``.dae``, and ``.zae`` zips) with the OpenRAVE robot extensions, into a
BodyInfo Body.

COLLADA frames are re-expressed in BodyInfo's: a link's frame sits at its joint (the origin of the
<attachment_full> frame) and keeps the orientation of the COLLADA link frame. Everything is first
placed in world coordinates at zero joint values, then expressed in those link frames. Angles in
the file (limits, <rotate>, speeds) are degrees and become radians; formula constants are already
radians. Controller order is OpenRAVE's ``<index semantic="OpenRAVE">``; mimic joints (driven by a
``<formula>``) get joint_id -1.
"""

from __future__ import annotations

import io
import math
import zipfile
import zlib
from pathlib import Path

import numpy as np
from lxml import etree

from hrpsim.bodyinfo import Actuator, Appearance, Body, Link, Manipulator, Mimic, Sensor, Shape
from hrpsim.errors import ModelError
from hrpsim.files import current_policy
from hrpsim.modelloader.collada_geometry import Document, parse_document, read_geometry, scene_roots, transform
from hrpsim.modelloader.collada_kinematics import KinLink, read_formulas, read_joints, read_links
from hrpsim.modelloader.collada_sensors import sensor_params, sensor_types
from hrpsim.modelloader.collada_system import (
    interface_type,
    read_actuators,
    read_axis_infos,
    read_collision,
    read_manipulators,
    read_sensors,
)
from hrpsim.modelloader.urdf_xml import Problems, floats, inverse, number, parse_xml, read_file

ACTUATOR_FIELDS = {"gear_ratio": "gear_ratio", "rotor_inertia": "rotor_inertia", "torque_constant": "torque_const"}


def load_collada(path: str | Path) -> Body:
    """Read a .dae or .zae file; raise ModelError listing every problem (file:line: element path)."""
    path = Path(path).resolve()
    data, label = _dae_bytes(path)
    problems = Problems(label, "COLLADA")
    document = parse_document(data, problems)
    body = _ColladaReader(document, path).read()
    problems.raise_if_any()
    return body


def _dae_bytes(path: Path) -> tuple[bytes, Path]:
    """The document's bytes and the name to report it by (``x.zae!member.dae`` inside a zip)."""
    raw = read_file(path, "COLLADA")
    if path.suffix.lower() != ".zae" and not raw.startswith(b"PK\x03\x04"):
        return raw, path
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        names = archive.namelist()
        budget = _UnpackBudget(path, current_policy().max_unpacked_bytes)
        member = _zae_root(archive, names, path, budget)
        return budget.read(archive, member), Path(f"{path}!{member}")
    except (zipfile.BadZipFile, KeyError, OSError, ValueError, zlib.error) as exc:
        raise ModelError(f"{path}: cannot read COLLADA zip (.zae): {exc}") from None


class _UnpackBudget:
    """How many bytes the members read from one archive may unpack to, all together: a small
    zip can expand to gigabytes, so members are read in bounded pieces, never whole."""

    def __init__(self, path: Path, limit: int) -> None:
        self.path, self.left, self.limit = path, limit, limit

    def read(self, archive: zipfile.ZipFile, member: str) -> bytes:
        if archive.getinfo(member).file_size > self.left:
            self._refuse(member)
        with archive.open(member) as stream:
            data = stream.read(self.left + 1)
        if len(data) > self.left:
            self._refuse(member)
        self.left -= len(data)
        return data

    def _refuse(self, member: str) -> None:
        raise ModelError(
            f"{self.path}!{member}: the archive unpacks to more than {self.limit} bytes "
            f"(the limit for a .zae); not read"
        )


def _zae_root(archive: zipfile.ZipFile, names: list[str], path: Path, budget: _UnpackBudget) -> str:
    if "manifest.xml" in names:
        manifest = _manifest(budget.read(archive, "manifest.xml"), path)
        root = (manifest.findtext("dae_root") if manifest.tag != "dae_root" else manifest.text) or ""
        root = root.strip().removeprefix("./")
        if root in names:
            return root
        raise ModelError(f"{path}!manifest.xml: dae_root {root!r} is not in the archive (members: {names[:20]})")
    daes = [n for n in names if n.lower().endswith(".dae") and "/" not in n]
    if len(daes) != 1:
        raise ModelError(f"{path}: no manifest.xml and {len(daes)} top-level .dae files; cannot tell which to load")
    return daes[0]


def _manifest(data: bytes, path: Path) -> etree._Element:
    """The manifest's root element. A manifest holds one file name; a DOCTYPE in it can only
    declare entities (the way to expand a few bytes into gigabytes), so it is refused."""
    where = Path(f"{path}!manifest.xml")
    if b"<!DOCTYPE" in data.upper():
        raise ModelError(f"{where}: declares a DOCTYPE, which a .zae manifest must not; it should hold only <dae_root>")
    return parse_xml(data, where, "COLLADA manifest")


class _ColladaReader:
    def __init__(self, document: Document, path: Path) -> None:
        self.doc = document
        self.path = path
        self.problems = document.problems
        self.node_links: dict[etree._Element, int] = {}  # visual scene node -> link index

    def read(self) -> Body:
        model = self._kinematics_model()
        if model is None:
            return self._scene_only()
        joints = read_joints(model, self.doc)
        self.klinks = read_links(model, joints, self.doc)
        if not self.klinks:
            self.problems.raise_if_any()
        self.frames = [self._bodyinfo_frame(k) for k in self.klinks]
        self.sid_to_index = {k.sid: i for i, k in enumerate(self.klinks)}
        links = [self._link(i, k) for i, k in enumerate(self.klinks)]
        self._check_names(links)
        body = Body(name=model.get("name") or model.get("id", self.path.stem), links=links)
        body.source, body.format = str(self.path), "collada"
        body.metadata["files"] = [str(self.path)]
        self._joint_ids(body, model)
        self._mass(body)
        self._geometry(body, model)
        self._extensions(body, model)
        return body

    def _scene_only(self) -> Body:
        """A document without kinematics (a plain mesh scene, an environment): one static link
        holding everything its visual scene places."""
        scene = self.doc.root.find("library_visual_scenes/visual_scene")
        name = (scene.get("name") or scene.get("id")) if scene is not None else None
        link = Link(name=name or self.path.stem, joint_type="fixed")
        body = Body(name=link.name, links=[link], static=True, source=str(self.path), format="collada")
        body.metadata["files"] = [str(self.path)]
        self.frames = [np.eye(4)]

        def place(node: etree._Element, frame: np.ndarray, _link: int) -> None:
            for instance in node.findall("instance_geometry"):
                shape = self._shape(instance, frame)
                if shape is not None:
                    link.shapes.append(shape)

        for top in scene_roots(self.doc):
            self._walk(top, np.eye(4), 0, place)
        if not link.shapes:
            self.problems.add(self.doc.root, "no <kinematics_model> and no geometry in the visual scene")
        return body

    def _kinematics_model(self) -> etree._Element | None:
        for instance in self.doc.root.iter("instance_kinematics_model"):
            model = self.doc.ids.get((instance.get("url") or "").lstrip("#"))
            if model is not None and model.tag == "kinematics_model":
                return model
        return next(self.doc.root.iter("kinematics_model"), None)

    @staticmethod
    def _bodyinfo_frame(klink: KinLink) -> np.ndarray:
        """World frame of the BodyInfo link: at the joint, oriented like the COLLADA link."""
        frame = klink.frame.copy()
        if klink.joint is not None:
            frame[:3, 3] = klink.joint_frame[:3, 3]
        return frame

    def _local(self, index: int, world: np.ndarray) -> np.ndarray:
        return inverse(self.frames[index]) @ world

    def _link(self, index: int, klink: KinLink) -> Link:
        link = Link(name=klink.name, parent=klink.parent)
        if klink.parent < 0:
            link.joint_type = "fixed" if self._static_root(klink) else "free"
            link.translation, link.rotation = self.frames[index][:3, 3].copy(), self.frames[index][:3, :3].copy()
            return link
        relative = self._local(klink.parent, self.frames[index])
        link.translation, link.rotation = relative[:3, 3].copy(), relative[:3, :3].copy()
        joint = klink.joint
        link.joint_name = joint.name
        link.joint_type = "rotate" if joint.kind == "revolute" else "slide"
        world_axis = klink.joint_frame[:3, :3] @ joint.axis
        link.joint_axis = self.frames[index][:3, :3].T @ world_axis
        to_si = math.radians if joint.kind == "revolute" else float
        link.q_lower, link.q_upper = to_si(joint.lower), to_si(joint.upper)
        return link

    def _static_root(self, klink: KinLink) -> bool:
        """A root whose rigid body says <dynamic>false</dynamic> is fixed in the world."""
        for rigid in self.doc.root.iter("rigid_body"):
            if rigid.get("name") == klink.name:
                return (rigid.findtext("technique_common/dynamic") or "true").strip().lower() == "false"
        return False

    def _check_names(self, links: list[Link]) -> None:
        seen: set[str] = set()
        for link, klink in zip(links, self.klinks, strict=True):
            if link.name in seen:
                self.problems.add(klink.element, f"link name {link.name!r} is used twice")
            seen.add(link.name)

    # --- controller order, speeds and mimic joints ----------------------------------------------

    def _joint_ids(self, body: Body, model: etree._Element) -> None:
        infos = read_axis_infos(self.doc)
        sid_to_link = {k.joint.sid: i for i, k in enumerate(self.klinks) if k.joint is not None}
        for formula in read_formulas(model, self.doc):
            target, source = sid_to_link.get(formula.target), sid_to_link.get(formula.source)
            if target is None or source is None:
                self.problems.add(model, f"formula links unknown joints {formula.target!r} / {formula.source!r}")
                continue
            source_name = body.links[source].joint_name
            body.links[target].mimic = Mimic(source_name, formula.multiplier, formula.offset)
        movable = []
        for order, (sid, index) in enumerate(sid_to_link.items()):
            link, info = body.links[index], infos.get(sid)
            if info is not None and info.speed is not None and info.speed > 0:  # 0: not given
                speed = math.radians(info.speed) if link.joint_type == "rotate" else info.speed * self.doc.meter
                link.dq_lower, link.dq_upper = -abs(speed), abs(speed)
            if link.mimic is None:
                position = info.index if info is not None and info.index is not None and info.index >= 0 else None
                movable.append((position is None, position or 0, order, link))
        for joint_id, (*_key, link) in enumerate(sorted(movable, key=lambda item: item[:3])):
            link.joint_id = joint_id

    # --- mass --------------------------------------------------------------------------------------

    def _mass(self, body: Body) -> None:
        names = {link.name: i for i, link in enumerate(body.links)}
        node_frames = self._node_frames()
        for physics, base, targets in self._physics_models(node_frames):
            for rigid in physics.findall("rigid_body"):
                index = names.get(rigid.get("name", ""))
                if index is None:  # fall back on the node the scene binds the rigid body to
                    node = self.doc.ids.get(targets.get(rigid.get("sid"), ""))
                    index = names.get(node.get("name", "")) if node is not None else None
                if index is None:
                    self.problems.add(rigid, f"rigid_body {rigid.get('name')!r} matches no link")
                    continue
                self._rigid_body(rigid, base, index, body.links[index])

    def _physics_models(self, node_frames: dict) -> list[tuple[etree._Element, np.ndarray, dict[str, str]]]:
        """(physics_model, frame its mass frames are given in, rigid body sid -> node id) for each
        instantiated physics model; without a physics scene, each library model at the origin."""
        found = []
        for instance in self.doc.root.iter("instance_physics_model"):
            physics = self.doc.ref(instance.get("url"), instance, "instance_physics_model")
            if physics is None:
                continue
            parent = self.doc.ids.get((instance.get("parent") or "").lstrip("#"))
            base = node_frames.get(parent, np.eye(4)) if parent is not None else np.eye(4)
            targets = {r.get("body"): r.get("target", "").lstrip("#") for r in instance.findall("instance_rigid_body")}
            found.append((physics, base, targets))
        if not found:
            found = [(physics, np.eye(4), {}) for physics in self.doc.root.iter("physics_model")]
        return found

    def _rigid_body(self, rigid: etree._Element, base: np.ndarray, index: int, link: Link) -> None:
        common = rigid.find("technique_common")
        if common is None:
            return
        mass_element = common.find("mass")
        if mass_element is not None:
            mass = number(mass_element.text, self.problems, mass_element, "mass")
            if mass is not None and mass <= 0.0:
                self.problems.add(mass_element, f"mass {mass} is not positive")
            elif mass is not None:
                link.mass = mass
        frame_element = common.find("mass_frame")
        # mass frames are in the frame of the physics model's parent node, at zero joint values
        mass_frame = base @ (transform(frame_element, self.doc) if frame_element is not None else np.eye(4))
        local = self._local(index, mass_frame)
        link.com = local[:3, 3].copy()
        inertia_element = common.find("inertia")
        if inertia_element is not None:
            moments = floats(inertia_element.text, 3, self.problems, inertia_element, "inertia")
            if moments is not None:
                if np.any(moments < 0):
                    self.problems.add(inertia_element, f"inertia {moments.tolist()} has a negative moment")
                rotation = local[:3, :3]
                link.inertia = rotation @ np.diag(moments) @ rotation.T

    # --- geometry ----------------------------------------------------------------------------------

    def _node_frames(self) -> dict[etree._Element, np.ndarray]:
        frames: dict[etree._Element, np.ndarray] = {}
        for top in scene_roots(self.doc):
            self._walk(top, np.eye(4), 0, lambda node, frame, _link: frames.setdefault(node, frame))
        return frames

    def _walk(self, node: etree._Element, frame: np.ndarray, link: int, visit, depth: int = 0) -> None:
        if depth > 64:
            self.problems.add(node, "visual scene nested more than 64 deep (an instance_node cycle?)")
            return
        own = frame @ transform(node, self.doc)
        link = self.node_links.get(node, link)
        visit(node, own, link)
        for child in node:
            if child.tag == "node":
                self._walk(child, own, link, visit, depth + 1)
            elif child.tag == "instance_node":
                target = self.doc.ref(child.get("url"), child, "instance_node")
                if target is not None:
                    self._walk(target, own, link, visit, depth + 1)

    def _geometry(self, body: Body, model: etree._Element) -> None:
        names = {link.name: i for i, link in enumerate(body.links)}
        for node in self.doc.root.iter("node"):
            if node.get("name") in names:
                self.node_links[node] = names[node.get("name")]
        for instance in self.doc.root.iter("instance_rigid_body"):
            node = self.doc.ids.get((instance.get("target") or "").lstrip("#"))
            rigid_name = self._rigid_name(instance.get("body"))
            if node is not None and rigid_name in names:
                self.node_links.setdefault(node, names[rigid_name])

        def place(node: etree._Element, frame: np.ndarray, link: int) -> None:
            for instance in node.findall("instance_geometry"):
                shape = self._shape(instance, self._local(link, frame))
                if shape is not None:
                    body.links[link].shapes.append(shape)

        for top in scene_roots(self.doc):
            self._walk(top, np.eye(4), 0, place)
        self._collision_geometry(body, model)

    def _rigid_name(self, sid: str | None) -> str:
        for rigid in self.doc.root.iter("rigid_body"):
            if rigid.get("sid") == sid:
                return rigid.get("name", "")
        return ""

    def _shape(self, instance: etree._Element, pose: np.ndarray) -> Shape | None:
        shape = self._mesh_shape(instance.get("url"), instance, pose)
        if shape is not None:
            shape.appearance = self._appearance(instance)
        return shape

    def _mesh_shape(self, url: str | None, where: etree._Element, pose: np.ndarray) -> Shape | None:
        geometry = self.doc.ref(url, where, "geometry")
        mesh = read_geometry(geometry, self.doc) if geometry is not None else None
        if mesh is None:
            return None
        shape = Shape(kind="mesh", translation=pose[:3, 3].copy(), rotation=pose[:3, :3].copy())
        shape.vertices, shape.triangles = mesh
        return shape

    def _appearance(self, instance: etree._Element) -> Appearance:
        appearance = Appearance()
        bound = instance.find("bind_material/technique_common/instance_material")
        material = self.doc.ids.get((bound.get("target") or "").lstrip("#")) if bound is not None else None
        effect_ref = material.find("instance_effect") if material is not None else None
        effect = self.doc.ids.get((effect_ref.get("url") or "").lstrip("#")) if effect_ref is not None else None
        if effect is None:
            return appearance
        for shading in ("phong", "lambert", "blinn", "constant"):
            color = effect.find(f"profile_COMMON/technique/{shading}/diffuse/color")
            if color is not None:
                values = floats(color.text, None, self.problems, color, "diffuse color")
                if values is not None and values.size >= 3:
                    appearance.diffuse = np.clip(values[:3], 0.0, 1.0)
                break
        return appearance

    def _collision_geometry(self, body: Body, model: etree._Element) -> None:
        """Geometry bound with type="environment" replaces a link's collision shapes; the visual
        scene's then stays for drawing only. ``self`` geometry is for self-collision checks,
        which BodyInfo does not model separately."""
        collision = read_collision(model)
        bound: dict[int, list[Shape]] = {}
        for kind, link_sid, url, element in collision.bindings:
            index = self.sid_to_index.get(link_sid)
            if index is None:
                self.problems.add(element, f"bind_instance_geometry names unknown link {link_sid!r}")
                continue
            if kind != "environment":
                continue
            pose = self._local(index, self.klinks[index].frame)
            shape = self._mesh_shape(url, element, pose)
            if shape is not None:
                bound.setdefault(index, []).append(shape)
        for index, shapes in bound.items():
            body.links[index].visuals = body.links[index].shapes
            body.links[index].shapes = shapes
        for sid0, sid1, element in collision.ignore_pairs:
            pair = [self.klinks[self.sid_to_index[s]].name for s in (sid0, sid1) if s in self.sid_to_index]
            if len(pair) != 2:
                self.problems.add(element, f"ignore_link_pair names unknown links {sid0!r}, {sid1!r}")
                continue
            body.collision_exclusions.append((pair[0], pair[1]))

    # --- OpenRAVE extensions -----------------------------------------------------------------------

    def _link_index(self, sid: str, element: etree._Element, what: str) -> int | None:
        index = self.sid_to_index.get(sid)
        if index is None:
            self.problems.add(element, f"{what} names unknown link {sid!r}")
        return index

    def _joint_name(self, sid: str) -> str | None:
        for klink in self.klinks:
            if klink.joint is not None and klink.joint.sid == sid:
                return klink.joint.name
        return None

    def _extensions(self, body: Body, model: etree._Element) -> None:
        kind = interface_type(self.doc)
        if kind:
            body.metadata["interface_type"] = kind
        self._manipulators(body)
        self._sensors(body)
        self._actuators(body)

    def _manipulators(self, body: Body) -> None:
        for spec in read_manipulators(self.doc):
            base = self._link_index(spec.origin_link, spec.element, "manipulator frame_origin")
            tip = self._link_index(spec.tip_link, spec.element, "manipulator frame_tip")
            if base is None or tip is None:
                continue
            pose = self._local(tip, self.klinks[tip].frame @ spec.tip)
            joints = [self._joint_name(sid) or sid for sid in spec.gripper_joints]
            body.manipulators.append(
                Manipulator(
                    spec.name,
                    body.links[base].name,
                    body.links[tip].name,
                    pose[:3, 3].copy(),
                    pose[:3, :3].copy(),
                    joints,
                    spec.closing_directions,
                    spec.ik_solvers,
                )
            )
            if spec.direction is not None:
                body.metadata.setdefault("manipulator_directions", {})[spec.name] = spec.direction

    def _sensors(self, body: Body) -> None:
        counts: dict[str, int] = {}
        for spec in read_sensors(self.doc):
            index = self._link_index(spec.link, spec.element, "attach_sensor")
            if index is None or spec.definition is None:
                continue
            kinds = sensor_types(spec.definition)
            if not kinds:
                body.metadata.setdefault("unsupported_sensors", []).append(spec.name)
                continue
            pose = self._local(index, self.klinks[index].frame @ spec.pose)
            for kind in kinds:
                sensor_id = counts.get(kind, 0)
                counts[kind] = sensor_id + 1
                body.sensors.append(
                    Sensor(
                        spec.name,
                        kind,
                        sensor_id,
                        index,
                        pose[:3, 3].copy(),
                        pose[:3, :3].copy(),
                        sensor_params(spec.definition, kind),
                    )
                )

    def _actuators(self, body: Body) -> None:
        by_sid = {k.joint.sid: i for i, k in enumerate(self.klinks) if k.joint is not None}
        for spec in read_actuators(self.doc):
            index = by_sid.get(spec.joint)
            if index is None:
                self.problems.add(spec.element, f"attach_actuator binds unknown joint {spec.joint!r}")
                continue
            link = body.links[index]
            for source, target in ACTUATOR_FIELDS.items():
                if isinstance(spec.params.get(source), float):
                    setattr(link, target, spec.params[source])
            body.actuators.append(Actuator(link.joint_name, spec.name, spec.params))


__all__ = ["load_collada"]
