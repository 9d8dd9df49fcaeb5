"""The GPU fabric's EVPN-VXLAN overlay (`host_addressing: evpn`) in the lab (docs/emulate.md).

Read from the rendered files only, as evpn.py reads a northsouth fabric: each plane's cabling.csv
and addresses.csv, every switch's NVUE startup.yaml (evpn.translate: the access ports and their
VLAN, the plane's one or each rail's with overlay.vlans rail, each SVI with its VRR anycast gateway
in its VRF, the VRF's layer-3 VNI, the VTEP, the underlay's unnumbered peer groups and the
overlay's sessions between loopbacks) and the kept nodes' netplans (each GPU port's address, its
table and rule), every value held to what fabgen writes before any namespace exists (a port's
address in its VLAN's subnet). Built as Cumulus Linux builds it, with evpn.py's pieces: each leaf
a VLAN-aware bridge with the GPU ports untagged in their VLAN, a VXLAN device per VNI from the
loopback, each SVI in its VRF with the anycast gateway on a macvlan; each spine a plain FRR router
relaying EVPN; each kept node a namespace with its GPU ports as its netplan writes them.

Checked: every underlay and overlay session up (the overlay's against the design: every leaf of a
plane to every spine of it), every VNI up on each leaf, each kept node's GPU ports resolving their
VLAN's gateway to the anycast MAC, each VLAN's subnet from every other leaf (EVPN type-5), each
port's MAC learned by its leaf and announced to the plane's other leaves in its VLAN's VNI (EVPN
type-2, FRR's `show evpn mac vni`), each port reaching a kept node's port on the next leaf
(another rail: over VXLAN, or routed in the VRF with a VLAN a rail); then with the first leaf of
each plane down (every port), the same among the other leaves.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from fabgen.emulate import evpn, inputs
from fabgen.emulate.checks import Finding, State
from fabgen.emulate.model import Host, HostPort, TranslateError

KEEP_PER_LEAVES = 2  # nodes kept per set of leaves (a scalable unit's): enough for a ping between two
LINKS_PER_PAIR = 2  # leaf-spine cables kept per pair: the overlay's checks count no paths (lab setting)
# s: each phase's bound for MACs to be announced and pings to pass, shared by its devices (in a VM
# without KVM on two busy cores they passed within 10 s of the first ping, 1-3 s after the gateway's)
REACH_WAIT = 20.0
# What hca-setup.sh sets on a node whose NICs share a subnet (targets/hosts.py): each NIC answers
# ARP only for its own address and asks from it; without them a node's four NICs in one VLAN answer
# for each other and traffic leaves on the wrong rail.
NODE_SYSCTLS = ("net.ipv4.conf.all.arp_announce=1", "net.ipv4.conf.all.arp_ignore=2")


@dataclass(frozen=True)
class Nic:
    """A kept node's GPU port: its interface, the plan's address (addresses.csv), its leaf and the
    access VLAN its leaf port is in (the plane's one, or its rail's: overlay.vlans rail)."""

    node: str
    port: str
    address: str  # without its prefix length
    leaf: str
    plane: str
    vlan: int = 0


@dataclass
class Plan:
    """What the lab holds of one overlay fabric (all its planes, or the one asked for)."""

    fabric: str
    switches: dict[str, evpn.Switch]
    hosts: dict[str, Host]  # kept nodes with their ports on these planes
    nics: list[Nic]
    cables: list[tuple[str, str, str, str]]  # (device, port, device, port) among kept devices
    overlay: dict[str, set[str]] = field(default_factory=dict)  # switch -> the switches it peers with over EVPN
    left_out: int = 0  # nodes not kept
    thinned: int = 0  # leaf-spine cables not built (LINKS_PER_PAIR)


# Reading -----------------------------------------------------------------------------------------

Table = Callable[[dict[str, bytes], str], list[dict[str, str]]]


def read(files: dict[str, bytes], fabric: str, planes: list[str], table: Table,
         keep: int = KEEP_PER_LEAVES) -> Plan:
    """The overlay from its render: every switch of the planes, `keep` nodes per set of leaves (in
    cabling order), at most LINKS_PER_PAIR cables between a leaf and a spine. TranslateError (an
    InputError for a value fabgen never writes) before any lab exists."""
    switches: dict[str, evpn.Switch] = {}
    legs: dict[str, list[tuple[str, Nic]]] = {}  # node -> [(leaf port, its port)]
    links: list[tuple[str, str, str, str]] = []
    overlay: dict[str, set[str]] = {}
    for plane in planes:
        addrs = table(files, f"{plane}/addresses.csv")
        switches.update(_plane_switches(files, plane, addrs))
        overlay.update(_designed_sessions(plane, addrs))
        _plane_legs(plane, table(files, f"{plane}/cabling.csv"), addrs, legs, links)
    kept = _kept(legs, keep)
    hosts = {n: _host(files, n, [nic for _, nic in legs[n]]) for n in kept}
    cables = [(nic.node, nic.port, nic.leaf, port) for n in kept for port, nic in legs[n]]
    spine_links, thinned = _thinned(links, switches)
    cables += spine_links
    evpn._check_cables(cables, fabric, switches, hosts)
    nics = [_in_vlan(switches[nic.leaf], port, nic) for n in kept for port, nic in legs[n]]
    return Plan(fabric, switches, hosts, nics, cables, overlay, len(legs) - len(kept), thinned)


def _in_vlan(sw: evpn.Switch, port: str, nic: Nic) -> Nic:
    """The NIC with its leaf port's access VLAN (one a plane, or one a rail), its address checked
    to lie in that VLAN's subnet (the SVI's), so each port's gateway is its VLAN's anycast one."""
    path = f"{nic.plane}/switches/{nic.leaf}.nvue.yaml"
    if port not in sw.access:
        raise TranslateError(f"{path}: {port} (cabled to {nic.node} {nic.port}) is no access port of the overlay's "
                             "VLAN")
    vlan = sw.access[port]
    subnet = ipaddress.ip_interface(sw.tenants[vlan].svi).network
    if ipaddress.ip_address(nic.address) not in subnet:
        raise TranslateError(f"{path}: {port} is in VLAN {vlan} ({subnet}), where {nic.node} {nic.port}'s address "
                             f"{nic.address} is not")
    return replace(nic, vlan=vlan)


def _plane_switches(files: dict[str, bytes], plane: str, addrs: list[dict[str, str]]) -> dict[str, evpn.Switch]:
    """A plane's switches (addresses.csv's leaves and spines), translated and checked: a leaf a VTEP
    with its tenant, every access port in a tenant's VLAN, every overlay neighbor another switch's
    loopback of the plane (which also bounds their number: bgpd holds memory per configured peer)."""
    roles = {r["device"]: r["role"] for r in addrs if r["role"] in ("leaf", "spine", "core")}
    loopbacks = {r["address"].split("/")[0]: r["device"] for r in addrs if r["device"] in roles
                 and r["interface"] == "lo"}
    out = {}
    for dev in sorted(roles):
        path = f"{plane}/switches/{dev}.nvue.yaml"
        if path not in files:
            raise TranslateError(f"{path}: the switch's NVUE file is not in the render (the overlay's emulation "
                                 "reads Cumulus NVUE files; an EOS overlay fabric is not emulated yet)")
        sw = evpn._checked_switch(inputs.translated(evpn.translate, dev, files[path], path), path)
        if (roles[dev] == "leaf") != bool(sw.vtep and sw.tenants):
            raise TranslateError(f"{path}: a {roles[dev]} " + ("without its VTEP or VLAN" if roles[dev] == "leaf"
                                                                 else "with a VTEP: the overlay's spines relay EVPN"))
        for port, vlan in sw.access.items():
            if vlan not in sw.tenants:
                raise TranslateError(f"{path}: {port}'s access VLAN {vlan} is none of the switch's VNIs")
        for address in sw.numbered:
            if loopbacks.get(address, dev) == dev:
                raise TranslateError(f"{path}: BGP neighbor {address} is no other switch's loopback of "
                                     f"{plane}/addresses.csv")
        out[dev] = sw
    return out


def _designed_sessions(plane: str, addrs: list[dict[str, str]]) -> dict[str, set[str]]:
    """The overlay's sessions as the design gives them (docs/emulate.md), never as the configs do:
    every leaf of a plane to every spine of it, between loopbacks."""
    leaves = {r["device"] for r in addrs if r["role"] == "leaf"}
    spines = {r["device"] for r in addrs if r["role"] == "spine"}
    return {**{leaf: set(spines) for leaf in leaves}, **{spine: set(leaves) for spine in spines}}


def _plane_legs(plane: str, rows: list[dict[str, str]], addrs: list[dict[str, str]],
                legs: dict[str, list[tuple[str, Nic]]], links: list[tuple[str, str, str, str]]) -> None:
    """Each node's GPU ports on the plane (its interface and address from addresses.csv, as the lab
    names a node's port) into `legs`, every switch-to-switch cable into `links`."""
    ports = {(r["device"], r["peer_device"], r["peer_interface"]): (r["interface"], r["address"])
             for r in addrs if r["role"] == "node"}
    for r in rows:
        if r["tier"] != "node-leaf":
            links.append((r["a_device"], r["a_port"], r["z_device"], r["z_port"]))
            continue
        node, leaf = r["a_device"], r["z_device"]
        port, address = ports.get((node, leaf, r["z_port"]), ("", ""))
        if not address:
            raise TranslateError(f"{plane}/addresses.csv: {node}'s port cabled to {leaf} {r['z_port']} has no "
                                 "address")
        inputs.name(port, inputs.IFNAME, f"{plane}/addresses.csv", f"{node}'s interface")
        inputs.cidr(address, f"{plane}/addresses.csv", f"{node} {port}'s address")
        legs.setdefault(node, []).append((r["z_port"], Nic(node, port, address.split("/")[0], leaf, plane)))


