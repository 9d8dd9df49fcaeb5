"""The GPU fabric as NVIDIA's EVPN-VXLAN overlay (`host_addressing: evpn`, issue 56 item 1).

NVIDIA's generator for its Enterprise RAs writes, on every GPU leaf of a plane (NVIDIA/enterprise-ras,
net-configurator/output/2-4-5-800/default/configs/gl-plane1-01-config.sh at 2b4e3e2), VLAN 900 with
VNI 245900 on the GPU ports (access), an SVI in VRF GPU with its own address and a VRR anycast
gateway, VRF GPU's layer-3 VNI 245003, VXLAN from the loopback with ARP suppression and the DSCP
copied/preserved, and EVPN on loopback-to-loopback eBGP sessions (peer group overlay, multihop 2,
update-source lo); the spines (gs-plane1-01) relay EVPN on the same sessions. These tests render
such a fabric and hold it against NVIDIA's object model of every release, `netplan generate`, the
address plan across growth, and the located refusals; each check is shown refusing a broken file.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import nvue_model
import pytest
import yaml
from typer.testing import CliRunner

from conftest import IN_CI
from fabgen.cli import app
from fabgen.pipeline import render_to

RELEASES = ("5.13", "5.14", "5.16", "5.18")
NETPLAN = shutil.which("netplan") or ("/usr/sbin/netplan" if os.path.exists("/usr/sbin/netplan") else None)

INVENTORY = """version: 1
cluster: ov
node_groups:
  - {{name: gb, model: gb300-nvl72, count: {count}, hostname: "su-01-node-{{n:02d}}"}}
