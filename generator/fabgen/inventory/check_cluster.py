"""Checks across fabrics: address pools, BGP to the host, management networks and platforms."""

from __future__ import annotations

import re
from collections.abc import Callable

from fabgen.inventory.state import Checks
from fabgen.spec.schema import Fabric

Report = Callable[[tuple, str], None]


def check_addressing(c: Checks) -> None:
    """Ethernet blocks and their pools, node management prefixes apart from every data pool, and a
    bootstrap interface that can reach other nodes."""
    from fabgen.inventory.ethernet import check_ethernet, check_prefix
    from fabgen.spec.schema import EthernetOptions

    for i, f in enumerate(c.inv.fabrics):
        if f.ethernet is not None and f.kind == "infiniband":
            c.report(("fabrics", i, "ethernet"), "the ethernet block applies to kinds roce and spectrum-x only "
                     "(this fabric is infiniband)", key=True)
        elif f.kind == "ethernet" and f.ethernet is not None:
            c.report(("fabrics", i, "ethernet"), "the ethernet block (pools, QoS, BGP) does not apply to the "
                     "out-of-band network: its addresses come from management.prefix", key=True)
        elif f.kind not in ("infiniband", "ethernet"):
            check_ethernet(i, f.kind, f.ethernet or EthernetOptions(), c.plans.get(f.name), c.report, c.taken,
                           c.warner(f.name), f.planes, f.role, f.platform)
    _check_host_routing(c)
    for i, f in enumerate(c.inv.fabrics):
        if f.name in c.plans and f.planned_nodes is None:
            _warn_storage_follows(c, i, f, c.plans[f.name], len(c.storage.get(f.name, [])))
        elif f.name in c.plans and f.role != "oob":
            _warn_assumed_model(c, i, f, c.plans[f.name])
    managed: list = list(c.taken)  # management prefixes may overlap neither each other nor a data pool
    for i, g in enumerate(c.inv.node_groups):
        if g.management is not None:
            check_prefix(("node_groups", i, "management"), g.management, g.count, "nodes", c.report, managed)
    for i, g in enumerate(c.inv.node_groups):
        compute = c.attached.get((g.name, "compute"))
        if g.bootstrap_interface and re.fullmatch(r"lo\d*", g.bootstrap_interface) and compute:
            c.warner(compute)(("node_groups", i, "bootstrap_interface"),
                                         f"NCCL_SOCKET_IFNAME={g.bootstrap_interface} is the loopback interface: "
                                         "NCCL's bootstrap cannot reach other nodes through it; name the "
                                         "management or in-band interface")
    c.taken[:] = managed  # the switch management prefixes checked next are kept apart from these too


def _warn_storage_follows(c: Checks, i: int, f, p, servers: int) -> None:
    """Without a plan the storage servers' addresses are numbered after the compute nodes present:
    say how many a compute node (or leaf) added would move, as the out-of-band block warning does."""
    from fabgen.spec.model import follows_compute

    real = c.guid_maps.get(f.name, {})
    given = sum(1 for host, _, model in c.storage.get(f.name, []) for nic in model.nics if (host, nic.rdma) in real)
    per_node, per_leaf = follows_compute(f, p, servers, given)
    if not per_node and not per_leaf:
        return
    moved = [f"adding a compute node moves their {_listed(per_node)}"] if per_node else []
    moved += [f"adding a compute leaf moves their {_listed(per_leaf)}"] if per_leaf else []
    c.warner(f.name)(("fabrics", i), f"fabric '{f.name}' has no planned_nodes, so its {servers} storage servers are "
                     f"numbered after its compute nodes: {'; '.join(moved)}; set planned_nodes to the size the "
                     "compute nodes will reach, or accept the re-addressing")


def _warn_assumed_model(c: Checks, i: int, f, p) -> None:
    """A plan's absent nodes are counted as the last present node's model (topology/build.py
    `stand_in`) in bom-later.csv: say so where the present nodes mix models, whose later rows
    (NICs, optics, cables) then hold only if the absent nodes are of that one."""
    members = c.members.get(f.name, [])
    models = sorted({model.key for _, _, model in members})
    if not p.planned or len(models) < 2:
        return
    host, group, model = members[-1]
    listed = ", ".join(models[:-1]) + " and " + models[-1]
    c.warner(f.name)(("fabrics", i, "planned_nodes"), f"the present compute nodes mix {listed}; bom-later.csv and "
                     f"report.md's 'Bought later' count the plan's {p.nodes - len(members):,} absent nodes as "
                     f"{model.key}, the model of the last present node ({host}, group '{group}'): if they will be "
                     "of another, their NICs, optics and cables differ from those rows")


