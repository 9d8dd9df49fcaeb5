"""The way out of a northsouth fabric (northsouth.border) in the EVPN lab: the border VRF's
sessions to a site router, its route policy and the leaking between it and the tenant VRFs, read
from the NVUE files as the switches would run them and translated into FRR's lines; the site
router, outside the plan, stood in for by a namespace of the lab's own.

NVUE's keys and FRR's lines (Cumulus Linux writes its FRR from the same keys):
- `vrf EXIT router bgp peer-group exit remote-as external`, `neighbor swp61s0 type unnumbered`:
  `router bgp ASN vrf EXIT`, `neighbor exit peer-group`, `neighbor swp61s0 interface peer-group exit`;
- `... policy inbound|outbound route-map NAME`: `neighbor exit route-map NAME in|out`;
- `address-family ipv4-unicast route-import from-vrf list X route-map M`: `import vrf X`,
  `import vrf route-map M` (FRR's VRF route leaking);
- `router policy prefix-list NAME rule N action permit match P max-prefix-len L`:
  `ip prefix-list NAME seq N permit P le L`;
- `router policy community-list 11 rule N action permit community 11:11`:
  `bgp community-list 11 seq N permit 11:11` (a standard list by number);
- `router policy route-map NAME rule N action permit|deny`, `match ip-prefix-list L`,
  `match community-list C`, `set community 11:11`: `route-map NAME permit|deny N`,
  `match ip address prefix-list L`, `match community C`, `set community 11:11`.
Every value is held to what fabgen writes before it reaches a line (emulate/inputs.py).

The site router announces the site (an address of the documentation ranges, RFC 5737) and one
of the fabric's own prefixes, which the border must refuse (INBOUND_ERA_PREFIXES): the lab checks
the sessions, that the site learns the leaked tenants' prefixes, that each border VRF holds the
site and not the refused prefix, that the tenants import the site, and that each kept node's
in-band address reaches the site through its leaf, with one leaf of each pair down too.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any

from fabgen.emulate import inputs
from fabgen.emulate.model import TranslateError

ON = ("on", "enabled")
ACTIONS = ("permit", "deny")
COMMUNITY = re.compile(r"[0-9]{1,5}:[0-9]{1,5}")
# the site router's ASN where the border's peer group names none (remote-as external): one of the
# documentation ASNs (RFC 5398), unless the fabric uses it
SITE_ASNS = (64496, 64497, 64498, 64499)
# the site's address and the site router's id: documentation addresses (RFC 5737), the first that
# no prefix of the fabric holds
SITE_ADDRESSES = ("192.0.2.1", "198.51.100.1", "203.0.113.1")


@dataclass
class Group:
    """A border VRF's peer group: its remote AS and its IPv4 route-maps."""

    remote: str = "external"
    inbound: str = ""
    outbound: str = ""


@dataclass
class VrfBgp:
    """A VRF's own BGP beyond redistribution: the border VRF's sessions, ECMP and imports; a
    tenant's imports from the border VRF."""

    groups: dict[str, Group] = field(default_factory=dict)
    neighbors: dict[str, str] = field(default_factory=dict)  # port -> peer group (unnumbered)
    multipaths: int = 0
    imports: list[str] = field(default_factory=list)  # the VRFs whose routes it imports
    import_map: str = ""


@dataclass
class Rule:
    """One route-map rule: permit or deny, matching a prefix list or a community list (or all),
    setting a community (or nothing)."""

    action: str
    match: tuple[str, str] | None = None  # ("prefix-list" | "community-list", name)
    community: str = ""


@dataclass
class Policy:
    """A switch's route policy as the way out uses it."""

    prefix_lists: dict[str, list[tuple[int, str, str, int]]] = field(default_factory=dict)  # (seq, action, prefix, le)
    community_lists: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)  # (seq, action, community)
    route_maps: dict[str, dict[int, Rule]] = field(default_factory=dict)


