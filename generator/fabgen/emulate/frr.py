"""A Router as FRR's integrated config (frr.conf), for one emulated switch.

Ports are named by their Linux interface in the switch's namespace (`ifname`), the vendor name
kept in the interface's alias. Decisions:
* `no bgp ebgp-requires-policy`: FRR alone drops eBGP routes without a policy (RFC 8212); EOS has
  no such rule, and Cumulus and SONiC ship FRR with it turned off. Forgetting it shows every
  session established and an empty RIB.
* no `bgp bestpath as-path multipath-relax`: fabgen's ASN plan gives every leaf its paths through
  one neighbouring AS, so full ECMP must come without it (the emulation would show it otherwise).
* BFD on a peer group where the config asks, with FRR's default timers (the switch's own timers
  are left out; bfdd runs beside bgpd). Lab timers of 2 s (FRR's per-peer form) let a 320-router
  sample pass, but left BFD between one spine and one leaf down in some CI runs: reverted.
"""

from __future__ import annotations

from fabgen.emulate.model import Router


def frr_conf(r: Router, ifname: dict[str, str]) -> str:
    """frr.conf of one router; ifname: vendor port -> Linux interface in its namespace."""
    out = [f"! {r.name} ({r.platform}): emulated by fabgen from its rendered config", "frr defaults datacenter",
           f"hostname {r.name}", "log stdout warnings", "ip forwarding", "!"]
    for name, rows in sorted(r.prefix_lists.items()):
        for seq, action, prefix, ge, le in sorted(rows):
            length = int(prefix.split("/")[1])
            bounds = (f" ge {ge}" if ge > length else "") + (f" le {le}" if le >= max(ge, length) and le != length
                                                              else "")
            out.append(f"ip prefix-list {name} seq {seq} {action} {prefix}{bounds}")
    for name, rows in sorted(r.maps.items()):
        for seq, action, match in sorted(rows):
            out.append(f"route-map {name} {action} {seq}")
            if match:
                out.append(f" match ip address prefix-list {match}")
            out.append("exit")
    out += ["!", f"router bgp {r.asn}"]
    if r.router_id:
        out.append(f" bgp router-id {r.router_id}")
    out.append(" no bgp ebgp-requires-policy")
    for g in sorted(r.groups.values(), key=lambda g: g.group):
        out.append(f" neighbor {g.group} peer-group")
        if g.remote_as:
            out.append(f" neighbor {g.group} remote-as {g.remote_as}")
        if g.bfd:
            out.append(f" neighbor {g.group} bfd")
    for nb in r.neighbors:
        peer = ifname[nb.peer] if nb.unnumbered else nb.peer
        if nb.unnumbered:
            out.append(f" neighbor {peer} interface" + (f" peer-group {nb.group}" if nb.group else ""))
        elif nb.group:
            out.append(f" neighbor {peer} peer-group {nb.group}")
        group = r.groups.get(nb.group)
        if nb.remote_as and (group is None or nb.remote_as != group.remote_as):
            out.append(f" neighbor {peer} remote-as {nb.remote_as}")
        if nb.bfd and group is None:
            out.append(f" neighbor {peer} bfd")
    out.append(" address-family ipv4 unicast")
    out += [f"  network {n}" for n in r.networks]
    for group, (rin, rout) in sorted(r.route_maps.items()):
        if rin:
            out.append(f"  neighbor {group} route-map {rin} in")
        if rout:
            out.append(f"  neighbor {group} route-map {rout} out")
    out += [f"  maximum-paths {r.multipath}", " exit-address-family", "exit", "!"]
    return "\n".join(out) + "\n"
