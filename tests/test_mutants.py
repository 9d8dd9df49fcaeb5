"""Behaviour that a mutation run (docs/internals/mutation.md) found no test holding: each test here
kills mutants of intent/qos.py or addressing.py that survived their modules' fast test subsets.
The expected values come from the inventory and from the rules the docs state (adaptive routing up
to 400G, addresses in order after the switches', the gateway skipped), never from fabgen's own
computation; outputs are read from the files fabgen writes."""

from __future__ import annotations

import csv
import ipaddress
import json
from pathlib import Path

import yaml
from readback import nvue_ip, nvue_on, read_cabling, read_fabric

from fabgen.pipeline import render_to, run

# --- intent/qos.py: adaptive routing, and the report's QoS keys ---------------------------------

SPECTRUM_X = """version: 1
cluster: q
node_groups:
  - {{name: n, model: {model}, count: 4}}
{models}fabrics:
  - name: f
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [n]
    {extra}
"""
NIC800 = """node_models:
  cx8:
    gpus: 8
    nics: [{rdma: mlx5_0, speed: 800}, {rdma: mlx5_1, speed: 800}, {rdma: mlx5_2, speed: 800},
           {rdma: mlx5_3, speed: 800}]
"""


def _nccl(out: Path) -> dict[str, str]:
    (env,) = sorted(out.glob("host-groups/*/nccl.env"))
    return dict(line.split("=", 1) for line in env.read_text().splitlines() if "=" in line and line[0] != "#")


def _adaptive_routing(out: Path) -> tuple[set[bool], set[bool], set[bool]]:
    """(global setting, switch-to-switch ports, host ports) over every NVUE switch file."""
    fabric_ports: dict[str, set[str]] = {}
    host_ports: dict[str, set[str]] = {}
    for r in read_cabling(out, "f"):
        if r["tier"] == "node-leaf":
            host_ports.setdefault(r["z_device"], set()).add(r["z_port"])
        else:
            fabric_ports.setdefault(r["a_device"], set()).add(r["a_port"])
            fabric_ports.setdefault(r["z_device"], set()).add(r["z_port"])
    glob, fab, host = set(), set(), set()
    for name in set(fabric_ports) | set(host_ports):
        doc = yaml.safe_load((out / "f" / "switches" / f"{name}.nvue.yaml").read_text())
        tree = next(item["set"] for item in doc if "set" in item)
        glob.add(nvue_on(tree["router"]["adaptive-routing"]))
        iface = tree["interface"]
        fab |= {nvue_on(iface[p].get("router", {}).get("adaptive-routing", {})) for p in fabric_ports.get(name, ())}
        host |= {nvue_on(iface[p].get("router", {}).get("adaptive-routing", {})) for p in host_ports.get(name, ())}
    return glob, fab, host


def test_spectrum_x_routes_adaptively_at_400g_unless_turned_off(tmp_path: Path) -> None:
    """On by default on a Spectrum-X fabric at 400G: globally, on every switch-to-switch port, never
    on a host port, and NCCL is told; `adaptive_routing: false` turns every one of them off."""
    for extra, on in (("", True), ("ethernet: {adaptive_routing: false}", False)):
        inv = tmp_path / f"sx-{on}.yaml"
        inv.write_text(SPECTRUM_X.format(model="dgx-h100", models="", extra=extra))
        out = tmp_path / f"out-{on}"
        result = render_to(inv, out)
        assert result.fabrics["f"].plan.speed == 400  # the DGX H100's ConnectX-7 ports
        glob, fab, host = _adaptive_routing(out)
        assert glob == {on} and fab == {on} and host == {False}
        assert ("NCCL_IB_ADAPTIVE_ROUTING" in _nccl(out)) == on
        if on:
            assert _nccl(out)["NCCL_IB_ADAPTIVE_ROUTING"] == "1"


