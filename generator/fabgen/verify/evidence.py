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

A file of none of these shapes is an EvidenceError naming it; nothing is guessed. A file of one
of them is untrusted all the same (untrusted.py): JSON is read within bounds of depth and count,
every value read is checked for its type (an error names the key), and a text file of more than
MAX_LINES lines or MAX_ROWS neighbours is refused (at its line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import Field, TypeAdapter

from fabgen.verify.untrusted import MAX_ROWS, Path, Refused, Shape, lines, load, validated, wrong


class EvidenceError(Refused):
    """Evidence that is no known tool's output: one line naming the file."""


@dataclass(frozen=True, slots=True)
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
        return _json(load(text, where, EvidenceError), where, device)
    if re.search(r"^(Switch|Ca|Rt)\s+\d+\s+\"", text, re.M):
        return ibnetdiscover(text, where)
    if _PORTS_LINE.search(text):
        return ibnetdiscover_ports(text, where)
    if re.search(r"^[ \t]*LocalPort[ \t]+RemoteDevice[ \t]+RemotePortID", text, re.M):  # \s* would span lines
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
    if isinstance(doc, dict) and any(isinstance(v, dict) and "lldp" in v for v in doc.values()):
        return nvue_lldp(doc, where, _need(device, where))
    raise EvidenceError(f"{where}: JSON of no supported LLDP output (lldpctl's 'lldp', EOS's 'lldpNeighbors', "
                        "NVUE's interfaces with 'lldp')")


# lldpd's JSON is too loose for a model (a value is a string, {"value": ...} or, in json0, a list of
# either; one interface is an object, several a list): each value read is checked where it is read.

def _objects(node: object, path: Path, where: str) -> list[tuple[Path, dict[str, Any]]]:
    """An object, or (json0, several interfaces) a list of them, each with where it sits."""
    items: list[tuple[int | None, object]] = list(enumerate(node)) if isinstance(node, list) else [(None, node)]
    out = []
    for k, item in items:
        here = path if k is None else (*path, k)
        if not isinstance(item, dict):
            raise wrong(where, here, item, "an object", EvidenceError)
        out.append((here, item))
    return out


def _value(node: object, path: Path, where: str) -> str:
    """lldpctl's values: a string, or {"value": ...} (json0 wraps every value in a list)."""
    if isinstance(node, list):
        if not node:
            return ""
        node, path = node[0], (*path, 0)
    if isinstance(node, dict):
        node, path = node.get("value", ""), (*path, "value")
    if not isinstance(node, str):
        raise wrong(where, path, node, "a string", EvidenceError)
    return node


def _interfaces(node: object, path: Path, where: str) -> list[tuple[str, Path, dict[str, Any]]]:
    """lldpctl keys an interface by its name (several: a list of one-key objects); json0 names it
    with "name" in a list of objects."""
    out = []
    for here, obj in _objects(node, path, where):
        if isinstance(obj.get("name"), str):
            out.append((obj["name"], here, obj))
            continue
        for port, info in obj.items():
            if not isinstance(info, dict):
                raise wrong(where, (*here, port), info, "an object", EvidenceError)
            out.append((port, (*here, port), info))
    return out


def lldpctl(doc: dict, where: str, device: str) -> list[Seen]:
    out = []
    for here, lldp in _objects(doc["lldp"], ("lldp",), where):
        for port, at_port, info in _interfaces(lldp.get("interface", {}), (*here, "interface"), where):
            peer = _chassis_name(info.get("chassis", {}), (*at_port, "chassis"), where)
            pid, descr = _port(info.get("port", {}), (*at_port, "port"), where)
            out.append(Seen(device, port, peer, pid, descr, None, where))
    return out


def _chassis_name(node: object, path: Path, where: str) -> str:
    """The neighbour's system name: json0 writes [{"name": [{"value": N}], ...}], json keys the chassis
    by its name ({N: {...}}), or, without a system name, gives its id directly."""
    found = _objects(node, path, where)
    if not found:
        return ""
    here, chassis = found[0]
    if "name" in chassis:
        return _value(chassis["name"], (*here, "name"), where)
    if isinstance(chassis.get("id"), (dict, list)):
        return _value(chassis["id"], (*here, "id"), where)  # no system name: the chassis id (a MAC) stands in
    return next(iter(chassis), "")


def _port(node: object, path: Path, where: str) -> tuple[str, str]:
    """The neighbour's port id and description (json0: the first of a list)."""
    found = _objects(node, path, where)
    if not found:
        return "", ""
    here, port = found[0]
    return _value(port.get("id", ""), (*here, "id"), where), _value(port.get("descr", ""), (*here, "descr"), where)


class _EosInterface(Shape):
    interfaceId_v2: str | None = None
    interfaceId: str = ""
    interfaceDescription: str = ""


class _EosNeighbor(Shape):
    systemName: str = ""
    neighborInterfaceInfo: _EosInterface = _EosInterface()


class _EosPort(Shape):
    lldpNeighborInfo: list[_EosNeighbor] = []


class _Eos(Shape):
    lldpNeighbors: dict[str, _EosPort]


_EOS = TypeAdapter(_Eos)


def eos_lldp(doc: dict, where: str, device: str) -> list[Seen]:
    eos = validated(_EOS, doc, where, "EOS's show lldp neighbors detail | json", EvidenceError)
    out: list[Seen] = []
    for port, info in eos.lldpNeighbors.items():
        for n in info.lldpNeighborInfo:
            nb = n.neighborInterfaceInfo
            pid = nb.interfaceId_v2 or nb.interfaceId.strip('"')
            out.append(Seen(device, port, n.systemName, pid, nb.interfaceDescription, None, where))
    return out


class _NvueChassis(Shape):
    system_name: str | None = Field(default=None, alias="system-name")  # default= by name: mypy reads no other


class _NvuePort(Shape):
    name: str | None = None
    id: str | None = None
    description: str = ""


class _NvueNeighbor(Shape):
    chassis: _NvueChassis = _NvueChassis()
    port: _NvuePort = _NvuePort()


class _NvueLldp(Shape):
    neighbor: dict[str, _NvueNeighbor] = {}


class _NvueInterface(Shape):
    lldp: _NvueLldp | None = None


_NVUE = TypeAdapter(dict[str, _NvueInterface])


def nvue_lldp(doc: dict, where: str, device: str) -> list[Seen]:
    """NVUE: interface -> lldp -> neighbor -> <system> -> {chassis: {system-name}, port: {name|description}}."""
    nvue = validated(_NVUE, doc, where, "NVUE's nv show interface --view=lldp -o json", EvidenceError)
    out: list[Seen] = []
    for port, info in nvue.items():
        for key, n in (info.lldp.neighbor if info.lldp else {}).items():
            out.append(Seen(device, port, n.chassis.system_name or key, n.port.name or n.port.id or "",
                            n.port.description, None, where))
    return out


def _room(out: list[Seen], where: str, n: int) -> None:
    """Refuse a text file whose rows pass MAX_ROWS before they fill the memory."""
    if len(out) >= MAX_ROWS:
        raise EvidenceError(f"{where}:{n}: more than {MAX_ROWS:,} neighbours seen in one file, the most verify holds "
                            "at once")


def sonic_lldp_table(text: str, where: str, device: str) -> list[Seen]:
    """sonic-utilities' lldpshow: a tabulate table; the columns are cut where its ruler of dashes
    says (the last, RemotePortDescr, may hold spaces)."""
    out: list[Seen] = []
    table = lines(text, where, EvidenceError)
    head = next((k for k, line in enumerate(table) if re.match(r"^\s*LocalPort\s+RemoteDevice", line)), None)
    if head is None or head + 1 >= len(table) or not re.match(r"^[-\s]+$", table[head + 1]):
        raise EvidenceError(f"{where}: `show lldp table` without its header and ruler")
    cuts = [m.start() for m in re.finditer(r"-+", table[head + 1])][:5]  # its five columns: a ruler of a
    # million would cut each row a million times
    for n, line in enumerate(table[head + 2:], head + 3):
        if not line.strip() or set(line.strip()) <= {"-"} or line.startswith("Total entries"):
            continue
        _room(out, where, n)
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
    out: list[Seen] = []
    node = kind = ""
    for n, line in enumerate(lines(text, where, EvidenceError), 1):
        m = _NODE.match(line)
        if m:
            kind, node = m.group(1), m.group(3)
            continue
        if not node or not line.startswith("["):
            continue
        m = _SWITCH_PORT.match(line) if kind == "Switch" else _CA_PORT.match(line)
        if not m:
            raise EvidenceError(f"{where}:{n}: not a port line of ibnetdiscover: {line.strip()[:100]!r}")
        _room(out, where, n)
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
    out: list[Seen] = []
    for n, line in enumerate(lines(text, where, EvidenceError), 1):
        m = _PORTS_LINE.match(line)
        if m:
            _room(out, where, n)
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
