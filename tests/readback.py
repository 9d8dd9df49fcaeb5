"""Read rendered switch configs back into one neutral shape, for consistency tests.

Parses the files fabgen wrote (EOS running-config text, SONiC config_db.json), never the
structured config, so a template or serializer bug shows up as a disagreement.

Shape per device: {"asn": int, "loopback": str, "ecmp": int,
  "ports": {name: {"ip": str|None, "prefix": int|None, "mtu": int, "description": str,
                   "lossless": bool, "no_drop": tuple, "vlan": int|None, "up": bool}},
  "svi": (ip, prefix)|None, "neighbors": {ip: asn}, "dscp_to_tc": tuple(64), "watchdog": bool}
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import yaml


def read_eos(path: Path) -> dict:  # noqa: C901 (one case a kind of config line)
    text = path.read_text()
    dev: dict = {"ports": {}, "neighbors": {}, "svi": None, "watchdog": False}
    dscp = [0] * 64
    profile_no_drop: list[int] = []
    block = None
    for line in text.splitlines():
        if not line.startswith(" "):
            block = line
            m = re.match(r"interface (Ethernet\S+)$", line)
            if m:
                cur = dev["ports"][m.group(1)] = {"ip": None, "prefix": None, "mtu": None, "description": "",
                                                  "lossless": False, "vlan": None, "up": True}
            m = re.match(r"qos map dscp ([\d ]+) to traffic-class (\d)$", line)
            if m:
                for d in m.group(1).split():
                    dscp[int(d)] = int(m.group(2))
            m = re.match(r"router bgp (\d+)$", line)
            if m:
                dev["asn"] = int(m.group(1))
            if line.startswith("priority-flow-control pause watchdog default timeout"):
                dev["watchdog"] = True
            continue
        s = line.strip()
        if block.startswith("interface Ethernet"):
            if s.startswith("ip address "):
                ip, plen = s.split()[2].split("/")
                cur["ip"], cur["prefix"] = ip, int(plen)
            elif s.startswith("mtu "):
                cur["mtu"] = int(s.split()[1])
            elif s.startswith("description "):
                cur["description"] = s.split(" ", 1)[1]
            elif s.startswith("service-profile "):
                cur["lossless"] = True
            elif s.startswith("switchport access vlan "):
                cur["vlan"] = int(s.split()[-1])
            elif s == "shutdown":
                cur["up"] = False
        elif block.startswith("interface Loopback0") and s.startswith("ip address"):
            dev["loopback"] = s.split()[2].split("/")[0]
        elif block.startswith("interface Vlan") and s.startswith("ip address"):
            ip, plen = s.split()[2].split("/")
            dev["svi"] = (ip, int(plen))
        elif block.startswith("qos profile"):
            m = re.match(r"priority-flow-control priority (\d) no-drop", s)
            if m:
                profile_no_drop.append(int(m.group(1)))
        elif block.startswith("router bgp"):
            m = re.match(r"neighbor (\d+\.\d+\.\d+\.\d+) remote-as (\d+)$", s)
            if m:
                dev["neighbors"][m.group(1)] = int(m.group(2))
            m = re.match(r"maximum-paths (\d+) ecmp (\d+)", s)
            if m:
                dev["ecmp"] = int(m.group(1))
    for p in dev["ports"].values():
        p["no_drop"] = tuple(profile_no_drop) if p["lossless"] else ()
    dev["dscp_to_tc"] = tuple(dscp)
    return dev


def read_sonic(path: Path) -> dict:
    db = json.loads(path.read_text())
    meta = db["DEVICE_METADATA"]["localhost"]
    assert all(isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
               for t in db.values() for row in t.values() for v in row.values()), \
        "CONFIG_DB values are strings (leaf-lists: lists of strings)"
    dev: dict = {"asn": int(meta["bgp_asn"]), "ports": {}, "neighbors": {}, "svi": None,
                 "watchdog": bool(db.get("PFC_WD", {}).get("GLOBAL"))}
    dev["ecmp"] = int(db["BGP_GLOBALS_AF"]["default|ipv4_unicast"]["max_ebgp_paths"])
    assert int(db["BGP_GLOBALS"]["default"]["local_asn"]) == dev["asn"]
    for key in db["LOOPBACK_INTERFACE"]:
        if "|" in key:
            dev["loopback"] = key.split("|")[1].split("/")[0]
    qos_map = db.get("PORT_QOS_MAP", {})
    for name, port in db["PORT"].items():
        q = qos_map.get(name)
        assert name != "global"
        dev["ports"][name] = {"ip": None, "prefix": None, "mtu": int(port["mtu"]),
                              "description": port.get("description", ""), "up": port["admin_status"] == "up",
                              "lossless": q is not None,
                              "no_drop": tuple(int(x) for x in q["pfc_enable"].split(",")) if q else (),
                              "vlan": None}
    for key in db.get("INTERFACE", {}):
        if "|" in key:
            name, addr = key.split("|")
            ip, plen = addr.split("/")
            dev["ports"][name].update(ip=ip, prefix=int(plen))
    for key in db.get("VLAN_MEMBER", {}):
        vlan, name = key.split("|")
        dev["ports"][name]["vlan"] = int(vlan[4:])
    for key in db.get("VLAN_INTERFACE", {}):
        if "|" in key:
            ip, plen = key.split("|")[1].split("/")
            dev["svi"] = (ip, int(plen))
    for key, row in db.get("BGP_NEIGHBOR", {}).items():
        dev["neighbors"][key.split("|")[1]] = int(row["asn"])
    maps = db["DSCP_TO_TC_MAP"]
    used_maps = {q["dscp_to_tc_map"] for q in qos_map.values()} or set(maps)
    assert "global" not in db["PORT"]
    assert len(used_maps) == 1
    m = maps[used_maps.pop()]
    assert sorted(int(k) for k in m) == list(range(64)), "DSCP_TO_TC_MAP must cover all 64 DSCPs"
    dev["dscp_to_tc"] = tuple(int(m[str(d)]) for d in range(64))
    return dev


def read_fabric(out: Path, fabric: str) -> dict[str, dict]:
    """Every switch config of a rendered fabric, by device name."""
    sw = out / fabric / "switches"
    devices = {p.name[:-4]: read_eos(p) for p in sorted(sw.glob("*.cfg"))}
    devices.update({p.parent.name: read_sonic(p) for p in sorted(sw.glob("*/config_db.json"))})
    return devices


def read_cabling(out: Path, fabric: str) -> list[dict]:
    with open(out / fabric / "cabling.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def read_nvue(path: Path) -> tuple[dict, dict]:
    """(header, set tree) of an NVUE startup.yaml, as `nv config save` writes it."""
    doc = yaml.safe_load(Path(path).read_text())
    assert isinstance(doc, list) and [list(d) for d in doc] == [["header"], ["set"]], path
    return doc[0]["header"], doc[1]["set"]


def nvue_ip(node: dict) -> dict:
    """An interface's IPv4 settings in either NVUE dialect (`ip` before 5.15, `ipv4` after)."""
    return node.get("ipv4") or node.get("ip") or {}


def nvue_on(node: dict) -> bool:
    """`enable: on` (before 5.15) or `state: enabled` (5.15 and later)."""
    return node.get("state") == "enabled" or node.get("enable") == "on"
