"""The collapsed north-south pair for nodes that are not NVLink racks (`tiers: 1` on a rail-optimized
northsouth fabric, spec/sizing.py `_northsouth_pair`): NVIDIA's 2-8-9-400 at its default size
(NVIDIA/enterprise-ras net-configurator/output/2-8-9-400/default/configs/core-01-config.sh at
2f46cb2fca8f4d9b432f9de62957e54aed8f64d9) puts twelve HGX nodes' two 200G north-south ports on one
SN5600 pair, core-01/02, one port of each node on either switch (both take su-01-node-01 on swp1s0),
with one ASN, iBGP on unnumbered links between the two (`peer-group internal-isl`, `remote-as
internal`) and no spine. fabgen's pair: two leaves, 20 x 400G peer links (NVIDIA's north-south-only
pair csl-01/02, `NS_PEER_LINKS`; core-01's 48 also carry GPU traffic), no spines. Read from the
rendered BOM, cabling, NetBox, report and NVUE (NVIDIA's object model, the `nvueschema` package),
the EVPN lab's FRR config (FRR's own parser); refused where it cannot be built; growth adds only."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nvue_model
import pytest
import yaml
from test_gb300_facts import inventory as racks_inventory
from test_gb300_facts import rendered, rows, switches
from test_growth import assert_pure_addition, identities
from test_planes import NETPLAN, _netplan_generate

from conftest import IN_CI
from fabgen.inventory.loader import load_text
from fabgen.pipeline import render_to

EXAMPLE = Path(__file__).resolve().parents[1] / "inventories" / "era-2-8-9-400.yaml"
PEER_LINKS = 20
SERVERS = 10  # NVIDIA's support-01..08 and storage-01/02 (inventory/hosts at 66f13d5)
LEAVES = ("ns-su001-leaf1", "ns-su001-leaf2")

SMALL = """version: 1
cluster: hgxpair
node_models:
  hgx:
    vendor: NVIDIA HGX (OEM)
    gpus: 8
    nics: [{rdma: mlx5_0, speed: 400}]
    ports:
      - {role: inband, rdma: mlx5_8, label: BF3 P1, speed: 200}
      - {role: inband, rdma: mlx5_9, label: BF3 P2, speed: 200}
node_groups:
  - {name: su01, model: hgx, count: COUNT, hostname: "node-{n:03d}"}
fabrics:
  - name: ns
    role: northsouth
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    tiers: 1
    switch_model: sn5600
    node_groups: [su01]
    cabling: {node_leaf: {speed: 200}, leaf_spine: {speed: 400}}
    management: {prefix: 192.168.61.0/24, gateway: 192.168.61.1}
    ethernet:
      pools: {loopbacks: 10.254.0.0/24, links: 10.253.0.0/22, hosts: 10.160.0.0/16}
      northsouth:
        border: {router: site-router, uplinks: 4, inbound_filter: false}
