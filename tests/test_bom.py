"""The bill of materials names media that reach: cables and transceivers follow each tier's
length or medium (spec/media.py), NICs that ship in the nodes are included, the cluster is totalled."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from conftest import INVENTORIES
from fabgen.cli import main
from fabgen.pipeline import render_to

XDR = """version: 1
cluster: xdr
node_groups:
  - {name: gpu, model: dgx-b300, count: 40}
fabrics:
  - name: ib
    kind: infiniband
    platform: ufm
    topology: rail-optimized
    switch_model: q3400
    tiers: 3
    scalable_unit: 8
    node_groups: [gpu]
"""

NDR_LONG = """version: 1
cluster: ndr
node_groups:
  - {name: gpu, model: gb200-nvl72, count: 72}
fabrics:
  - name: ib
    kind: infiniband
    platform: ufm
    topology: rail-optimized
    switch_model: qm9700
    tiers: 3
    scalable_unit: 18
    node_groups: [gpu]
    cabling:
      node_leaf: {length_m: 2, media: dac}
      leaf_spine: {length_m: 40}
      spine_core: {length_m: 400}
"""


def _render(tmp_path: Path, text: str) -> Path:
    inv = tmp_path / "inv.yaml"
    inv.write_text(text)
    render_to(inv, tmp_path / "out")
    return tmp_path / "out"


def _bom(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def _media(out: Path, fabric: str) -> dict[str, set[str]]:
    tiers: dict[str, set[str]] = {}
    for r in csv.DictReader(io.StringIO((out / fabric / "cabling.csv").read_text())):
        tiers.setdefault(r["tier"], set()).add(r["media"])
    return tiers


def test_xdr_is_single_mode_on_every_tier_and_its_nics_are_included(tmp_path: Path) -> None:
    """XDR has no multimode optics and no DAC (NVIDIA's XDR part list): every tier single-mode,
    the ConnectX-8 of a DGX B300 shown as included, not bought."""
    out = _render(tmp_path, XDR)
    assert _media(out, "ib") == {"node-leaf": {"smf"}, "leaf-spine": {"smf"}, "spine-core": {"smf"}}
    bom = _bom(out / "ib" / "bom.csv")
    assert not any("multimode" in r["part"] for r in bom)
    cables = {r["description"]: int(r["quantity"]) for r in bom if r["category"] == "cable"}
    report = json.loads((out / "report.json").read_text())["fabrics"]["ib"]
    assert cables == {f"{t} (single-mode fibre)": n for t, n in report["links"].items() if n}
    nics = [r for r in bom if "ConnectX-8" in r["part"]]
    assert [(r["category"], int(r["quantity"])) for r in nics] == [("included", 320)]
    assert "ships in the DGX B300: not ordered" in nics[0]["notes"]
    switch_side = sum(int(r["quantity"]) for r in bom if r["description"] == "switch side")
    cages = {(r["z_device"], r["z_port"].split("/")[0]) for r in csv.DictReader(
        io.StringIO((out / "ib" / "cabling.csv").read_text()))}
    cages |= {(r["a_device"], r["a_port"].split("/")[0]) for r in csv.DictReader(
        io.StringIO((out / "ib" / "cabling.csv").read_text())) if r["tier"] != "node-leaf"}
    assert switch_side == len(cages)  # one twin-port transceiver per used cage


def test_lengths_choose_copper_multimode_and_single_mode(tmp_path: Path) -> None:
    """2 m to the nodes on DAC splitters (no node transceiver), 40 m leaf-spine on multimode,
    400 m to the cores on single-mode: each tier's cables and the switch-side optics follow."""
    out = _render(tmp_path, NDR_LONG)
    assert _media(out, "ib") == {"node-leaf": {"dac"}, "leaf-spine": {"mmf"}, "spine-core": {"smf"}}
    bom = _bom(out / "ib" / "bom.csv")
    parts = {(r["category"], r["part"].split(" ")[0]): int(r["quantity"]) for r in bom}
    report = json.loads((out / "report.json").read_text())["fabrics"]["ib"]
    assert parts[("cable", "MFP7E10-Nxxx")] == report["links"]["leaf-spine"]
    assert parts[("cable", "MFP7E30-Nxxx")] == report["links"]["spine-core"]
    assert not any(r["description"].startswith("node side") for r in bom)  # copper: no node optics
    assert ("transceiver", "MMS4X00-NM") in parts and ("transceiver", "MMA4Z00-NS") in parts
    assert all(int(r["quantity"]) > 0 and r["part"] for r in bom)


def test_a_run_no_medium_reaches_is_a_located_error(tmp_path: Path, capsys) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(XDR + "    cabling:\n      spine_core: {length_m: 900}\n      node_leaf: {media: mmf}\n")
    with pytest.raises(SystemExit) as exc:
        main(["render", str(inv), "-o", str(tmp_path / "out")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"{inv}:15:30: fabrics[0].cabling.spine_core.length_m: no medium of nvidia-800g reaches 900 m" in err
    assert f"{inv}:16:26: fabrics[0].cabling.node_leaf.media: multimode fibre is not offered on node-leaf" in err
    assert not (tmp_path / "out").exists()


def test_copper_to_a_dgx_h100_is_refused(tmp_path: Path, capsys) -> None:
    """The DAC splitter ends in single-port OSFP plugs: a DGX H100's twin-port cages cannot take it."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(NDR_LONG.replace("gb200-nvl72, count: 72", "dgx-h100, count: 64").replace("scalable_unit: 18",
                                                                                             "scalable_unit: 16"))
    with pytest.raises(SystemExit) as exc:
        main(["validate", str(inv)])
    assert exc.value.code == 2
    assert ("fabrics[0].cabling.node_leaf.media: passive copper (DAC) is not offered on node-leaf to osfp-twin-flat "
            "node cages") in capsys.readouterr().err


def test_the_cluster_bom_totals_every_fabric_and_has_no_empty_lines(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(INVENTORIES / "superpod-cluster.yaml", out)
    report = json.loads((out / "report.json").read_text())
    total: dict[tuple[str, str], int] = {}
    for fabric in report["fabrics"]:
        for r in _bom(out / fabric / "bom.csv"):
            assert int(r["quantity"]) > 0 and r["part"] and "none" not in r["part"], r
            total[(r["category"], r["part"])] = total.get((r["category"], r["part"]), 0) + int(r["quantity"])
    assert {(r["category"], r["part"]): r["quantity"] for r in report["bom_total"]} == total
    md = (out / "report.md").read_text()
    assert "## Cluster bill of materials" in md
    shared = next(r for r in report["bom_total"] if r["part"].startswith("MMA4Z00-NS (twin-port"))
    assert shared["fabrics"] == ["compute", "internalnet"]  # the same optic bought for two fabrics, summed
    # the storage fabric's Arista leaves reach a ConnectX-7 only over DR4 (8 x 50G SR8 does not interoperate)
    assert _media(out, "storagenet")["node-leaf"] == {"smf"}


def test_a_fibre_per_link_on_every_plane(tmp_path: Path) -> None:
    """Straight fibres carry one port each: a two-plane fabric buys as many per link as one plane does."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "b300-spectrumx-2plane.yaml", out)
    report = json.loads((out / "report.json").read_text())["fabrics"]
    for plane in ("sx-plane1", "sx-plane2"):
        cables = {r["description"].split(" (")[0]: int(r["quantity"])
                  for r in _bom(out / plane / "bom.csv") if r["category"] == "cable"}
        assert cables == {t: n for t, n in report[plane]["links"].items() if n}, plane


def test_a_custom_switch_keeps_the_nodes_own_optics(tmp_path: Path) -> None:
    text = """version: 1
cluster: c
switch_models:
  edge64: {kinds: [roce], platforms: [eos], ports: 64, ports_per_cage: 2, speed: 400, port_name: "Ethernet{n}",
           transceiver: "edge optic"}
node_groups:
  - {name: gpu, model: dgx-h100, count: 2}
fabrics:
  - {name: f, kind: roce, platform: eos, topology: fat-tree, switch_model: edge64, node_groups: [gpu]}
"""
    out = _render(tmp_path, text)
    bom = _bom(out / "f" / "bom.csv")
    node = [r for r in bom if r["description"] == "node side (dgx-h100)"]
    from fabgen.spec.catalog import NODES

    # a custom switch names no node parts: each node's own transceiver, one per used cage (4 per DGX H100)
    assert [(r["part"], int(r["quantity"])) for r in node] == [(NODES["dgx-h100"].transceiver, 8)]
    assert ("edge optic", "switch side") in {(r["part"], r["description"]) for r in bom}


def test_copper_between_switches_only_where_a_cage_goes_to_one_switch(tmp_path: Path, capsys) -> None:
    """A twin-port DAC joins one cage to one cage: with one link from each leaf to each spine it
    cannot be cabled, and validation says so at the tier's key."""
    text = """version: 1
cluster: c
node_groups:
  - {name: gpu, model: dgx-h100, count: 200}
fabrics:
  - name: ib
    kind: infiniband
    platform: ufm
    topology: fat-tree
    switch_model: qm9700
    node_groups: [gpu]
    cabling:
      leaf_spine: {media: dac}
"""
    inv = tmp_path / "inv.yaml"
    inv.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main(["validate", str(inv)])
    assert exc.value.code == 2
    assert ("fabrics[0].cabling.leaf_spine.media: passive copper (DAC) joins a cage to one cage"
            in capsys.readouterr().err)


def test_the_out_of_band_network_is_rj45_within_100_m(tmp_path: Path, capsys) -> None:
    text = (INVENTORIES / "superpod-cluster.yaml").read_text()
    anchor = "    oob_vlan: 10"
    if anchor not in text:
        anchor = "    role: oob"
    inv = tmp_path / "inv.yaml"
    inv.write_text(text.replace(anchor, anchor + "\n    cabling: {node_leaf: {length_m: 150}}", 1))
    with pytest.raises(SystemExit) as exc:
        main(["validate", str(inv)])
    assert exc.value.code == 2
    assert ".cabling.node_leaf.length_m: an out-of-band network's access ports are RJ45" in capsys.readouterr().err
