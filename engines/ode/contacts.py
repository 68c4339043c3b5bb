"""Contacts: which models touch which, with what surface, and the contact joints each step.

Every model has its own space inside the world's space. Only the pairs given collide (with
their friction, restitution and soft ERP/CFM): the project's ``collision_pairs()``, which are
every two models with the defaults when a YAML project has no ``collisions`` section. A pair
naming one model twice turns on that model's self-collision, which never includes a link and
its parent, nor the link pairs the model excludes. A pair naming links (``links_a``,
``links_b``, as GrxUI's link pairs) makes contacts between those links only. Friction always
uses ODE's pyramid approximation (``Approx1``), so ``mu`` is a coefficient, turned so that its
limit is the same in every direction, with static and sliding coefficients remembered per
contact (:mod:`hrpsim.engines.ode.friction`). A crawler link's contacts move their surface
along (joint axis x contact normal) at the crawler's commanded speed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import ode

from hrpsim.conventions import excluded_link_pairs
from hrpsim.engines.ode import friction
from hrpsim.engines.ode import params as odeparams
from hrpsim.engines.ode import trimesh as odemesh
from hrpsim.engines.ode.contact_reduction import reduce_contacts
from hrpsim.engines.ode.model import OdeModel
from hrpsim.errors import ConfigError
from hrpsim.project import CollisionPair

LinkKey = tuple[str, int]  # (model name, link index)
SOFTNESS_FLAGS = odeparams.CONTACT_BOUNCE | odeparams.CONTACT_SOFT_ERP | odeparams.CONTACT_SOFT_CFM


@dataclass
class Surface:
    mode: int
    mu: float
    sliding_mu: float
    bounce: float
    soft_erp: float
    soft_cfm: float

    @classmethod
    def from_pair(cls, pair: CollisionPair) -> Surface:
        mode = odeparams.CONTACT_APPROX1
        if pair.restitution > 0.0:
            mode |= odeparams.CONTACT_BOUNCE
        if pair.soft_erp is not None:
            mode |= odeparams.CONTACT_SOFT_ERP
        if pair.soft_cfm is not None:
            mode |= odeparams.CONTACT_SOFT_CFM
        sliding = pair.friction if pair.sliding_friction is None else pair.sliding_friction
        return cls(
            mode,
            float(pair.friction),
            float(sliding),
            float(pair.restitution),
            float(pair.soft_erp or 0.0),
            float(pair.soft_cfm or 0.0),
        )


class ContactGenerator:
    """Collides the world's space and creates this step's contact joints."""

    def __init__(
        self,
        world: ode.World,
        space: ode.SpaceBase,
        models: list[OdeModel],
        pairs: list[CollisionPair],
        crawler_speed: Callable[[str, int], float],
    ) -> None:
        self.world = world
        self.space = space
        self.group = ode.JointGroup()
        self.models = {m.name: m for m in models}
        self.crawler_speed = crawler_speed
        self.surfaces: dict[tuple[str, str], Surface] = {}
        self.self_colliding: list[OdeModel] = []
        # model pair -> (link indices of the first, of the second); None: every link
        self._links: dict[tuple[str, str], tuple[frozenset[int] | None, frozenset[int] | None]] = {}
        for pair in pairs:
            surface = Surface.from_pair(pair)
            self.surfaces[(pair.a, pair.b)] = self.surfaces[(pair.b, pair.a)] = surface
            if pair.a != pair.b and (pair.links_a or pair.links_b):
                links_a, links_b = self._indices(pair.a, pair.links_a), self._indices(pair.b, pair.links_b)
                self._links[(pair.a, pair.b)], self._links[(pair.b, pair.a)] = (links_a, links_b), (links_b, links_a)
            if pair.a == pair.b and pair.a in self.models and not self.models[pair.a].static:
                self.self_colliding.append(self.models[pair.a])
        self._excluded = {m.name: excluded_link_pairs(m.info) for m in self.self_colliding}
        self._surface: Surface | None = None
        self.count = 0
        self.found: list[tuple[ode.GeomObject, ode.GeomObject, list[ode.Contact]]] = []  # this step's, by geoms
        # The contact patches of the step being taken and of the last one, by pair of links.
        self._patches: dict[tuple[LinkKey, LinkKey], friction.Patch] = {}
        self._last_patches: dict[tuple[LinkKey, LinkKey], friction.Patch] = {}
        # per pair of geoms: its pair of links, and whether either geom is on a crawler link
        self._pairs: dict[tuple[ode.GeomObject, ode.GeomObject], tuple[tuple[LinkKey, LinkKey], bool]] = {}

    def _indices(self, name: str, links: list[str]) -> frozenset[int] | None:
        model = self.models.get(name)
        if not links or model is None:
            return None
        try:
            return frozenset(model.info.link_index(link) for link in links)
        except KeyError as exc:
            raise ConfigError(f"collision pair of model {name!r}: {exc.args[0]}") from None

    def admits(self, name1: str, link1: int, name2: str, link2: int) -> bool:
        """Whether contacts between these two links of two models are wanted."""
        only = self._links.get((name1, name2))
        if only is None:
            return True
        return (only[0] is None or link1 in only[0]) and (only[1] is None or link2 in only[1])

    def release(self) -> None:
        """Destroy this step's contact joints and drop every ODE reference (see World.close)."""
        self.begin_step()
        self._last_patches, self._pairs = {}, {}
        self.models, self.self_colliding, self._surface = {}, [], None
        self.world = self.space = None

    def _drop_feedback(self) -> None:
        # pyode frees a joint's feedback buffer through the ODE joint: that must happen before the
        # group destroys the joint, or freeing it later aborts the process.
        for patch in self._patches.values():
            patch.drop_feedback()

    def __del__(self) -> None:
        self._drop_feedback()  # freed without release(): before the group goes, whatever the order

    def collide(self) -> int:
        """Empty last step's contacts and make this step's; returns how many were made."""
        self.begin_step()
        self.found = []
        self._error: BaseException | None = None
        self._touching: dict[tuple[LinkKey, LinkKey], tuple] = {}
        self.space.collide(None, self._near_spaces)
        for model in self.self_colliding:
            self._surface = self.surfaces[(model.name, model.name)]
            model.space.collide(model.name, self._near_self)
        if self._error is not None:  # pyode prints and drops exceptions raised inside its callbacks
            raise self._error
        for g1, g2, surface, contacts in self._touching.values():
            contacts = reduce_contacts(contacts)
            self.found.append((g1, g2, contacts))  # named only when an observer asks (contact_points)
            self._join(contacts, surface, g1, g2)
        return self.count

    def points(self) -> list[dict[str, Any]]:
        """Engine.contact_points of this step's contacts: ODE's normal points into the first geom."""
        out = []
        for g1, g2, contacts in self.found:
            a, b = self._link_name(g1), self._link_name(g2)
            for contact in contacts:
                position, normal, depth = contact.getContactGeomParams()[:3]
                out.append({"a": a, "b": b, "position": list(position), "normal": list(normal), "depth": depth})
        return out

    def _link_name(self, geom: ode.GeomObject) -> str:
        return f"{geom.model_name}/{self.models[geom.model_name].info.links[geom.link_index].name}"

    def memory(self) -> dict[tuple[LinkKey, LinkKey], tuple]:
        """What the next step's friction takes from this step's contacts, as plain data (a snapshot)."""
        return {key: patch.memory() for key, patch in self._patches.items()}

    def restore(self, memory: dict[tuple[LinkKey, LinkKey], tuple]) -> None:
        """The contacts as a snapshot left them: this step's joints go, and the patches remembered
        stand in for them when the next step reads back the last one's."""
        self._drop_feedback()
        self.group.empty()
        self._patches = {key: friction.Patch.remembered(patch) for key, patch in memory.items()}
        self._last_patches, self.found, self.count = {}, [], 0

    def begin_step(self) -> None:
        """Remember what last step's contacts did, then destroy their joints."""
        for patch in self._patches.values():
            patch.read_back()
        self.group.empty()
        self._last_patches, self._patches = self._patches, {}
        self.count = 0

    def _near_spaces(self, _args: object, s1: ode.GeomObject, s2: ode.GeomObject) -> None:
        surface = self.surfaces.get((s1.model_name, s2.model_name))
        if surface is None:
            return
        self._surface = surface
        near = self._near_links if (s1.model_name, s2.model_name) in self._links else self._near_geoms
        ode.collide2(s1, s2, None, near)

    def _near_links(self, _args: object, g1: ode.GeomObject, g2: ode.GeomObject) -> None:
        if self.admits(g1.model_name, g1.link_index, g2.model_name, g2.link_index):
            self._near_geoms(None, g1, g2)

    def _near_self(self, name: str, g1: ode.GeomObject, g2: ode.GeomObject) -> None:
        a, b = g1.link_index, g2.link_index
        if (min(a, b), max(a, b)) in self._excluded[name]:
            return
        self._near_geoms(None, g1, g2)

    def _near_geoms(self, _args: object, g1: ode.GeomObject, g2: ode.GeomObject) -> None:
        try:
            self._make_contacts(g1, g2)
        except Exception as exc:
            self._error = exc

    def _make_contacts(self, g1: ode.GeomObject, g2: ode.GeomObject) -> None:
        # A fixed root is a kinematic body: against the environment or another one, nothing can move.
        if immovable(g1.getBody()) and immovable(g2.getBody()):
            return
        contacts = odemesh.collide(g1, g2, spanning=True)
        if not contacts:
            return
        # Gathered per pair of links (in the order met, which fixes the normals' sense) and
        # joined once every geom has been met: a link's shapes make one patch (contact_reduction).
        links = ((g1.model_name, g1.link_index), (g2.model_name, g2.link_index))
        touching = self._touching.get(links)
        if touching is None:
            self._touching[links] = (g1, g2, self._surface, contacts)
        else:
            touching[3].extend(contacts)

    def _join(self, contacts: list[ode.Contact], surface: Surface, g1: ode.GeomObject, g2: ode.GeomObject) -> None:
        """Contact joints for this step between the geoms' bodies, with the pair's surface."""
        if not contacts:  # nor a patch: an empty one would make next step's contacts of these links old
            return
        b1, b2 = g1.getBody(), g2.getBody()
        pair = self._pairs.get((g1, g2))
        if pair is None:
            pair = self._pairs[(g1, g2)] = (link_pair(g1, g2), self._on_crawler(g1) or self._on_crawler(g2))
        key, on_crawler = pair
        crawler = (self._crawler_of(g1, 1.0) or self._crawler_of(g2, -1.0)) if on_crawler else None
        if crawler is not None:
            for contact in contacts:
                set_surface(contact, surface)
                drive_surface(contact, surface, *crawler)
                ode.ContactJoint(self.world, self.group, contact).attach(b1, b2)
            self.count += len(contacts)
            return
        self._join_with_friction(contacts, surface, b1, b2, key)

    def _join_with_friction(
        self,
        contacts: list[ode.Contact],
        surface: Surface,
        b1: ode.Body | None,
        b2: ode.Body | None,
        key: tuple[LinkKey, LinkKey],
    ) -> None:
        """Contact joints with Coulomb friction, in the patch of their pair of links."""
        patch = self._patches.get(key)
        if patch is None:
            patch = self._patches[key] = friction.Patch(self._last_patches.get(key))
        patch.apply(contacts, surface.mode, surface.mu, surface.sliding_mu, b1, b2)
        world, group, joints, soft = self.world, self.group, patch.joints, surface.mode & SOFTNESS_FLAGS
        for contact in contacts:
            if soft:
                set_softness(contact, surface)
            joint = ode.ContactJoint(world, group, contact)
            joint.attach(b1, b2)
            joint.setFeedback(True)  # read back in begin_step(): the friction's direction and limit next step
            joints.append(joint)
        self.count += len(contacts)

    def _on_crawler(self, geom: ode.GeomObject) -> bool:
        sim = self.models[geom.model_name].links[geom.link_index]
        return sim.link.joint_type == "crawler" and sim.body is not None

    def _crawler_of(self, geom: ode.GeomObject, sign: float) -> tuple[np.ndarray, float, float] | None:
        model = self.models[geom.model_name]
        sim = model.links[geom.link_index]
        if sim.link.joint_type != "crawler" or sim.body is None:
            return None
        axis = np.array(sim.body.getRotation()).reshape(3, 3) @ sim.axis
        joint_index = model.joint_names.index(sim.link.joint_label) if sim.link.joint_id >= 0 else -1
        speed = self.crawler_speed(model.name, joint_index) if joint_index >= 0 else 0.0
        return axis, speed, sign


