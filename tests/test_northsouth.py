"""The converged north-south fabric (role northsouth, docs/northsouth.md), checked from the
rendered files: every node's bond is one Ethernet segment on the two leaves of a pair (NVUE and
EOS), the NVUE files hold to NVIDIA's object model, `netplan generate` takes every bond and
refuses a broken one, NetBox has the LAGs, and growth only adds."""

from __future__ import annotations

import csv
import ipaddress
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from test_planes import NETPLAN, _netplan_generate

from conftest import IN_CI, INVENTORIES
from fabgen.pipeline import render_to

sys.path.insert(0, str(Path(__file__).parent))
import nvue_model  # noqa: E402

EXAMPLE = INVENTORIES / "gb300-northsouth.yaml"

DGX_EOS = """\
version: 1
cluster: ns-eos
node_groups:
  - {{name: gpu, model: dgx-h100, count: {count}, hostname: "gpu{{n:03d}}"}}
  - name: head
    model: head
    count: 2
    hostname: "head{{n}}"
node_models:
  head:
    gpus: 0
    ports:
      - {{role: inband, rdma: mlx5_0, netdev: enp1s0f0np0, speed: 400}}
      - {{role: inband, rdma: mlx5_1, netdev: enp1s0f1np1, speed: 400}}
fabrics:
  - name: ns
    role: northsouth
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [head, gpu]              # the group that grows last
    scalable_unit: 16
    planned_nodes: 64
"""


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ns") / "out"
    render_to(EXAMPLE, out)
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _nvue_tree(path: Path) -> dict:
    return next(item["set"] for item in yaml.safe_load(path.read_text()) if "set" in item)


def _nvue_segments(switches: Path) -> dict[tuple[str, str], tuple[str, int, str]]:
    """(leaf, member port) -> (bond, local id, system MAC), read from every leaf's startup.yaml."""
    out = {}
    for f in sorted(switches.glob("*leaf*.nvue.yaml")):
        for name, iface in _nvue_tree(f)["interface"].items():
            if iface.get("type") != "bond":
                continue
            seg = iface["evpn"]["multihoming"]["segment"]
            (member,) = iface["bond"]["member"]
            assert iface["bond"]["mode"] == "lacp"
            out[f.name.split(".")[0], member] = (name, seg["local-id"], seg["mac-address"])
    return out


