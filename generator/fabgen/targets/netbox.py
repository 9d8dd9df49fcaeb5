"""NetBox: the cabling plan as CSV files for NetBox's bulk import, so a DCIM holds every device,
port and cable before anything is racked (docs/netbox.md).

One file per object type under OUT/netbox/, numbered in import order (each refers only to
objects the files before it create): manufacturers, device roles, device types, a site,
devices, interfaces, cables. Column names are the fields of NetBox's import forms
(netbox/dcim/forms/bulk_import.py, NetBox 4.6: ManufacturerImportForm, DeviceRoleImportForm,
DeviceTypeImportForm, SiteImportForm, DeviceImportForm, InterfaceImportForm, CableImportForm);
choice values are those of netbox/dcim/choices.py (interface types such as `400gbase-x-osfp`
and `infiniband-ndr`, cable types `mmf`/`smf`/`dac-passive`, status `planned`).

Decisions: every object is `planned` (the plan precedes the racking); the site is one
placeholder named after the cluster and racks are left to the DCIM (no rack positions are
known here); only cabled ports are listed as interfaces, and device types carry no height (a
device type's port list and height belong to NetBox's device-type library). Names are fabgen's
device and port names, which never change when nodes are added (docs/growth.md), so a later
export adds rows and never renames one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import partial
from typing import Any

from fabgen.context import Context
from fabgen.formats import csvout
from fabgen.intent.management import OOB_UPLINK_MEDIA, OOB_UPLINK_TIER, oob_uplinks
from fabgen.intent.northsouth import BORDER_TIER, border_cabling, border_uplinks
from fabgen.targets.base import CLUSTER, Deferred, Target

COLUMNS = {
    "01-manufacturers.csv": ["name", "slug"],
    "02-device-roles.csv": ["name", "slug", "color"],
    "03-device-types.csv": ["manufacturer", "model", "slug", "part_number", "u_height"],
    "04-sites.csv": ["name", "slug", "status"],
    "05-racks.csv": ["site", "name", "status", "width", "u_height", "description"],
    "06-devices.csv": ["name", "role", "manufacturer", "device_type", "site", "status", "description"],
    "07-interfaces.csv": ["device", "name", "type", "speed", "enabled", "description"],
    "08-cables.csv": ["side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
                      "type", "status", "label"],
    "09-vrfs.csv": ["name", "description"],
    # no `vrf` column: NetBox's interface import finds a VRF by its route distinguisher, which EVPN
    # switches derive per switch (auto RD); the addresses carry their VRF by name
    "10-virtual-interfaces.csv": ["device", "name", "type", "parent", "enabled", "description"],
    "11-ip-addresses.csv": ["address", "vrf", "status", "role", "device", "interface", "description"],
}
DEVICES, INTERFACES, CABLES = "06-devices.csv", "07-interfaces.csv", "08-cables.csv"
VIRTUAL, ADDRESSES = "10-virtual-interfaces.csv", "11-ip-addresses.csv"
# files written a fabric at a time (targets.Deferred, csvout.dumps_chunks)
CHUNKED = (INTERFACES, CABLES, VIRTUAL, ADDRESSES)
# NetBox's IPAddressStatusChoices has no `planned`: an address the plan gives and no device carries
# yet is `reserved` (ipam/choices.py); set it to active once the device is up
ADDRESS_STATUS = "reserved"
# NetBox needs a rack's width and height where no rack type is named: an NVL72 rack is a 19-inch
# rack of 48U (NVIDIA's MGX rack; no primary source was readable where this was entered: check the
# rack's own datasheet before racking)
RACK_WIDTH, RACK_UNITS = "19", "48"
ROLE_COLORS = {"leaf": "2196f3", "spine": "3f51b5", "core": "673ab7", "gpu-node": "4caf50",
               "storage-node": "ff9800", "site-router": "607d8b"}
# northsouth.border's site router: a device of role site-router, its make and model the site's (a
# placeholder type of no height: the plan neither buys nor racks it), its ports named as cabling.csv's
ROUTER_ROLE = "site-router"
ROUTER_VENDOR, ROUTER_TYPE = "Site", "site-router"
IB_TYPES = {200: "infiniband-hdr", 400: "infiniband-ndr", 800: "infiniband-xdr"}
ETH_TYPES = {("osfp", 400): "400gbase-x-osfp", ("osfp", 800): "800gbase-x-osfp",
             ("qsfp112", 400): "400gbase-x-qsfp112", ("qsfpdd", 400): "400gbase-x-qsfpdd",
             ("qsfpdd", 800): "800gbase-x-qsfpdd", ("qsfp56", 200): "200gbase-x-qsfp56",
             ("qsfp28", 100): "100gbase-x-qsfp28", ("rj45", 1): "1000base-t"}
# cabling.csv's media -> NetBox's CableTypeChoices (dcim/choices.py): the fibres fabgen's BOM names are
# OM4 multimode and OS2 single-mode (spec/media.py)
CABLE_TYPES = {"mmf": "mmf-om4", "smf": "smf-os2", "fr4": "smf-os2", "dac": "dac-passive", "acc": "dac-active",
               "aoc": "aoc", "utp": "cat6"}


def slug(text: str) -> str:
    """NetBox slugs: lower-case letters, digits, hyphens and underscores."""
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-")


CAGES = ("qsfp112", "qsfpdd", "qsfp56", "qsfp28", "osfp", "rj45")  # longest first: 'osfp1' is a node's first OSFP cage


def interface_type(kind: str, cage: str, speed: int) -> str:
    """The NetBox interface type of a port: InfiniBand by rate, Ethernet by speed and cage form
    factor; `other` where NetBox has no such type."""
    if kind == "infiniband":
        return IB_TYPES.get(speed, "other")
    name = re.sub(r"[^a-z0-9]", "", cage.lower())
    form = next((c for c in CAGES if name.startswith(c)), name)
    return ETH_TYPES.get((form, speed), "other")


def structure(contexts: list[Context], structured: list | None = None) -> dict[str, Any]:
    """Every row of every file, in import order; devices and ports once each across fabrics."""
    cluster = contexts[0].cluster if contexts else ""
    rows: dict[str, list[list[Any]]] = {name: [] for name in COLUMNS}
    types: dict[str, tuple[str, str, int]] = {}  # model -> (manufacturer, part, height)
    roles: set[str] = set()
    devices: dict[str, list[Any]] = {}
    racks: dict[str, str] = {}  # an NVL72 tray's NVLink rack -> the fabric that names it
    # a northsouth fabric's bonds (NetBox LAGs) add a `lag` column: only where a fabric has them,
    # so every other cluster's files keep their columns
    lagged = any(c.allocation.tenants is not None for c in contexts)
    for ctx in contexts:
        f = ctx.fabric
        sw = f.switch_model
        types[sw.part] = (sw.vendor, sw.part, sw.rack_units)
        for s in f.switches:
            roles.add(s.role)
            devices.setdefault(s.name, [s.name, s.role, sw.vendor, sw.part, cluster, "planned",
                                        f"{f.name} {s.role}", ""])
        for h in f.hosts:
            if h.role == "switch":  # a switch's management port: the switch is a device of its own fabric
                continue
            role = "storage-node" if h.role == "storage" else "gpu-node" if h.model.gpus else "server"
            roles.add(role)
            types[h.model.part] = (h.model.vendor, h.model.part, h.model.rack_units)
            if h.rack:
                racks.setdefault(h.rack, f.inventory_name)
            rack = f", NVLink rack {h.rack}" if h.rack else ""  # an NVL72 tray's rack (description), for racking
            devices.setdefault(h.name, [h.name, role, h.model.vendor, h.model.part, cluster, "planned",
                                        f"{f.inventory_name} node group {h.group}{rack}", h.rack or ""])
        for router in sorted({u[2] for u in border_uplinks(f)}):
            roles.add(ROUTER_ROLE)
            types[ROUTER_TYPE] = (ROUTER_VENDOR, ROUTER_TYPE, 0)
            devices.setdefault(router, [router, ROUTER_ROLE, ROUTER_VENDOR, ROUTER_TYPE, cluster, "planned",
                                        f"the site's router: border uplinks of {f.name}", ""])
    vendors = sorted({v for v, _, _ in types.values()})
    rows["01-manufacturers.csv"] = [[v, slug(v)] for v in vendors]
    rows["02-device-roles.csv"] = [[r, slug(r), ROLE_COLORS.get(r, "9e9e9e")] for r in sorted(roles)]
    rows["03-device-types.csv"] = [[v, part, slug(part), part, units] for part, (v, _, units) in sorted(types.items())]
    rows["04-sites.csv"] = [[cluster, slug(cluster), "planned"]] if contexts else []
    rows["05-racks.csv"] = [[cluster, r, "planned", RACK_WIDTH, RACK_UNITS, f"NVLink rack of {fab}"]
                            for r, fab in racks.items()]
    # the rack column only where the plan knows racks (NVL72 clusters): other clusters keep their columns
    rows[DEVICES] = list(devices.values()) if racks else [d[:-1] for d in devices.values()]
    rows["09-vrfs.csv"] = _vrfs(contexts)
    # the large files a fabric at a time, as they are written (targets.Deferred, csvout.dumps_chunks):
    # at 131,072 GPUs of four planes the interfaces and cables are 4.8 million rows, 630 MB held at once
    rows[INTERFACES] = Deferred(partial(_interfaces, lagged), contexts)  # type: ignore[assignment]  # written as a list's rows
    rows[CABLES] = Deferred(_cables, contexts)  # type: ignore[assignment]  # written as a list's rows
    ethernet = [c for c in contexts if c.fabric.spec.kind != "infiniband"]
    rows[VIRTUAL] = Deferred(_virtual, ethernet)  # type: ignore[assignment]  # written as a list's rows
    rows[ADDRESSES] = Deferred(_addresses, ethernet)  # type: ignore[assignment]  # written as a list's rows
    return {"rows": rows, "lag": lagged, "rack": bool(racks)}


def _vrfs(contexts: list[Context]) -> list[list[str]]:
    """The northsouth tenants' VRFs and the GPU overlay's, once each by name across fabrics (NetBox
    finds a VRF by name)."""
    from fabgen.intent.northsouth import border, tenants
    from fabgen.intent.qos import options

    out: dict[str, str] = {}
    for ctx in contexts:
        if ctx.allocation.tenants is not None:
            for ten in tenants(ctx):
                out.setdefault(ten["vrf"], f"{ten['role']} tenant of {ctx.fabric.name}")
        b = border(ctx) if ctx.allocation.tenants is not None else None
        if b is not None:  # northsouth.border's VRF
            out.setdefault(b["vrf"], f"border VRF of {ctx.fabric.name} (to {b['router']})")
        if ctx.allocation.overlay is not None:  # the GPU overlay: one VRF name on every plane, as NVIDIA's
            out.setdefault(options(ctx).overlay.vrf, "GPU tenant of every plane (host_addressing evpn)")
        r = ctx.oob_routed
        if r is not None:  # oob_design routed: the management VLAN's VRF on the access switches and the pair
            out.setdefault(r.vrf, f"out-of-band VRF of {r.fabric} (routed to the pair of {r.northsouth})")
    return [[name, text] for name, text in out.items()]


def _interfaces(lagged: bool, ctx: Context) -> list[tuple[str, ...]]:
    """A fabric's interfaces: its LAGs, then each link's two ports (every port is cabled once); with
    `lagged` (a cluster with bonds anywhere), each interface's LAG, "" for none."""
    f = ctx.fabric
    # Port types follow the node model's cage or the switch model: worked out once per model,
    # not per link (at 32k GPUs that is 200,000 ports).
    kind, speed = f.spec.kind, f.plan.speed
    switch_type = interface_type(kind, f.switch_model.cage_type, speed)
    node_types: dict[int, dict[str, str]] = {}
    for h in f.hosts:
        if id(h.model) not in node_types:
            node_types[id(h.model)] = {n.rdma: interface_type(kind, n.cage, n.speed) for n in h.model.nics}
    port_type = {h.name: node_types[id(h.model)] for h in f.hosts}
    lags = _lags(ctx) if ctx.allocation.tenants is not None else {}
    ports: list[tuple[str, ...]] = [(dev, lag, "lag", "", "true", f"{f.name} bond", "")
             for dev, lag in sorted(set(lags.values()), key=_lag_order(f))]
    if not f.plan.mixed:
        _link_ports(f.links, port_type, switch_type, str(speed * 1_000_000), _tiers(f), lags if lagged else None,
                    ports)
    else:
        start = 0  # the tiers at their own speeds (cabling.<tier>.speed): each run of one tier's links at its own
        for end in range(1, len(f.links) + 1):
            if end == len(f.links) or f.links[end].tier != f.links[start].tier:
                s = f.links[start].speed
                _link_ports(f.links[start:end], port_type, interface_type(kind, f.switch_model.cage_type, s),
                            str(s * 1_000_000), _tiers(f), lags if lagged else None, ports)
                start = end
    tier = f"{f.name} {BORDER_TIER}"
    # at northsouth.border.speed, else the node ports'; the router's: type `other`
    for sw, port, router, rport, bspeed in border_uplinks(f):
        btype = switch_type if bspeed == speed else interface_type(kind, f.switch_model.cage_type, bspeed)
        ports += [(sw, port, btype, str(bspeed * 1_000_000), "true", tier, *(("",) if lagged else ())),
                  (router, rport, "other", str(bspeed * 1_000_000), "true", tier, *(("",) if lagged else ()))]
    if ctx.oob_routed is not None:  # a routed out-of-band network's uplinks, both ends, each at its own speed
        tier = f"{f.name} {OOB_UPLINK_TIER}"
        pkind, pcage, pspeed = ctx.oob_routed.pair_port
        ptype = interface_type(pkind, pcage, pspeed)
        for a, ap, z, zp, up in oob_uplinks(ctx):
            ports += [(a, ap, interface_type(kind, "QSFP28", up), str(up * 1_000_000), "true", tier,
                       *(("",) if lagged else ())),
                      (z, zp, ptype, str(pspeed * 1_000_000), "true", tier, *(("",) if lagged else ()))]
    return ports


