"""The converged north-south fabric's overlay (role northsouth, docs/northsouth.md), decided once
for the switch targets (EOS, NVUE), the hosts' netplans, NetBox and addresses.csv.

Decisions:
* every node's two ports of the fabric are one LACP bond on the node (`HOST_BOND`), one port on each
  leaf of its unit's leaf pair (or, on a fabric sized by racks, on two of its leaves: spec/sizing.py
  `stripe`); on each leaf the port is a bond of its own (`bond<n>` on NVUE,
  `Port-Channel<n>` on EOS, n the leaf port's number), both legs one EVPN Ethernet segment, so the
  node sees one LACP partner (EVPN multihoming, all-active, no peer link);
* the segment: a fabric-wide system MAC (`ES_SYS_MAC`, locally administered) and a local id, the
  node's place + 1; NVUE derives the type-3 ESI from them (03:MAC:id), EOS is given the same six
  bytes as its identifier, ES-import route target and LACP system id, so both leaves of a pair agree
  on any platform;
* storage and in-band are two tenants: each a VLAN on the bond, its layer-2 VNI, a VRF with its
  layer-3 VNI (symmetric routing), and a distributed anycast gateway (the same address and MAC,
  `GATEWAY_MAC`, on every leaf; NVUE also gives each leaf an address of its own on the SVI, as VRR
  needs); the host's default route goes to the in-band gateway only;
* the bond PXE-boots: the in-band (provisioning) VLAN is untagged on it (`PXE_ROLE`; the node's
  in-band address sits on the bond itself, storage a VLAN on it), and the leaf keeps a leg
  forwarding without an LACP partner, as a firmware that boots from the network has none: NVUE's
  `lacp-bypass`, EOS's LACP fallback to individual ports after `LACP_FALLBACK_TIMEOUT` seconds,
  each member then an access port of the in-band VLAN (NVIDIA's net-configurator output does the
  same: in-band VLAN untagged, `lacp-bypass` on every north-south bond);
* a server group's `tenants` gives its one bond one tenant alone, untagged (NVIDIA's storage servers:
  the storage VLAN alone), its address on the bond itself (no default route without in-band);
* a server of a group with `bonds: 2` (a support or storage server, as NVIDIA's designs give two)
  has four ports on the fabric and two bonds, each on the leaf pair: `bond0` its two in-band
  ports with the in-band tenant alone (untagged), `bond1` its two storage ports with storage
  alone (untagged); each bond is a segment of its own (bond k's local id: the node's + k·2^23);
* VXLAN sourced at the loopback, head-end replication (EVPN type-3 routes, no multicast underlay),
  ARP suppression; EVPN runs on the underlay's eBGP sessions (the spines pass it on unchanged).
"""

from __future__ import annotations

from typing import Any

from fabgen.addressing import plane_cidr
from fabgen.context import Context
from fabgen.intent.qos import options
from fabgen.spec import media
from fabgen.spec.layout import LeafGroups, leaf_groups

HOST_BOND = "bond0"  # the node's bond of its two ports of the fabric
ES_SYS_MAC = "02:fa:bc:00:00:00"  # the Ethernet segments' system MAC (locally administered unicast)
GATEWAY_MAC = "00:00:5e:00:01:01"  # the anycast gateway's MAC on every leaf (RFC 5798's first VRRP MAC)
VXLAN_PORT = 4789  # IANA's VXLAN port (RFC 7348)
ROLES = ("storage", "inband")
PXE_ROLE = "inband"  # the tenant untagged on the bond: the one a node boots from
# EOS waits this long for LACP before its members forward alone: under the 60 s a PXE firmware keeps
# asking DHCP (4+8+16+32 s), where EOS's default, 90 s, outlasts it; a booted node's fast LACP
# (a PDU a second) takes the port-channel back at once
LACP_FALLBACK_TIMEOUT = 30
BOND_ID_STRIDE = 1 << 23  # a node's second bond's segment: its first's local id + this (ids stay under 2^24)


