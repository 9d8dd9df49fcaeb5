"""Hostile render folders, fourth round: `fabgen emulate` runs as root, so every value it takes
from a rendered file is held to what fabgen itself writes before any namespace exists
(emulate/inputs.py), and files fabgen did not write as they are are refused unless the user
says --trust-edited. Each case runs the real command line in a process of its own, bounded by
a timeout, and checks what a user sees: exit 2, one line naming the file and where in it, no
traceback, and no namespace or lab directory left (every refusal comes before the lab exists; the
lab's own clean-up on every path is tests/test_emulate.py's)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import labtrace
import pytest

from conftest import INVENTORIES
from fabgen.emulate import inputs
from fabgen.emulate.model import TranslateError, load_yaml
from fabgen.pipeline import render_to

TIMEOUT = 60
CANARY = Path(tempfile.gettempdir()) / "fabgen-hostile-canary"
INJECT = f"touch {CANARY}"


def fabgen(*args: object, timeout: int = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env={**labtrace.env(), "COLUMNS": "200"})


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile-emulate")
    out = {}
    for case in ("roce-2node", "spectrumx-1su", "b300-cluster", "gb300-northsouth", "fattree-2to1", "superpod-cluster",
                 "era-2-4-5-800"):
        out[case] = root / case
        render_to(INVENTORIES / f"{case}.yaml", out[case])
    return out


def relist(out: Path, rel: str) -> None:
    """The manifest's entry for `rel` made to match the file as edited: an editor who updates both."""
    doc = json.loads((out / "manifest.json").read_text())
    data = (out / rel).read_bytes()
    entry = next(e for e in doc["files"] if e["path"] == rel)
    entry.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    (out / "manifest.json").write_text(json.dumps(doc))


def tampered(renders: dict[str, Path], tmp_path: Path, case: str, rel: str, edit, listed: bool = True) -> Path:
    out = tmp_path / case
    shutil.copytree(renders[case], out)
    text = (out / rel).read_text()
    changed = edit(text)
    assert changed != text, "the case must change the file"
    (out / rel).write_text(changed)
    if listed:
        relist(out, rel)
    return out


def lab_traces() -> tuple[set[str], list[str]]:
    """What an emulation of this test run leaves on the machine: its namespaces, its run
    directories (tests/labtrace.py: another run's labs on the machine are left out)."""
    return labtrace.namespaces()[0], labtrace.run_dirs()


def refused(res: subprocess.CompletedProcess, *words: str) -> None:
    assert res.returncode == 2, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr  # one line: nothing the file holds forges another
    for w in words:
        assert w in res.stderr, (w, res.stderr)
    assert not CANARY.exists()


NETPLAN = "hosts/gpu01/netplan.yaml"
GPU_LEAF = "gpu-plane1/switches/gpu-plane1-su01-leaf1.nvue.yaml"
NS_PAIR_LEAF = "ns/switches/ns-leaf001.nvue.yaml"  # NVIDIA's collapsed pair with the border VRF EXIT
LEAF_NVUE = "inband/switches/inband-su01-leaf1.nvue.yaml"
EOS_LEAF = "roce/switches/roce-leaf01.cfg"
SX_LEAF = "sx/switches/sx-su01-leaf1.nvue.yaml"
NS_LEAF = "northsouth/switches/northsouth-storage-leaf1.nvue.yaml"