def _kept(legs: dict[str, list[tuple[str, Nic]]], keep: int) -> list[str]:
    """`keep` nodes of each set of leaves, in cabling order (the nodes of a scalable unit share its
    leaves: two of them are enough for a port to reach another node's port on another rail)."""
    groups: dict[frozenset[str], list[str]] = {}
    for node, ls in legs.items():
        group = groups.setdefault(frozenset(nic.leaf for _, nic in ls), [])
        if len(group) < keep:
            group.append(node)
    return [n for group in groups.values() for n in group]


def _thinned(links: list[tuple[str, str, str, str]], switches: Mapping[str, evpn.Switch]
             ) -> tuple[list[tuple[str, str, str, str]], int]:
    """At most LINKS_PER_PAIR cables between two switches (a leaf's 36 uplinks would be 144 sessions
    a plane; the overlay's checks count sessions, VNIs, MACs and pings, not paths), and how many
    were left out."""
    kept: list[tuple[str, str, str, str]] = []
    per: dict[frozenset[str], int] = {}
    for a, pa, z, pz in links:
        pair = frozenset((a, z))
        if per.get(pair, 0) < LINKS_PER_PAIR:
            per[pair] = per.get(pair, 0) + 1
            kept.append((a, pa, z, pz))
    return kept, len(links) - len(kept)


