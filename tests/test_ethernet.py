"""RoCE targets (EOS, SONiC): rendered configs read back and checked against each other and
against the cabling plan: /31 ends agree, addresses are unique, BGP sessions are configured
on both sides with matching ASNs, every used port carries the same lossless QoS, and the
links found in the configs are exactly the topology's links."""

from __future__ import annotations

import csv
import ipaddress
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml
from readback import read_cabling, read_fabric

from conftest import IN_CI, INVENTORIES, ROOT
from fabgen.pipeline import render_to

YANG_CHECK = ROOT.parent / "shared" / "tools" / "sonic_yang_check.py"


def check_fabric(out: Path, fabric: str, roce_dscp: int = 26, roce_priority: int = 3, mtu: int = 9100) -> dict:  # noqa: C901 (one check after another of a rendered fabric)
    devices = read_fabric(out, fabric)
    cabling = read_cabling(out, fabric)
    switches = {r["z_device"] for r in cabling} | {r["a_device"] for r in cabling if r["tier"] != "node-leaf"}
    assert set(devices) == switches, "one config per switch of the cabling plan"

    # addresses: unique fabric-wide (loopbacks, port addresses, gateways)
    owners: dict[str, str] = {}
    for name, dev in devices.items():
        addrs = [dev["loopback"]] + [p["ip"] for p in dev["ports"].values() if p["ip"]]
        if dev["svi"]:
            addrs.append(dev["svi"][0])
        for a in addrs:
            assert a not in owners, f"{a} on {name} and {owners[a]}"
            owners[a] = name

    # links from the configs: two switch ports in one /31
    by_subnet: dict[str, list[tuple[str, str, str]]] = {}
    for name, dev in devices.items():
        for port, p in dev["ports"].items():
            if p["ip"] and p["prefix"] == 31 and not p["description"].startswith("HOST_"):
                net = str(ipaddress.ip_interface(f"{p['ip']}/31").network)
                by_subnet.setdefault(net, []).append((name, port, p["ip"]))
    found = set()
    for net, ends in by_subnet.items():
        assert len(ends) == 2, f"{net}: {ends}"
        found.add(frozenset((d, port) for d, port, _ in ends))
    expected = {frozenset({(r["a_device"], r["a_port"]), (r["z_device"], r["z_port"])})
                for r in cabling if r["tier"] != "node-leaf"}
    assert found == expected, "links in the configs are exactly the cabling plan's switch links"

    # BGP: every session on both sides, remote ASNs match the peer's own
    ip_owner = {p["ip"]: (name, port) for name, dev in devices.items() for port, p in dev["ports"].items() if p["ip"]}
    sessions = 0
    for name, dev in devices.items():
        for peer_ip, asn in dev["neighbors"].items():
            peer, _ = ip_owner[peer_ip]
            assert devices[peer]["asn"] == asn, (f"{name} expects AS{asn} at {peer_ip}, "
                                                 f"{peer} is AS{devices[peer]['asn']}")
            mine = [p["ip"] for p in dev["ports"].values() if p["ip"] and
                    ipaddress.ip_interface(f"{p['ip']}/31").network == ipaddress.ip_interface(f"{peer_ip}/31").network]
            assert devices[peer]["neighbors"].get(mine[0]) == dev["asn"], f"{peer} lacks the session to {name}"
            sessions += 1
    assert sessions == 2 * len(expected), "one eBGP session per switch link, configured on both ends"
    for name, dev in devices.items():
        uplinks = sum(1 for r in cabling if r["a_device"] == name and r["tier"] != "node-leaf")
        assert dev["ecmp"] >= uplinks

    # QoS: the same DSCP map, no-drop priority and MTU on every used port of every switch
    used = Counter()
    for name, dev in devices.items():
        assert dev["dscp_to_tc"][roce_dscp] == roce_priority
        assert [d for d, tc in enumerate(dev["dscp_to_tc"]) if tc == roce_priority] == [roce_dscp], \
            "only RoCE lands in the no-drop class"
        assert dev["watchdog"]
        for port, p in dev["ports"].items():
            if not p["up"]:
                assert not p["lossless"]
                continue
            used[name] += 1
            assert p["lossless"] and p["no_drop"] == (roce_priority,), f"{name} {port}"
            assert p["mtu"] == mtu, f"{name} {port} mtu {p['mtu']}"
    assert len({dev["dscp_to_tc"] for dev in devices.values()}) == 1

    # host ports: one per NIC in the cabling plan, addressed (p2p) or in the host VLAN
    for r in cabling:
        if r["tier"] != "node-leaf":
            continue
        p = devices[r["z_device"]]["ports"][r["z_port"]]
        assert p["description"] == f"HOST_{r['a_device']}_{r['a_port']}"
        if p["ip"] is None:
            assert p["vlan"] is not None and devices[r["z_device"]]["svi"] is not None
    assert sum(used.values()) == 2 * len(expected) + sum(1 for r in cabling if r["tier"] == "node-leaf")
    check_address_plan(out, fabric, devices)
    return devices