def test_spectrum_x_at_800g_keeps_adaptive_routing_off_the_ports(tmp_path: Path) -> None:
    """Spectrum-4 adapts up to 400G: at 800G the default leaves it on globally, on no port, and NCCL
    is not told (the inventory did not ask, so no warning either)."""
    inv = tmp_path / "sx800.yaml"
    inv.write_text(SPECTRUM_X.format(model="cx8", models=NIC800, extra=""))
    out = tmp_path / "out"
    result = render_to(inv, out)
    assert result.fabrics["f"].plan.speed == 800
    glob, fab, host = _adaptive_routing(out)
    assert glob == {True} and fab == {False} and host == {False}
    assert "NCCL_IB_ADAPTIVE_ROUTING" not in _nccl(out)


ROCE = """version: 1
cluster: q
node_groups:
  - {{name: n, model: dgx-h100, count: 2}}
fabrics:
  - name: f
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [n]
    ethernet:
      mtu: {mtu}
      host_mtu: {host_mtu}
      qos: {{ecn: {{min_threshold_kbytes: {lo}, max_threshold_kbytes: {hi}}}}}
"""


def test_roce_hosts_are_not_told_to_route_adaptively(tmp_path: Path) -> None:
    inv = tmp_path / "roce.yaml"
    inv.write_text(ROCE.format(mtu=9100, host_mtu=9000, lo=150, hi=1500))
    out = tmp_path / "out"
    render_to(inv, out)
    env = _nccl(out)
    assert "NCCL_IB_TC" in env and "NCCL_IB_ADAPTIVE_ROUTING" not in env


def test_the_review_names_each_qos_edit_by_its_inventory_key(tmp_path: Path) -> None:
    """report.json carries the MTUs and ECN thresholds as the inventory gave them, and `fabgen diff`
    names each edit under the inventory key a reviewer changes, one line each."""
    from fabgen.review.compare import compare

    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(ROCE.format(mtu=9100, host_mtu=9000, lo=150, hi=1500))
    new.write_text(ROCE.format(mtu=9216, host_mtu=9100, lo=200, hi=2000))
    review = compare(run(old).files, run(new).files)
    assert sorted((key, a, b) for fab, key, a, b in review.intent if fab == "f") == [
        ("ethernet.host_mtu", 9000, 9100), ("ethernet.mtu", 9100, 9216),
        ("ethernet.qos.ecn.max_threshold_kbytes", 1500, 2000), ("ethernet.qos.ecn.min_threshold_kbytes", 150, 200)]


# --- addressing.py --------------------------------------------------------------------------------

def _addresses(out: Path, fabric: str) -> list[dict[str, str]]:
    with open(out / fabric / "addresses.csv", newline="") as fh:
        return list(csv.DictReader(fh))


_RANK = {"leaf": 0, "spine": 1, "core": 2}


def _planned_order(names) -> list[str]:
    """Switches in planned order: leaves, spines, cores, each by its (zero-padded) name."""
    return sorted(names, key=lambda n: (next(r for role, r in _RANK.items() if role in n.rsplit("-", 1)[-1]), n))


BGP_THREE_TIERS = """version: 1
cluster: t
node_groups:
  - {name: dgx, model: dgx-h100, count: 4}
fabrics:
  - name: st
    role: storage
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [dgx]
    tiers: 3
    ethernet:
      host_routing: bgp
      pools: {loopbacks: 10.254.0.0/24, links: 10.253.0.0/22, hosts: 10.100.0.0/16}
"""


