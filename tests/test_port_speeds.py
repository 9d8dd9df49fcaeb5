"""A speed per port group (`fabrics[].cabling.<tier>.speed`, docs/hardware.md "Port speeds"): each
cage split at its tier's speed as NVIDIA's generator splits them (core-01-config.sh of 2-8-9-400 at
993eed6: hosts 4 x 200G, switch-to-switch links 2 x 400G), checked by NVIDIA's NVUE object model;
sizing, cabling, the BOM and NetBox follow each link's speed; impossible speeds refused, located;
growth only adds."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import nvue_model
import pytest
import yaml
from test_growth import assert_pure_addition, inventory, review
from typer.testing import CliRunner

from conftest import INVENTORIES
from fabgen.cli import app
from fabgen.pipeline import render_to
from fabgen.spec.sizing import parse_ratio, plan

CAGE_GBPS = 800  # an SN5600 cage
BREAKOUT = {"2x": 2, "4x": 4, "8x": 8}

INVENTORY = """version: 1
cluster: ps
node_groups:
  - {{name: gpu, model: dgx-b200, count: {count}}}
fabrics:
  - name: sx
    kind: spectrum-x
    platform: {platform}
{release}    topology: rail-optimized
    switch_model: {model}
    node_groups: [gpu]
    scalable_unit: 16
    planned_nodes: 32
{extra}    management: {{prefix: 172.20.0.0/24, gateway: 172.20.0.1}}
    cabling:
{cabling}"""

MIXED = "      node_leaf: {speed: 200}\n      leaf_spine: {speed: 400}\n"


def _write(tmp: Path, count: int = 16, cabling: str = MIXED, extra: str = "", platform: str = "nvue",
           model: str = "sn5600", release: str | None = None) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    inv = tmp / "inventory.yaml"
    rel = f'    platform_version: "{release}"\n' if release else ""
    inv.write_text(INVENTORY.format(count=count, cabling=cabling, extra=extra, platform=platform, model=model,
                                    release=rel))
    return inv


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _trees(folder: Path) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    out = {}
    for p in sorted((folder / "switches").glob("*.nvue.yaml")):
        header, body = yaml.safe_load(p.read_text())
        out[p.name.removesuffix(".nvue.yaml")] = (header["header"], body["set"])
    return out


def _cages(tree: dict[str, Any]) -> dict[str, tuple[int, list[str]]]:
    """Each split cage: its breakout's port count and the speeds of its used subports."""
    ports = tree["interface"]
    out = {}
    for name, port in ports.items():
        modes = port.get("link", {}).get("breakout")
        if modes:
            (mode,) = modes
            subs = [p.get("link", {}).get("speed") for n, p in ports.items() if n.startswith(f"{name}s")
                    and "description" in p]
            if subs:  # a cage of the plan nothing is cabled to yet: its ports down
                out[name] = (BREAKOUT[mode], subs)
    return out


@pytest.mark.parametrize("release", ["5.13", "5.16"])
def test_mixed_port_groups_pass_nvidias_object_model_cage_by_cage(release: str, tmp_path: Path) -> None:
    """Hosts 4 x 200G and uplinks 2 x 400G (as NVIDIA's core-01 at 993eed6), three tiers with 800G
    core links whole: every switch passes the object model of its release; every cage's breakout
    times its used ports' speed is the cage's 800G; the model refuses a broken breakout and speed."""
    out = tmp_path / "out"
    three = MIXED + "      spine_core: {speed: 800}\n"
    render_to(_write(tmp_path, cabling=three, extra="    tiers: 3\n", release=release), out)
    trees = _trees(out / "sx")
    speeds_seen: set[str] = set()
    for name, (header, tree) in trees.items():
        assert nvue_model.release(header) == release
        assert nvue_model.problems(release, tree) == [], name
        for cage, (split, subs) in _cages(tree).items():
            assert subs and all(int(s.removesuffix("G")) * split == CAGE_GBPS for s in subs), (name, cage, subs)
        speeds_seen |= {p["link"]["speed"] for p in tree["interface"].values()
                        if "description" in p and "speed" in p.get("link", {})}
    assert speeds_seen == {"200G", "400G", "800G"}
    first = next(n for n in trees if "leaf" in n)
    leaf = trees[first][1]["interface"]
    # 16 host ports on cages 1-4 split 4x; the 32 uplink ports (16 x 400G) on cages 5-12 split 2x
    assert {c for c, (n, _) in _cages(trees[first][1]).items() if n == 4} == {"swp1", "swp2", "swp3", "swp4"}
    assert leaf["swp1s0"]["link"]["speed"] == "200G" and leaf["swp5s0"]["link"]["speed"] == "400G"
    assert leaf["swp5"]["link"]["breakout"] == {"2x": {}} and "swp5s2" not in leaf
    core = trees[next(n for n in trees if "core" in n)][1]["interface"]
    assert "breakout" not in core["swp1"].get("link", {}) and core["swp1"]["link"]["speed"] == "800G"
    # adaptive routing on the 400G uplinks, not on the 800G core links (Spectrum-4 adapts up to 400G)
    assert "adaptive-routing" in leaf["swp5s0"]["router"] and "router" not in core["swp1"]
    # the object model refuses what a wrong split writes
    broken = trees[first][1]
    broken["interface"]["swp5"]["link"]["breakout"] = {"2x": {"lanes-per-port": "3"}}
    assert any("lanes-per-port" in p or "lanes_per_port" in p for p in nvue_model.problems(release, broken))
    broken["interface"]["swp5"]["link"]["breakout"] = {"2x": {}}
    broken["interface"]["swp5s0"]["link"]["speed"] = "300G"
    assert any("speed" in p for p in nvue_model.problems(release, broken))
    # and the nv set script says the same lines
    script = (out / "sx" / "switches" / f"{first}.nvue.sh").read_text()
    assert "nv set interface swp5 link breakout 2x" in script and "nv set interface swp1 link breakout 4x" in script
    assert "nv set interface swp5s0 link speed 400G" in script and "nv set interface swp1s0 link speed 200G" in script


