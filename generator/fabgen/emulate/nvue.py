"""Cumulus Linux NVUE startup.yaml (what targets/nvue renders) -> the routing it describes.

Every leaf of the `set` tree is matched against a table: translated (interfaces, addresses,
bridge access ports and SVIs, BGP: ASN, router id, peer groups with remote-as and BFD,
neighbors, unnumbered ones on their port, networks, multipaths) or left out knowingly (QoS,
adaptive routing, the management plane, accounts, services, link settings), both dialects
(`ip` before Cumulus Linux 5.15, `ipv4` from it). Any other path is a TranslateError.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from fabgen.emulate.model import Neighbor, Router, TranslateError, load_yaml

_IFACE = r"(?P<port>[A-Za-z0-9_.-]+)"
_IPV = r"(?:ip|ipv4)"

# (pattern over the leaf's path, what is left out) for the paths not emulated
_IGNORED = [
    (r"qos/.*", "qos"), (r"router/adaptive-routing/.*", "adaptive routing"), (r"router/bfd/.*", "bfd timers"),
    (r"system/.*", "management"), (r"service/.*", "management"), (r"vrf/mgmt/.*", "management"),
    (r"vrf/default/router/static/.*", "management"),  # an access switch's default route: oob is not emulated
    (r"interface/eth0/.*", "management"), (rf"interface/{_IFACE}/description", "name"),
    (rf"interface/{_IFACE}/link/(breakout/.*|mtu|speed)", "link"), (rf"interface/{_IFACE}/qos/.*", "qos"),
    (rf"interface/{_IFACE}/router/adaptive-routing/.*", "adaptive routing"), (rf"interface/{_IFACE}/type", "type"),
    (r"router/bgp/(enable|state)", "on"), (r"vrf/default/router/bgp/(enable|state)", "on"),
    # a peer group's BFD timers (5.13/5.14; a profile's on 5.15+, router/bfd): the lab runs its own
    (r"vrf/default/router/bgp/peer-group/[^/]+/bfd/(detect-multiplier|min-rx-interval|min-tx-interval)",
     "bfd timers"),
    (r"interface/uplink/.*", "management"),
    (r"acl/.*", "management"),  # the baseline's control-plane ACL (targets/nvue.py)
    (rf"interface/{_IFACE}/telemetry/.*", "telemetry"),  # the baseline's histograms
]


def _leaves(tree: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every leaf of the tree as (path, value); an empty mapping is a leaf (a set word, as in `nv set`)."""
    if isinstance(tree, dict) and tree:
        out = []
        for k, v in tree.items():
            out += _leaves(v, (*path, str(k)))
        return out
    return [(path, tree)]


def translate(name: str, text: str, where: str) -> Router:
    try:
        doc = load_yaml(text, where)
        tree = next(item["set"] for item in doc if isinstance(item, dict) and "set" in item)
    except (yaml.YAMLError, TypeError, StopIteration, KeyError) as exc:
        raise TranslateError(f"{where}: not an NVUE startup.yaml with a '- set:' tree ({exc})") from None
    r = Router(name, "nvue")
    down: set[str] = set()
    ports: dict[str, dict[str, Any]] = {}
    for path, value in _leaves(tree):
        joined = "/".join(path)
        if not _one(r, joined, value, down, ports):
            raise TranslateError(f"{where}: the NVUE translator does not know {joined} ({value!r})")
    _ports(r, ports, down)
    if ports.get("lo", {}).get("redistributed"):  # ethernet.announce redistribute: the loopback, as a network
        r.networks += [a for a in r.loopbacks if a not in r.networks]
    for nb in r.neighbors:
        group = r.groups.get(nb.group)
        if group is None:
            raise TranslateError(f"{where}: neighbor {nb.peer} joins peer group {nb.group!r}, never declared")
        nb.remote_as, nb.bfd = nb.remote_as or group.remote_as, group.bfd
        if nb.unnumbered:
            r.unnumbered.append(nb.peer)
    return r


