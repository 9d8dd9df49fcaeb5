"""The plan a built fabric is held against, read from the render (through its manifest), and the
names by which the evidence may call its devices and ports.

Matching, as operators need it: a device by its planned name, case-insensitive, without a DNS
domain (`leaf01.dc.example.com`), with vendor decoration around it (`MF0;ib-leaf1:MQM9700/U1`,
a switch's node description); a port by its planned name, by its SONiC alias, by its InfiniBand
port number (topology.net gives each switch port's number and far end), a host port by its netdev
(addresses.csv gives each node port's netdev and far end). A host that sends its MAC address as
its port id is matched through its own evidence, or through the port description.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class End:
    fabric: str
    tier: str
    far: tuple[str, str]
    speed: int | None


@dataclass
class Plan:
    ends: dict[tuple[str, str], End] = field(default_factory=dict)  # (device, port) -> its planned cable
    devices: dict[str, str] = field(default_factory=dict)  # lower-case name -> name
    aliases: dict[tuple[str, str], str] = field(default_factory=dict)  # (device, alias or number) -> port
    roles: dict[str, str] = field(default_factory=dict)  # fabric -> role
    hosts: set[str] = field(default_factory=set)  # the nodes (the lower end of node-leaf cables)

    def device(self, raw: str) -> str | None:
        """The planned device an evidence name stands for, or None."""
        text = raw.strip().strip('"').lower()
        if text in self.devices:
            return self.devices[text]
        for token in re.split(r"[\s;:,()/]+", text):
            if token in self.devices:
                return self.devices[token]
            short = token.split(".")[0]
            if short in self.devices:
                return self.devices[short]
        return None

    def port(self, device: str, raw: str) -> str | None:
        """The planned port of `device` an evidence port id stands for, or None."""
        text = raw.strip().strip('"')
        if (device, text) in self.ends:
            return text
        hit = self.aliases.get((device, text)) or self.aliases.get((device, text.lower()))
        return hit


def _rows(files: dict[str, bytes], path: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files[path].decode()))) if path in files else []


def read(files: dict[str, bytes]) -> Plan:
    p = Plan()
    report = json.loads(files["report.json"])["fabrics"]
    for fabric, info in report.items():
        p.roles[fabric] = info.get("role", "compute")
        for r in _rows(files, f"{fabric}/cabling.csv"):
            speed = int(r["speed"].rstrip("G")) if r.get("speed", "").rstrip("G").isdigit() else None
            a, z = (r["a_device"], r["a_port"]), (r["z_device"], r["z_port"])
            p.ends[a] = End(fabric, r["tier"], z, speed)
            p.ends[z] = End(fabric, r["tier"], a, speed)
            if r["tier"] == "node-leaf":
                p.hosts.add(a[0])
            for d in (a[0], z[0]):
                p.devices[d.lower()] = d
        for r in _rows(files, f"{fabric}/addresses.csv"):  # a node port by its netdev
            if r.get("role") == "node" and r.get("peer_device"):
                end = p.ends.get((r["peer_device"], r["peer_interface"]))
                if end is not None:
                    p.aliases[(r["device"], r["interface"])] = end.far[1]
        topo = files.get(f"{fabric}/infiniband/topology.net")
        if topo is not None:
            _ib_numbers(p, topo.decode())
    _sonic_aliases(p, files)
    return p


def _sonic_aliases(p: Plan, files: dict[str, bytes]) -> None:
    """SONiC: a port by its alias (config_db.json's PORT table), as LLDP may name it."""
    for path, data in files.items():
        m = re.match(r"^[^/]+/switches/([^/]+)/config_db\.json$", path)
        if m:
            for name, row in json.loads(data).get("PORT", {}).items():
                if isinstance(row, dict) and row.get("alias"):
                    p.aliases[(m.group(1), row["alias"])] = name
                    p.aliases[(m.group(1), row["alias"].lower())] = name


_SWITCH = re.compile(r'^Switch\s+\d+\s+"[^"]*"\s+#\s+"([^"]*)"')
_CA = re.compile(r'^Ca\s+\d+\s+"[^"]*"\s+#\s+"([^"]*)"')
_PORT = re.compile(r'^\[(\d+)\]\s+"[^"]*"\[(\d+)\](?:\([0-9a-fx]+\))?\s+#\s+"([^"]*)"')


def _natural(s: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _ib_numbers(p: Plan, text: str) -> None:
    """Each switch port's number (its `[N]` in topology.net, the far end named in the comment),
    joined with cabling.csv's port names through that far end: an adapter's port by the node and
    RDMA device its description names, parallel links to one switch in port order on both sides."""
    by_far: dict[tuple[str, str], list[str]] = {}  # (switch, far device[ rdma]) -> its planned ports
    for (dev, port), end in p.ends.items():
        far_dev, far_port = end.far
        key = f"{far_dev} {far_port}" if far_dev in p.hosts else far_dev
        by_far.setdefault((dev, key), []).append(port)
    numbers: dict[tuple[str, str], list[int]] = {}
    switch = None
    for line in text.splitlines():
        m = _SWITCH.match(line)
        if m:
            switch = m.group(1)
            continue
        if _CA.match(line):
            switch = None
            continue
        m = _PORT.match(line)
        if m and switch is not None:
            numbers.setdefault((switch, m.group(3)), []).append(int(m.group(1)))
    for switch_far, nums in numbers.items():
        ports = sorted(by_far.get(switch_far, []), key=_natural)
        for n, port in zip(sorted(nums), ports):
            p.aliases[(switch_far[0], str(n))] = port