def vrf_bgp(bgp: Any, where: str) -> VrfBgp | None:
    """A VRF's sessions and imports from its NVUE `router bgp` (None when it has neither)."""
    af = bgp.get("address-family", {}).get("ipv4-unicast", {})
    imp = af.get("route-import", {}).get("from-vrf", {})
    if not bgp.get("neighbor") and not imp:
        return None
    v = VrfBgp()
    for group, g in bgp.get("peer-group", {}).items():
        policy = g.get("address-family", {}).get("ipv4-unicast", {}).get("policy", {})
        if set(policy) - {"inbound", "outbound"}:
            raise TranslateError(f"{where}: peer group {group}'s IPv4 policy: only route-maps in and out are emulated")
        v.groups[str(group)] = Group(str(g.get("remote-as", "external")),
                                     str(policy.get("inbound", {}).get("route-map", "")),
                                     str(policy.get("outbound", {}).get("route-map", "")))
    for port, n in bgp.get("neighbor", {}).items():
        if n.get("type") != "unnumbered":
            raise TranslateError(f"{where}: a VRF's neighbor {port}: only unnumbered sessions are emulated there")
        v.neighbors[str(port)] = str(n["peer-group"])
    v.multipaths = int(af.get("multipaths", {}).get("ebgp", 0))
    if imp:
        if imp.get("state") not in ON:
            raise TranslateError(f"{where}: route-import from-vrf is written enabled")
        v.imports = [str(x) for x in imp.get("list", {})]
        v.import_map = str(imp.get("route-map", ""))
    return v


def _action(value: Any) -> str:
    """A route-map rule's action: `{permit: {}}` or `{deny: {}}`, a list's: the word."""
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value))
    return str(value)


def policy(tree: Any, where: str) -> Policy:
    """The route policy's prefix lists, community lists and route-maps from `router policy`."""
    p = Policy()
    for name, lst in tree.get("prefix-list", {}).items():
        entries = []
        for seq, r in lst["rule"].items():
            (prefix, m), = r["match"].items()
            entries.append((seq, _action(r["action"]), prefix, m.get("max-prefix-len", 32)))
        p.prefix_lists[str(name)] = entries
    for name, lst in tree.get("community-list", {}).items():
        p.community_lists[str(name)] = [(seq, _action(r["action"]), c) for seq, r in lst["rule"].items()
                                        for c in r["community"]]
    for name, m in tree.get("route-map", {}).items():
        parsed: dict[int, Rule] = {}
        for seq, r in m["rule"].items():
            if set(r) - {"action", "match", "set"}:
                raise TranslateError(f"{where}: route-map {name} rule {seq}: only action, match and set are emulated")
            match = r.get("match")
            rule = Rule(_action(r["action"]))
            if match is not None:
                if "ip-prefix-list" in match and set(match) <= {"ip-prefix-list", "type"} and \
                        match.get("type", "ipv4") == "ipv4":
                    rule.match = ("prefix-list", match["ip-prefix-list"])
                elif set(match) == {"community-list"}:
                    rule.match = ("community-list", match["community-list"])
                else:
                    raise TranslateError(f"{where}: route-map {name} rule {seq}: only an IPv4 prefix list or a "
                                         "community list is matched")
            sets = r.get("set")
            if sets is not None:
                if set(sets) != {"community"} or len(sets["community"]) != 1:
                    raise TranslateError(f"{where}: route-map {name} rule {seq}: only one community is set")
                rule.community = next(iter(sets["community"]))
            parsed[seq] = rule
        p.route_maps[str(name)] = parsed
    return p


