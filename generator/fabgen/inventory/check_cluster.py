"""Checks across fabrics: address pools, BGP to the host, management networks and platforms."""

from __future__ import annotations

import re

from fabgen.inventory.state import Checks


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
                           c.warner(f.name), f.planes, f.role)
    _check_host_routing(c)
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
                                 "access switches, BMCs and their gateway")
            else:
                check_management(i, f, f.planes * (p.leaves + p.spines + p.cores), bare, c.report, warn, c.taken)
