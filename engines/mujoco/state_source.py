"""One robot's state read field by field from MuJoCo's arrays (``Engine.state_source``): the
root's pose and the joints' efforts are read-only views of the arrays the engine keeps, the joint
values, the root's velocity and the sensors' readings are gathered into arrays kept from tick to
tick when a controller reads them. The values are those of ``MujocoEngine.read``, to the bit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from hrpsim.engines.base import StateSource, read_only

if TYPE_CHECKING:
    from hrpsim.engines.mujoco.engine import MujocoEngine, _Model

LINEAR_FIRST = np.array([3, 4, 5, 0, 1, 2])  # MuJoCo gives a velocity as [angular, linear]
_BODY = mujoco.mjtObj.mjOBJ_BODY


class MujocoStateSource(StateSource):
    def __init__(self, engine: MujocoEngine, robot: str, model: _Model) -> None:
        super().__init__(engine, robot)
        self._model = model
        self._m, self._d = engine.m, engine.d
        self._qpos, self._qvel = engine.d.qpos, engine.d.qvel
        n = len(model.joint_names)
        self._q, self._dq = np.empty(n), np.empty(n)
        self._q_view, self._dq_view = read_only(self._q), read_only(self._dq)
        self._tau = read_only(model.drives.effort)
        self._position = read_only(engine.d.xpos[model.root])
        self._rotation = read_only(engine.d.xmat[model.root].reshape(3, 3))
        self._spatial, self._velocity = np.empty(6), np.empty(6)
        self._velocity_view = read_only(self._velocity)
        self._sensors = model.sensors.reader()

    def joints(self) -> tuple[np.ndarray, np.ndarray]:
        model = self._model
        self._qpos.take(model.joint_qpos, out=self._q, mode="clip")  # (valid addresses: clip checks none)
        self._qvel.take(model.joint_dofs, out=self._dq, mode="clip")
        joint_readings(model, self._qpos, self._qvel, self._q, self._dq)
        return self._q_view, self._dq_view

    def tau(self) -> np.ndarray:
        return self._tau

    def root_position(self) -> np.ndarray:
        return self._position

    def root_rotation(self) -> np.ndarray:
        return self._rotation

    def root_velocity(self) -> np.ndarray:
        body_velocity(self._m, self._d, self._model.root, self._spatial, self._velocity)
        return self._velocity_view

    def sensors(self) -> dict[str, np.ndarray]:
        return self._sensors()


def joint_readings(model: _Model, qpos: np.ndarray, qvel: np.ndarray, q: np.ndarray, dq: np.ndarray) -> None:
    """Controller-order joint values and rates gathered from ``qpos`` and ``qvel`` as hrpsim reads
    them: from the pose the file draws, zero for joints MuJoCo does not have, ball joints' angles."""
    if model.joint_ref is not None:
        q -= model.joint_ref
    if model.jointless.size:  # controller joints without a MuJoCo joint (fixed) read 0
        q[model.jointless] = dq[model.jointless] = 0.0
    if model.balls:
        model.balls.read(qpos, qvel, q, dq)


def body_velocity(m: mujoco.MjModel, d: mujoco.MjData, body: int, spatial: np.ndarray, out: np.ndarray) -> None:
    """[linear of the body frame's origin, angular], world frame, into ``out`` (``spatial``: scratch)."""
    mujoco.mj_objectVelocity(m, d, _BODY, int(body), spatial, 0)
    spatial.take(LINEAR_FIRST, out=out, mode="clip")
