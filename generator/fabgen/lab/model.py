"""The lab in neutral terms: its nodes (switches with their rendered config, nodes with their
netplan's addresses as `ip` lines) and its links (each planned cable among the kept devices),
read from the emulation's reading of a render (emulate/read.py) after its sample (emulate/sample.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fabgen.emulate.model import Host
from fabgen.emulate.read import TRANSLATORS, BadInput, Fabric
from fabgen.lab.ports import Numbering


@dataclass
class Node:
    name: str
    platform: str  # eos, sonic, nvue, or linux for a node
    config: str = ""  # the render's path of its startup config (a switch's)
    exec: list[str] = field(default_factory=list)  # a node's `ip` lines, from its netplan
    ports: Numbering | None = None  # a switch's port names as its image expects them


@dataclass
class Link:
    a: str
    a_port: str  # the rendered name (a switch's port, a node's netdev)
    z: str
    z_port: str


@dataclass
class Lab:
    name: str
    nodes: dict[str, Node] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was kept and left out, said atop every file


def numberings(fab: Fabric) -> dict[str, Numbering]:
    """Each switch's port names from every cable of the whole fabric (called before sampling)."""
    ports: dict[str, set[str]] = {}
    where: dict[str, str] = {}
    for c in fab.cables:
        for dev, port in ((c["a_device"], c["a_port"]), (c["z_device"], c["z_port"])):
            if dev in fab.routers:
                ports.setdefault(dev, set()).add(port)
                where.setdefault(dev, f"{c['fabric']}/cabling.csv")
    return {dev: Numbering(fab.platform, dev, ps, where[dev]) for dev, ps in sorted(ports.items())}


def build(name: str, fabs: list[Fabric], numbered: dict[str, Numbering], notes: list[str]) -> Lab:
    """The lab of the (sampled) fabrics."""
    lab = Lab(name, notes=notes)
    for fab in fabs:
        suffix = TRANSLATORS[fab.platform][0]
        plane = {r["device"]: r["fabric"] for r in fab.addresses}
        for dev in sorted(fab.routers):
            lab.nodes[dev] = Node(dev, fab.platform, f"{plane[dev]}/switches/{dev}{suffix}", ports=numbered.get(dev))
        netdev = {(r["peer_device"], r["peer_interface"]): r["interface"] for r in fab.addresses if r["role"] == "node"}
        for c in fab.cables:
            lab.links.append(_link(fab, c, netdev))
        for host in sorted(fab.hosts.values(), key=lambda h: h.name):
            node = lab.nodes.setdefault(host.name, Node(host.name, "linux"))
            node.exec += [line for line in ip_lines(host) if line not in node.exec]
    return lab


def _link(fab: Fabric, c: dict[str, str], netdev: dict[tuple[str, str], str]) -> Link:
    """A cable as a lab link: a node's end by its netdev (cabling.csv names its RDMA device,
    addresses.csv the netdev facing the switch port)."""
    ends = []
    for dev, port, far, far_port in ((c["a_device"], c["a_port"], c["z_device"], c["z_port"]),
                                     (c["z_device"], c["z_port"], c["a_device"], c["a_port"])):
        if dev in fab.routers:
            ends.append((dev, port))
        elif dev in fab.hosts:
            if (far, far_port) not in netdev:
                raise BadInput(f"{c['fabric']}/addresses.csv: no address row of {dev} facing {far} {far_port}, "
                               "which cabling.csv cables")
            ends.append((dev, netdev[(far, far_port)]))
        else:
            raise BadInput(f"{c['fabric']}/cabling.csv: {dev} is neither a switch nor a node of the fabric")
    return Link(ends[0][0], ends[0][1], ends[1][0], ends[1][1])


def ip_lines(h: Host) -> list[str]:
    """A node's netplan as `ip` commands (every value checked by emulate/inputs.py's host): its
    loopback addresses, each port's MTU, addresses, routes and rules."""
    lines = [f"ip addr add {cidr} dev lo" for cidr in h.loopbacks]
    for p in h.ports.values():
        lines.append(f"ip link set dev {p.name}" + (f" mtu {p.mtu}" if p.mtu else "") + " up")
        lines += [f"ip addr add {cidr} dev {p.name}" for cidr in p.addresses]
    for p in h.ports.values():
        lines += [_route(r, p.name) for r in p.routes]
        lines += [f"ip rule add from {r['from']} table {r['table']}"
                  + (f" priority {r['priority']}" if r.get("priority") is not None else "") for r in p.rules]
    return lines


def _route(route: dict, port: str) -> str:
    """A netplan route as networkd installs it (on its interface, in its table, with its scope
    and metric; an unreachable one on no interface)."""
    if route.get("type") == "unreachable":
        return f"ip route add unreachable {route['to']}" + (f" table {route['table']}" if "table" in route else "")
    line = f"ip route add {route['to']}" + (f" via {route['via']}" if "via" in route else "") + f" dev {port}"
    for key in ("scope", "table", "metric"):
        if route.get(key) is not None:
            line += f" {key} {route[key]}"
    return line + (" onlink" if route.get("on-link") is True else "")
