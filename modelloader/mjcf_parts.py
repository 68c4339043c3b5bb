"""What hangs on MJCF bodies, read from the compiled model into links already built (mjcf.py):
mass properties, geoms, sensors, actuators' gear, connect and weld equalities (ball and fixed
extra joints) and contact exclusions.

Positions are shifted by each body's link offset (its frame sits at its joint). MuJoCo's
cylinders and capsules lie along their Z, BodyInfo's along Y. A geom that never collides
(``contype`` and ``conaffinity`` 0) is drawn only: its link then lists every geom in ``visuals``.
A material's colour is the geom's when it has one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hrpsim.bodyinfo import Actuator, Appearance, Body, ExtraJoint, Link, Sensor, Shape
from hrpsim.conventions import MIN_INERTIA, MIN_MASS, Z_TO_Y
from hrpsim.modelloader.mjcf_source import MjcfSource, quat_matrix
from hrpsim.sensor_types import called

if TYPE_CHECKING:
    from hrpsim.modelloader.mjcf_checks import MujocoOnly

HELD_TOLERANCE = 1e-6  # m, rad: an equality holds the pose the file draws when its target is this close


def sensor_type_of(mujoco: Any, sensor_type: int) -> tuple[str, str | None]:
    """An MJCF sensor's element (``accelerometer``) and the BodyInfo type whose descriptor names it
    (hrpsim/sensor_types.py, ``aliases.mjcf``), None for a kind BodyInfo lacks."""
    element = mujoco.mjtSensor(sensor_type).name.removeprefix("mjSENS_").lower()
    kinds = called("mjcf").get(element)
    return element, kinds[0] if kinds else None


def geom_shape(source: MjcfSource, g: int, offset: np.ndarray, only: MujocoOnly | None = None) -> Shape | None:
    """Geom ``g`` as a Shape in its link's frame; None for a kind BodyInfo lacks, which is named
    among what only MuJoCo simulates (``only``) or else refused."""
    m, t = source.model, source.mujoco.mjtGeom
    kind, size = int(m.geom_type[g]), m.geom_size[g]
    rotation = quat_matrix(source.mujoco, m.geom_quat[g])
    shape = Shape("box", translation=np.array(m.geom_pos[g], float) - offset, rotation=rotation)
    if kind == t.mjGEOM_BOX:
        shape.size = 2.0 * np.array(size, float)
    elif kind == t.mjGEOM_SPHERE:
        shape.kind, shape.radius = "sphere", float(size[0])
    elif kind in (t.mjGEOM_CYLINDER, t.mjGEOM_CAPSULE):
        shape.kind = "cylinder" if kind == t.mjGEOM_CYLINDER else "capsule"
        shape.radius, shape.height = float(size[0]), 2.0 * float(size[1])
        shape.rotation = rotation @ Z_TO_Y.T
    elif kind == t.mjGEOM_PLANE:
        shape.kind = "plane"
    elif kind == t.mjGEOM_MESH:
        shape.kind = "mesh"
        shape.vertices, shape.triangles = _mesh(m, int(m.geom_dataid[g]))
    else:
        what = t(kind).name.removeprefix("mjGEOM_").lower()
        what = f"{'an' if what[0] in 'aeiou' else 'a'} {what} geom"
        if only is not None:
            only.add(
                ("geom",),
                source.name("geom", g),
                g,
                f"{what} (BodyInfo's shapes are box, sphere, cylinder, capsule, plane and mesh)",
            )
        else:
            source.refuse(
                ("geom",),
                source.name("geom", g),
                g,
                f"{what} has no BodyInfo form (box, sphere, cylinder, capsule, plane and mesh have): "
                "replace it by one of those",
            )
        return None
    shape.appearance = _appearance(m, g)
    return shape


def _mesh(m: Any, mesh: int) -> tuple[np.ndarray, np.ndarray]:
    start, count = int(m.mesh_vertadr[mesh]), int(m.mesh_vertnum[mesh])
    first, faces = int(m.mesh_faceadr[mesh]), int(m.mesh_facenum[mesh])
    vertices = np.array(m.mesh_vert[start : start + count], float)
    return vertices, np.array(m.mesh_face[first : first + faces], np.int32)


def _appearance(m: Any, g: int) -> Appearance:
    material = int(m.geom_matid[g])
    rgba = np.array(m.mat_rgba[material] if material >= 0 else m.geom_rgba[g], float)
    return Appearance(diffuse=rgba[:3].copy(), transparency=float(1.0 - rgba[3]))


def world_shapes(source: MjcfSource) -> list[Shape]:
    """The world body's own geoms (its environment), in the world frame."""
    m = source.model
    shapes = [geom_shape(source, g, np.zeros(3)) for g in range(m.ngeom) if m.geom_bodyid[g] == 0]
    return [s for s in shapes if s is not None]


def pose_the_file_draws(source: MjcfSource) -> Any:
    data = source.mujoco.MjData(source.model)
    source.mujoco.mj_kinematics(source.model, data)
    return data


