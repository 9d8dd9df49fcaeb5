"""What a built fabric says about its cables: the output of the tools operators already run.

Each parser turns one tool's output into `Seen` rows, as raw as the tool gives them (names are
matched to the plan later, by names.py):

* lldpd's `lldpctl -f json` (one interface: a mapping; several: a list of one-key mappings; the
  local system's name is not in it, so a directory of evidence holds `<device>.json`, named
  after the device as the plan names it);
* Arista EOS `show lldp neighbors detail | json` (lldpNeighbors -> port -> lldpNeighborInfo);
* Cumulus Linux NVUE `nv show interface --view=lldp -o json`, and the older `net show lldp json`
  (lldpd's own JSON, as lldpctl writes it);
* SONiC `show lldp table` (text: LocalPort, RemoteDevice, RemotePortID, Capability,
  RemotePortDescr);
* infiniband-diags `ibnetdiscover` (default output): Switch and Ca blocks whose port lines name
  the far end's node description in a comment; node descriptions, not GUIDs, identify devices
  (a fabric before its GUID map is known, and ibsim, which invents its own port GUIDs).

A file of none of these shapes is an EvidenceError naming it; nothing is guessed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass


class EvidenceError(Exception):
    """Evidence that is no known tool's output: one line naming the file."""


@dataclass(frozen=True)
class Seen:
    """One neighbour seen on one local port, as the tool wrote it."""

    device: str  # the local device (the evidence file's, or the ibnetdiscover node's description)
    port: str  # the local port (a name, or an InfiniBand port number)
    peer: str  # the neighbour's system name or node description
    peer_port: str  # its port id: a name, a number, or a MAC address
    peer_port_descr: str = ""
    speed: int | None = None  # Gb/s where the tool says
    source: str = ""


def parse(text: str, where: str, device: str | None) -> list[Seen]:
    """Any supported evidence; `device` is the local device where the format does not name it."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise EvidenceError(f"{where}: not JSON ({exc})") from None
        return _json(doc, where, device)
    if re.search(r"^(Switch|Ca|Rt)\s+\d+\s+\"", text, re.M):
        return ibnetdiscover(text, where)
    if _PORTS_LINE.search(text):
        return ibnetdiscover_ports(text, where)
    if re.search(r"^\s*LocalPort\s+RemoteDevice\s+RemotePortID", text, re.M):
        return sonic_lldp_table(text, where, _need(device, where))
    raise EvidenceError(f"{where}: not the output of lldpctl -f json, EOS show lldp neighbors detail | json, "
                        "NVUE nv show interface --view=lldp -o json, SONiC show lldp table or ibnetdiscover")


def _need(device: str | None, where: str) -> str:
    if not device:
        raise EvidenceError(f"{where}: this output does not name its own device: save it as <device>.json (or "
                            ".txt), named as the plan names the device, in an evidence directory")
    return device


def _json(doc: object, where: str, device: str | None) -> list[Seen]:
    if isinstance(doc, dict) and "lldpNeighbors" in doc:
        return eos_lldp(doc, where, _need(device, where))
    if isinstance(doc, dict) and "lldp" in doc:
        return lldpctl(doc, where, _need(device, where))
    if isinstance(doc, dict) and all(isinstance(v, dict) and "lldp" in v for v in doc.values()) and doc:
        return nvue_lldp(doc, where, _need(device, where))
    raise EvidenceError(f"{where}: JSON of no supported LLDP output (lldpctl's 'lldp', EOS's 'lldpNeighbors', "
                        "NVUE's interfaces with 'lldp')")


def _items(node: object) -> list[tuple[str, dict]]:
    """lldpctl's JSON keys an object by name; with several, it writes a list of one-key objects."""
    if isinstance(node, dict):
        if "name" in node and isinstance(node["name"], str):
            return [(node["name"], node)]
        return [(k, v) for k, v in node.items() if isinstance(v, dict)]
    if isinstance(node, list):
        out = []
        for item in node:
            out += _items(item)
        return out
    return []


def _value(node: object) -> str:
    """lldpctl's values: a string, or {"value": ...} (json0 wraps every value in a list)."""
    if isinstance(node, list):
        node = node[0] if node else ""
    if isinstance(node, dict):
        node = node.get("value", "")
    return str(node) if node is not None else ""


def lldpctl(doc: dict, where: str, device: str) -> list[Seen]:
    out = []
    lldp = doc["lldp"]
    if isinstance(lldp, list):
        lldp = lldp[0] if lldp else {}
    for port, info in _items(lldp.get("interface", {}) if isinstance(lldp, dict) else {}):
        peer = _chassis_name(info.get("chassis", {}))
        p = info.get("port", {})
        if isinstance(p, list):
            p = p[0] if p else {}
        pid = _value(p.get("id", "")) if isinstance(p, dict) else ""
        descr = _value(p.get("descr", "")) if isinstance(p, dict) else ""
        out.append(Seen(device, port, peer, pid, descr, None, where))
    return out


def _chassis_name(chassis: object) -> str:
    """The neighbour's system name: json0 writes [{"name": [{"value": N}], ...}], json keys the chassis
    by its name ({N: {...}}), or, without a system name, gives its id directly."""
    if isinstance(chassis, list):
        chassis = chassis[0] if chassis else {}
    if not isinstance(chassis, dict):
        return ""
    if "name" in chassis:
        return _value(chassis["name"])
    if "id" in chassis and isinstance(chassis["id"], (dict, list)):
        return _value(chassis["id"])  # no system name: the chassis id (a MAC) stands in
    return next(iter(chassis), "")


