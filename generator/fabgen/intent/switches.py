"""The switches of an Ethernet fabric, platform-neutral: ports, addresses, BGP sessions.

Every value that appears on both ends of a link or on host and switch is decided here,
once: each port's address and its peer's, each BGP session's ASNs, the management plane
(`intent/management.py`); the QoS intent is `intent/qos.py`. The platform modules (EOS,
SONiC, NVUE) only translate this into their syntax, so two platforms in one fabric (or a
switch and a host) cannot disagree.

Decisions:
* every used port (fabric and host-facing) gets the lossless profile: PFC on the RoCE
  priority, ECN on the RoCE queue, strict priority for CNPs, the watchdog.
* unused ports are shut down.
* BGP: eBGP on every switch-to-switch link, one peer group per peer tier (SPINES, LEAVES,
  CORES) carrying BFD with its session class's timers (`bfd`: leaf_spine, spine_core,
  leaf_host, overlay; ethernet.bfd); remote ASN per neighbor (leaves have one each). ECMP width is
  the larger of 64 and the switch links the device has once the plan is built, so it is
  never below the uplink count and growing into the plan never changes it.
  Each switch announces its loopback and its host-facing subnets; the per-peer route
  limit is twice the planned fabric's prefix count (at least 12,000).
* a northsouth fabric (intent/northsouth.py): host ports are legs of the nodes' bonds, each
  an EVPN Ethernet segment carrying the in-band VLAN untagged (with LACP bypass/fallback) and
  storage tagged; every switch carries EVPN on its underlay sessions, every leaf is a
  VTEP with the storage and in-band tenants (`evpn`); the tenant subnets stay in their VRFs.
* the GPU overlay (`host_addressing: evpn`, NVIDIA's design for its Enterprise RAs): every GPU
  port of a plane is an access port of one VLAN (`ethernet.overlay`; with `vlans: rail` of its
  rail's, every rail's VLAN on every leaf of the plane, all in the one VRF) stretched over the plane's
  leaves (VXLAN from each leaf's loopback, head-end replication, ARP suppression), routed in the GPU
  VRF (its layer-3 VNI) by an anycast gateway on every leaf, no multihoming (a GPU port has one
  leaf); EVPN runs on loopback-to-loopback eBGP sessions of its own (`sessions: overlay`, peer group
  OVERLAY, the underlay's neighbors' loopbacks, BFD of the overlay class) as NVIDIA's generator
  writes them, the underlay's sessions carry IPv4 only; VXLAN keeps the RoCE DSCP (`dscp`).
* BGP to the host (storage and in-band fabrics, `host_routing: bgp`): a leaf peers with each
  node port on its /31, in peer group HOSTS, with the node's own ASN; the node announces its
  service address (targets/hosts.py writes its side).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fabgen.addressing import network_of
from fabgen.context import Context
from fabgen.intent import secret_ref
from fabgen.intent.baseline import baseline, named
from fabgen.intent.management import plane as management_plane
from fabgen.intent.northsouth import (
    BOND_ID_STRIDE,
    ES_SYS_MAC,
    GATEWAY_MAC,
    VXLAN_PORT,
    bond_index,
    bond_tenants,
    bond_vlans,
    group_tenants,
    host_bonds,
    leaf_cages,
    port_local_id,
    segment,
    tenants,
)
from fabgen.intent.qos import options
from fabgen.spec.sizing import Plan

PEER_GROUP = {"leaf": "LEAVES", "spine": "SPINES", "core": "CORES"}
HOSTS_GROUP = "HOSTS"  # host_routing bgp: the nodes' sessions on a leaf
# A collapsed pair's peer link (spec/sizing.py NS_PEER_LINKS): iBGP between the two leaves, as
# NVIDIA's csl-01/02 run it (peer group internal_isl, remote-as internal); its BFD class is the
# fabric's underlay class, leaf_spine (NVIDIA's "underlay" profile, 300 ms x 3, on it).
ISL_GROUP = "ISL"
# The BFD class of a session between two switch roles (ethernet.bfd); a leaf's sessions with the
# nodes are "leaf_host", the loopback EVPN sessions (EOS) "overlay".
BFD_CLASS = {frozenset({"leaf", "spine"}): "leaf_spine", frozenset({"spine", "core"}): "spine_core"}
HOSTS_BFD_CLASS = "leaf_host"
OVERLAY_BFD_CLASS = "overlay"
# fabgen's default timers (`bfd: true`): FRR's and EOS's own defaults, 300 ms x 3, which every
# platform ran before the timers were settable; output written with them is unchanged.
DEFAULT_BFD = {"interval_ms": 300, "multiplier": 3}
HOST_VLAN = 100  # leaf-subnet mode: the host VLAN of every leaf (locally significant)
OVERLAY_GROUP = "OVERLAY"  # host_addressing evpn: the loopback-to-loopback EVPN sessions (NVIDIA: `overlay`)
# eBGP between loopbacks one link apart: two hops (NVIDIA's `multihop-ttl 2` in gl-plane1-01-config.sh)
OVERLAY_MULTIHOP = 2
MIN_ECMP = 64
# host_addressing evpn: NVIDIA's leaves send their underlay routes with the link-bandwidth extended
# community set to their number of paths, so the spines weigh ECMP by it (gl-plane1-01-config.sh at
# 2b4e3e2 and 993eed6: `route-map WEIGHTED_ECMP rule 10 action permit`, `set ext-community-bw
# multipaths`, on peer group internal_isl `address-family ipv4-unicast policy outbound`)
WEIGHTED_ECMP = "WEIGHTED_ECMP"
MIN_MAX_ROUTES = 12000


def bfd_timers(eth: Any, cls: str) -> dict[str, int] | None:
    """The BFD timers of one session class ({interval_ms, multiplier}), None where it runs no BFD."""
    timers = getattr(eth.bfd, cls)
    return None if timers is None else {"interval_ms": timers.interval_ms, "multiplier": timers.multiplier}


def bfd_value(timers: dict[str, int] | None) -> bool | dict[str, int]:
    """Timers as the structured config writes them: true at fabgen's default timers (what
    `bfd: true` always wrote), false for none, else the timers."""
    return True if timers == DEFAULT_BFD else (False if timers is None else timers)


def switch_bfd(eth: Any, role: str, groups: list[str], overlay: bool) -> bool | dict[str, Any]:
    """A switch's `bgp.bfd`: true where every session it has runs BFD at fabgen's default timers,
    false where none runs BFD, else per peer group (and `overlay`, a switch with EVPN sessions)
    its class's timers or false."""
    per: dict[str, dict[str, int] | None] = {g: bfd_timers(eth, bfd_class(role, g)) for g in groups}
    if overlay:
        per[OVERLAY_BFD_CLASS] = bfd_timers(eth, OVERLAY_BFD_CLASS)
    if not per:  # a switch without BGP peers: the fabric's setting, as before classes
        return bfd_timers(eth, "leaf_spine") is not None
    if all(t == DEFAULT_BFD for t in per.values()):
        return True
    if all(t is None for t in per.values()):
        return False
    return {k: bfd_value(t) for k, t in per.items()}


