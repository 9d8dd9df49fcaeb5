"""northsouth.border: the north-south fabric's way out, as NVIDIA's generator writes it
(net-configurator/output/2-4-5-800/default/configs/csl-01-config.sh at 993eed6, core-01-config.sh of
2-8-9-400 at 2f46cb2): VRF EXIT with its L3VNI on every leaf, unnumbered eBGP uplinks to the site
router with the outbound route-map OUTBOUND_ERA_PREFIXES, INBAND and STORAGE leaked to and from it
(route-import from-vrf, EXIT_FILTER tagging 11:11, each tenant's <VRF>_FILTER), 128 ECMP paths. Held
by NVIDIA's object model in four dialects, read back from the rendered files (NVUE trees, cabling.csv,
bom.csv), refused where it is bad (file:line:col, exit 2), and grown by addition only."""

from __future__ import annotations

import copy
import json

import nvue_model
import pytest
import yaml
from test_gb300_facts import inventory, rendered, rows
from typer.testing import CliRunner

from fabgen.cli import app
from fabgen.errors import InventoryError
from fabgen.inventory.loader import load_text
from fabgen.inventory.validate import validate

LEAVES = ("ns-leaf001", "ns-leaf002")
UPLINKS = 5  # NVIDIA's csl-01: swp61s0, swp62s0-swp62s3


def _with_border(text: str, border: str = "{router: site-router}", release: str | None = None) -> str:
    block = f"      northsouth:\n        border: {border}\n"
    text = text.replace("      pools: {loopbacks", block + "      pools: {loopbacks")
    if release:
        text = text.replace("    platform: nvue\n", f'    platform: nvue\n    platform_version: "{release}"\n')
    return text


def _tree(files: dict, leaf: str) -> tuple[dict, dict]:
    doc = yaml.safe_load(files[f"ns/switches/{leaf}.nvue.yaml"])
    return doc[0]["header"], doc[1]["set"]


@pytest.mark.parametrize("release", ["5.13", "5.14", "5.16", "5.18"])
def test_nvidias_object_model_takes_every_border_switch_and_refuses_a_broken_border_line(release: str) -> None:
    files = rendered(_with_border(inventory(1), "{router: site-router, asn: 65100}", release))
    for leaf in LEAVES:
        header, tree = _tree(files, leaf)
        assert nvue_model.release(header) == release
        assert nvue_model.problems(release, tree) == [], leaf
        assert "EXIT" in tree["vrf"]
    broken = copy.deepcopy(tree)  # a route-map rule's action is a word of its path, not a value
    broken["router"]["policy"]["route-map"]["EXIT_FILTER"]["rule"]["20"]["action"] = "permit"
    assert any("EXIT_FILTER" in p for p in nvue_model.problems(release, broken))
    broken = copy.deepcopy(tree)
    broken["vrf"]["EXIT"]["router"]["bgp"]["peer-group"]["exit"]["address-family"]["ipv4-unicast"]["policy"] = {
        "outbound": {"route-map": {"OUTBOUND_ERA_PREFIXES": {}}}}
    assert nvue_model.problems(release, broken)