def test_uniform_speeds_write_what_they_wrote_before(tmp_path: Path) -> None:
    """Speeds equal to the defaults are not a mix: no `link speed`, one breakout for every cage."""
    out = tmp_path / "out"
    render_to(_write(tmp_path, cabling="      node_leaf: {speed: 400}\n      leaf_spine: {speed: 400}\n"), out)
    for _, tree in _trees(out / "sx").values():
        assert not any("speed" in p.get("link", {}) for p in tree["interface"].values())
        assert {m for p in tree["interface"].values() for m in p.get("link", {}).get("breakout", {})} == {"2x"}


def test_a_fabric_at_100g_splits_every_cage_8x(tmp_path: Path) -> None:
    """100G on an SN5600 (NVIDIA's `link breakout 8x`, csl-01 at 993eed6): every cage 8 x 100G, the
    ports swp<c>s0-s7, as the object model takes them."""
    out = tmp_path / "out"
    render_to(_write(tmp_path, cabling="      node_leaf: {speed: 100}\n"), out)
    for name, (header, tree) in _trees(out / "sx").items():
        assert nvue_model.problems(nvue_model.release(header), tree) == [], name
        assert {m for p in tree["interface"].values() for m in p.get("link", {}).get("breakout", {})} == {"8x"}
        assert "swp1s7" in tree["interface"] and "swp1s8" not in tree["interface"]
    assert {r["speed"] for r in _rows(out / "sx" / "cabling.csv")} == {"100G"}


def test_sizing_counts_uplinks_at_their_speed() -> None:
    """A leaf's uplink bandwidth is its uplinks x their speed: 400G uplinks above 200G hosts halve the
    uplink cables at the same ratio, same switch counts; NVIDIA's collapsed pair keeps its 20 peer links."""
    rules = dict(topology="rail-optimized", radix=256, speed=200, rails=8, ratio=parse_ratio(1), scalable_unit=32,
                 tiers="auto", model="sn5600", even_spines=True)
    same = plan(nodes=64, **rules)
    fast = plan(nodes=64, ls_speed=400, sc_speed=400, cage_ports=4, **rules)
    assert (fast.leaves, fast.spines) == (same.leaves, same.spines)
    assert fast.up // fast.factor("leaf-spine") == same.up // 2 == 16
    assert fast.up * fast.speed == same.up * same.speed  # the same bandwidth
    assert fast.up_base == 32 and fast.cage_speeds("leaf", 64)[:9] == (200,) * 8 + (400,)
    pair = dict(topology="rail-optimized", radix=256, speed=200, rails=2, ratio=parse_ratio(1), model="sn5600",
                storage_pairs=True, domain=18, even_spines=True)
    collapsed = plan(nodes=18, ls_speed=400, sc_speed=400, cage_ports=4, **pair)
    assert collapsed.tiers == 1 and collapsed.peer_links // collapsed.factor("leaf-spine") == 20


