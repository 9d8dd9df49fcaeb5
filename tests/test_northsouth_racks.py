"""A northsouth fabric's units (leaf pairs) hold whole NVLink racks, as the compute fabric's do: a
declared scalable_unit that would split a rack is refused at its line and column, the default
unit is the most whole racks a leaf takes, and a group order that would start a rack mid-unit is
refused. report.md says "whole racks" only where every rack sits in one unit."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import INVENTORIES
from fabgen.cli import app
from fabgen.inventory.loader import load
from fabgen.inventory.validate import validate
from fabgen.pipeline import build
from fabgen.spec.model import Fabric
from fabgen.topology.analysis import summarize

EXAMPLE = INVENTORIES / "gb300-northsouth.yaml"
UNIT = "    scalable_unit: 36                  # two racks per leaf pair\n"

HEAD = """\
  - name: head
    model: head
    count: 2
    hostname: "head{n}"
"""
HEAD_MODEL = """\
  head:
    gpus: 0
    ports:
      - {role: inband, rdma: mlx5_0, netdev: enp1s0f0np0, speed: 400}
      - {role: inband, rdma: mlx5_1, netdev: enp1s0f1np1, speed: 400}
"""


def write(tmp_path: Path, text: str) -> Path:
    shutil.copy(INVENTORIES / "gb300-cluster-rdma-links.txt", tmp_path)
    path = tmp_path / "ns.yaml"
    path.write_text(text)
    return path


def with_unit(unit: int | None) -> str:
    text = EXAMPLE.read_text()
    assert UNIT in text
    return text.replace(UNIT, f"    scalable_unit: {unit}\n" if unit else "")


def racks_across_pairs(f: Fabric) -> dict[str, set[int]]:
    """Each NVLink rack's leaf pairs (units), read from the cabling: the leaves its trays' ports are on."""
    unit = {s.name: s.unit for s in f.switches}
    rack = {h.name: h.rack for h in f.hosts if h.rack}
    out: dict[str, set[int]] = {}
    for lk in f.links:
        if lk.tier == "node-leaf" and lk.a in rack:
            out.setdefault(rack[lk.a], set()).add(unit[lk.z])
    return out


@pytest.mark.parametrize("unit", [32, 64])
def test_a_unit_that_splits_a_rack_is_refused_at_its_line(tmp_path: Path, unit: int) -> None:
    path = write(tmp_path, with_unit(unit))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if f"scalable_unit: {unit}" in text)
    assert re.search(rf"ns\.yaml:{line}:\d+: fabrics\[1\]\.scalable_unit: .*whole NVLink domains \(racks\) of 18",
                     result.output), result.output
    assert "Traceback" not in result.output


def test_declared_units_hold_whole_racks(tmp_path: Path) -> None:
    """36 (two racks) as declared: each rack on one leaf pair."""
    fabrics = build(validate(load(write(tmp_path, with_unit(36)))))[0]
    ns = fabrics["northsouth"]
    assert ns.plan.unit_nodes == 36 and not ns.plan.striped
    racks = racks_across_pairs(ns)
    assert len(racks) == 4 and all(len(units) == 1 for units in racks.values()), racks
    assert summarize(ns).racks_split == 0


def test_without_a_unit_the_fabric_is_sized_by_racks(tmp_path: Path) -> None:
    """Without scalable_unit, NVIDIA's converged sizing (spec/sizing.py `_northsouth_racks`): eight
    planned racks on 7 leaves (ERA-00012 Table 11, NVIDIA's largescale output), the storage servers
    on a pair of their own; every tray's two ports on two different leaves."""
    text = with_unit(None).replace("links: 10.253.0.0/22", "links: 10.253.0.0/21")
    ns = build(validate(load(write(tmp_path, text))))[0]["northsouth"]
    assert ns.plan.striped and ns.plan.compute_leaves == 7 and ns.plan.storage_leaves == 2
    legs: dict[str, set[str]] = {}
    for lk in ns.links:
        if lk.tier == "node-leaf" and lk.a.startswith("gb"):
            legs.setdefault(lk.a, set()).add(lk.z)
    assert len(legs) == 72 and all(len(leaves) == 2 for leaves in legs.values())
    assert summarize(ns).racks_split == 0


def test_a_group_order_that_starts_a_rack_mid_unit_is_refused(tmp_path: Path) -> None:
    """Two head nodes before the trays would put each rack's last two trays on the next leaf pair;
    after the trays they are fine."""
    text = with_unit(36).replace("  - name: store\n", HEAD + "  - name: store\n", 1)
    text = text.replace("node_models:\n", "node_models:\n" + HEAD_MODEL, 1)
    first = text.replace("    node_groups: [gb, store]\n    scalable_unit", "    node_groups: [head, gb, store]\n"
                         "    scalable_unit", 1)
    assert first != text
    result = CliRunner().invoke(app, ["validate", str(write(tmp_path, first))])
    assert result.exit_code == 2, result.output
    assert re.search(r"ns\.yaml:\d+:\d+: fabrics\[1\]\.node_groups: NVLink rack 2 of node group 'gb' \(gb035\) "
                     r"would span units 1 and 2", result.output), result.output
    last = first.replace("[head, gb, store]", "[gb, head, store]")
    ns = build(validate(load(write(tmp_path, last))))[0]["northsouth"]
    assert all(len(units) == 1 for units in racks_across_pairs(ns).values())


def test_the_report_says_whole_racks_only_where_they_are(tmp_path: Path) -> None:
    """gb300-cluster's storage fabric attaches trays port by port (64 a leaf): the report counts the
    racks it splits, as the cabling shows them; its compute fabric's units are whole racks."""
    from fabgen.pipeline import render_to

    path = INVENTORIES / "gb300-cluster.yaml"
    fabrics = build(validate(load(path)))[0]
    split = {name: sum(len(u) > 1 for u in racks_across_pairs(f).values()) for name, f in fabrics.items()
             if f.spec.role != "oob"}
    assert split["compute"] == 0 and split["storage"] > 0
    render_to(path, tmp_path / "out")
    report = (tmp_path / "out" / "report.md").read_text()
    for name, n in split.items():
        section = report.split(f"## Fabric `{name}`", 1)[1].split("## Fabric", 1)[0]
        if "NVLink rack" not in section:
            continue
        claim = re.search(r"nodes per unit: (whole racks|(\d+) racks? spans? two units)", section)
        assert claim, section[:400]
        assert (claim.group(1) == "whole racks") == (n == 0) and (n == 0 or int(claim.group(2)) == n)
