"""A Router as FRR's integrated config (frr.conf), for one emulated switch.

Ports are named by their Linux interface in the switch's namespace (`ifname`), the vendor name
kept in the interface's alias. Decisions:
* `no bgp ebgp-requires-policy`: FRR alone drops eBGP routes without a policy (RFC 8212); EOS has
  no such rule, and Cumulus and SONiC ship FRR with it turned off. Forgetting it shows every
  session established and an empty RIB.
* no `bgp bestpath as-path multipath-relax`: fabgen's ASN plan gives every leaf its paths through
  one neighbouring AS, so full ECMP must come without it (the emulation would show it otherwise).
* BFD on a peer group where the config asks (the switch's own timers are left out; bfdd runs
  beside bgpd): FRR's default 300 ms in a lab of up to run.BFD_DEFAULT_UP_TO routers, beyond it
  2 s through a bfdd profile (`bfd` / `profile lab`, `neighbor G bfd profile lab`: FRR's
  documented form, https://docs.frrouting.org/en/latest/bfd.html#bfd-peer-and-profile-configuration).
  At 300 ms bfdd took most of the two cores beyond a hundred routers; the hidden per-peer form
  (`neighbor X bfd 3 2000 2000`) left BFD between one spine and one leaf down in some runs of a
  small fabric, so small fabrics keep the default.
* A large lab (the same bound) also relaxes BFD's detect multiplier to 10 and BGP's timers to
  10 s keepalive, 30 s hold: with FRR's datacenter 3 s / 9 s and BFD at 6 s, 160 routers with
  4,096 sessions on two cores kept flapping sessions (hold timer expired, BFD down) 15 minutes
  after their ports came up. A port taken down (`--fail`) is seen at once by the interface going
  down, not by these timers. The switches' own timers are not emulated either way.
"""

from __future__ import annotations

from fabgen.emulate.model import Router

LAB_BFD_MS = 2000  # a large lab's BFD interval (beyond run.BFD_DEFAULT_UP_TO routers)
LAB_BFD_MULTIPLIER = 10  # and its detect multiplier: 20 s
LAB_BGP_TIMERS = (10, 30)  # a large lab's BGP keepalive and hold, instead of the datacenter 3 and 9


def frr_conf(r: Router, ifname: dict[str, str], slow_bfd: bool = False) -> str:
    """frr.conf of one router; ifname: vendor port -> Linux interface in its namespace; slow_bfd:
    BFD at LAB_BFD_MS (a large lab) instead of FRR's default."""
    out = [f"! {r.name} ({r.platform}): emulated by fabgen from its rendered config", "frr defaults datacenter",
           f"hostname {r.name}", "log stdout warnings", "ip forwarding", "!"]
    profile = slow_bfd and (any(g.bfd for g in r.groups.values()) or any(n.bfd for n in r.neighbors))
    if profile:
        # first and without `exit`: every daemon reads the whole file (-f) and skips what it does not
        # know, but an `exit` at the top level ends zebra's and bgpd's reading of it
        out += ["bfd", " profile lab", f"  detect-multiplier {LAB_BFD_MULTIPLIER}", f"  receive-interval {LAB_BFD_MS}",
                f"  transmit-interval {LAB_BFD_MS}", "!"]
    out += _policies(r)
    out += ["!", f"router bgp {r.asn}"]
    if r.router_id:
        out.append(f" bgp router-id {r.router_id}")
    out.append(" no bgp ebgp-requires-policy")
    if slow_bfd:
        out.append(" timers bgp {} {}".format(*LAB_BGP_TIMERS))
    for g in sorted(r.groups.values(), key=lambda g: g.group):
        out.append(f" neighbor {g.group} peer-group")
        if g.remote_as:
            out.append(f" neighbor {g.group} remote-as {g.remote_as}")
        if g.bfd:
            out.append(f" neighbor {g.group} bfd" + (" profile lab" if profile else ""))
    out += _neighbors(r, ifname, profile)
    out.append(" address-family ipv4 unicast")
    out += [f"  network {n}" for n in r.networks]
    for peer_group, (rin, rout) in sorted(r.route_maps.items()):
        if rin:
            out.append(f"  neighbor {peer_group} route-map {rin} in")
        if rout:
            out.append(f"  neighbor {peer_group} route-map {rout} out")
    out += [f"  maximum-paths {r.multipath}", " exit-address-family", "exit", "!"]
    return "\n".join(out) + "\n"


def _policies(r: Router) -> list[str]:
    """The prefix lists and route maps, before `router bgp` that names them."""
    out = []
    for name, entries in sorted(r.prefix_lists.items()):
        for seq, action, prefix, ge, le in sorted(entries):
            length = int(prefix.split("/")[1])
            bounds = (f" ge {ge}" if ge > length else "") + (f" le {le}" if le >= max(ge, length) and le != length
                                                              else "")
            out.append(f"ip prefix-list {name} seq {seq} {action} {prefix}{bounds}")
    for name, clauses in sorted(r.maps.items()):
        for seq, action, match in sorted(clauses):
            out.append(f"route-map {name} {action} {seq}")
            if match:
                out.append(f" match ip address prefix-list {match}")
            out.append("exit")
    return out


def _neighbors(r: Router, ifname: dict[str, str], profile: bool) -> list[str]:
    """One router's neighbor lines, settings its peer group already gives left out."""
    out = []
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
            out.append(f" neighbor {peer} bfd" + (" profile lab" if profile else ""))
    return out