def _tiers(f) -> dict[str, str]:
    return {t: f"{f.name} {t}" for t in ("node-leaf", "leaf-spine", "spine-core", "leaf-leaf")}


def _link_ports(links: list, port_type: dict[str, dict[str, str]], switch_type: str, kbps: str,
                tiers: dict[str, str], lags: dict[tuple[str, str], tuple[str, str]] | None, ports: list) -> None:
    """Each link's two interfaces; with `lags`, each one's LAG. Without, no LAG lookup per port
    (0.5 s of 1.6 million links at 131,072 GPUs of four planes)."""
    get = port_type.get
    append = ports.append
    for lk in links:
        a, a_port, z, z_port = lk.a, lk.a_port, lk.z, lk.z_port
        node = get(a)
        tier = tiers[lk.tier]
        a_row: tuple[str, ...] = (a, a_port, switch_type if node is None else node[a_port], kbps, "true", tier)
        z_row: tuple[str, ...] = (z, z_port, switch_type, kbps, "true", tier)
        if lags is not None:
            a_row += (lags.get((a, a_port), ("", ""))[1],)
            z_row += (lags.get((z, z_port), ("", ""))[1],)
        append(a_row)
        append(z_row)


def _cables(ctx: Context) -> list[tuple[str, ...]]:
    """A fabric's cables, one per link; then northsouth.border's uplinks to the site router."""
    out: list[tuple[str, ...]] = [
        (lk.a, "dcim.interface", lk.a_port, lk.z, "dcim.interface", lk.z_port, CABLE_TYPES.get(lk.media, ""),
         "planned", f"{lk.a}:{lk.a_port}--{lk.z}:{lk.z_port}") for lk in ctx.fabric.links]
    border = border_cabling(ctx.fabric)
    ups = [(a, ap, z, zp, "", OOB_UPLINK_MEDIA, "") for a, ap, z, zp, _ in oob_uplinks(ctx)]
    return out + [(a, "dcim.interface", ap, z, "dcim.interface", zp, CABLE_TYPES.get(m, ""), "planned",
                   f"{a}:{ap}--{z}:{zp}") for a, ap, z, zp, _, m, _ in (*border, *ups)]