def _host(files: dict[str, bytes], name: str, nics: list[Nic]) -> Host:
    """A kept node's GPU ports as its netplan writes them (addresses, per-port table and rule),
    every value checked (inputs.host)."""
    from fabgen.emulate.read import BadInput, _read_host

    path = f"hosts/{name}/netplan.yaml"
    host = Host(name, {nic.port: HostPort(nic.port, [], plane=nic.plane) for nic in nics})
    try:
        _read_host(files, host)
    except BadInput as exc:
        raise TranslateError(str(exc)) from None
    host.frr = ""  # the overlay's nodes run no BGP
    return inputs.host(host, path)


# The lab -----------------------------------------------------------------------------------------

def build(la: Any, b: Any, plan: Plan, progress: Callable[[str], None]) -> dict[str, evpn.Switch]:
    """Namespaces, cables, the leaves' data planes, the nodes' ports and FRR; the switches as built
    (only their cabled ports)."""
    from fabgen.emulate.lab import daemons, host_ip, run

    for k, d in enumerate([*plan.switches, *plan.hosts]):
        b.ns[d] = la.namespace(k)
    la.neighbours(len(plan.cables))
    progress(f"cabling {len(plan.cables)} links")
    cabled: dict[str, set[str]] = {}
    for a, pa, z, pz in plan.cables:
        b.ip(b.ns[a], f"link add {pa} type veth peer name {pz} netns {b.ns[z]}")
        cabled.setdefault(a, set()).add(pa)
        cabled.setdefault(z, set()).add(pz)
    b.flush()
    built = {name: _lab_switch(sw, cabled.get(name, set())) for name, sw in plan.switches.items()}
    bridge = {b.ns[name]: _switch_lines(b, b.ns[name], sw, cabled.get(name, set())) for name, sw in built.items()}
    for name, host in plan.hosts.items():
        run("ip", "netns", "exec", b.ns[name], "sysctl", "-qw", *NODE_SYSCTLS)
        for port in host.ports:
            b.ip(b.ns[name], f"link set {port} up")
        host_ip(b, host)
    progress("bridges, VXLAN, VRFs and the nodes' ports")
    b.flush()
    for ns, lines in bridge.items():
        if lines:
            run("bridge", "-n", ns, "-batch", "-", inp="\n".join(lines) + "\n", timeout=120)
    progress("FRR daemons")
    for name, sw in built.items():
        d = la.frr_dir(b.ns[name])
        conf = d / "frr.conf"
        conf.write_text(evpn.frr_conf(sw))
        daemons(la, b, name, d, conf, bfd=False)
    return built


