"""The management plane: every switch config, on every platform, carries what keeps the switch
reachable after a full replace (its out-of-band port with the address Ansible connects to, the
management VRF and its default route, the services and, where a replace removes them, the
accounts), read back from the rendered files and compared with the Ansible inventory."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path

import pytest
import yaml
from readback import nvue_ip, read_nvue

from fabgen.errors import InventoryError
from fabgen.pipeline import render_to

MANAGEMENT = """    management:
      prefix: 10.77.0.0/25
      gateway: 10.77.0.1
      ntp: [10.0.0.1]
      dns: [10.0.0.2, 10.0.0.3]
      syslog: [10.0.0.4]
      domain: oob.example
      users:
        - {{name: ops, password_hash: {{env: OPS_HASH}}}}
{extra}"""

INV = """version: 1
cluster: m
node_groups:
  - {{name: n, model: dgx-h100, count: {count}}}
fabrics:
  - name: f
    kind: {kind}
    platform: {platform}
    topology: {topology}
    switch_model: {model}
    node_groups: [n]
{management}"""

SHAPES = {
    "eos-subnet-3tier": ("roce", "eos", "arista-7060x5", "rail-optimized", 32,
                         "    tiers: 3\n    ethernet: {host_addressing: leaf-subnet}\n"),
    "eos-fat-tree": ("roce", "eos", "arista-7060x5", "fat-tree", 24, ""),
    "sonic-rail": ("roce", "sonic", "sn5600-sonic", "rail-optimized", 40, ""),
    "nvue-5.16": ("spectrum-x", "nvue", "sn5600", "rail-optimized", 24, '    platform_version: "5.16"\n'),
}


def ansible_hosts(out: Path) -> dict[str, str]:
    inv = yaml.safe_load((out / "ansible" / "inventory.yml").read_text())
    hosts = {}
    for group in inv["all"]["children"].values():
        for name, hv in (group.get("hosts") or {}).items():
            if hv and "ansible_host" in hv:
                hosts[name] = hv["ansible_host"]
    return hosts


def eos_plane(text: str) -> dict:
    mgmt = re.search(r"(?m)^interface Management1\n   description .*\n   no shutdown\n   vrf (\S+)\n"
                     r"   ip address (\S+)/(\d+)\n", text)
    assert mgmt, "Management1 with its VRF and address"
    vrf = mgmt.group(1)
    route = re.search(rf"(?m)^ip route vrf {vrf} 0\.0\.0\.0/0 (\S+)$", text)
    return {"vrf": vrf, "address": mgmt.group(2), "len": int(mgmt.group(3)), "gateway": route and route.group(1),
            "vrf_defined": f"\nvrf instance {vrf}\n" in text,
            "ssh": re.search(rf"(?m)^management ssh\n   vrf {vrf}\n      no shutdown$", text) is not None,
            "ntp": re.findall(rf"(?m)^ntp server vrf {vrf} (\S+)", text),
            "dns": re.findall(rf"(?m)^ip name-server vrf {vrf} (\S+)$", text),
            "syslog": re.findall(rf"(?m)^logging vrf {vrf} host (\S+)$", text),
            "users": re.findall(r"(?m)^username (\S+) privilege 15 role network-admin secret sha512 \S", text)}


def sonic_plane(db: dict) -> dict:
    (key, row), = db["MGMT_INTERFACE"].items()
    port, _, cidr = key.partition("|")
    iface = ipaddress.ip_interface(cidr)
    assert port == "eth0" and db["MGMT_PORT"]["eth0"]["admin_status"] == "up"
    return {"vrf": "mgmt" if db["MGMT_VRF_CONFIG"]["vrf_global"]["mgmtVrfEnabled"] == "true" else None,
            "address": str(iface.ip), "len": iface.network.prefixlen, "gateway": row["gwaddr"],
            # the management VRF is the one MGMT_VRF_CONFIG turns on; sshd follows it by itself and accounts
            # live outside config_db.json (config reload leaves them): neither is in the file (None)
            "vrf_defined": db["MGMT_VRF_CONFIG"]["vrf_global"]["mgmtVrfEnabled"] == "true", "ssh": None,
            "ntp": sorted(db.get("NTP_SERVER", {})), "dns": sorted(db.get("DNS_NAMESERVER", {})),
            "syslog": sorted(k for k, v in db.get("SYSLOG_SERVER", {}).items() if v.get("vrf") == "mgmt"),
            "users": None}


def nvue_plane(tree: dict) -> dict:
    eth0 = tree["interface"]["eth0"]
    ip = nvue_ip(eth0)
    (cidr,) = ip["address"]
    (gateway,) = ip["gateway"]
    iface = ipaddress.ip_interface(cidr)
    system = tree["system"]
    ntp = system.get("ntp", {}).get("server") or tree.get("service", {}).get("ntp", {}).get("mgmt", {}).get("server")
    vrf = eth0.get("vrf") or ip.get("vrf")
    # Cumulus Linux has its management VRF `mgmt` built in, and sshd serves it by default: eth0 in it is
    # what the file must say; SSH is not in the file (None)
    return {"vrf": vrf, "address": str(iface.ip), "len": iface.network.prefixlen,
            "gateway": gateway, "vrf_defined": vrf == "mgmt", "ssh": None, "ntp": sorted(ntp or {}),
            "dns": sorted(system.get("dns", {}).get("server", {})),
            "syslog": sorted(system.get("syslog", {}).get("server", {})),
            "users": sorted(u for u, v in system.get("aaa", {}).get("user", {}).items() if v["role"] == "system-admin")}


def planes(out: Path) -> dict[str, dict]:
    sw = out / "f" / "switches"
    found = {p.stem: eos_plane(p.read_text()) for p in sw.glob("*.cfg")}
    found |= {p.parent.name: sonic_plane(json.loads(p.read_text())) for p in sw.glob("*/config_db.json")}
    found |= {p.name[:-len(".nvue.yaml")]: nvue_plane(read_nvue(p)[1]) for p in sw.glob("*.nvue.yaml")}
    return found


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_switch_keeps_its_management_plane(shape: str, tmp_path: Path) -> None:
    kind, platform, model, topology, count, extra = SHAPES[shape]
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.format(kind=kind, platform=platform, model=model, topology=topology, count=count,
                              management=extra + MANAGEMENT.format(extra="")))
    out = tmp_path / "out"
    render_to(inv, out)
    hosts = ansible_hosts(out)
    found = planes(out)
    assert found and set(found) <= set(hosts)
    for name, p in found.items():
        assert p["address"] == hosts[name], f"{name}: the address Ansible connects to"
        assert p["len"] == 25 and p["gateway"] == "10.77.0.1" and p["vrf_defined"]
        assert p["ssh"] is (True if platform == "eos" else None), f"{name}: SSH in the VRF (EOS writes it)"
        assert p["vrf"] == ("MGMT" if platform == "eos" else "mgmt")
        assert p["ntp"] == ["10.0.0.1"] and p["dns"] == ["10.0.0.2", "10.0.0.3"] and p["syslog"] == ["10.0.0.4"]
        assert p["users"] == (None if platform == "sonic" else ["ops"])
    addresses = [p["address"] for p in found.values()]
    assert len(set(addresses)) == len(addresses) and "10.77.0.1" not in addresses
    if platform == "eos":
        for cfg in (out / "f" / "switches").glob("*.cfg"):
            text = cfg.read_text()
            assert re.search(r"(?m)^router bgp \d+\n   router-id \S+\n   update wait-install\n"
                             r"   no bgp default ipv4-unicast$", text), "BGP waits for hardware install"
            access = re.findall(r"(?m)^   switchport access vlan \d+\n((?:   .*\n)*?)   service-profile", text)
            for block in access:  # leaf-subnet host ports do not wait for spanning tree
                assert "spanning-tree portfast\n" in block and "spanning-tree bpduguard enable\n" in block
            if "leaf-subnet" in extra and "-leaf" in cfg.name:
                assert access


def test_a_bare_prefix_keeps_its_addresses_and_warns_about_the_gateway(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.format(kind="roce", platform="eos", model="arista-7060x5", topology="fat-tree", count=16,
                              management="    management: 192.168.5.0/28\n"))
    result = render_to(inv, tmp_path / "out")
    warnings = result.contexts["f"].summary.warnings
    assert any("no gateway given: the management default route uses 192.168.5.14" in w for w in warnings)
    assert any("declare management.users" in w for w in warnings)
    found = planes(tmp_path / "out")
    first = min(found.values(), key=lambda p: ipaddress.ip_address(p["address"]))
    assert (first["address"], first["gateway"]) == ("192.168.5.1", "192.168.5.14")


@pytest.mark.parametrize("management,message", [
    ("{prefix: 192.168.5.0/24, gateway: 192.168.6.1}",
     "gateway 192.168.6.1 is outside the management prefix 192.168.5.0/24"),
    ("{prefix: 192.168.5.0/24, gateway: 192.168.5.255}",
     "gateway 192.168.5.255 is the broadcast address of 192.168.5.0/24"),
    ("{prefix: 192.168.5.0/24, ntp: [ntp.example]}",
     "NTP server 'ntp.example' is a name: the switch resolves it with management.dns, which is empty"),
    ("{prefix: 192.168.5.0/24, dns: [192.168.6.1], ntp: [10.0.0.300]}",
     "'10.0.0.300' is not an IP address (an NTP server is an address or a DNS name)"),
    ("{prefix: 192.168.5.0/24, syslog: [log.example]}", "'log.example' is not an IP address"),
    ("{prefix: 192.168.5.0/29}",
     "192.168.5.0/29 has 6 host addresses; these 7 switches and their gateway need one each"),
    ("{prefix: 192.168.5.0/24, users: [{name: ops, password_hash: '$6$x'}]}", "secrets are never written"),
    ("{prefix: 192.168.5.0/24, users: [{name: Ops, password_hash: {env: X}}]}", "'Ops' is not a user name"),
    ("{prefix: 192.168.5.0/24, vrf: MGMT2, users: [{name: a, password_hash: {env: X}}, "
     "{name: a, password_hash: {env: Y}}]}", "user 'a' is declared twice"),
])
def test_management_values_are_checked_where_they_are_written(management: str, message: str,
                                                              tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.format(kind="roce", platform="eos", model="arista-7060x5", topology="fat-tree", count=16,
                              management=f"    management: {management}\n"))
    with pytest.raises(InventoryError) as err:
        render_to(inv, tmp_path / "out")
    assert message in str(err.value)
    assert ":12:" in str(err.value), "located on the management line"
    assert not (tmp_path / "out").exists()
