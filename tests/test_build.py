"""The built graph: real port names, rail placement, balance, and the checks catching breakage."""

from __future__ import annotations

import os
from collections import Counter
from fractions import Fraction

import pytest

from conftest import INVENTORIES
from fabgen.check.fabric import TopologyError, check
from fabgen.inventory.loader import load, load_text
from fabgen.inventory.validate import validate
from fabgen.pipeline import build
from fabgen.spec.model import Link


def built(text_or_case: str):
    loaded = (load(INVENTORIES / f"{text_or_case}.yaml") if "\n" not in text_or_case
              else load_text(text_or_case, "t.yaml"))
    fabrics, contexts = build(validate(loaded))
    return fabrics, contexts


def test_rail_optimized_nic_i_goes_to_leaf_i_of_its_unit() -> None:
    fabrics, _ = built("superpod-4su")
    f = fabrics["compute"]
    rail_of = {s.name: s for s in f.switches}
    for h in f.hosts:
        for r, nic in enumerate(h.model.nics):
            lk = f.links[f.ports[h.name][nic.rdma]]
            leaf = rail_of[lk.z]
            assert (leaf.rail, leaf.unit) == (r, h.unit)
            assert lk.z_port == f.switch_model.port_names(400)[h.slot]


def test_superpod_counts_and_ports() -> None:
    fabrics, ctx = built("superpod-4su")
    f = fabrics["compute"]
    s = ctx["compute"].summary
    assert s.switches == {"leaf": 32, "spine": 16, "core": 0}
    assert s.links == {"node-leaf": 1016, "leaf-spine": 1024, "spine-core": 0}
    # each leaf has 2 links to each of the 16 spines, on ports 33..64 (cages 17..32)
    leaf = f.by_role("leaf")[0]
    ups = [lk for lk in f.links_of(leaf.name) if lk.tier == "leaf-spine"]
    assert Counter(lk.z for lk in ups) == {sp.name: 2 for sp in f.by_role("spine")}
    assert ups[0].a_port == "IB1/17/1" and ups[-1].a_port == "IB1/32/2"
    ports = [p for d in f.ports.values() for p in d]
    assert len(ports) == 2 * len(f.links)


def test_three_tier_planes() -> None:
    fabrics, ctx = built("ib-3tier")
    f = fabrics["ib"]
    cores = {c.name: c for c in f.by_role("core")}
    for spine in f.by_role("spine"):
        peers = {lk.z for lk in f.links_of(spine.name) if lk.tier == "spine-core"}
        assert {cores[p].plane for p in peers} == {spine.plane}


def test_spectrum_x_uses_split_port_names() -> None:
    fabrics, _ = built("spectrumx-1su")
    f = fabrics["sx"]
    assert f.plan.radix == 128
    names = {lk.z_port for lk in f.links if lk.tier == "node-leaf"}
    assert "swp1s0" in names and "swp1s1" in names


def test_check_catches_an_unbalanced_leaf() -> None:
    fabrics, _ = built("superpod-4su")
    f = fabrics["compute"]
    i = next(i for i, lk in enumerate(f.links) if lk.tier == "leaf-spine")
    lk = f.links[i]
    other = f.by_role("spine")[-1].name
    check(f)  # as built
    f.links[i] = Link(lk.tier, lk.a, lk.a_port, other, "IB1/32/2", lk.speed, lk.media)
    with pytest.raises(TopologyError, match="unbalanced"):
        check(f)


@pytest.mark.parametrize("tier, missing", [("leaf-spine", "compute-su9-spine9"),
                                           ("node-leaf", "compute-su9-leaf9")])  # a node's cable: no switch end left
def test_check_catches_a_link_to_a_device_never_built(tier: str, missing: str) -> None:
    fabrics, _ = built("superpod-4su")
    f = fabrics["compute"]
    i = next(i for i, lk in enumerate(f.links) if lk.tier == tier)
    end = f.links[i].a
    f.links[i] = f.links[i]._replace(z=missing)
    with pytest.raises(TopologyError, match=f"{end}: link to unknown device {missing}"):
        check(f)