def _switch_lines(b: Any, ns: str, sw: evpn.Switch, cabled: set[str]) -> list[str]:
    """A switch's loopback and ports queued in `b`; a leaf's data plane too, as evpn.py builds it
    (Cumulus's ARP settings, bridge, VXLAN, VRF, SVI, anycast gateway): its `bridge -batch` lines."""
    from fabgen.emulate.lab import run

    b.ip(ns, f"addr add {sw.loopback} dev lo")
    for port in sorted(cabled):
        b.ip(ns, f"link set {port} up")
    if not sw.vtep:
        return []
    run("ip", "netns", "exec", ns, "sysctl", "-qw", *evpn.LEAF_SYSCTLS)
    lines, bridge = evpn.leaf_commands(sw)
    for line in lines:
        b.ip(ns, line)
    return bridge


def _lab_switch(sw: evpn.Switch, cabled: set[str]) -> evpn.Switch:
    """The switch as the lab builds it: only its cabled ports (access ports and unnumbered sessions)."""
    return replace(sw, access={p: v for p, v in sw.access.items() if p in cabled},
                   unnumbered={p: g for p, g in sw.unnumbered.items() if p in cabled})


# The checks --------------------------------------------------------------------------------------

def poll(la: Any, dirs: dict[str, Any]) -> State:
    """Every switch's sessions of both families: the underlay's (IPv4 unicast, unnumbered) and the
    overlay's (EVPN only, between loopbacks), one summary each, peers by name."""
    from fabgen.emulate.checks import _json

    s = State()
    for dev, d in dirs.items():
        doc = _json(la, d, "show bgp summary json") or {}
        peers: dict[str, Any] = {}
        versions = []
        for family in ("ipv4Unicast", "l2VpnEvpn"):
            part = doc.get(family) if isinstance(doc, dict) else None
            if isinstance(part, dict):
                peers.update(part.get("peers") or {})
                versions.append(part.get("tableVersion"))
        s.summary[dev] = {"peers": peers, "tableVersion": tuple(versions)}
    return s


def expected_sessions(plan: Plan, built: Mapping[str, evpn.Switch]) -> dict[str, tuple[int, int]]:
    """Per switch (underlay, overlay) sessions: a session per cable built to another switch, one
    per switch the design peers it with over EVPN."""
    underlay: dict[str, int] = {}
    for a, _, z, _ in plan.cables:
        if a in built and z in built:
            underlay[a], underlay[z] = underlay.get(a, 0) + 1, underlay.get(z, 0) + 1
    return {name: (underlay.get(name, 0), len(plan.overlay.get(name, ()))) for name in built}