def _ports(r: Router, ports: dict[str, dict[str, Any]], down: set[str]) -> None:
    """Each port that is up by what its leaves made it: an access port, the loopback, an SVI or a
    routed port."""
    for port, info in ports.items():
        if port in down:
            continue
        if "access" in info:
            r.members[port] = f"vlan{info['access']}"
        elif "addresses" in info and port == "lo":
            r.loopbacks += info["addresses"]
        elif "addresses" in info and "vlan" in info:
            r.vlans[port] = info["addresses"]
        elif "addresses" in info:
            r.routed[port] = info["addresses"]


def _one(r: Router, path: str, value: Any, down: set[str], ports: dict[str, dict[str, Any]]) -> bool:  # noqa: C901 (one case a path)
    """Translate one leaf; False when the path is unknown."""
    m = re.fullmatch(rf"interface/{_IFACE}/{_IPV}/address/(?P<cidr>[0-9./]+)", path)
    if m:
        ports.setdefault(m.group("port"), {}).setdefault("addresses", []).append(m.group("cidr"))
        return True
    m = re.fullmatch(rf"interface/{_IFACE}/bridge/domain/br_default/access", path)
    if m:
        ports.setdefault(m.group("port"), {})["access"] = value
        return True
    m = re.fullmatch(rf"interface/{_IFACE}/vlan", path)
    if m:
        ports.setdefault(m.group("port"), {})["vlan"] = value
        return True
    m = re.fullmatch(rf"interface/{_IFACE}/link/state/down", path)
    if m:
        down.add(m.group("port"))
        return True
    if re.fullmatch(r"bridge/domain/br_default/vlan/[0-9]+", path):
        return True  # the bridge's VLAN: its SVI and access ports carry it
    if path == "router/bgp/autonomous-system":
        r.asn = int(value)
        return True
    if path == "router/bgp/router-id":
        r.router_id = str(value)
        return True
    base = "vrf/default/router/bgp/"
    if path == base + "address-family/ipv4-unicast/multipaths/ebgp":
        r.multipath = int(value)
        return True
    m = re.fullmatch(re.escape(base) + r"address-family/ipv4-unicast/network/(?P<cidr>[0-9./]+)", path)
    if m:
        r.networks.append(m.group("cidr"))
        return True
    # ethernet.announce redistribute: `redistribute connected` through LOOPBACK_BGP, which admits `lo` alone
    if path == base + "address-family/ipv4-unicast/redistribute/connected/route-map" and value == "LOOPBACK_BGP":
        ports.setdefault("lo", {})["redistributed"] = True
        return True
    if re.fullmatch(re.escape(base) + r"address-family/ipv4-unicast/redistribute/connected/(enable|state)", path):
        return value in ("on", "enabled")  # on, with the route-map above (targets/nvue.py writes both)
    if path in ("router/policy/route-map/LOOPBACK_BGP/rule/10/action/permit",
                "router/policy/route-map/LOOPBACK_BGP/rule/10/match/type") or (
            path == "router/policy/route-map/LOOPBACK_BGP/rule/10/match/interface" and value == "lo"):
        return True
    m = re.fullmatch(re.escape(base) + r"peer-group/(?P<g>[^/]+)/(?P<key>remote-as|bfd/enable|bfd/profile)", path)
    if m:
        group = r.groups.setdefault(m.group("g"), Neighbor("", "", m.group("g")))
        if m.group("key") == "remote-as":
            group.remote_as = str(value)
        else:  # 5.13/5.14: bfd enable on; 5.15+: a profile names the timers (BFD on)
            group.bfd = value == "on" if m.group("key") == "bfd/enable" else bool(value)
        return True
    m = re.fullmatch(re.escape(base) + rf"neighbor/{_IFACE}/(?P<key>peer-group|type|remote-as)", path)
    if m:
        nb = next((n for n in r.neighbors if n.peer == m.group("port")), None)
        if nb is None:
            nb = Neighbor(m.group("port"), "")
            r.neighbors.append(nb)
        if m.group("key") == "peer-group":
            nb.group = str(value)
        elif m.group("key") == "type":
            if value not in ("unnumbered", "numbered"):
                return False
            nb.unnumbered = value == "unnumbered"
        else:
            nb.remote_as = str(value)
        return True
    for pattern, what in _IGNORED:
        if re.fullmatch(pattern, path):
            r.ignored.add(what)
            return True
    return False