def test_uplink_sessions_route_leaking_and_ecmp_are_nvidias() -> None:
    files = rendered(_with_border(inventory(2)))
    cabling = [r for r in rows(files, "ns/cabling.csv") if r["tier"] == "leaf-border"]
    for leaf in LEAVES:
        _, tree = _tree(files, leaf)
        ports = [r["a_port"] for r in cabling if r["a_device"] == leaf]
        assert len(ports) == UPLINKS
        exit_vrf = tree["vrf"]["EXIT"]
        assert exit_vrf["evpn"] == {"state": "enabled", "vni": {"5004": {}}}
        bgp = exit_vrf["router"]["bgp"]
        assert bgp["neighbor"] == {p: {"peer-group": "exit", "type": "unnumbered"} for p in ports}
        group = bgp["peer-group"]["exit"]
        assert group["remote-as"] == "external" and "bfd" not in group  # NVIDIA's: any external AS, no BFD
        assert group["address-family"]["ipv4-unicast"]["policy"] == {"inbound": {"route-map": "INBOUND_ERA_PREFIXES"},
                                                                    "outbound": {"route-map": "OUTBOUND_ERA_PREFIXES"}}
        # the fabric's own prefixes never come back from the site (fabgen's: docs/decisions.md)
        assert tree["router"]["policy"]["route-map"]["INBOUND_ERA_PREFIXES"]["rule"] == {
            "10": {"action": {"deny": {}}, "match": {"ip-prefix-list": "ERA_PREFIXES", "type": "ipv4"}},
            "20": {"action": {"permit": {}}}}
        assert bgp["router-id"] == tree["router"]["bgp"]["router-id"] and "l2vpn-evpn" in bgp["address-family"]
        af = bgp["address-family"]["ipv4-unicast"]
        assert af["multipaths"] == {"ebgp": 128}
        assert af["route-import"]["from-vrf"] == {"state": "enabled", "list": {"STORAGE": {}, "INBAND": {}},
                                                  "route-map": "EXIT_FILTER"}
        assert tree["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["multipaths"]["ebgp"] == 128
        for vrf in ("INBAND", "STORAGE"):
            imp = tree["vrf"][vrf]["router"]["bgp"]["address-family"]["ipv4-unicast"]["route-import"]["from-vrf"]
            assert imp == {"state": "enabled", "list": {"EXIT": {}}, "route-map": f"{vrf}_FILTER"}
        for p in ports:  # the uplinks are routed ports in EXIT, described by their far end
            assert tree["interface"][p]["vrf"] == "EXIT"
            assert tree["interface"][p]["description"].startswith("site-router:uplink")
        policy = tree["router"]["policy"]
        assert policy["route-map"]["EXIT_FILTER"]["rule"]["20"]["set"] == {"community": {"11:11": {}}}
        inband = policy["route-map"]["INBAND_FILTER"]["rule"]
        assert inband["5"] == {"action": {"deny": {}}, "match": {"community-list": "11"}}
        assert inband["10"]["match"]["ip-prefix-list"] == "STORAGE_PREFIXES"  # the tenants stay apart
        assert inband["15"]["match"]["ip-prefix-list"] == "INBAND_LOCAL_IF"
        svi = next(iter(tree["interface"]["vlan30"]["ipv4"]["address"]))
        assert policy["prefix-list"]["INBAND_LOCAL_IF"]["rule"]["10"]["match"] == {
            f"{svi.split('/')[0]}/32": {"max-prefix-len": 32}}
        out = policy["prefix-list"]["ERA_PREFIXES"]["rule"]
        assert [next(iter(r["match"])) for r in out.values()] == ["10.160.0.0/17", "10.160.128.0/17"]


def test_the_tenant_vrf_loopbacks_go_out_and_never_come_back() -> None:
    """With northsouth.vrf_loopbacks the tenants' VRF loopbacks leak into EXIT with their tenants:
    ERA_PREFIXES carries the loopbacks pool `le 32` after the subnets (NVIDIA's rule 20, its
    loopback range, csl-01-config.sh at 993eed6), so each loopback goes out to the site and none
    comes back (INBOUND_ERA_PREFIXES denies the list); the switches' own loopbacks stay in the
    default VRF, which is not leaked."""
    import ipaddress

    text = _with_border(inventory(2)).replace("        border: ", "        vrf_loopbacks: true\n        border: ")
    files = rendered(text)
    for leaf in LEAVES:
        _, tree = _tree(files, leaf)
        rules = tree["router"]["policy"]["prefix-list"]["ERA_PREFIXES"]["rule"]
        assert list(rules) == ["10", "20", "30"]
        (pool, le), = rules["30"]["match"].items()
        assert le == {"max-prefix-len": 32}
        for vrf in ("INBAND", "STORAGE"):
            (lo,) = tree["vrf"][vrf]["loopback"]["ip"]["address"]
            assert ipaddress.ip_network(lo).subnet_of(ipaddress.ip_network(pool))
    _, plain = _tree(rendered(_with_border(inventory(2))), LEAVES[0])  # no VRF loopbacks: nothing more
    assert list(plain["router"]["policy"]["prefix-list"]["ERA_PREFIXES"]["rule"]) == ["10", "20"]


def test_a_router_asn_and_bfd_class_are_written() -> None:
    text = _with_border(inventory(1), "{router: edge1, asn: 65100, leak: [inband]}").replace(
        "      pools: {loopbacks", "      bfd: {border: {interval_ms: 200, multiplier: 4}}\n      pools: {loopbacks")
    _, tree = _tree(rendered(text), LEAVES[0])
    group = tree["vrf"]["EXIT"]["router"]["bgp"]["peer-group"]["exit"]
    assert group["remote-as"] == 65100 and group["bfd"] == {"profile": "FABRIC-200x4"}
    assert tree["router"]["bfd"]["profile"]["FABRIC-200x4"] == {"detect-multiplier": 4, "min-rx-interval": 200,
                                                                "min-tx-interval": 200}
    assert tree["vrf"]["EXIT"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["route-import"]["from-vrf"][
        "list"] == {"INBAND": {}}
    assert "route-import" not in tree["vrf"]["STORAGE"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
    assert "STORAGE_FILTER" not in tree["router"]["policy"]["route-map"]


def test_cabling_and_bom_count_the_uplinks_and_no_border_changes_nothing() -> None:
    plain = rendered(inventory(1))
    files = rendered(_with_border(inventory(1)))
    up = [r for r in rows(files, "ns/cabling.csv") if r["tier"] == "leaf-border"]
    assert len(up) == 2 * UPLINKS and {r["z_device"] for r in up} == {"site-router"}
    assert [r["z_port"] for r in up] == [f"uplink{k}" for k in range(1, 2 * UPLINKS + 1)]
    assert rows(files, "ns/cabling.csv")[:-len(up)] == rows(plain, "ns/cabling.csv")  # appended only
    bom = {r["description"]: int(r["quantity"]) for r in rows(files, "ns/bom.csv")}
    assert bom["leaf-border (multimode fibre)"] == 2 * UPLINKS
    assert bom["switch side (border uplinks)"] == 6  # swp62s1, swp63s0-s1, swp64s0-s1: three cages a leaf
    changed = {p for p in files if files[p] != plain.get(p)}
    elsewhere = {p for p in changed if not p.startswith(("ns/", "ansible/configs/ns-", "netbox/"))}
    assert elsewhere <= {"manifest.json", "report.json", "report.md"}  # the report: the BOM
    assert "site-router" not in str(plain["ns/cabling.csv"])
    # the report counts the uplinks as links of their own and their leaf ports as used
    ns, ns_plain = (json.loads(f["report.json"])["fabrics"]["ns"] for f in (files, plain))
    assert ns["links"]["leaf-border"] == len(up) and "leaf-border" not in ns_plain["links"]
    assert ns["switch_ports"]["used"] == ns_plain["switch_ports"]["used"] + len(up)
    assert f"| leaf-border (site router) links | {len(up)} |" in files["report.md"].decode()
    # the PTM and Batfish files hold every cable, the uplinks too (tests/test_validators.py holds both)
    for p in ("ns/validate/ptm-topology.dot", "ns/validate/layer1_topology.json"):
        assert b"site-router" in files[p] and b"site-router" not in plain[p]


def test_growth_from_one_to_two_racks_only_adds() -> None:
    small, big = rendered(_with_border(inventory(1))), rendered(_with_border(inventory(2)))
    up = [tuple(r.values()) for r in rows(small, "ns/cabling.csv") if r["tier"] == "leaf-border"]
    assert up == [tuple(r.values()) for r in rows(big, "ns/cabling.csv") if r["tier"] == "leaf-border"]
    for leaf in LEAVES:
        old = set(str(small[f"ns/switches/{leaf}.nvue.sh"], "utf-8").splitlines())
        new = set(str(big[f"ns/switches/{leaf}.nvue.sh"], "utf-8").splitlines())
        border = {line for line in old if "EXIT" in line or "site-router" in line or "_FILTER" in line}
        assert border and border <= new


BAD = [
    ("{router: r1, multipaths: exit-only}", "multipaths", "default-only"),
    ("{router: 'site router'}", "router", "not a valid name"),
    ("{router: 'a\"b'}", "router", "not a valid name"),
    ("{router: r1, asn: 4294967295}", "asn", "at most 4294967294"),
    ("{router: r1, asn: 0}", "asn", "at least 1"),
    ("{router: ns-leaf001}", "router", "also the name of a switch"),
    ("{router: gb003}", "router", "also a node of group"),
    ("{router: r1, vrf: INBAND}", "vrf", "is a tenant's"),
    ("{router: r1, vrf: swp3}", "vrf", "named like a switch port"),
    ("{router: r1, l3vni: 10030}", "l3vni", "is a tenant's"),
    ("{router: r1, leak: [inband, inband]}", "leak", "listed twice"),
    ("{router: r1, leak: []}", "leak", "at least 1"),
    ("{router: inband-gateway}", "router", "anycast gateway"),
    ("{router: r1, asn: 4200010000}", "asn", "leaf ASNs"),  # the fabric's own: an iBGP peer
]


def test_a_router_named_by_two_fabrics_is_refused() -> None:
    """Two northsouth fabrics handing off to one router would number its ports twice (cabling.csv,
    NetBox): refused where the second names it; two routers are fine."""
    text = _with_border(inventory(1), "{router: r1, asn: 65001}")
    second = text[text.index("  - name: ns\n"):].replace("name: ns\n", "name: ns2\n", 1).replace(
        "node_groups: [gb]", "node_groups: [gb2]").replace("192.168.61.", "192.168.62.").replace(
        "10.254.0.0/24", "10.253.0.0/24").replace("10.252.0.0/20", "10.240.0.0/20").replace(
        "10.160.0.0/16", "10.161.0.0/16")
    text = text.replace("fabrics:\n", "  - {name: gb2, model: gb300-nvl72, count: 18, hostname: 'gc{n:03d}'}\n"
                        "fabrics:\n", 1) + second
    with pytest.raises(InventoryError) as e:
        validate(load_text(text, "gbf.yaml"))
    found = {p.path.split(".", 1)[1]: p.message for p in e.value.problems}
    assert "ethernet.northsouth.border.router" in found and "fabric 'ns''s border router" in \
        found["ethernet.northsouth.border.router"], found
    last = text.rindex("{router: r1")
    validate(load_text(text[:last] + text[last:].replace("router: r1", "router: r2", 1), "gbf.yaml"))



@pytest.mark.parametrize(("border", "key", "words"), BAD)
def test_bad_border_is_refused_where_it_is_written(border: str, key: str, words: str) -> None:
    text = _with_border(inventory(1), border)
    line = text.splitlines().index(f"        border: {border}") + 1
    with pytest.raises(InventoryError) as e:
        validate(load_text(text, "gbf.yaml"))
    found = [p for p in e.value.problems if f"border.{key}" in p.path]
    assert found and words in found[0].message and found[0].line == line and found[0].column > 1, e.value.problems


def test_uplinks_that_do_not_fit_a_leaf_with_spines_are_refused() -> None:
    """At 3 racks a leaf's 64 uplinks take its highest ports and its trays the lowest 36: 28 are left
    (spec/layout.py `border_port_indices`)."""
    text = _with_border(inventory(3), "{router: r1, uplinks: 29}")
    with pytest.raises(InventoryError) as e:
        validate(load_text(text, "gbf.yaml"))
    (p,) = e.value.problems
    assert p.path.endswith("border.uplinks") and "leave 28 of its 128 ports at 400G free" in p.message
    validate(load_text(_with_border(inventory(3), "{router: r1, uplinks: 28}"), "gbf.yaml"))


def test_eos_refuses_the_border_with_exit_2(tmp_path) -> None:
    text = _with_border(inventory(1)).replace("kind: spectrum-x", "kind: roce").replace(
        "platform: nvue", "platform: eos")
    inv = tmp_path / "gbf.yaml"
    inv.write_text(text)
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(tmp_path / "out")])
    line = text.splitlines().index("        border: {router: site-router}") + 1
    assert result.exit_code == 2
    assert f"gbf.yaml:{line}:9: fabrics[0].ethernet.northsouth.border: the border" in result.output
    assert "Cumulus Linux (NVUE) only" in result.output and not (tmp_path / "out").exists()


def test_netbox_holds_the_router_its_ports_and_the_uplink_cables() -> None:
    files = rendered(_with_border(inventory(1)))
    devices = {r["name"]: r for r in rows(files, "netbox/06-devices.csv")}
    assert devices["site-router"]["role"] == "site-router"
    assert {r["name"] for r in rows(files, "netbox/02-device-roles.csv")} >= {"site-router"}
    cables = {(r["side_a_device"], r["side_a_name"], r["side_b_device"], r["side_b_name"])
              for r in rows(files, "netbox/08-cables.csv")}
    up = {(r["a_device"], r["a_port"], r["z_device"], r["z_port"])
          for r in rows(files, "ns/cabling.csv") if r["tier"] == "leaf-border"}
    assert len(up) == 2 * UPLINKS and up <= cables
    ports = {(r["device"], r["name"]) for r in rows(files, "netbox/07-interfaces.csv")}
    assert {(a, ap) for a, ap, _, _ in up} | {(z, zp) for _, _, z, zp in up} <= ports
    assert "EXIT" in {r["name"] for r in rows(files, "netbox/09-vrfs.csv")}


def test_with_spines_every_leaf_is_a_border_and_no_spine_is() -> None:
    """NVIDIA's largescale output (2-4-5-800/largescale/configs at 993eed6): every `cl` leaf carries
    EXIT and its uplinks, the spines `cs-*` none."""
    files = rendered(_with_border(inventory(3)))
    up = [r for r in rows(files, "ns/cabling.csv") if r["tier"] == "leaf-border"]
    leaves = sorted({r["a_device"] for r in up})
    assert len(leaves) == 3 and len(up) == 3 * UPLINKS
    for path in (p for p in files if p.startswith("ns/switches/") and p.endswith(".yaml")):
        header, tree = yaml.safe_load(files[path])[0]["header"], yaml.safe_load(files[path])[1]["set"]
        assert nvue_model.problems(nvue_model.release(header), tree) == [], path
        assert ("EXIT" in tree["vrf"]) == ("-leaf" in path), path


def test_the_border_loopback_is_reserved_where_exit_is_written() -> None:
    """northsouth.border.loopback on a fabric with a storage server pair (inventories/gb300-northsouth.yaml:
    8 compute leaves planned, then the storage pair): without vrf_loopbacks only the compute leaves, which
    carry EXIT, take a slot (the pool's count says 8 VRF loopbacks, not 10); with vrf_loopbacks every leaf
    keeps three, the storage leaves' third unused, so that their tenant loopbacks stay where leaf i's
    k-th has been, the ((i - 1) x 3 + k)-th from the pool's top (inventory/ethernet.py
    `border_loopbacks_only`)."""
    from pathlib import Path

    from fabgen.pipeline import run

    path = Path(__file__).resolve().parent.parent / "inventories" / "gb300-northsouth.yaml"
    text = path.read_text()  # its rdma_links file beside it

    def rendered(text: str) -> dict:
        return run(load_text(text, str(path))).files
    pools = "      pools: {loopbacks: 10.254.0.0/24,"
    assert text.count(pools) == 1

    def border(vrf_loopbacks: bool, pool: str = "10.254.0.0/24") -> str:
        block = "      northsouth:\n" + ("        vrf_loopbacks: true\n" if vrf_loopbacks else "") + \
            "        border: {router: site-router, loopback: true}\n"
        return text.replace(pools, block + pools.replace("10.254.0.0/24", pool))

    def addresses(files: dict, vrf: str) -> dict[str, str]:
        return {r["device"]: r["address"] for r in rows(files, "northsouth/addresses.csv") if r["interface"] == vrf}

    for with_tenants, count in ((False, "8 VRF loopbacks (one per leaf and VRF, the border VRF on the compute "
                                         "leaves)"), (True, "30 VRF loopbacks (one per leaf and VRF)")):
        with pytest.raises(InventoryError) as err:
            rendered(border(with_tenants, "10.254.0.0/28"))
        assert f"and {count}" in str(err.value), str(err.value)
    alone = rendered(border(False))
    exit_lo = addresses(alone, "EXIT")
    assert sorted(exit_lo) == [f"northsouth-su0{u}-leaf{k}" for u in (1, 2) for k in (1, 2)]
    assert set(exit_lo.values()) == {f"10.254.0.{254 - k}/32" for k in range(4)}
    both = rendered(border(True))
    for vrf, k in (("STORAGE", 0), ("INBAND", 1), ("EXIT", 2)):
        got = addresses(both, vrf)
        places = {"northsouth-su02-leaf2": 4, "northsouth-storage-leaf1": 9, "northsouth-storage-leaf2": 10}
        for leaf, i in places.items():
            if vrf != "EXIT" or "storage" not in leaf:
                assert got[leaf] == f"10.254.0.{254 - ((i - 1) * 3 + k)}/32", (vrf, leaf)
    assert not any("storage" in leaf for leaf in addresses(both, "EXIT"))


def test_multipaths_default_only_leaves_exit_to_the_release_as_nvidia() -> None:
    """border.multipaths: default-only writes 128 paths in the default VRF alone, none in EXIT (NVIDIA's
    csl-01-config.sh at 993eed6: `vrf default ... multipaths ebgp 128` only); the object model takes it
    and refuses a bad count; left out, both VRFs carry them (the test above)."""
    files = rendered(_with_border(inventory(1), "{router: site-router, multipaths: default-only}", "5.16"))
    for leaf in LEAVES:
        _, tree = _tree(files, leaf)
        assert nvue_model.problems("5.16", tree) == [], leaf
        assert "multipaths" not in tree["vrf"]["EXIT"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
        default = tree["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
        assert default["multipaths"] == {"ebgp": 128}
        script = files[f"ns/switches/{leaf}.nvue.sh"].decode().splitlines()
        assert "nv set vrf default router bgp address-family ipv4-unicast multipaths ebgp 128" in script
        assert not any(line.startswith("nv set vrf EXIT ") and "multipaths" in line for line in script)
        default["multipaths"] = {"ebgp": "all"}
        assert nvue_model.problems("5.16", tree)
