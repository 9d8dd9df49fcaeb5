"""A rendered topology.net rewritten with cables moved, removed or added, for ibsim to simulate a
fabric built otherwise than planned (tests/test_verify.py). The file is read into its nodes and
links and written back in the same ibnetdiscover form."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NODE = re.compile(r'^(Switch|Ca)\t(\d+) "([^"]+)"\t+# "([^"]*)"(.*)$')
_SW_PORT = re.compile(r'^\[(\d+)\]\t"([^"]+)"\[(\d+)\](?:\(([0-9a-f]+)\))?')
_CA_PORT = re.compile(r'^\[(\d+)\]\(([0-9a-f]+)\)\s+"([^"]+)"\[(\d+)\]')


@dataclass
class Node:
    kind: str
    ports: int
    ident: str
    desc: str
    tail: str
    header: list[str] = field(default_factory=list)
    port_guid: dict[int, str] = field(default_factory=dict)  # a CA's port GUIDs


@dataclass
class Topology:
    nodes: dict[str, Node] = field(default_factory=dict)  # by ident ("S-..." / "H-...")
    links: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict)  # both directions

    def by_desc(self, desc: str) -> str:
        return next(i for i, n in self.nodes.items() if n.desc == desc)

    def port_of(self, switch_desc: str, host_desc: str) -> int:
        """The switch's port number that a host adapter is on."""
        s, h = self.by_desc(switch_desc), self.by_desc(host_desc)
        return next(p for (n, p), (m, _) in self.links.items() if n == s and m == h)

    def unplug(self, a: tuple[str, int]) -> None:
        b = self.links.pop(a)
        self.links.pop(b)

    def plug(self, a: tuple[str, int], b: tuple[str, int]) -> None:
        self.links[a], self.links[b] = b, a

    def swap(self, a: tuple[str, int], b: tuple[str, int]) -> None:
        """Cross the cables at ports a and b (both ends kept, the plugs at a and b exchanged)."""
        fa, fb = self.links[a], self.links[b]
        self.unplug(a)
        self.unplug(b)
        self.plug(a, fb)
        self.plug(b, fa)


def read(text: str) -> Topology:
    t = Topology()
    header: list[str] = []
    current = None
    for line in text.splitlines():
        m = _NODE.match(line)
        if m:
            current = Node(m.group(1), int(m.group(2)), m.group(3), m.group(4), m.group(5), header)
            t.nodes[current.ident] = current
            header = []
            continue
        if current is not None and line.startswith("["):
            if current.kind == "Switch":
                p = _SW_PORT.match(line)
                t.links[(current.ident, int(p.group(1)))] = (p.group(2), int(p.group(3)))
            else:
                p = _CA_PORT.match(line)
                current.port_guid[int(p.group(1))] = p.group(2)
                t.links[(current.ident, int(p.group(1)))] = (p.group(3), int(p.group(4)))
            continue
        if not line.strip():
            current = None
            continue
        if current is None:
            header.append(line)
    return t


def write(t: Topology) -> str:
    out = []
    for ident, n in t.nodes.items():
        out += n.header
        out.append(f'{n.kind}\t{n.ports} "{ident}"\t\t# "{n.desc}"{n.tail}')
        for (node, port), (far, far_port) in sorted(t.links.items()):
            if node != ident:
                continue
            fn = t.nodes[far]
            if n.kind == "Switch":
                guid = f"({fn.port_guid[far_port]})" if fn.kind == "Ca" else ""
                out.append(f'[{port}]\t"{far}"[{far_port}]{guid}\t\t# "{fn.desc}" lid 0 4xNDR')
            else:
                out.append(f'[{port}]({n.port_guid[port]}) \t"{far}"[{far_port}]\t\t# lid 0 lmc 0 "{fn.desc}" '
                           'lid 0 4xNDR')
        out.append("")
    return "\n".join(out) + "\n"