# (case, file, edit, words of the one line)
CASES = {
    "netplan address with a newline into ip -batch": (
        "roce-2node", NETPLAN, lambda t: t.replace("- 10.8.0.1/31", f'- "10.8.0.1/31\\nnetns exec x {INJECT}"', 1),
        [NETPLAN, "network.ethernets.enp24s0np0.addresses", "not an address"]),
    "netplan route via a command": (
        "roce-2node", NETPLAN, lambda t: t.replace('via: "10.8.0.0"', f'via: "10.8.0.0 dev lo; {INJECT}"', 1),
        [NETPLAN, "routes[1]", "via"]),
    "netplan route table as text": (
        "roce-2node", NETPLAN, lambda t: t.replace("table: 100", "table: 100 proto static\\nlink", 1),
        [NETPLAN, "routes[0]", "table"]),
    "netplan route of a type fabgen does not write": (
        "roce-2node", NETPLAN, lambda t: t.replace("scope: link", "type: blackhole", 1),
        [NETPLAN, "routes[0]", "type"]),
    "netplan unreachable route via a leaf": (
        "roce-2node", NETPLAN, lambda t: t.replace("scope: link", "type: unreachable\n        via: 10.8.0.0", 1),
        [NETPLAN, "routes[0]", "type"]),
    "netplan mtu as a word": (
        "roce-2node", NETPLAN, lambda t: t.replace("mtu: 9000", "mtu: jumbo", 1), [NETPLAN, "mtu"]),
    "netplan rule from a command": (
        "roce-2node", NETPLAN, lambda t: t.replace('from: "10.8.0.1"', 'from: "10.8.0.1 table 1\\nrule flush"', 1),
        [NETPLAN, "routing-policy[0]"]),
    "netplan rule priority as a command": (
        "roce-2node", NETPLAN, lambda t: t.replace('from: "10.8.0.1"\n        table: 100',
                                                   f'from: "10.8.0.1"\n        table: 100\n        priority: '
                                                   f'"1\\nrule flush; {INJECT}"', 1),
        [NETPLAN, "routing-policy[0]", "priority"]),
    "a compute fabric's cabling.csv, read for the storage servers, with a device and a newline": (
        "superpod-cluster", "compute/cabling.csv", lambda t: _first_cell(t, f"dgx001\n{INJECT}"),
        ["compute/cabling.csv:", "a_device"]),
    "netplan ethernets as a list": (
        "roce-2node", NETPLAN, lambda t: t.replace("  ethernets:\n", "  ethernets:\n  - x\n  other:\n", 1),
        [NETPLAN]),
    "netplan nested 100,000 deep (libyaml ends the process)": (
        "roce-2node", NETPLAN, lambda t: t + "deep: " + "[" * 100000 + "]" * 100000 + "\n",
        [NETPLAN, "nest"]),
    "netplan with an alias bomb": (
        "roce-2node", NETPLAN, lambda t: t + "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a]\n",
        [NETPLAN, "anchor or alias"]),
    "NVUE access VLAN into an interface name": (
        "b300-cluster", LEAF_NVUE,
        lambda t: t.replace("access: 100", f'access: "100 type dummy\\nnetns exec x {INJECT}"', 1),
        [LEAF_NVUE, "VLAN interface"]),
    "NVUE router-id with a newline into frr.conf": (
        "spectrumx-1su", SX_LEAF,
        lambda t: t.replace('router-id: "10.255.0.1"', 'router-id: "10.255.0.1\\nlog file /etc/fabgen-pwned"', 1),
        [SX_LEAF, "router-id"]),
    "NVUE ASN as a word": (
        "spectrumx-1su", SX_LEAF, lambda t: t.replace("autonomous-system: ", "autonomous-system: x", 1), [SX_LEAF]),
    "EOS router-id with a command": (
        "roce-2node", EOS_LEAF, lambda t: t.replace("   router-id ", "   router-id 1.2.3.4;", 1),
        [EOS_LEAF, "router-id"]),
    "cabling.csv device with a newline": (
        "roce-2node", "roce/cabling.csv", lambda t: t.replace("\ngpu01,", '\n"gpu01\nx",', 1),
        ["roce/cabling.csv:", "a_device"]),
    "cabling.csv row with a missing cell": (
        "roce-2node", "roce/cabling.csv", lambda t: t.rstrip("\n").rsplit(",", 1)[0] + "\n",
        ["roce/cabling.csv:", "cells"]),
    "addresses.csv node interface that is no netdev": (
        "roce-2node", "roce/addresses.csv", lambda t: _replace_node_interface(t, "en0 up; reboot"),
        ["roce/addresses.csv:", "interface"]),
    "addresses.csv ASN as text": (
        "roce-2node", "roce/addresses.csv", lambda t: t.replace(",leaf,", ",leaf,x", 1),
        ["roce/addresses.csv:2", "asn"]),
    "addresses.csv columns renamed": (
        "roce-2node", "roce/addresses.csv", lambda t: t.replace("peer_interface", "peer_port", 1),
        ["roce/addresses.csv:1", "columns"]),
    "report.json fabrics as a list": (
        "roce-2node", "report.json", lambda t: json.dumps({**json.loads(t), "fabrics": [1]}), ["report.json"]),
    "report.json fabric name with a newline": (
        "roce-2node", "report.json",
        lambda t: json.dumps({**json.loads(t), "fabrics": {"roce\nx": json.loads(t)["fabrics"]["roce"]}}),
        ["report.json", "fabric"]),
    "EVPN leaf VNI as a command": (
        "gb300-northsouth", NS_LEAF, lambda t: _first_vni(t), [NS_LEAF]),
    "EVPN leaf ASN infinite": (
        "gb300-northsouth", NS_LEAF, lambda t: t.replace("autonomous-system: 4200020008", "autonomous-system: .inf"),
        [NS_LEAF]),
    "EVPN peer group remote-as a command": (
        "gb300-northsouth", NS_LEAF, lambda t: t.replace("remote-as: external", "remote-as: 'external\n exit'", 1),
        [NS_LEAF, "remote-as", "not a name fabgen writes"]),
    "EVPN node bond MTU infinite": (
        "gb300-northsouth", "hosts/gb001/netplan.yaml", lambda t: t.replace("      mtu: 9000\n      parameters:",
                                                                            "      mtu: .inf\n      parameters:"),
        ["hosts/gb001/netplan.yaml"]),
    "EVPN node VLANs as a list": (
        "gb300-northsouth", "hosts/gb001/netplan.yaml", lambda t: t.split("  vlans:\n")[0] + "  vlans: []\n",
        ["hosts/gb001/netplan.yaml"]),
    "EVPN node VLAN named as the bond": (
        "gb300-northsouth", "hosts/gb001/netplan.yaml", lambda t: t.replace("    bond0.20:\n", "    bond0:\n", 1),
        ["hosts/gb001/netplan.yaml", "network.vlans.bond0", "the bond"]),
    "EVPN node VLAN named as a bond member": (
        "gb300-northsouth", "hosts/gb001/netplan.yaml",
        lambda t: t.replace("    bond0.20:\n", "    enP6p3s0f0np0:\n", 1),
        ["hosts/gb001/netplan.yaml", "network.vlans.enP6p3s0f0np0", "members"]),
    "EVPN cable to a device of no plan": (
        "gb300-northsouth", "northsouth/cabling.csv",
        lambda t: t + "ghost,swp1,northsouth-spine01,swp99,400G,mmf,leaf-spine\n", ["northsouth/cabling.csv", "ghost"]),
    "GPU overlay VRF loopback as a command": (
        "era-2-4-5-800", GPU_LEAF,
        lambda t: t.replace("10.255.127.254/32: {}", f"'10.1.1.1/32 dev lo; {INJECT}': {{}}"),
        [GPU_LEAF, "VRF GPU's loopback"]),
    "GPU overlay VRF loopback not a /32": (
        "era-2-4-5-800", GPU_LEAF, lambda t: t.replace("10.255.127.254/32: {}", "10.255.127.0/24: {}"),
        [GPU_LEAF, "no /32"]),
    "GPU overlay VRF router-id as a command": (
        "era-2-4-5-800", GPU_LEAF, lambda t: t.replace('            router-id: "10.255.0.1"',
                                                       "            router-id: '1.1.1.1\\n exit'"),
        [GPU_LEAF, "VRF GPU's router-id"]),
    "GPU overlay route-map setting another bandwidth": (
        "era-2-4-5-800", GPU_LEAF, lambda t: t.replace("ext-community-bw: multipaths", "ext-community-bw: '100'"),
        [GPU_LEAF, "route-map WEIGHTED_ECMP", "ext-community-bw multipaths"]),
    "GPU overlay route-map name as a command": (
        "era-2-4-5-800", GPU_LEAF, lambda t: t.replace("WEIGHTED_ECMP:", f'"W permit 10\\n {INJECT}":', 1),
        [GPU_LEAF, "not a name fabgen writes"]),
    "GPU overlay peer group sending an undefined route-map": (
        "era-2-4-5-800", GPU_LEAF, lambda t: t.replace("route-map: WEIGHTED_ECMP", "route-map: OTHER"),
        [GPU_LEAF, "OTHER, which is not defined"]),
    "GPU overlay aspath-ignore as a command": (
        "era-2-4-5-800", GPU_LEAF, lambda t: t.replace("aspath-ignore: enabled", f"aspath-ignore: '{INJECT}'"),
        [GPU_LEAF, "multipath aspath-ignore"]),
    "border route-map name as a command": (
        "era-2-4-5-800", NS_PAIR_LEAF,
        lambda t: t.replace("OUTBOUND_ERA_PREFIXES:", f'"O permit 10\\n {INJECT}":', 1),
        [NS_PAIR_LEAF, "not a name fabgen writes"]),
    "border leaking policy on a leaf without a border VRF": (
        "era-2-4-5-800", NS_PAIR_LEAF, lambda t: t[:t.rindex("            neighbor:\n")],  # EXIT's, the last
        [NS_PAIR_LEAF, "only route-maps are emulated"]),
    "border prefix list length as a command": (
        "era-2-4-5-800", NS_PAIR_LEAF,
        lambda t: t.replace("max-prefix-len: 32", "max-prefix-len: '32\\n agentx'", 1),
        [NS_PAIR_LEAF, "max-prefix-len", "is not a number"]),
    "border community as a command": (
        "era-2-4-5-800", NS_PAIR_LEAF, lambda t: t.replace('"11:11": {}', f'"11:11 {INJECT}": {{}}', 1),
        [NS_PAIR_LEAF, "community", "not a name fabgen writes"]),
    "border route-map matching an undefined prefix list": (
        "era-2-4-5-800", NS_PAIR_LEAF,
        lambda t: t.replace("ip-prefix-list: ERA_PREFIXES", "ip-prefix-list: NOPE", 1),
        [NS_PAIR_LEAF, "prefix-list NOPE, which is not defined"]),
    "border VRF loopback as a command": (  # northsouth.border.loopback
        "era-2-4-5-800", NS_PAIR_LEAF,
        lambda t: t.replace(" " * 14 + "10.254.0.252/32: {}", " " * 14 + f"'10.254.0.252/32 dev lo; {INJECT}': {{}}"),
        [NS_PAIR_LEAF, "VRF EXIT's loopback"]),
    "out-of-band EVPN route-map matching a prefix list as a command": (  # oob_routed.evpn_filter
        "era-2-4-5-800", NS_PAIR_LEAF,
        lambda t: t.replace("ip-prefix-list: OOB_HOSTS", "ip-prefix-list: 'OOB_HOSTS\n exit'", 1),
        [NS_PAIR_LEAF, "EVPN_OOB_OUT's rules"]),
    "out-of-band EVPN route-map named as a command": (
        "era-2-4-5-800", NS_PAIR_LEAF,
        lambda t: t.replace("route-map: EVPN_OOB_OUT", f"route-map: 'E\n {INJECT}'", 1),
        [NS_PAIR_LEAF, "not a name fabgen writes"]),
    "tenant VRF importing a VRF the switch lacks": (
        "era-2-4-5-800", NS_PAIR_LEAF,
        lambda t: t.replace(" " * 22 + "EXIT: {}", " " * 22 + "GHOST: {}", 1),
        [NS_PAIR_LEAF, "imports VRF GHOST"]),
    "border peer group's remote AS as a command": (
        "era-2-4-5-800", NS_PAIR_LEAF,
        lambda t: t[:t.rindex("remote-as: external")] + "remote-as: '1\\n neighbor x'" +
        t[t.rindex("remote-as: external") + len("remote-as: external"):],
        [NS_PAIR_LEAF, "remote-as"]),
    "the out-of-band peer groups on a switch without the out-of-band network": (
        "gb300-northsouth", NS_LEAF, lambda t: t.replace("SPINES", "oob-underlay"),
        [NS_LEAF, "without a routed out-of-band VLAN and VRF"]),
    "a border uplink on a leaf port cabled twice": (
        "era-2-4-5-800", "ns/cabling.csv",
        lambda t: t + "ns-leaf001,swp63s1,site-router,uplink99,200G,mmf,leaf-border\n",
        ["ns/cabling.csv", "ns-leaf001 swp63s1 is cabled twice"]),
    "border prefix list of IPv6": (
        "era-2-4-5-800", NS_PAIR_LEAF, lambda t: t.replace("0.0.0.0/0:", "'::/0':", 1),
        [NS_PAIR_LEAF, "prefix list"]),
    "border router named as a command": (
        "era-2-4-5-800", "ns/cabling.csv", lambda t: t.replace(",site-router,", f",'site;{INJECT}',", 1),
        ["ns/cabling.csv:106", "z_device", "not a name fabgen writes"]),
    "SONiC ASN infinite": (
        "fattree-2to1", "fabric/switches/fabric-leaf001/config_db.json",
        lambda t: t.replace('"local_asn": "4200010000"', '"local_asn": Infinity'),
        ["fabric/switches/fabric-leaf001/config_db.json"]),
    "NVUE ASN infinite": (
        "spectrumx-1su", SX_LEAF, lambda t: t.replace("autonomous-system: 4200010000", "autonomous-system: .inf"),
        [SX_LEAF]),
    "a node port without an address": (
        "roce-2node", "roce/addresses.csv", lambda t: t.replace("gpu01,node,,enp24s0np0,10.8.0.1/31,",
                                                                "gpu01,node,,enp24s0np0,,"),
        ["roce/addresses.csv", "gpu01 enp24s0np0 has no address"]),
    "a node port named like an ip keyword": (
        "roce-2node", "roce/addresses.csv", lambda t: _replace_node_interface(t, "help"), ["roce/addresses.csv:"]),
    "a cable listed twice": (
        "roce-2node", "roce/cabling.csv", lambda t: t + t.splitlines()[1] + "\n", ["roce/cabling.csv", "cabled twice"]),
    "a thousand BGP neighbors no cable needs": (
        "roce-2node", EOS_LEAF,
        lambda t: t.replace("router bgp 4200010000\n", "router bgp 4200010000\n" + "".join(
            f"   neighbor 10.99.{k // 250}.{k % 250} remote-as 65001\n" for k in range(1000)), 1),
        [EOS_LEAF, "1000 BGP neighbors", "0 sessions"]),
}