def holds_drawn_pose(source: MjcfSource, e: int, data: Any) -> bool:
    """Whether equality ``e`` (a connect or a weld) already holds in the pose the file draws:
    then it is the BodyInfo extra joint that holds the starting pose (a ball, a fixed)."""
    m, mj = source.model, source.mujoco
    ids = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
    on_sites = m.eq_objtype[e] == mj.mjtObj.mjOBJ_SITE
    weld = m.eq_type[e] == mj.mjtEq.mjEQ_WELD
    if on_sites:
        positions = [data.site_xpos[i] for i in ids]
        rotations = [data.site_xmat[i].reshape(3, 3) for i in ids]
    else:
        data_ = np.array(m.eq_data[e], float)
        r1, r2 = (data.xmat[i].reshape(3, 3) for i in ids)
        if weld:  # anchor on body2 (data 0:3); where body1 holds it (3:6) and body2's rotation (6:10)
            positions = [data.xpos[ids[0]] + r1 @ data_[3:6], data.xpos[ids[1]] + r2 @ data_[0:3]]
            held = np.empty(9)
            mj.mju_quat2Mat(held, data_[6:10])
            rotations = [r1 @ held.reshape(3, 3), r2]
        else:  # anchors on body1 (0:3) and body2 (3:6)
            positions = [data.xpos[ids[0]] + r1 @ data_[0:3], data.xpos[ids[1]] + r2 @ data_[3:6]]
            rotations = [r1, r1]
    if np.linalg.norm(positions[0] - positions[1]) > HELD_TOLERANCE:
        return False
    return not weld or float(np.abs(rotations[0] - rotations[1]).max()) < HELD_TOLERANCE


