"""Allocate identifiers: InfiniBand GUIDs; for Ethernet fabrics addresses and ASNs.

Every identifier follows a device's or link's place in the planned fabric (`Fabric.ordinal`,
`Link.ordinal`), never a count of what exists, so adding nodes up to the plan never moves one
(docs/growth.md). Without a plan the places are the natural order of the present fabric.

Ethernet (netaddr over the inventory's pools):
* network planes (`planes`): each pool is cut into `planes` equal, aligned parts and plane p
  numbers itself in part p exactly as a one-plane fabric numbers the whole pool
  (`plane_part`, inventory/ethernet.py `plane_slice`); each tier's ASNs of plane p start
  p strides after the tier's first (`asn_stride`: a power of ten within the tier's block). A
  plane's identifiers depend on the pool, the plane count and the device's place only, never on
  how many nodes or switches the other planes have; plane 1 is numbered as a one-plane fabric.
* loopbacks: one /32 per switch, in planned switch order (leaves, spines, cores), from the
  part's first address after its network address; the leaves' VRF loopbacks (the GPU VRF's with
  host_addressing evpn, the north-south tenants' with northsouth.vrf_loopbacks) from the part's
  last address before the broadcast down, leaf by leaf (`vrf_loopbacks`);
* switch-to-switch links: one /31 each in planned link order (each leaf's uplinks, then each
  spine's); the upper-tier end takes the even address, the lower-tier end the odd one (the
  usual leaf-spine convention);
* host-facing ports: `p2p` gives each NIC a /31 (leaf even, NIC odd) in planned NIC order
  (node by node, then the storage NICs);
  `leaf-subnet` gives each leaf a subnet sized to its host ports, the leaf takes the first
  address as gateway and the NIC on endpoint port p the address 2 + p;
  `evpn` (the GPU overlay, `Overlay`): the plane's part of the pool is one subnet stretched over
  the plane's leaves, the anycast gateway its first address, each NIC port 2 + its planned place,
  each leaf's own SVI address from the top down (the last before the broadcast is leaf 1's); with
  overlay.vlans rail the part is cut in equal aligned subnets, one a rail, each numbered so, a
  port 2 + its node's planned place in its rail's (`allocate_overlay`);
* ASNs: one per leaf (leaf + p x stride + index - 1 on plane p, 0-based); spines share one
  (spines: tier) or one per pod, cores one (cores: tier) or one per core plane, each tier's
  plane p shifted p strides too. The stride (`asn_stride`) follows the tier's first ASN and the
  next tier's above it, so editing asn.leaf/spine/core can renumber planes 2 and up (a
  configuration change `fabgen diff` shows, never growth; docs/planes.md).
* BGP to the host: each node's service address from the loopbacks pool's last address before
  the broadcast down, in planned node order (storage servers after the planned nodes), so no
  node's depends on how many switches there are; its ASN asn.host + its place. Always the whole
  pool of a one-plane fabric: BGP to the host runs on storage and in-band fabrics only, and only
  compute fabrics have planes (both refused at the key, inventory/check_cluster.py and
  check_fabrics.py), so no plane part or stride applies.

Management addresses (any fabric kind, where the inventory gives management prefixes):
switches of a fabric take its prefix's host addresses in planned switch order, skipping the
management gateway (a multi-plane fabric's prefix cut in parts like the pools); compute nodes of
a node group that group's prefix's, in node order, both from the first address after the
network address.

Synthetic GUIDs live in a locally administered EUI-64 space (first octet 0xFA has the
'local' bit set, the multicast bit clear), so they can never collide with a vendor's
real GUIDs; the report warns that they must be replaced before deployment. Layout:

    0xFAB0 | fabric number (8 bits) | type (8 bits: 01 switch, 02 channel adapter) | serial (32 bits)

Serials follow the planned order (switches as above; channel adapters by planned NIC order), so
the same inventory gives the same GUIDs and growth never changes one.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field, replace
from typing import Any

from netaddr import IPNetwork

from fabgen.inventory.ethernet import (
    asn_stride,
    border_loopbacks_only,
    host_places,
    leaf_subnet_prefix,
    plane_slice,
    rail_splits,
    vrf_loopbacks_per_leaf,
)
from fabgen.spec.model import Fabric
from fabgen.spec.schema import EthernetOptions

GUID_PREFIX = 0xFAB0
TYPE_SWITCH, TYPE_CA = 0x01, 0x02


@dataclass(frozen=True)
class Allocation:
    guids: dict[str, int] = field(default_factory=dict)  # switch name or 'host/rdma' -> node GUID
    synthetic_guids: bool = False
    loopbacks: dict[str, str] = field(default_factory=dict)  # switch -> address (a /32)
    link_ips: dict[int, tuple[str, str, int]] = field(default_factory=dict)  # link index -> (a, z, prefix length)
    leaf_subnets: dict[str, str] = field(default_factory=dict)  # leaf-subnet mode: leaf -> subnet (CIDR)
    asns: dict[str, int] = field(default_factory=dict)  # switch -> ASN
    management: dict[str, str] = field(default_factory=dict)  # device -> management address
    node_loopbacks: dict[str, str] = field(default_factory=dict)  # host_routing bgp: node -> service address
    node_asns: dict[str, int] = field(default_factory=dict)  # host_routing bgp: node -> its ASN
    tenants: Tenants | None = None  # role northsouth: the bonds' and leaves' addresses, the segments
    overlay: Overlay | None = None  # host_addressing evpn: the plane's GPU subnet, its gateway, the leaves' SVIs


@dataclass(frozen=True)
class Segment:
    """One GPU VLAN of a plane (host_addressing evpn): its VLAN and VNI, its subnet, the anycast
    gateway (the subnet's first address) and each leaf's own SVI address (from the top down)."""

    vlan: int
    vni: int
    subnet: str  # CIDR
    prefix: int
    gateway: str
    leaves: dict[str, str]  # leaf -> its own SVI address


@dataclass(frozen=True)
class Overlay:
    """host_addressing evpn: a plane's GPU VLANs (`segments`: one a plane, the plane's part of the
    hosts pool; or with overlay.vlans rail one a rail, that part cut in equal aligned subnets, rail
    r's the r-th), each stretched over the plane's leaves by EVPN, and each leaf's GPU VRF loopback.
    The NICs' addresses are their links' (`Allocation.link_ips`): 2 + the NIC's planned place in its
    segment (the link's planned place; with rails, the node's). Places in the plan only, so growth
    never moves one."""

    segments: tuple[Segment, ...]
    loopbacks: dict[str, str] = field(default_factory=dict)  # leaf -> the GPU VRF's loopback (`vrf_loopbacks`)


@dataclass(frozen=True)
class Tenants:
    """A northsouth fabric's overlay addresses (docs/northsouth.md): the hosts pool's lower half is
    the storage subnet, the upper half the in-band subnet, each stretched over every leaf by EVPN.
    In each: the anycast gateway first, then one address per planned node place (its bond),
    storage servers after the planned nodes; the leaves' own SVI addresses from the top down (the
    last before the broadcast is leaf 1's). Every value is a place in the plan or counts from its
    own end, so adding nodes, storage servers or their leaves only adds."""

    prefix: int  # of both subnets
    subnets: tuple[str, str]  # storage, in-band (CIDR)
    gateways: tuple[str, str]
    leaves: dict[str, tuple[str, str]]  # leaf -> its SVI addresses
    nodes: dict[str, tuple[str, str]]  # node -> its bond's addresses
    segments: dict[str, int]  # node -> Ethernet segment local id (its place + 1), the same on both leaves
    # leaf -> its storage and in-band VRFs' loopbacks (northsouth.vrf_loopbacks)
    loopbacks: dict[str, tuple[str, str]] = field(default_factory=dict)
    # leaf -> its border VRF's loopback (northsouth.border.loopback: the leaf's VRF loopback after the tenants')
    border_loopbacks: dict[str, str] = field(default_factory=dict)


def allocate_tenants(fabric: Fabric, pool: str, vrf_lo: dict[str, tuple[str, ...]] | None = None) -> Tenants:
    net = IPNetwork(pool)
    prefix = net.prefixlen + 1
    half = 1 << (32 - prefix)
    bases = (net.first, net.first + half)
    plan = fabric.plan
    members = sum(1 for h in fabric.hosts if h.role == "compute")

    def pair(offset: int) -> tuple[str, str]:
        return dotted_quad(bases[0] + offset), dotted_quad(bases[1] + offset)

    leaves = {s.name: pair(half - 2 - (s.index - 1)) for s in fabric.by_role("leaf")}
    nodes: dict[str, tuple[str, str]] = {}
    segments: dict[str, int] = {}
    for h in fabric.hosts:
        place = h.index - 1 if h.role == "compute" else plan.server_place + h.index - 1 - members
        nodes[h.name] = pair(2 + place)
        segments[h.name] = place + 1
    subnets = (f"{dotted_quad(bases[0])}/{prefix}", f"{dotted_quad(bases[1])}/{prefix}")
    ns = (fabric.spec.ethernet.northsouth if fabric.spec.ethernet is not None else None)
    tenant_lo = bool(ns is not None and ns.vrf_loopbacks)
    loopbacks = {name: (ips[0], ips[1]) for name, ips in (vrf_lo or {}).items()} if tenant_lo else {}
    # the border leaves' alone (those that hold nodes: intent/northsouth.py `border_switches`); with the
    # tenants' loopbacks a storage pair's leaves keep their unused third slot, so that no storage leaf's
    # tenant loopbacks move (inventory/ethernet.py `border_loopbacks_only`)
    holders = {s.name for s in fabric.by_role("leaf") if s.index <= plan.compute_leaves}
    border = {name: ips[2 if tenant_lo else 0] for name, ips in (vrf_lo or {}).items() if name in holders} \
        if ns is not None and ns.border is not None and ns.border.loopback else {}
    return Tenants(prefix, subnets, pair(1), leaves, nodes, segments, loopbacks, border)


def vrf_loopbacks(fabric: Fabric, pool: str, per_leaf: int, below: int) -> dict[str, tuple[str, ...]]:
    """Each leaf's VRF loopbacks (`per_leaf` VRFs: the GPU VRF, or the north-south tenants' storage
    and in-band), /32s of the plane's part of the loopbacks pool from its top down, below the
    `below` addresses the nodes' service addresses take there (host_routing bgp): leaf i's k-th
    is the part's last address - 1 - below - ((i - 1) x per_leaf + k). The switches' loopbacks
    count up from the bottom, so a leaf's place in the plan alone gives each, and growth (more
    leaves, more switches) only adds (NVIDIA's generator takes them from its loopback range too:
    gl-plane1-01-config.sh at 2b4e3e2, `vrf GPU loopback ip address 10.1.1.11/32`)."""
    if not per_leaf:
        return {}
    _, last = plane_part(pool, fabric)
    top = last - 1 - below
    return {s.name: tuple(dotted_quad(top - ((s.index - 1) * per_leaf + k)) for k in range(per_leaf))
            for s in fabric.by_role("leaf")}


def allocate_overlay(fabric: Fabric, pool: str, vrf_lo: dict[str, tuple[str, ...]] | None = None) -> Overlay:
    """host_addressing evpn: the plane's part of the hosts pool as its GPU subnet, or cut in
    `rail_splits` equal aligned subnets with overlay.vlans rail (rail r, 0-based, the r-th: VLAN
    vlan + r + 1, VNI vni + r + 1, as NVIDIA's 993eed6 numbers rail 1 of plane 1 901/4901); in each
    the anycast gateway its first address, each leaf's own SVI address from the top down (`Overlay`)."""
    first, last = plane_part(pool, fabric)  # last: the broadcast
    prefix = plane_prefix(pool, fabric)
    spec = (fabric.spec.ethernet or EthernetOptions()).overlay
    if spec.vlans == "rail":
        splits = rail_splits(fabric.plan.rails)
        size = (last + 1 - first) // splits
        prefix += splits.bit_length() - 1
        bases = [(first + r * size, spec.vlan + r + 1, spec.vni + r + 1) for r in range(fabric.plan.rails)]
    else:
        size, bases = last + 1 - first, [(first, spec.vlan, spec.vni)]
    segments = tuple(Segment(vlan, vni, f"{dotted_quad(base)}/{prefix}", prefix, dotted_quad(base + 1),
                             {s.name: dotted_quad(base + size - 1 - s.index) for s in fabric.by_role("leaf")})
                     for base, vlan, vni in bases)
    return Overlay(segments, {name: ips[0] for name, ips in (vrf_lo or {}).items()})


def dotted_quad(value: int) -> str:
    """Dotted quad of an IPv4 address held as an int. Pools are parsed and checked with
    netaddr; this formatting runs for every port of a 32k-GPU fabric (200k times), where
    netaddr's IPAddress objects cost a second (a test compares the two). The C library's
    inet_ntoa: 0.12 us against 0.2 for an f-string of four octets (3.2 million at 131k GPUs)."""
    return _ntoa(_quad(value))


_ntoa, _quad = socket.inet_ntoa, struct.Struct("!I").pack


def network_of(ip: str, plen: int) -> str:
    """'10.8.0.5', 26 -> '10.8.0.0/26': the prefix an allocated address sits in (tested
    against netaddr), cheap enough for every port and NIC of a large fabric."""
    if plen >= 24:  # a port's /31 or a leaf's subnet: only the last octet changes
        head, _, last = ip.rpartition(".")
        return f"{head}.{int(last) & (0xFF << (32 - plen)) & 0xFF}/{plen}"
    a, b, c, d = (int(x) for x in ip.split("."))
    value = ((a << 24) | (b << 16) | (c << 8) | d) & ((0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF)
    return f"{dotted_quad(value)}/{plen}"


def plane_part(pool: str, fabric: Fabric) -> tuple[int, int]:
    """First and last address of this plane's part of a pool (`plane_slice`): plane p's starts p
    parts after the pool's first address, whatever the other planes hold."""
    net = IPNetwork(pool)
    size = plane_slice(net.size, fabric.planes)
    first = net.first + fabric.plane * size
    return first, first + size - 1


def plane_prefix(pool: str, fabric: Fabric) -> int:
    """The prefix length of this plane's part of a pool (`plane_cidr`)."""
    first, last = plane_part(pool, fabric)
    return 33 - (last - first + 1).bit_length()


def plane_cidr(pool: str, fabric: Fabric) -> str:
    """This plane's part of a pool as a CIDR (the pool itself on one plane): parts are aligned
    powers of two (planes are 1, 2 or 4), so one prefix each."""
    first, last = plane_part(pool, fabric)
    return f"{dotted_quad(first)}/{33 - (last - first + 1).bit_length()}"


def _vrf_loopbacks(fabric: Fabric, eth: EthernetOptions) -> dict[str, tuple[str, ...]]:
    """The fabric's leaves' VRF loopbacks (`vrf_loopbacks`), below the nodes' service addresses."""
    nodes = host_places(eth, fabric.plan)
    per_leaf = vrf_loopbacks_per_leaf(eth, fabric.spec.role, fabric.spec.platform)
    out = vrf_loopbacks(fabric, eth.pools.loopbacks, per_leaf, nodes + (1 if nodes else 0))
    if border_loopbacks_only(eth, fabric.spec.role, fabric.spec.platform):  # the compute leaves' alone
        holders = {s.name for s in fabric.by_role("leaf") if s.index <= fabric.plan.compute_leaves}
        out = {name: ips for name, ips in out.items() if name in holders}
    return out


def allocate_ethernet(fabric: Fabric) -> Allocation:
    eth = fabric.spec.ethernet or EthernetOptions()
    plan = fabric.plan
    lo, lo_last = plane_part(eth.pools.loopbacks, fabric)
    loopbacks = {s.name: dotted_quad(lo + fabric.ordinal(s) + 1) for s in fabric.switches}  # .0 is the pool's name
    link_ips: dict[int, tuple[str, str, int]] = {}
    p2p, _ = plane_part(eth.pools.links, fabric)
    hosts, _ = plane_part(eth.pools.hosts, fabric)
    leaf_subnets: dict[str, str] = {}
    if eth.host_addressing == "leaf-subnet":
        prefix = leaf_subnet_prefix(plan.down)
        size = 1 << (32 - prefix)
        base = {s.name: hosts + (s.index - 1) * size for s in fabric.by_role("leaf")}
        leaf_subnets = {name: f"{dotted_quad(b)}/{prefix}" for name, b in base.items()}
    vrf_lo = _vrf_loopbacks(fabric, eth)
    overlay = allocate_overlay(fabric, eth.pools.hosts, vrf_lo) if eth.host_addressing == "evpn" else None
    seg_bases = [int(IPNetwork(seg.subnet).first) for seg in overlay.segments] if overlay is not None else []
    northsouth = fabric.spec.role == "northsouth"
    model, speed = fabric.switch_model, plan.speed
    for idx, lk in enumerate(fabric.links):
        if northsouth and lk.tier == "node-leaf":
            continue  # bond members: the bond's addresses are the tenants'
        if lk.tier != "node-leaf":
            link_ips[idx] = (dotted_quad(p2p + 2 * lk.ordinal + 1), dotted_quad(p2p + 2 * lk.ordinal), 31)
        elif eth.host_addressing == "p2p":
            link_ips[idx] = (dotted_quad(hosts + 2 * lk.ordinal + 1), dotted_quad(hosts + 2 * lk.ordinal), 31)
        elif overlay is not None:  # the NIC's address in its segment's subnet, its gateway the anycast one
            link_ips[idx] = _overlay_nic(overlay, seg_bases, lk.ordinal, plan.rails)
        else:
            b = base[lk.z]
            link_ips[idx] = (dotted_quad(b + 2 + model.port_number(speed, lk.z_port) - 1), dotted_quad(b + 1), prefix)
    asns: dict[str, int] = {}
    shift = {tier: fabric.plane * asn_stride(eth, tier, fabric.planes) for tier in ("leaf", "spine", "core")}
    for s in fabric.switches:
        if s.role == "leaf":  # a collapsed pair shares one: iBGP on its peer link (spec/sizing.py NS_PEER_LINKS)
            asns[s.name] = eth.asn.leaf + shift["leaf"] + (0 if plan.peer_links else s.index - 1)
        elif s.role == "spine":
            asns[s.name] = eth.asn.spine + shift["spine"] + (s.pod - 1 if eth.asn.spines == "pod" else 0)
        else:
            asns[s.name] = eth.asn.core + shift["core"] + (s.plane if eth.asn.cores == "plane" else 0)
    node_loopbacks: dict[str, str] = {}
    node_asns: dict[str, int] = {}
    if eth.host_routing == "bgp":  # from the pool's top down, in planned node order: apart from the switches' count
        members = sum(1 for h in fabric.hosts if h.role == "compute")
        for h in fabric.hosts:
            place = h.index - 1 if h.role == "compute" else plan.server_place + h.index - 1 - members
            node_loopbacks[h.name] = dotted_quad(lo_last - 1 - place)
            node_asns[h.name] = eth.asn.host + place
    tenants = allocate_tenants(fabric, eth.pools.hosts, vrf_lo) if northsouth else None
    return Allocation(loopbacks=loopbacks, link_ips=link_ips, leaf_subnets=leaf_subnets, asns=asns,
                      node_loopbacks=node_loopbacks, node_asns=node_asns, tenants=tenants, overlay=overlay)


def _overlay_nic(overlay: Overlay, bases: list[int], ordinal: int, rails: int) -> tuple[str, str, int]:
    """A GPU port's address, gateway and prefix: 2 + its planned place in the plane's one segment, or
    with a segment a rail (a compute link's ordinal is node place x rails + rail, topology/build.py)
    2 + its node's planned place in its rail's."""
    rail, place = 0, ordinal
    if len(overlay.segments) > 1:
        place, rail = divmod(ordinal, rails)
    seg = overlay.segments[rail]
    return dotted_quad(bases[rail] + 2 + place), seg.gateway, seg.prefix


def synthetic_guid(fabric_no: int, kind: int, serial: int) -> int:
    return (GUID_PREFIX << 48) | ((fabric_no & 0xFF) << 40) | (kind << 32) | serial


def management_addresses(fabric: Fabric, node_prefixes: dict[str, str]) -> dict[str, str]:
    """device -> management address; node_prefixes: node group -> its management prefix."""
    out: dict[str, str] = {}
    m = fabric.spec.management
    if m is not None:
        from fabgen.inventory.management import gateway_of

        gateway, (first, _) = gateway_of(m), plane_part(m.prefix, fabric)
        for s in fabric.switches:
            address = first + 1 + fabric.ordinal(s)
            # the gateway is never a switch's; at the part's first address it is below every switch (they start
            # after it), so only a gateway inside the run moves the switches above it (check_plane_parts counts so)
            out[s.name] = dotted_quad(address + (first < gateway <= address))
    nxt: dict[str, int] = {}
    for h in fabric.hosts:
        prefix = node_prefixes.get(h.group)
        if prefix and h.role == "compute":
            address = nxt.get(h.group, IPNetwork(prefix).first + 1)
            out[h.name] = dotted_quad(address)
            nxt[h.group] = address + 1
    return out


def allocate_oob(fabric: Fabric) -> Allocation:
    """The out-of-band network's one subnet (its management prefix): the BMC ports take its host
    addresses from the first up, each node block (topology/oob.py) a range the size of its home
    fabric's plan, a port at its place there (`Link.ordinal`); the access switches (their address
    on the management VLAN) from the last down, block by block, each block its planned switches;
    both skip the gateway. A change of one fabric moves no other block's BMC addresses
    (docs/growth.md). A managed switch's management port gets no address here: its own fabric's
    management prefix gives it one."""
    from fabgen.inventory.management import gateway_of

    m = fabric.spec.management
    assert m is not None
    net = IPNetwork(m.prefix)
    gateway, first, last = gateway_of(m), net.first + 1, net.last - 1
    layout = fabric.oob
    nodes = {h.name for h in fabric.hosts if h.role != "switch"}
    link_ips: dict[int, tuple[str, str, int]] = {}
    for idx, lk in enumerate(fabric.links):
        if lk.a in nodes:
            address = first + lk.ordinal
            link_ips[idx] = (dotted_quad(address + (address >= gateway)), dotted_quad(gateway), net.prefixlen)
    management = {}
    reserved = PAIR_SVIS if fabric.spec.oob_design == "routed" else 0  # the pair's own SVI addresses on top
    for block, k, name in layout.access_switches(fabric.spec.name):
        address = last - reserved - layout.switch_base(block) - k
        management[name] = dotted_quad(address - (address <= gateway))
    return Allocation(link_ips=link_ips, management=management)


PAIR_SVIS = 2  # a routed out-of-band network: the north-south pair's own addresses on the management VLAN


@dataclass(frozen=True)
class RoutedOob:
    """A routed out-of-band network (oob_design routed) as both its ends write it: the access
    switches (EVPN VTEPs) and the north-south pair they hang from. Every number is fixed by a
    switch's planned place, so growth only adds:

    * access switch j (its planned place: `Layout.switch_base` of its block + its index there) takes
      the loopbacks prefix's address j + 1 and ASN `asn` + j, its first uplink to the pair's first
      leaf and its second to the second, each on the pair leaf's j-th free port counted down from
      below the border's (spec/layout.py `leaf_groups`: at the uplinks' own speed, whole cages);
    * its own address on the management VLAN is the layer-2 design's (allocate_oob, two places lower:
      the pair's two SVI addresses take the top of the prefix), the anycast gateway the management
      block's gateway;
    * with oob_routed.vrf_loopbacks the VRF's loopbacks count down from the top of the loopbacks
      prefix: the pair's first leaf the last address before the broadcast, its second the one below,
      access switch j the (j + 3)-th from the top, so that neither end's moves as access switches
      are added (NVIDIA takes them from its loopback range: oob-switch-01 at 993eed6, 172.16.176.121)."""

    fabric: str  # the out-of-band network
    northsouth: str  # the north-south fabric of the pair
    vlan: int
    vni: int
    vrf: str
    l3vni: int
    l3vni_vlan: int
    prefix_len: int
    subnet: str
    gateway: str
    dhcp_server: str
    bfd_uplink: dict[str, int] | None
    bfd_overlay: dict[str, int] | None
    pair: list[dict[str, str]]  # name, loopback, svi_ip (its own address on the VLAN), vrf_loopback (oob_routed's)
    pair_port: tuple[str, str, int]  # the pair's ports: its fabric's kind, cage type and speed (NetBox's type)
    # access switch -> loopback, asn, svi_ip, uplinks [{port, peer, peer_port}]
    access: dict[str, dict] = field(default_factory=dict)
    announce: str = "network"  # oob_routed.announce: the access switches' loopback by network or redistribute
    evpn_filter: bool = False  # oob_routed.evpn_filter: EVPN_OOB_OUT on the pair's EVPN sessions to them
    vrf_loopbacks: str = ""  # oob_routed.vrf_loopbacks: the prefix the VRF's loopbacks come from ("": none)
    # pair leaf -> [{port, peer, peer_port, speed where the pair's speeds mix}]
    pair_ports: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # the cages a north-south leaf splits at a port group's own speed (0-based cage -> speed): the border
    # uplinks' (northsouth.border.speed) and these uplinks' (oob_routed.uplink_speed); spec/layout.py
    # `leaf_groups`
    pair_cages: dict[int, int] = field(default_factory=dict)


def _timers(t) -> dict[str, int] | None:
    return None if t is None else {"interval_ms": t.interval_ms, "multiplier": t.multiplier}


def allocate_routed_oob(oob: Fabric, oob_alloc: Allocation, ns: Fabric, ns_alloc: Allocation,
                        provisioning_server: str | None) -> RoutedOob:
    """The routed design's numbers (RoutedOob), from both fabrics and their allocations."""
    from fabgen.inventory.management import gateway_of
    from fabgen.spec.layout import leaf_groups

    spec = oob.spec
    r = spec.oob_routed
    m = spec.management
    assert r is not None and m is not None and ns.spec.ethernet is not None
    net = IPNetwork(m.prefix)
    gateway = gateway_of(m)
    layout = oob.oob
    eth = ns.spec.ethernet
    border = eth.northsouth.border if eth.northsouth is not None else None
    pair = [s for s in ns.switches if s.role == "leaf" and s.index in (1, 2)]
    groups = leaf_groups(ns.plan, ns.switch_model, (border.uplinks, border.speed or 0) if border else (0, 0),
                         (layout.planned_switches, r.uplink_speed or 0))
    ups = oob.switch_model.uplinks[:2]
    # the pair's ends at the uplinks' own speed where set, else the pair's; written where its speeds mix
    speed = r.uplink_speed or ns.plan.speed
    mixed = ns.plan.mixed or bool(groups.cages)

    def top(i: int) -> str:
        address = net.last - 1 - i
        return dotted_quad(address - (address <= gateway))

    lo, lo_top = IPNetwork(r.loopbacks).first, IPNetwork(r.loopbacks).last - 1  # lo_top: the last before broadcast
    access: dict[str, dict] = {}
    pair_ports: dict[str, list[dict[str, Any]]] = {s.name: [] for s in pair}
    for block, k, name in layout.access_switches(spec.name):
        j = layout.switch_base(block) + k
        uplinks = [{"port": up, "peer": s.name, "peer_port": groups.oob[j]} for up, s in zip(ups, pair, strict=False)]
        access[name] = {"loopback": dotted_quad(lo + 1 + j), "asn": r.asn + j,
                        "svi_ip": oob_alloc.management[name], "uplinks": uplinks,
                        **({"vrf_loopback": dotted_quad(lo_top - 2 - j)} if r.vrf_loopbacks else {})}
        for u in uplinks:
            pair_ports[u["peer"]].append({"port": u["peer_port"], "peer": name, "peer_port": u["port"],
                                          **({"speed": speed} if mixed else {})})
    return RoutedOob(
        fabric=spec.name, northsouth=ns.spec.name, vlan=spec.oob_vlan,
        vni=r.vni if r.vni is not None else 4000 + spec.oob_vlan, vrf=r.vrf, l3vni=r.l3vni, l3vni_vlan=r.l3vni_vlan,
        prefix_len=net.prefixlen, subnet=str(net.cidr), gateway=dotted_quad(gateway),
        dhcp_server=r.dhcp_server or provisioning_server or "",
        bfd_uplink=_timers(eth.bfd.oob_uplink), bfd_overlay=_timers(eth.bfd.oob_overlay),
        pair=[{"name": s.name, "loopback": ns_alloc.loopbacks[s.name], "svi_ip": top(i),
               **({"vrf_loopback": dotted_quad(lo_top - i)} if r.vrf_loopbacks else {})} for i, s in enumerate(pair)],
        announce=r.announce, evpn_filter=r.evpn_filter, vrf_loopbacks=str(IPNetwork(r.loopbacks).cidr)
        if r.vrf_loopbacks else "",
        pair_port=(ns.spec.kind, ns.switch_model.cage_type, speed),
        access=access, pair_ports=pair_ports, pair_cages=groups.cages)


def allocate(fabric: Fabric, fabric_no: int, guid_map: dict[tuple[str, str], int] | None = None,
             node_prefixes: dict[str, str] | None = None) -> Allocation:
    """Addresses and ASNs (Ethernet) or GUIDs (InfiniBand), and management addresses."""
    if fabric.spec.role == "oob":
        return allocate_oob(fabric)
    if fabric.spec.kind == "infiniband":
        base = allocate_guids(fabric, fabric_no, guid_map)
    else:
        base = allocate_ethernet(fabric)
    return replace(base, management=management_addresses(fabric, node_prefixes or {}))


def allocate_guids(fabric: Fabric, fabric_no: int, guid_map: dict[tuple[str, str], int] | None) -> Allocation:
    """Real GUIDs from the inventory's GUID map where given, synthetic ones elsewhere."""
    real = guid_map or {}
    guids: dict[str, int] = {}
    synthetic = 0
    for s in fabric.switches:
        g = real.get((s.name, "0"))
        if g is None:
            g, synthetic = synthetic_guid(fabric_no, TYPE_SWITCH, fabric.ordinal(s) + 1), synthetic + 1
        guids[s.name] = g
    for h in fabric.hosts:
        cabled = fabric.ports[h.name]
        for nic in h.model.nics:
            g = real.get((h.name, nic.rdma))
            if g is None:
                serial = fabric.links[cabled[nic.rdma]].ordinal + 1
                g, synthetic = synthetic_guid(fabric_no, TYPE_CA, serial), synthetic + 1
            guids[f"{h.name}/{nic.rdma}"] = g
    if synthetic:
        fabric.warnings.append(
            f"{synthetic} of {len(guids)} InfiniBand GUIDs are synthetic (0xfab0...): give the real ones in a "
            "guid_map before deployment, or the root and compute-node GUID files will not match the fabric"
        )
    return Allocation(guids, synthetic_guids=bool(synthetic))
