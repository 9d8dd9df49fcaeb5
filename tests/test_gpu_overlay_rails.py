"""The GPU overlay with a VLAN a rail (`ethernet.overlay.vlans: rail`, issue 56 item 1).

NVIDIA's later output (NVIDIA/enterprise-ras, net-configurator/output/, commit 993eed6) writes the GPU
overlay with `gpu_vlan_mode = per_rail_per_plane`: 2-8-9-400's core-01 carries VLANs 901-908 (VNIs
4901-4908), each with an SVI in VRF GPU (`vlan901 ipv4 address 192.168.1.2/24`, `vrr address
192.168.1.1/24`) and the odd rails' GPU ports as access ports, the one VRF's layer-3 VNI 5003;
2-8-9-800's gsl-plane2-01 its plane's VLANs 921-928 and the ports of its rails 1, 3, 5 and 7. fabgen's
`vlans: rail` writes rail r's VLAN `vlan` + r with VNI `vni` + r on every leaf of the plane, the
plane's part of the hosts pool cut in equal subnets, one a rail. These tests render it and hold it
against NVIDIA's object model, `netplan generate`, the address plan across growth and the located
refusals; each check is shown refusing a broken file.
"""

from __future__ import annotations

import csv
import ipaddress
import subprocess
from pathlib import Path
from typing import Any

import nvue_model
import pytest
import yaml
from test_gpu_overlay import NETPLAN, RELEASES, _inventory
from typer.testing import CliRunner

from conftest import IN_CI
from fabgen.cli import app
from fabgen.pipeline import render_to

RAIL = "      overlay: {vlan: 900, vni: 245900, vrf: GPU, l3vni: 245003, vlans: rail}\n"


def _render(tmp: Path, count: int = 18, release: str | None = None, extra: str = RAIL) -> Path:
    out = tmp / "out"
    render_to(_inventory(tmp, count=count, release=release, extra=extra), out)
    return out


def _addresses(out: Path, plane: int) -> list[dict[str, str]]:
    with (out / f"gpu-plane{plane}" / "addresses.csv").open() as fh:
        return list(csv.DictReader(fh))


def _leaves(out: Path, plane: int) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    return {p.name[:-len(".nvue.yaml")]: tuple(yaml.safe_load(p.read_text()))  # type: ignore[misc]
            for p in sorted((out / f"gpu-plane{plane}" / "switches").glob("*leaf*.nvue.yaml"))}


@pytest.mark.parametrize("release", RELEASES)
def test_each_rail_has_its_vlan_subnet_and_gateway_and_the_object_model_takes_them(release: str,
                                                                                    tmp_path: Path) -> None:
    """Two planes of four rails (GB300: four ports a plane), a /20 a plane cut in four /22s: rail r's
    VLAN 900 + r and VNI 245900 + r on every leaf, its SVI in VRF GPU with the /22's first address as
    the anycast gateway, the one layer-3 VNI; each GPU port an access port of its rail's VLAN."""
    new = release >= "5.15"
    out = _render(tmp_path, release=release)
    for plane in (1, 2):
        block = ipaddress.ip_network(f"192.168.{16 * (plane - 1)}.0/20")
        rails = list(block.subnets(new_prefix=22))
        cabled = {(r["peer_device"], r["peer_interface"]): r["address"] for r in _addresses(out, plane)
                  if r["role"] == "node"}
        leaves = _leaves(out, plane)
        assert len(leaves) == 4
        for name, (header, body) in leaves.items():
            tree = body["set"]
            assert nvue_model.release(header["header"]) == release
            assert nvue_model.problems(release, tree) == [], name
            assert tree["bridge"]["domain"]["br_default"]["vlan"] == {
                str(900 + r): {"vni": {str(245900 + r): {}}} for r in (1, 2, 3, 4)}
            assert tree["vrf"]["GPU"]["evpn"]["vni"] == {"245003": {}}  # one VRF, one layer-3 VNI for all rails
            ports = tree["interface"]
            for r, subnet in enumerate(rails, 1):
                svi = ports[f"vlan{900 + r}"]
                ip = svi["ipv4" if new else "ip"]
                assert set(ip["vrr"]["address"]) == {f"{subnet[1]}/22"}
                (own,) = ip["address"]
                assert ipaddress.ip_interface(own).network == subnet and own != f"{subnet[1]}/22"
                assert (svi["vrf"] if new else ip["vrf"]) == "GPU"
            access = {p: v["bridge"]["domain"]["br_default"]["access"] for p, v in ports.items()
                      if "access" in (v.get("bridge") or {}).get("domain", {}).get("br_default", {})}
            assert len(access) == 18
            for port, vlan in access.items():  # the port's node address is in its VLAN's subnet
                assert ipaddress.ip_interface(cabled[name, port]).network == rails[vlan - 901], (name, port)
            assert len(set(access.values())) == 1  # rail-optimized: a leaf a rail
    # the object model refuses an SVI on a VLAN beyond 4094
    tree = _leaves(out, 1)["gpu-plane1-su01-leaf1"][1]["set"]
    tree["interface"]["vlan901"]["vlan"] = 4999
    assert nvue_model.problems(release, tree) != []


