"""Every address of an Ethernet fabric, per device and interface: the plan an IPAM imports and
what `fabgen diff` reads for address and ASN changes.

Read off the allocation (addressing.py decides; this only lists), in the names each device
uses: switch ports by their real names, the loopback and host VLAN interface as the platform
names them, node NICs by the netdev their netplan configures.
"""

from __future__ import annotations

from typing import Any

from fabgen.context import Context
from fabgen.intent.qos import options
from fabgen.intent.switches import HOST_VLAN
from fabgen.spec.catalog import eth_netdev
from fabgen.spec.platforms import routed

LOOPBACK = {name: p.loopback for name, p in routed().items()}
SVI = {name: p.svi for name, p in routed().items() if p.svi is not None}  # every routed platform names one
UNNUMBERED = {name for name, p in routed().items() if p.unnumbered}  # BGP unnumbered: no link addresses


def host_netdevs(f: Any) -> dict[str, dict[str, str]]:
    """node -> {RDMA device: its port's name in Ethernet mode} for the nodes of fabric `f`: what
    addresses.csv, the netplans and the node's LLDP agent call the port. The names follow the node
    model, so they are derived once per model."""
    by_model: dict[int, dict[str, str]] = {}
    for h in f.hosts:
        if id(h.model) not in by_model:
            by_model[id(h.model)] = {n.rdma: eth_netdev(n.netdev) if n.netdev else n.rdma for n in h.model.nics}
    return {h.name: by_model[id(h.model)] for h in f.hosts}


def oob_rows(ctx: Context) -> list[list[Any]]:
    """The out-of-band network's addresses: each access switch's on the management VLAN (the routed
    design: `routed_access_rows`), then every BMC port's, in cabling order (a managed switch's
    management address is its own fabric's)."""
    f, alloc = ctx.fabric, ctx.allocation
    plen = f.spec.management.prefix.split("/")[1] if f.spec.management else "32"
    svi = SVI["nvue"].format(vlan=f.spec.oob_vlan)
    r = ctx.oob_routed
    rows: list[list[Any]] = routed_access_rows(ctx, svi) if r is not None and r.fabric == f.name else [
        [s.name, s.role, "", svi, f"{alloc.management[s.name]}/{plen}", "", ""] for s in f.switches]
    for idx, lk in enumerate(f.links):
        if idx in alloc.link_ips:
            ip, _, _ = alloc.link_ips[idx]
            rows.append([lk.a, "bmc", "", lk.a_port, f"{ip}/{plen}", lk.z, lk.z_port])
    return rows


def routed_access_rows(ctx: Context, svi: str) -> list[list[Any]]:
    """A routed out-of-band network's access switches (oob_design routed, addressing.py `RoutedOob`),
    each with its ASN: their loopbacks (router-id, VTEP), the anycast gateway they carry on the
    management VLAN, their own addresses there, then the VRF's loopbacks (oob_routed.vrf_loopbacks)."""
    f, r = ctx.fabric, ctx.oob_routed
    acc = r.access
    rows: list[list[Any]] = [[s.name, s.role, acc[s.name]["asn"], LOOPBACK["nvue"], f"{acc[s.name]['loopback']}/32",
                              "", ""] for s in f.switches]
    rows.append(["oob-gateway", "anycast", "", svi, f"{r.gateway}/{r.prefix_len}", "", ""])
    rows += [[s.name, s.role, acc[s.name]["asn"], svi, f"{acc[s.name]['svi_ip']}/{r.prefix_len}", "", ""]
             for s in f.switches]
    rows += [[s.name, s.role, acc[s.name]["asn"], r.vrf, f"{acc[s.name]['vrf_loopback']}/32", "", ""]
             for s in f.switches if "vrf_loopback" in acc[s.name]]
    return rows


def routed_pair_rows(ctx: Context) -> list[list[Any]]:
    """The north-south pair's side of a routed out-of-band network: each leaf's own address on the
    management VLAN (its SVI in the out-of-band VRF, the prefix's top two) and the VRF's loopback
    (oob_routed.vrf_loopbacks). The anycast gateway both ends carry is the out-of-band network's
    row (`routed_access_rows`): an anycast row here would stand for every leaf of the fabric."""
    f, alloc, r = ctx.fabric, ctx.allocation, ctx.oob_routed
    if r is None or r.northsouth != f.name:
        return []
    svi = SVI[f.spec.platform].format(vlan=r.vlan)
    return [*([p["name"], "leaf", alloc.asns[p["name"]], svi, f"{p['svi_ip']}/{r.prefix_len}", "", ""] for p in r.pair),
            *([p["name"], "leaf", alloc.asns[p["name"]], r.vrf, f"{p['vrf_loopback']}/32", "", ""]
              for p in r.pair if "vrf_loopback" in p)]