def eos_lldp(doc: dict, where: str, device: str) -> list[Seen]:
    out = []
    for port, info in doc["lldpNeighbors"].items():
        for n in info.get("lldpNeighborInfo", []) if isinstance(info, dict) else []:
            nb = n.get("neighborInterfaceInfo", {})
            pid = nb.get("interfaceId_v2") or str(nb.get("interfaceId", "")).strip('"')
            out.append(Seen(device, port, str(n.get("systemName", "")), pid,
                            str(nb.get("interfaceDescription", "")), None, where))
    return out


def nvue_lldp(doc: dict, where: str, device: str) -> list[Seen]:
    """NVUE: interface -> lldp -> neighbor -> <system> -> {chassis: {system-name}, port: {name|description}}."""
    out = []
    for port, info in doc.items():
        neighbors = info.get("lldp", {}).get("neighbor", {}) if isinstance(info.get("lldp"), dict) else {}
        for key, n in neighbors.items():
            chassis = n.get("chassis", {}) if isinstance(n, dict) else {}
            pinfo = n.get("port", {}) if isinstance(n, dict) else {}
            name = chassis.get("system-name") or key
            pid = pinfo.get("name") or pinfo.get("id") or ""
            out.append(Seen(device, port, str(name), str(pid), str(pinfo.get("description", "")), None, where))
    return out


def sonic_lldp_table(text: str, where: str, device: str) -> list[Seen]:
    """sonic-utilities' lldpshow: a tabulate table; the columns are cut where its ruler of dashes
    says (the last, RemotePortDescr, may hold spaces)."""
    out = []
    lines = text.splitlines()
    head = next((k for k, line in enumerate(lines) if re.match(r"^\s*LocalPort\s+RemoteDevice", line)), None)
    if head is None or head + 1 >= len(lines) or not re.match(r"^[-\s]+$", lines[head + 1]):
        raise EvidenceError(f"{where}: `show lldp table` without its header and ruler")
    cuts = [m.start() for m in re.finditer(r"-+", lines[head + 1])]
    for n, line in enumerate(lines[head + 2:], head + 3):
        if not line.strip() or set(line.strip()) <= {"-"} or line.startswith("Total entries"):
            continue
        cells = [line[a:b].strip() for a, b in zip(cuts, cuts[1:] + [len(line)])]
        if len(cells) < 3 or not all(cells[:3]):
            raise EvidenceError(f"{where}:{n}: a row of `show lldp table` without local port, remote device and "
                                f"remote port id: {line.strip()[:80]!r}")
        out.append(Seen(device, cells[0], cells[1], cells[2], cells[4] if len(cells) > 4 else "", None,
                        f"{where}:{n}"))
    return out


_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"[^"]*"\s+#\s+"([^"]*)"')
_SWITCH_PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-fx]+\))?\s+"[^"]*"\[(\d+)\](?:\([0-9a-fx]+\))?\s+#\s+"([^"]*)"'
                          r'(?:\s+lid\s+\d+\s+(\S+))?')
_CA_PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-fx]+\))?\s+"[^"]*"\[(\d+)\](?:\([0-9a-fx]+\))?\s*#?(?:.*?"([^"]*)")?'
                      r'(?:.*?lid\s+\d+\s+(\S+))?')
_SPEEDS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}


def ibnetdiscover(text: str, where: str) -> list[Seen]:
    """Both ends of every link: a switch's port lines and a channel adapter's name the far end's
    node description (a comment); an adapter's own description is `<host> <rdma device>`."""
    out = []
    node = kind = ""
    for n, line in enumerate(text.splitlines(), 1):
        m = _NODE.match(line)
        if m:
            kind, node = m.group(1), m.group(3)
            continue
        if not node or not line.startswith("["):
            continue
        m = _SWITCH_PORT.match(line) if kind == "Switch" else _CA_PORT.match(line)
        if not m:
            raise EvidenceError(f"{where}:{n}: not a port line of ibnetdiscover: {line.strip()[:100]!r}")
        speed = _ib_speed(m.group(4))
        out.append(Seen(node, m.group(1), m.group(3) or "", m.group(2), "", speed, f"{where}:{n}"))
    if not out:
        raise EvidenceError(f"{where}: ibnetdiscover output with no port line")
    return out


# `ibnetdiscover -p`: "%2s %5d %2d 0x%016x %s %s - %2s %5d %2d 0x%016x ( '%s' - '%s' )" (type, lid, port,
# GUID, width, speed; the far end's the same; then both node descriptions)
_PORTS_LINE = re.compile(r"^(SW|CA|RT)\s+\d+\s+(\d+)\s+0x[0-9a-f]+\s+(\d+x)\s+(\S+)\s+-\s+(SW|CA|RT)\s+\d+\s+(\d+)\s+"
                         r"0x[0-9a-f]+\s+\(\s*'([^']*)'\s+-\s+'([^']*)'\s*\)\s*$", re.M)


def ibnetdiscover_ports(text: str, where: str) -> list[Seen]:
    """`ibnetdiscover -p`: one line a link, both ends; ports without a link are left out."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _PORTS_LINE.match(line)
        if m:
            out.append(Seen(m.group(7), m.group(2), m.group(8), m.group(6), "", _ib_speed(m.group(3) + m.group(4)),
                            f"{where}:{n}"))
    if not out:
        raise EvidenceError(f"{where}: ibnetdiscover -p output with no link")
    return out


def _ib_speed(text: str | None) -> int | None:
    """'4xNDR' -> 400 (Gb/s: lanes x the lane rate); None where not given."""
    m = re.fullmatch(r"(\d+)x([A-Z0-9]+)", text or "")
    if not m or m.group(2) not in _SPEEDS:
        return None
    return int(int(m.group(1)) * _SPEEDS[m.group(2)])