def group_bfd(bfd: bool | dict[str, Any], group: str) -> dict[str, int] | None:
    """The timers of one peer group (or OVERLAY_BFD_CLASS) in a switch's `bgp.bfd`; None: no BFD."""
    value = bfd if isinstance(bfd, bool) else bfd.get(group, False)
    return DEFAULT_BFD if value is True else (value or None)


def bfd_class(role: str, peer_group: str) -> str:
    """The session class of a switch of `role` with the peers of `peer_group` (ethernet.bfd)."""
    if peer_group == HOSTS_GROUP:
        return HOSTS_BFD_CLASS
    if peer_group == ISL_GROUP:
        return "leaf_spine"
    peer_role = next(r for r, g in PEER_GROUP.items() if g == peer_group)
    return BFD_CLASS[frozenset({role, peer_role})]


def gpu_tenants(spec: Any, gpu: Any) -> list[dict[str, Any]]:
    """host_addressing evpn: the GPU tenant as the north-south tenants are written (intent/northsouth.py
    `tenants`), one a segment of the plane (addressing.py `Overlay`: the plane's one VLAN, or with
    overlay.vlans rail one a rail, all in the one GPU VRF with its one layer-3 VNI, as NVIDIA's 993eed6
    writes them: gsl-plane1-01 `vlan901` to `vlan907` each `vrf GPU`, `vrf GPU evpn vni 5003`): VLAN,
    VNIs, VRF, the subnet and its anycast gateway; no default route (a GPU port reaches its plane
    only), its VLAN untagged (an access port)."""
    return [{"role": "gpu", "vlan": seg.vlan, "vni": seg.vni, "vrf": spec.vrf, "l3vni": spec.l3vni,
             "l3vni_vlan": spec.l3vni_vlan,
             "subnet": seg.subnet, "gateway": seg.gateway, "prefix": seg.prefix, "default_route": False,
             "untagged": True} for seg in gpu.segments]