def port_local_id(port: str) -> int:
    """northsouth.segment_local_id port: NVIDIA's local id of the segment on a leaf port, its cage x 10 +
    its subport (core-01-config.sh at 2f46cb2: `bond1s0 ... segment local-id 10`, `bond57s7 ... 577`;
    csl-01-config.sh at 993eed6 likewise); a cage run whole is its cage x 10."""
    cage, _, sub = port.removeprefix("swp").partition("s")
    return int(cage) * 10 + int(sub or 0)


def tenants(ctx: Context) -> list[dict[str, Any]]:
    """Storage, then in-band: VLAN, VNIs, VRF, subnet, anycast gateway, whether it carries the
    node's default route (in-band only) and whether it is untagged on the bond (in-band only)."""
    ns = options(ctx).northsouth
    t = ctx.allocation.tenants
    assert t is not None
    out = []
    for k, role in enumerate(ROLES):
        spec = getattr(ns, role)
        out.append({"role": role, "vlan": spec.vlan, "vni": spec.vni, "vrf": spec.vrf, "l3vni": spec.l3vni,
                    "l3vni_vlan": spec.l3vni_vlan, "subnet": t.subnets[k], "gateway": t.gateways[k], "prefix": t.prefix,
                    "default_route": role == "inband", "untagged": role == PXE_ROLE})
    return out


def segment(local_id: int, sys_mac: str = ES_SYS_MAC) -> dict[str, Any]:
    """One Ethernet segment, as each platform spells it: NVUE's system MAC and local id, and the
    six bytes EOS takes as the ESI's value, its ES-import route target and its LACP system id
    (`sys_mac`: northsouth.segment_mac, NVUE only, else fabgen's)."""
    mac = ES_SYS_MAC.split(":")[:3] + [f"{(local_id >> s) & 0xFF:02x}" for s in (16, 8, 0)]
    short = "".join(mac)
    return {"local_id": local_id, "sys_mac": sys_mac,
            "identifier": "0000:0000:" + ":".join(short[i:i + 4] for i in range(0, 12, 4)),
            "route_target": ":".join(mac), "lacp_system_id": ".".join(short[i:i + 4] for i in range(0, 12, 4))}


def host_vlan_interface(vlan: int, untagged: bool = False, bond: str = HOST_BOND) -> str:
    """The node's interface of one tenant: the bond itself for the untagged one, else a VLAN on it."""
    return bond if untagged else f"{bond}.{vlan}"


