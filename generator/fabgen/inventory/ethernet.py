"""Checks of a fabric's `ethernet:` block that need the sizing plan: pools and ASNs.

A pool too small or overlapping another, or an ASN range that runs past the 4-byte
space or into another tier's, is an inventory error located at the key to change,
with how many addresses (or ASNs) the fabric needs, before anything is built.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from netaddr import AddrFormatError, IPNetwork

from fabgen.errors import printable
from fabgen.inventory.loader import format_path
from fabgen.spec.schema import EthernetOptions
from fabgen.spec.sizing import Plan

MAX_ASN = 4_294_967_294
POOLS = ("loopbacks", "links", "hosts")
PLURAL = {"leaf": "leaves", "spine": "spines", "core": "cores"}
Report = Callable[[tuple, str], None]


def leaf_subnet_prefix(down: int) -> int:
    """Smallest prefix holding a leaf's host ports, the gateway, network and broadcast."""
    need, bits = down + 3, 0
    while (1 << bits) < need:
        bits += 1
    return 32 - bits


def asn_counts(eth: EthernetOptions, plan: Plan) -> dict[str, int]:
    """ASNs one plane uses per tier: a leaf each; spines one or one per pod; cores one or one per core plane."""
    return {"leaf": plan.leaves,
            "spine": (plan.pods if eth.asn.spines == "pod" else 1) if plan.tiers >= 2 else 0,
            "core": (plan.spines_per_pod if eth.asn.cores == "plane" else 1) if plan.tiers == 3 else 0}


def host_places(eth: EthernetOptions, plan: Plan) -> int:
    """Nodes with a service address and an ASN of their own (host_routing bgp): the planned
    nodes, then room for one per storage port (storage nodes follow the planned nodes, on a collapsed
    pair sized by racks its two racks' trays: `Plan.server_place`)."""
    return max(plan.nodes, plan.server_place) + plan.storage if eth.host_routing == "bgp" else 0


def asn_block(eth: EthernetOptions, tier: str) -> tuple[int, str]:
    """Where a tier's ASN block ends: the next tier's first ASN above it (the nodes' with BGP to the
    host), or the end of its 2-byte or 4-byte private space; with what ends it."""
    bases = {"leaf": eth.asn.leaf, "spine": eth.asn.spine, "core": eth.asn.core}
    if eth.host_routing == "bgp":
        bases["host"] = eth.asn.host
    base = bases[tier]
    above = sorted((b, t) for t, b in bases.items() if b > base)
    top = (65535, "the 2-byte ASNs' end") if base <= 65534 else (MAX_ASN + 1, "the 4-byte ASNs' end")
    return min([(b, f"the {t} ASNs ({b})") for b, t in above] + [top])


def asn_stride(eth: EthernetOptions, tier: str, planes: int) -> int:
    """How far apart a tier's planes start: the largest power of ten within the tier's block split
    `planes` ways (0 with one plane). A plane's ASNs never depend on another plane's size, and they
    read as the plane (default leaves: 4200010000 on plane 1, 4210010000 on plane 2)."""
    if planes == 1:
        return 0
    room = (asn_block(eth, tier)[0] - getattr(eth.asn, tier)) // planes
    return 10 ** (len(str(room)) - 1) if room > 0 else 0


def asn_ranges(eth: EthernetOptions, plan: Plan, planes: int = 1) -> dict[str, tuple[int, int]]:
    """First and last ASN used by each tier, over every network plane (plane p's ASNs start at the
    tier's first + p x `asn_stride`); with BGP to the host, the nodes' too."""
    base = {"leaf": eth.asn.leaf, "spine": eth.asn.spine, "core": eth.asn.core, "host": eth.asn.host}
    counts = {**asn_counts(eth, plan), "host": host_places(eth, plan)}
    return {tier: (base[tier], base[tier] + (asn_stride(eth, tier, planes) * (planes - 1) if tier != "host" else 0)
                   + n - 1)
            for tier, n in counts.items() if n}


