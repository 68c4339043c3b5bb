"""``world: {collision: service}``: the simulator's contacts come from the collision service.

:class:`RemoteContacts` stands in for :class:`hrpsim.engines.ode.contacts.ContactGenerator` (same
``collide() -> int``, ``count`` and ``group``): built once with the world's models, it registers
their BodyInfo and the project's collision pairs with the service (OpenHRP's arrangement, where
the DynamicsSimulator asks the CollisionDetector), and each tick sends every moving link's pose in
one message and turns the answer into ODE contact joints with the pair's surface (friction,
restitution, soft ERP/CFM, crawler surface motion), exactly as the built-in generator does. A
service that dies mid-run is waited for, and the world registered with its successor
(engines/ode/service_link.py).

Pairs follow the built-in rules: the project's ``collision_pairs()``; a model named twice
collides with itself except at adjacent links; two static models never collide. A contact
record is ODE's ``dContactGeom`` for (link1's geom, link2's geom).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import ode

from hrpsim.client import Client
from hrpsim.engines.ode.contact_reduction import reduce_contacts
from hrpsim.engines.ode.contacts import ContactGenerator, immovable
from hrpsim.engines.ode.model import OdeModel
from hrpsim.engines.ode.service_link import ServiceLink, Waiting
from hrpsim.errors import HrpsimError, NotFound
from hrpsim.project import COLLISION_WAIT_S, CollisionPair

DEFAULT_SERVICE = "collision"
DEFAULT_TIMEOUT = 10.0  # s per request: the service answers in milliseconds; this only catches a dead peer

log = logging.getLogger("hrpsim.simserver.remote_contacts")


def model_link_poses(model: OdeModel) -> np.ndarray:
    """(n_links, 4, 4) world poses of the model's link frames, as the collision service takes them."""
    poses = np.tile(np.eye(4), (len(model.links), 1, 1))
    for i, sim in enumerate(model.links):
        p, r = model.link_origin(sim)
        poses[i, :3, :3] = r
        poses[i, :3, 3] = p
    return poses


def registration(models: list[OdeModel], pairs: list[CollisionPair]) -> Callable[[Client], None]:
    """What registers the world with a service: every model's body, the poses, the pairs (built-in
    rules). A closure over the models, not a method: the link must not point back at the generator."""

    def register(client: Client) -> None:
        for model in models:
            try:
                client.call("remove_body", name=model.name)  # left by an earlier run of this world
            except NotFound:
                pass
            client.call("add_body", name=model.name, body=model.info.to_wire())
        client.call("set_poses", poses={m.name: model_link_poses(m) for m in models})
        static = {m.name for m in models if m.static}
        for pair in pairs:
            if pair.a in static and pair.b in static:
                continue  # two static models (or one against itself) never move against each other
            client.call("add_pair", body1=pair.a, body2=pair.b)

    return register


class RemoteContacts(ContactGenerator):
    """Contacts from the collision service, joints made here. ``close()`` when done."""

    def __init__(
        self,
        world: ode.World,
        space: ode.SpaceBase,
        models: list[OdeModel],
        pairs: list[CollisionPair],
        crawler_speed: Callable[[str, int], float],
        *,
        nameserver: str | None = None,
        service: str = DEFAULT_SERVICE,
        timeout: float = DEFAULT_TIMEOUT,
        wait_s: float = COLLISION_WAIT_S,
        waiting: Waiting | None = None,
    ) -> None:
        super().__init__(world, space, models, pairs, crawler_speed)  # surfaces and the default pairs
        self._moving = [m for m in models if not m.static]
        self._names = [m.name for m in models]
        self._link_index = {m.name: {lk.name: i for i, lk in enumerate(m.info.links)} for m in models}
        self.link = ServiceLink(
            nameserver, service, registration(models, pairs), timeout=timeout, wait_s=wait_s, waiting=waiting
        )

    @property
    def client(self) -> Client:
        """The connection to the service serving now."""
        return self.link.client

    def close(self) -> None:
        """Take this world's bodies (and so their pairs) out of the service, then disconnect."""
        if not self.link.connected:  # lost for good: nothing is left to tidy
            self.link.close()
            return
        try:
            for name in self._names:
                self.client.call("remove_body", name=name, timeout=1.0)
        except HrpsimError as exc:  # the service may be gone already; nothing is left to tidy then
            log.info("could not remove the world's bodies from the collision service: %s", exc)
        finally:
            self.link.close()

    def release(self) -> None:
        """Drop every ODE reference, as the built-in generator does (see World.release)."""
        self._moving, self._link_index = [], {}
        self.link.release()
        super().release()

    def collide(self) -> int:
        """Empty last step's contacts, ask the service for this step's, make their joints. A service
        that is gone is waited for (ServiceLink); this tick's contacts are then asked of the new one."""
        self.begin_step()
        self.found = []
        poses = {m.name: model_link_poses(m) for m in self._moving}
        for record in self.link.call("contacts", poses=poses):
            self._join_record(record)
        return self.count

    def _join_record(self, record: dict[str, Any]) -> None:
        index1 = self._link_index[record["body1"]][record["link1"]]
        index2 = self._link_index[record["body2"]][record["link2"]]
        if not self.admits(record["body1"], index1, record["body2"], index2):
            return
        sim1 = self.models[record["body1"]].links[index1]
        sim2 = self.models[record["body2"]].links[index2]
        # as the built-in generator: nothing moves between the environment and a fixed (kinematic) root
        if (immovable(sim1.body) and immovable(sim2.body)) or not sim1.geoms or not sim2.geoms:
            return
        g1, g2 = sim1.geoms[0], sim2.geoms[0]
        contacts = []
        for position, normal, depth in zip(record["position"], record["normal"], record["depth"], strict=True):
            contact = ode.Contact()
            contact.setContactGeomParams(tuple(map(float, position)), tuple(map(float, normal)), float(depth), g1, g2)
            contacts.append(contact)
        contacts = reduce_contacts(contacts)  # as the built-in generator simulates them
        self.found.append((g1, g2, contacts))
        self._join(contacts, self.surfaces[(record["body1"], record["body2"])], g1, g2)
