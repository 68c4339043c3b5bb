"""The MJCF model as MuJoCo reads it, carried beside its BodyInfo for the MuJoCo engine.

BodyInfo holds what every engine simulates; an MJCF file may say more (tendons, equalities,
MuJoCo's own actuators, ball joints as MuJoCo has them, joint damping ...). The MuJoCo engine
builds an MJCF robot from the file's own elements (engines/mujoco/native.py), so the reader
carries the model in ``Body.metadata["mjcf"]``, a self-contained document that crosses the wire
with the body:

- ``xml``: the model as MuJoCo read it (includes resolved, textures and skins dropped: drawing
  is the viewer's), every body and joint named as the reader names its link and joint;
- ``assets``: the bytes of the mesh and height-field files it names, by the name ``xml`` gives them;
- ``links``: per link, ``[body, joint, axis, x, y, z]``: the MuJoCo body whose own link it is
  ("" for the massless links of a body with several joints, which the engine poses from their
  parents), the MuJoCo joint that moves it ("" for none), which axis of a ball joint it is
  (0, 1, 2; -1 for a hinge or a slide) and where the link's frame sits in its body's frame.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from lxml import etree

from hrpsim.bodyinfo import Body
from hrpsim.modelloader.mjcf_source import MjcfSource

ASSET_TAGS = ("mesh", "hfield")  # files a model needs to compile (skins and textures only draw)
DROPPED_TAGS = ("skin", "texture")


def native_model(
    source: MjcfSource, body: Body, link_bodies: list[int], joint_links: dict[int, list[int]], offset: dict[int, Any]
) -> dict[str, Any]:
    """The ``metadata["mjcf"]`` document of ``body``, read from ``source``; ``link_bodies`` is each
    link's MuJoCo body, ``joint_links`` each MuJoCo joint's links, ``offset`` each body's link frame."""
    names = _name_unnamed(source)
    with warnings.catch_warnings():  # the compiler's warnings, said once already (mjcf_source.py)
        warnings.simplefilter("ignore")
        root = etree.fromstring(source.spec.to_xml().encode())
    assets = _carry_assets(source, root)
    links = _links(source, body, names, link_bodies, joint_links, offset)
    return {"xml": etree.tostring(root, encoding="unicode"), "assets": assets, "links": links}


def _name_unnamed(source: MjcfSource) -> tuple[list[str], list[str]]:
    """Every body and joint named as the reader names its link and joint; their names in MuJoCo's
    order (MjSpec keeps it), the world first."""
    spec, mjtObj = source.spec, source.mujoco.mjtObj
    bodies = ["world"]
    for b, element in enumerate(spec.worldbody.find_all(mjtObj.mjOBJ_BODY), start=1):
        element.name = element.name or f"body{b}"
        bodies.append(element.name)
    joints = []
    for j, element in enumerate(spec.worldbody.find_all(mjtObj.mjOBJ_JOINT)):
        owner = int(source.model.jnt_bodyid[j])
        element.name = element.name or f"{source.name('body', owner) or f'body{owner}'}_joint{j}"
        joints.append(element.name)
    return bodies, joints


def _carry_assets(source: MjcfSource, root: etree._Element) -> dict[str, bytes]:
    """The bytes of every file ``root`` needs, by the name it gives them: those the reader read
    and checked (mjcf_files.py), which MuJoCo compiled from; the compiler's folders are dropped."""
    compiler = root.find("compiler")
    for dropped in [e for tag in DROPPED_TAGS for e in root.iter(tag)]:
        dropped.getparent().remove(dropped)
    for element in root.iter("material"):
        element.attrib.pop("texture", None)
    assets: dict[str, bytes] = {}
    for element in root.iter(*ASSET_TAGS):
        name = element.get("file")
        if name and name not in assets:
            assets[name] = source.assets[name]
    if compiler is not None:
        for setting in ("meshdir", "texturedir", "assetdir"):
            compiler.attrib.pop(setting, None)
    return assets


def _links(
    source: MjcfSource,
    body: Body,
    names: tuple[list[str], list[str]],
    link_bodies: list[int],
    joint_links: dict[int, list[int]],
    offset: dict[int, Any],
) -> list[list[Any]]:
    m, ball = source.model, source.mujoco.mjtJoint.mjJNT_BALL
    body_names, joint_names = names
    moved_by: dict[int, tuple[str, int]] = {}
    for j, links in joint_links.items():
        for axis, index in enumerate(links):
            moved_by[index] = (joint_names[j], axis if m.jnt_type[j] == ball else -1)
    own = {index: b for b, index in _own_links(link_bodies).items()}
    rows = []
    for index in range(len(body.links)):
        b = own.get(index)
        name = "" if b is None else body_names[b]
        joint, axis = moved_by.get(index, ("", -1))
        where = np.zeros(3) if b is None else np.asarray(offset[b], float)
        rows.append([name, joint, axis, *(float(v) for v in where)])
    return rows


def _own_links(link_bodies: list[int]) -> dict[int, int]:
    """Each MuJoCo body's own link: the last of its links (a body with several joints is a chain)."""
    own: dict[int, int] = {}
    for index, b in enumerate(link_bodies):
        own[b] = index
    return own