def test_bgp_host_loopbacks_follow_every_switch_on_three_tiers(tmp_path: Path) -> None:
    """The loopback pool numbers the planned switches from its first host address (leaves, spines,
    cores), and each node's service address from its last host address down, in node order (apart
    from the switches' count): on three tiers no node takes a core's."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(BGP_THREE_TIERS)
    out = tmp_path / "out"
    render_to(inv, out)
    switches = read_fabric(out, "st")
    assert any("core" in n for n in switches) and any("spine" in n for n in switches)
    pool = list(ipaddress.ip_network("10.254.0.0/24").hosts())
    order = _planned_order(switches)
    assert [ipaddress.ip_address(switches[n]["loopback"]) for n in order] == pool[:len(order)]
    nodes = sorted(p.name for p in (out / "hosts").iterdir())
    service = []
    for node in nodes:
        plan = yaml.safe_load((out / "hosts" / node / "netplan.yaml").read_text())
        (address,) = plan["network"]["ethernets"]["lo"]["addresses"]
        service.append(ipaddress.ip_interface(address))
        frr = (out / "hosts" / node / "frr.conf").read_text()
        assert f"network {address}\n" in frr and f"bgp router-id {service[-1].ip}\n" in frr
    assert [a.ip for a in service] == pool[::-1][:len(nodes)]
    assert not {a.ip for a in service} & set(pool[:len(order)])
    assert all(a.network.prefixlen == 32 for a in service)


OOB = """version: 1
cluster: t
node_groups:
  - {{name: dgx, model: dgx-h100, count: 40}}
fabrics:
  - name: ipmi
    role: oob
    kind: ethernet
    platform: nvue
    topology: fat-tree
    switch_model: sn2201
    node_groups: [dgx]
    scalable_unit: 16
    management:
      prefix: 192.168.0.0/24
      gateway: {gateway}
"""


def test_out_of_band_addresses_skip_the_gateway_wherever_it_sits(tmp_path: Path) -> None:
    """BMCs take the prefix's host addresses from the bottom in node order, access switches from
    the top down in switch order; both skip the gateway, at the bottom, in the middle or at the top
    (where the first access switch would otherwise take it)."""
    net = ipaddress.ip_network("192.168.0.0/24")
    for gateway in ("192.168.0.1", "192.168.0.20", "192.168.0.254"):
        inv = tmp_path / f"oob-{gateway}.yaml"
        inv.write_text(OOB.format(gateway=gateway))
        out = tmp_path / f"out-{gateway}"
        render_to(inv, out)
        rows = _addresses(out, "ipmi")
        free = [h for h in net.hosts() if str(h) != gateway]
        bmcs = sorted((r["device"], ipaddress.ip_interface(r["address"])) for r in rows if r["role"] == "bmc")
        assert [d for d, _ in bmcs] == [f"dgx{n:03d}" for n in range(1, 41)]
        assert [a.ip for _, a in bmcs] == free[:40] and {a.network for _, a in bmcs} == {net}
        access = sorted((r["device"], ipaddress.ip_interface(r["address"])) for r in rows if r["interface"] == "vlan10")
        assert len(access) == 3  # 40 nodes, 16 a switch
        assert [a.ip for _, a in access] == free[::-1][:3] and {a.network for _, a in access} == {net}
        for name, address in access:
            doc = yaml.safe_load((out / "ipmi" / "switches" / f"{name}.nvue.yaml").read_text())
            tree = next(item["set"] for item in doc if "set" in item)
            assert list(nvue_ip(tree["interface"]["vlan10"])["address"]) == [str(address)]


def test_network_of_matches_the_standard_library_at_every_length() -> None:
    from fabgen.addressing import network_of

    for ip in ("10.201.173.77", "172.31.255.254", "192.168.129.3", "100.64.15.200"):
        for plen in range(0, 33):
            assert network_of(ip, plen) == str(ipaddress.ip_network(f"{ip}/{plen}", strict=False)), (ip, plen)


LEAF_SUBNET = """version: 1
cluster: t
node_groups:
  - {name: dgx, model: dgx-h100, count: 40}
fabrics:
  - name: f
    kind: roce
    platform: eos
    topology: fat-tree
    switch_model: arista-7060x5
    node_groups: [dgx]
    ethernet:
      host_addressing: leaf-subnet
      pools: {loopbacks: 10.254.0.0/24, links: 10.253.0.0/22, hosts: 10.100.0.0/16}
