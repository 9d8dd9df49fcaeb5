"""Hostile and mistaken input, fourth round: closed types (a YAML boolean or fraction is no number),
tenant VRFs and node ports named like the devices fabgen or the switch already has, the Python
API's mappings of any class, and a SONiC buffer message that named no pool. Every inventory case
runs the real command line in a process of its own (bounded by a timeout) and checks what a user
sees: exit code 2, a located `file:line:col: key: message`, no traceback, nothing written."""

from __future__ import annotations

import collections
import datetime
import os
import re
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_northsouth import DGX_EOS
from test_planes import NETPLAN, _netplan_generate

import fabgen
from conftest import IN_CI, INVENTORIES
from fabgen.spec.schema import Inventory

TIMEOUT = 60  # the bound for every case: a hang is a failure, not a slow pass
NS_EXAMPLE = INVENTORIES / "gb300-northsouth.yaml"
NS_LINKS = INVENTORIES / "gb300-cluster-rdma-links.txt"


def fabgen_cli(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT, env={**os.environ, "COLUMNS": "200"})


def located(res: subprocess.CompletedProcess, inv: Path, key: str, *words: str) -> tuple[int, int]:
    """Exit 2, no traceback, and a `file:line:col: key: message` line holding `words`: its place."""
    assert res.returncode == 2, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr, res.stderr
    rx = re.compile(rf"^{re.escape(str(inv))}:(\d+):(\d+): {re.escape(key)}: (.*)$", re.M)
    found = [m for m in rx.finditer(res.stderr) if all(w in m.group(3) for w in words)]
    assert found, (key, words, res.stderr)
    return int(found[0].group(1)), int(found[0].group(2))


def refused_both_ways(tmp_path: Path, inv: Path, key: str, *words: str) -> tuple[int, int]:
    """`validate FILE` and `render FILE -o OUT` refuse alike; OUT is never created."""
    out = tmp_path / "out"
    where = located(fabgen_cli("validate", inv), inv, key, *words)
    assert located(fabgen_cli("render", inv, "-o", out), inv, key, *words) == where
    assert not out.exists()
    return where


def refused_render(tmp_path: Path, inv: Path, key: str, *words: str) -> tuple[int, int]:
    """`render FILE -o OUT` alone (it validates first), where `validate` runs on the same cases at
    once in a test of its own: OUT is never created."""
    out = tmp_path / "out"
    where = located(fabgen_cli("render", inv, "-o", out), inv, key, *words)
    assert not out.exists()
    return where


