"""The hub has one job per class: each module of it holds classes of at most 300 lines."""

from __future__ import annotations

import ast

from process_helpers import REPO

HUB_MODULES = [
    "hub",
    "hub_wire",
    "hub_inbox",
    "peers",
    "attachments",
    "attached_controllers",
    "sync_modes",
    "policies",
    "actuation",
    "hub_stages",
]
MAX_CLASS_LINES = 300


def test_every_class_of_the_hub_is_short():
    long = []
    for module in HUB_MODULES:
        tree = ast.parse((REPO / "simserver" / f"{module}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                long.append(f"simserver/{module}.py: {node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert long == []