"""


def test_leaf_subnets_follow_one_another_from_the_start_of_the_hosts_pool(tmp_path: Path) -> None:
    """leaf-subnet: each leaf's subnet (its gateway first) follows the previous leaf's with no gap,
    the first at the pool's start; every NIC's address is in its leaf's subnet, none shared."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(LEAF_SUBNET)
    out = tmp_path / "out"
    render_to(inv, out)
    switches = read_fabric(out, "f")
    leaves = [n for n in _planned_order(switches) if "leaf" in n]
    assert len(leaves) > 2
    subnets = [ipaddress.ip_interface("{}/{}".format(*switches[n]["svi"])) for n in leaves]
    assert [s.ip for s in subnets] == [s.network.network_address + 1 for s in subnets]  # the gateway first
    assert subnets[0].network.network_address == ipaddress.ip_address("10.100.0.0")
    for a, b in zip(subnets, subnets[1:]):
        assert a.network.prefixlen == b.network.prefixlen
        assert b.network.network_address == a.network.broadcast_address + 1
    by_leaf = {n: s.network for n, s in zip(leaves, subnets)}
    seen = set()
    for r in _addresses(out, "f"):
        if r["role"] == "node" and r["address"]:
            nic = ipaddress.ip_interface(r["address"])
            assert nic.network == by_leaf[r["peer_device"]] and nic.ip not in seen
            port = int(r["peer_interface"].removeprefix("Ethernet").split("/")[0])  # 400G: one port a cage
            assert nic.ip == nic.network.network_address + 2 + (port - 1)
            assert nic.ip not in (nic.network.network_address, nic.network.network_address + 1,
                                  nic.network.broadcast_address)
            seen.add(nic.ip)
    assert len(seen) == 40 * 8


PLANES = """version: 1
cluster: c
node_groups:
  - {name: gpu, model: dgx-b300, count: 8}
fabrics:
  - name: r
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [gpu]
    planes: 2
    ethernet:
      pools: {loopbacks: 10.254.0.0/24, links: 10.253.0.0/22, hosts: 10.100.0.0/16}
      asn: {leaf: 4200020000, spine: 4200002000}
"""


def test_plane_two_numbers_its_links_and_ports_in_its_half_of_the_pools(tmp_path: Path) -> None:
    """Two planes share the pools in two equal halves: each plane's switch-to-switch and host-port
    /31s are one run from the start of its half (plane 1's from the pool's start, as one plane's),
    and plane 2's ASNs start a stride (a power of ten in the tier's block, halved) after plane 1's."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(PLANES)
    out = tmp_path / "out"
    render_to(inv, out)
    runs: dict[str, list[list]] = {"P2P_": [], "HOST_": []}
    for plane in ("r-plane1", "r-plane2"):
        for kind, found in runs.items():
            nets = sorted({ipaddress.ip_network(f"{p['ip']}/{p['prefix']}", strict=False)
                           for dev in read_fabric(out, plane).values() for p in dev["ports"].values()
                           if p["ip"] and p["description"].startswith(kind)})
            assert nets and all(n.prefixlen == 31 for n in nets)
            found.append(nets)
    # ASNs: leaves 4200020000 + place on plane 1; the leaf block runs to the 4-byte space's end
    # (94.9 million split in two: stride 10 million); spines 4200002000 to the leaves' (18,000: 1,000)
    one, two = read_fabric(out, "r-plane1"), read_fabric(out, "r-plane2")
    for k, plane in enumerate((one, two)):
        leaves = sorted(n for n in plane if "leaf" in n)
        assert [plane[n]["asn"] for n in leaves] == [4200020000 + 10_000_000 * k + i for i in range(len(leaves))]
        assert {d["asn"] for n, d in plane.items() if "spine" in n} == {4200002000 + 1_000 * k}
    for kind, pool in (("P2P_", "10.253.0.0/22"), ("HOST_", "10.100.0.0/16")):
        net = ipaddress.ip_network(pool)
        for k, nets in enumerate(runs[kind]):
            start = net.network_address + k * net.num_addresses // 2
            assert nets == [ipaddress.ip_network(f"{start + 2 * i}/31") for i in range(len(nets))], (kind, k)


NORTHSOUTH = """version: 1
cluster: ns
node_groups:
  - {name: gpu, model: dgx-h100, count: 4, hostname: "gpu{n:03d}"}