def _listed(counts: dict[str, int]) -> str:
    parts = [f"{n:,} {what}" for what, n in counts.items()]
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def _check_host_routing(c: Checks) -> None:
    """BGP to the host: storage and in-band fabrics with a /31 per port (the sessions run over them),
    one such fabric per node group (a node runs one BGP speaker with one ASN)."""
    bgp_of: dict[str, str] = {}
    for i, f in enumerate(c.inv.fabrics):
        if f.ethernet is not None and f.ethernet.host_routing != "bgp" and "host" in f.ethernet.asn.model_fields_set:
            c.report(("fabrics", i, "ethernet", "asn", "host"), "asn.host numbers the nodes' BGP speakers, which run "
                     "with host_routing: bgp only; without it nothing reads asn.host: remove it", key=True)
        if f.ethernet is None or f.ethernet.host_routing != "bgp":
            continue
        where = ("fabrics", i, "ethernet", "host_routing")
        if f.role not in ("storage", "inband"):
            c.report(where, f"BGP to the host is for storage and inband fabrics (this one is {f.role}): compute "
                     "rails keep one address and routing table per port")
        elif f.ethernet.host_addressing != "p2p":
            c.report(where, "BGP to the host runs over a /31 per port: set host_addressing: p2p")
        for g in f.node_groups:
            if g in bgp_of and bgp_of[g] != f.name:
                c.report(where, f"node group '{g}' already runs BGP to fabric '{bgp_of[g]}': a node has one BGP "
                         "speaker and one ASN, so BGP to the host on one of its fabrics")
                break
            bgp_of[g] = f.name


def check_management_and_platform(c: Checks) -> None:
    """Each fabric's platform values and its switch management network."""
    from fabgen.inventory.management import check_management
    from fabgen.inventory.platform import check_platform

    for i, f in enumerate(c.inv.fabrics):
        warn = c.warner(f.name)
        check_platform(i, f, c.report, warn)
        if f.management is not None and f.name in c.plans:
            p = c.plans[f.name]
            raw = c.loaded.data["fabrics"][i]
            bare = isinstance(raw, dict) and isinstance(raw.get("management"), str)
            if f.role == "oob":  # the access switches and every BMC port of the plan
                layout = c.managed[f.name]
                check_management(i, f, layout.planned_switches + layout.bmc_places, bare, c.report, warn, c.taken,
                                 "access switches, BMCs and their gateway", c.inv.baseline)
            else:
                check_management(i, f, f.planes * (p.leaves + p.spines + p.cores), bare, c.report, warn, c.taken,
                                 site=c.inv.baseline)
                check_plane_parts(i, f, p.leaves + p.spines + p.cores, bare, c.report)


def check_plane_parts(i: int, f: Fabric, per_plane: int, given_as_text: bool, report: Report) -> None:
    """A multi-plane fabric's management prefix is cut like its pools (inventory/ethernet.py
    `plane_slice`): plane p's switches take the addresses after the start of its part, skipping the
    gateway, so no plane's addresses depend on another's size. Each part must hold its plane."""
    import ipaddress

    from fabgen.inventory.management import gateway_of

    m = f.management
    if m is None or f.planes == 1:
        return
    try:
        net = ipaddress.IPv4Network(m.prefix)
    except ValueError:
        return  # reported by check_management
    if net.num_addresses - 2 < f.planes * per_plane + 1:
        return  # too small for every plane: reported by check_management
    size = net.num_addresses // f.planes
    gateway, base = gateway_of(m), int(net.network_address)
    for p in range(f.planes):
        first = base + p * size
        top = first + per_plane + (first < gateway <= first + per_plane)
        room = first + size - 1 - (p == f.planes - 1)  # the broadcast address is no switch's
        if top > room:
            need = per_plane + 2 + (p == f.planes - 1)
            shortest = 32 - max(0, (need * f.planes - 1).bit_length())
            report(("fabrics", i, "management") if given_as_text else ("fabrics", i, "management", "prefix"),
                   f"{net} gives each of its {f.planes} planes {size} addresses (plane p from the prefix's start + p x "
                   f"{size}); plane {p + 1}'s {per_plane} switches need {top - first}" +
                   (" with the gateway" if first < gateway <= top else "") + f": use a /{shortest} or shorter")
            return