def host_bonds(ports: int) -> list[str]:
    """The node's bonds on the fabric: one of its two ports, or two of its four (`bonds: 2`)."""
    return [f"bond{k}" for k in range(ports // 2)]


def bond_index(port: int, ports: int) -> int:
    """Which of the node's bonds its `port`-th port (in attachment order) is a member of."""
    return port // 2 if ports > 2 else 0


def bond_tenants(overlay: list[dict[str, Any]], bond: int, bonds: int,
                 only: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The tenants one bond carries: both on a node's one bond, or those of a server group's
    `tenants` (`only`); in-band on bond0 and storage on bond1 of a two-bond server."""
    if bonds == 1:
        return overlay if only is None else [t for t in overlay if t["role"] in only]
    return [t for t in overlay if (t["role"] == PXE_ROLE) == (bond == 0)]


def group_tenants(groups: dict[str, Any], group: str) -> tuple[str, ...] | None:
    """A server group's `tenants` (node_groups[].tenants: the tenants its one bond carries), or None:
    both. NVIDIA's 2-8-9-400 core pair gives its storage servers the storage VLAN alone (core-01-config.sh
    at 2f46cb2fca8f4d9b432f9de62957e54aed8f64d9: `bond57s0 ... bridge domain br_default access 500`)."""
    g = groups.get(group)
    only = getattr(g, "tenants", None)
    return tuple(only) if only else None


def bond_vlans(overlay: list[dict[str, Any]]) -> dict[str, Any]:
    """A leaf bond's VLANs as every platform writes them: its tenants' (`vlans`), the untagged
    one (`native`: in-band, or a storage bond's only tenant) and the tagged ones (`tagged`), and
    the LACP fallback for booting nodes."""
    native = next((t["vlan"] for t in overlay if t["untagged"]), overlay[0]["vlan"])
    return {"vlans": [t["vlan"] for t in overlay], "native": native,
            "tagged": [t["vlan"] for t in overlay if t["vlan"] != native],
            "lacp_fallback": {"mode": "individual", "timeout": LACP_FALLBACK_TIMEOUT, "access_vlan": native}}


def tenant_interfaces(overlay: list[dict[str, Any]], ports: int, only: tuple[str, ...] | None = None) -> list[str]:
    """The node's interface that holds its address in each tenant (in the overlay's order): the
    bond carrying it untagged, or a VLAN on the bond (hosts' netplans, addresses.csv); "" for a
    tenant its bonds do not carry (a server group's `tenants`, `only`)."""
    names = host_bonds(ports)
    out: dict[str, str] = {}
    for b, bond in enumerate(names):
        carried = bond_tenants(overlay, b, len(names), only)
        native = bond_vlans(carried)["native"]
        out.update({t["role"]: host_vlan_interface(t["vlan"], t["vlan"] == native, bond) for t in carried})
    return [out.get(t["role"], "") for t in overlay]


# The way out (`northsouth.border`, docs/northsouth.md "The way out"), as NVIDIA's generator writes
# it: NVIDIA/enterprise-ras net-configurator/output/2-4-5-800/default/configs/csl-01-config.sh at
# 993eed6a993b668e9ab80556cd973b548612c4a4 (the collapsed pair: both switches border) and
# .../2-4-5-800/largescale/configs/cl-01..07-config.sh at the same commit (with spines: every leaf a
# border, the spines none); .../2-8-9-400/default/configs/core-01-config.sh at
# 2f46cb2fca8f4d9b432f9de62957e54aed8f64d9 (the tenant VRF importing EXIT).
BORDER_TIER = "leaf-border"  # cabling.csv's tier of a border uplink (a leaf to the site router)
BORDER_OUT_MAP = "OUTBOUND_ERA_PREFIXES"  # outbound on the uplinks: the fabric's own prefixes only
BORDER_OUT_LIST = "ERA_PREFIXES"
# inbound on the uplinks: the fabric's own prefixes refused from the site router. fabgen's, not
# NVIDIA's (docs/decisions.md): with spines each leaf has an ASN of its own, so a site router that
# hands leaf A's prefixes to leaf B (without 11:11: most strip communities) would otherwise put
# B's own hosts' /32s into its tenant VRFs through the border, and loop.
BORDER_IN_SITE_MAP = "INBOUND_ERA_PREFIXES"
BORDER_IN_MAP = "EXIT_FILTER"  # into the border VRF from the tenants: tagged with LEAK_COMMUNITY
ALL_PREFIXES = "ALL_PREFIXES"  # 0.0.0.0/0 le 32
LEAK_COMMUNITY = "11:11"  # routes leaked into the border VRF carry it, so no tenant imports another's back
LEAK_COMMUNITY_LIST = "11"


def border_switches(f: Any) -> list[Any]:
    """The switches that hold the border VRF: every leaf that holds nodes (the collapsed pair's two
    switches; with spines every striped leaf, as NVIDIA's largescale `cl` leaves each carry EXIT and
    its uplinks; every leaf pair's), not a storage server pair's leaves nor a spine; none without
    `northsouth.border`."""
    b = _border_spec(f.spec)
    return [s for s in f.switches if s.role == "leaf" and s.index <= f.plan.compute_leaves] if b is not None else []


def _border_spec(spec: Any) -> Any:
    eth = spec.ethernet
    return eth.northsouth.border if spec.role == "northsouth" and eth is not None else None


def border_speed(f: Any) -> int:
    """The border uplinks' speed: northsouth.border.speed, else the fabric's node ports'."""
    b = _border_spec(f.spec)
    return (b.speed if b is not None and b.speed else 0) or f.plan.speed


def border_groups(f: Any) -> LeafGroups:
    """A north-south leaf's border uplinks and the cages they split at their own speed (spec/layout.py
    `leaf_groups`), without the out-of-band uplinks (which sit below them)."""
    b = _border_spec(f.spec)
    return leaf_groups(f.plan, f.switch_model, (b.uplinks, b.speed or 0) if b is not None else (0, 0))


def leaf_cages(ctx: Context) -> dict[int, int]:
    """The cages every leaf of a north-south fabric splits at a port group's own speed (0-based cage ->
    speed): the border uplinks' and a routed out-of-band network's uplinks' (both on every leaf, so
    a role's cages split alike; unused there, their ports are down). Empty where no group has a
    speed of its own: the leaf's cages are the plan's (`Plan.cage_speeds`)."""
    r = ctx.oob_routed
    if r is not None and r.northsouth == ctx.fabric.spec.name:
        return dict(r.pair_cages)
    return border_groups(ctx.fabric).cages if ctx.fabric.spec.role == "northsouth" else {}


def border_ports(f: Any, uplinks: int) -> tuple[str, ...]:
    """A border leaf's uplink ports by name, in order (spec/layout.py `leaf_groups`: the highest ports
    no planned node and no switch-to-switch link takes, whole cages at northsouth.border.speed)."""
    return border_groups(f).border[:uplinks]


def border_uplinks(f: Any) -> list[tuple[str, str, str, str, int]]:
    """Every border uplink of fabric `f`: (leaf, its port, the router, the router's port, speed),
    leaf by leaf; the router's ports are numbered `uplink<k>` across the fabric in leaf order (leaf
    i's k-th uplink is number (i - 1) * uplinks + k, so a leaf added later takes the next ones)."""
    b = _border_spec(f.spec)
    if b is None:
        return []
    ports = border_ports(f, b.uplinks)
    speed = border_speed(f)
    out: list[tuple[str, str, str, str, int]] = []
    for s in border_switches(f):
        for k, port in enumerate(ports):
            out.append((s.name, port, b.router, f"uplink{(s.index - 1) * b.uplinks + k + 1}", speed))
    return out


def with_border(summary: Any, f: Any) -> Any:
    """A fabric's summary (topology/analysis.py) with its border uplinks, which the intent adds to the
    built topology: their leaf ports are used, their cables are links of their own tier (report.json
    and `fabgen compare` count them alike), at their own speed where northsouth.border.speed gives one
    (report.json's `tier_speeds_gbps`)."""
    from dataclasses import replace

    ups = len(border_uplinks(f))
    if not ups:
        return summary
    speeds = summary.tier_speeds
    if border_speed(f) != f.plan.speed:  # northsouth.border.speed: the tiers' speeds, the border's among them
        peer = ("leaf-leaf",) if "leaf-leaf" in summary.links else ()
        tiers = ("node-leaf", "leaf-spine", "spine-core")[:f.plan.tiers]
        speeds = {**(speeds or {t: f.plan.tier_speed(t) for t in (*tiers, *peer)}), BORDER_TIER: border_speed(f)}
    return replace(summary, ports_used=summary.ports_used + ups, links={**summary.links, BORDER_TIER: ups},
                   tier_speeds=speeds)


def border_medium(f: Any) -> Any:
    """A border uplink's medium (spec/media.py): the fabric's leaf-spine tier's, as the collapsed
    pair's peer links take it, at the uplinks' speed."""
    speed = border_speed(f)
    m = media.tier_medium(f.spec, f.switch_model, speed, "leaf-spine")
    return m if isinstance(m, media.Medium) else media.by_key(f.switch_model, speed, "mmf")


def border_cabling(f: Any) -> list[list[str]]:
    """cabling.csv's rows of the border uplinks (after the fabric's own cables): the leaf and its
    port, the site router and its port, the speed, the medium, tier leaf-border."""
    ups = border_uplinks(f)
    key = border_medium(f).key if ups else ""
    return [[sw, port, router, rport, f"{speed}G", key, BORDER_TIER] for sw, port, router, rport, speed in ups]


def border(ctx: Context) -> dict[str, Any] | None:
    """The border as the switch targets write it: the VRF and its L3VNI, the router and its ASN
    (None: any external), each border switch's uplinks (port, far end), the BFD timers of the
    `border` class (None: none), the ECMP width, the leaked tenants (role, VRF, subnet) and the
    loopbacks pool their VRF loopbacks come from (None without northsouth.vrf_loopbacks or
    border.loopback), each border switch's border-VRF loopback (border.loopback) and the VRF's
    layer-3 VNI VLAN (border.l3vni_vlan, None: not written)."""
    b = _border_spec(ctx.fabric.spec)
    if b is None:
        return None
    eth = options(ctx)
    timers = eth.bfd.border
    overlay = {t["role"]: t for t in tenants(ctx)}
    leaked = [{"role": r, "vrf": overlay[r]["vrf"], "subnet": overlay[r]["subnet"]} for r in ROLES if r in b.leak]
    ups: dict[str, list[dict[str, Any]]] = {}
    # the tiers or a port group at their own speeds: every used port's speed is written
    mixed = ctx.fabric.plan.mixed or bool(leaf_cages(ctx))
    for sw, port, router, rport, speed in border_uplinks(ctx.fabric):
        ups.setdefault(sw, []).append({"port": port, "description": f"{router}:{rport}",
                                       **({"speed": speed} if mixed else {})})
    # the tenant VRFs' loopbacks (northsouth.vrf_loopbacks) leak into the border VRF with their
    # tenants: the loopbacks pool goes out beside the subnets, as NVIDIA's ERA_PREFIXES rule 20
    # announces its loopback range `le 32` (csl-01-config.sh at 993eed6: 172.16.176.0/24)
    # (the border VRF's own, northsouth.border.loopback, from the same pool: it goes out as NVIDIA's does)
    tenants_alloc = ctx.allocation.tenants
    lo = plane_cidr(eth.pools.loopbacks, ctx.fabric) if eth.northsouth.vrf_loopbacks or b.loopback else None
    return {"vrf": b.vrf, "l3vni": b.l3vni, "router": b.router, "asn": b.asn, "uplinks": ups, "ecmp": b.ecmp,
            "bfd": None if timers is None else {"interval_ms": timers.interval_ms, "multiplier": timers.multiplier},
            "leak": leaked, "group": b.peer_group, "inbound_filter": b.inbound_filter, "loopbacks": lo,
            # border.multipaths: default-only (NVIDIA's), only where set
            **({"multipaths": b.multipaths} if b.multipaths != "both" else {}),
            # northsouth.border.loopback: each border switch's border-VRF loopback, its router-id there, denied
            # back into the VRF by EXIT_FILTER's rule 10 (NVIDIA's csl-01 at 993eed6, core-01 at 2f46cb2)
            "own_loopbacks": dict(tenants_alloc.border_loopbacks) if tenants_alloc is not None else {},
            "l3vni_vlan": b.l3vni_vlan,
            # a routed out-of-band network on the pair (oob_design routed): its subnet leaks into the
            # border VRF there and reaches every border leaf by EVPN, so every one sends it out and
            # refuses it back (ERA_PREFIXES), not the pair alone
            "oob_subnet": ctx.oob_routed.subnet if ctx.oob_routed is not None else None,
            # the out-of-band VRF's own loopbacks (oob_routed.vrf_loopbacks) leak with it and go out too, as
            # NVIDIA's ERA_PREFIXES holds its loopback range, OOB's 172.16.1.151 inside (csl-01 at 993eed6)
            "oob_loopbacks": ctx.oob_routed.vrf_loopbacks or None if ctx.oob_routed is not None else None}