fabrics:
  - name: ns
    role: northsouth
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [gpu]
    scalable_unit: 16
"""


def test_northsouth_bond_members_carry_no_address_and_switch_links_do(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(NORTHSOUTH)
    out = tmp_path / "out"
    render_to(inv, out)
    hosts, links = [], []
    for cfg in sorted((out / "ns" / "switches").glob("*.cfg")):
        for block in cfg.read_text().split("\ninterface Ethernet")[1:]:
            body = block.split("\n!")[0]
            address = [line.split()[2] for line in body.splitlines() if line.strip().startswith("ip address ")]
            if "description HOST_" in body:
                hosts.append(address)
            elif "description P2P_" in body:
                links.append(address)
    assert len(hosts) == 4 * 2 and links
    assert all(a == [] for a in hosts) and all(len(a) == 1 and a[0].endswith("/31") for a in links)
    members = [r for r in _addresses(out, "ns") if r["role"] == "node" and r["peer_device"]]
    assert len(members) == 8 and all(r["address"] == "" for r in members)


INFINIBAND = """version: 1
cluster: c
node_groups:
  - {name: a, model: dgx-h100, count: 4}
  - {name: b, model: dgx-h100, count: 2}
fabrics:
  - name: one
    kind: infiniband
    platform: ufm
    topology: rail-optimized
    switch_model: qm9700
    node_groups: [a]
  - name: two
    kind: infiniband
    platform: opensm
    topology: fat-tree
    switch_model: qm9700
    node_groups: [b]