def checked_policy(p: Policy, where: str) -> Policy:
    """Every name, number, prefix and community held to what fabgen writes: each becomes part of
    an FRR line. Rule numbers are made integers here."""
    i = inputs
    for name, plist in p.prefix_lists.items():
        i.name(name, i.WORD, where, "prefix list")
        p.prefix_lists[name] = [
            (i.integer(seq, 1, 65535, where, f"prefix list {name}'s rule"),
             i.name(action, re.compile("|".join(ACTIONS)), where, f"prefix list {name}'s action"),
             i.network(prefix, where, f"prefix list {name}'s prefix"),
             i.integer(le, 0, 32, where, f"prefix list {name}'s max-prefix-len")) for seq, action, prefix, le in plist]
        for _, _, prefix, le in p.prefix_lists[name]:
            if prefix == "default" or ipaddress.ip_network(prefix).version != 4 or \
                    le < ipaddress.ip_network(prefix).prefixlen:
                raise inputs.InputError(f"{where}: prefix list {name}: {prefix} with max-prefix-len {le}, which "
                                        "fabgen never writes")
    for name, entries in p.community_lists.items():
        i.integer(name, 1, 99, where, "community list")  # a standard list by number, as fabgen writes `11`
        p.community_lists[name] = [
            (i.integer(seq, 1, 65535, where, f"community list {name}'s rule"),
             i.name(action, re.compile("|".join(ACTIONS)), where, f"community list {name}'s action"),
             i.name(c, COMMUNITY, where, f"community list {name}'s community")) for seq, action, c in entries]
    for name, rmap in p.route_maps.items():
        i.name(name, i.WORD, where, "route-map")
        checked: dict[int, Rule] = {}
        for seq, r in rmap.items():
            at = f"route-map {name} rule {seq}"
            n = i.integer(seq, 1, 65535, where, f"route-map {name}'s rule")
            i.name(r.action, re.compile("|".join(ACTIONS)), where, f"{at}'s action")
            if r.match is not None:
                kind, listed = r.match
                known = p.prefix_lists if kind == "prefix-list" else p.community_lists
                if listed not in known:
                    raise inputs.InputError(f"{where}: {at} matches {kind} {i.name(listed, i.WORD, where, kind)}, "
                                            "which is not defined")
            if r.community:
                i.name(r.community, COMMUNITY, where, f"{at}'s community")
            checked[n] = r
        p.route_maps[name] = checked
    return p


def checked_vrf(vrf: str, v: VrfBgp, vrfs: set[str], p: Policy, bandwidth: set[str], where: str) -> None:
    """A VRF's sessions and imports held to what fabgen writes: names, a remote AS, route-maps that
    are defined, imports from VRFs of the switch."""
    i = inputs
    maps = set(p.route_maps) | bandwidth
    for group, g in v.groups.items():
        i.name(group, i.WORD, where, f"VRF {vrf}'s peer group")
        if g.remote not in ("external", "internal"):
            g.remote = str(i.integer(g.remote, 1, i.ASN_MAX, where, f"peer group {group}'s remote-as"))
        for name in (g.inbound, g.outbound):
            if name and i.name(name, i.WORD, where, f"peer group {group}'s route-map") not in maps:
                raise inputs.InputError(f"{where}: peer group {group} uses route-map {name}, which is not defined")
    for port, group in v.neighbors.items():
        i.name(port, i.IFNAME, where, f"VRF {vrf}'s BGP port")
        if group not in v.groups:
            raise inputs.InputError(f"{where}: VRF {vrf}'s neighbor {port}: peer group {group} is not configured")
    if v.multipaths:
        v.multipaths = i.integer(v.multipaths, 1, 1024, where, f"VRF {vrf}'s maximum paths")
    for other in v.imports:
        if i.name(other, i.IFNAME, where, f"VRF {vrf}'s import") not in vrfs or other == vrf:
            raise inputs.InputError(f"{where}: VRF {vrf} imports VRF {other}, which is not another VRF of the switch")
    if v.import_map and i.name(v.import_map, i.WORD, where, f"VRF {vrf}'s import route-map") not in maps:
        raise inputs.InputError(f"{where}: VRF {vrf} imports through route-map {v.import_map}, which is not defined")


def policy_lines(p: Policy) -> list[str]:
    """FRR's lines of the route policy (before `router bgp`)."""
    out = []
    for name, plist in sorted(p.prefix_lists.items()):
        out += [f"ip prefix-list {name} seq {seq} {action} {prefix}"
                + (f" le {le}" if le > ipaddress.ip_network(prefix).prefixlen else "")
                for seq, action, prefix, le in plist]
    for name, entries in sorted(p.community_lists.items()):  # a standard list by its number (1-99)
        out += [f"bgp community-list {name} seq {seq} {action} {c}" for seq, action, c in entries]
    if out:
        out.append("!")
    for name, rmap in sorted(p.route_maps.items()):
        for seq, r in sorted(rmap.items()):
            out.append(f"route-map {name} {r.action} {seq}")
            if r.match is not None:
                kind, listed = r.match
                out.append(f" match ip address prefix-list {listed}" if kind == "prefix-list"
                           else f" match community {listed}")
            if r.community:
                out.append(f" set community {r.community}")
            out += ["exit", "!"]
    return out