def _replace_node_interface(text: str, new: str) -> str:
    lines = text.splitlines(keepends=True)
    for k, line in enumerate(lines):
        cells = line.split(",")
        if len(cells) == 7 and cells[1] == "node":
            cells[3] = f'"{new}"'
            lines[k] = ",".join(cells)
            return "".join(lines)
    raise AssertionError("no node row")


def _first_cell(text: str, new: str) -> str:
    """The first row's first cell (a cabling.csv's a_device) replaced, quoted as CSV quotes it."""
    head, first, rest = text.split("\n", 2)
    return f'{head}\n"{new}",{first.split(",", 1)[1]}\n{rest}'


def _first_vni(text: str) -> str:
    import re

    return re.sub(r'(vni:\n\s+)"(\d+)"', lambda m: m.group(1) + '"1 local 1.1.1.1; ' + INJECT + '"', text, count=1)


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_tampered_value_is_refused_before_any_namespace(renders: dict[str, Path], tmp_path: Path, case: str) -> None:
    render, rel, edit, words = CASES[case]
    before = lab_traces()
    out = tampered(renders, tmp_path, render, rel, edit)
    res = fabgen("emulate", out)
    refused(res, *words)
    assert lab_traces() == before
    # --trust-edited uses an edited file, never an unchecked value
    refused(fabgen("emulate", out, "--trust-edited"), *words)


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("log syslog informational", "log file /etc/fabgen-pwned"),
    lambda t: t.replace("frr defaults datacenter", "frr defaults datacenter\nagentx"),
    lambda t: t.replace(" bgp router-id ", " bgp router-id 999."),
    lambda t: t.replace("router bgp ", "router bgp x"),
])
def test_host_frr_conf_runs_only_lines_fabgen_writes(renders: dict[str, Path], tmp_path: Path, edit) -> None:
    """A routing node's frr.conf runs as written: any line fabgen does not write there (a log file
    anywhere on the machine, a daemon option, a malformed address or ASN) is refused, naming the
    file and its line."""
    rel = "hosts/dgx001/frr.conf"
    out = tampered(renders, tmp_path, "superpod-cluster", rel, edit)
    refused(fabgen("emulate", out), rel + ":")