"""


def test_synthetic_guids_follow_their_documented_layout(tmp_path: Path) -> None:
    """0xFAB0 | fabric number (the inventory's order) | type (01 switch, 02 channel adapter) | serial:
    switches numbered 1.. in planned order, channel adapters 1.. over the fabric's NICs; the files
    and the warning say the GUIDs are synthetic and name the key that replaces them."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(INFINIBAND)
    out = tmp_path / "out"
    result = render_to(inv, out)
    for number, fabric, nics in ((1, "one", 4 * 8), (2, "two", 2 * 8)):
        ib = out / fabric / "infiniband"
        rows = [line.split(" ", 1) for line in (ib / "node-name-map").read_text().splitlines()
                if line.startswith("0x")]
        guids = {name.strip('"'): int(g, 16) for g, name in rows}
        assert all(g >> 48 == 0xFAB0 and (g >> 40) & 0xFF == number for g in guids.values())
        switches = [n for n in guids if " " not in n]
        adapters = [n for n in guids if " " in n]
        assert len(adapters) == nics and switches
        assert [(guids[n] >> 32) & 0xFF for n in _planned_order(switches)] == [1] * len(switches)
        assert [guids[n] & 0xFFFFFFFF for n in _planned_order(switches)] == list(range(1, len(switches) + 1))
        assert {(guids[n] >> 32) & 0xFF for n in adapters} == {2}
        assert sorted(guids[n] & 0xFFFFFFFF for n in adapters) == list(range(1, nics + 1))
        for name in ("cn_guids.conf", "root_guids.conf", "opensm.conf"):
            assert "# WARNING: " in (ib / name).read_text() and "synthetic GUIDs" in (ib / name).read_text()
        (warning,) = [w for w in result.contexts[fabric].summary.warnings if "GUIDs are synthetic" in w]
        assert warning.startswith(f"{len(guids)} of {len(guids)} InfiniBand GUIDs are synthetic")
        assert "give the real ones in a guid_map before deployment" in warning


# a storage server with two 400G ports, as the storage and northsouth cases attach it
STORAGE_SERVER = """node_models:
  storage-server:
    gpus: 0
    vendor: custom
    ports:
      - {role: storage, rdma: mlx5_0, netdev: enp1s0f0np0, label: port1, speed: 400}
      - {role: storage, rdma: mlx5_1, netdev: enp1s0f1np1, label: port2, speed: 400}
"""

BGP_WITH_SERVERS = """version: 1
cluster: t
node_groups:
  - {name: gpu, model: dgx-h100, count: 4, management: 192.168.20.0/24}
  - {name: store, model: storage-server, role: storage, count: 2}
""" + STORAGE_SERVER + """fabrics:
  - name: st
    role: storage
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [gpu, store]
    planned_nodes: 8
    ethernet:
      host_routing: bgp
      pools: {loopbacks: 10.254.0.0/24, links: 10.253.0.0/22, hosts: 10.100.0.0/16}
      asn: {leaf: 4200020000, spine: 4200002000, host: 4200200000}
    management: {prefix: 192.168.10.0/24, gateway: 192.168.10.3}
"""


def test_storage_servers_take_bgp_places_after_the_planned_nodes(tmp_path: Path) -> None:
    """BGP to the host on a fabric planned for 8 nodes with 4 present and 2 storage servers: the
    nodes' service addresses (from the pool's top down) and ASNs follow their places, the servers'
    follow the 8 planned places (room to grow); each leaf peers with the node's ASN. Switches: one
    ASN a leaf in planned order (compute leaves, then the servers' leaves), one for the spines;
    management addresses in the same order skipping the gateway; the nodes' from their group's
    prefix."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(BGP_WITH_SERVERS)
    out = tmp_path / "out"
    render_to(inv, out)
    switches = read_fabric(out, "st")
    order = sorted(switches, key=lambda n: ("spine" in n, "servers" in n, n))
    assert [n for n in order if "leaf" in n] == ["st-su01-leaf1", "st-su01-leaf2", "st-servers-leaf1",
                                                 "st-servers-leaf2"]
    pool = list(ipaddress.ip_network("10.254.0.0/24").hosts())
    assert [ipaddress.ip_address(switches[n]["loopback"]) for n in order] == pool[:len(order)]
    leaves = [n for n in order if "leaf" in n]
    assert [switches[n]["asn"] for n in leaves] == [4200020000 + i for i in range(len(leaves))]
    assert {switches[n]["asn"] for n in order if "spine" in n} == {4200002000}
    places = {f"gpu{i:03d}": i - 1 for i in range(1, 5)} | {f"store{j:03d}": 8 + j - 1 for j in (1, 2)}
    peered = {asn for n in leaves for asn in switches[n]["neighbors"].values()}
    for node, place in places.items():
        plan = yaml.safe_load((out / "hosts" / node / "netplan.yaml").read_text())
        assert plan["network"]["ethernets"]["lo"]["addresses"] == [f"{pool[-1 - place]}/32"]  # from the top
        frr = (out / "hosts" / node / "frr.conf").read_text()
        assert f"router bgp {4200200000 + place}\n" in frr
        assert 4200200000 + place in peered
    # p2p: every node port the odd address of a /31 whose even address is its leaf port's
    rows = _addresses(out, "st")
    leaf_side = {(r["device"], r["interface"]): r["address"] for r in rows if r["role"] == "leaf"}
    node_ports = [r for r in rows if r["role"] == "node" and r["peer_device"]]
    assert len(node_ports) == 4 * 2 + 2 * 2
    for r in node_ports:
        nic, leaf = ipaddress.ip_interface(r["address"]), ipaddress.ip_interface(leaf_side[r["peer_device"],
                                                                                           r["peer_interface"]])
        assert nic.network == leaf.network and nic.network.prefixlen == 31
        assert int(leaf.ip) % 2 == 0 and nic.ip == leaf.ip + 1
        assert nic.ip in ipaddress.ip_network("10.100.0.0/16")
    hosts = yaml.safe_load((out / "ansible" / "inventory.yml").read_text())["all"]["children"]["fabric_st"]["hosts"]
    free = [str(h) for h in ipaddress.ip_network("192.168.10.0/24").hosts() if str(h) != "192.168.10.3"]
    assert [hosts[n]["ansible_host"] for n in order] == free[:len(order)]
    assert [hosts[f"gpu{i:03d}"]["ansible_host"] for i in range(1, 5)] == [f"192.168.20.{i}" for i in range(1, 5)]
    assert hosts["store001"] is None and hosts["store002"] is None  # their group has no management prefix


ASN_MODES = """version: 1
cluster: t
node_groups:
  - {{name: gpu, model: dgx-h100, count: 40}}
fabrics:
  - name: f
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [gpu]
    scalable_unit: 8
    tiers: 3
    ethernet:
      asn: {{leaf: 4200020000, spine: 4200002000, core: 4200001000{modes}}}
"""


def test_asn_blocks_by_tier_pod_and_core_plane(tmp_path: Path) -> None:
    """One ASN a leaf from the leaf block in planned order; spines one ASN (spines: tier) or one a pod
    from the spine block's start; cores one (cores: tier) or one a core plane (the spine position
    they serve), from the core block's start."""
    for modes in (", spines: tier, cores: tier", ", spines: pod, cores: plane"):
        inv = tmp_path / f"asn{len(modes)}.yaml"
        inv.write_text(ASN_MODES.format(modes=modes))
        out = tmp_path / f"out{len(modes)}"
        render_to(inv, out)
        switches = read_fabric(out, "f")
        leaves = sorted(n for n in switches if "leaf" in n)
        assert [switches[n]["asn"] for n in leaves] == [4200020000 + i for i in range(len(leaves))]
        plane_of = {r["z_device"]: int(r["a_device"].rsplit("spine", 1)[1])
                    for r in read_cabling(out, "f") if r["tier"] == "spine-core"}
        pods = {n: int(n.split("-pod")[1].split("-")[0]) for n in switches if "spine" in n}
        assert len(set(pods.values())) > 1 and len(set(plane_of.values())) > 1
        for name, pod in pods.items():
            assert switches[name]["asn"] == 4200002000 + (pod - 1 if "pod" in modes else 0)
        assert set(plane_of) == {n for n in switches if "core" in n}
        for name, plane in plane_of.items():
            assert switches[name]["asn"] == 4200001000 + (plane - 1 if "plane" in modes else 0)


