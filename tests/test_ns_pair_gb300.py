"""The collapsed north-south pair sized by racks (`tiers: 1` on a northsouth fabric of NVLink racks,
spec/sizing.py `_northsouth_racks`) takes support and storage servers on its own ports, as the HGX
pair does (tests/test_ns_pair_hgx.py, the same code: spec/layout.py `server_ports`). NVIDIA's 2-4-5-800
at its default size (NVIDIA/enterprise-ras net-configurator/output/2-4-5-800/default/configs/
csl-01-config.sh at 993eed6a993b668e9ab80556cd973b548612c4a4) takes its 12 support servers on csl-01/02's
swp19-swp24, after the second rack's tray cages swp10-swp18 and below the peer links swp25-swp34, each
server two single-member bonds on each switch (support-01: bond19s0 and bond19s1, local ids 190 and 191).
Read from the rendered cabling, addresses, netplans (`netplan generate`) and NVUE (NVIDIA's object
model, the `nvueschema` package); a second rack only adds; too many servers are refused at their key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nvue_model
import pytest
import yaml
from test_gb300_facts import rendered, rows, switches
from test_ns_pair_hgx import _refused
from test_planes import NETPLAN, _netplan_generate

from conftest import IN_CI

EXAMPLE = Path(__file__).resolve().parents[1] / "inventories" / "era-2-4-5-800.yaml"
LEAVES = ("ns-leaf001", "ns-leaf002")
ONE_RACK = "    count: 18                          # one NVL72 rack\n"
SUPPORT = "bonds: 2, count: 12,"


def _cage(port: str) -> int:
    return int(port.removeprefix("swp").split("s")[0])


@pytest.fixture(scope="module")
def example() -> dict:
    return rendered(EXAMPLE.read_text())


def _legs(files: dict) -> dict[str, list[tuple[str, str, str, str]]]:
    legs: dict[str, list[tuple[str, str, str, str]]] = {}
    for r in rows(files, "ns/cabling.csv"):
        if r["tier"] == "node-leaf" and r["a_device"].startswith("support-"):
            legs.setdefault(r["a_device"], []).append((r["a_port"], r["z_device"], r["z_port"], r["speed"]))
    return legs


def test_the_support_servers_sit_between_the_second_racks_trays_and_the_peer_links(example: dict) -> None:
    """NVIDIA's 12 support servers on the pair, no spine and no storage leaf beside it; each server's
    bond0 legs on one port of both switches and its bond1 legs on the next (NVIDIA: support-01 on
    swp19s0 and swp19s1 of csl-01), from swp19s0 on: after the cages a second rack's trays take
    (swp10-swp18) and below the peer links."""
    assert switches(example) == {"leaf": 2}
    legs = _legs(example)
    assert len(legs) == 12 and all(len(ls) == 4 for ls in legs.values())
    assert sorted(legs["support-01"]) == [("mlx5_0", LEAVES[0], "swp19s0", "400G"),
                                          ("mlx5_1", LEAVES[1], "swp19s0", "400G"),
                                          ("mlx5_2", LEAVES[0], "swp19s1", "400G"),
                                          ("mlx5_3", LEAVES[1], "swp19s1", "400G")]
    assert {p for _, _, p, _ in legs["support-12"]} == {"swp30s0", "swp30s1"}
    cabling = rows(example, "ns/cabling.csv")
    peer = {_cage(r["a_port"]) for r in cabling if r["tier"] == "leaf-leaf"}
    trays = {_cage(r["z_port"]) for r in cabling if r["tier"] == "node-leaf" and r["a_device"].startswith("su-")}
    servers = {_cage(p) for ls in legs.values() for _, _, p, _ in ls}
    assert max(trays) == 9 and 2 * 9 < min(servers)  # the second rack's 18 trays take cages 10-18
    assert min(servers) == 19 and max(servers) < min(peer)


def test_the_servers_bonds_on_both_switches_in_nvidias_object_model(example: dict) -> None:
    """Each leg a single-member bond, an Ethernet segment of NVIDIA's MAC with the local id by port
    (NVIDIA's support-01: 190 and 191), LACP bypass; bond0 in-band alone untagged (NVIDIA's `untagged
    300`), bond1 storage alone untagged; NVIDIA's object model takes both switches and refuses a bond
    whose VLAN is broken."""
    for leaf in LEAVES:
        doc = yaml.safe_load(example[f"ns/switches/{leaf}.nvue.yaml"])
        header, tree = doc[0]["header"], doc[1]["set"]
        release = nvue_model.release(header)
        assert nvue_model.problems(release, tree) == []
        bonds = {next(iter(b["bond"]["member"])): (name, b) for name, b in tree["interface"].items()
                 if b.get("type") == "bond"}
        for port, host_bond, vlan in (("swp19s0", "bond0", 300), ("swp19s1", "bond1", 500),
                                      ("swp30s1", "bond1", 500)):
            name, bond = bonds[port]
            segment = bond["evpn"]["multihoming"]["segment"]
            cage, sub = port.removeprefix("swp").split("s")
            assert segment["local-id"] == int(cage) * 10 + int(sub) and segment["mac-address"] == "44:38:39:FF:00:AC"
            assert bond["bond"]["lacp-bypass"] == "enabled" and bond["description"].endswith(f"_{host_bond}")
            domain = bond["bridge"]["domain"]["br_default"]
            assert domain["untagged"] == vlan and set(domain["vlan"]) == {str(vlan)}, (leaf, port, domain)
        broken = json.loads(json.dumps(tree))
        name, _ = bonds["swp19s0"]
        broken["interface"][name]["bridge"]["domain"]["br_default"]["untagged"] = "inband"
        assert any(f"interface.{name}.bridge" in p for p in nvue_model.problems(release, broken))


def test_the_servers_netplans_and_addresses(example: dict, tmp_path: Path) -> None:
    """bond0 holds the in-band address and the default route, bond1 the storage address; both after the
    places of the two racks' 36 trays the pair holds (.38: 2 + 36), each once in addresses.csv;
    `netplan generate` writes each bond so."""
    net = yaml.safe_load(example["hosts/support-01/netplan.yaml"])["network"]
    assert "vlans" not in net
    assert net["bonds"]["bond0"]["addresses"] == ["10.160.128.38/17"] and net["bonds"]["bond0"]["routes"]
    assert net["bonds"]["bond1"]["addresses"] == ["10.160.0.38/17"] and "routes" not in net["bonds"]["bond1"]
    addresses = {(r["interface"], r["address"]) for r in rows(example, "ns/addresses.csv")
                 if r["device"] == "support-01" and r["address"]}
    assert addresses == {("bond0", "10.160.128.38/17"), ("bond1", "10.160.0.38/17")}
    if NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have netplan.io: `make test` installs it")
        pytest.skip("netplan.io is not installed (`make test` installs it)")
    run = _netplan_generate({"60-fabgen.yaml": str(example["hosts/support-01/netplan.yaml"], "utf-8")}, tmp_path)
    assert run.returncode == 0, run.stderr
    units = tmp_path / "run" / "systemd" / "network"
    assert "Address=10.160.128.38/17\n" in (units / "10-netplan-bond0.network").read_text()
    assert "Address=10.160.0.38/17\n" in (units / "10-netplan-bond1.network").read_text()


def _kept(text: str) -> dict:
    files = rendered(text)
    segments = {}
    for leaf in LEAVES:
        tree = yaml.safe_load(files[f"ns/switches/{leaf}.nvue.yaml"])[1]["set"]
        segments.update({(leaf, next(iter(b["bond"]["member"]))): b["evpn"]["multihoming"]["segment"]["local-id"]
                         for b in tree["interface"].values() if b.get("type") == "bond"})
    return {"cables": {(r["a_device"], r["a_port"], r["z_device"], r["z_port"])
                       for r in rows(files, "ns/cabling.csv")},
            "addresses": {(r["device"], r["interface"], r["address"])
                          for r in rows(files, "ns/addresses.csv") if r["address"]},
            "segments": set(segments.items())}


def test_a_second_rack_and_a_server_more_only_add() -> None:
    """The second rack (the north-south fabric has no planned_nodes: the pair holds two racks) and a
    thirteenth server move no cable, address or segment of the example; the rack's trays take
    swp10-swp18."""
    text = EXAMPLE.read_text()
    assert ONE_RACK in text and SUPPORT in text
    before = _kept(text)
    for grown in (text.replace(ONE_RACK, "    count: 36\n"), text.replace(SUPPORT, "bonds: 2, count: 13,")):
        after = _kept(grown)
        for what, had in before.items():
            assert not had - after[what], (what, sorted(had - after[what])[:3])
        assert len(after["cables"]) > len(before["cables"])
    rack = _kept(text.replace(ONE_RACK, "    count: 36\n"))["cables"] - before["cables"]
    assert {_cage(z) for a, _, _, z in rack} == set(range(10, 19))


def test_more_servers_than_the_pair_holds_are_refused(tmp_path: Path) -> None:
    """28 ports at 400G between the two racks' 36 tray ports and the peer links: 14 two-bond servers
    fit, 15 are refused at the fabric's node_groups (the control renders)."""
    text = EXAMPLE.read_text()
    message = _refused(tmp_path, text.replace(SUPPORT, "bonds: 2, count: 15,"))
    line = next(x for x in message.splitlines() if "fabrics[1].node_groups:" in x)
    assert re.search(r"bad\.yaml:\d+:\d+: ", line), line
    assert "the collapsed pair (tiers: 1) takes its servers' bonds on the 28 ports at 400G between its 2 racks' " \
        "tray ports and its peer links; these servers need 30" in line, line
    assert len(_legs(rendered(text.replace(SUPPORT, "bonds: 2, count: 14,")))) == 14