def test_the_drawn_graph_has_every_node_and_link() -> None:
    fabrics, _ = built("superpod-4su")
    f = fabrics["compute"]
    g = f.graph  # networkx, for analysis from Python; no stage draws it
    nics = sum(len(h.model.nics) for h in f.hosts)
    assert g.number_of_edges() == len(f.links) + nics
    assert g.number_of_nodes() == len(f.switches) + len(f.hosts) + nics
    lk = f.links[0]
    assert g.has_edge(lk.a, lk.z, key=0) and g.edges[lk.a, lk.z, 0]["link"] == lk
    h = f.hosts[0]
    assert g.nodes[f"{h.name}/{h.model.nics[0].rdma}"] == {"kind": "nic", "host": h.name, "rail": 0,
                                                            "rdma": h.model.nics[0].rdma,
                                                            "netdev": h.model.nics[0].netdev}
    assert g.nodes[f.switches[0].name]["kind"] == "switch"
    # every cable end is a switch or a node of the fabric, or a NIC port by its node
    assert all(g.nodes[end]["kind"] in ("switch", "host") for lk in f.links for end in (lk.a, lk.z))


def test_check_catches_a_dangling_nic() -> None:
    fabrics, _ = built("roce-2node")
    f = fabrics["roce"]
    h = f.hosts[0]
    del f.ports[h.name][h.model.nics[0].rdma]
    with pytest.raises(TopologyError, match="not cabled"):
        check(f)


def test_custom_models_inline() -> None:
    text = """
version: 1
cluster: lab
switch_models:
  edge16:
    kinds: [infiniband]
    platforms: [opensm]
    ports: 16
    speed: 200
    port_name: "p{n}"
node_models:
  box4:
    gpus: 4
    nics:
      - {rdma: mlx5_0, speed: 200}
      - {rdma: mlx5_1, speed: 200}
      - {rdma: mlx5_2, speed: 200}
      - {rdma: mlx5_3, speed: 200}
node_groups:
  - {name: box, model: box4, count: 20}
fabrics:
  - {name: ib, kind: infiniband, platform: opensm, topology: rail-optimized, switch_model: edge16, node_groups: [box]}
"""
    fabrics, ctx = built(text)
    f = fabrics["ib"]
    # k = 16: 8 nodes per unit, 3 units of 4 leaves = 12 leaves > 16? no: 12 <= 16, two tiers
    assert (f.plan.unit_nodes, f.plan.units, f.plan.leaves, f.plan.tiers) == (8, 3, 12, 2)
    assert f.plan.spines == 8 and f.plan.leaf_spine_width == 1
    assert {lk.z_port for lk in f.links_of(f.hosts[0].name)} == {"p1"}


@pytest.mark.parametrize("nodes", [8192])
def test_largest_three_tier_fabric_builds_and_checks(nodes: int) -> None:
    """65,536 endpoints on 64-port switches: the k^3/4 limit, built and checked in full."""
    text = f"""
version: 1
cluster: max
node_groups: [{{name: g, model: dgx-h100, count: {nodes}}}]
fabrics:
  - {{name: f, kind: infiniband, platform: opensm, topology: rail-optimized, switch_model: qm9700, node_groups: [g]}}
"""
    fabrics, ctx = built(text)
    s = ctx["f"].summary
    assert s.endpoints == 65536
    assert s.switches == {"leaf": 2048, "spine": 2048, "core": 1024}
    assert s.links == {"node-leaf": 65536, "leaf-spine": 65536, "spine-core": 65536}
    assert s.ports_used == s.ports_total  # every port of every switch in use
    assert s.oversubscription == {"leaf": 1.0, "spine": 1.0}
    assert Fraction(s.bisection_gbps) == 65536 * 400 // 2


STORAGE = """version: 1
cluster: c1
node_groups:
  - {name: gpu, model: dgx-h100, count: COUNT}
  - {name: st, model: st2, count: STORAGE, role: storage}
node_models:
  st2:
    gpus: 0
    nics: [{rdma: mlx5_0, speed: 400}, {rdma: mlx5_1, speed: 400}]
fabrics:
  - name: f
    kind: infiniband
    platform: opensm
    topology: TOPOLOGY
    switch_model: qm9700
    node_groups: [gpu, st]
"""


def _storage(count: int, storage: int, topology: str = "rail-optimized"):
    text = STORAGE.replace("COUNT", str(count)).replace("STORAGE", str(storage)).replace("TOPOLOGY", topology)
    fabrics, ctx = built(text)
    return fabrics["f"], ctx["f"].summary