def link_pair(g1: ode.GeomObject, g2: ode.GeomObject) -> tuple[LinkKey, LinkKey]:
    """The two geoms' links, in a fixed order. Friction memories go by pair of links, not geoms: the
    collision service names links, and a link's contacts with another form one patch whatever
    shapes make them."""
    a, b = (g1.model_name, g1.link_index), (g2.model_name, g2.link_index)
    return (a, b) if a < b else (b, a)


def immovable(body: ode.Body | None) -> bool:
    """A static geom's (no body) or a kinematic body's: contacts cannot move it."""
    return body is None or body.isKinematic()


def set_surface(contact: ode.Contact, surface: Surface) -> None:
    """The pair's surface parameters on one contact (static friction coefficient, bounce, softness)."""
    contact.setMode(surface.mode)
    contact.setMu(surface.mu)
    set_softness(contact, surface)


def set_softness(contact: ode.Contact, surface: Surface) -> None:
    """The pair's restitution and soft ERP/CFM on one contact (its mode says which apply)."""
    if surface.mode & odeparams.CONTACT_BOUNCE:
        contact.setBounce(surface.bounce)
    if surface.mode & odeparams.CONTACT_SOFT_ERP:
        contact.setSoftERP(surface.soft_erp)
    if surface.mode & odeparams.CONTACT_SOFT_CFM:
        contact.setSoftCFM(surface.soft_cfm)


def drive_surface(contact: ode.Contact, surface: Surface, axis: np.ndarray, speed: float, sign: float) -> None:
    normal = np.array(contact.getContactGeomParams()[1])
    direction = np.cross(axis, normal)
    norm = np.linalg.norm(direction)
    if norm < 1e-5:
        return
    contact.setMode(surface.mode | odeparams.CONTACT_FDIR1 | odeparams.CONTACT_MOTION1 | odeparams.CONTACT_MU2)
    contact.setFDir1(tuple(float(v) for v in direction * (sign / norm)))
    contact.setMotion1(float(speed))
    contact.setMu2(surface.mu)