def test_without_tiers_1_the_servers_keep_leaf_pairs_of_their_own() -> None:
    """tiers: auto (the default) keeps the servers on storage leaf pairs under spines, as before (with
    fabgen's segment ids and inbound filter, which a fabric with spines keeps)."""
    text = EXAMPLE.read_text()
    pinned = "    tiers: 1                           # NVIDIA's collapsed pair, which also takes the support servers\n"
    port_ids = re.search(r"\n *segment_local_id: port .*", text)
    assert pinned in text and port_ids and "inbound_filter: false, " in text
    auto = rendered(text.replace(pinned, "").replace(port_ids.group(0), "").replace("inbound_filter: false, ", ""))
    tiers = switches(auto)
    assert tiers["leaf"] == 4 and tiers["spine"] >= 2
    assert all(z not in LEAVES for ls in _legs(auto).values() for _, z, _, _ in ls)


def test_no_renumbering_warning_where_nothing_renumbers() -> None:
    """Without planned_nodes a fabric's servers are numbered after its nodes and validate warns; the pair
    sized by racks numbers them after the two racks it holds, so it does not (the example's ns fabric
    has no plan), while the same servers on leaf pairs of their own (tiers: auto) are warned."""
    from fabgen.inventory.loader import load_text
    from fabgen.inventory.validate import validate

    def warned(text: str) -> list[str]:
        return [w for w in validate(load_text(text, "era.yaml")).warnings.get("ns", [])
                if "numbered after its compute nodes" in w]

    text = EXAMPLE.read_text()
    assert "planned_nodes" not in text.split("  - name: ns\n")[1].split("  - name: oob\n")[0]
    assert warned(text) == []
    pinned = re.search(r"\n    tiers: 1 .*", text)
    port_ids = re.search(r"\n *segment_local_id: port .*", text)
    assert pinned and port_ids
    auto = text.replace(pinned.group(0), "").replace(port_ids.group(0), "").replace("inbound_filter: false, ", "")
    assert len(warned(auto)) == 1