def _lags(ctx: Context) -> dict[tuple[str, str], tuple[str, str]]:
    """(device, port) -> (device, LAG) of a northsouth fabric: each node's two ports in its bond (a
    two-bond server's in two),
    each leaf port in the bond of its own that carries the node's Ethernet segment (NVUE `bond<n>`,
    EOS `Port-Channel<n>`, intent/switches.py)."""
    from fabgen.intent.northsouth import bond_index, host_bonds

    f = ctx.fabric
    numbers = f.switch_model.port_numbers(f.plan.speed)
    prefix = "Port-Channel" if f.spec.platform == "eos" else "bond"
    bond_of = {(h.name, nic.rdma): host_bonds(len(h.model.nics))[bond_index(k, len(h.model.nics))]
               for h in f.hosts for k, nic in enumerate(h.model.nics)}  # a two-bond server's bond0 and bond1
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for lk in f.links:
        if lk.tier == "node-leaf":
            out[lk.a, lk.a_port] = (lk.a, bond_of[lk.a, lk.a_port])
            out[lk.z, lk.z_port] = (lk.z, f"{prefix}{numbers[lk.z_port]}")
    return out


def _lag_order(f):
    """LAGs in device order (the fabric's hosts, then its switches), then by number."""
    place = {h.name: k for k, h in enumerate(f.hosts)}
    place.update({s.name: len(place) + k for k, s in enumerate(f.switches)})
    return lambda d: (place[d[0]], len(d[1]), d[1])