def test_cabling_bom_and_netbox_follow_each_links_speed(tmp_path: Path) -> None:
    """cabling.csv, bom.csv and NetBox's interfaces: the leaf-spine links at 400G, half as many as at
    200G, a transceiver per used cage; the report's bisection the same bandwidth."""
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    render_to(_write(tmp_path / "a"), fast)
    render_to(_write(tmp_path / "b", cabling="      node_leaf: {speed: 200}\n"), slow)
    up = {k: [r for r in _rows(o / "sx" / "cabling.csv") if r["tier"] == "leaf-spine"] for k, o in
          (("fast", fast), ("slow", slow))}
    assert {r["speed"] for r in up["fast"]} == {"400G"} and {r["speed"] for r in up["slow"]} == {"200G"}
    assert len(up["fast"]) * 2 == len(up["slow"]) == 8 * 16  # 8 leaves, 16 x 200G of uplinks each
    assert {r["speed"] for r in _rows(fast / "sx" / "cabling.csv") if r["tier"] == "node-leaf"} == {"200G"}
    bom = {k: {r["description"]: r for r in _rows(o / "sx" / "bom.csv")} for k, o in (("fast", fast), ("slow", slow))}
    ls = next(r for d, r in bom["fast"].items() if d.startswith("leaf-spine"))
    assert ls["notes"] == "400G" and int(ls["quantity"]) == len(up["fast"])
    # a transceiver per used cage: 4 host cages and 8 uplink cages a leaf, either way, and the spines'
    switch_side = {k: sum(int(r["quantity"]) for d, r in b.items() if d == "switch side") for k, b in bom.items()}
    assert switch_side["fast"] == switch_side["slow"]
    nb = [r for r in _rows(fast / "netbox" / "07-interfaces.csv") if r.get("description", "").endswith("leaf-spine")
          or "leaf-spine" in ",".join(r.values())]
    assert nb and {r["type"] for r in nb} == {"400gbase-x-osfp"} and {r["speed"] for r in nb} == {"400000000"}
    report = {k: json.loads((o / "report.json").read_text()) for k, o in (("fast", fast), ("slow", slow))}
    bis = {k: r["fabrics"]["sx"]["bisection_bandwidth_gbps"] for k, r in report.items()}
    assert bis["fast"] == bis["slow"] > 0