def test_rail_addresses_are_apart_and_growth_only_adds(tmp_path: Path) -> None:
    """18 trays, then 36 (the unit whole), then 72 (two units): every address of the smaller render is
    where it was in the larger one; each rail's gateway, its leaves' SVIs and its ports apart, each in
    its rail's /22."""
    small, big, two = _render(tmp_path / "a"), _render(tmp_path / "b", count=36), _render(tmp_path / "c", count=72)
    for plane in (1, 2):
        rows = _addresses(small, plane)
        gateways = [r for r in rows if r["role"] == "anycast"]
        assert [(r["interface"], r["address"]) for r in gateways] == [
            (f"vlan{900 + r}", f"192.168.{16 * (plane - 1) + 4 * (r - 1)}.1/22") for r in (1, 2, 3, 4)]
        hosts = [r["address"] for r in rows if r["role"] in ("node", "anycast")
                 or (r["role"] == "leaf" and r["interface"].startswith("vlan"))]
        assert len(hosts) == 18 * 4 + 4 + 4 * 4
        assert len(set(hosts)) == len(hosts)
        grown = {(r["device"], r["interface"], r["address"]) for r in _addresses(big, plane)}
        assert {(r["device"], r["interface"], r["address"]) for r in rows} <= grown
        assert len(grown) > len(rows)
        assert all(r["address"].endswith("/22") for r in rows if r["role"] == "node")
        # a second unit (four more leaves a plane, the spines rebuilt: their loopbacks move, as fabgen
        # warns): every address of the GPU subnets stays where it was, the new leaves' SVIs only add
        pool = ipaddress.ip_network("192.168.0.0/19")
        gpu = {(r["device"], r["interface"], r["address"]) for r in _addresses(big, plane)
               if ipaddress.ip_interface(r["address"]).ip in pool}
        units = {(r["device"], r["interface"], r["address"]) for r in _addresses(two, plane)
                 if ipaddress.ip_interface(r["address"]).ip in pool}
        assert gpu <= units and len({d for d, i, _ in units if i == "vlan901"}) == 9  # 8 leaves and the gateway


def test_a_node_netplan_routes_its_plane_via_each_rails_gateway_and_netplan_generates_it(tmp_path: Path) -> None:
    """A port's rail subnet on-link, the plane's /20 via its rail's anycast gateway (another rail of
    the plane is routed in VRF GPU), the whole pool unreachable (another plane), as leaf-subnet routes."""
    out = _render(tmp_path)
    text = (out / "hosts" / "su-01-node-01" / "netplan.yaml").read_text()
    eth = yaml.safe_load(text)["network"]["ethernets"]
    assert len(eth) == 8
    seen = set()
    for port in eth.values():
        (address,) = port["addresses"]
        net = ipaddress.ip_interface(address).network
        block = "192.168.0.0/20" if net.subnet_of(ipaddress.ip_network("192.168.0.0/20")) else "192.168.16.0/20"
        table, gateway = port["routing-policy"][0]["table"], str(net[1])
        assert port["routes"][:3] == [{"to": str(net), "scope": "link", "table": table},
                                      {"to": block, "via": gateway, "table": table},
                                      {"to": "192.168.0.0/19", "type": "unreachable", "table": table}]
        seen.add(net)
    assert len(seen) == 8  # a rail's subnet a port
    if NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have netplan.io: `make test` installs it")
        pytest.skip("netplan.io is not installed (`make test` installs it)")
    for name, body, ok in (("ok", text, True), ("broken", text.replace("via: ", "via: rail", 1), False)):
        root = tmp_path / name
        (root / "etc" / "netplan").mkdir(parents=True)
        (root / "etc" / "netplan" / "60-fabgen-rails.yaml").write_text(body)
        (root / "etc" / "netplan" / "60-fabgen-rails.yaml").chmod(0o600)
        run = subprocess.run([NETPLAN, "generate", "--root-dir", str(root)], capture_output=True, text=True,
                             timeout=60, check=False)
        assert (run.returncode == 0) == ok, run.stderr


def test_the_default_stays_one_vlan_a_plane(tmp_path: Path) -> None:
    """`vlans` left out is `plane`: one VLAN, 900, on every leaf (today's renders unchanged)."""
    out = _render(tmp_path, extra="")
    for _, (_, body) in _leaves(out, 1).items():
        assert body["set"]["bridge"]["domain"]["br_default"]["vlan"] == {"900": {"vni": {"245900": {}}}}