def northsouth_places(plan: Plan) -> int:
    """Addresses one half of a northsouth fabric's hosts pool (storage, or in-band) holds: the
    network, the anycast gateway, one per planned leaf (its own SVI address), one per planned node
    and storage port (a bond each; a collapsed pair sized by racks numbers its servers after its two
    racks' trays, `Plan.server_place`), the broadcast (docs/northsouth.md)."""
    return 3 + plan.leaves + max(plan.nodes, plan.server_place) + plan.storage


def evpn_places(plan: Plan) -> int:
    """Addresses a plane's GPU subnet (host_addressing evpn: the plane's part of the hosts pool)
    holds: the network, the anycast gateway, one per planned NIC port (compute, then storage), one
    per planned leaf (its own SVI address, from the top), the broadcast (addressing.py)."""
    return 3 + plan.endpoints + plan.storage + plan.leaves


# Cumulus Linux keeps VLANs 3725-3999 for itself (ifupdown2 refuses a bridge VLAN there: "reserved
# vlan range 3725-3999"; CumulusNetworks/ifupdown2's tests)
NVUE_RESERVED_VLANS = (3725, 3999)
EOS_MAX_VNI = 65535  # EOS: `rd <router-id>:<vni>` (type 1) and `route-target both <vni>:<vni>` take 16 bits


def rail_splits(rails: int) -> int:
    """Equal aligned subnets a plane's GPU block is cut in with overlay.vlans rail (addressing.py): the
    rails rounded up to a power of two, so every rail's subnet is aligned and the same size."""
    return 1 << max(0, rails - 1).bit_length()


def evpn_rail_places(plan: Plan) -> int:
    """Addresses each rail's GPU subnet (overlay.vlans rail) holds: the network, the anycast gateway,
    one per planned node (its port on the rail), one per planned leaf (its own SVI address, from the
    top), the broadcast (addressing.py)."""
    return 3 + plan.nodes + plan.leaves


def plane_slice(size: int, planes: int) -> int:
    """Addresses of each plane's part of a pool: the pool cut into `planes` equal, aligned parts
    (planes are 1, 2 or 4), plane p's from the pool's first + p x this. Plane 1 is numbered as a
    one-plane fabric would be, and no plane's addresses depend on another plane's size."""
    return size // planes


def vrf_loopbacks_per_leaf(eth: EthernetOptions, role: str, platform: str) -> int:
    """VRF loopbacks each leaf takes from the loopbacks pool (addressing.py, from the top down): the
    GPU VRF's with host_addressing evpn, each north-south tenant VRF's with northsouth.vrf_loopbacks and
    the border VRF's with northsouth.border.loopback (after the tenants', so a leaf's k-th is fixed);
    on NVUE only (NVIDIA's generator writes them; AVD's l3ls-evpn, which fabgen's EOS follows, none)."""
    if platform != "nvue":
        return 0
    if role == "northsouth":  # the tenants' two, then the border VRF's (northsouth.border.loopback)
        border = eth.northsouth.border
        return (2 if eth.northsouth.vrf_loopbacks else 0) + (1 if border is not None and border.loopback else 0)
    return 1 if eth.host_addressing == "evpn" else 0


def border_loopbacks_only(eth: EthernetOptions, role: str, platform: str) -> bool:
    """The border VRF's loopback is a leaf's only VRF loopback (northsouth.border.loopback without
    vrf_loopbacks): then only the compute leaves, which carry the border VRF (intent/northsouth.py
    `border_switches`), take one; a storage pair's leaves, which follow them, none. With the tenants'
    loopbacks every leaf keeps three slots, a storage leaf's third unused: leaf i's k-th VRF loopback is
    the ((i - 1) x 3 + k)-th from the top, and three a leaf keeps each storage leaf's tenant loopbacks
    where a plan of an earlier release put them (two for storage leaves would move the second's)."""
    return vrf_loopbacks_per_leaf(eth, role, platform) == 1 and role == "northsouth"