def test_a_node_frr_conf_with_more_peers_than_ports_is_refused(renders: dict[str, Path], tmp_path: Path) -> None:
    """bgpd holds about 0.7 MB a configured peer: a node's frr.conf of fabgen's own lines but
    thousands of neighbors would fill the machine and still pass."""
    rel = "hosts/dgx001/frr.conf"
    extra = "".join(f" neighbor 10.99.{k // 250}.{k % 250} peer-group FABRIC\n" for k in range(500))
    out = tampered(renders, tmp_path, "superpod-cluster", rel,
                   lambda t: t.replace(" neighbor FABRIC bfd\n", " neighbor FABRIC bfd\n" + extra, 1))
    refused(fabgen("emulate", out), rel, "BGP neighbors")


def test_a_temporary_tree_in_a_render_is_not_the_render(renders: dict[str, Path], tmp_path: Path) -> None:
    """An entry named like fabgen's own temporary tree is no file of the render either: refused."""
    out = tmp_path / "render"
    shutil.copytree(renders["roce-2node"], out)
    (out / ".fabgen-new-x").mkdir()
    (out / ".fabgen-new-x" / "y").write_text("hi\n")
    refused(fabgen("emulate", out), ".fabgen-new-x", "--trust-edited")


def test_an_edited_file_is_refused_unless_trusted(renders: dict[str, Path], tmp_path: Path) -> None:
    """An edit that keeps every value fabgen-shaped is still not the plan fabgen made: refused,
    naming the file and the option; the edit and an unlisted file both counted."""
    out = tampered(renders, tmp_path, "roce-2node", EOS_LEAF,
                   lambda t: t.replace("router bgp 4200010000", "router bgp 4200010009"), listed=False)
    (out / "roce" / "notes.txt").write_text("mine\n")
    before = lab_traces()
    res = fabgen("emulate", out)
    refused(res, EOS_LEAF, "changed since fabgen wrote", "notes.txt", "--trust-edited")
    assert lab_traces() == before
    (out / "roce" / "notes.txt").unlink()
    missing = tmp_path / "missing"
    shutil.copytree(renders["roce-2node"], missing)
    (missing / "roce" / "cabling.csv").unlink()
    refused(fabgen("emulate", missing), "1 missing", "roce/cabling.csv")


