"""The picture of the fabric: topology.dot always, topology.svg where Graphviz is installed,
aggregated so that a 32k-GPU fabric is a handful of boxes."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import INVENTORIES
from fabgen.inventory.loader import load_text
from fabgen.inventory.validate import validate
from fabgen.pipeline import build, render_to
from fabgen.targets import fabric


def test_svg_is_svg(tmp_path: Path) -> None:
    if not shutil.which("dot"):
        pytest.skip("graphviz not installed")
    render_to(INVENTORIES / "ib-storage.yaml", tmp_path)
    root = ET.parse(tmp_path / "ib" / "topology.svg").getroot()
    assert root.tag.endswith("svg")
    texts = " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))
    assert "storage leaves" in texts and "su01 leaves" in texts


@pytest.mark.parametrize("nodes,boxes,topology", [(127, 10, "rail-optimized"), (4096, 12, "rail-optimized"),
                                                   (4096, 4, "fat-tree")])
def test_large_fabrics_stay_readable(nodes: int, boxes: int, topology: str) -> None:
    text = f"""version: 1
cluster: c
node_groups: [{{name: gpu, model: dgx-h100, count: {nodes}}}]
fabrics:
  - {{name: f, kind: infiniband, platform: ufm, topology: {topology}, switch_model: qm9700, node_groups: [gpu]}}
"""
    _, contexts = build(validate(load_text(text, "t.yaml")))
    dot = fabric.structure(contexts["f"])["dot"]
    assert len(dot["nodes"]) <= boxes
    assert len(dot["edges"]) <= 3 * boxes
    counted = sum(int(n["label"].split("\\n")[1].split()[0]) for n in dot["nodes"] if n["role"] == "node")
    assert counted == nodes
