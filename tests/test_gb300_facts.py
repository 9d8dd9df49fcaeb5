"""NVIDIA's GB300 NVL72 facts (ERA-00012 and NVIDIA's net-configurator output for 2-4-5-800,
docs/hardware.md): one dual-port BlueField-3 B3240 a tray, the GB200 tray's two kept; the converged
north-south switches per rack count (Table 11: 2, 2, 5, 6, 9, 10, 11, 11 for 1-8 racks), read from
the rendered BOM and cabling, and their growth by a rack."""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest
from test_growth import assert_pure_addition, identities

from fabgen.errors import InventoryError
from fabgen.inventory.loader import load_text
from fabgen.inventory.validate import validate
from fabgen.pipeline import run

# ERA-00012 Table 11: converged north-south switches for 1-8 racks; leaves 2/4/7, spines -/2/4 at 2/4/8
TABLE_11 = {1: 2, 2: 2, 3: 5, 4: 6, 5: 9, 6: 10, 7: 11, 8: 11}


def inventory(racks: int, model: str = "gb300-nvl72", planned: int | None = None, unit: int | None = None,
              separate: bool = False) -> str:
    """GB300 (or GB200) trays on a converged north-south fabric sized by fabgen, or on separate
    storage and in-band fabrics."""
    head = ["version: 1", "cluster: gbf", "node_groups:",
            f"  - {{name: gb, model: {model}, count: {18 * racks}, hostname: 'gb{{n:03d}}'}}", "fabrics:"]
    extra = ([f"    planned_nodes: {planned}"] if planned else []) + ([f"    scalable_unit: {unit}"] if unit else [])
    if separate:
        fabrics = []
        for k, role in enumerate(("storage", "inband")):
            fabrics += [f"  - name: {role[:3]}", f"    role: {role}", "    kind: spectrum-x", "    platform: nvue",
                        "    topology: rail-optimized", "    switch_model: sn5600", "    node_groups: [gb]",
                        f"    management: {{prefix: 192.168.{61 + k}.0/24, gateway: 192.168.{61 + k}.1}}"]
        return "\n".join(head + fabrics) + "\n"
    return "\n".join(head + [
        "  - name: ns", "    role: northsouth", "    kind: spectrum-x", "    platform: nvue",
        "    topology: rail-optimized", "    switch_model: sn5600", "    node_groups: [gb]", *extra,
        "    management: {prefix: 192.168.61.0/24, gateway: 192.168.61.1}",
        "    ethernet:", "      pools: {loopbacks: 10.254.0.0/24, links: 10.252.0.0/20, hosts: 10.160.0.0/16}"]) + "\n"


def rendered(text: str) -> dict:
    return run(load_text(text, "gbf.yaml")).files


def rows(files: dict, path: str) -> list[dict[str, str]]:
    body = files[path]
    return list(csv.DictReader(io.StringIO(body.decode() if isinstance(body, bytes) else body)))


def switches(files: dict, fabric: str = "ns") -> Counter:
    """The switches of the rendered BOM by tier (its notes: '3 leaf + 2 spine')."""
    row = next(r for r in rows(files, f"{fabric}/bom.csv") if r["category"] == "switch")
    tiers = Counter({word: int(n) for n, word in (part.split() for part in row["notes"].split(" + "))})
    assert sum(tiers.values()) == int(row["quantity"])
    return tiers


@pytest.mark.parametrize("racks", range(1, 9))
def test_north_south_switches_per_rack_count_are_table_11s(racks: int) -> None:
    files = rendered(inventory(racks))
    tiers = switches(files)
    assert tiers["leaf"] + tiers["spine"] == TABLE_11[racks]
    assert tiers["leaf"] == {2: 2, 4: 4, 8: 7}.get(racks, tiers["leaf"])  # Table 11's leaves
    # and spines: none at 1-2 racks, NVIDIA's collapsed pair (tests/test_collapsed_pair.py)
    assert tiers["spine"] == {1: 0, 2: 0, 4: 2, 8: 4}.get(racks, tiers["spine"])
    configs = [p for p in files if p.startswith("ns/switches/") and p.endswith(".nvue.yaml")]
    assert len(configs) == sum(tiers.values())  # a config per switch the BOM counts


def test_eight_racks_cable_as_nvidias_largescale_output() -> None:
    """NVIDIA's cl-01 (2-4-5-800 largescale) holds su-01-node-01, 07, 08, 14, 15, ...: node n on leaves
    n and n + 1 mod 7, 41 or 42 tray ports a leaf, each leaf 64 x 400G up, 16 to each of 4 spines."""
    cabling = rows(rendered(inventory(8)), "ns/cabling.csv")
    legs: dict[str, list[str]] = {}
    up: Counter = Counter()
    for r in cabling:
        if r["tier"] == "node-leaf":
            legs.setdefault(r["a_device"], []).append(r["z_device"])
        else:
            up[(r["a_device"], r["z_device"])] += 1
    first = sorted(n for n, leaves in legs.items() if "ns-leaf001" in leaves)[:5]
    assert first == ["gb001", "gb007", "gb008", "gb014", "gb015"]
    assert all(len(set(v)) == 2 for v in legs.values()) and len(legs) == 144
    per_leaf = Counter(leaf for v in legs.values() for leaf in v)
    assert len(per_leaf) == 7 and set(per_leaf.values()) <= {40, 41, 42} and sum(per_leaf.values()) == 288
    assert set(up.values()) == {16} and len(up) == 7 * 4


