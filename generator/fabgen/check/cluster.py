"""The whole cluster checked as one, after allocation, on every render and validate.

Each fabric is built and checked on its own (check/fabric.py), and each target reads only
its own part; nothing else sees that two fabrics claim one node port, that an address is
configured on two devices, or that a node's netplan would name one interface twice. This check
does, over every fabric, role and plane (docs/cluster.md, "One port, one cable, one address"):

* every port (node and switch) is cabled once in the whole cluster;
* every IPv4 address configured anywhere (switch loopbacks, both ends of every link, host
  service addresses, management addresses of switches and nodes, BMCs, the management
  gateways) belongs to one device's one interface;
* the compute ports NCCL_IB_HCA and the NIC script name are cabled on the node's compute fabric;
* every port a node's netplan configures has an interface name of its own.

A failure is the inventory's doing (a custom node model whose plane ports take the names of
its storage ports, two pools or prefixes that meet through a gateway): a located error naming
both claimants and the inventory keys that made them, exit 2, nothing written. Fast: the
common case is one set per kind of claim compared with its list (C loops); claimants are
looked up only when a duplicate exists.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from operator import itemgetter
from typing import Any

from fabgen.errors import InventoryError, Problem
from fabgen.spec.catalog import eth_netdev


class _Where:
    """The inventory keys behind fabrics and node groups, for located messages."""

    def __init__(self, validated: Any):
        self.loaded = validated.loaded
        self.inv = validated.inventory
        self.index = {spec.name: i for i, spec in enumerate(self.inv.fabrics)}
        self.groups = {g.name: i for i, g in enumerate(self.inv.node_groups)}

    def fabric_key(self, fabric: Any, *rest: Any) -> tuple:
        return ("fabrics", self.index[fabric.inventory_name], *rest)

    def group_key(self, fabric: Any, group: str) -> tuple:
        spec = self.inv.fabrics[self.index[fabric.inventory_name]]
        if group in spec.node_groups:
            return self.fabric_key(fabric, "node_groups", spec.node_groups.index(group))
        return self.fabric_key(fabric)

    def problem(self, path: tuple, message: str) -> Problem:
        from fabgen.inventory.loader import format_path

        line, col = self.loaded.where(path)
        return Problem(line, col, format_path(path), message, self.loaded.file)

    def name(self, fabric: Any) -> str:
        """'sx (fabrics[0], plane 2)', 'storage (storage, fabrics[1])'."""
        i = self.index[fabric.inventory_name]
        role = fabric.spec.role
        plane = f", plane {fabric.plane + 1}" if fabric.planes > 1 else ""
        return f"{fabric.inventory_name} ({'' if role == 'compute' else role + ', '}fabrics[{i}]{plane})"


def check_cluster(validated: Any, fabrics: dict[str, Any], contexts: dict[str, Any]) -> None:
    """Raise InventoryError with every claim made twice in the cluster (a node group's nodes all
    break a rule alike: its first node is named, with how many more)."""
    where = _Where(validated)
    problems = (_ports(where, fabrics) + _addresses(where, fabrics, contexts) + _hosts(where, fabrics)
                + _provisioning_server(where, fabrics, contexts))
    if problems:
        raise InventoryError(_folded(problems)[:50])


def _folded(problems: list[tuple[Problem, Any]]) -> list[Problem]:
    """One problem per fold key (group and port), saying how many nodes share it."""
    out: dict[Any, list] = {}
    for p, key in problems:
        out.setdefault(key if key is not None else id(p), [p, 0])[1] += 1
    return [p if n == 1 else Problem(p.line, p.column, p.path, f"{p.message} (and alike on {n - 1} more node"
                                     f"{'s' if n > 2 else ''} of the group)", p.file) for p, n in out.values()]


def _ports(where: _Where, fabrics: dict[str, Any]) -> list[tuple[Problem, Any]]:
    """Every (device, port) at most one cable end in the whole cluster."""
    if not _shared_ports(fabrics):
        return []  # the common case, told from the port maps without a tuple per cable end
    seen: dict[tuple[str, str], tuple[Any, Any]] = {}
    out = []
    for f in fabrics.values():
        group = {h.name: h for h in f.hosts}
        for lk in f.links:
            for d, p, far in ((lk.a, lk.a_port, f"{lk.z} {lk.z_port}"), (lk.z, lk.z_port, f"{lk.a} {lk.a_port}")):
                first = seen.setdefault((d, p), (f, far))
                if first[1] is far:
                    continue
                f0, far0 = first
                host = group.get(d)
                key = where.group_key(f, host.group) if host else where.fabric_key(f)
                what = (f"node port {d} {p} ({host.model.key}'s {host.model.nics[0].role} port"
                        f"{'s' if len(host.model.nics) > 1 else ''})") if host else f"port {d} {p}"
                fold = (host.group, p, f0.name, f.name) if host else None
                out.append((where.problem(key, f"{what} is cabled twice: by fabric {where.name(f0)} to {far0}, and by "
                                          f"fabric {where.name(f)} to {far}; a port takes one cable: give the node "
                                          "model's ports of each role and plane names of their own"), fold))
    return out


def _shared_ports(fabrics: dict[str, Any]) -> bool:
    """Whether any device's port is a cable end in two fabrics. Within one fabric the builder
    refused a port used twice (`Builder.link` records both ends of every cable in the fabric's
    port map), so only a device in several fabrics can clash: a node on every plane, storage
    and in-band network. Per device, not per cable end: 1.4 -> 0.1 s at 131,072 GPUs of four
    planes (1.6 million cables)."""
    maps: dict[str, list[dict[str, int]]] = {}
    for f in fabrics.values():
        for device, ports in f.ports.items():
            maps.setdefault(device, []).append(ports)
    return any(len(ports) > 1 and len(set().union(*ports)) != sum(map(len, ports)) for ports in maps.values())


_Claim = tuple[str, str, str, tuple[Any, ...]]  # address, device, interface, inventory key


def _claims(f: Any, ctx: Any) -> Iterable[_Claim]:
    """(address, device, interface, inventory key) of every address one fabric configures."""
    alloc = f_alloc = ctx.allocation
    eth = f.spec.ethernet
    pools = ("ethernet", "pools") if eth is not None or f.spec.kind in ("roce", "spectrum-x") else ("management",)
    for name, ip in f_alloc.loopbacks.items():
        yield ip, name, "loopback", (*pools, "loopbacks")
    yield from _link_claims(f, alloc, pools)
    for name, ip in alloc.management.items():
        yield ip, name, "management", ("management", "prefix")
    for name, ip in alloc.node_loopbacks.items():
        yield ip, name, "service address (lo)", (*pools, "loopbacks")
    if alloc.tenants is not None:
        yield from _tenant_claims(f, alloc.tenants, pools)
    o = alloc.overlay
    if o is not None:  # the GPU overlay: the plane's anycast gateway, each leaf's own SVI address
        for seg in o.segments:  # the plane's one, or each rail's (named by its VLAN)
            vlan = f" (VLAN {seg.vlan})" if len(o.segments) > 1 else ""
            yield seg.gateway, f"the GPU anycast gateway of {f.inventory_name}{vlan}", "", (*pools, "hosts")
            for owner, ip in seg.leaves.items():
                yield ip, owner, f"GPU (SVI{vlan})", (*pools, "hosts")
        for owner, ip in o.loopbacks.items():
            yield ip, owner, "GPU VRF loopback", (*pools, "loopbacks")
    m = f.spec.management
    if m is not None and f.plane == 0:
        from fabgen.addressing import dotted_quad
        from fabgen.inventory.management import gateway_of

        yield dotted_quad(gateway_of(m)), f"the management gateway of {f.inventory_name}", "", ("management", "gateway")


def _tenant_claims(f: Any, t: Any, pools: tuple[str, ...]) -> Iterable[_Claim]:
    """northsouth: the anycast gateways, each leaf's SVIs, each node's bond, each leaf's VRF
    loopbacks (northsouth.vrf_loopbacks)."""
    roles = ("storage", "inband")
    for r, ip in zip(roles, t.gateways):
        yield ip, f"the {r} anycast gateway of {f.inventory_name}", "", (*pools, "hosts")
    for owner, ips in (*t.leaves.items(), *t.nodes.items()):
        for r, ip in zip(roles, ips):
            yield ip, owner, f"{r} ({'SVI' if owner in t.leaves else 'bond'})", (*pools, "hosts")
    for owner, ips in t.loopbacks.items():
        for r, ip in zip(roles, ips):
            yield ip, owner, f"{r} VRF loopback", (*pools, "loopbacks")


def _link_claims(f: Any, alloc: Any, pools: tuple[str, ...]) -> Iterable[_Claim]:
    """Both ends of every addressed link (a BMC's end on an out-of-band network; a leaf's host
    subnet gateway once, where its first host port appears)."""
    gateways_done: set[str] = set()
    links, link_ips, subnets = f.links, alloc.link_ips, alloc.leaf_subnets
    stretched = alloc.overlay is not None  # the GPU overlay: a host port's far end is the plane's anycast gateway
    oob = f.spec.role == "oob"
    hosts_key, links_key = (*pools, "hosts"), (*pools, "links")  # made once: 400,000 claims at 64k GPUs
    get = link_ips.get
    for idx, lk in enumerate(links):
        ips = get(idx)
        if ips is None:
            continue
        a_ip, z_ip, _ = ips
        if oob:
            yield a_ip, lk.a, lk.a_port, ("management", "prefix")
            continue
        key = hosts_key if lk.tier == "node-leaf" else links_key
        yield a_ip, lk.a, lk.a_port, key
        if stretched and lk.tier == "node-leaf":
            continue  # the gateway is claimed once, with the leaves' SVIs (_claims)
        if lk.z in subnets:  # one gateway per leaf, shared by its host ports
            if lk.z not in gateways_done:
                gateways_done.add(lk.z)
                yield z_ip, lk.z, "host subnet gateway", key
        else:
            yield z_ip, lk.z, lk.z_port, key


def _addresses(where: _Where, fabrics: dict[str, Any], contexts: dict[str, Any]) -> list[tuple[Problem, Any]]:
    """Every configured IPv4 address on one device's one interface."""
    claims = {name: list(_claims(f, contexts[name])) for name, f in fabrics.items()}
    if len(set(map(itemgetter(0), chain.from_iterable(claims.values())))) == sum(map(len, claims.values())):
        return []  # no address claimed twice, told by a set (1.8 -> 0.9 s at 131k GPUs of four planes)
    first: dict[str, _Claim] = {}  # claimed twice: by one owner (a node's address on every plane) is fine
    for cl in claims.values():
        for c in cl:
            c0 = first.setdefault(c[0], c)
            if c0 is not c and (c0[1] != c[1] or c0[2] != c[2]):
                break
        else:
            continue
        break
    else:
        return []  # every address has one owner (the common case, checked without the lines below)
    located = [(c, fabrics[name]) for name, cl in claims.items() for c in cl]
    seen: dict[str, tuple[str, str, tuple[Any, ...], Any]] = {}
    out = []
    for (ip, dev, iface, key), f in located:
        earlier = seen.setdefault(ip, (dev, iface, key, f))
        if earlier[:2] == (dev, iface):
            continue
        dev0, iface0, key0, f0 = earlier
        out.append((where.problem(where.fabric_key(f, *key), f"{ip} is configured twice: on {dev0} {iface0} "
                                  f"(fabric {where.name(f0)}, {_path(where.fabric_key(f0, *key0))}) and on {dev} "
                                  f"{iface} (fabric {where.name(f)}): give each network its own addresses"), None))
        if len(out) >= 50:
            break
    return out