def session_findings(state: State, plan: Plan, built: Mapping[str, evpn.Switch],
                     want: dict[str, tuple[int, int]]) -> list[Finding]:
    """Each switch's sessions of each family against the plan's: the underlay's on its ports, the
    overlay's to the loopbacks of the switches the design peers it with (a session to another
    switch's loopback does not count), naming the overlay peers down."""
    loopback = {sw.loopback.split("/")[0]: name for name, sw in built.items()}
    out = []
    for name, (under, over) in sorted(want.items()):
        peers = state.summary.get(name, {}).get("peers", {})
        up = {p for p, v in peers.items() if v.get("state") == "Established"}
        designed = plan.overlay.get(name, set())
        over_up = {loopback[p] for p in up if loopback.get(p) in designed}
        under_up = len([p for p in up if p not in loopback])
        if under_up < under or len(over_up) < over:
            missing = sorted(designed - over_up)
            out.append(Finding(name, "sessions", f"{under_up} of {under} underlay and {len(over_up)} of {over} "
                               "overlay (EVPN) BGP sessions established"
                               + (f"; overlay not up to {', '.join(missing)}" if missing else ""), missing))
    return out


def macs_of(ns: str) -> dict[str, str]:
    """A node namespace's interfaces' MACs (the lab's veths: a real NIC's MAC is in no render)."""
    from fabgen.emulate.lab import run

    try:
        links = json.loads(run("ip", "-j", "-n", ns, "link", "show").stdout or "[]")
    except ValueError:
        return {}
    return {str(x.get("ifname")): str(x.get("address", "")).lower() for x in links if isinstance(x, dict)}


def suspects(findings: list[Finding], built: Mapping[str, evpn.Switch]) -> list[tuple[str, str]]:
    """(leaf, why) most likely at fault: the leaf whose ports' type-2 routes are missing on two
    leaves or more (its VNI, its VTEP or its announcements), most first."""
    vtep = {sw.vtep: name for name, sw in built.items() if sw.vtep}
    missing: dict[str, set[str]] = {}
    for f in findings:
        if f.check == "type2":
            for origin in f.about:
                missing.setdefault(vtep.get(origin, origin), set()).add(f.device)
    ranked = sorted(missing.items(), key=lambda item: (-len(item[1]), item[0]))
    return [(leaf, f"its ports' EVPN type-2 routes are missing on {len(seen)} leaves") for leaf, seen in ranked
            if len(seen) >= 2]


def mac_problems(doc: Any, sw: evpn.Switch, want: dict[str, tuple[str, str]]) -> list[str]:
    """A leaf's EVPN MACs in FRR's `show evpn mac vni <vni> json` ({"numMacs", "macs": {mac: {"type":
    "local" | "remote", "remoteVtep"}}}, zebra_evpn_mac.c): every kept port's MAC (`want`: MAC ->
    (what it is, the VTEP of its leaf)) local where that VTEP is this leaf's, else remote at it."""
    macs = doc.get("macs", doc) if isinstance(doc, dict) else {}
    out = []
    for mac, (what, vtep) in sorted(want.items()):
        entry = macs.get(mac) if isinstance(macs, dict) else None
        if vtep == sw.vtep:
            if not isinstance(entry, dict) or entry.get("type") != "local":
                out.append(f"{what} ({mac}) not learned on its own leaf")
        elif not isinstance(entry, dict) or entry.get("type") != "remote" or entry.get("remoteVtep") != vtep:
            seen = f"{entry.get('type')} at {entry.get('remoteVtep', '-')}" if isinstance(entry, dict) else "absent"
            out.append(f"{what} ({mac}) has no EVPN type-2 route from {vtep} ({seen})")
    return out