def _virtual(ctx: Context) -> list[list[str]]:
    """A fabric's interfaces that carry an address and no cable: loopbacks, SVIs, a bond's VLANs."""
    return _ip_plan(ctx, False)[0]


def _addresses(ctx: Context) -> list[list[str]]:
    """A fabric's addresses as NetBox's IP addresses, each on its device's interface (and VRF)."""
    return _ip_plan(ctx, True)[1]


def _ip_plan(ctx: Context, addresses: bool) -> tuple[list[list[str]], list[list[str]]]:
    """Both files of a fabric from its address plan (intent/addresses.py, addresses.csv), once a
    fabric: node ports by their RDMA name as the interfaces file names them, an anycast gateway on
    each leaf's SVI with role anycast, the tenants' addresses in their VRFs. A row with a far end
    is a cabled port, and so is a node's bond (a LAG of the interfaces file); the rest (loopbacks,
    SVIs, a bond's VLANs) are the virtual interfaces, told apart by name, not by a set of every
    cabled port (at 32,768 GPUs of four planes that set took a second a plane). Without
    ADDRESSES only the virtual interfaces (the two files are written a fabric at a time each, so
    holding one fabric's rows for the other file would hold them all)."""
    from fabgen.intent.addresses import LOOPBACK, address_rows, host_netdevs

    f = ctx.fabric
    by_model: dict[int, dict[str, str]] = {}  # netdev -> RDMA name, once per node model
    rdma: dict[str, dict[str, str]] = {}
    for host, ports in host_netdevs(f).items():
        rdma[host] = by_model.get(id(ports)) or by_model.setdefault(id(ports), {v: r for r, v in ports.items()})
    vrf_of = _tenant_vrfs(ctx)
    leaves = [s.name for s in f.by_role("leaf")]
    loopback = LOOPBACK.get(f.spec.platform, "")
    virtual: dict[tuple[str, str], list[str]] = {}
    ips: list[list[str]] = []
    name_of = f.name
    for dev, role, _asn, iface, addr, peer, peer_if in address_rows(ctx):
        if not addr:
            continue  # a bond member: its bond carries the address
        if role == "anycast":  # the tenant's gateway: on every leaf's SVI
            _anycast(leaves, iface, addr, vrf_of.get(("", iface), ""), (name_of, dev), virtual,
                     ips if addresses else None)
            continue
        if peer and not addresses:
            continue  # a cabled port's address: only the addresses file wants it
        node = rdma.get(dev)
        name = node.get(iface, iface) if node is not None else iface
        if node is not None:
            vrf = vrf_of.get((dev, iface), "")
            if not peer and "." in name and (dev, name) not in virtual:  # a bond's VLAN
                virtual[dev, name] = [dev, name, "virtual", name.split(".")[0], "true", name_of]
        else:
            vrf = vrf_of.get(("", iface), "")
            if not peer and (dev, name) not in virtual:  # a loopback or an SVI
                virtual[dev, name] = [dev, name, "virtual", "", "true", name_of]
        if addresses:
            lo = iface == loopback or (node is None and vrf == iface != "")  # a VRF's loopback: its own device
            ips.append([addr, vrf, ADDRESS_STATUS, "loopback" if lo else "", dev, name,
                        f"{name_of} to {peer}:{peer_if}" if peer else name_of])
    return list(virtual.values()), ips


