"""Generated body and MJCF files, fed to a served modelloader: each is a load or an error naming the
file; never a reader's fault (an exception it did not mean), never a load past its deadline or
past its memory bound (the files are a few kilobytes: a reader that needs the 256 MB the service
gives a load here has lost its bounds). Hypothesis, with a bounded number of examples; the files
are written into the test's own folder."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from modelloader_helpers import modelloader_process

from hrpsim.client import Client
from hrpsim.errors import HrpsimError

EXAMPLES = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
BOUND_LOST = ("reading took longer", "not enough memory", "process reading it ended", "a fault of hrpsim's reader")
_NUMBER = itertools.count()

# --- values and nodes of a body file ---

NAMES = st.sampled_from(["base", "arm", "leg", "hand", "", "base "])
NUMBERS = st.one_of(
    st.integers(-3, 3),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1.0, -1.0, 1e30, 2e9, 1e-300]),
)
SCALARS = st.one_of(NUMBERS, NAMES, st.booleans(), st.none(), st.sampled_from(["unlimited", "X", "-Y", "revolute"]))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=10), st.dictionaries(NAMES, inner, max_size=4)),
    max_leaves=30,
)
VECTORS = st.lists(NUMBERS, min_size=0, max_size=10)
LINK_KEYS = {
    "parent": NAMES,
    "jointType": st.sampled_from(["revolute", "prismatic", "free", "fixed", "pseudo_continuous_track", "hinge"]),
    "jointId": NUMBERS,
    "jointAxis": st.one_of(st.sampled_from(["X", "-Y", "Z", "W"]), VECTORS),
    "jointRange": st.one_of(VECTORS, NUMBERS, st.just("unlimited")),
    "maxJointVelocity": NUMBERS,
    "mass": NUMBERS,
    "centerOfMass": VECTORS,
    "inertia": VECTORS,
    "translation": st.one_of(VECTORS, st.lists(VECTORS, max_size=3)),
    "rotation": st.one_of(VECTORS, st.lists(VECTORS, max_size=3)),
    "jointAngle": NUMBERS,
    "type": st.sampled_from(["Link", "SubBody", "Skip", "ContinuousTrack", "Nothing"]),
    "uri": st.sampled_from(["missing.body", "self.body", "/etc/passwd", "${SHARE}/x.stl", "../x.stl"]),
    "jointIdOffset": NUMBERS,
}
ELEMENT_TYPES = [
    "Transform",
    "Group",
    "Shape",
    "RigidBody",
    "Visual",
    "Collision",
    "ForceSensor",
    "Camera",
    "RateGyroSensor",
    "Resource",
    "SpotLight",
    "AGXVehicleContinuousTrackDevice",
    "Unknown",
]
GEOMETRIES = st.fixed_dictionaries(
    {"type": st.sampled_from(["Box", "Sphere", "Cylinder", "Capsule", "Cone", "TriangleMesh", "ElevationGrid"])},
    optional={
        "size": VECTORS,
        "radius": NUMBERS,
        "height": st.one_of(NUMBERS, VECTORS),
        "vertices": VECTORS,
        "faces": VECTORS,
        "xDimension": NUMBERS,
        "zDimension": NUMBERS,
    },
)
ELEMENTS = st.recursive(
    st.fixed_dictionaries(
        {"type": st.sampled_from(ELEMENT_TYPES)},
        optional={
            "translation": VECTORS,
            "rotation": VECTORS,
            "scale": VECTORS,
            "mass": NUMBERS,
            "inertia": VECTORS,
            "id": NUMBERS,
            "name": NAMES,
            "geometry": GEOMETRIES,
            "format": st.sampled_from(["COLOR", "DEPTH", "X"]),
            "width": NUMBERS,
            "uri": st.sampled_from(["missing.stl", "/dev/zero", "../outside.yaml"]),
        },
    ),
    lambda inner: st.fixed_dictionaries(
        {
            "type": st.sampled_from(["Transform", "Group", "Visual", "Collision", "RigidBody"]),
            "elements": st.one_of(st.lists(inner, max_size=3), inner),
        }
    ),
    max_leaves=8,
)
LINKS = st.lists(
    st.fixed_dictionaries({"name": NAMES}, optional={**LINK_KEYS, "elements": st.one_of(ELEMENTS, VALUES)}),
    min_size=0,
    max_size=6,
)
BODIES = st.fixed_dictionaries(
    {
        "format": st.sampled_from(["ChoreonoidBody", "Other"]),
        "formatVersion": st.sampled_from([1.0, 2.0, 3.0, float("nan")]),
        "links": st.one_of(LINKS, VALUES),
    },
    optional={
        "angleUnit": st.sampled_from(["degree", "radian", "grad"]),
        "name": NAMES,
        "rootLink": NAMES,
        "extraJoints": st.one_of(
            VALUES,
            st.lists(
                st.dictionaries(st.sampled_from(["link1Name", "link2Name", "jointType", "jointAxis"]), VALUES),
                max_size=3,
            ),
        ),
    },
)


def body_text(document: dict, cut: int, anchors: bool) -> str:
    """The document as YAML; ``cut`` characters off its end (a file cut short), and with the links
    given an anchor their neighbours alias (YAML dumps a shared object as an alias)."""
    if anchors and isinstance(document.get("links"), list) and document["links"]:
        document["links"].append(document["links"][0])
    text = yaml.safe_dump(document, sort_keys=False)
    return text[: len(text) - cut] if cut else text


# --- MJCF ---

PLAIN = st.sampled_from(["0", "1", "-1", ".1", ".5", "2", "-0.3"])
REALS = st.one_of(*[PLAIN] * 8, st.sampled_from(["nan", "inf", "-inf", "1e30", "1e-30"]), st.floats(width=32).map(str))


def reals(count: int) -> st.SearchStrategy[str]:
    """Mostly ``count`` numbers, sometimes another count or a word."""
    right = st.lists(REALS, min_size=count, max_size=count).map(" ".join)
    wrong = st.one_of(st.lists(REALS, max_size=7).map(" ".join), st.sampled_from(["", "x"]))
    return st.one_of(*[right] * 30, wrong)


JOINT = st.fixed_dictionaries(
    {"type": st.sampled_from(["hinge", "slide", "ball", "free", "spin"])},
    optional={
        "name": st.sampled_from(["j", "k", "m/j"]),
        "axis": reals(3),
        "range": reals(2),
        "pos": reals(3),
        "limited": st.sampled_from(["true", "false", "auto"]),
        "armature": reals(1),
        "ref": reals(1),
    },
)
GEOM = st.fixed_dictionaries(
    {"type": st.sampled_from(["sphere", "box", "capsule", "cylinder", "plane", "ellipsoid", "mesh", "hfield"])},
    optional={
        "size": reals(3),
        "pos": reals(3),
        "quat": reals(4),
        "fromto": reals(6),
        "mass": reals(1),
        "density": reals(1),
        "mesh": st.just("m"),
        "name": st.sampled_from(["g", "m/g"]),
    },
)
INERTIAL = st.fixed_dictionaries(
    {"pos": reals(3)}, optional={"mass": reals(1), "diaginertia": reals(3), "fullinertia": reals(6)}
)
SITE = st.fixed_dictionaries({"name": st.sampled_from(["s", "t"])}, optional={"pos": reals(3), "size": reals(1)})


def element(tag: str, attributes: dict[str, str], inside: str = "") -> str:
    text = " ".join(f'{key}="{value}"' for key, value in attributes.items())
    return f"<{tag} {text}>{inside}</{tag}>"


@st.composite
def mjcf_bodies(draw: st.DrawFn, depth: int = 0) -> str:
    parts = [element("joint", j) for j in draw(st.lists(JOINT, max_size=2))]
    parts += [element("geom", g) for g in draw(st.lists(GEOM, max_size=2))]
    parts += [element("inertial", i) for i in draw(st.lists(INERTIAL, max_size=1))]
    parts += [element("site", s) for s in draw(st.lists(SITE, max_size=1))]
    if depth < 4:
        parts += draw(st.lists(mjcf_bodies(depth + 1), max_size=2))
    attributes = draw(
        st.fixed_dictionaries(
            {}, optional={"name": st.sampled_from(["a", "b", "m/a", "m/b", ""]), "pos": reals(3), "euler": reals(3)}
        )
    )
    return element("body", attributes, "".join(draw(st.permutations(parts))))


SENSORS = st.lists(
    st.tuples(
        st.sampled_from(["force", "torque", "gyro", "accelerometer", "rangefinder"]), st.sampled_from(["s", "t"])
    ),
    max_size=2,
).map(lambda found: "".join(f'<{kind} site="{site}"/>' for kind, site in found))
NUMERICS = st.lists(
    st.tuples(st.sampled_from(["m/joint_id/j", "m/joint_id/k", "m/sensor_id/s"]), reals(1)), max_size=3
).map(lambda found: "".join(f'<numeric name="{name}" data="{data}"/>' for name, data in found))
EXTRAS = st.sampled_from(
    [
        "",
        '<include file="missing.xml"/>',
        '<include file="/dev/zero"/>',
        '<compiler angle="radian"/>',
        '<compiler meshdir="/etc"/>',
        '<asset><mesh name="m" file="x.stl"/></asset>',
        '<option timestep="nan"/>',
        '<actuator><motor joint="j" gear="nan"/></actuator>',
        '<equality><connect body1="a" body2="b" anchor="0 0 0"/></equality>',
        '<contact><exclude body1="a" body2="b"/></contact>',
        '<tendon><fixed><joint joint="j" coef="1"/></fixed></tendon>',
    ]
)


@st.composite
def mjcf_files(draw: st.DrawFn) -> str:
    world = "".join(draw(st.lists(mjcf_bodies(), min_size=1, max_size=2)))
    world += element("geom", draw(GEOM)) if draw(st.booleans()) else ""
    extras = "".join(draw(st.lists(EXTRAS, max_size=2)))
    top = f"{extras}<custom>{draw(NUMERICS)}</custom><sensor>{draw(SENSORS)}</sensor>"
    return f'<mujoco model="{draw(st.sampled_from(["m", "", "m/x"]))}">{top}<worldbody>{world}</worldbody></mujoco>\n'


# --- the service ---


@pytest.fixture(scope="module")
def served(shared_nameserver: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Client, Path]]:
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "self.body").write_text("format: ChoreonoidBody\nformatVersion: 2.0\nlinks: [{name: base}]\n")
    args = ("--load-memory", "256", "--load-timeout", "50", "--cache-size", "1")
    with (
        modelloader_process(shared_nameserver, folder, name="fuzzloader", args=args) as proc,
        Client(proc.address, peer="fuzzloader", timeout=120) as client,
    ):
        yield client, folder
        assert "Traceback" not in proc.log_text(), proc.log_text()[-3000:]


def load_or_refuse(client: Client, path: Path) -> None:
    try:
        client.call("load", path=str(path))
    except HrpsimError as exc:
        message = str(exc)
        assert path.name in message, message  # names the file
        assert not any(lost in message for lost in BOUND_LOST), message


NAMESAKES = {
    "format": "ChoreonoidBody",
    "formatVersion": 2.0,
    "links": [{"name": "a"}, {"name": "b", "parent": "a"}, {"name": "b", "parent": "b"}],
}  # once sent the link ordering round for ever


@EXAMPLES
@given(document=BODIES, cut=st.integers(0, 40), anchors=st.booleans())
@example(document=NAMESAKES, cut=0, anchors=False)
def test_generated_body_files_load_or_are_refused_naming_the_file(served, document, cut: int, anchors: bool) -> None:
    client, folder = served
    path = folder / f"fuzz{next(_NUMBER)}.body"
    path.write_text(body_text(document, cut, anchors))
    load_or_refuse(client, path)


@EXAMPLES
@given(text=mjcf_files())
def test_generated_mjcf_files_load_or_are_refused_naming_the_file(served, text: str) -> None:
    pytest.importorskip("mujoco")
    client, folder = served
    path = folder / f"fuzz{next(_NUMBER)}.xml"
    path.write_text(text)
    load_or_refuse(client, path)