def prefix_problems(doc: Any, vrf: str, subnet: str, vteps: set[str],
                    loopbacks: Mapping[str, str] | None = None) -> list[str]:
    """A leaf's VRF table in FRR's `show bgp vrf <vrf> ipv4 unicast json` ({"routes": {prefix: [path
    with "nexthops": [{"ip"}]]}}): the plane's subnet imported from every other leaf (`vteps`, their
    VTEPs: EVPN type-5, the VRF's connected subnet each leaf exports), and each other leaf's VRF
    loopback (`loopbacks`: its /32 -> its VTEP) from that leaf's VTEP."""

    def hops(prefix: str) -> set[str]:
        routes = doc.get("routes") if isinstance(doc, dict) else None
        paths = routes.get(prefix) if isinstance(routes, dict) else None
        return {str(hop.get("ip")) for path in (paths if isinstance(paths, list) else []) if isinstance(path, dict)
                for hop in (path.get("nexthops") or []) if isinstance(hop, dict)}

    missing = sorted(vteps - hops(subnet))
    out = [f"VRF {vrf}: {subnet} has no EVPN type-5 route from {', '.join(missing)}"] if missing else []
    out += [f"VRF {vrf}: the VRF loopback {lo} has no EVPN type-5 route from {vtep}"
            for lo, vtep in sorted((loopbacks or {}).items()) if vtep not in hops(lo)]
    return out


def _pairs(plan: Plan, down: set[str]) -> dict[str, list[tuple[str, str]]]:
    """Per kept node, (its port, target) pings: its gateway from every port on a leaf that is up, and
    from its k-th such port on a plane the next kept node's (k+1)-th (rail-optimized: the next leaf,
    another rail, so over VXLAN): 'gateway:<address>' or '<node>:<address>'."""
    def gateway(nic: Nic) -> str:  # its VLAN's anycast gateway on its leaf
        return plan.switches[nic.leaf].tenants[nic.vlan].gateway.split("/")[0]

    nodes = list(plan.hosts)
    out: dict[str, list[tuple[str, str]]] = {n: [] for n in nodes}
    for plane in sorted({nic.plane for nic in plan.nics}):
        up = {n: [x for x in plan.nics if x.node == n and x.plane == plane and x.leaf not in down] for n in nodes}
        for k, node in enumerate(nodes):
            other = up[nodes[(k + 1) % len(nodes)]] if len(nodes) > 1 else []
            for i, nic in enumerate(up[node]):
                out[node].append((nic.port, f"gateway:{gateway(nic)}"))
                if other:
                    far = other[(i + 1) % len(other)]
                    out[node].append((nic.port, f"{far.node}:{far.address}"))
    return out


def _left(until: float) -> float:
    """Seconds left of a phase's shared bound: a broken fabric waits it once, not once a device."""
    return max(0.0, until - time.monotonic())


def check(la: Any, b: Any, plan: Plan, built: Mapping[str, evpn.Switch], down: set[str],
          progress: Callable[[str], None]) -> list[Finding]:
    """VNIs, the gateway, type-2 routes and pings across rails, with the leaves in `down` down."""
    from fabgen.emulate.checks import _json

    out = []
    progress("VNIs on every leaf")
    for name, sw in built.items():
        if sw.vtep and name not in down:
            vnis = _json(la, b.dirs[name], "show evpn vni json") or {}
            missing = sorted(({t.vni for t in sw.tenants.values()} | set(sw.l3vnis.values())) - {int(k) for k in vnis})
            if missing:
                out.append(Finding(name, "vni", f"VNIs not up in FRR: {', '.join(map(str, missing))}"))
    out += _type5_findings(la, b, plan, built, down, progress)
    pairs = _pairs(plan, down)
    gateway_macs = {t.gateway.split("/")[0]: t.mac.lower() for sw in built.values() for t in sw.tenants.values()}
    progress("each node's gateway from every port")
    until = time.monotonic() + REACH_WAIT
    for name, mine in pairs.items():
        gw = [p for p in mine if p[1].startswith("gateway:")]
        found = evpn.wait_for(partial(evpn.reach_problems, b.ns[name], gw), _left(until))
        out += [Finding(name, "gateway", p) for p in found]
        out += [Finding(name, "gateway", p) for p in evpn.gateway_problems(b.ns[name], gw, gateway_macs)]
    progress("EVPN type-2 routes of every kept port on every leaf")
    out += _type2_findings(la, b, plan, built, down)
    progress("each leaf's VRF loopback from the plane's other leaves")
    until = time.monotonic() + REACH_WAIT
    for name, mine in loopback_pings(plan, built, down).items():
        found = evpn.wait_for(partial(evpn.reach_problems, b.ns[name], mine), _left(until))
        out += [Finding(name, "loopback", p) for p in found]
    progress("pings across rails over VXLAN")
    until = time.monotonic() + REACH_WAIT
    for name, mine in pairs.items():
        far = [p for p in mine if not p[1].startswith("gateway:")]
        found = evpn.wait_for(partial(evpn.reach_problems, b.ns[name], far), _left(until))
        if found:
            progress(f"{name}: {len(found)} of {len(far)} targets unreachable: {found[0]}")
        out += [Finding(name, "reach", p) for p in found]
    return out