def _management(mgmt: dict[str, Any] | None, address: str | None) -> dict[str, Any] | None:
    """One switch's management plane: the fabric's settings (shared) and its own address."""
    if mgmt is None or address is None:
        return None
    return {"address": address, **mgmt}


def planned_fabric_links(plan: Plan, role: str) -> int:
    """Switch-to-switch links a switch of this role has once the plan is built: the ECMP width
    is set for them, so growing into the plan never changes it on an existing switch."""
    m, m2 = plan.factor("leaf-spine"), plan.factor("spine-core")  # links, not host-speed ports
    if role == "leaf":
        return (plan.up if plan.tiers >= 2 else plan.peer_links) // m
    if role == "spine":
        return plan.spine_down // m + (plan.spine_up // m2 if plan.tiers == 3 else 0)
    return plan.pods * plan.spine_core_width // m2


def planned_prefixes(plan: Plan, host_addressing: str) -> int:
    """Prefixes the planned fabric announces: a loopback per switch, and each NIC's /31 (p2p)
    or each leaf's host subnet (leaf-subnet); with evpn the underlay carries the loopbacks alone."""
    hosts = plan.endpoints + plan.storage if host_addressing == "p2p" else (
        0 if host_addressing == "evpn" else plan.leaves)
    return plan.leaves + plan.spines + plan.cores + hosts


def switch_configs(ctx: Context) -> list[dict[str, Any]]:
    """One structured config per switch, in switch order."""
    return list(switch_intents(ctx))


def switch_intents(ctx: Context) -> Iterator[dict[str, Any]]:
    """Each switch's structured config in switch order, made as it is asked for: a target that
    keeps only what it makes of each (NVUE's tree) never holds a plane's port dicts at once
    (2,560 switches of 256 ports each at 131,072 GPUs of four planes)."""
    return map(SwitchIntents(ctx), ctx.fabric.switches)