# dual-ported storage nodes: two storage leaves at least, so every one is dual-homed
@pytest.mark.parametrize("storage,leaves", [(1, 2), (16, 2), (17, 2), (40, 3)])
def test_storage_nodes_get_storage_leaves_striped(storage: int, leaves: int) -> None:
    f, s = _storage(64, storage)
    store = [sw for sw in f.by_role("leaf") if "-storage-leaf" in sw.name]
    assert len(store) == leaves == f.plan.storage_leaves
    assert s.switches["leaf"] == 16 + leaves
    # every storage leaf has the uplinks of a compute leaf: balanced for ftree
    check(f)
    for h in (h for h in f.hosts if h.role == "storage"):
        ends = [f.links[f.ports[h.name][n.rdma]].z for n in h.model.nics]
        assert all("-storage-leaf" in e for e in ends)
        assert len(set(ends)) == 2, ends  # dual-homed
    # no storage NIC on a compute leaf, no compute NIC on a storage leaf
    for lk in f.links:
        if lk.tier == "node-leaf":
            assert ("-storage-leaf" in lk.z) == lk.a.startswith("st")


def test_storage_leaves_count_for_spines_and_pods() -> None:
    # 8 full units = 64 leaves fill two tiers of 64-port switches; storage leaves (two for
    # dual-ported storage nodes) need three
    f, s = _storage(256, 4)
    assert s.tiers == 3 and f.plan.leaves == 66
    check(f)
    f2, s2 = _storage(32, 32)  # 8 + 2 leaves: spines sized over both
    assert s2.tiers == 2 and s2.links["leaf-spine"] == 10 * 32
    assert s2.switches["spine"] * 64 >= 10 * 32


def test_one_switch_fabric_takes_storage_after_compute() -> None:
    f, s = _storage(2, 3, "fat-tree")
    assert s.tiers == 1 and [sw.name for sw in f.switches] == ["f-leaf01"]
    ports = f.switch_model.port_names(400)
    used = [lk.z_port for lk in f.links]
    assert used == list(ports[:16 + 6])


def test_dotted_quads_match_netaddr() -> None:
    from netaddr import IPAddress

    from fabgen.addressing import dotted_quad

    for v in (0, 1, 255, 256, 0x0A000001, 0xC0A80A20, 0xFFFFFFFF, 0x7F000001, 0x0AFF00FE):
        assert dotted_quad(v) == str(IPAddress(v, 4))


def test_network_of_matches_netaddr() -> None:
    from netaddr import IPNetwork

    from fabgen.addressing import network_of

    for ip, plen in (("10.8.0.5", 31), ("10.8.0.4", 31), ("10.100.0.66", 26), ("192.168.255.1", 32),
                     ("172.16.3.200", 16), ("10.0.0.1", 8), ("255.255.255.255", 1)):
        assert network_of(ip, plen) == str(IPNetwork(f"{ip}/{plen}").cidr)
    for last in (0, 1, 2, 3, 7, 63, 64, 127, 128, 129, 200, 254, 255):  # the last-octet path, every length
        for plen in range(24, 33):
            assert network_of(f"10.9.4.{last}", plen) == str(IPNetwork(f"10.9.4.{last}/{plen}").cidr)


def test_storage_server_leaves_are_named_like_the_fabrics_other_leaves(tmp_path) -> None:
    """No 'storage-storage-leaf001' beside 'storage-su01-leaf1': on a storage fabric the servers'
    leaves are '<fabric>-servers-leaf<n>', on a compute fabric '<fabric>-storage-leaf<n>', numbered
    at the width of a unit's leaves (fat-tree: of the fabric's leaves)."""
    import json
    import re

    from fabgen.pipeline import render_to

    out = tmp_path / "out"
    render_to(INVENTORIES / "b300-cluster.yaml", out)
    names = {s.removesuffix(".nvue.yaml") for s in os.listdir(out / "storage" / "switches") if s.endswith(".yaml")}
    assert {"storage-servers-leaf1", "storage-servers-leaf2", "storage-su01-leaf1"} <= names
    assert not any("storage-storage" in n or re.search(r"leaf0\d", n) for n in names), sorted(names)
    report = json.loads((out / "report.json").read_text())
    assert report["fabrics"]["storage"]["role"] == "storage"
    out2 = tmp_path / "ib"
    render_to(INVENTORIES / "ib-storage.yaml", out2)
    cabling = (out2 / "ib" / "cabling.csv").read_text()
    assert "ib-storage-leaf1," in cabling and "ib-su01-leaf1," in cabling and "ib-storage-leaf01" not in cabling