def _pairs(cabling: list[dict[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """node -> [(leaf, leaf port)] of its cables."""
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for r in cabling:
        if r["tier"] == "node-leaf":
            out[r["a_device"]].append((r["z_device"], r["z_port"]))
    return out


def test_every_node_is_one_ethernet_segment_on_a_leaf_pair(example: Path) -> None:
    """Each node's two ports go to two leaves, one pair per unit; both legs carry the same
    Ethernet segment (system MAC and local id), and no two nodes share one."""
    cabling = _rows(example / "northsouth" / "cabling.csv")
    segs = _nvue_segments(example / "northsouth" / "switches")
    pairs = _pairs(cabling)
    assert len(pairs) == 76
    seen: dict[tuple[str, int], str] = {}
    leaf_pairs = set()
    for node, legs in pairs.items():
        assert len(legs) == 2 and legs[0][0] != legs[1][0], (node, legs)
        leaf_pairs.add(tuple(sorted(leaf for leaf, _ in legs)))
        (a, b) = (segs[leg] for leg in legs)
        assert a[1:] == b[1:], (node, a, b)
        assert seen.setdefault(a[1:], node) == node, f"{node} and {seen[a[1:]]} share a segment"
    # every leaf is in exactly one pair
    leaves = [leaf for p in leaf_pairs for leaf in p]
    assert len(leaves) == len(set(leaves)) == 6


def test_the_nvue_files_hold_to_the_object_model_in_both_dialects(example: Path, tmp_path: Path) -> None:
    """Every switch file of the example (the default release, Cumulus Linux 5.16) and of the same
    cluster on 5.14 (the older dialect) validates against NVIDIA's NVUE model, the `nv set` script included; the model
    refuses an Ethernet segment under a key NVUE does not have."""
    text = EXAMPLE.read_text().replace("    platform: nvue\n    topology: rail-optimized\n    switch_model: sn5600\n",
                                       "    platform: nvue\n    platform_version: '5.14'\n"
                                       "    topology: rail-optimized\n    switch_model: sn5600\n", 1)
    assert "'5.14'" in text
    (tmp_path / "inv").mkdir()
    inv = tmp_path / "inv" / "ns.yaml"
    inv.write_text(text)
    (tmp_path / "inv" / EXAMPLE.with_name("gb300-cluster-rdma-links.txt").name).write_bytes(
        EXAMPLE.with_name("gb300-cluster-rdma-links.txt").read_bytes())
    render_to(inv, tmp_path / "new")
    for version, out in (("5.16", example), ("5.14", tmp_path / "new")):
        files = sorted((out / "northsouth" / "switches").glob("*.nvue.yaml"))
        assert len(files) == 10  # 6 leaves and 4 spines (Spectrum-X spines in pairs: docs/guide/sizing.md)
        for f in files:
            tree = _nvue_tree(f)
            assert nvue_model.problems(version, tree) == [], f.name
            built: dict = {}
            for line in f.with_name(f.name.replace(".yaml", ".sh")).read_text().splitlines():
                if line.startswith("nv set "):
                    nvue_model.merge(built, nvue_model.parse_nv_set(version, line))
            assert nvue_model.problems(version, built) == [], f.name
        leaf = _nvue_tree(out / "northsouth" / "switches" / "northsouth-su01-leaf1.nvue.yaml")
        assert leaf["nve"]["vxlan"]["source"]["address"] == leaf["router"]["bgp"]["router-id"]
        assert set(leaf["vrf"]) == {"default", "STORAGE", "INBAND"}
        assert leaf["bridge"]["domain"]["br_default"]["vlan"] == {"20": {"vni": {"10020": {}}},
                                                                  "30": {"vni": {"10030": {}}}}
    broken = _nvue_tree(example / "northsouth" / "switches" / "northsouth-su01-leaf1.nvue.yaml")
    seg = broken["interface"]["bond1"]["evpn"]["multihoming"]["segment"]
    seg["system-mac"] = seg.pop("mac-address")
    assert any("system-mac: unknown key" in p for p in nvue_model.problems("5.16", broken))


def test_netplan_generate_takes_every_bond_and_refuses_a_broken_one(example: Path, tmp_path: Path) -> None:
    """networkd gets the bond (802.3ad, fast LACP, layer3+4), both members enslaved, the in-band
    address on the bond itself (untagged: what the node PXE-boots on) and a VLAN for storage, each
    address in its tenant's subnet, and the default route on in-band only."""
    if NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have netplan.io: `make test` installs it")
        pytest.skip("netplan.io is not installed (`make test` installs it)")
    addresses = {(r["device"], r["interface"]): r["address"] for r in _rows(example / "northsouth" / "addresses.csv")}
    gateways = {r["device"]: r["address"] for r in _rows(example / "northsouth" / "addresses.csv")
                if r["role"] == "anycast"}
    for node in ("gb001", "gb040", "gb072", "stor01", "stor04"):
        text = (example / "hosts" / node / "netplan.yaml").read_text()
        root = tmp_path / node
        run = _netplan_generate({"60-fabgen.yaml": text}, root)
        assert run.returncode == 0, run.stderr
        units = root / "run" / "systemd" / "network"
        netdev = (units / "10-netplan-bond0.netdev").read_text()
        assert "Kind=bond" in netdev and "Mode=802.3ad" in netdev and "LACPTransmitRate=fast" in netdev
        assert "TransmitHashPolicy=layer3+4" in netdev
        plan = yaml.safe_load(text)["network"]
        for member in plan["bonds"]["bond0"]["interfaces"]:
            assert "Bond=bond0" in (units / f"10-netplan-{member}.network").read_text()
        for vlan, role in (("bond0.20", "storage"), ("bond0", "inband")):
            unit = (units / f"10-netplan-{vlan}.network").read_text()
            address = addresses[node, vlan]
            assert f"Address={address}\n" in unit
            net = ipaddress.ip_interface(gateways[f"{role}-gateway"]).network
            assert ipaddress.ip_interface(address).network == net
            assert ("Destination=0.0.0.0/0" in unit or "Gateway=" in unit) == (role == "inband"), (node, vlan)
    text = (example / "hosts" / "gb001" / "netplan.yaml").read_text()
    broken = text.replace("link: bond0", "link: bond9", 1)
    assert broken != text
    run = _netplan_generate({"60-fabgen.yaml": broken}, tmp_path / "broken")
    assert run.returncode != 0, "netplan must refuse a VLAN on a bond that does not exist"


def test_netbox_has_every_bond_as_a_lag(example: Path) -> None:
    rows = _rows(example / "netbox" / "07-interfaces.csv")
    lags = {(r["device"], r["name"]) for r in rows if r["type"] == "lag"}
    members: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in rows:
        if r["lag"]:
            assert (r["device"], r["lag"]) in lags, r
            members[r["device"], r["lag"]].append(r["name"])
    assert all(len(members[n, "bond0"]) == 2 for n in ("gb001", "gb072", "stor03"))
    leaf = [k for k in members if k[0] == "northsouth-su01-leaf1"]
    assert len(leaf) == 36 and all(len(members[k]) == 1 for k in leaf)
    assert sum(1 for r in rows if r["lag"]) == 2 * 2 * 76


def _eos_segments(path: Path) -> dict[str, tuple[str, str, str]]:
    """member Ethernet port -> (identifier, route target, LACP system id) of its Port-Channel."""
    text = path.read_text()
    channels = {}
    for m in re.finditer(r"^interface Port-Channel(\d+)\n(.*?)^!", text, re.S | re.M):
        body = m.group(2)
        ident = re.search(r"identifier (\S+)", body).group(1)
        rt = re.search(r"route-target import (\S+)", body).group(1)
        lacp = re.search(r"lacp system-id (\S+)", body).group(1)
        channels[m.group(1)] = (ident, rt, lacp)
    out = {}
    for m in re.finditer(r"^interface (Ethernet\S+)\n(.*?)^!", text, re.S | re.M):
        g = re.search(r"channel-group (\d+) mode active", m.group(2))
        if g:
            out[m.group(1)] = channels[g.group(1)]
    return out


def test_an_unseen_eos_cluster_dual_homes_every_node_and_only_grows(tmp_path: Path) -> None:
    """DGX H100 and head nodes (in-band ports only) on an EOS northsouth fabric: each node's two
    Port-Channel legs carry one ESI, route target and LACP id on the two leaves of its pair; the
    leaves are VTEPs with both tenants; adding nodes up to the plan only adds lines."""
    def render(count: int) -> Path:
        d = tmp_path / str(count)
        d.mkdir()
        (d / "inv.yaml").write_text(DGX_EOS.format(count=count))
        render_to(d / "inv.yaml", d / "out")
        return d / "out"

    small, big = render(20), render(30)
    switches = big / "ns" / "switches"
    segs = {(f.name.removesuffix(".cfg"), port): v for f in switches.glob("*leaf*.cfg")
            for port, v in _eos_segments(f).items()}
    pairs = _pairs(_rows(big / "ns" / "cabling.csv"))
    assert set(pairs) >= {"gpu001", "gpu030", "head1", "head2"}
    idents = set()
    for node, legs in pairs.items():
        assert len({leaf for leaf, _ in legs}) == 2
        a, b = (segs[leg] for leg in legs)
        assert a == b, node
        assert a[0].replace(":", "")[8:] == a[2].replace(".", "") == a[1].replace(":", "")
        idents.add(a[0])
    assert len(idents) == len(pairs)
    leaf = (switches / "ns-su01-leaf1.cfg").read_text()
    for line in ("vxlan vlan 20 vni 10020", "vxlan vrf STORAGE vni 4020", "ip address virtual",
                 "neighbor EVPN-OVERLAY-PEERS activate", "route-target import evpn 4030:4030"):
        assert line in leaf
    assert "next-hop-unchanged" in (switches / "ns-spine01.cfg").read_text()
    assert "next-hop-unchanged" not in leaf
    for f in sorted((small / "ns" / "switches").glob("*.cfg")):
        old, new = f.read_text().splitlines(), (switches / f.name).read_text().splitlines()
        gone = [line for line in old if line not in set(new) and "UNUSED" not in line and line != "   shutdown"]
        assert gone == [], (f.name, gone[:5])
    for name in ("cabling.csv", "addresses.csv"):
        old = {tuple(r.values()) for r in _rows(small / "ns" / name)}
        new = {tuple(r.values()) for r in _rows(big / "ns" / name)}
        assert old < new, name
    for node in ("gpu001", "gpu020", "head1"):
        assert ((small / "hosts" / node / "netplan.yaml").read_text()
                == (big / "hosts" / node / "netplan.yaml").read_text())


def test_growing_the_nvue_example_by_a_rack_only_adds(tmp_path: Path) -> None:
    """Two more NVL72 racks (36 trays) on the example's plan: every existing switch file's lines
    stay, every cable and address stays, each tray keeps its segment and its netplan."""
    small = EXAMPLE.read_text().replace("    count: 72                          # whole racks of 18",
                                        "    count: 36", 1)
    assert small != EXAMPLE.read_text()
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "ns.yaml").write_text(small)
    (tmp_path / "s" / "gb300-cluster-rdma-links.txt").write_bytes(
        EXAMPLE.with_name("gb300-cluster-rdma-links.txt").read_bytes())
    render_to(tmp_path / "s" / "ns.yaml", tmp_path / "small")
    render_to(EXAMPLE, tmp_path / "big")
    sw_small, sw_big = tmp_path / "small" / "northsouth" / "switches", tmp_path / "big" / "northsouth" / "switches"
    for f in sorted(sw_small.glob("*.nvue.sh")):
        new = set((sw_big / f.name).read_text().splitlines())
        gone = [line for line in f.read_text().splitlines() if line not in new and "link state down" not in line]
        assert gone == [], (f.name, gone[:5])
    for name in ("cabling.csv", "addresses.csv"):
        old = {tuple(r.values()) for r in _rows(tmp_path / "small" / "northsouth" / name)}
        new = {tuple(r.values()) for r in _rows(tmp_path / "big" / "northsouth" / name)}
        assert old < new, name
    assert _nvue_segments(sw_small).items() <= _nvue_segments(sw_big).items()
    for node in ("gb001", "gb036", "stor01"):
        assert (tmp_path / "small" / "hosts" / node / "netplan.yaml").read_text() == \
            (tmp_path / "big" / "hosts" / node / "netplan.yaml").read_text()


def test_storage_servers_come_in_leaf_pairs_and_adding_them_moves_no_node(tmp_path: Path) -> None:
    """40 storage servers need three leaves' ports: a northsouth fabric builds four, so every
    server's two legs are one pair's, on the same port of both leaves (one Port-Channel number on
    EOS); going from 4 to 40 servers changes no node's or leaf's address, no segment, no netplan."""
    def render(servers: int) -> Path:
        d = tmp_path / str(servers)
        d.mkdir()
        (d / "ns.yaml").write_text(EXAMPLE.read_text().replace("    count: 4\n", f"    count: {servers}\n", 1))
        (d / "gb300-cluster-rdma-links.txt").write_bytes(EXAMPLE.with_name("gb300-cluster-rdma-links.txt").read_bytes())
        render_to(d / "ns.yaml", d / "out")
        return d / "out"

    few, many = render(4), render(40)
    pairs = _pairs(_rows(many / "northsouth" / "cabling.csv"))
    storage_leaves = {leaf for n, legs in pairs.items() if n.startswith("stor") for leaf, _ in legs}
    assert len(storage_leaves) == 4
    for n in (f"stor{k:02d}" for k in range(1, 41)):
        (a, pa), (b, pb) = pairs[n]
        assert pa == pb and a[:-1] == b[:-1] and {a[-1], b[-1]} in ({"1", "2"}, {"3", "4"}), (n, pairs[n])
    # nodes, gateways and leaves keep theirs (the spines' loopbacks follow the leaves in fabgen's
    # numbering, and storage leaves have no plan: they move, as on every storage fabric)
    kept = ("node", "anycast", "leaf")
    rows_few = {(r["device"], r["interface"]): r["address"] for r in _rows(few / "northsouth" / "addresses.csv")
                if r["role"] in kept}
    rows_many = {(r["device"], r["interface"]): r["address"] for r in _rows(many / "northsouth" / "addresses.csv")
                 if r["role"] in kept}
    assert all(rows_many[k] == v for k, v in rows_few.items()), \
        [k for k, v in rows_few.items() if rows_many[k] != v][:4]
    assert _nvue_segments(few / "northsouth" / "switches").items() <= \
        _nvue_segments(many / "northsouth" / "switches").items()
    assert ((few / "hosts" / "gb001" / "netplan.yaml").read_text()
            == (many / "hosts" / "gb001" / "netplan.yaml").read_text())