SMALL_POOL = """version: 1
cluster: gbf
node_models:
  srv:
    vendor: x
    gpus: 0
    ports:
      - {role: storage, rdma: mlx5_0, label: P1, speed: 400}
      - {role: storage, rdma: mlx5_1, label: P2, speed: 400}
node_groups:
  - {name: gb, model: gb300-nvl72, count: 18, hostname: 'gb{n:03d}'}
  - {name: srv, model: srv, role: storage, count: 4, hostname: "server-{n:03d}"}
fabrics:
  - name: ns
    role: northsouth
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    tiers: 1
    switch_model: sn5600
    node_groups: [gb, srv]
    management: {prefix: 192.168.61.0/24, gateway: 192.168.61.1}
    ethernet:
      pools: {loopbacks: 10.254.0.0/24, links: 10.252.0.0/20, hosts: 10.160.0.0/HOSTS}
"""


def test_the_hosts_pool_holds_the_servers_after_the_two_racks_trays(tmp_path: Path) -> None:
    """One rack (18 trays) and 4 servers: the servers are numbered after the two racks' 36 trays
    (`Plan.server_place`), so each half of the hosts pool needs 3 + 2 leaves + 36 places + the servers'
    8 ports = 49 addresses: a /26 (32 a half) is refused at pools.hosts with the size to use, not
    found later as one address given twice; a /25 renders."""
    message = _refused(tmp_path, SMALL_POOL.replace("HOSTS", "26"))
    want = (r"bad\.yaml:24:\d+: fabrics\[0\]\.ethernet\.pools\.hosts: pool 10\.160\.0\.0/26 holds 64 addresses; "
            r"this fabric needs 98 \(two halves, storage and in-band, of 49 addresses each")
    assert re.search(want, message), message
    assert "configured twice" not in message and "use a /25 or shorter" in message, message
    files = rendered(SMALL_POOL.replace("HOSTS", "25"))
    assert any(name.endswith("addresses.csv") for name in files)