def vrf_lines(v: VrfBgp) -> tuple[list[str], list[str]]:
    """(lines inside `router bgp ASN vrf X` before its address families, lines inside its IPv4
    address family)."""
    head = []
    for group, g in sorted(v.groups.items()):
        head += [f" neighbor {group} peer-group", f" neighbor {group} remote-as {g.remote}"]
    head += [f" neighbor {port} interface peer-group {group}" for port, group in sorted(v.neighbors.items())]
    af = []
    for group, g in sorted(v.groups.items()):
        af += ([f"  neighbor {group} route-map {g.inbound} in"] if g.inbound else []) + \
              ([f"  neighbor {group} route-map {g.outbound} out"] if g.outbound else [])
    if v.multipaths:
        af.append(f"  maximum-paths {v.multipaths}")
    af += [f"  import vrf {other}" for other in v.imports]
    if v.import_map:
        af.append(f"  import vrf route-map {v.import_map}")
    return head, af


@dataclass
class Site:
    """The site router as the lab stands it in: its name, its ports (toward which leaf port), its
    ASN, the site's address, and the fabric's prefix it announces for the border to refuse."""

    name: str
    ports: list[tuple[str, str, str]]  # (its port, leaf, leaf port)
    asn: int
    address: str
    refused: str  # a prefix inside the border's outbound prefix list: never to be taken in ("" if none)


def site(router: str, ports: list[tuple[str, str, str]], remote: str, used_asns: set[int], outbound: list[str],
         fabric_prefixes: list[str], refuse: bool = True) -> Site:
    """The site router for the lab: the ASN the border names (or a documentation ASN the fabric
    does not use), the first documentation address no prefix of the fabric holds, and, where the
    border refuses anything (`refuse`: an inbound route-map on its sessions), as the prefix to
    refuse the first half of the first prefix the border sends out (a tenant's subnet: held by
    nothing else in the border VRF, where the subnet and host routes are)."""
    free_asn = next((a for a in SITE_ASNS if a not in used_asns), None)
    nets = [ipaddress.ip_network(p) for p in (*outbound, *fabric_prefixes)]
    address = next((a for a in SITE_ADDRESSES if not any(ipaddress.ip_address(a) in n for n in nets)), None)
    if (free_asn is None and not remote.isdigit()) or address is None:  # a render no inventory gives
        raise inputs.InputError(f"cabling.csv: the border's router {router}: the lab has no documentation "
                                "ASN and address to stand in for it that the fabric does not use")
    asn = int(remote) if remote.isdigit() else int(free_asn or 0)
    first = ipaddress.ip_network(outbound[0]) if outbound and refuse else None
    refused = "" if first is None else str(next(first.subnets()) if first.prefixlen < 32 else first)
    return Site(router, ports, asn, address, refused)


def site_conf(s: Site) -> str:
    """frr.conf of the stand-in site router: unnumbered eBGP on every port, the site's address
    announced, and one of the fabric's own prefixes announced for the border to refuse (BGP
    announces it without holding it: `no bgp network import-check`)."""
    out = [f"! {s.name}: the site router, stood in for by fabgen's EVPN lab (outside the plan)",
           "frr defaults datacenter", f"hostname {s.name}", "log stdout warnings", "ip forwarding", "!",
           f"router bgp {s.asn}", f" bgp router-id {s.address}", " no bgp ebgp-requires-policy",
           " no bgp network import-check", " bgp bestpath as-path multipath-relax",
           " neighbor FABRIC peer-group", " neighbor FABRIC remote-as external"]
    out += [f" neighbor {port} interface peer-group FABRIC" for port, _, _ in s.ports]
    out += [" address-family ipv4 unicast", f"  network {s.address}/32",
            *([f"  network {s.refused}"] if s.refused else []), "  maximum-paths 64", " exit-address-family", "exit",
            "!"]
    return "\n".join(out) + "\n"


def routes(doc: Any) -> set[str]:
    """The prefixes of `show ip route [vrf X] json` (a mapping of prefix to its routes)."""
    return set(doc) if isinstance(doc, dict) else set()
