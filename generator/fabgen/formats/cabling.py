"""The cabling plan in the forms the cabling validators people already run read (docs/verify.md).

Node ports are named by their netdev on Ethernet (what lldpd reports; RDMA names stand in where
the model publishes none and no rdma_links file gives them), by RDMA device on InfiniBand.

* `validate/ptm-topology.dot`: Cumulus PTM's /etc/ptm.d/topology.dot, an undirected DOT graph with
  one `"device":"port" -- "device":"port"` edge per cable (Cumulus Linux user guide, "Prescriptive
  Topology Manager - PTM"; NVIDIA Air and UFM's cable validation read the same shape).
* `validate/layer1_topology.json`: Batfish's snapshot file `batfish/layer1_topology.json`, `edges`
  of `node1`/`node2` with `hostname` and `interfaceName`, each cable in both directions as
  Batfish's own example networks list it.
* InfiniBand `validate/ibdm.topo` with `validate/ibnl/*.ibnl`: the IBDM topology file that
  ibutils' ibdmchk, ibtopodiff and ibdiagnet (`-t`) hold a fabric against, and the IBNL system
  definitions its system types refer to (ibutils' ibdm-topo-file(1) and ibdm-ibnl-file(1)):
  a section per system, `SYSTEM-TYPE SYSTEM-NAME`, then `PORT -> REMOTE-TYPE REMOTE-NAME
  REMOTE-PORT` per cable and a blank line. Switch ports are front-panel names `P<n>` of their
  InfiniBand port number (IBNL's convention; fabgen's `IB1/17/1` is in the cabling beside it), a
  node is one system with one single-port adapter per RDMA device, its ports named by device.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from fabgen.formats.memo import Memo

# IBNL's NAME token (ibutils ibnl_scanner.ll); anything else would be read as other tokens.
_IBNL_NAME = re.compile(r"[A-Za-z][-\[\]\\*/A-Za-z0-9_.:%@~]+")


def render(name: str, cabling: list[list[str]], ibdm: dict[str, Any] | None,
           netdevs: dict[str, str] | None = None) -> Iterable[tuple[str, bytes]]:
    """`netdevs` (`node/rdma` -> netdev): node ports as LLDP names them, in the PTM and Batfish files."""
    named = _by_netdev(cabling, netdevs or {})
    yield f"{name}/validate/ptm-topology.dot", _ptm(name, named).encode()
    yield f"{name}/validate/layer1_topology.json", _batfish(named).encode()
    if ibdm is not None:
        topo, ibnl = _ibdm(cabling, ibdm)
        yield f"{name}/validate/ibdm.topo", topo.encode()
        for system, text in sorted(ibnl.items()):
            yield f"{name}/validate/ibnl/{system}.ibnl", text.encode()


def _by_netdev(cabling: list[list[str]], netdevs: dict[str, str]) -> list[list[str]]:
    if not netdevs:
        return cabling
    return [[a, netdevs.get(f"{a}/{ap}", ap), *rest] for a, ap, *rest in cabling]


def _ptm(name: str, cabling: list[list[str]]) -> str:
    edges = "".join(f'  "{a}":"{ap}" -- "{z}":"{zp}";\n' for a, ap, z, zp, *_ in cabling)
    return f'graph "{name}" {{\n{edges}}}\n'


def _batfish(cabling: list[list[str]]) -> str:
    """A line per edge, each cable both ways: what json.dumps(edge, separators=(", ", ": ")) writes,
    with each name quoted once (a json.dumps per edge was a tenth of a 64k-GPU render)."""
    q = Memo(json.dumps)
    lines = []
    for a, ap, z, zp, *_ in cabling:
        one = f'{{"hostname": {q[a]}, "interfaceName": {q[ap]}}}'
        other = f'{{"hostname": {q[z]}, "interfaceName": {q[zp]}}}'
        lines += [f'  {{"node1": {one}, "node2": {other}}}', f'  {{"node1": {other}, "node2": {one}}}']
    return '{"edges": [\n' + ",\n".join(lines) + "\n]}\n"


def _ibdm(cabling: list[list[str]], ibdm: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The topology file and the IBNL systems it names: the switch model, and one system per
    distinct set of node ports (`NODE<k>`, numbered in order of first appearance)."""
    switches, number, sw_type = set(ibdm["switches"]), ibdm["numbers"], ibdm["switch_type"]
    node_ports: dict[str, list[str]] = {}
    for a, ap, z, zp, *_ in cabling:
        for dev, port in ((a, ap), (z, zp)):
            if dev not in switches:
                node_ports.setdefault(dev, []).append(port)
    node_type: dict[str, str] = {}
    kinds: dict[tuple[str, ...], str] = {}
    for dev, ports in node_ports.items():
        key = tuple(sorted(set(ports)))
        node_type[dev] = kinds.setdefault(key, f"NODE{len(kinds) + 1}")

    def end(dev: str, port: str) -> tuple[str, str, str]:
        if dev in switches:
            return sw_type, dev, f"P{number[port]}"
        return node_type[dev], dev, port
    sections: dict[tuple[str, str], list[str]] = {}
    for a, ap, z, zp, *_ in cabling:
        for (t1, n1, p1), (t2, n2, p2) in ((end(a, ap), end(z, zp)), (end(z, zp), end(a, ap))):
            sections.setdefault((t1, n1), []).append(f"{p1} -> {t2} {n2} {p2}")
    topo = []
    for (kind, system), lines in sections.items():
        topo += [f"{kind} {system}", *(f"   {line}" for line in lines), ""]
    ibnl = {sw_type: _ibnl_switch(sw_type, ibdm["device"], ibdm["ports"])}
    for key, kind in kinds.items():
        ibnl[kind] = _ibnl_node(kind, key)
    return "\n".join(topo), ibnl


def _ibnl_switch(kind: str, device: str, ports: int) -> str:
    lines = "".join(f"   {n} -> P{n}\n" for n in range(1, ports + 1))
    return f"\nTOPSYSTEM {kind}\n\nNODE SW {ports} {device} U1\n{lines}\n"


def _ibnl_node(kind: str, ports: tuple[str, ...]) -> str:
    nodes = "".join(f"NODE CA 1 ConnectX U{i}\n   1 -> {port}\n\n" for i, port in enumerate(ports, 1))
    return f"\nTOPSYSTEM {kind}\n\n{nodes}"


def ibnl_name(text: str) -> bool:
    """True when `text` reads as one IBNL/IBDM name (a port or system name in these files)."""
    return _IBNL_NAME.fullmatch(text) is not None