class PartsReader:
    """Fills a Body's links (one per MuJoCo body or joint) with what the compiled model hangs on them."""

    def __init__(
        self,
        source: MjcfSource,
        body: Body,
        body_link: dict[int, int],
        offset: dict[int, np.ndarray],
        joint_links: dict[int, list[int]],
        only: MujocoOnly,
    ) -> None:
        self.source, self.model, self.mujoco = source, source.model, source.mujoco
        self.body, self.body_link, self.offset, self.joint_links = body, body_link, offset, joint_links
        self.only = only

    def read(self) -> None:
        for b, index in self.body_link.items():
            if b > 0:
                self._mass(b, index)
        self._geoms()
        self._sensors()
        self._actuators()
        self._equalities()
        self._exclusions()

    def _mass(self, b: int, index: int) -> None:
        m, link = self.model, self.body.links[index]
        rotation = quat_matrix(self.mujoco, m.body_iquat[b])
        moments = np.array(m.body_inertia[b], float)
        if self.source.written_by_hrpsim and m.body_mass[b] == MIN_MASS and np.all(moments == MIN_INERTIA):
            return  # the stand-in hrpsim model convert writes for a massless link (MuJoCo refuses none)
        link.mass = float(m.body_mass[b])
        link.com = np.array(m.body_ipos[b], float) - self.offset[b]
        link.inertia = rotation @ np.diag(moments) @ rotation.T

    def _geoms(self) -> None:
        m = self.model
        drawn_only: set[int] = set()
        for g in range(m.ngeom):
            b = int(m.geom_bodyid[g])
            if b == 0:
                continue  # the environment (load_mjcf(..., world=True))
            shape = geom_shape(self.source, g, self.offset[b], self.only)
            if shape is None:
                continue
            link = self.body.links[self.body_link[b]]
            if m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0:
                drawn_only.add(self.body_link[b])
            else:
                link.shapes.append(shape)
            link.visuals.append(shape)
        for index, link in enumerate(self.body.links):
            if index not in drawn_only:
                link.visuals = []  # drawn as its collision shapes

    # --- sensors -------------------------------------------------------------------------------

    def _sensors(self) -> None:
        m = self.model
        by_site: dict[tuple[int, str], Sensor] = {}
        counts: dict[str, int] = {}
        for s in range(m.nsensor):
            _, kind = sensor_type_of(self.mujoco, int(m.sensor_type[s]))
            if kind is None or m.sensor_objtype[s] != self.mujoco.mjtObj.mjOBJ_SITE:
                continue  # named among the left-out parts (mjcf_checks.py)
            site = int(m.sensor_objid[s])
            if (site, kind) in by_site:
                continue  # a torque beside its force: one force/torque sensor
            b = int(m.site_bodyid[site])
            if b not in self.body_link or b == 0:
                continue  # on the world: named among the left-out parts
            sensor = Sensor(self._sensor_name(s, site, kind), kind, counts.get(kind, 0), self.body_link[b])
            sensor.translation = np.array(m.site_pos[site], float) - self.offset[b]
            sensor.rotation = quat_matrix(self.mujoco, m.site_quat[site])
            counts[kind] = sensor.id + 1
            by_site[(site, kind)] = sensor
            self.body.sensors.append(sensor)

    def _sensor_name(self, s: int, site: int, kind: str) -> str:
        """A force/torque sensor is named after its site (it stands for both); a gyro or an
        accelerometer by its own name. hrpsim-written files name sites ``sensor/NAME``."""
        site_name = self.source.name("site", site)
        if self.source.written_by_hrpsim:
            return site_name.removeprefix("sensor/")
        if kind == "force":
            return site_name or f"site{site}"
        return self.source.name("sensor", s) or site_name or f"{kind}{s}"

    # --- actuators, equalities, exclusions ------------------------------------------------------

    def _actuators(self) -> None:
        m = self.model
        for a in range(m.nu):
            if m.actuator_trntype[a] != self.mujoco.mjtTrn.mjTRN_JOINT:
                continue  # MuJoCo's only (mjcf_checks.py)
            links = [self.body.links[i] for i in self.joint_links.get(int(m.actuator_trnid[a][0]), [])]
            if len(links) != 1:
                continue  # a ball joint's actuator: MuJoCo's only (mjcf_checks.py)
            link, gear = links[0], abs(float(m.actuator_gear[a][0]))
            params: dict[str, Any] = {"gear": gear}
            if m.actuator_ctrllimited[a]:
                params["ctrlrange"] = [float(v) for v in m.actuator_ctrlrange[a]]
            name = self.source.name("actuator", a) or f"actuator{a}"
            self.body.actuators.append(Actuator(joint=link.joint_label, name=name, params=params))
            if gear > 0.0 and link.gear_ratio == 1.0:
                link.rotor_inertia /= gear**2  # MuJoCo's armature is the inertia seen at the joint
                link.gear_ratio = gear
            self._torque_limits(a, link)

    def _torque_limits(self, a: int, link: Link) -> None:
        """The torque the actuator can give at its joint bounds the joint's torque: its force range,
        or a plain motor's control range, times its gear (and a motor's gain)."""
        m, mj = self.model, self.mujoco
        gear = float(m.actuator_gear[a][0])
        plain_motor = (
            m.actuator_dyntype[a] == mj.mjtDyn.mjDYN_NONE
            and m.actuator_gaintype[a] == mj.mjtGain.mjGAIN_FIXED
            and m.actuator_biastype[a] == mj.mjtBias.mjBIAS_NONE
        )
        if m.actuator_forcelimited[a]:
            ends = np.array(m.actuator_forcerange[a], float) * gear
        elif plain_motor and m.actuator_ctrllimited[a]:
            ends = np.array(m.actuator_ctrlrange[a], float) * gear * float(m.actuator_gainprm[a][0])
        else:
            return
        link.torque_lower = max(link.torque_lower, float(ends.min()))
        link.torque_upper = min(link.torque_upper, float(ends.max()))

    def _equalities(self) -> None:
        """Active connects and welds that hold the pose the file draws: ball and fixed extra joints
        (the rest are MuJoCo's only, or inactive: mjcf_checks.py)."""
        m, eq = self.model, self.mujoco.mjtEq
        start = pose_the_file_draws(self.source)
        kinds = {int(eq.mjEQ_CONNECT): ("connect", "ball"), int(eq.mjEQ_WELD): ("weld", "fixed")}
        for e in range(m.neq):
            tag, kind = kinds.get(int(m.eq_type[e]), ("", ""))
            if not kind or not m.eq_active0[e] or not holds_drawn_pose(self.source, e, start):
                continue
            bodies, points = self._equality_ends(e)
            name = self.source.name("equality", e) or f"{tag}{e}"
            if not all(b in self.body_link for b in bodies):
                self.only.add(
                    (tag,), name, e, f"a {tag} to the world (the world is a link only when several bodies hang from it)"
                )
                continue
            link1, link2 = (self.body.links[self.body_link[b]].name for b in bodies)
            self.body.extra_joints.append(ExtraJoint(name, link1, link2, kind, point1=points[0], point2=points[1]))

    def _equality_ends(self, e: int) -> tuple[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
        """Both bodies of a connect or weld and its anchor in each link's frame (MuJoCo's compiler
        gives a connect's in each body's; a weld's on body2, and where body1 holds it)."""
        m = self.model
        ids = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        data = np.array(m.eq_data[e], float)
        if m.eq_objtype[e] == self.mujoco.mjtObj.mjOBJ_SITE:
            bodies = tuple(int(m.site_bodyid[i]) for i in ids)
            anchors = [np.array(m.site_pos[i], float) for i in ids]
        elif m.eq_type[e] == self.mujoco.mjtEq.mjEQ_WELD:
            bodies, anchors = ids, [data[3:6], data[0:3]]
        else:
            bodies, anchors = ids, [data[0:3], data[3:6]]
        return bodies, (anchors[0] - self.offset[bodies[0]], anchors[1] - self.offset[bodies[1]])  # type: ignore[return-value]

    def _exclusions(self) -> None:
        m = self.model
        for signature in m.exclude_signature[: m.nexclude]:
            pair = int(signature) >> 16, int(signature) & 0xFFFF
            if all(b in self.body_link for b in pair):
                names = tuple(self.body.links[self.body_link[b]].name for b in pair)
                self.body.collision_exclusions.append((names[0], names[1]))