def _anycast(leaves: list[str], svi: str, addr: str, vrf: str, names: tuple[str, str],
             virtual: dict[tuple[str, str], list[str]], ips: list[list[str]] | None) -> None:
    """A tenant's anycast gateway (NAMES: the fabric, the gateway): each leaf's SVI, and the address
    on each with role anycast (NetBox allows an anycast address more than once)."""
    for leaf in leaves:
        if (leaf, svi) not in virtual:
            virtual[leaf, svi] = [leaf, svi, "virtual", "", "true", names[0]]
        if ips is not None:
            ips.append([addr, vrf, ADDRESS_STATUS, "anycast", leaf, svi, " ".join(names)])


def _tenant_vrfs(ctx: Context) -> dict[tuple[str, str], str]:
    """(device, interface) -> its tenant's VRF on a northsouth fabric: ("", SVI) for a leaf's VLAN
    interface, (node, bond or bond VLAN) for a node's."""
    if ctx.allocation.overlay is not None:
        return _overlay_vrfs(ctx)
    if ctx.allocation.tenants is None:
        return _oob_vrfs(ctx)
    from fabgen.intent.addresses import SVI
    from fabgen.intent.northsouth import group_tenants, tenant_interfaces, tenants

    f = ctx.fabric
    overlay = tenants(ctx)
    svi = SVI[f.spec.platform]
    out = {("", svi.format(vlan=ten["vlan"])): ten["vrf"] for ten in overlay}
    if ctx.allocation.tenants.loopbacks:  # each tenant VRF's loopback, on the VRF's own device (NVUE)
        out.update({("", ten["vrf"]): ten["vrf"] for ten in overlay})
    eth = f.spec.ethernet
    border = eth.northsouth.border if eth is not None else None
    if ctx.allocation.tenants.border_loopbacks and border is not None:  # northsouth.border.loopback: likewise
        out["", border.vrf] = border.vrf
    for h in f.hosts:
        where = tenant_interfaces(overlay, len(h.model.nics), group_tenants(ctx.groups, h.group))
        out.update({(h.name, where[k]): ten["vrf"] for k, ten in enumerate(overlay) if where[k]})
    return out | _oob_vrfs(ctx)