"""


def small(count: int = 4, planned: int | None = None) -> str:
    text = SMALL.replace("COUNT", str(count))
    if planned:
        text = text.replace("    tiers: 1\n", f"    tiers: 1\n    planned_nodes: {planned}\n")
    return text


@pytest.fixture(scope="module")
def example() -> dict:
    return rendered(EXAMPLE.read_text())


@pytest.fixture(scope="module")
def example_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("era") / "out"
    render_to(load_text(EXAMPLE.read_text(), str(EXAMPLE)), out)
    return out


def _tree(files: dict, leaf: str) -> tuple[dict, dict]:
    doc = yaml.safe_load(files[f"ns/switches/{leaf}.nvue.yaml"])
    return doc[0]["header"], doc[1]["set"]


def test_the_example_is_nvidias_three_sn5600_a_pair_without_spines(example: dict) -> None:
    assert switches(example, "ns") == {"leaf": 2}  # core-01/02, no spines (fabgen built 2 before)
    sn5600 = sum(int(r["quantity"]) for f in ("gpu", "ns", "oob") for r in rows(example, f"{f}/bom.csv")
                 if r["category"] == "switch" and r["part"] == "MSN5600")
    assert sn5600 == 3  # the GPU switch and the pair (NVIDIA: 2, converged)
    cabling = rows(example, "ns/cabling.csv")
    assert {r["tier"] for r in cabling} == {"node-leaf", "leaf-leaf", "leaf-border"}
    peer = [r for r in cabling if r["tier"] == "leaf-leaf"]
    assert len(peer) == PEER_LINKS and {r["speed"] for r in peer} == {"400G"}
    assert {(r["a_device"], r["z_device"]) for r in peer} == {LEAVES}
    assert all(r["a_port"] == r["z_port"] for r in peer) and len({r["a_port"] for r in peer}) == PEER_LINKS
    nodes = [r for r in cabling if r["tier"] == "node-leaf" and r["a_device"].startswith("su-")]
    # each node's two ports one on either leaf, at the same port (NVIDIA: su-01-node-01 on swp1s0 of both)
    by_node: dict[str, list[tuple[str, str]]] = {}
    for r in nodes:
        by_node.setdefault(r["a_device"], []).append((r["z_device"], r["z_port"]))
    assert len(by_node) == 12
    assert all(sorted(d for d, _ in legs) == list(LEAVES) and len({p for _, p in legs}) == 1
               for legs in by_node.values())
    assert sorted(by_node["su-01-node-01"]) == [(LEAVES[0], "swp1s0"), (LEAVES[1], "swp1s0")]
    assert not {(r["z_device"], r["z_port"]) for r in nodes} & {(r["a_device"], r["a_port"]) for r in peer}
    servers = [r for r in cabling if r["tier"] == "node-leaf" and not r["a_device"].startswith("su-")]
    assert len(servers) == 2 * SERVERS  # NVIDIA's 8 support and 2 storage servers, a leg on each leaf
    bom = [r for r in rows(example, "ns/bom.csv") if r["category"] == "cable" and "leaf-leaf" in r["description"]]
    assert [int(r["quantity"]) for r in bom] == [PEER_LINKS]
    netbox = [r for r in rows(example, "netbox/08-cables.csv")
              if {r["side_a_device"], r["side_b_device"]} == set(LEAVES)]
    assert len(netbox) == PEER_LINKS
    fabric = json.loads(example["report.json"])["fabrics"]["ns"]
    assert fabric["tiers"] == 1 and fabric["switches"]["spine"] == 0 and fabric["links"]["leaf-leaf"] == PEER_LINKS
    assert fabric["northsouth"]["peer_links"] == PEER_LINKS and fabric["northsouth"]["pair_nodes"] == 128
    md = str(example["report.md"], "utf-8")
    assert "A collapsed pair (tiers: 1), as NVIDIA builds 2-8-9-400" in md and "1-2 racks" not in md
    assert "scalable unit 1 has" not in md


@pytest.mark.parametrize("release", ["5.14", "5.16"])
def test_the_peer_links_are_ibgp_one_asn_and_nvidias_model_takes_them(example: dict, release: str) -> None:
    files = example if release == "5.16" else rendered(EXAMPLE.read_text().replace(
        "    platform: nvue\n", f'    platform: nvue\n    platform_version: "{release}"\n'))
    peer_ports = sorted({r["a_port"] for r in rows(files, "ns/cabling.csv") if r["tier"] == "leaf-leaf"})
    asns = set()
    for leaf in LEAVES:
        header, tree = _tree(files, leaf)
        assert nvue_model.release(header) == release
        assert nvue_model.problems(release, tree) == [], leaf
        asns.add(tree["router"]["bgp"]["autonomous-system"])
        bgp = tree["vrf"]["default"]["router"]["bgp"]
        assert "SPINES" not in bgp["peer-group"]
        on_link = {n: v for n, v in bgp["neighbor"].items() if n in peer_ports}
        assert sorted(on_link) == peer_ports
        assert {json.dumps(v) for v in on_link.values()} == {json.dumps({"peer-group": "ISL", "type": "unnumbered"})}
        group = bgp["peer-group"]["ISL"]
        assert group["remote-as"] == "internal" and "l2vpn-evpn" in group["address-family"]
        # one ASN: the border needs no inbound route-map (inbound_filter: false), as NVIDIA's core-01
        exit_groups = tree["vrf"]["EXIT"]["router"]["bgp"]["peer-group"]
        assert "INBOUND_ERA_PREFIXES" not in json.dumps(exit_groups)
        assert "INBOUND_ERA_PREFIXES" not in tree["router"].get("policy", {}).get("route-map", {})
        broken = json.loads(json.dumps(tree))  # NVIDIA's model refuses a broken remote-as on the peer link
        broken["vrf"]["default"]["router"]["bgp"]["peer-group"]["ISL"]["remote-as"] = "inside"
        assert any("peer-group.ISL.remote-as" in p for p in nvue_model.problems(release, broken))
    assert len(asns) == 1


def _refused(tmp_path: Path, text: str) -> str:
    inv = tmp_path / "bad.yaml"
    inv.write_text(text)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "fabgen", "render", str(inv), "-o", str(out)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2 and "Traceback" not in run.stderr and not out.exists(), run.stderr
    return run.stderr.replace(str(inv), "bad.yaml")


@pytest.mark.parametrize(("edit", "where", "words"), [
    (lambda t: t.replace("    tiers: 1\n", "    tiers: 1\n    scalable_unit: 12\n"),
     "bad.yaml:20:20: fabrics[0].scalable_unit: ", "leave scalable_unit out"),
    (lambda t: t.replace("    tiers: 1\n", "    tiers: 1\n    planned_nodes: 129\n"),
     "bad.yaml:20:20: fabrics[0].planned_nodes: ", "holds 128 nodes"),
    (lambda t: t.replace("    tiers: 1\n", ""),
     "fabrics[0].ethernet.northsouth.border.inbound_filter: ", "false only on a collapsed pair"),
])
def test_a_bad_combination_is_refused_where_it_is_written(tmp_path: Path, edit, where: str, words: str) -> None:
    """scalable_unit beside the pair, more planned nodes than a leaf's node ports, and (as before) no
    inbound filter on a fabric with spines: each refused at its key, exit 2, nothing written."""
    message = _refused(tmp_path, edit(small()))
    assert any(where in line and words in line for line in message.splitlines()), message


def test_nvlink_racks_pinned_to_the_pair_are_refused_past_two_racks(tmp_path: Path) -> None:
    pinned = "    topology: rail-optimized\n    tiers: 1\n"
    two = rendered(racks_inventory(2).replace("    topology: rail-optimized\n", pinned))
    auto = rendered(racks_inventory(2))
    assert two["ns/cabling.csv"] == auto["ns/cabling.csv"] and switches(two) == {"leaf": 2}
    message = _refused(tmp_path, racks_inventory(3).replace("    topology: rail-optimized\n", pinned))
    assert "fabrics[0].tiers: tiers: 1 on a northsouth fabric is the collapsed pair" in message, message
    assert "54 nodes in 3 racks" in message


def test_growth_is_pure_addition_and_a_full_pair_warns() -> None:
    assert_pure_addition(small(4), small(12))
    assert_pure_addition(small(4, planned=64), small(64, planned=64))

    def warnings(text: str) -> list[str]:
        v, f, *_ = identities(text)
        assert f.plan.tiers == 1 and f.plan.peer_links == 2 * PEER_LINKS  # 20 links of two 200G slots
        return [w for ws in v.warnings.values() for w in ws if "rdma_links" not in w and "accounts" not in w]

    assert warnings(small(12)) == []
    full = warnings(small(128))
    assert len(full) == 1 and "the next node (129 nodes) cannot be added" in full[0], full
    assert "holds 128 nodes" in full[0]


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="needs FRR's vtysh (`make test` installs FRR)")
def test_the_evpn_labs_frr_config_of_the_pair_is_ibgp_and_frr_takes_it(example_dir: Path, tmp_path: Path) -> None:
    """The north-south EVPN lab (emulate/evpn.py, run in its VM; not here) reads the pair from the
    rendered NVUE files: the peer links iBGP (`remote-as internal`), one ASN; FRR's own parser
    (`vtysh --dryrun`) takes each leaf's frr.conf and refuses a misspelt one."""
    from fabgen.emulate import evpn
    from fabgen.emulate.inputs import table
    from fabgen.rendered.read import read_render

    plan = evpn.read(read_render(example_dir), "ns", table)
    assert sorted(plan.switches) == list(LEAVES)
    assert len({plan.switches[leaf].asn for leaf in LEAVES}) == 1
    for leaf in LEAVES:
        conf = evpn.frr_conf(plan.switches[leaf])
        assert " neighbor ISL remote-as internal\n" in conf and " neighbor swp33s0 interface peer-group ISL\n" in conf
        path = tmp_path / f"{leaf}.conf"
        path.write_text(conf)
        run = subprocess.run([shutil.which("vtysh") or "vtysh", "--dryrun", "-f", str(path)], capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 0, run.stderr[-500:]
    path.write_text(conf.replace("remote-as internal", "remote-as internall"))
    assert subprocess.run([shutil.which("vtysh") or "vtysh", "--dryrun", "-f", str(path)],
                          capture_output=True, timeout=60).returncode != 0


@pytest.mark.parametrize(("kw", "field", "words"), [
    ({"storage": 2 * 109}, "node_groups", "these servers need 109"),  # 256 - 128 node ports - 20 links: 108
    ({"rails": 3}, "tiers", "these nodes have 3 north-south ports"),
    ({"nodes": 129}, "node_groups", "holds 128 nodes"),
])
def test_what_the_pair_cannot_hold_is_refused_at_its_key(kw: dict, field: str, words: str) -> None:
    from fractions import Fraction

    from fabgen.spec.sizing import SizingError, plan

    rules = dict(nodes=12, topology="rail-optimized", radix=256, speed=200, rails=2, ratio=Fraction(1), tiers=1,
                 storage_pairs=True, model="sn5600") | kw
    with pytest.raises(SizingError) as err:
        plan(**rules)
    assert err.value.field == field and words in err.value.message, err.value.message
    ok = plan(**(rules | {"nodes": 12, "rails": 2, "storage": 0}))  # the control: the pair itself
    assert (ok.tiers, ok.leaves, ok.spines, ok.peer_links, ok.down) == (1, 2, 0, PEER_LINKS, 128)
    full = plan(**(rules | {"nodes": 12, "rails": 2, "storage": 2 * 108}))  # and the most servers it holds
    assert (full.servers, full.server_base, full.leaves, full.storage_leaves) == (108, 148, 2, 0)


def test_fabgen_verify_holds_the_peer_links_to_the_plan(example_dir: Path, tmp_path: Path) -> None:
    """`fabgen verify` with the LLDP the planned cabling would give (tests/test_verify.py's evidence):
    the pair's 88 cables (24 node legs, 20 server legs, 20 peer links, 24 border uplinks) held; two
    peer links' far ends crossed at leaf 2, and two servers' legs crossed, are found as miswired at
    those ports."""
    from test_verify import _lldp_dir

    out = example_dir

    def run(ev: Path) -> tuple[int, dict]:
        res = subprocess.run([sys.executable, "-m", "fabgen", "verify", str(out), "--lldp", str(ev), "--format",
                              "json"], capture_output=True, text=True, timeout=120, check=False)
        return res.returncode, json.loads(res.stdout)

    (tmp_path / "good").mkdir()
    code, doc = run(_lldp_dir(out, "ns", tmp_path / "good"))
    assert code == 0 and doc["ok"] and doc["fabrics"]["ns"] == "held" and doc["checked"] == 88, doc

    def cross(rows: list) -> list:
        i, j = [k for k, r in enumerate(rows) if r["tier"] == "leaf-leaf"][:2]
        rows[i]["z_port"], rows[j]["z_port"] = rows[j]["z_port"], rows[i]["z_port"]
        return rows

    (tmp_path / "bad").mkdir()
    code, doc = run(_lldp_dir(out, "ns", tmp_path / "bad", cross))
    assert code == 1 and not doc["ok"]
    found = {(f["device"], f["port"], f["kind"]) for f in doc["findings"]}
    assert {(LEAVES[0], "swp33s0", "miswired"), (LEAVES[0], "swp33s1", "miswired")} <= found, found

    def swap_servers(rows: list) -> list:  # support-01 and storage-01 plugged into each other's port of leaf 1
        i = next(k for k, r in enumerate(rows) if r["a_device"] == "support-01" and r["z_device"] == LEAVES[0])
        j = next(k for k, r in enumerate(rows) if r["a_device"] == "storage-01" and r["z_device"] == LEAVES[0])
        rows[i]["z_port"], rows[j]["z_port"] = rows[j]["z_port"], rows[i]["z_port"]
        return rows

    (tmp_path / "servers").mkdir()
    code, doc = run(_lldp_dir(out, "ns", tmp_path / "servers", swap_servers))
    assert code == 1 and not doc["ok"]
    found = {(f["device"], f["port"], f["kind"]) for f in doc["findings"]}
    assert {(LEAVES[0], "swp43s0", "miswired"), (LEAVES[0], "swp45s0", "miswired")} <= found, found


# NVIDIA's support and storage servers on its core pair (core-01-config.sh at 2f46cb2: the support
# servers' single-member bonds on swp52s0-swp53s3 `untagged 300`, the storage servers' on swp57
# `access 500`, every one an Ethernet segment with local id cage x 10 + subport): fabgen's on the
# cages after the peer links, a bond a server, a leg on each switch.
SERVER_PORTS = {"support-01": "swp43s0", "support-08": "swp44s3", "storage-01": "swp45s0", "storage-02": "swp45s1"}


def test_the_servers_bonds_are_on_both_switches_as_nvidias(example: dict) -> None:
    """Each server's two legs on the same port of both leaves, after the peer links; each leg a
    single-member bond, the segment by port (NVIDIA's local ids) with NVIDIA's MAC, LACP bypass;
    the support servers' bond in-band alone, untagged, the storage servers' storage alone, untagged;
    NVIDIA's object model takes both leaves and refuses a server bond with a broken VLAN."""
    cabling = rows(example, "ns/cabling.csv")
    peer_ports = {r["a_port"] for r in cabling if r["tier"] == "leaf-leaf"}
    legs: dict[str, list[tuple[str, str, str]]] = {}
    for r in cabling:
        if r["tier"] == "node-leaf" and not r["a_device"].startswith("su-"):
            legs.setdefault(r["a_device"], []).append((r["z_device"], r["z_port"], r["speed"]))
    assert len(legs) == SERVERS
    for server, port in SERVER_PORTS.items():
        assert sorted(legs[server]) == [(LEAVES[0], port, "200G"), (LEAVES[1], port, "200G")]
    last_peer = max(int(p.removeprefix("swp").split("s")[0]) for p in peer_ports)
    assert all(int(p.removeprefix("swp").split("s")[0]) > last_peer for ls in legs.values() for _, p, _ in ls)
    for leaf in LEAVES:
        header, tree = _tree(example, leaf)
        assert nvue_model.problems(nvue_model.release(header), tree) == []
        bonds = {b["bond"]["member"] and next(iter(b["bond"]["member"])): (name, b)
                 for name, b in tree["interface"].items() if b.get("type") == "bond"}
        for server, port in SERVER_PORTS.items():
            name, bond = bonds[port]
            segment = bond["evpn"]["multihoming"]["segment"]
            cage, sub = port.removeprefix("swp").split("s")
            assert segment["local-id"] == int(cage) * 10 + int(sub) and segment["mac-address"] == "44:38:39:FF:00:AA"
            assert bond["bond"]["lacp-bypass"] == "enabled" and bond["description"] == f"HOST_{server}_bond0"
            domain = bond["bridge"]["domain"]["br_default"]
            vlan = 300 if server.startswith("support") else 500  # in-band, or storage alone
            assert domain["untagged"] == vlan and set(domain["vlan"]) == {str(vlan)}, (leaf, server, domain)
        broken = json.loads(json.dumps(tree))
        name, _ = bonds[SERVER_PORTS["storage-01"]]
        broken["interface"][name]["bridge"]["domain"]["br_default"]["untagged"] = "storage"
        assert any(f"interface.{name}.bridge" in p for p in nvue_model.problems(nvue_model.release(header), broken))


def test_the_servers_netplans_and_addresses(example: dict, tmp_path: Path) -> None:
    """A support server's bond0 holds its in-band address and the default route, a storage server's its
    storage address alone (no VLAN, no default route); addresses.csv lists each once, after the planned
    nodes' places in each tenant's subnet; `netplan generate` writes each bond so."""
    support = yaml.safe_load(example["hosts/support-01/netplan.yaml"])["network"]
    storage = yaml.safe_load(example["hosts/storage-01/netplan.yaml"])["network"]
    assert "vlans" not in support and "vlans" not in storage
    (inband,) = support["bonds"]["bond0"]["addresses"]
    assert inband.startswith("10.160.128.") and support["bonds"]["bond0"]["routes"][0]["to"] == "default"
    (stor,) = storage["bonds"]["bond0"]["addresses"]
    assert stor.startswith("10.160.0.") and "routes" not in storage["bonds"]["bond0"]
    addresses = [r for r in rows(example, "ns/addresses.csv") if r["device"] in ("support-01", "storage-01")
                 and r["address"]]
    assert {(r["device"], r["interface"], r["address"]) for r in addresses} == {
        ("support-01", "bond0", inband), ("storage-01", "bond0", stor)}
    if NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have netplan.io: `make test` installs it")
        pytest.skip("netplan.io is not installed (`make test` installs it)")
    for node, address in (("support-01", inband), ("storage-01", stor)):
        run = _netplan_generate({"60-fabgen.yaml": str(example[f"hosts/{node}/netplan.yaml"], "utf-8")},
                                tmp_path / node)
        assert run.returncode == 0, run.stderr
        unit = (tmp_path / node / "run" / "systemd" / "network" / "10-netplan-bond0.network").read_text()
        assert f"Address={address}\n" in unit and "VLAN=" not in unit
        assert ("Gateway=" in unit or "Destination=0.0.0.0/0" in unit) == node.startswith("support")


SERVER_GROUP = """  srv:
    vendor: x
    gpus: 0
    ports:
      - {role: ROLE, rdma: mlx5_0, label: P1, speed: 200}
      - {role: ROLE, rdma: mlx5_1, label: P2, speed: 200}
node_groups:
  - {name: srv, model: srv, role: storage, count: SERVERS, hostname: "server-{n:03d}"EXTRA}
"""


def with_servers(count: int = 4, servers: int = 3, extra: str = "", role: str = "storage",
                 planned: int | None = None) -> str:
    text = small(count, planned).replace("node_groups:\n", SERVER_GROUP.replace("ROLE", role).replace(
        "SERVERS", str(servers)).replace("EXTRA", extra), 1)
    return text.replace("node_groups: [su01]", "node_groups: [su01, srv]")


@pytest.mark.parametrize(("extra", "where", "words"), [
    (", tenants: [storage, storage]", ":18:91:", "node_groups[0].tenants: tenants lists storage, storage"),
    (", tenants: [gpu]", ":18:92:", "node_groups[0].tenants[0]: 'gpu' is not one of inband, storage"),
    (", tenants: []", ":18:", "node_groups[0].tenants: "),
    (", bonds: 2, tenants: [storage]", ":18:", "with bonds: 2 bond0 carries in-band"),
])
def test_a_bad_tenants_key_is_refused_where_it_is_written(tmp_path: Path, extra: str, where: str,
                                                          words: str) -> None:
    message = _refused(tmp_path, with_servers(extra=extra))
    assert any(where in line and words in line for line in message.splitlines()), message


def test_tenants_on_a_compute_group_or_off_the_fabric_is_refused(tmp_path: Path) -> None:
    text = small().replace('hostname: "node-{n:03d}"}', 'hostname: "node-{n:03d}", tenants: [inband]}')
    message = _refused(tmp_path, text)
    assert "node_groups[0].tenants: tenants sets a server's tenants (node group role storage); 'su01' is role " \
        "compute" in message, message
    off = with_servers(extra=", tenants: [inband]").replace("node_groups: [su01, srv]", "node_groups: [su01]")
    message = _refused(tmp_path, off)
    assert "node_groups[0].tenants: tenants sets a server's tenants on a northsouth fabric; node group 'srv' " \
        "is on none" in message, message


def test_more_servers_than_the_pair_holds_are_refused(tmp_path: Path) -> None:
    """88 ports at 200G after the 20 x 400G peer links (cages 43-64): 89 servers are refused at the
    fabric's node_groups; 85 fit there but leave the border 3 of its 4 uplinks, refused at the border."""
    message = _refused(tmp_path, with_servers(servers=89))
    assert "fabrics[0].node_groups: the collapsed pair (tiers: 1) takes its servers' bonds on the 88 ports at " \
        "200G after its peer links; these servers need 89" in message, message
    message = _refused(tmp_path, with_servers(servers=85))
    assert "fabrics[0].ethernet.northsouth.border.uplinks: 4 border uplinks do not fit" in message, message
    assert "servers and switch-to-switch links leave 3 of its 256 ports" in message
    rendered(with_servers(servers=84))  # the control: the most servers beside the border


def _grown(text: str) -> dict:
    """A render's cables (every tier, the border's with them) and each host's tenant addresses and segment."""
    files = rendered(text)
    cables = {(r["a_device"], r["a_port"], r["z_device"], r["z_port"], r["speed"])
              for r in rows(files, "ns/cabling.csv")}
    addresses = {(r["device"], r["interface"], r["address"]) for r in rows(files, "ns/addresses.csv") if r["address"]}
    segments = {}
    for leaf in LEAVES:
        _, tree = _tree(files, leaf)
        segments.update({(leaf, name): (b["bond"]["member"], b["evpn"]["multihoming"]["segment"]["local-id"])
                         for name, b in tree["interface"].items() if b.get("type") == "bond"})
    return {"cables": cables, "addresses": addresses, "segments": segments}


def test_servers_and_nodes_added_later_only_add() -> None:
    """Servers added after the first (3 to 6) and nodes added up to the plan (4 to 64, servers after the
    planned places) move no cable, border uplink, address or segment of the smaller render."""
    for small_text, big_text in ((with_servers(4, 3, planned=64), with_servers(4, 6, planned=64)),
                                 (with_servers(4, 3, planned=64), with_servers(64, 3, planned=64))):
        before, after = _grown(small_text), _grown(big_text)
        for what, had in before.items():
            kept = after[what]
            lost = sorted(had - kept) if isinstance(had, set) else sorted(k for k, v in had.items() if kept.get(k) != v)
            assert not lost, (what, lost[:3])
        assert len(after["cables"]) > len(before["cables"])