def check_address_plan(out: Path, fabric: str, devices: dict) -> None:
    """addresses.csv is exactly what the switch configs and the hosts' netplans configure."""
    planned: dict[str, dict[str, str]] = {}
    asns: dict[str, str] = {}
    with open(out / fabric / "addresses.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            assert r["interface"] not in planned.setdefault(r["device"], {}), f"{r['device']} {r['interface']} twice"
            planned[r["device"]][r["interface"]] = r["address"]
            asns[r["device"]] = r["asn"]
    for name, dev in devices.items():
        configured = {"Loopback0": f"{dev['loopback']}/32"}
        configured.update({port: f"{p['ip']}/{p['prefix']}" for port, p in dev["ports"].items() if p["ip"]})
        if dev["svi"]:
            configured["Vlan100"] = f"{dev['svi'][0]}/{dev['svi'][1]}"
        assert planned.pop(name) == configured, name
        assert asns[name] == str(dev["asn"])
    compared = 0
    for host, planned_addrs in planned.items():  # what is left are the nodes
        path = out / "hosts" / host / "netplan.yaml"
        if not path.exists():  # storage nodes: fabgen plans their addresses, their own tools set them
            continue
        netplan = yaml.safe_load(path.read_text())
        configured = {nic: e["addresses"][0] for nic, e in netplan["network"]["ethernets"].items()}
        assert planned_addrs == configured, host
        compared += 1
    assert compared == len(list((out / "hosts").glob("*/netplan.yaml")))


def yang_check(paths: list[Path]) -> None:
    assert paths, "no config_db.json to check: a check of nothing passes"
    if not YANG_CHECK.exists() or not shutil.which("yanglint"):
        if IN_CI and YANG_CHECK.exists():
            raise RuntimeError("CI must have yanglint (libyang-tools): `make test` installs it")
        pytest.skip("SONiC YANG check skipped: it runs the SONiC YANG models and their checker kept beside the "
                    "repository (../shared/reference/sonic-yang, ../shared/tools), which a plain clone lacks; the "
                    "models are not published as an installable package (docs/internals/development.md)")
    run = subprocess.run([sys.executable, str(YANG_CHECK), *map(str, paths)], capture_output=True, text=True,
                         timeout=1200)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    # strict but for the tables SONiC has and the models kept here lack: any other table without a
    # model (a misspelt BGP_NEIGHBOUR) is a table SONiC would ignore, and fails
    import re

    summary = re.search(r"unvalidated tables: ([A-Z0-9_, ]+);", run.stdout)
    unvalidated = set(summary.group(1).split(", ")) if summary else set()
    assert unvalidated <= SONIC_TABLES_WITHOUT_MODEL_HERE, unvalidated - SONIC_TABLES_WITHOUT_MODEL_HERE


# Tables of sonic-buildimage's config_db that the YANG models kept beside the repository do not
# carry (sonic-mgmt_interface, sonic-mgmt_port, sonic-mgmt_vrf, sonic-ntp, sonic-syslog, sonic-dns
# sonic-vlan, sonic-buffer-port-ingress-profile-list and -egress-profile-list are models of
# sonic-buildimage's src/sonic-yang-models; CABLE_LENGTH, DEFAULT_LOSSLESS_BUFFER_PARAMETER and
# LOSSLESS_TRAFFIC_PATTERN are the buffer manager's tables, which buffermgrd reads in the dynamic
# buffer model): the one set `yang_check` lets pass unvalidated.
SONIC_TABLES_WITHOUT_MODEL_HERE = {"CABLE_LENGTH", "DNS_NAMESERVER", "MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG",
                                   "NTP", "NTP_SERVER", "SYSLOG_SERVER", "VLAN", "VLAN_INTERFACE", "VLAN_MEMBER",
                                   "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST",
                                   "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "LOSSLESS_TRAFFIC_PATTERN"}


@pytest.mark.parametrize("case,fabric,mtu", [("roce-2node", "roce", 9100), ("fattree-2to1", "fabric", 9100),
                                             ("roce-3tier", "eth", 9214)])
def test_examples_read_back_consistent(case: str, fabric: str, mtu: int, tmp_path: Path) -> None:
    render_to(INVENTORIES / f"{case}.yaml", tmp_path)
    devices = check_fabric(tmp_path, fabric, mtu=mtu)
    configs = sorted((tmp_path / fabric / "switches").glob("*/config_db.json"))
    platform = json.loads((tmp_path / "report.json").read_text())["fabrics"][fabric]["platform"]
    assert len(configs) == (len(devices) if platform == "sonic" else 0), (platform, len(configs))
    if configs:
        yang_check(configs)
    assert devices


SHAPES = {
    # three tiers chosen automatically: 2,400 NICs on a custom 64-port SONiC SKU (its identity and
    # buffer tables declared inline), hundreds of switches
    "sonic-3tier-auto": ("sonic", "th4-64", "rail-optimized", 300, "", ""),
    # oversubscribed 3:1 EOS fat-tree with storage nodes on storage leaves
    "eos-fattree-3to1-storage": ("eos", "arista-7060x5", "fat-tree", 90, "oversubscription: 3", "storage"),
    # SONiC with a subnet per leaf and per-plane core ASNs, three tiers pinned
    "sonic-leaf-subnet-3tier": ("sonic", "arista-7060x6-64pe-b", "rail-optimized", 40,
                                "tiers: 3\n    ethernet: {host_addressing: leaf-subnet, asn: {cores: plane, "
                                "spines: tier}}", ""),
}


CUSTOM_SONIC = """switch_models:
  th4-64:
    kinds: [roce]
    platforms: [sonic]
    ports: 64
    speed: 400
    port_name: "Ethernet{lane}"
    sonic:
      hwsku: Lab-TH4-64x400G
      platform: x86_64-lab_th4-r0
      asic: broadcom
      buffer_pools:
        ingress_lossless_pool: {size: "59001152", type: ingress, mode: dynamic, xoff: "7428992"}
        egress_lossless_pool: {size: "59001152", type: egress, mode: static}
      buffer_profiles:
        ingress_lossy_profile: {pool: ingress_lossless_pool, size: "0", dynamic_th: "3"}
        egress_lossy_profile: {pool: egress_lossless_pool, size: "1778", dynamic_th: "0"}
        egress_lossless_profile: {pool: egress_lossless_pool, size: "0", static_th: "59001152"}
"""


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_other_shapes_read_back_consistent(shape: str, tmp_path: Path) -> None:
    platform, model, topology, count, extra, storage = SHAPES[shape]
    groups = f"  - {{name: n, model: dgx-h100, count: {count}}}\n"
    attach = "[n]"
    if storage:
        groups += ("  - {name: st, model: st2, count: 24, role: storage}\nnode_models:\n  st2:\n    gpus: 0\n"
                   "    nics: [{rdma: mlx5_0, speed: 400}, {rdma: mlx5_1, speed: 400}]\n")
        attach = "[n, st]"
    if model == "th4-64":
        groups += CUSTOM_SONIC
    inv = tmp_path / "inv.yaml"
    inv.write_text(f"version: 1\ncluster: sim\nnode_groups:\n{groups}fabrics:\n  - name: f\n    kind: roce\n"
                   f"    platform: {platform}\n    topology: {topology}\n    switch_model: {model}\n"
                   f"    node_groups: {attach}\n    {extra}\n")
    out = tmp_path / "out"
    result = render_to(inv, out)
    devices = check_fabric(out, "f")
    plan = result.fabrics["f"].plan
    assert len(devices) == plan.leaves + plan.spines + plan.cores
    if shape == "sonic-3tier-auto":
        assert plan.tiers == 3 and len(devices) >= 200
    configs = sorted((out / "f" / "switches").glob("*/config_db.json"))
    platform = json.loads((out / "report.json").read_text())["fabrics"]["f"]["platform"]
    assert len(configs) == (len(devices) if platform == "sonic" else 0), (platform, len(configs))
    if configs:
        # one of each role is enough to prove the shape; the examples validate every file
        by_role = {}
        for p in configs:
            role = "core" if "-core" in p.parent.name else "spine" if "-spine" in p.parent.name else "leaf"
            by_role.setdefault(role, p)
        yang_check(sorted(by_role.values()))


def test_yang_check_catches_a_broken_config(tmp_path: Path) -> None:
    """The validator is not a rubber stamp: a comma-joined PORT_QOS_MAP key (old docs' form) fails."""
    import json

    render_to(INVENTORIES / "fattree-2to1.yaml", tmp_path)
    path = tmp_path / "fabric" / "switches" / "fabric-leaf001" / "config_db.json"
    db = json.loads(path.read_text())
    db["PORT_QOS_MAP"]["Ethernet0,Ethernet8"] = db["PORT_QOS_MAP"].pop("Ethernet0")
    path.write_text(json.dumps(db))
    with pytest.raises(AssertionError):
        yang_check([path])
    # a table SONiC does not know (misspelt) is no longer passed over as unmodelled
    db = json.loads((tmp_path / "fabric" / "switches" / "fabric-leaf002" / "config_db.json").read_text())
    db["BGP_NEIGHBOUR"] = db.pop("BGP_NEIGHBOR")
    path.write_text(json.dumps(db))
    with pytest.raises(AssertionError, match="BGP_NEIGHBOUR"):
        yang_check([path])


def test_host_dscp_and_tos_come_from_one_intent(tmp_path: Path) -> None:
    """A changed QoS intent changes every switch the same way."""
    inv = tmp_path / "inv.yaml"
    inv.write_text("""version: 1
cluster: c
node_groups: [{name: n, model: dgx-h100, count: 8}]
fabrics:
  - name: f
    kind: roce
    platform: sonic
    topology: fat-tree
    switch_model: arista-7060x6-64pe-b
    node_groups: [n]
    tiers: 2
    ethernet:
      mtu: 9000
      qos: {roce_dscp: 24, roce_priority: 4, cnp_dscp: 46, cnp_priority: 7}
""")
    out = tmp_path / "out"
    result = render_to(inv, out)
    check_fabric(out, "f", roce_dscp=24, roce_priority=4, mtu=9000)
    from fabgen.intent.qos import qos_intent

    assert qos_intent(result.contexts["f"])["host_tos"] == 24 * 4 + 2


def test_bgp_route_limit_grows_with_the_fabric(tmp_path: Path) -> None:
    """16,000 host /31s must not trip a fixed 12,000-route limit on every session."""
    from fabgen.intent.switches import switch_configs
    from fabgen.inventory.loader import load_text
    from fabgen.inventory.validate import validate
    from fabgen.pipeline import build

    text = """version: 1
cluster: c
node_groups: [{name: n, model: dgx-h100, count: 2000}]
fabrics:
  - {name: f, kind: roce, platform: eos, topology: rail-optimized, switch_model: arista-7060x5, node_groups: [n]}
"""
    _, contexts = build(validate(load_text(text, "t.yaml")))
    configs = switch_configs(contexts["f"])
    prefixes = sum(len(c["bgp"]["networks"]) for c in configs)
    assert prefixes == 16000 + len(configs)
    assert {c["bgp"]["max_routes"] for c in configs} == {2 * prefixes}