def test_the_report_says_how_the_trays_are_cabled() -> None:
    striped = str(rendered(inventory(3))["report.md"], "utf-8")
    assert "dual-homed to two of the 3 leaves (node n on leaves n and n + 1" in striped
    paired = str(rendered(inventory(2, unit=36))["report.md"], "utf-8")
    assert "dual-homed to its unit's leaf pair" in paired and "of the 2 leaves" not in paired


def test_a_gb300_tray_has_one_bluefield3_in_bom_and_cabling() -> None:
    files = rendered(inventory(2))
    bom = [r for r in rows(files, "ns/bom.csv") if r["category"] == "included"]
    assert [(r["part"], r["quantity"]) for r in bom] == [("BlueField-3 B3240 dual-port QSFP112 (1 per tray)", "72")]
    ports = {(r["a_device"], r["a_port"]) for r in rows(files, "ns/cabling.csv") if r["tier"] == "node-leaf"}
    assert {p for d, p in ports if d == "gb001"} == {"mlx5_2", "mlx5_3"} and len(ports) == 72
    # separate storage and in-band fabrics: P1 and P2, each single-homed
    files = rendered(inventory(1, separate=True))
    for fabric, port in (("sto", "mlx5_2"), ("inb", "mlx5_3")):
        cabled = [r for r in rows(files, f"{fabric}/cabling.csv") if r["a_device"] == "gb001"]
        assert [r["a_port"] for r in cabled] == [port]
        assert rows(files, f"{fabric}/bom.csv")[1]["part"] == "BlueField-3 B3240 dual-port QSFP112 (1 per tray)"


def test_gb200_keeps_two_bluefield3() -> None:
    files = rendered(inventory(2, model="gb200-nvl72", unit=36))
    ports = {(r["a_device"], r["a_port"]) for r in rows(files, "ns/cabling.csv") if r["tier"] == "node-leaf"}
    assert {p for d, p in ports if d == "gb001"} == {"mlx5_2", "mlx5_6"}  # P1 of the left and right card
    files = rendered(inventory(1, model="gb200-nvl72", separate=True))
    for fabric, names in (("sto", ["mlx5_2", "mlx5_6"]), ("inb", ["mlx5_3", "mlx5_7"])):
        assert sorted(r["a_port"] for r in rows(files, f"{fabric}/cabling.csv") if r["a_device"] == "gb001") == names
    assert rows(files, "sto/bom.csv")[1]["part"] == "BlueField-3 B3240 (2 per tray)"


def test_a_declared_unit_keeps_its_leaf_pairs() -> None:
    """An inventory's scalable_unit is kept: two racks per leaf pair, each tray on one pair."""
    _, f, *_ = identities(inventory(4, unit=36))
    assert not f.plan.striped and f.plan.compute_leaves == 4 and f.plan.unit_nodes == 36


@pytest.mark.parametrize("racks", [1, 3, 7])
def test_a_planned_north_south_fabric_grows_by_a_rack_by_pure_addition(racks: int) -> None:
    assert_pure_addition(inventory(racks, planned=144), inventory(racks + 1, planned=144))


def test_an_unplanned_one_warns_that_the_next_rack_restripes() -> None:
    v, f, *_ = identities(inventory(3))
    assert f.plan.striped and f.plan.compute_leaves == 3
    warned = [w for ws in v.warnings.values() for w in ws if "growing this fabric by one rack (to 72 nodes)" in w]
    assert warned and "move" in warned[0] and "planned_nodes" in warned[0], v.warnings
    with pytest.raises(AssertionError, match="existing cables moved"):
        assert_pure_addition(inventory(3), inventory(4), warned=True)
    # seven racks to eight keep 7 leaves: no warning, nothing moves
    v, *_ = identities(inventory(7))
    assert not any("growing this fabric" in w for ws in v.warnings.values() for w in ws)
    assert_pure_addition(inventory(7), inventory(8))


def test_a_tray_on_a_northsouth_and_a_storage_fabric_is_refused() -> None:
    text = inventory(1).replace("fabrics:\n", "fabrics:\n  - {name: st, role: storage, kind: spectrum-x, platform: "
                                "nvue, topology: rail-optimized, switch_model: sn5600, node_groups: [gb], "
                                "management: {prefix: 192.168.9.0/24, gateway: 192.168.9.1}}\n", 1)
    with pytest.raises(InventoryError, match="already attached to fabric 'st' for role storage"):
        validate(load_text(text, "gbf.yaml"))