class SwitchIntents:
    """One switch's structured config per call, from what every switch of the fabric shares
    (worked out once here): a render piece structures only the switches it writes."""

    def __init__(self, ctx: Context):
        f = ctx.fabric
        self.f, self.alloc = f, ctx.allocation
        self.eth = eth = options(ctx)
        # Every switch learns every other switch's announcements: size the per-peer route limit
        # to the fabric (twice its prefixes), never below the usual 12,000, so growth to 65k host
        # /31s does not tear sessions down.
        self.limit = max(MIN_MAX_ROUTES, 2 * planned_prefixes(f.plan, eth.host_addressing))
        self.roles = {s.name: s.role for s in f.switches}
        self.mgmt = management_plane(f, ctx.baseline)
        self.site = ctx.baseline
        self.baselines: dict[str, dict[str, Any]] = {}
        self.names = f.switch_model.port_names(f.plan.speed)
        self.numbers = f.switch_model.port_numbers(f.plan.speed)
        self.role_names: dict[str, tuple[str, ...]] = {}  # `_names`
        # a north-south leaf's port groups at their own speed (border, out-of-band uplinks): its cages
        self.leaf_cages = leaf_cages(ctx)
        self.ns = ctx.allocation.tenants
        self.overlay = tenants(ctx) if self.ns is not None else None
        # each node port's bond (index, the node's bond count) and each bond shape's VLANs (PXE: in-band untagged)
        # (and the server group's `tenants`: the tenants its one bond carries, None: both)
        self.bond_of = {(h.name, nic.rdma): (bond_index(k, len(h.model.nics)), len(h.model.nics) // 2,
                                             group_tenants(ctx.groups, h.group))
                        for h in f.hosts for k, nic in enumerate(h.model.nics)} if self.ns is not None else {}
        self.bond_vlans = {(b, n, o): bond_vlans(bond_tenants(self.overlay, b, n, o))
                           for b, n, o in set(self.bond_of.values())} if self.overlay is not None else {}
        self.order = {s.name: k for k, s in enumerate(f.switches)}
        self.gpu = ctx.allocation.overlay  # host_addressing evpn: the plane's GPU subnet
        self.gpu_tenants = gpu_tenants(eth.overlay, self.gpu) if self.gpu is not None else None

    def baseline(self, role: str, name: str) -> dict[str, Any]:
        """{"baseline": the switch's baseline (intent/baseline.py)}, or {} without one (the
        structured config is then what it was before baselines), or without a management plane.
        Decided once per role: every switch of a role shares it (targets read it, never change it),
        but for banners naming the switch (`{hostname}`, intent/baseline.py `named`)."""
        if self.mgmt is None:
            return {}
        if role not in self.baselines:
            b = baseline(self.site, self.f.spec.baseline, role, self.f.spec.platform, self.mgmt["prefix"])
            self.baselines[role] = {} if b is None else {"baseline": b}
        shared = self.baselines[role]
        b = named(shared.get("baseline"), name)
        return shared if b is shared.get("baseline") else {"baseline": b}

    def _segment(self, node: str, bond: int, port: str) -> dict[str, Any]:
        """The Ethernet segment of a node's bond on this leaf port: its local id by the node's place (bond
        k: + k x BOND_ID_STRIDE) or, with northsouth.segment_local_id port, by the port (NVIDIA's; both
        legs on one port of either leaf: validation refuses it on striped racks); its system MAC."""
        ns = self.eth.northsouth
        assert self.ns is not None
        local = port_local_id(port) if ns.segment_local_id == "port" else self.ns.segments[node] + bond * BOND_ID_STRIDE
        return segment(local, ns.segment_mac.upper() if ns.segment_mac else ES_SYS_MAC)

    def mixed(self, role: str) -> bool:
        """Speeds mix on a switch of `role`: the tiers at their own (cabling.<tier>.speed), or a leaf's
        port group at its own (northsouth.border.speed, oob_routed.uplink_speed)."""
        return self.f.plan.mixed or (role == "leaf" and bool(self.leaf_cages))

    def cage_speeds(self, role: str) -> tuple[int, ...]:
        """Each cage's speed on a switch of `role`: the plan's, a leaf's port groups' cages at theirs."""
        speeds = self.f.cage_speeds(role)
        if role != "leaf" or not self.leaf_cages:
            return speeds
        return tuple(self.leaf_cages.get(c, v) for c, v in enumerate(speeds))

    def _names(self, role: str) -> tuple[str, ...]:
        """A switch's ports where speeds mix: each cage at its own (once per role)."""
        if role not in self.role_names:
            self.role_names[role] = self.f.switch_model.ports_by_cage(self.cage_speeds(role))
        return self.role_names[role]

    def _speeds(self, role: str, interfaces: list[dict[str, Any]], used: dict[str, int]) -> dict[str, Any]:
        """Speeds that mix: each used port's speed into its interface, and every cage's speed (its
        breakout) as the switch's `cages`."""
        for i in interfaces:
            if i["kind"] != "unused":
                i["speed"] = self.f.links[used[i["name"]]].speed
        return {"cages": list(self.cage_speeds(role))}

    def __call__(self, s: Any) -> dict[str, Any]:
        f, alloc, eth, limit, roles, mgmt = self.f, self.alloc, self.eth, self.limit, self.roles, self.mgmt
        speed, numbers = f.plan.speed, self.numbers
        mixed = self.mixed(s.role)
        names = self.names if not mixed else self._names(s.role)
        ns, overlay, order = self.ns, self.overlay, self.order
        used = f.ports.get(s.name, {})
        interfaces: list[dict[str, Any]] = []
        neighbors: list[dict[str, Any]] = []
        networks = [f"{alloc.loopbacks[s.name]}/32"]
        host_ports = 0
        uplinks = links = 0
        for port in names:
            idx = used.get(port)
            if idx is None:
                interfaces.append({"name": port, "kind": "unused"})
                continue
            lk = f.links[idx]
            a_ip, z_ip, plen = alloc.link_ips.get(idx, ("", "", 0))
            mine_a = lk.a == s.name
            peer, peer_port = (lk.z, lk.z_port) if mine_a else (lk.a, lk.a_port)
            ip, peer_ip = (a_ip, z_ip) if mine_a else (z_ip, a_ip)
            if lk.tier == "node-leaf" and ns is not None:  # a leg of the node's bond (EVPN multihoming)
                host_ports += 1
                n = numbers[port]
                b, nb, only = self.bond_of[peer, peer_port]  # a two-bond server's second bond: a segment of its own
                interfaces.append({"name": port, "kind": "host", "peer": peer, "peer_port": peer_port,
                                   "description": f"HOST_{peer}_{peer_port}",
                                   "bond": {"name": f"bond{n}", "channel": n, "host_bond": host_bonds(2 * nb)[b],
                                            "description": f"HOST_{peer}_{host_bonds(2 * nb)[b]}",
                                            "segment": self._segment(peer, b, port),
                                            **self.bond_vlans[b, nb, only]}})
                continue
            if lk.tier == "node-leaf":
                host_ports += 1
                iface: dict[str, Any] = {"name": port, "kind": "host", "peer": peer, "peer_port": peer_port,
                                         "description": f"HOST_{peer}_{peer_port}", "peer_ip": peer_ip}
                if eth.host_addressing == "p2p":
                    iface.update(ip=ip, prefix=plen)
                    networks.append(network_of(ip, plen))
                    if peer in alloc.node_asns:  # BGP to the host over this port's /31
                        neighbors.append({"ip": peer_ip, "local_ip": ip, "asn": alloc.node_asns[peer],
                                          "peer": peer, "peer_port": peer_port, "peer_group": HOSTS_GROUP})
                else:
                    # the GPU port's VLAN: the plane's, or its rail's (a compute link's ordinal: node x rails + rail)
                    gpu = self.gpu_tenants
                    iface.update(vlan=(gpu[lk.ordinal % f.plan.rails if len(gpu) > 1 else 0]["vlan"] if gpu
                                       else HOST_VLAN))
                interfaces.append(iface)
                continue
            links += 1
            uplinks += mine_a
            prole = roles[peer]
            interfaces.append({"name": port, "kind": "fabric", "peer": peer, "peer_port": peer_port,
                               "peer_role": prole, "description": f"P2P_{peer}_{peer_port}",
                               "ip": ip, "prefix": plen, "peer_ip": peer_ip})
            neighbors.append({"ip": peer_ip, "local_ip": ip, "asn": alloc.asns[peer], "peer": peer,
                              "peer_port": peer_port,
                              "peer_group": ISL_GROUP if lk.tier == "leaf-leaf" else PEER_GROUP[prole]})
        cages = self._speeds(s.role, interfaces, used) if mixed else {}
        subnet = alloc.leaf_subnets.get(s.name)
        svi = None
        if subnet is not None and host_ports:
            _, subnet_len = subnet.split("/")
            gateway = alloc.link_ips[next(i for i in used.values() if f.links[i].tier == "node-leaf")][1]
            svi = {"vlan": HOST_VLAN, "ip": gateway, "prefix": int(subnet_len), "subnet": subnet}
            networks.append(subnet)
        evpn = None
        if overlay is not None or self.gpu_tenants is not None:  # every switch carries EVPN; leaves are VTEPs
            peers = sorted({n["peer"] for n in neighbors if n["peer_group"] != HOSTS_GROUP}, key=order.__getitem__)
            mine: list[dict[str, Any]] = []  # a leaf's tenants, each with its own SVI address
            if overlay is not None and s.role == "leaf":  # north-south: both tenants, multihomed bonds
                assert ns is not None  # the overlay is made from the tenants
                # northsouth.vrf_loopbacks: each VRF's loopback its router-id, as NVIDIA's csl-01 (993eed6:
                # `vrf INBAND loopback ip address 172.16.1.167/32`, `vrf INBAND router bgp router-id 172.16.1.167`)
                # and core-01 (2-8-9-400, 2f46cb2) write them
                lo = ns.loopbacks.get(s.name)
                mine = [{**t, "svi_ip": ns.leaves[s.name][k],
                         **({"loopback": lo[k], "router_id": lo[k]} if lo else {})} for k, t in enumerate(overlay)]
            elif self.gpu is not None and self.gpu_tenants is not None and s.role == "leaf":  # the GPU overlay
                # the GPU VRF's loopback; its router-id the switch's, as NVIDIA's gl-plane1-01 writes them (2b4e3e2:
                # `vrf GPU loopback ip address 10.1.1.11/32`, `vrf GPU router bgp router-id 10.1.1.1`, lo's)
                lo_gpu = self.gpu.loopbacks.get(s.name)
                # every segment on every leaf of the plane (a rail's VLAN and SVI on each, as NVIDIA's core-01/02
                # write all eight rails' at 993eed6), so a leaf's VLANs follow the plan, never its cabling
                mine = [{**t, "svi_ip": seg.leaves[s.name],
                         **({"loopback": lo_gpu, "router_id": alloc.loopbacks[s.name]} if lo_gpu else {})}
                        for t, seg in zip(self.gpu_tenants, self.gpu.segments, strict=True)]
            evpn = {"vtep": alloc.loopbacks[s.name] if s.role == "leaf" else None, "gateway_mac": GATEWAY_MAC,
                    "udp_port": VXLAN_PORT, "relay": s.role != "leaf", "multihoming": overlay is not None,
                    # where EVPN runs: on the underlay's sessions, or on loopback-to-loopback ones (`overlay`)
                    "sessions": "underlay" if overlay is not None else "overlay",
                    # the loopback-to-loopback sessions (platforms that keep EVPN off the underlay's, the GPU overlay)
                    "overlay": [{"ip": alloc.loopbacks[p], "asn": alloc.asns[p], "peer": p} for p in peers],
                    "multihop": OVERLAY_MULTIHOP,
                    # RoCE's DSCP (its PFC and ECN classes) carried through the tunnel: copied into the outer
                    # header, the inner one kept at the far end (NVIDIA's `nve vxlan ... dscp action`); on a
                    # north-south fabric where ethernet.northsouth.dscp says so (csl-01-config.sh of 2-8-9-800
                    # at 993eed6 writes both lines, 2-4-5-800's neither)
                    "dscp": {"encapsulation": "copy", "decapsulation": "preserve"}
                    if overlay is None or eth.northsouth.dscp else None,
                    "tenants": mine}
        groups = sorted({n["peer_group"] for n in neighbors})
        # NVIDIA's GPU overlay on NVUE (AVD's l3ls-evpn, fabgen's EOS, writes neither): the leaves' underlay
        # sessions send the weighted-ECMP route-map (WEIGHTED_ECMP); multipath aspath-ignore on every switch
        # (gl- and gs-plane1-01 at 2b4e3e2 and 2f46cb2), unless ethernet.multipath_aspath_ignore says otherwise
        nvue = f.spec.platform == "nvue"
        # (none on a switch pair's peer links: NVIDIA's internal_isl sends none, gsl-plane1-01 at 2f46cb2)
        weighted = self.gpu_tenants is not None and s.role == "leaf" and nvue and not f.plan.pair
        aspath_ignore = eth.multipath_aspath_ignore
        if aspath_ignore is None:
            aspath_ignore = eth.host_addressing == "evpn" and nvue
        return {
            "name": s.name, "role": s.role, "management": _management(mgmt, alloc.management.get(s.name)),
            **self.baseline(s.role, s.name),
            "model": f.switch_model.key, "platform": f.spec.platform,
            "speed": speed, **cages, "mtu": eth.mtu, "loopback": alloc.loopbacks[s.name],
            "interfaces": interfaces, "svi": svi, **({"evpn": evpn} if evpn else {}),
            "bgp": {"asn": alloc.asns[s.name], "router_id": alloc.loopbacks[s.name],
                    "password_env": eth.bgp_password.env if eth.bgp_password else None,
                    "password": secret_ref(eth.bgp_password.env) if eth.bgp_password else None,
                    "ecmp": max(MIN_ECMP, planned_fabric_links(f.plan, s.role)), "uplinks": uplinks,
                    "bfd": switch_bfd(eth, s.role, groups, evpn is not None),
                    # ethernet.bfd.offload: NVIDIA's `router bfd offload enabled`, only where set
                    **({"bfd_offload": True} if eth.bfd.offload else {}),
                    "peer_groups": groups, "neighbors": neighbors, "networks": networks, "max_routes": limit,
                    # only where set, so that every other structured config (ansible/configs/) stays as it was
                    **({"aspath_ignore": True} if aspath_ignore else {}),
                    # peer group -> its outbound route-map (NVIDIA's WEIGHTED_ECMP on a GPU overlay leaf's underlay)
                    **({"route_map_out": {g: WEIGHTED_ECMP for g in groups if g != HOSTS_GROUP}} if weighted else {}),
                    # ethernet.announce: the loopback redistributed (NVUE, route-map LOOPBACK_BGP), not a network
                    **({"redistribute_loopback": True} if eth.announce == "redistribute" else {})},
            # ethernet.anycast_mac: NVIDIA's `system global anycast-mac`, only where set
            **({"anycast_mac": eth.anycast_mac.lower()} if eth.anycast_mac else {}),
        }