def address_rows(ctx: Context) -> list[list[Any]]:
    """One row per configured address: each switch's loopback, then every link's ends in cabling
    order (a leaf's host VLAN interface where its first host port appears)."""
    f, alloc = ctx.fabric, ctx.allocation
    if f.spec.role == "oob":
        return oob_rows(ctx)
    platform = f.spec.platform
    role = {s.name: s.role for s in f.switches}
    asn = alloc.asns
    netdev = host_netdevs(f)
    rows: list[list[Any]] = [[s.name, s.role, asn[s.name], LOOPBACK[platform], f"{alloc.loopbacks[s.name]}/32", "", ""]
                             for s in f.switches]
    svi_done: set[str] = set()
    svi = SVI[platform].format(vlan=HOST_VLAN)
    t, o = alloc.tenants, alloc.overlay
    for idx, lk in enumerate(f.links):
        if t is not None and lk.tier == "node-leaf":
            continue  # bond legs carry no address: the tenants' rows below
        a_ip, z_ip, plen = alloc.link_ips[idx]
        if lk.tier == "node-leaf":
            nic = netdev[lk.a][lk.a_port]
            rows.append([lk.a, "node", "", nic, f"{a_ip}/{plen}", lk.z, lk.z_port])
            if o is not None:
                continue  # an access port of the GPU VLAN: the gateway is on the SVIs (overlay_rows)
            if lk.z not in alloc.leaf_subnets:
                rows.append([lk.z, role[lk.z], asn[lk.z], lk.z_port, f"{z_ip}/{plen}", lk.a, nic])
            elif lk.z not in svi_done:
                svi_done.add(lk.z)
                rows.append([lk.z, role[lk.z], asn[lk.z], svi, f"{z_ip}/{plen}", "", ""])
            continue
        if platform not in UNNUMBERED:
            rows.append([lk.a, role[lk.a], asn[lk.a], lk.a_port, f"{a_ip}/{plen}", lk.z, lk.z_port])
            rows.append([lk.z, role[lk.z], asn[lk.z], lk.z_port, f"{z_ip}/{plen}", lk.a, lk.a_port])
    if t is not None:
        rows += tenant_rows(ctx)
    if o is not None:
        rows += overlay_rows(ctx)
    return rows


def overlay_rows(ctx: Context) -> list[list[Any]]:
    """The GPU overlay's (host_addressing evpn) switch side: each segment's (the plane's, or each
    rail's) anycast gateway on every leaf's SVI, then each leaf's own SVI address (NVUE's VRR needs
    one); the NICs' addresses are their ports' rows, the far end the leaf's access port."""
    f, alloc = ctx.fabric, ctx.allocation
    o = alloc.overlay
    assert o is not None
    spec = options(ctx).overlay
    rows: list[list[Any]] = []
    for seg in o.segments:
        svi = SVI[f.spec.platform].format(vlan=seg.vlan)
        rows += [["gpu-gateway", "anycast", "", svi, f"{seg.gateway}/{seg.prefix}", "", ""],
                 *([s.name, "leaf", alloc.asns[s.name], svi, f"{seg.leaves[s.name]}/{seg.prefix}", "", ""]
                   for s in f.by_role("leaf"))]
    if f.spec.platform == "nvue":  # the GPU VRF's loopback on each leaf: on the VRF's own device
        rows += [[s.name, "leaf", alloc.asns[s.name], spec.vrf, f"{o.loopbacks[s.name]}/32", "", ""]
                 for s in f.by_role("leaf") if s.name in o.loopbacks]
    return rows


def tenant_rows(ctx: Context) -> list[list[Any]]:
    """A northsouth fabric's overlay addresses: each tenant's anycast gateway, each leaf's own SVI
    address (NVUE's VRR needs one), then per node its bond's members (no address; the leaf port
    each is cabled to, as for every node port), its bond (in-band, untagged) and its VLANs, in node order."""
    from fabgen.intent.northsouth import group_tenants, tenant_interfaces, tenants

    f, alloc = ctx.fabric, ctx.allocation
    t = alloc.tenants
    assert t is not None
    svi = SVI[f.spec.platform]
    rows: list[list[Any]] = []
    overlay = tenants(ctx)
    for k, ten in enumerate(overlay):
        rows.append([f"{ten['role']}-gateway", "anycast", "", svi.format(vlan=ten["vlan"]),
                     f"{ten['gateway']}/{t.prefix}", "", ""])
        if f.spec.platform == "nvue":
            rows += [[s.name, "leaf", alloc.asns[s.name], svi.format(vlan=ten["vlan"]), f"{ips[k]}/{t.prefix}",
                      "", ""] for s in f.by_role("leaf") for ips in [t.leaves[s.name]]]
            rows += [[s.name, "leaf", alloc.asns[s.name], ten["vrf"], f"{t.loopbacks[s.name][k]}/32", "", ""]
                     for s in f.by_role("leaf") if s.name in t.loopbacks]  # northsouth.vrf_loopbacks
    border = f.spec.ethernet.northsouth.border if f.spec.ethernet is not None else None
    if border is not None and f.spec.platform == "nvue":  # northsouth.border.loopback: the border VRF's own
        rows += [[s.name, "leaf", alloc.asns[s.name], border.vrf, f"{t.border_loopbacks[s.name]}/32", "", ""]
                 for s in f.by_role("leaf") if s.name in t.border_loopbacks]
    rows += routed_pair_rows(ctx)  # oob_design routed: the pair's addresses in the out-of-band VRF
    netdev = host_netdevs(f)
    members: dict[str, list[list[Any]]] = {}
    for lk in f.links:  # each bond member: no address of its own, its far end (what LLDP checks)
        if lk.tier == "node-leaf":
            members.setdefault(lk.a, []).append([lk.a, "node", "", netdev[lk.a][lk.a_port], "", lk.z, lk.z_port])
    for h in f.hosts:
        rows += members.get(h.name, [])
        where = tenant_interfaces(overlay, len(h.model.nics), group_tenants(ctx.groups, h.group))
        rows += [[h.name, "node", "", where[k], f"{t.nodes[h.name][k]}/{t.prefix}", "", ""]
                 for k in range(len(overlay)) if where[k]]
    return rows