def _provisioning_server(where: _Where, fabrics: dict[str, Any], contexts: dict[str, Any]) -> list[tuple[Problem, Any]]:
    """The provisioning server's address is no device's: not a switch's or a node's management
    address, not a BMC's on the out-of-band network (validation kept it off the data pools and
    the gateways; these are known only now)."""
    p = where.inv.provisioning
    if p is None:
        return []
    for name, f in fabrics.items():
        alloc = contexts[name].allocation
        owner = next((dev for dev, ip in alloc.management.items() if ip == p.server), None)
        if owner is None and f.spec.role == "oob":
            owner = next((f.links[idx].a for idx, ips in alloc.link_ips.items() if ips[0] == p.server), None)
        if owner is not None:
            return [(where.problem(("provisioning", "server"), f"{p.server} is the management address of {owner} "
                                   f"(fabric {where.name(f)}): give the provisioning server an address no device "
                                   "takes"), None)]
    return []


def _path(key: tuple) -> str:
    from fabgen.inventory.loader import format_path

    return format_path(key)


def _hosts(where: _Where, fabrics: dict[str, Any]) -> list[tuple[Problem, Any]]:
    """Per node: the compute ports NCCL and the NIC script name are cabled on its compute fabric,
    and the ports its netplan configures have an interface name each."""
    out: list[tuple[Problem, Any]] = []
    names: dict[str, dict[str, tuple[str, str]]] = {}  # node -> interface name -> (fabric, port)
    models_done: dict[tuple[int, int], list[str]] = {}
    for f in fabrics.values():
        ethernet = f.spec.kind != "infiniband" and f.spec.role != "oob"
        fname = where.name(f)
        for h in f.hosts:
            cabled = f.ports.get(h.name, {})
            missing = [n.rdma for n in h.model.nics if n.rdma not in cabled]
            if missing:
                out.append((where.problem(where.group_key(f, h.group), f"{h.name}: {', '.join(missing)} named for "
                                          f"fabric {fname} but not cabled there"), (h.group, f.name, "cabled")))
            if not ethernet or (f.spec.role == "compute" and h.role != "compute"):
                continue
            mine = names.setdefault(h.name, {})
            key = (id(h.model), id(f))
            if key not in models_done:
                models_done[key] = [eth_netdev(n.netdev) if n.netdev else n.rdma for n in h.model.nics]
            for nic, iface in zip(h.model.nics, models_done[key]):
                claim = (fname, nic.rdma)
                first = mine.setdefault(iface, claim)
                if first != claim:
                    out.append((where.problem(where.group_key(f, h.group), f"{h.name}: the netplan would name two "
                                              f"ports {iface}: {' '.join(first)} and {fname} {nic.rdma}, and configure "
                                              "only one; give the node model's ports netdev names of their own"),
                                (h.group, iface, f.name)))
    return out