def test_verify_refuses_an_edited_plan_unless_trusted(renders: dict[str, Path], tmp_path: Path) -> None:
    """docs/verify.md: an edited cabling.csv is not the plan. Refused (exit 2) unless --trust-edited,
    and then the report names the edited file first."""
    out = tampered(renders, tmp_path, "roce-2node", "roce/cabling.csv",
                   lambda t: t.replace("Ethernet1/1", "Ethernet9/9"), listed=False)
    lldp = tmp_path / "lldp"
    lldp.mkdir()
    (lldp / "roce-leaf01.json").write_text(json.dumps({"lldp": {"interface": []}}))
    refused(fabgen("verify", out, "--lldp", lldp), "roce/cabling.csv", "--trust-edited")
    res = fabgen("verify", out, "--lldp", lldp, "--trust-edited", "--format", "json")
    assert res.returncode in (0, 1), res.stderr
    notes = json.loads(res.stdout)["notes"]
    assert "--trust-edited" in notes[0] and "roce/cabling.csv" in notes[0], notes


# The checks themselves, fed what fabgen writes and what it never does ------------------------------

def test_every_golden_emulated_fabric_passes_the_boundary(renders: dict[str, Path]) -> None:
    """What fabgen writes is what the boundary admits: every bundled shape read whole (switches of
    every platform, netplans, frr.conf, the EVPN fabrics, the GPU overlay with NVIDIA's route-map,
    aspath-ignore and VRF loopbacks) with no refusal."""
    from fabgen.emulate import read, run
    from fabgen.rendered import read as rendered

    for case, out in renders.items():
        files = rendered.read_render(out)
        fabs = [read.read_fabric(files, f) for f in read.fabrics_of(files, None, overlay=True)]
        plans = run._evpn_plans(files, read.northsouth_of(files, None))
        overlays = run._overlay_plans(files, read.overlay_of(files, None), max_routers=100)
        assert all(p.switches and p.hosts for p in overlays), case
        assert fabs or plans or overlays, case
        assert all(f.routers and f.hosts for f in fabs), case