def _type5_findings(la: Any, b: Any, plan: Plan, built: Mapping[str, evpn.Switch], down: set[str],
                    progress: Callable[[str], None]) -> list[Finding]:
    """Each up leaf's VRF holding each of its VLANs' subnets (the plane's, or every rail's) from every
    other up leaf of its plane (type-5), waited for, REACH_WAIT at most in all."""
    progress("EVPN type-5 routes of the plane's subnets in every leaf's VRF")
    plane_of = {nic.leaf: nic.plane for nic in plan.nics}
    up = {name for name, sw in built.items() if sw.vtep and name in plane_of and name not in down}
    out = []
    until = time.monotonic() + REACH_WAIT
    for name in sorted(up):
        sw = built[name]
        others = [o for o in up if o != name and plane_of[o] == plane_of[name]]
        vteps = {built[o].vtep for o in others}
        for k, vlan in enumerate(sorted(sw.tenants)):
            t = sw.tenants[vlan]
            subnet = str(ipaddress.ip_interface(t.svi).network)
            loopbacks = {built[o].vrf_loopbacks[t.vrf]: built[o].vtep for o in others
                         if t.vrf in built[o].vrf_loopbacks} if k == 0 else {}  # the VRF's loopbacks once
            found = evpn.wait_for(partial(_prefix_once, la, b.dirs[name], t.vrf, subnet, vteps, loopbacks),
                                  _left(until))
            out += [Finding(name, "type5", p) for p in found]
    return out


def _prefix_once(la: Any, d: Any, vrf: str, subnet: str, vteps: set[str], loopbacks: dict[str, str]) -> list[str]:
    """One reading of a leaf's VRF table against prefix_problems."""
    from fabgen.emulate.checks import _json

    return prefix_problems(_json(la, d, f"show bgp vrf {vrf} ipv4 unicast json"), vrf, subnet, vteps, loopbacks)


def loopback_pings(plan: Plan, built: Mapping[str, evpn.Switch], down: set[str]) -> dict[str, list[tuple[str, str]]]:
    """Per up leaf with a VRF loopback, (its VRF, 'leaf:<address>') pings: every other up leaf's VRF
    loopback on its plane, from the VRF (routed over the layer-3 VNI: EVPN type-5)."""
    plane_of = {nic.leaf: nic.plane for nic in plan.nics}
    up = sorted(n for n, sw in built.items() if sw.vtep and n in plane_of and n not in down)
    out: dict[str, list[tuple[str, str]]] = {}
    for name in up:
        for vrf in sorted(built[name].vrf_loopbacks):
            out.setdefault(name, []).extend(
                (vrf, f"{o}:{built[o].vrf_loopbacks[vrf].split('/')[0]}") for o in up
                if o != name and plane_of[o] == plane_of[name] and vrf in built[o].vrf_loopbacks)
    return out


def _type2_findings(la: Any, b: Any, plan: Plan, built: Mapping[str, evpn.Switch], down: set[str]) -> list[Finding]:
    """Each up leaf's MACs of the kept ports on its plane's up leaves: local on their own leaf,
    a type-2 route from that leaf's VTEP on every other (waited for, REACH_WAIT at most in all)."""
    from fabgen.emulate.checks import _json

    want: dict[tuple[str, int], dict[str, tuple[str, str]]] = {}  # (plane, VLAN) -> MAC -> (what, VTEP)
    for name in plan.hosts:
        macs = macs_of(b.ns[name])
        for nic in plan.nics:
            if nic.node == name and nic.leaf not in down and macs.get(nic.port):
                want.setdefault((nic.plane, nic.vlan), {})[macs[nic.port]] = (f"{name} {nic.port}",
                                                                              built[nic.leaf].vtep)
    plane_of = {nic.leaf: nic.plane for nic in plan.nics}
    out = []
    until = time.monotonic() + REACH_WAIT
    for name, sw in built.items():
        if not sw.vtep or name not in plane_of or name in down:
            continue
        for vlan, t in sorted(sw.tenants.items()):  # each VLAN's VNI: its ports' MACs (one a plane, or a rail)
            vni, mine = t.vni, want.get((plane_of[name], vlan), {})
            found = evpn.wait_for(lambda: mac_problems(_json(la, b.dirs[name], f"show evpn mac vni {vni} json"),  # noqa: B023 (called only within this iteration)
                                                       sw, mine), _left(until))  # noqa: B023
            origin = {f"{what} ({mac})": vtep for mac, (what, vtep) in mine.items()}
            out += [Finding(name, "type2", p, [v for k, v in origin.items() if p.startswith(k)][:1]) for p in found]
    return out