NORTHSOUTH_SERVERS = """version: 1
cluster: ns
node_groups:
  - {name: gpu, model: dgx-h100, count: 4, hostname: "gpu{n:03d}"}
  - {name: store, model: storage-server, role: storage, count: 2}
""" + STORAGE_SERVER + """fabrics:
  - name: ns
    role: northsouth
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [gpu, store]
    scalable_unit: 16
    planned_nodes: 8
    ethernet:
      pools: {hosts: 10.160.0.0/16}
"""


def test_northsouth_tenants_number_bonds_and_segments_by_planned_place(tmp_path: Path) -> None:
    """The hosts pool's lower half is the storage subnet, the upper half the in-band one; in each the
    anycast gateway first, then one address a planned node place, storage servers after the 8 planned
    places; every node's bond is one Ethernet segment numbered by its place (+1) on both its leaves."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(NORTHSOUTH_SERVERS)
    out = tmp_path / "out"
    render_to(inv, out)
    halves = list(ipaddress.ip_network("10.160.0.0/16").subnets(1))
    rows = _addresses(out, "ns")
    gateways = {r["interface"]: ipaddress.ip_interface(r["address"]) for r in rows if r["role"] == "anycast"}
    assert gateways == {"Vlan20": ipaddress.ip_interface(f"{halves[0][1]}/17"),
                        "Vlan30": ipaddress.ip_interface(f"{halves[1][1]}/17")}
    places = {f"gpu{i:03d}": i - 1 for i in range(1, 5)} | {f"store{j:03d}": 8 + j - 1 for j in (1, 2)}
    bonds = {(r["device"], r["interface"]): r["address"] for r in rows
             if r["interface"].startswith("bond0") and r["address"]}
    # storage on the bond's VLAN, in-band on the bond itself (untagged: what a node PXE-boots on)
    assert bonds == {(node, iface): f"{half[2 + place]}/17" for node, place in places.items()
                     for iface, half in (("bond0.20", halves[0]), ("bond0", halves[1]))}
    segments: dict[str, set[int]] = {}
    for cfg in sorted((out / "ns" / "switches").glob("*leaf*.cfg")):
        for block in cfg.read_text().split("\ninterface Port-Channel")[1:]:
            body = block.split("\n!\n")[0]
            node = body.split("description HOST_", 1)[1].split("_bond0")[0]
            ident = body.split("identifier ", 1)[1].split()[0]
            segments.setdefault(node, set()).add(int(ident.replace(":", ""), 16) & 0xFFFF)
    assert segments == {node: {place + 1} for node, place in places.items()}
    tenants = json.loads((out / "report.json").read_text())["fabrics"]["ns"]["northsouth"]["tenants"]
    assert {t["role"]: (t["subnet"], t["gateway"]) for t in tenants} == {
        "storage": (str(halves[0]), str(halves[0][1])), "inband": (str(halves[1]), str(halves[1][1]))}


def test_northsouth_leaves_take_their_own_svi_addresses_from_the_top_down(tmp_path: Path) -> None:
    """On NVUE each leaf has an address of its own on both subnets beside the anycast gateway: the last
    before the broadcast is the first leaf's, then down in planned order (compute leaves, then the
    storage servers' leaves)."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(NORTHSOUTH_SERVERS.replace("kind: roce", "kind: spectrum-x")
                   .replace("platform: eos", "platform: nvue").replace("arista-7060x5", "sn5600"))
    out = tmp_path / "out"
    render_to(inv, out)
    halves = list(ipaddress.ip_network("10.160.0.0/16").subnets(1))
    leaves = sorted((p.name.removesuffix(".nvue.yaml") for p in (out / "ns" / "switches").glob("*leaf*.nvue.yaml")),
                    key=lambda n: ("storage" in n, n))
    assert leaves == ["ns-su01-leaf1", "ns-su01-leaf2", "ns-storage-leaf1", "ns-storage-leaf2"]
    for k, name in enumerate(leaves):
        doc = yaml.safe_load((out / "ns" / "switches" / f"{name}.nvue.yaml").read_text())
        iface = next(item["set"] for item in doc if "set" in item)["interface"]
        for vlan, half in (("vlan20", halves[0]), ("vlan30", halves[1])):
            assert list(nvue_ip(iface[vlan])["address"]) == [f"{half.broadcast_address - 1 - k}/17"]
            assert list(nvue_ip(iface[vlan])["vrr"]["address"]) == [f"{half[1]}/17"]


def test_plane_two_cores_take_the_asn_after_plane_ones(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(PLANES.replace("    planes: 2\n", "    planes: 2\n    tiers: 3\n")
                   .replace("spine: 4200002000}", "spine: 4200002000, core: 4200001000}")
                   .replace("links: 10.253.0.0/22", "links: 10.248.0.0/20"))
    out = tmp_path / "out"
    render_to(inv, out)
    for k, plane in enumerate(("r-plane1", "r-plane2")):
        cores = {d["asn"] for n, d in read_fabric(out, plane).items() if "core" in n}
        assert cores == {4200001000 + 100 * k}  # cores: tier, one ASN a plane; 1,000 to the spines' split in two