@pytest.mark.parametrize(("platform", "extra", "where", "message"), [
    ("eos", "      overlay: {vlan: 900, vni: 65533, vrf: GPU, l3vni: 10003, vlans: rail}\n", "overlay.vni",
     "above 65535 (EOS's"),
    ("nvue", "      overlay: {vlan: 900, vni: 245900, vrf: GPU, l3vni: 245003, vlans: lane}\n", "overlay.vlans",
     "is not one of plane, rail"),
    ("nvue", "      overlay: {vlan: 4092, vni: 245900, vrf: GPU, l3vni: 245003, vlans: rail}\n", "overlay.vlan",
     "above 4094"),
    ("nvue", "      overlay: {vlan: 3723, vni: 245900, vrf: GPU, l3vni: 245003, vlans: rail}\n", "overlay.vlan",
     "reserved range"),
    ("nvue", "      overlay: {vlan: 900, vni: 16777212, vrf: GPU, l3vni: 245003, vlans: rail}\n", "overlay.vni",
     "above 16777214"),
    ("nvue", "      overlay: {vlan: 900, vni: 245900, vrf: GPU, l3vni: 245902, vlans: rail}\n", "overlay.l3vni",
     "is a rail's"),
    ("nvue", "      overlay: {vlan: 900, vni: 245900, vrf: GPU, l3vni: 245003, vlans: rail, l3vni_vlan: 902}\n",
     "overlay.l3vni_vlan", "is a rail's (VLANs 901-904"),
    # a /26 a plane cut four ways: /28s of 16 addresses, where a rail needs 18 ports, 4 leaves and 3 more
    ("nvue", RAIL.replace("overlay", "pools: {hosts: 192.168.0.0/25}\n      overlay"), "pools.hosts",
     "a subnet for each of 4 rails"),
])
def test_what_a_vlan_a_rail_cannot_be_is_refused_at_its_key(platform: str, extra: str, where: str, message: str,
                                                            tmp_path: Path) -> None:
    inv = _inventory(tmp_path, platform=platform, extra=extra)
    if "pools: {hosts: 192.168.0.0/25}" in extra:
        inv.write_text(inv.read_text().replace("      pools: {hosts: 192.168.0.0/19}\n", ""))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert f"fabrics[0].ethernet.{where}" in result.output and message in result.output, result.output
    assert f"{inv}:" in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_the_emulation_reads_each_rails_vlan_from_the_render_and_refuses_a_port_off_its_subnet(
        tmp_path: Path) -> None:
    """emulate/overlay.py reads the rendered files only: each kept port with its leaf port's access
    VLAN (its rail's), its gateway that VLAN's anycast one, every rail's VLAN a bridge VLAN and VNI
    on the leaf (`bridge` lines); a leaf whose port is put in another rail's VLAN than its node's
    address is refused before any namespace."""
    from fabgen.emulate import evpn
    from fabgen.emulate.inputs import table
    from fabgen.emulate.model import TranslateError
    from fabgen.emulate.overlay import _pairs, read
    from fabgen.emulate.read import overlay_of
    from fabgen.rendered.read import read_render

    out = _render(tmp_path)
    files = read_render(out)
    ((name, planes),) = overlay_of(files, None)
    plan = read(files, name, planes, table)
    cabled = {(r["device"], r["interface"]): r["address"] for p in (1, 2) for r in _addresses(out, p)}
    for nic in plan.nics:  # a leaf a rail (rail-optimized): leaf k's ports in VLAN 900 + k
        assert nic.vlan == 900 + int(nic.leaf[-1])
        assert cabled[nic.node, nic.port].split("/")[0] == nic.address
    gateways = {(nic.node, nic.port): nic for nic in plan.nics}
    for node, pings in _pairs(plan, set()).items():
        for port, target in pings:
            if target.startswith("gateway:"):
                nic = gateways[node, port]
                rail = ipaddress.ip_network(f"{nic.address}/22", strict=False)
                assert target == f"gateway:{rail[1]}"
    leaf = plan.switches["gpu-plane1-su01-leaf1"]
    assert sorted(leaf.tenants) == [901, 902, 903, 904] and leaf.l3vnis == {"GPU": 245003}
    bridge = evpn.leaf_commands(leaf)[1]
    assert {f"vlan add dev vni{245900 + r} vid {900 + r} pvid untagged" for r in (1, 2, 3, 4)} <= set(bridge)
    rel = "gpu-plane1/switches/gpu-plane1-su01-leaf1.nvue.yaml"
    text = files[rel].decode()
    assert "access: 901" in text
    broken = {**files, rel: text.replace("access: 901", "access: 902", 1).encode()}
    with pytest.raises(TranslateError, match="is in VLAN 902"):
        read(broken, name, planes, table)