def leaves_to_fail(plan: Plan) -> set[str]:
    """The first leaf of each plane of several (every port down): its nodes keep their ports on the others."""
    leaves: dict[str, set[str]] = {}
    for nic in plan.nics:
        leaves.setdefault(nic.plane, set()).add(nic.leaf)
    return {min(ls) for ls in leaves.values() if len(ls) > 1}  # a plane of one leaf keeps it


def run_fabric(la: Any, plan: Plan, progress: Callable[[str], None]) -> tuple[list[Finding], list[str], int, int, int]:
    """One overlay fabric (read and checked by `read` before any lab exists) in the lab, then with
    the first leaf of each plane down: (findings, notes, switches, nodes, links). LabError where the
    kernel lacks what the lab needs."""
    from fabgen.emulate.checks import settle
    from fabgen.emulate.lab import Built, LabError

    missing = [m for m in evpn.missing_kernel_features(la) if m != "CONFIG_BONDING"]  # no bond here
    if missing:
        raise LabError(f"fabric {plan.fabric}: the GPU overlay needs 802.1Q VLANs, VRFs, macvlans and a VLAN-aware "
                       f"bridge in the lab, and this kernel lacks {', '.join(missing)}: run fabgen emulate on a "
                       "machine whose kernel has them (Debian's and Ubuntu's stock kernels do)")
    b = Built()
    built = build(la, b, plan, progress)
    want = expected_sessions(plan, built)
    state, took = settle(la, b.dirs, {n: u + o for n, (u, o) in want.items()}, 3.0, 300.0, progress, poller=poll)
    out = session_findings(state, plan, built, want)
    kept = f"{len(plan.hosts)} of {len(plan.hosts) + plan.left_out}"
    notes = [f"{plan.fabric}: the GPU EVPN overlay emulated with {kept} nodes ({KEEP_PER_LEAVES} per set of "
             f"leaves), converged in {took:.1f} s",
             f"{plan.fabric}: lab settings: at most {LINKS_PER_PAIR} cables between a leaf and a spine "
             f"({plan.thinned} left out), no BFD"]
    if out:  # every later check would wait its full bound for the same cause
        notes.append(f"{plan.fabric}: VNIs, type-2 routes and reachability not checked: BGP sessions are down")
        return out, notes, len(built), len(plan.hosts), len(plan.cables)
    out += check(la, b, plan, built, set(), progress)
    lo = sum(len(sw.vrf_loopbacks) for sw in built.values())
    if lo:
        notes.append(f"{plan.fabric}: {lo} VRF loopbacks, each in every other leaf's VRF by EVPN type-5 and reached "
                     "from its VRF")
    down = leaves_to_fail(plan)
    if not out and down:
        progress(f"taking {', '.join(sorted(down))} down")
        for a, pa, z, pz in plan.cables:
            for dev, port in ((a, pa), (z, pz)):
                if dev in down:
                    b.ip(b.ns[dev], f"link set {port} down")
        b.flush()
        notes.append(f"{plan.fabric}: then with {', '.join(sorted(down))} down (every port): the other leaves' "
                     "nodes reach each other")
        out += [Finding(f.device, f.check, f"{f.message} (a leaf down)", f.about)
                for f in check(la, b, plan, built, down, progress)]
    return out, notes, len(built), len(plan.hosts), len(plan.cables)