@pytest.mark.parametrize("value,ok", [("10.0.0.1/31", True), ("fd00::1/64", True), ("10.0.0.1", False),
                                      ("10.0.0.1/31\nx", False), ("10.0.0.1/33", False), (" 10.0.0.1/31", False),
                                      (31, False), (None, False)])
def test_cidr(value: object, ok: bool) -> None:
    if ok:
        assert inputs.cidr(value, "f") == value
    else:
        with pytest.raises(inputs.InputError, match="^f: "):
            inputs.cidr(value, "f")


@pytest.mark.parametrize("value,ok", [("swp1s0", True), ("Ethernet1/1", True), ("vlan100", True),
                                      ("vlan100\nx", False), ("a b", False), ("-n", False), ("", False),
                                      ("x" * 65, False), (5, False)])
def test_port_names(value: object, ok: bool) -> None:
    if ok:
        assert inputs.name(value, inputs.PORT, "f", "port") == value
    else:
        with pytest.raises(inputs.InputError):
            inputs.name(value, inputs.PORT, "f", "port")


def test_integers_refuse_booleans_and_text() -> None:
    assert inputs.integer("65101", 1, inputs.ASN_MAX, "f", "asn") == 65101
    for bad in (True, "65101 ", "x", -1, 2**32, 1.5):
        with pytest.raises(inputs.InputError):
            inputs.integer(bad, 1, inputs.ASN_MAX, "f", "asn")


