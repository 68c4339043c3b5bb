"""The controller's robot model (Pinocchio) against MuJoCo's own computations on the same BodyInfo.

The MuJoCo model is the one the mujoco engine builds (engines/mujoco/build.py), so both sides read
the same link frames, mass properties, floors and rotor inertia (armature). MuJoCo's free joint
moves with (world linear, local angular) velocity where the toolkit uses Pinocchio's (local,
local): T = diag(R^T, I, I...) maps one to the other (v_toolkit = T v_mujoco).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from process_helpers import MODELS

from hrpsim.bodyinfo import Body
from hrpsim.modelloader import load_body
from hrpsim.project import ModelConfig, Project, WorldConfig
from hrpsim.toolkit.model import LOCAL, RobotModel

mujoco = pytest.importorskip("mujoco")
from hrpsim.engines.mujoco.build import build_spec  # noqa: E402

RTOL = 1e-9
SAMPLE1 = MODELS / "openhrp3/model/sample1.wrl"
PA10 = MODELS / "openhrp3/model/PA10/pa10.main.wrl"
SR1_URDF = MODELS / "choreonoid/model/SR1/SR1.urdf"  # a humanoid read from URDF


@dataclass
class Pair:
    body: Body
    ours: RobotModel
    m: mujoco.MjModel
    d: mujoco.MjData
    bodies: list[int]  # MuJoCo body of every link
    qpos: np.ndarray  # MuJoCo qpos address of every controller joint
    dofs: np.ndarray  # MuJoCo dof address of every controller joint


def pair(path, name: str) -> Pair:
    body = load_body(str(path))
    config = ModelConfig(name=name, file=str(path))
    project = Project(path=str(path), world=WorldConfig(gravity=(0.0, 0.0, -9.8)), models=[config], collisions=[])
    spec, layouts = build_spec(project, {name: body}, runtime=False)
    m = spec.compile()
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT  # no contacts or limits in mj_inverse
    layout = layouts[name]
    link_of_joint = {lk.joint_label: i for i, lk in enumerate(body.links)}
    joints = [
        mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, layout.joints[link_of_joint[n]]) for n in body.joint_names
    ]
    bodies = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in layout.bodies]
    return Pair(
        body,
        RobotModel(body, gravity=(0.0, 0.0, -9.8)),
        m,
        mujoco.MjData(m),
        bodies,
        np.array([m.jnt_qposadr[j] for j in joints]),
        np.array([m.jnt_dofadr[j] for j in joints]),
    )


def configure(p: Pair, seed: int) -> np.ndarray:
    """A random configuration and velocity on both sides; returns T (toolkit velocity per MuJoCo velocity)."""
    rng = np.random.default_rng(seed)
    n = len(p.body.joint_names)
    lower = np.array([max(lk.q_lower, -1.5) for lk in p.body.joints])
    upper = np.array([min(lk.q_upper, 1.5) for lk in p.body.joints])
    q = rng.uniform(lower, upper)
    dq = rng.normal(size=n)
    p.d.qpos[p.qpos], p.d.qvel[p.dofs] = q, dq
    transform = np.eye(p.m.nv)
    if p.ours.free_root:
        position = rng.normal(size=3)
        quaternion = rng.normal(size=4)
        quaternion /= np.linalg.norm(quaternion)
        rotation = np.zeros(9)
        mujoco.mju_quat2Mat(rotation, quaternion)
        rotation = rotation.reshape(3, 3)
        linear, angular = rng.normal(size=3), rng.normal(size=3)  # MuJoCo: world linear, local angular
        p.d.qpos[:7] = [*position, *quaternion]
        p.d.qvel[:6] = [*linear, *angular]
        p.ours.set(
            q, dq, root_position=position, root_rotation=rotation, root_velocity=[*linear, *(rotation @ angular)]
        )
        transform[:3, :3] = rotation.T
    else:
        p.ours.set(q, dq)
    mujoco.mj_forward(p.m, p.d)
    return transform


def ours_to_mujoco_columns(p: Pair, matrix: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """Columns in the toolkit's order and velocity -> MuJoCo's (J_mujoco = J_toolkit T)."""
    root = 6 if p.ours.free_root else 0
    out = np.zeros((matrix.shape[0], p.m.nv))
    out[:, :root] = matrix[:, :root] @ transform[:root, :root]
    out[:, p.dofs] = matrix[:, root:]
    return out


def frame_rate_term(p: Pair, transform: np.ndarray) -> np.ndarray:
    """The toolkit's acceleration at zero MuJoCo acceleration: d/dt (R^T v) = -omega_local x (R^T v)."""
    term = np.zeros(p.ours.nv)
    if p.ours.free_root:
        term[:3] = -np.cross(p.d.qvel[3:6], transform[:3, :3] @ p.d.qvel[:3])
    return term