def test_nvidias_2_8_9_400_example_runs_its_north_south_pair_at_nvidias_speeds(tmp_path: Path) -> None:
    """inventories/era-2-8-9-400.yaml: the north-south hosts 4 x 200G on swp1-swp3 (NVIDIA's core-01),
    the links between its switches (the collapsed pair's peer links) 2 x 400G on cages of their own after
    the 128 node ports the pair plans, every switch of the object model."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "era-2-8-9-400.yaml", out)
    trees = _trees(out / "ns")
    for name, (header, tree) in trees.items():
        assert nvue_model.problems(nvue_model.release(header), tree) == [], name
    leaf = trees["ns-su001-leaf1"][1]["interface"]
    assert [leaf[f"swp{c}"]["link"]["breakout"] for c in (1, 2, 3)] == [{"4x": {}}] * 3
    assert leaf["swp4"]["link"]["breakout"] == {"4x": {}}  # planned node ports, at 200G
    assert leaf["swp33"]["link"]["breakout"] == {"2x": {}} and leaf["swp33s0"]["link"]["speed"] == "400G"
    assert {r["speed"] for r in _rows(out / "ns" / "cabling.csv") if r["tier"] == "leaf-leaf"} == {"400G"}
    # the border uplinks at their own 100G (northsouth.border.speed, tests/test_slow_tiers.py)
    assert "by tier: node-leaf 200G, leaf-leaf 400G, leaf-border 100G." in (out / "report.md").read_text()


def test_a_collapsed_pair_keeps_nvidias_20_peer_links_at_their_own_speed(tmp_path: Path) -> None:
    """2-4-5-800's collapsed pair with its trays at 200G (NVIDIA's larger size, 4 a cage): the 20 peer
    links stay 20, at 400G, on cages of their own; the report says 20 x 400G."""
    inv = tmp_path / "era.yaml"
    text = (INVENTORIES / "era-2-4-5-800.yaml").read_text()
    inv.write_text(text.replace("node_leaf: {speed: 400}", "node_leaf: {speed: 200}", 1))
    out = tmp_path / "out"
    render_to(inv, out)
    peer = [r for r in _rows(out / "ns" / "cabling.csv") if r["tier"] == "leaf-leaf"]
    assert len(peer) == 20 and {r["speed"] for r in peer} == {"400G"}
    trays = [r for r in _rows(out / "ns" / "cabling.csv")
             if r["tier"] == "node-leaf" and r["a_device"].startswith("su-")]
    assert {r["speed"] for r in trays} == {"200G"} and {r["z_port"][:5] for r in trays} == {"swp1s", "swp2s", "swp3s",
                                                                                           "swp4s", "swp5s"}
    # the support servers after the second rack's 18 tray ports at 200G (swp5s2-swp9s3): from swp10s0
    servers = sorted({r["z_port"] for r in _rows(out / "ns" / "cabling.csv") if r["a_device"].startswith("support-")})
    assert servers[0] == "swp10s0" and len(servers) == 24
    assert "joined by 20 x 400G peer links" in (out / "report.md").read_text()
    for name, (header, tree) in _trees(out / "ns").items():
        assert nvue_model.problems(nvue_model.release(header), tree) == [], name


REFUSED = [  # cabling, platform/model, key, words of the message
    ("      node_leaf: {speed: 300}\n", "nvue", "node_leaf", "cages run 800G, 400G, 200G, 100G, not 300G"),
    ("      node_leaf: {speed: 800}\n", "nvue", "node_leaf", "NICs run at most 400G"),
    ("      node_leaf: {speed: 400}\n      leaf_spine: {speed: 200}\n", "nvue", "leaf_spine", "slower tier"),
    (MIXED, "eos", "leaf_spine", "not built yet on eos"),
    ("      leaf_spine: {speed: 800}\n", "sonic", "leaf_spine", "cages run 400G, not 800G"),
    # 18 nodes a unit: 18 x 200G of uplinks a leaf, 9 to each of two spines: not whole 400G links
    (MIXED, "nvue-18", "leaf_spine", "9 x 200G to each spine: not whole 400G links"),
]


@pytest.mark.parametrize("cabling,platform,key,words", REFUSED)
def test_a_speed_the_cage_or_nic_cannot_run_is_refused_located(cabling: str, platform: str, key: str, words: str,
                                                              tmp_path: Path) -> None:
    kind = {"eos": ("eos", "arista-7060x5"), "sonic": ("sonic", "arista-7060x6-64pe-b")}.get(platform,
                                                                                           ("nvue", "sn5600"))
    inv = _write(tmp_path, cabling=cabling, platform=kind[0], model=kind[1])
    text = inv.read_text()
    if platform in ("eos", "sonic"):
        text = text.replace("kind: spectrum-x", "kind: roce")
    if platform == "nvue-18":
        text = text.replace("count: 16", "count: 18").replace("scalable_unit: 16", "scalable_unit: 18") \
            .replace("planned_nodes: 32", "planned_nodes: 36")
    inv.write_text(text)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert not out.exists()
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip().startswith(f"{key}:"))
    message = result.output
    assert f"{inv}:{line}:" in message and f"cabling.{key}.speed" in message, message
    assert words in message, message
    assert "Traceback" not in message


def test_a_speed_on_infiniband_or_the_out_of_band_network_is_refused(tmp_path: Path) -> None:
    inv = _write(tmp_path, cabling="      node_leaf: {speed: 200}\n", platform="opensm", model="qm9700")
    inv.write_text(inv.read_text().replace("kind: spectrum-x", "kind: infiniband"))
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "routed Ethernet fabrics" in result.output, result.output


GROWN = "    cabling:\n      node_leaf: {speed: 200}\n      leaf_spine: {speed: 400}\n      spine_core: {speed: 800}\n"


def _mixed(text: str) -> str:
    return text.replace("    management: 10.30.0.0/16\n", "    management: 10.30.0.0/16\n" + GROWN, 1)


@pytest.mark.parametrize("topology,tiers,nodes,planned", [("rail-optimized", 2, 4, 16), ("rail-optimized", 3, 8, 16),
                                                          ("fat-tree", 2, 8, 24)])
def test_a_planned_fabric_at_mixed_speeds_grows_by_pure_addition(topology: str, tiers: int, nodes: int,
                                                                 planned: int, tmp_path: Path, capsys) -> None:
    """Cages are split by the plan, not by what is cabled: N nodes' cables, names and addresses are a
    subset of N + a unit's, and the review of the growth has additions only."""
    small = _mixed(inventory("nvue", topology, nodes, planned, su=4, tiers=tiers))
    big = _mixed(inventory("nvue", topology, nodes + 4, planned, su=4, tiers=tiers))
    assert "speed: 400" in small
    assert_pure_addition(small, big)
    out = review(tmp_path, small, big, capsys)
    assert "Links added (" in out
    for heading in ("Devices changed", "Links re-cabled", "Links removed", "Addresses changed"):
        assert f"{heading} (" not in out, out[:3000]