def needs(eth: EthernetOptions, plan: Plan, role: str = "compute",
          platform: str = "nvue") -> dict[str, tuple[int, str]]:
    """Addresses each pool (each plane's part of it, `plane_slice`) must hold, with what they are for."""
    switches = plan.leaves + plan.spines + plan.cores
    # links, not host-speed ports: a tier at a multiple of the host speed has one every `factor` (their ordinals)
    links = (plan.leaves * plan.up if plan.tiers >= 2 else plan.peer_links) // plan.factor("leaf-spine") + \
        (plan.spines * plan.spine_up // plan.factor("spine-core") if plan.tiers == 3 else 0)
    nics = plan.endpoints + plan.storage
    if role == "northsouth":
        half = northsouth_places(plan)
        hosts = (2 * half, f"two halves, storage and in-band, of {half} addresses each: gateway, leaves, bonds")
    elif eth.host_addressing == "p2p":
        hosts = (2 * nics, f"a /31 for each of {nics} NICs")
    elif eth.host_addressing == "evpn" and eth.overlay.vlans == "rail":
        splits, each = rail_splits(plan.rails), evpn_rail_places(plan)
        # each rail's subnet a power of two: the need is the cut's whole size
        size = 1 << max(0, each - 1).bit_length()
        hosts = (splits * size, f"a subnet for each of {plan.rails} rails (cut in {splits} equal parts) of "
                 f"{size} addresses: the network, the anycast gateway, {plan.nodes} nodes' ports, {plan.leaves} "
                 "leaves' own addresses, the broadcast")
    elif eth.host_addressing == "evpn":
        hosts = (evpn_places(plan), f"one subnet: the network, the anycast gateway, {nics} NICs, {plan.leaves} "
                 "leaves' own addresses, the broadcast")
    else:
        size = 1 << (32 - leaf_subnet_prefix(plan.down))
        hosts = (plan.leaves * size, f"a /{leaf_subnet_prefix(plan.down)} for each of {plan.leaves} leaves")
    nodes = host_places(eth, plan)
    leaves = plan.compute_leaves if border_loopbacks_only(eth, role, platform) else plan.leaves
    vrfs = leaves * vrf_loopbacks_per_leaf(eth, role, platform)
    lo = f"a /32 for each of {switches} switches" + (f" and {nodes} nodes (host_routing bgp)" if nodes else "") + \
        (f" and {vrfs} VRF loopbacks (one per leaf and VRF"
         f"{', the border VRF on the compute leaves' if leaves != plan.leaves else ''})" if vrfs else "")
    return {"loopbacks": (switches + 1 + (nodes + 1 if nodes else 0) + (vrfs + 1 if vrfs else 0), lo),
            "links": (2 * links, f"a /31 for each of {links} switch-to-switch links"),
            "hosts": hosts}


AR_MAX_SPEED = 400  # Spectrum-4 adaptive routing: RoCEv2 unicast at 400G/200G, not 800G links


_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
PREFIX_RE = re.compile(rf"^{_OCTET}(\.{_OCTET}){{3}}/(3[0-2]|[12]?[0-9])$", re.ASCII)


def parse_prefix(where: tuple, text: str, report: Report, example: str) -> IPNetwork | None:
    """An IPv4 prefix with a length and no host bits, or a located problem and None. Written as
    configs write it: dotted decimal, '/', a length of ASCII digits, nothing around it (netaddr
    alone takes '/255.255.255.0', '/٢٤' and a trailing newline)."""
    if not isinstance(text, str) or not PREFIX_RE.fullmatch(text):
        shown = printable(repr(text))[:80]
        report(where, f"{shown} is not an IPv4 prefix written as a.b.c.d/length (e.g. {example})")
        return None
    try:
        net = IPNetwork(text)
    except (AddrFormatError, ValueError, TypeError):
        report(where, f"'{text}' is not an IPv4 prefix (e.g. {example})")
        return None
    if net.version != 4 or "/" not in text:
        report(where, f"'{text}' is not an IPv4 prefix with a length (e.g. {example})")
        return None
    if net.ip != net.network:
        report(where, f"'{text}' has host bits set (did you mean '{net.cidr}'?)")
        return None
    return net


# IPv4 special-purpose ranges an address pool must not touch (IANA special-purpose registry,
# RFC 6890): packets to or from them are not forwarded as unicast between switches and hosts.
SPECIAL = ((IPNetwork("0.0.0.0/8"), "'this network'"), (IPNetwork("127.0.0.0/8"), "loopback"),
           (IPNetwork("169.254.0.0/16"), "link-local"), (IPNetwork("224.0.0.0/4"), "multicast"),
           (IPNetwork("240.0.0.0/4"), "reserved (and the broadcast address)"))
# ASNs that cannot be a router's (RFC 7607 AS 0, RFC 6793 AS_TRANS 23456, RFC 7300 65535 and
# 4294967295) and the documentation ranges (RFC 5398)
RESERVED_ASNS = {0: "AS 0 (RFC 7607)", 23456: "AS_TRANS (RFC 6793)", 65535: "reserved (RFC 7300)",
                 4294967295: "reserved (RFC 7300)"}
DOC_ASNS = ((64496, 64511), (65536, 65551))


def special_range(net: IPNetwork) -> str | None:
    """The special-purpose range a prefix overlaps, or None."""
    return next((what for sp, what in SPECIAL if net.first <= sp.last and sp.first <= net.last), None)


def _overlap(net: IPNetwork, taken: list[tuple[IPNetwork, str]]) -> tuple[IPNetwork, str] | None:
    return next(((o, by) for o, by in taken if net.first <= o.last and o.first <= net.last), None)


def check_ethernet(i: int, kind: str, eth: EthernetOptions, plan: Plan | None, report: Report,
                   taken: list[tuple[IPNetwork, str]], warn: Report, planes: int = 1, role: str = "compute",
                   platform: str = "nvue") -> None:
    """Report pool and ASN problems of fabrics[i]; `taken` collects pools across fabrics."""
    path = ("fabrics", i, "ethernet")
    _check_kind_features(path, kind, eth, plan, report, warn)
    nets = _check_pools(path, i, eth, report, taken)
    _check_transport(path, eth, report, warn)
    if plan is None:
        return
    for name, (count, what) in needs(eth, plan, role, platform).items():
        net = nets.get(name)
        part = plane_slice(net.size, planes) if net is not None else 0
        if net is None or part >= count:
            continue
        shortest = 32 - max(0, (count * planes - 1).bit_length())
        if planes == 1:
            report((*path, "pools", name), f"pool {net} holds {net.size} addresses; this fabric needs {count} "
                   f"({what}): use a /{shortest} or shorter")
        else:
            report((*path, "pools", name), f"pool {net} gives each of its {planes} planes a "
                   f"/{net.prefixlen + planes // 2} of {part} addresses (plane p from the pool's start + p x "
                   f"{part}); a plane needs {count} "
                   f"({what}): use a /{shortest} or shorter")
    _check_asns(path, eth, plan, planes, report, warn)
    if eth.host_addressing == "evpn" and eth.overlay.vlans == "rail" and role == "compute":
        _check_rail_vlans((*path, "overlay"), eth, plan, platform, report)


def _check_rail_vlans(at: tuple, eth: EthernetOptions, plan: Plan, platform: str, report: Report) -> None:
    """overlay.vlans rail: rail r's VLAN vlan + r and VNI vni + r (r = 1 to the rails) within their
    ranges, off Cumulus Linux's reserved VLANs and off the VRF's layer-3 VNI and its VLAN (a compute fabric holds no
    storage server, whose ports would be on no rail: refused where node groups attach)."""
    t, rails = eth.overlay, plan.rails
    top = t.vlan + rails
    lo, hi = NVUE_RESERVED_VLANS
    if top > 4094:
        report((*at, "vlan"), f"a VLAN a rail takes VLANs {t.vlan + 1}-{top} ({rails} rails), above 4094: "
               "give a lower vlan")
    elif platform == "nvue" and t.vlan + 1 <= hi and lo <= top:
        report((*at, "vlan"), f"a VLAN a rail takes VLANs {t.vlan + 1}-{top} ({rails} rails), into Cumulus "
               f"Linux's reserved range {lo}-{hi}: use another")
    top_vni = EOS_MAX_VNI if platform == "eos" else 16_777_214
    if t.vni + rails > top_vni:
        report((*at, "vni"), f"a VLAN a rail takes VNIs {t.vni + 1}-{t.vni + rails}, above {top_vni}"
               + (" (EOS's route distinguisher and route target take 16 bits)" if platform == "eos" else "")
               + ": give a lower vni")
    if t.vni < t.l3vni <= t.vni + rails:
        report((*at, "l3vni"), f"VNI {t.l3vni} is a rail's (VNIs {t.vni + 1}-{t.vni + rails}, one a rail): give "
               "the VRF a VNI of its own")
    if t.l3vni_vlan is not None and t.vlan < t.l3vni_vlan <= top:
        report((*at, "l3vni_vlan"), f"VLAN {t.l3vni_vlan} is a rail's (VLANs {t.vlan + 1}-{top}, one a rail): give "
               "the VRF's layer-3 VNI a VLAN of its own (NVIDIA's 3003)")


def _check_kind_features(path: tuple, kind: str, eth: EthernetOptions, plan: Plan | None, report: Report,
                         warn: Report) -> None:
    """Adaptive routing and lossy RoCE are Spectrum-X features; adaptive routing, up to 400G links."""
    if kind != "spectrum-x":
        if eth.adaptive_routing is not None:
            report((*path, "adaptive_routing"), "adaptive routing is a Spectrum-X feature (kind spectrum-x); "
                   "RoCE fabrics balance with ECMP")
        if eth.qos.mode == "lossy":
            report((*path, "qos", "mode"), "lossy RoCE is a Spectrum-X mode here; EOS and SONiC fabrics are "
                   "rendered lossless (PFC on the RoCE priority)")
    elif eth.adaptive_routing and plan is not None and plan.speed > AR_MAX_SPEED:
        warn((*path, "adaptive_routing"), f"adaptive routing cannot work on {plan.speed}G links on Spectrum-4 "
             f"(RoCEv2 unicast at {AR_MAX_SPEED}G and below): it is enabled globally but on no port")


def _check_pools(path: tuple, i: int, eth: EthernetOptions, report: Report,
                 taken: list[tuple[IPNetwork, str]]) -> dict[str, IPNetwork]:
    """The pools that parse, each reported where it is special-purpose space or overlaps
    another fabric's; those not special join `taken`."""
    nets: dict[str, IPNetwork] = {}
    for name in POOLS:
        where = (*path, "pools", name)
        net = parse_prefix(where, getattr(eth.pools, name), report, "10.0.0.0/16")
        if net is None:
            continue
        default = "" if name in eth.pools.model_fields_set else " (the default)"
        special = special_range(net)
        if special:
            report(where, f"pool {net} overlaps the {special} range, which is never routed as unicast between "
                   "switches and hosts: use private space (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)")
            continue
        hit = _overlap(net, taken)
        if hit:
            report(where, f"pool {net}{default} overlaps {hit[1]} ({hit[0]}); give each fabric its own pools")
        nets[name] = net
        taken.append((net, f"fabrics[{i}].ethernet.pools.{name}"))
    return nets


def _check_transport(path: tuple, eth: EthernetOptions, report: Report, warn: Report) -> None:
    """RoCE's transport: a routable GID, host frames the switches carry, and QoS classes of
    their own for RoCE data and CNPs."""
    if eth.gid_index is not None and eth.gid_index % 2 == 0:
        warn((*path, "gid_index"), f"GID index {eth.gid_index} is RoCE v1 on ConnectX (even indexes: v1, odd: v2): "
             "RoCE v1 frames are not routed, so NCCL cannot reach nodes on other leaves; leave gid_index out "
             "(NCCL 2.21+ picks RoCE v2) or use 3")
    if eth.host_mtu > eth.mtu:
        report((*path, "host_mtu"), f"host MTU {eth.host_mtu} is above the switch MTU {eth.mtu}: frames would "
               "be dropped at the leaf")
    q = eth.qos
    if q.ecn.min_threshold_kbytes > q.ecn.max_threshold_kbytes:
        report((*path, "qos", "ecn", "min_threshold_kbytes"), f"the minimum threshold "
               f"({q.ecn.min_threshold_kbytes} KB) is above the maximum ({q.ecn.max_threshold_kbytes} KB)")
    if q.roce_priority == 0:
        report((*path, "qos", "roce_priority"), "priority 0 is the best-effort class every other DSCP maps to: "
               "making it no-drop would pause all traffic; use the RoCE class (3 by default)")
    if q.cnp_priority == 0:
        report((*path, "qos", "cnp_priority"), "priority 0 is the best-effort class: CNPs there wait behind "
               "bulk traffic and congestion control reacts late; use a strict-priority class (6 by default)")
    for key in ("roce_dscp", "cnp_dscp"):
        if getattr(q, key) == 0:
            report((*path, "qos", key), "DSCP 0 is what unmarked traffic carries: it cannot tell "
                   f"{'RoCE' if key == 'roce_dscp' else 'CNPs'} apart (26 and 48 by default)")
    if q.roce_dscp == q.cnp_dscp:
        report((*path, "qos", "cnp_dscp"), f"CNPs and RoCE data share DSCP {q.roce_dscp}; CNPs need their own")
    if q.roce_priority == q.cnp_priority:
        report((*path, "qos", "cnp_priority"), f"CNPs and RoCE data share priority {q.roce_priority}; CNPs must "
               "not sit in the paused no-drop class")


def _check_asns(path: tuple, eth: EthernetOptions, plan: Plan, planes: int, report: Report, warn: Report) -> None:
    """Each tier's ASNs within the 4-byte space, clear of reserved and documentation ASNs, on
    one side of the 2-byte boundary, and apart from the other tiers'."""
    ranges = asn_ranges(eth, plan, planes)
    counts = asn_counts(eth, plan)
    for tier, (first, last) in ranges.items():
        stride = asn_stride(eth, tier, planes) if tier != "host" else 0
        if planes > 1 and counts.get(tier, 0) > stride:
            end, by = asn_block(eth, tier)
            report((*path, "asn", tier), f"{tier} ASNs: each of {planes} planes starts {stride:,} after the one "
                   f"before (the largest power of ten in the {end - first:,} ASNs from {first} to {by}, split "
                   f"{planes} ways), and a plane needs {counts[tier]:,}: give the {PLURAL[tier]} a lower first ASN "
                   "or the next tier a higher one")
            continue
        if last > MAX_ASN:
            report((*path, "asn", tier), f"{tier} ASNs {first}-{last} run past {MAX_ASN}, the last 4-byte ASN")
            continue
        bad = next((a for a in RESERVED_ASNS if first <= a <= last), None)
        if bad is not None:
            report((*path, "asn", tier), f"{tier} ASNs {first}-{last} include {bad}, {RESERVED_ASNS[bad]}, which "
                   "no router may use")
        elif first <= 65535 < last:
            report((*path, "asn", tier), f"{tier} ASNs {first}-{last} straddle the 2-byte/4-byte boundary: keep "
                   "one tier's ASNs within 64512-65534 or 4200000000-4294967294")
        elif any(first <= hi and lo <= last for lo, hi in DOC_ASNS):
            warn((*path, "asn", tier), f"{tier} ASNs {first}-{last} enter a documentation range (64496-64511, "
                 "65536-65551, RFC 5398): use private ASNs (64512-65534, 4200000000-4294967294)")
    tiers = sorted(ranges.items(), key=lambda kv: kv[1])
    for (t1, (a1, b1)), (t2, (a2, _)) in zip(tiers, tiers[1:]):
        if a2 <= b1:
            report((*path, "asn", t2), f"{t2} ASN {a2} falls inside the {t1} ASNs {a1}-{b1}")


def check_prefix(path: tuple, text: str, count: int, what: str, report: Report,
                 taken: list[tuple[IPNetwork, str]]) -> None:
    """A management prefix: IPv4, no host bits, room for `count` hosts after the network
    address (and before the broadcast one), no overlap with another management prefix."""
    net = parse_prefix(path, text, report, "192.168.0.0/24")
    if net is None:
        return
    special = special_range(net)
    if special:
        report(path, f"{net} overlaps the {special} range: use private space for management addresses")
        return
    usable = max(0, net.size - 2)
    if usable < count:
        report(path, f"{net} has {usable} host addresses; these {count} {what} need one each")
        return
    hit = _overlap(net, taken)
    if hit:
        report(path, f"{net} overlaps {hit[1]} ({hit[0]})")
        return
    taken.append((net, format_path(path)))