def test_load_yaml_bounds_depth_and_refuses_aliases() -> None:
    assert load_yaml("a: [1, {b: 2}]\n", "f") == {"a": [1, {"b": 2}]}
    for bad, words in (("[" * 100000 + "]" * 100000, "nest"),
                       ("a:\n" + "".join(" " * k + "- \n" for k in range(0, 400, 2)), "nest"),
                       ("a: &x 1\nb: *x\n", "alias"), ("a: [\n", "not YAML")):
        with pytest.raises(TranslateError, match=words):
            load_yaml(bad, "f.yaml")


def test_a_border_leaving_the_lab_no_stand_in_is_refused_not_a_traceback() -> None:
    """The stand-in site router takes a documentation ASN and address the fabric does not use; a
    render whose switches use all four ASNs, or whose border sends out every address, leaves none:
    refused, naming the router, not a StopIteration."""
    from fabgen.emulate import border

    ports = [("uplink1", "leaf1", "swp1")]
    with pytest.raises(inputs.InputError, match="site-router"):
        border.site("site-router", ports, "external", set(border.SITE_ASNS), ["10.0.0.0/8"], [])
    with pytest.raises(inputs.InputError, match="site-router"):
        border.site("site-router", ports, "external", set(), ["0.0.0.0/0"], [])
    ok = border.site("site-router", ports, "external", {64496}, ["10.0.0.0/8"], [])
    assert ok.asn == 64497 and ok.address == "192.0.2.1" and ok.refused == "10.0.0.0/9"