def dotted(path: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def write(tmp_path: Path, doc: dict, name: str = "inv.yaml") -> Path:
    inv = tmp_path / name
    inv.write_text(yaml.safe_dump(doc, sort_keys=False))
    return inv


def put(doc: Any, path: tuple, value: object) -> None:
    for part in path[:-1]:
        doc = doc[part]
    doc[path[-1]] = value


# 1. Closed types: a boolean or a fraction is never a number.

def _unwrap(annotation: Any) -> list[Any]:
    """The types an annotation allows, Annotated, Optional and unions opened."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(annotation) for t in _unwrap(a)]
    return [annotation]


def _is_number(annotation: Any) -> bool:
    """int, float, or a choice among numbers (Literal[1, 2, 4])."""
    return any(t in (int, float) or typing.get_origin(t) is typing.Literal and
               any(type(a) is int for a in typing.get_args(t)) for t in _unwrap(annotation))


def _is_float(annotation: Any) -> bool:
    return float in _unwrap(annotation)


DICT_KEYS = {"switch_models": "sw", "node_models": "box", "roles": "spine"}  # the base inventory's entries


def number_paths(model: Any = Inventory, path: tuple = (), wanted=_is_number) -> list[tuple]:
    """Every key of the schema that holds a number (int, float, or a choice among numbers), as a
    path into BASE: found from the models, so a number added later is covered too."""
    out = []
    for name, info in model.model_fields.items():
        here = (*path, name)
        if wanted(info.annotation):
            out.append(here)
        for t in _unwrap(info.annotation):
            origin, args = typing.get_origin(t), typing.get_args(t)
            if origin is list and hasattr(args[0], "model_fields"):
                out += number_paths(args[0], (*here, 0), wanted)
            elif origin is dict and hasattr(args[1], "model_fields"):
                out += number_paths(args[1], (*here, DICT_KEYS[name]), wanted)
            elif hasattr(t, "model_fields"):
                out += number_paths(t, here, wanted)
    return out


# Every model of the schema once, each number given (schema-valid; the cross-field checks would
# object to an InfiniBand block on a RoCE fabric, but a schema problem is reported first)
BASE: dict[str, Any] = {
    "version": 1, "cluster": "c",
    "node_groups": [{"name": "gpu", "model": "box", "count": 2, "bonds": 1}],
    "node_models": {"box": {"gpus": 8, "nvlink_domain": 1, "rack_units": 8,
                            "nics": [{"rdma": "mlx5_0", "netdev": "eth0", "speed": 400}],
                            "ports": [{"role": "oob", "rdma": "bmc", "speed": 1}]}},
    "switch_models": {"sw": {"kinds": ["roce"], "platforms": ["eos"], "ports": 32, "speed": 400,
                             "ports_per_cage": 1, "port_name": "Ethernet{n}", "rack_units": 1}},
    "fabrics": [{
        "name": "f", "kind": "roce", "platform": "eos", "topology": "fat-tree", "switch_model": "sw",
        "node_groups": ["gpu"], "tiers": 2, "planes": 1, "oob_vlan": 10, "scalable_unit": 4, "planned_nodes": 4,
        "oversubscription": 1,
        "oob_routed": {"loopbacks": "10.254.1.0/24", "vni": 4200, "l3vni": 5001, "l3vni_vlan": 3001,
                       "asn": 4200030000, "uplink_speed": 100},
        "ethernet": {"mtu": 9100, "host_mtu": 9000, "gid_index": 3, "qps_per_connection": 4,
                     "qos": {"roce_dscp": 26, "roce_priority": 3, "cnp_dscp": 48, "cnp_priority": 6,
                             "roce_bandwidth_percent": 50, "lossless_buffer_percent": 90,
                             "ecn": {"min_threshold_kbytes": 150, "max_threshold_kbytes": 1500, "probability": 100},
                             "pfc_watchdog": {"detection_ms": 200, "restoration_ms": 200, "poll_interval_ms": 100}},
                     "asn": {"leaf": 4200010000, "spine": 4200001000, "core": 4200000000, "host": 4200100000},
                     "bfd": {c: {"interval_ms": 300, "multiplier": 3}
                             for c in ("leaf_spine", "spine_core", "leaf_host", "overlay", "border", "oob_uplink",
                                       "oob_overlay")},
                     "northsouth": {**{r: {"vlan": v, "vni": 10000 + v, "vrf": r.upper(), "l3vni": 4000 + v,
                                           "l3vni_vlan": 3000 + v}
                                       for r, v in (("storage", 20), ("inband", 30))},
                                    "border": {"router": "edge", "asn": 65000, "uplinks": 4, "l3vni": 5004,
                                               "ecmp": 128, "l3vni_vlan": 3004, "speed": 100}},
                     "overlay": {"vlan": 900, "vni": 245900, "vrf": "GPU", "l3vni": 245003, "l3vni_vlan": 3003}},
        "infiniband": {"sm_priority": 15, "service_level": 0,
                       "partitions": [{"name": "p", "pkey": 2, "mtu": 4096, "rate": 400, "service_level": 0}]},
        "cabling": {t: {"length_m": 10, "speed": 400} for t in ("node_leaf", "leaf_spine", "spine_core")},
        "baseline": {"telemetry": {"sflow": {"collectors": ["10.0.0.9"], "sample_rate": 4096}},
                     "roles": {"spine": {"telemetry": {"sflow": {"collectors": ["10.0.0.9"], "sample_rate": 4096}}}}},
    }],
    "baseline": {"telemetry": {"sflow": {"collectors": ["10.0.0.9"], "sample_rate": 4096}},
                 "roles": {"spine": {"telemetry": {"sflow": {"collectors": ["10.0.0.9"], "sample_rate": 4096}}}}},
    "provisioning": {"server": "10.0.0.5", "mac_map": "macs.csv", "http_port": 80},
}

NUMBER_PATHS = number_paths()


def _base() -> dict:
    return yaml.safe_load(yaml.safe_dump(BASE))


def test_every_number_of_the_schema_is_found_and_given_in_the_base() -> None:
    """The walk finds the numbers the issue names (and every other), and the base inventory gives
    each of them a number the schema takes: a refusal below is the value's, not the base's."""
    keys = {dotted(p) for p in NUMBER_PATHS}
    assert {"version", "fabrics[0].planes", "fabrics[0].tiers", "node_groups[0].count",
            "fabrics[0].infiniband.partitions[0].mtu", "fabrics[0].ethernet.northsouth.storage.vlan",
            "node_models.box.nics[0].speed", "switch_models.sw.ports"} <= keys
    assert len(NUMBER_PATHS) >= 45, sorted(keys)
    doc = _base()
    for p in NUMBER_PATHS:
        put(doc, p, doc_value(doc, p))  # every path exists in the base
    Inventory.model_validate(BASE)


def doc_value(doc: Any, path: tuple) -> Any:
    for part in path:
        doc = doc[part]
    return doc


# The keys run through the command line (`render`, a process each); every other number is refused
# the same way through the Python API in this process, which keeps the suite's time in bounds.
CLI_NUMBERS = {("version",)} | {p for p in NUMBER_PATHS if p[-1] in ("planes", "tiers", "count", "mtu")} | \
    set(NUMBER_PATHS[::8])


@pytest.mark.parametrize("path", NUMBER_PATHS, ids=dotted)
def test_a_boolean_is_no_number(tmp_path: Path, path: tuple) -> None:
    """`planes: true` rendered one plane (True == 1 to Python, and a choice among numbers
    compared by equality): every number of the schema refuses true, at its own line."""
    from fabgen import InventoryError, validate

    doc = _base()
    put(doc, path, True)
    inv = write(tmp_path, doc)
    if path in CLI_NUMBERS:
        line, col = refused_render(tmp_path, inv, dotted(path), "not true (a boolean)")
    else:
        with pytest.raises(InventoryError) as e:
            validate(inv)
        (problem,) = [p for p in e.value.problems if p.path == dotted(path)]
        assert "not true (a boolean)" in problem.message
        line = problem.line
    assert re.search(rf"\b{re.escape(str(path[-1]))}: true\b", inv.read_text().splitlines()[line - 1])


@pytest.mark.parametrize("value,words", [
    (True, "not true (a boolean)"),
    (False, "not false (a boolean)"),
    (2.5, "2.5"),
    ("3", "'3'"),
])
def test_every_number_refuses_other_types_at_once(tmp_path: Path, value: object, words: str) -> None:
    """One inventory with every number wrong: validate names each one where it is written."""
    doc = _base()
    floats = set(number_paths(wanted=_is_float))
    # the version is answered alone (no other key means anything in another format version)
    paths = [p for p in NUMBER_PATHS if p != ("version",) and not (isinstance(value, float) and p in floats)]
    for p in paths:
        put(doc, p, value)
    inv = write(tmp_path, doc)
    res = fabgen_cli("validate", inv)
    for p in paths:
        located(res, inv, dotted(p), words)


@pytest.mark.parametrize("key,value,words", [
    ("planes", "true", "must be 1, 2 or 4, not true (a boolean)"),
    ("tiers", "true", "must be auto, 1, 2 or 3, not true (a boolean)"),
    ("planes", "2.0", "must be 1, 2 or 4, not 2.0 (a decimal number): write 2"),
    ("tiers", "2.0", "not 2.0 (a decimal number): write 2"),
])
def test_the_choices_among_numbers_say_what_they_take(tmp_path: Path, key: str, value: str, words: str) -> None:
    text = (INVENTORIES / "roce-2node.yaml").read_text().replace("    node_groups: [gpu]",
                                                                 f"    node_groups: [gpu]\n    {key}: {value}")
    inv = tmp_path / "inv.yaml"
    inv.write_text(text)
    refused_both_ways(tmp_path, inv, f"fabrics[0].{key}", words)


@pytest.mark.parametrize("value,words", [("true", "must be 1, not true (a boolean)"),
                                         ("false", "must be 1, not false (a boolean)"),
                                         ("1.0", "not 1.0 (a decimal number): write 1")])
def test_the_version_is_the_number_1(tmp_path: Path, value: str, words: str) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text((INVENTORIES / "roce-2node.yaml").read_text().replace("version: 1", f"version: {value}", 1))
    assert refused_both_ways(tmp_path, inv, "version", words)[0] == 3


# 2. Names that become interfaces or VRFs.

SWITCH_DEVICES = ["vlan30", "Vlan20", "vlan4020_l3", "br_default", "bridge", "eth0", "lo", "mgmt", "default", "all",
                  "swp1", "swp1s0", "Ethernet1", "bond0", "Port-Channel1", "vxlan48", "Vxlan1", "peerlink",
                  "Loopback0", "Management1", "vlan30-v0", "tunl0", "dummy0", "pimreg", "ipmr-lo"]


def _tenant(text: str, vrf: str) -> str:
    """The example north-south fabric with the in-band tenant's VRF named `vrf`."""
    line = "      asn: {leaf: 4200020000, spine: 4200002000, core: 4200001000}\n"
    assert line in text
    return text.replace(line, line + f"      northsouth: {{inband: {{vlan: 30, vni: 10030, vrf: {vrf}, "
                                     "l3vni: 4030}}\n")


def _ns_copy(tmp_path: Path, text: str, links: str | None = None) -> Path:
    inv = tmp_path / "ns.yaml"
    inv.write_text(text)
    (tmp_path / NS_LINKS.name).write_text(links if links is not None else NS_LINKS.read_text())
    return inv


@pytest.mark.parametrize("vrf", SWITCH_DEVICES)
def test_a_tenant_vrf_named_like_a_switch_device_is_refused(tmp_path: Path, vrf: str) -> None:
    """On Cumulus Linux a VRF is a network device beside the switch's ports, bonds, SVIs, bridge
    and VXLAN device; EOS names the same things Ethernet1, Port-Channel1, Vlan20, Vxlan1."""
    inv = _ns_copy(tmp_path, _tenant(NS_EXAMPLE.read_text(), vrf))
    refused_render(tmp_path, inv, "fabrics[1].ethernet.northsouth.inband.vrf", f"VRF {vrf} is")


def test_validate_names_both_tenants_vrfs(tmp_path: Path) -> None:
    text = _tenant(NS_EXAMPLE.read_text(), "br_default").replace(
        "      northsouth: {inband:", "      northsouth: {storage: {vlan: 20, vni: 10020, vrf: vlan20, l3vni: 4020}, "
        "inband:", 1)
    inv = _ns_copy(tmp_path, text)
    res = fabgen_cli("validate", inv)
    located(res, inv, "fabrics[1].ethernet.northsouth.storage.vrf", "VRF vlan20 is named like a VLAN's interface")
    located(res, inv, "fabrics[1].ethernet.northsouth.inband.vrf", "VRF br_default is named like a bridge")


def test_a_tenant_vrf_on_eos_is_checked_alike(tmp_path: Path) -> None:
    text = DGX_EOS.format(count=4) + "    ethernet:\n      northsouth: {storage: {vlan: 20, vni: 10020, " \
        "vrf: vxlan1, l3vni: 4020}}\n"
    inv = tmp_path / "inv.yaml"
    inv.write_text(text)
    refused_both_ways(tmp_path, inv, "fabrics[0].ethernet.northsouth.storage.vrf", "VRF vxlan1 is named like a VXLAN")


@pytest.mark.parametrize("vrf", ["TENANT-A", "storage2", "vlanx", "bonds"])
def test_a_tenant_vrf_of_its_own_name_is_taken(tmp_path: Path, vrf: str) -> None:
    inv = _ns_copy(tmp_path, _tenant(NS_EXAMPLE.read_text(), vrf))
    res = fabgen_cli("validate", inv)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("platform,pattern,name", [("nvue", "bond{n}", "bond1"), ("nvue", "eth{i}", "eth0"),
                                                   ("nvue", "vlan{n}", "vlan1"), ("eos", "Vlan{n}", "Vlan1"),
                                                   ("eos", "Port-Channel{n}", "Port-Channel1"),
                                                   ("sonic", "PortChannel{n}", "PortChannel1"),
                                                   ("eos", "Loopback{i}", "Loopback0")])
def test_a_custom_switch_port_named_like_another_device_is_refused(tmp_path: Path, platform: str, pattern: str,
                                                                   name: str) -> None:
    """A custom switch's ports are network devices beside the switch's bonds, SVIs and loopback:
    a port name of theirs would be two devices in one config."""
    from test_hostile import _inventory

    doc = _inventory(platform)
    doc["switch_models"]["sw"]["port_name"] = pattern
    refused_render(tmp_path, write(tmp_path, doc), "switch_models.sw.port_name", f"gives {name!r}, the name of")


def test_the_bond_names_are_the_netplans() -> None:
    """The validator's names for the node's bond and its VLANs are those the netplans write."""
    from fabgen.intent.northsouth import HOST_BOND, host_vlan_interface
    from fabgen.inventory.check_nodes import HOST_BOND as CHECKED
    from fabgen.inventory.check_nodes import host_bond_names

    assert CHECKED == HOST_BOND
    assert list(host_bond_names((20, 30))) == [HOST_BOND, host_vlan_interface(20), host_vlan_interface(30)]


def _dgx_links(netdevs: dict[str, str]) -> str:
    """`ibdev2netdev` of a DGX H100, every port in Ethernet mode, some renamed."""
    from fabgen.spec.catalog import NODES

    nm = NODES["dgx-h100"]
    return "".join(f"{n.rdma} port 1 ==> {netdevs.get(n.rdma, n.netdev.replace('ibp', 'enp'))} (Up)\n"
                   for n in (*nm.nics, *nm.ports) if n.role != "oob")


COMBO = DGX_EOS.format(count=4).replace('hostname: "gpu{n:03d}"}',
                                        'hostname: "gpu{n:03d}", rdma_links: links.txt}') + """\
  - name: rails
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [gpu]
"""


@pytest.mark.parametrize("case,key,words", [
    ("model-netdev-bond", "node_models.storage-server.ports[0].netdev", "port mlx5_0's netdev is 'bond0'"),
    ("model-netdev-vlan", "node_models.storage-server.ports[1].netdev", "port mlx5_1's netdev is 'bond0.20'"),
    ("links-storage-vlan", "node_groups[0].rdma_links", "gives 'bond0.30' as the netdev of mlx5_2"),
    ("links-compute-bond", "node_groups[0].rdma_links", "gives 'bond0' as the netdev of mlx5_0"),
    ("custom-vlan", "node_models.storage-server.ports[0].netdev", "'bond0.25'"),
    ("eos-rdma-name", "node_models.head.ports[1].rdma", "port 'bond0' has no netdev"),
    ("eos-compute-links", "node_groups[0].rdma_links", "gives 'bond0' as the netdev of mlx5_0"),
])
def test_a_port_named_like_the_bond_or_its_vlans_is_refused(tmp_path: Path, case: str, key: str,
                                                             words: str) -> None:
    """A port netdev `bond0` (or `bond0.<tenant VLAN>`) from the node model or from an rdma_links
    file gave netplans where the bond is its own member, or a VLAN is also an ethernet."""
    text, links = NS_EXAMPLE.read_text(), NS_LINKS.read_text()
    if case == "model-netdev-bond":
        text = text.replace("netdev: enp1s0f0np0", "netdev: bond0", 1)
    elif case == "model-netdev-vlan":
        text = text.replace("netdev: enp1s0f1np1", "netdev: bond0.20", 1)
    elif case == "links-storage-vlan":
        links = links.replace("mlx5_2 port 1 ==> enP6p3s0f0np0", "mlx5_2 port 1 ==> bond0.30", 1)
    elif case == "links-compute-bond":
        links = links.replace("mlx5_0 port 1 ==> ibp3s0", "mlx5_0 port 1 ==> bond0", 1)
    elif case == "custom-vlan":
        text = _tenant(text, "INBAND").replace("      northsouth: {inband:", "      northsouth: {storage: {vlan: 25, "
                                                 "vni: 10025, vrf: STORAGE, l3vni: 4025}, inband:", 1)
        text = text.replace("netdev: enp1s0f0np0", "netdev: bond0.25", 1)
    elif case == "eos-rdma-name":
        text = DGX_EOS.format(count=4).replace("rdma: mlx5_1, netdev: enp1s0f1np1", "rdma: bond0", 1)
    else:
        text, links = COMBO, _dgx_links({"mlx5_0": "bond0"})
    assert text != NS_EXAMPLE.read_text() or links != NS_LINKS.read_text()
    inv = _ns_copy(tmp_path, text, links)
    if "rdma_links: links.txt" in text:
        (tmp_path / "links.txt").write_text(links)
    refused_both_ways(tmp_path, inv, key, words, "netplan would take the bond as its own member")


def _netplan_or_skip() -> None:
    if NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have netplan.io: `make test` installs it")
        pytest.skip("netplan.io is not installed (`make test` installs it)")


@pytest.mark.parametrize("shape", ["nvue-trays-and-storage", "eos-dgx-and-heads", "eos-dgx-on-rails-too"])
def test_netplan_generate_takes_the_netplans_of_every_northsouth_shape(tmp_path: Path, shape: str) -> None:
    """The real `netplan generate` takes the rendered netplans of every north-south shape: NVL72
    trays (rdma_links) and storage servers on NVUE, DGX and head nodes on EOS, and DGX nodes whose
    compute rails are on a RoCE fabric beside the bond."""
    _netplan_or_skip()
    if shape == "nvue-trays-and-storage":
        inv = _ns_copy(tmp_path, NS_EXAMPLE.read_text())
        nodes = ["gb001", "gb072", "stor01", "stor04"]
    else:
        inv = tmp_path / "inv.yaml"
        inv.write_text(DGX_EOS.format(count=4) if shape == "eos-dgx-and-heads" else COMBO)
        (tmp_path / "links.txt").write_text(_dgx_links({}))
        nodes = ["gpu001", "gpu004", "head1", "head2"]
    res = fabgen_cli("render", inv, "-o", tmp_path / "out")
    assert res.returncode == 0, res.stderr
    for node in nodes:
        text = (tmp_path / "out" / "hosts" / node / "netplan.yaml").read_text()
        plan = yaml.safe_load(text)["network"]
        # in-band on the bond itself (untagged, PXE), storage a VLAN on it
        assert "addresses" in plan["bonds"]["bond0"] and len(plan["vlans"]) == 1
        assert (len(plan["ethernets"]) > 2) == (shape == "eos-dgx-on-rails-too" and node.startswith("gpu"))
        run = _netplan_generate({"60-fabgen.yaml": text}, tmp_path / "root" / node)
        assert run.returncode == 0, (node, run.stderr)


@pytest.mark.parametrize("name", ["bond0", "bond0.20"])
def test_netplan_generate_refuses_what_fabgen_now_refuses(tmp_path: Path, name: str) -> None:
    """The netplan a port named `bond0` or `bond0.20` gave (a bond its own member, a VLAN also an
    ethernet) is refused by `netplan generate`: the check above can fail, and does for those."""
    _netplan_or_skip()
    inv = _ns_copy(tmp_path, NS_EXAMPLE.read_text())
    res = fabgen_cli("render", inv, "-o", tmp_path / "out")
    assert res.returncode == 0, res.stderr
    text = (tmp_path / "out" / "hosts" / "stor01" / "netplan.yaml").read_text()
    broken = text.replace("enp1s0f0np0", name)
    assert broken != text and f"- {name}\n" in broken
    run = _netplan_generate({"60-fabgen.yaml": broken}, tmp_path / "root")
    assert run.returncode != 0 and "changes device type" in run.stderr, run.stderr


# 3. The Python API takes a mapping of any class, and raises InventoryError for what is no data.

def _classes(value: Any) -> Any:
    """The same data as OrderedDicts, mapping proxies and tuples."""
    if isinstance(value, dict):
        od = collections.OrderedDict((k, _classes(v)) for k, v in value.items())
        return types.MappingProxyType(od) if "kind" in value else od
    if isinstance(value, list):
        return tuple(_classes(v) for v in value)
    return value


def test_the_api_takes_ordered_dicts_and_tuples(tmp_path: Path) -> None:
    """A YAML representer error for a legal OrderedDict: now the same result as the plain dict."""
    doc = yaml.safe_load((INVENTORIES / "spectrumx-1su.yaml").read_text())
    plain = fabgen.validate(doc)
    assert fabgen.validate(_classes(doc)).fabrics == plain.fabrics
    rendered = fabgen.render(_classes(doc), tmp_path / "a")
    assert rendered.files == fabgen.render(doc, tmp_path / "b").files


@pytest.mark.parametrize("value,words", [
    ({"spine"}, "a set is not inventory data"),
    (b"auto", "bytes is not inventory data"),
    (object(), "an object is not inventory data"),
    (datetime.date(2026, 1, 1), "a date is not inventory data"),
    (10 ** 5000, "bits: no inventory value is that long"),
], ids=["set", "bytes", "object", "date", "huge-int"])
def test_the_api_raises_inventory_error_for_what_is_no_data(value: object, words: str) -> None:
    doc = _classes(yaml.safe_load((INVENTORIES / "spectrumx-1su.yaml").read_text()))
    doc = collections.OrderedDict(doc, fabrics=[dict(doc["fabrics"][0], tiers=value)])
    for call in (fabgen.validate, lambda d: fabgen.render(d, Path("/nonexistent/never-written"))):
        with pytest.raises(fabgen.InventoryError) as err:
            call(doc)
        (p,) = err.value.problems
        assert p.path == "fabrics[0].tiers" and words in p.message and p.line > 1 and p.file == "<mapping>", p
    assert not Path("/nonexistent/never-written").exists()


def test_the_api_raises_inventory_error_for_a_mapping_that_holds_itself_or_odd_keys() -> None:
    doc = yaml.safe_load((INVENTORIES / "spectrumx-1su.yaml").read_text())
    loop = dict(doc)
    loop["fabrics"] = [dict(doc["fabrics"][0])]
    loop["fabrics"][0]["node_groups"] = loop["fabrics"]
    with pytest.raises(fabgen.InventoryError) as err:
        fabgen.validate(loop)
    assert any(p.path == "fabrics[0].node_groups" and "holds itself" in p.message for p in err.value.problems)
    with pytest.raises(fabgen.InventoryError) as err:
        fabgen.validate({**doc, ("a", "b"): 1})
    assert any("keys are text" in p.message for p in err.value.problems)


# 4. A SONiC buffer message named an empty pool list.

def _sonic_inventory() -> dict:
    from test_hostile import _inventory

    return _inventory("sonic")


@pytest.mark.parametrize("change,words", [
    (lambda sk: sk["buffer_profiles"]["egress_lossy_profile"].pop("pool"),
     ["egress_lossy_profile names none", "buffer_pools defines egress_lossless_pool, ingress_lossless_pool"]),
    (lambda sk: sk.update(buffer_pools={}),
     ["(not egress_lossless_pool)", "buffer_pools defines none"]),
    (lambda sk: sk["buffer_profiles"]["egress_lossy_profile"].update(pool="nope"),
     ["buffer profiles must use pools that buffer_pools defines (not nope)"]),
])
def test_a_sonic_buffer_profile_message_names_the_pools(tmp_path: Path, change, words: list[str]) -> None:
    doc = _sonic_inventory()
    change(doc["switch_models"]["sw"]["sonic"])
    inv = write(tmp_path, doc)
    refused_both_ways(tmp_path, inv, "switch_models.sw.sonic.buffer_profiles", *words)
    res = fabgen_cli("validate", inv)
    assert "(not )" not in res.stderr and "must define use" not in res.stderr and "must define  " not in res.stderr