fabrics:
  - name: gpu
    kind: {kind}
    platform: {platform}
{version}    topology: rail-optimized
    switch_model: {model}
    node_groups: [gb]
    planes: 2
    scalable_unit: 36
    management: {{prefix: 192.168.41.0/24, gateway: 192.168.41.1}}
    ethernet:
      host_addressing: evpn
      pools: {{hosts: 192.168.0.0/19}}
      bfd: {{leaf_spine: false, overlay: {{interval_ms: 1000, multiplier: 3}}}}
{extra}"""


def _inventory(tmp: Path, count: int = 18, platform: str = "nvue", release: str | None = None,
               extra: str = "") -> Path:
    kind, model = {"nvue": ("spectrum-x", "sn5600"), "sonic": ("roce", "sn5600-sonic"),
                   "eos": ("roce", "arista-7060x5")}[platform]
    version = f'    platform_version: "{release}"\n' if release else ""
    tmp.mkdir(parents=True, exist_ok=True)
    inv = tmp / "inventory.yaml"
    inv.write_text(INVENTORY.format(count=count, kind=kind, platform=platform, model=model, version=version,
                                    extra=extra))
    return inv


def _render(tmp: Path, **kw: Any) -> Path:
    out = tmp / "out"
    render_to(_inventory(tmp, **kw), out)
    return out


def _trees(out: Path, plane: int = 1) -> dict[str, dict[str, Any]]:
    trees = {}
    for p in sorted((out / f"gpu-plane{plane}" / "switches").glob("*.nvue.yaml")):
        doc = yaml.safe_load(p.read_text())
        trees[p.name[:-len(".nvue.yaml")]] = doc
    return trees


def _addresses(out: Path, plane: int = 1) -> list[dict[str, str]]:
    with (out / f"gpu-plane{plane}" / "addresses.csv").open() as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("release", RELEASES)
def test_leaves_and_spines_are_nvidias_overlay_and_the_object_model_takes_them(release: str,
                                                                               tmp_path: Path) -> None:
    new = release >= "5.15"
    on = {"state": "enabled"} if new else {"enable": "on"}
    out = _render(tmp_path, release=release)
    vrf_loopbacks: dict[str, str] = {}
    for plane, subnet in ((1, "192.168.0.0/20"), (2, "192.168.16.0/20")):  # NVIDIA's two /20s
        trees = _trees(out, plane)
        leaves = {n: d for n, d in trees.items() if "leaf" in n}
        spines = {n: d for n, d in trees.items() if "spine" in n}
        assert len(leaves) == 4 and len(spines) == 2
        loopback = {n: next(iter(d[1]["set"]["interface"]["lo"]["ipv4" if new else "ip"]["address"]))[:-3]
                    for n, d in trees.items()}
        gateway = subnet.replace(".0/20", ".1/20")
        for name, (header, body) in leaves.items():
            tree = body["set"]
            assert nvue_model.release(header["header"]) == release
            assert nvue_model.problems(release, tree) == [], name
            ports = tree["interface"]
            gpu = [p for p, v in ports.items() if v.get("bridge", {}).get("domain", {}).get("br_default") == {
                "access": 900}]
            assert len(gpu) == 18  # one per tray of the rack, on the first nine cages split 2x
            svi = ports["vlan900"]
            ip = svi["ipv4" if new else "ip"]
            assert set(ip["vrr"]["address"]) == {gateway}
            own = next(iter(ip["address"]))
            assert own != gateway and own.endswith("/20")
            assert (svi["vrf"] if new else ip["vrf"]) == "GPU"
            assert tree["bridge"]["domain"]["br_default"]["vlan"] == {"900": {"vni": {"245900": {}}}}
            assert tree["vrf"]["GPU"]["evpn"]["vni"] == {"245003": {}}
            vxlan = tree["nve"]["vxlan"]
            assert vxlan["source"]["address"] == loopback[name]
            assert vxlan["encapsulation"] == {"dscp": {"action": "copy"}}
            assert vxlan["decapsulation"] == {"dscp": {"action": "preserve"}}
            assert "multihoming" not in tree["evpn"]  # a GPU port has one leaf
            bgp = tree["vrf"]["default"]["router"]["bgp"]
            overlay = bgp["peer-group"]["OVERLAY"]
            assert overlay["multihop-ttl"] == 2 and overlay["update-source"] == "lo"
            assert overlay["address-family"] == {"ipv4-unicast": {"state": "disabled"} if new else {"enable": "off"},
                                                 "l2vpn-evpn": on}
            # the underlay carries IPv4 alone, sent with NVIDIA's weighted-ECMP route-map (gl-plane1-01 at 2b4e3e2)
            assert bgp["peer-group"]["SPINES"]["address-family"] == {
                "ipv4-unicast": {"policy": {"outbound": {"route-map": "WEIGHTED_ECMP"}}}}
            assert tree["router"]["policy"] == {"route-map": {"WEIGHTED_ECMP": {"rule": {"10": {
                "action": {"permit": {}}, "set": {"ext-community-bw": "multipaths"}}}}}}
            assert bgp["path-selection"] == {"multipath": {"aspath-ignore": "enabled" if new else "on"}}
            numbered = {ip for ip, n in bgp["neighbor"].items() if n["peer-group"] == "OVERLAY"}
            assert numbered == {loopback[s] for s in spines}
            # VRF GPU: a loopback of its own, the switch's router-id, EVPN (gl-plane1-01 at 2b4e3e2)
            gpu_vrf = tree["vrf"]["GPU"]
            (vrf_lo,) = gpu_vrf["loopback"]["ip"]["address"]
            vrf_loopbacks[name] = vrf_lo
            assert vrf_lo.endswith("/32") and vrf_lo[:-3] not in loopback.values()
            assert gpu_vrf["router"]["bgp"]["router-id"] == loopback[name]
            assert gpu_vrf["router"]["bgp"]["address-family"]["l2vpn-evpn"] == on
        for name, (_, body) in spines.items():
            tree = body["set"]
            assert nvue_model.problems(release, tree) == [], name
            assert "nve" not in tree and "GPU" not in tree["vrf"]  # a relay, no VTEP
            assert "policy" not in tree["router"]  # NVIDIA's spines send no WEIGHTED_ECMP (gs-plane1-01 at 2f46cb2)
            assert tree["vrf"]["default"]["router"]["bgp"]["path-selection"] == {
                "multipath": {"aspath-ignore": "enabled" if new else "on"}}
            bgp = tree["vrf"]["default"]["router"]["bgp"]
            numbered = {ip for ip, n in bgp["neighbor"].items() if n["peer-group"] == "OVERLAY"}
            assert numbered == {loopback[n] for n in leaves}
    assert len(set(vrf_loopbacks.values())) == 8  # one a leaf, across both planes
    # the object model refuses a DSCP action VXLAN does not have
    tree = _trees(out)["gpu-plane1-su01-leaf1"][1]["set"]
    tree["nve"]["vxlan"]["decapsulation"]["dscp"]["action"] = "keep"
    assert any("action" in p for p in nvue_model.problems(release, tree))
    # ... and a route-map rule that sets a link bandwidth NVUE does not have
    tree = _trees(out)["gpu-plane1-su01-leaf1"][1]["set"]
    tree["router"]["policy"]["route-map"]["WEIGHTED_ECMP"]["rule"]["10"]["set"]["ext-community-bw"] = "fastest"
    assert nvue_model.problems(release, tree) != []


def test_nics_leaves_and_gateway_have_one_address_each_and_growth_only_adds(tmp_path: Path) -> None:
    """18 trays, then 36 (the unit whole): every address of the smaller render is in the larger one
    where it was; each plane's NICs, the anycast gateway and the leaves' SVIs apart."""
    small, big = _render(tmp_path / "a"), _render(tmp_path / "b", count=36)
    for plane in (1, 2):
        rows = _addresses(small, plane)
        nics = [r for r in rows if r["role"] == "node"]
        assert len(nics) == 18 * 4
        gateway = [r for r in rows if r["role"] == "anycast"]
        assert [(r["interface"], r["address"]) for r in gateway] == [("vlan900", f"192.168.{16 * (plane - 1)}.1/20")]
        svis = [r["address"] for r in rows if r["interface"] == "vlan900" and r["role"] == "leaf"]
        assert len(svis) == 4
        addresses = [r["address"] for r in nics] + svis + [gateway[0]["address"]]
        assert len(set(addresses)) == len(addresses)
        assert not any(r["role"] == "leaf" and r["interface"].startswith("swp") and r["address"] for r in rows)
        grown = {(r["device"], r["interface"]): r["address"] for r in _addresses(big, plane)}
        for r in rows:
            assert grown[r["device"], r["interface"]] == r["address"], r
        assert len(grown) > len(rows)


def test_a_node_netplan_puts_each_port_on_its_planes_subnet_and_netplan_generates_it(tmp_path: Path) -> None:
    out = _render(tmp_path)
    text = (out / "hosts" / "su-01-node-01" / "netplan.yaml").read_text()
    eth = yaml.safe_load(text)["network"]["ethernets"]
    assert len(eth) == 8  # four ConnectX-8 ports a plane
    for port in eth.values():
        (address,) = port["addresses"]
        subnet = "192.168.0.0/20" if address.startswith("192.168.0.") else "192.168.16.0/20"
        table = port["routing-policy"][0]["table"]
        assert port["routes"] == [{"to": subnet, "scope": "link", "table": table},
                                  {"to": "192.168.0.0/19", "type": "unreachable", "table": table}]
    sysctls = (out / "host-groups" / "gb" / "hca-setup.sh").read_text()
    assert "net.ipv4.conf.all.arp_ignore=2" in sysctls  # NICs sharing a subnet answer for their own address
    if NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have netplan.io: `make test` installs it")
        pytest.skip("netplan.io is not installed (`make test` installs it)")
    for name, body, ok in (("ok", text, True), ("broken", text.replace("scope: link", "scope: galaxy", 1), False)):
        root = tmp_path / name
        (root / "etc" / "netplan").mkdir(parents=True)
        (root / "etc" / "netplan" / "60-fabgen-rails.yaml").write_text(body)
        (root / "etc" / "netplan" / "60-fabgen-rails.yaml").chmod(0o600)
        run = subprocess.run([NETPLAN, "generate", "--root-dir", str(root)], capture_output=True, text=True,
                             timeout=60, check=False)
        assert (run.returncode == 0) == ok, run.stderr


@pytest.mark.parametrize(("platform", "extra", "where", "message"), [
    ("eos", "", "host_addressing", "the default overlay's (245900, 245003, NVIDIA's) do not fit"),
    ("eos", "      overlay: {vlan: 900, vni: 10900, vrf: GPU, l3vni: 70000}\n", "overlay.l3vni", "is above 65535"),
    ("sonic", "", "host_addressing", "fabgen's sonic target writes no EVPN"),
    ("nvue", "      overlay: {vlan: 3800, vni: 245900, vrf: GPU, l3vni: 245003}\n", "overlay.vlan", "reserved range"),
    ("nvue", "      overlay: {vlan: 900, vni: 245900, vrf: GPU, l3vni: 245900}\n", "overlay.l3vni", "layer-2 VNI"),
    ("nvue", "      overlay: {vlan: 900, vni: 245900, vrf: mgmt, l3vni: 245003}\n", "overlay.vrf", "switch's own"),
    ("nvue", "      overlay: {vlan: 900, vni: 245900, vrf: vlan900, l3vni: 245003}\n", "overlay.vrf", "named like"),
])
def test_what_the_overlay_cannot_be_is_refused_at_its_key(platform: str, extra: str, where: str, message: str,
                                                          tmp_path: Path) -> None:
    inv = _inventory(tmp_path, platform=platform, extra=extra)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert f"fabrics[0].ethernet.{where}" in result.output and message in result.output
    assert f"{inv}:" in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_overlay_without_evpn_and_evpn_off_the_gpu_fabric_are_refused(tmp_path: Path) -> None:
    inv = _inventory(tmp_path / "a", extra="      overlay: {vlan: 901, vni: 245901, vrf: GPU, l3vni: 245003}\n")
    inv.write_text(inv.read_text().replace("host_addressing: evpn", "host_addressing: p2p"))
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(tmp_path / "a" / "out")])
    assert result.exit_code == 2 and "fabrics[0].ethernet.overlay" in result.output and "remove it" in result.output
    inv = _inventory(tmp_path / "b")
    inv.write_text(inv.read_text().replace("    planes: 2\n", "    role: storage\n"))
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(tmp_path / "b" / "out")])
    assert result.exit_code == 2 and "ethernet.host_addressing" in result.output and "role compute" in result.output
    # a hosts pool whose plane part cannot hold the plane's NICs and leaves
    inv = _inventory(tmp_path / "c")
    inv.write_text(inv.read_text().replace("192.168.0.0/19", "192.168.0.0/26"))
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(tmp_path / "c" / "out")])
    assert result.exit_code == 2 and "pools.hosts" in result.output and "Traceback" not in result.output
    # a loopbacks pool whose plane part holds the switches but not the leaves' VRF GPU loopbacks too
    # (a /29 a plane: 6 switches fit, 6 + 4 VRF loopbacks with the network and broadcast do not)
    inv = _inventory(tmp_path / "e")
    inv.write_text(inv.read_text().replace("{hosts: 192.168.0.0/19}",
                                           "{hosts: 192.168.0.0/19, loopbacks: 10.255.0.0/28}"))
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(tmp_path / "e" / "out")])
    assert result.exit_code == 2 and "pools.loopbacks" in result.output, result.output
    assert "4 VRF loopbacks" in result.output and "Traceback" not in result.output


def test_emulate_reads_the_overlay_and_refuses_what_it_does_not_do_before_any_namespace(tmp_path: Path) -> None:
    """`fabgen emulate` emulates the overlay in FRR (emulate/overlay.py; tests/test_emulate.py runs it
    in a VM): the render is read whole before any lab, so a `--fail` (the overlay's lab takes a leaf
    of each plane down by itself), a `--fabric` naming nothing of the render, or both planes beyond
    `--max-routers` (the overlay's lab is not sampled) is refused at once, exit 2, naming the
    overlay's planes."""
    out = _render(tmp_path)
    result = CliRunner().invoke(app, ["emulate", str(out), "--fail", "gpu-plane1-su01-leaf1"])
    assert result.exit_code == 2 and "--fail applies to routed fabrics" in result.output, result.output
    result = CliRunner().invoke(app, ["emulate", str(out), "--fabric", "gpu-plane3"])
    assert result.exit_code == 2 and "gpu-plane3" in result.output and "gpu-plane2" in result.output, result.output
    # the overlay's lab is not sampled: beyond the router budget, one plane at a time
    result = CliRunner().invoke(app, ["emulate", str(out), "--max-routers", "8"])
    assert result.exit_code == 2 and "--fabric gpu-plane1" in result.output, result.output


def test_a_one_switch_fabric_has_the_overlay_without_evpn_sessions(tmp_path: Path) -> None:
    """One SN5600 (tiers: 1) holds a plane's every GPU port: the VLAN, SVI and VRF as on any leaf,
    no EVPN peer and so no OVERLAY group nor an empty neighbor list (the `nv set` script would
    carry a bare `... bgp neighbor` line, which NVUE refuses)."""
    inv = _inventory(tmp_path, count=8)  # eight DGX B200, 64 GPU ports on one switch
    inv.write_text(inv.read_text().replace("gb300-nvl72", "dgx-b200")
                   .replace("    scalable_unit: 36\n", "    topology: fat-tree\n    tiers: 1\n")
                   .replace("    topology: rail-optimized\n", "").replace("    planes: 2\n", ""))
    out = tmp_path / "out"
    render_to(inv, out)
    (path,) = sorted((out / "gpu" / "switches").glob("*.nvue.yaml"))
    tree = yaml.safe_load(path.read_text())[1]["set"]
    assert nvue_model.problems("5.16", tree) == []
    assert tree["interface"]["vlan900"]["vrf"] == "GPU"
    bgp = tree["vrf"]["default"]["router"]["bgp"]
    assert "neighbor" not in bgp and "peer-group" not in bgp
    script = path.with_name(path.name.replace(".yaml", ".sh")).read_text()
    assert not any(line.rstrip().endswith(" bgp neighbor") for line in script.splitlines())


def test_the_lab_leaves_the_overlay_out_and_says_so(tmp_path: Path) -> None:
    """`fabgen lab` builds routed fabrics only: a render whose one Ethernet fabric is the GPU
    overlay is refused in one line naming it (era-2-4-5-800: overlay planes, north-south, OOB)."""
    from fabgen.emulate.read import BadInput
    from fabgen.lab.run import lab

    out = _render(tmp_path)
    with pytest.raises(BadInput) as err:
        lab(out)
    assert "fabric gpu left out: the GPU EVPN overlay (host_addressing evpn) is not in the lab yet" in str(err.value)


VTYSH = shutil.which("vtysh") or ("/usr/bin/vtysh" if os.path.exists("/usr/bin/vtysh") else None)


@pytest.mark.skipif(VTYSH is None and not IN_CI, reason="needs FRR's vtysh (`make test` installs FRR)")
def test_emulate_writes_nvidias_bgp_lines_for_frr_and_frr_takes_them(tmp_path: Path) -> None:
    """The overlay's emulation reads NVIDIA's BGP details from the rendered NVUE files (never fabgen's
    internals) and writes them as FRR's: the weighted-ECMP route-map (`set extcommunity bandwidth
    num-multipaths`, sent out on the leaf's underlay group), `bgp bestpath as-path multipath-relax`,
    VRF GPU's router-id, and the VRF's loopback on its device. FRR's own parser (`vtysh --dryrun`)
    takes each switch's frr.conf and refuses one whose route-map sets a bandwidth FRR does not have."""
    from fabgen.emulate import evpn
    from fabgen.emulate.inputs import table
    from fabgen.emulate.overlay import read
    from fabgen.emulate.read import overlay_of
    from fabgen.rendered.read import read_render

    assert VTYSH is not None
    out = _render(tmp_path)
    files = read_render(out)
    ((name, planes),) = overlay_of(files, None)
    plan = read(files, name, planes, table)
    leaf, spine = plan.switches["gpu-plane1-su01-leaf1"], plan.switches["gpu-plane1-spine01"]
    vrf_lo = {r["device"]: r["address"] for r in _addresses(out) if r["interface"] == "GPU"}
    assert leaf.vrf_loopbacks == {"GPU": vrf_lo["gpu-plane1-su01-leaf1"]}
    assert leaf.vrf_router_ids == {"GPU": leaf.router_id} and leaf.vrf_evpn == {"GPU"}
    assert f"addr add {vrf_lo['gpu-plane1-su01-leaf1']} dev GPU" in evpn.leaf_commands(leaf)[0]
    conf = evpn.frr_conf(leaf)
    for line in ("route-map WEIGHTED_ECMP permit 10\n set extcommunity bandwidth num-multipaths\n",
                 " bgp bestpath as-path multipath-relax\n", "  neighbor SPINES route-map WEIGHTED_ECMP out\n",
                 f"router bgp {leaf.asn} vrf GPU\n bgp router-id {leaf.router_id}\n"):
        assert line in conf, line
    spine_conf = evpn.frr_conf(spine)
    assert "multipath-relax" in spine_conf and "route-map" not in spine_conf  # NVIDIA's spines send none
    for k, text in enumerate((conf, spine_conf, conf.replace("num-multipaths", "fastest"))):
        path = tmp_path / f"frr{k}.conf"
        path.write_text(text)
        run = subprocess.run([VTYSH, "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60)
        assert (run.returncode == 0) == (k < 2), (k, run.stdout[-500:], run.stderr[-500:])


def _northsouth(tmp: Path, count: int, release: str = "5.16", extra: str = "") -> Path:
    """inventories/gb300-northsouth.yaml with NVIDIA's VRF loopbacks and aspath-ignore on its
    north-south fabric, `count` trays, on `release`."""
    inventories = Path(__file__).resolve().parents[1] / "inventories"
    text = (inventories / "gb300-northsouth.yaml").read_text()
    key = "      asn: {leaf: 4200020000, spine: 4200002000, core: 4200001000}\n"
    assert key in text and "count: 72 " in text
    text = text.replace(key, key + "      northsouth: {vrf_loopbacks: true}\n      multipath_aspath_ignore: true\n"
                        + extra).replace("count: 72 ", f"count: {count} ")
    text = text.replace("    switch_model: sn5600\n    node_groups: [gb, store]\n",
                        f'    switch_model: sn5600\n    platform_version: "{release}"\n    node_groups: [gb, store]\n')
    tmp.mkdir(parents=True, exist_ok=True)
    shutil.copy(inventories / "gb300-cluster-rdma-links.txt", tmp)
    (tmp / "inventory.yaml").write_text(text)
    return tmp / "inventory.yaml"


@pytest.mark.parametrize("release", RELEASES)
def test_northsouth_tenant_vrfs_take_nvidias_loopbacks_and_the_object_model_takes_them(release: str,
                                                                                      tmp_path: Path) -> None:
    """northsouth.vrf_loopbacks: each leaf gives STORAGE and INBAND a /32 of their own from the
    loopbacks pool, as their router-id, with l2vpn-evpn in the VRF (NVIDIA's csl-01 at 993eed6,
    core-01 at 2f46cb2), and multipath aspath-ignore; NVIDIA's object model takes every switch."""
    new = release >= "5.15"
    on = {"state": "enabled"} if new else {"enable": "on"}
    out = tmp_path / "out"
    render_to(_northsouth(tmp_path, 36, release), out)
    rows = list(csv.DictReader((out / "northsouth" / "addresses.csv").open()))
    vrf_lo = {(r["device"], r["interface"]): r["address"] for r in rows if r["interface"] in ("STORAGE", "INBAND")}
    leaves = sorted((out / "northsouth" / "switches").glob("*leaf*.nvue.yaml"))
    assert leaves and len(vrf_lo) == 2 * len(leaves) == len(set(vrf_lo.values()))
    for path in sorted((out / "northsouth" / "switches").glob("*.nvue.yaml")):
        header, body = yaml.safe_load(path.read_text())
        tree, name = body["set"], path.name[:-len(".nvue.yaml")]
        assert nvue_model.problems(release, tree) == [], name
        assert tree["vrf"]["default"]["router"]["bgp"]["path-selection"] == {
            "multipath": {"aspath-ignore": "enabled" if new else "on"}}
        if "leaf" not in name:
            continue
        for vrf in ("STORAGE", "INBAND"):
            v = tree["vrf"][vrf]
            (lo,) = v["loopback"]["ip"]["address"]
            assert lo == vrf_lo[name, vrf] and v["router"]["bgp"]["router-id"] == lo[:-3]
            assert v["router"]["bgp"]["address-family"]["l2vpn-evpn"] == on
        assert "policy" not in tree["router"]  # the weighted-ECMP route-map is the GPU overlay's
    # the object model refuses a VRF loopback under the interfaces' `ipv4` (a VRF's takes `ip` on every release)
    tree = yaml.safe_load(leaves[0].read_text())[1]["set"]
    tree["vrf"]["STORAGE"]["loopback"] = {"ipv4": tree["vrf"]["STORAGE"]["loopback"]["ip"]}
    assert any("loopback.ipv4" in p for p in nvue_model.problems(release, tree))


def test_northsouth_vrf_loopbacks_grow_by_addition_and_bad_keys_are_refused(tmp_path: Path) -> None:
    """Two racks, then four (more leaf pairs): every address of the smaller render's addresses.csv,
    the VRF loopbacks included, is in the larger one where it was. The keys are refused, located,
    where fabgen does not write them."""
    small, big = tmp_path / "a" / "out", tmp_path / "b" / "out"
    render_to(_northsouth(tmp_path / "a", 36), small)
    render_to(_northsouth(tmp_path / "b", 72), big)
    rows = list(csv.DictReader((small / "northsouth" / "addresses.csv").open()))
    grown = {(r["device"], r["interface"]): r["address"]
             for r in csv.DictReader((big / "northsouth" / "addresses.csv").open())}
    assert any(r["interface"] == "INBAND" for r in rows)
    for r in rows:
        assert grown[r["device"], r["interface"]] == r["address"], r
    assert len(grown) > len(rows)
    # refused, located: vrf_loopbacks on a compute fabric, aspath-ignore on EOS
    inv = _inventory(tmp_path / "c", extra="      northsouth: {vrf_loopbacks: true}\n")
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(tmp_path / "c" / "out")])
    assert result.exit_code == 2 and "fabrics[0].ethernet.northsouth.vrf_loopbacks" in result.output
    assert "role is compute" in result.output and "Traceback" not in result.output
    inv = _inventory(tmp_path / "d", platform="eos", extra="      multipath_aspath_ignore: true\n"
                     "      overlay: {vlan: 900, vni: 10900, vrf: GPU, l3vni: 10003}\n")
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(tmp_path / "d" / "out")])
    assert result.exit_code == 2 and "fabrics[0].ethernet.multipath_aspath_ignore" in result.output, result.output
    assert f"{inv}:" in result.output and not (tmp_path / "d" / "out").exists()
