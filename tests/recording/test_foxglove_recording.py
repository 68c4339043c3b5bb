"""A recording as Foxglove reads it: every foxglove.* message valid against Foxglove's published
JSON schemas, the robot's shapes as SceneUpdate entities on every link, drawn where our viewer
draws the robot. Real launches of the sample humanoid standing on the floor."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import trimesh
from foxglove_helpers import foxglove_validators, launch, stand_project
from mcap.reader import make_reader

from hrpsim.recording import schemas
from hrpsim.recording.reader import open_recording
from hrpsim.transforms import quaternion_matrix
from hrpsim.viewer.scene import shape_mesh

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.collections import PolyCollection

PIXELS = 400


@pytest.fixture(scope="module")
def stand(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Path:
    folder = tmp_path_factory.mktemp("stand")
    launch(stand_project(folder, models_dir), folder)
    return folder / "stand.mcap"


def _foxglove_messages(path: Path) -> list[tuple[str, str, int, dict]]:
    with open(path, "rb") as handle:
        return [
            (schema.name, channel.topic, message.log_time, json.loads(message.data))
            for schema, channel, message in make_reader(handle).iter_messages()
            if schema.name.startswith("foxglove.")
        ]


def test_every_foxglove_message_is_valid_against_foxglove_schemas(stand: Path) -> None:
    validators = foxglove_validators()
    found: dict[str, int] = {}
    for name, topic, _, message in _foxglove_messages(stand):
        assert name in validators, f"{topic}: no Foxglove schema named {name}"
        errors = list(validators[name].iter_errors(message))
        assert not errors, f"{topic} ({name}): {errors[0].message} at {list(errors[0].absolute_path)}"
        found[name] = found.get(name, 0) + 1
    ticks = open_recording(stand).series("robot").tick
    assert found["foxglove.SceneUpdate"] >= 2  # the models' shapes, and the contacts of every tick
    assert found["foxglove.FrameTransforms"] == len(ticks) == found["foxglove.JointStates"]


def test_scene_entities_cover_every_link_of_sample1_in_the_models_colours(stand: Path) -> None:
    rec = open_recording(stand)
    body = rec.bodies()["robot"]
    (scene,) = [m for _, topic, _, m in _foxglove_messages(stand) if topic == schemas.SCENE_TOPIC]
    entities = {e["id"]: e for e in scene["entities"]}
    links = [f"robot/{link.name}" for link in body.links]
    assert len(links) == 30
    assert set(links) <= set(entities)
    for link in body.links:
        entity = entities[f"robot/{link.name}"]
        assert entity["frame_id"] == f"robot/{link.name}" and entity["frame_locked"]
        shapes = link.visuals or link.shapes
        primitives = [p for kind in ("cubes", "spheres", "cylinders", "triangles") for p in entity[kind]]
        assert len(primitives) == len(shapes), link.name
        expected = sorted(tuple(np.round(s.appearance.diffuse, 6)) for s in shapes)
        got = sorted(tuple(np.round([p["color"][c] for c in "rgb"], 6)) for p in primitives)
        assert got == expected, link.name
    assert sum(bool(entities[f"robot/{lk.name}"]["cubes"]) for lk in body.links) > 5  # primitives, not meshes


def test_contacts_scene_holds_a_marker_per_recorded_contact(stand: Path) -> None:
    messages = _foxglove_messages(stand)
    contacts = {t: m for _, topic, t, m in messages if topic == schemas.CONTACTS_SCENE_TOPIC}
    rec = open_recording(stand)
    recorded = {t: m["contacts"] for _, t, m in rec.messages([schemas.CONTACTS_TOPIC])}
    assert contacts.keys() == recorded.keys()
    last = max(recorded)
    assert len(recorded[last]) >= 4  # both feet on the floor
    (entity,) = contacts[last]["entities"]
    centres = [[s["pose"]["position"][k] for k in "xyz"] for s in entity["spheres"]]
    assert centres == [c["position"] for c in recorded[last]]


def _poses_from_tf(message: dict) -> dict[str, np.ndarray]:
    out = {}
    for tf in message["transforms"]:
        t, r = tf["translation"], tf["rotation"]
        pose = np.eye(4)
        pose[:3, :3] = quaternion_matrix([r["w"], r["x"], r["y"], r["z"]])
        pose[:3, 3] = [t["x"], t["y"], t["z"]]
        out[tf["child_frame_id"]] = pose
    return out


def _pose_matrix(pose: dict) -> np.ndarray:
    p, q = pose["position"], pose["orientation"]
    out = np.eye(4)
    out[:3, :3] = quaternion_matrix([q["w"], q["x"], q["y"], q["z"]])
    out[:3, 3] = [p["x"], p["y"], p["z"]]
    return out


def _size(primitive: dict) -> np.ndarray:
    return np.array([primitive["size"][k] for k in "xyz"])


def _entity_meshes(entity: dict) -> list[trimesh.Trimesh]:
    """Foxglove's primitives as meshes in the entity's frame, read from the message alone."""
    meshes = []
    for cube in entity["cubes"]:
        meshes.append(trimesh.creation.box(extents=_size(cube)).apply_transform(_pose_matrix(cube["pose"])))
    for sphere in entity["spheres"]:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=0.5)
        meshes.append(mesh.apply_scale(_size(sphere)).apply_transform(_pose_matrix(sphere["pose"])))
    for cylinder in entity["cylinders"]:
        d, _, h = _size(cylinder)
        if cylinder["top_scale"] == 0.0:
            mesh = trimesh.creation.cone(radius=d / 2, height=h).apply_translation((0, 0, -h / 2))
        else:
            mesh = trimesh.creation.cylinder(radius=d / 2, height=h)
        meshes.append(mesh.apply_transform(_pose_matrix(cylinder["pose"])))
    for tri in entity["triangles"]:
        points = np.array([[p[k] for k in "xyz"] for p in tri["points"]])
        faces = np.reshape(tri["indices"], (-1, 3)) if tri["indices"] else np.arange(len(points)).reshape(-1, 3)
        meshes.append(trimesh.Trimesh(points, faces, process=False).apply_transform(_pose_matrix(tri["pose"])))
    return meshes


def _draw(meshes: list[trimesh.Trimesh], extent: tuple[float, float, float, float]) -> np.ndarray:
    """A front view (x right, z up) of the meshes, filled black on white: a boolean mask."""
    fig = plt.figure(figsize=(4, 4), dpi=PIXELS // 4)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.axis("off")
    polygons = [mesh.vertices[face][:, [0, 2]] for mesh in meshes for face in mesh.faces]
    ax.add_collection(PolyCollection(polygons, facecolors="black", edgecolors="black", linewidths=0.2))
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[:, :, 0]
    plt.close(fig)
    return image < 128


def test_the_recorded_scene_and_transforms_draw_the_robot_where_the_viewer_does(stand: Path, tmp_path: Path) -> None:
    rec = open_recording(stand)
    messages = _foxglove_messages(stand)
    (scene,) = [m for _, topic, _, m in messages if topic == schemas.SCENE_TOPIC]
    tfs = [(t, m) for _, topic, t, m in messages if topic == schemas.TF_TOPIC]
    when, tf = tfs[len(tfs) // 2]
    frames = _poses_from_tf(tf)
    from_foxglove = []
    for entity in scene["entities"]:
        if entity["frame_id"].startswith("robot/"):
            from_foxglove += [m.apply_transform(frames[entity["frame_id"]]) for m in _entity_meshes(entity)]
    # the viewer's way: its own meshes of the body's shapes, at its poses of the recording
    times, poses = rec.link_poses()
    k = int(np.searchsorted(times, when * 1e-9))
    from_viewer = []
    for link in rec.bodies()["robot"].links:
        x, y, z, qw, qx, qy, qz = poses["robot"][link.name][k]
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = quaternion_matrix([qw, qx, qy, qz]), [x, y, z]
        for shape in link.visuals or link.shapes:
            mesh = shape_mesh(shape)
            if mesh is not None:
                from_viewer.append(mesh.apply_transform(pose))
    corners = np.vstack([m.bounds for m in from_viewer])
    low, high = corners.min(axis=0), corners.max(axis=0)
    extent = (low[0] - 0.1, high[0] + 0.1, low[2] - 0.1, high[2] + 0.1)
    a, b = _draw(from_foxglove, extent), _draw(from_viewer, extent)
    plt.imsave(tmp_path / "foxglove.png", a, cmap="gray_r")
    overlap = (a & b).sum() / (a | b).sum()
    assert b.sum() > 0.05 * b.size  # the robot fills a good part of the picture
    assert overlap > 0.97, f"the Foxglove drawing covers {overlap:.3f} of the viewer's"