def close(ours: np.ndarray, theirs: np.ndarray) -> None:
    scale = max(float(np.max(np.abs(theirs))), 1e-300)
    np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=RTOL * scale)


CASES = [(SAMPLE1, "robot", seed) for seed in range(3)] + [(PA10, "pa10", seed) for seed in range(3)]
CASES.append((SR1_URDF, "sr1", 0))


@pytest.fixture(params=CASES, ids=lambda c: f"{c[1]}-{c[2]}")
def configured(request) -> tuple[Pair, np.ndarray]:
    path, name, seed = request.param
    p = pair(path, name)
    return p, configure(p, seed)


def test_link_poses_match_mujoco(configured) -> None:
    p, _ = configured
    for index, link in enumerate(p.body.links):
        pose = p.ours.link_pose(link.name)
        close(pose.position, p.d.xpos[p.bodies[index]])
        close(pose.rotation, p.d.xmat[p.bodies[index]].reshape(3, 3))


def test_jacobians_match_mujoco(configured) -> None:
    p, transform = configured
    for index, link in enumerate(p.body.links):
        body = p.bodies[index]
        jacp, jacr = np.zeros((3, p.m.nv)), np.zeros((3, p.m.nv))
        mujoco.mj_jac(p.m, p.d, jacp, jacr, p.d.xpos[body], body)
        world = ours_to_mujoco_columns(p, p.ours.jacobian(link.name), transform)
        close(world, np.vstack([jacp, jacr]))
        rotation = p.d.xmat[body].reshape(3, 3)
        local = ours_to_mujoco_columns(p, p.ours.jacobian(link.name, frame=LOCAL), transform)
        close(local, np.vstack([rotation.T @ jacp, rotation.T @ jacr]))


def test_centre_of_mass_and_its_jacobian_match_mujoco(configured) -> None:
    p, transform = configured
    root = p.bodies[0]
    if p.ours.free_root:
        com, mass = p.d.subtree_com[root], p.m.body_subtreemass[root]
    else:  # a fixed root's model is welded to the world: MuJoCo's world body holds all of it
        com, mass = p.d.subtree_com[0], p.m.body_subtreemass[0]
    close(p.ours.com(), com)
    close(np.array(p.ours.total_mass), np.array(mass))
    jacobian = np.zeros((3, p.m.nv))
    mujoco.mj_jacSubtreeCom(p.m, p.d, jacobian, root if p.ours.free_root else 0)
    close(ours_to_mujoco_columns(p, p.ours.com_jacobian(), transform), jacobian)
    close(p.ours.com_velocity(), jacobian @ p.d.qvel)


def test_mass_matrix_gravity_and_bias_match_mujoco(configured) -> None:
    p, transform = configured
    full = np.zeros((p.m.nv, p.m.nv))
    mujoco.mj_fullM(p.m, p.d, full)
    ours_mass = ours_to_mujoco_columns(p, p.ours.mass_matrix(), transform)
    close(ours_to_mujoco_columns(p, ours_mass.T, transform).T, full)
    ours_bias = p.ours.gravity() + p.ours.coriolis() + p.ours.mass_matrix() @ frame_rate_term(p, transform)
    bias = ours_to_mujoco_columns(p, ours_bias[None, :], transform)[0]
    close(bias, p.d.qfrc_bias)
    p.d.qvel[:] = 0.0
    mujoco.mj_forward(p.m, p.d)
    gravity = ours_to_mujoco_columns(p, p.ours.gravity()[None, :], transform)[0]
    close(gravity, p.d.qfrc_bias)


def test_inverse_dynamics_matches_mujoco(configured) -> None:
    p, transform = configured
    acceleration = np.random.default_rng(7).normal(size=p.m.nv)  # MuJoCo's coordinates
    p.d.qacc[:] = acceleration
    mujoco.mj_inverse(p.m, p.d)
    ours_acceleration = frame_rate_term(p, transform)
    root = 6 if p.ours.free_root else 0
    ours_acceleration[:root] += transform[:root, :root] @ acceleration[:root]
    ours_acceleration[root:] += acceleration[p.dofs]
    forces = ours_to_mujoco_columns(p, p.ours.inverse_dynamics(ours_acceleration)[None, :], transform)[0]
    close(forces, p.d.qfrc_inverse)