def _oob_vrfs(ctx: Context) -> dict[tuple[str, str], str]:
    """A routed out-of-band network (oob_design routed), on its access switches and on the
    north-south pair: the management VLAN's SVI and the VRF's loopback (its own device) in its VRF."""
    from fabgen.intent.addresses import SVI

    r = ctx.oob_routed
    if r is None:
        return {}
    return {("", SVI["nvue"].format(vlan=r.vlan)): r.vrf, ("", r.vrf): r.vrf}


def _overlay_vrfs(ctx: Context) -> dict[tuple[str, str], str]:
    """The GPU overlay (host_addressing evpn): every leaf's SVIs (the plane's one, or each rail's)
    and every GPU port of the plane in the GPU VRF, where the plane's subnets live."""
    from fabgen.intent.addresses import SVI, host_netdevs
    from fabgen.intent.qos import options

    f, spec = ctx.fabric, options(ctx).overlay
    netdev = host_netdevs(f)
    assert ctx.allocation.overlay is not None
    out = {("", SVI[f.spec.platform].format(vlan=seg.vlan)): spec.vrf for seg in ctx.allocation.overlay.segments}
    if f.spec.platform == "nvue":  # the GPU VRF's loopback, on the VRF's own device
        out["", spec.vrf] = spec.vrf
    out.update({(lk.a, netdev[lk.a][lk.a_port]): spec.vrf for lk in f.links if lk.tier == "node-leaf"})
    return out


def shard(data: dict[str, Any], part: int, parts: int) -> dict[str, Any]:
    """The cables file in part 1, everything else in part 0 (the two big files apart; one part:
    all of them)."""
    names = [n for n in COLUMNS if part == (1 % parts if n == CABLES else 0)]
    return {"rows": {n: data["rows"][n] for n in names}, "lag": data.get("lag", False),
            "rack": data.get("rack", False)}


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    for name, columns in COLUMNS.items():
        rows = data["rows"].get(name)
        if rows is None:  # another piece's file (`shard`)
            continue
        if name == INTERFACES and data.get("lag"):
            columns = [*columns, "lag"]
        if name == DEVICES and data.get("rack"):
            columns = [*columns, "rack"]
        # the large files: a fabric's rows at a time (Deferred, or a list of them once made)
        text = csvout.dumps_chunks(columns, rows if name in CHUNKED else [rows])
        if text is not None:  # a file with no rows is left out
            yield f"netbox/{name}", text


TARGET = Target("netbox", lambda ctx: True, structure, render, shard, scope=CLUSTER)