def test_the_2_8_9_400_example_with_a_vlan_a_rail_writes_nvidias_993eed6_vlans_and_vnis(tmp_path: Path) -> None:
    """inventories/era-2-8-9-400.yaml (one SN5600 for the GPU ports, NVIDIA's `overlay` numbers) with
    `vlans: rail`: NVIDIA's core-01 at 993eed6 (2-8-9-400/default/configs/core-01-config.sh) writes
    `bridge domain br_default vlan 901 vni 4901` to `vlan 908 vni 4908`, each `interface vlan90<r>`
    in `vrf GPU` with a VRR gateway, `vrf GPU evpn vni 5003`; fabgen's render has the same eight
    pairs, the object model takes it, every GPU port is in its rail's VLAN."""
    nvidia = {str(900 + r): {"vni": {str(4900 + r): {}}} for r in range(1, 9)}  # core-01-config.sh at 993eed6
    text = (Path(__file__).resolve().parents[1] / "inventories" / "era-2-8-9-400.yaml").read_text()
    key = "overlay: {vlan: 900, vni: 4900, vrf: GPU, l3vni: 5003,"
    assert key in text
    (tmp_path / "inventory.yaml").write_text(text.replace(key, key + " vlans: rail,"))
    render_to(tmp_path / "inventory.yaml", tmp_path / "out")
    (path,) = (tmp_path / "out" / "gpu" / "switches").glob("*.nvue.yaml")
    header, body = yaml.safe_load(path.read_text())
    tree = body["set"]
    assert tree["bridge"]["domain"]["br_default"]["vlan"] == nvidia
    assert tree["vrf"]["GPU"]["evpn"]["vni"] == {"5003": {}}
    assert {tree["interface"][f"vlan{v}"]["vrf"] for v in nvidia} == {"GPU"}
    assert nvue_model.problems(nvue_model.release(header["header"]), tree) == []
    access = [v["bridge"]["domain"]["br_default"]["access"] for v in tree["interface"].values()
              if "access" in (v.get("bridge") or {}).get("domain", {}).get("br_default", {})]
    assert len(access) == 96 and {a: access.count(a) for a in set(access)} == {900 + r: 12 for r in range(1, 9)}


def test_the_2_8_9_800_pair_with_a_vlan_a_rail_puts_each_port_in_nvidias_993eed6_vlan(tmp_path: Path) -> None:
    """inventories/era-2-8-9-800.yaml (a plane's rails on an SN5600 pair) with `vlans: rail`. NVIDIA's
    gsl-plane2-01 at 993eed6 (2-8-9-800/default/configs/gsl-plane2-01-config.sh) carries its plane's
    eight VLANs (921-928) and on node n's `swp<2n-1>s0`, `swp<2n-1>s1`, `swp<2n>s0`, `swp<2n>s1` the
    access VLANs of rails 1, 3, 5 and 7 (921, 923, 925, 927); its mate the even rails. fabgen's
    leaf01 and leaf02 of each plane: every rail's VLAN on both, each node's ports in the same rails'
    VLANs (fabgen numbers every plane's rails from `vlan`: 901-908), the object model taking both."""
    text = (Path(__file__).resolve().parents[1] / "inventories" / "era-2-8-9-800.yaml").read_text()
    key = "      overlay: {vlan: 900, vni: 289900, vrf: GPU, l3vni: 289003,"
    assert text.count(key) == 1
    (tmp_path / "inventory.yaml").write_text(text.replace(key, key + " vlans: rail,"))
    render_to(tmp_path / "inventory.yaml", tmp_path / "out")
    for plane in (1, 2):
        leaves = _leaves(tmp_path / "out", plane)
        assert len(leaves) == 2
        for k, (header, body) in enumerate(leaves.values()):
            tree = body["set"]
            assert nvue_model.problems(nvue_model.release(header["header"]), tree) == []
            assert sorted(tree["bridge"]["domain"]["br_default"]["vlan"]) == [str(900 + r) for r in range(1, 9)]
            ports = tree["interface"]
            for n in range(1, 9):  # NVIDIA's rails 1, 3, 5, 7 on -01 (2, 4, 6, 8 on -02), node n's ports in turn
                for port, rail in zip((f"swp{2 * n - 1}s0", f"swp{2 * n - 1}s1", f"swp{2 * n}s0", f"swp{2 * n}s1"),
                                      (1, 3, 5, 7), strict=True):
                    assert ports[port]["bridge"]["domain"]["br_default"]["access"] == 900 + rail + k, (plane, port)
