"""NVIDIA's collapsed north-south pair: a northsouth fabric of NVL72 racks sized by racks (no
scalable_unit) at 1-2 racks is one tier, two leaves and no spines (ERA-00012 Table 11: 2 switches),
joined by 20 x 400G peer links, each an unnumbered iBGP session (one ASN, IPv4 and EVPN, BFD) as
NVIDIA's generator writes csl-01/02 (net-configurator/output/2-4-5-800/default, spec/sizing.py
NS_PEER_LINKS). Read from the rendered BOM, cabling, NVUE (NVIDIA's object model for 5.14 and 5.16)
and report; growth past two racks (spines appear, the peer links go) is warned, planned_nodes
beyond two racks builds the spines from the start."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import nvue_model
import pytest
import yaml
from test_gb300_facts import inventory, rendered, rows, switches
from test_growth import assert_pure_addition, identities

PEER_LINKS = 20
LEAVES = ("ns-leaf001", "ns-leaf002")


def _release(text: str, release: str) -> str:
    return text.replace("    platform: nvue\n", f'    platform: nvue\n    platform_version: "{release}"\n')


def _tree(files: dict, leaf: str) -> tuple[dict, dict]:
    doc = yaml.safe_load(files[f"ns/switches/{leaf}.nvue.yaml"])
    return doc[0]["header"], doc[1]["set"]


@pytest.mark.parametrize("racks", [1, 2])
def test_one_or_two_racks_are_two_leaves_joined_by_a_peer_link(racks: int) -> None:
    files = rendered(inventory(racks))
    assert switches(files) == {"leaf": 2}  # Table 11 rows 1-2: 2 switches, no spines
    assert sorted(p for p in files if p.startswith("ns/switches/") and p.endswith(".yaml")) == \
        [f"ns/switches/{leaf}.nvue.yaml" for leaf in LEAVES]
    cabling = rows(files, "ns/cabling.csv")
    peer = [r for r in cabling if r["tier"] == "leaf-leaf"]
    assert len(peer) == PEER_LINKS and {r["speed"] for r in peer} == {"400G"}
    assert {(r["a_device"], r["z_device"]) for r in peer} == {LEAVES}
    assert all(r["a_port"] == r["z_port"] for r in peer)  # the same ports on both leaves
    assert len({r["a_port"] for r in peer}) == PEER_LINKS
    assert {r["tier"] for r in cabling} == {"node-leaf", "leaf-leaf"}
    # the node ports and the peer ports never share a port
    node_ports = {(r["z_device"], r["z_port"]) for r in cabling if r["tier"] == "node-leaf"}
    assert not node_ports & {(r["a_device"], r["a_port"]) for r in peer}
    bom = [r for r in rows(files, "ns/bom.csv")
           if r["category"] == "cable" and r["description"].startswith("leaf-leaf")]
    assert [int(r["quantity"]) for r in bom] == [PEER_LINKS]
    fabric = json.loads(files["report.json"])["fabrics"]["ns"]
    assert fabric["tiers"] == 1 and fabric["switches"]["spine"] == 0
    assert fabric["links"]["leaf-leaf"] == PEER_LINKS and fabric["northsouth"]["peer_links"] == PEER_LINKS
    md = str(files["report.md"], "utf-8")
    assert "A collapsed pair, as NVIDIA builds 1-2 racks" in md and f"{PEER_LINKS} x 400G peer links" in md
    assert "| leaf-leaf (peer) links | 20 |" in md and "A single switch" not in md
    assert "all endpoints fit on one leaf" not in md


@pytest.mark.parametrize("release", ["5.14", "5.16"])
def test_the_peer_link_is_an_ibgp_session_on_both_sides_and_nvidias_model_takes_it(release: str) -> None:
    files = rendered(_release(inventory(2), release))
    peer_ports = sorted({r["a_port"] for r in rows(files, "ns/cabling.csv") if r["tier"] == "leaf-leaf"})
    asns = set()
    for leaf in LEAVES:
        header, tree = _tree(files, leaf)
        assert nvue_model.release(header) == release
        assert nvue_model.problems(release, tree) == [], leaf
        bgp = tree["vrf"]["default"]["router"]["bgp"]
        asns.add(tree["router"]["bgp"]["autonomous-system"])
        on_link = {n: v for n, v in bgp["neighbor"].items() if n in peer_ports}
        assert sorted(on_link) == peer_ports  # a session on every peer link, on both leaves
        assert set(map(json.dumps, on_link.values())) == {json.dumps({"peer-group": "ISL", "type": "unnumbered"})}
        group = bgp["peer-group"]["ISL"]
        assert group["remote-as"] == "internal"
        assert "l2vpn-evpn" in group["address-family"]  # the pair exchange EVPN routes over it
        assert group["bfd"] == ({"profile": "FABRIC"} if release >= "5.15" else {"enable": "on"})
        for port in peer_ports:  # routed ports tracked as EVPN-MH uplinks, as NVIDIA's ISL
            word = "on" if release < "5.15" else "enabled"
            assert tree["interface"][port]["evpn"] == {"multihoming": {"uplink": word}}
    assert len(asns) == 1  # iBGP: one ASN for the pair
    # the `nv set` script, run by bash, builds the same tree, which the model takes
    from test_baseline_nvue import leaves as words_of
    from test_baseline_nvue import run_script

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "leaf.nvue.sh"
        script.write_bytes(files[f"ns/switches/{LEAVES[1]}.nvue.sh"])
        calls = run_script(script)
    assert calls[:-1] == [["set", *w] for w in words_of(tree)]
    built: dict = {}
    for call in calls[:-1]:
        nvue_model.merge(built, nvue_model.parse_nv_words(release, call[1:]))
    assert built == tree
    assert ["set", "vrf", "default", "router", "bgp", "peer-group", "ISL", "remote-as", "internal"] in calls
    # NVIDIA's object model refuses a broken remote-as on the peer link
    tree["vrf"]["default"]["router"]["bgp"]["peer-group"]["ISL"]["remote-as"] = "inside"
    assert any("peer-group.ISL.remote-as" in p for p in nvue_model.problems(release, tree))


def test_one_rack_to_two_is_pure_addition() -> None:
    assert_pure_addition(inventory(1), inventory(2))


def test_two_racks_to_three_is_warned_and_moves_cables() -> None:
    v, f, *_ = identities(inventory(2))
    assert f.plan.tiers == 1 and f.plan.peer_links == PEER_LINKS
    warned = [w for ws in v.warnings.values() for w in ws if "growing this fabric by one rack (to 54 nodes)" in w]
    assert warned and "from 1 to 2 tiers" in warned[0] and "planned_nodes" in warned[0], v.warnings
    with pytest.raises(AssertionError, match="existing cables moved"):
        assert_pure_addition(inventory(2), inventory(3), warned=True)


def test_planned_beyond_two_racks_builds_the_spines_now() -> None:
    _, f, *_ = identities(inventory(1, planned=54))
    assert f.plan.tiers == 2 and f.plan.peer_links == 0 and f.plan.spines == 2
    assert_pure_addition(inventory(1, planned=54), inventory(3, planned=54))
    # planned at two racks: still the pair, and no growth warning
    v, f, *_ = identities(inventory(1, planned=36))
    assert f.plan.peer_links == PEER_LINKS
    assert not any("growing this fabric" in w for ws in v.warnings.values() for w in ws)


def test_pinned_two_tiers_keep_the_spines() -> None:
    text = inventory(1).replace("    topology: rail-optimized\n", "    topology: rail-optimized\n    tiers: 2\n")
    files = rendered(text)
    assert switches(files) == {"leaf": 2, "spine": 2}
    assert "leaf-leaf" not in {r["tier"] for r in rows(files, "ns/cabling.csv")}
