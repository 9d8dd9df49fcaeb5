"""A representative part of a fabric too large to emulate whole, chosen from the plan.

Plane by plane (each connected part of the switch graph), the top tier is kept whole (every core
of a three-tier fabric, every spine of a two-tier one), then whole units are added in name order
while they fit: a pod (its spines and its leaves) in three tiers, a leaf in two (its uplinks all
go to the kept spines), while the router and session budgets hold. The switches come first; then
the kept leaves' nodes in order while the node budget (and, for nodes that run BGP, the router
and session budgets) hold: a leaf past it is emulated without nodes (it announces its loopback;
its uplinks, sessions and BFD are emulated all the same), so a fabric whose switches fit is
emulated with every switch. The sample is the plan
restricted to the kept switches and the kept nodes cabled to them: cables, addresses and sessions to
anything else are left out of the emulation, and of the kept switches' BGP and BFD neighbours,
so every check holds exactly inside the sample: a kept leaf reaches another kept leaf over every
path the whole fabric gives it (every spine of its pod, every core), and the expected widths are
computed on the sample's own graph. What the sample leaves out: the full prefix tables of the
cores and spines (other pods' leaves are not emulated), and the other fabrics or planes once the
budget is spent (emulate each with `--fabric`). Both are said in the report.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fabgen.emulate.expect import Plan

if TYPE_CHECKING:  # a type only: nothing more imported at run time
    from fabgen.emulate.read import Fabric


def routers_of(fab) -> int:
    """FRR instances the fabric needs: its switches and its nodes that run BGP."""
    return len(fab.routers) + sum(1 for h in fab.hosts.values() if h.frr and h.name in fab.plan.asn)


def choose(plan: Plan, hosts_of: dict[str, set[str]], budget: int, host_budget: int,
           session_budget: int) -> tuple[set[str], set[str]]:
    """The switches and the nodes to keep. Each connected part of the switch graph (a plane) in name
    order: its top tier, then its units in order, each whole while `budget` routers and
    `session_budget` BGP sessions among them hold, the first that does not fit as many of its
    leaves as fit; then nothing more. Then the kept leaves' nodes (`hosts_of`: leaf -> its nodes),
    leaf by leaf in the order kept and by name, while `host_budget` nodes and the other budgets hold
    (a routing node is one router more, with its sessions): the switches come first, so a fabric
    whose switches fit is emulated with every switch, and with as many nodes as fit."""
    switches = {d for d, r in plan.roles.items() if r in ("leaf", "spine", "core")}
    up: dict[str, set[str]] = {d: set() for d in switches}
    for a, _, z, _ in plan.sessions:
        if a in switches and z in switches:
            up[a].add(z)
            up[z].add(a)
    t = _Tally(plan, budget, host_budget, session_budget)
    order = _switches(t, _parts(up), plan.roles, up)
    for leaf in order:
        for h in sorted(hosts_of.get(leaf, ())):
            if not t.add_node(h):
                break
    return t.devs, t.nodes


def _switches(t: _Tally, parts: list[set[str]], roles: dict[str, str], up: dict[str, set[str]]) -> list[str]:
    """Keep switches in `t` plane by plane as choose() says; returns the kept leaves in order."""
    order: list[str] = []
    for part in parts:
        top, units = _units(part, roles, up)
        mark = (set(t.devs), set(t.speakers), t.sessions)  # kept again if none of its leaves fits
        if not t.add(top):
            break
        grown = False
        for spines, members in units:
            for leaf in members:  # a unit whole if it fits; else as many of its leaves as fit, with its spines
                if not t.add(set(spines) | {leaf}):
                    if not grown:
                        t.devs, t.speakers, t.sessions = mark
                    return order
                grown = True
                order.append(leaf)
        if not grown:
            t.devs, t.speakers, t.sessions = mark
            return order
    return order


class _Tally:
    """What is kept and what it costs: routers (switches and routing nodes), nodes, and BGP
    sessions among the kept speakers (FRR 8.4's bgpd holds about 0.7 MB per configured peer,
    measured: the sessions bound the lab's memory, benchmarks/results-emulate.md)."""

    def __init__(self, plan: Plan, budget: int, host_budget: int, session_budget: int) -> None:
        self.plan, self.budgets = plan, (budget, host_budget, session_budget)
        self.peers: dict[str, list[str]] = {}
        for a, _, z, _ in plan.sessions:
            self.peers.setdefault(a, []).append(z)
            self.peers.setdefault(z, []).append(a)
        self.devs: set[str] = set()
        self.nodes: set[str] = set()
        self.speakers: set[str] = set()  # the kept switches and routing nodes
        self.sessions = 0

    def _join(self, new: set[str], nodes: int) -> bool:
        """Count `new` speakers in (with `nodes` nodes kept) if every budget holds."""
        speakers = self.speakers | new
        added = sum(1 for x in new for y in self.peers.get(x, ()) if y in speakers and (y not in new or x < y))
        if len(speakers) > self.budgets[0] or nodes > self.budgets[1] or self.sessions + added > self.budgets[2]:
            return False
        self.speakers, self.sessions = speakers, self.sessions + added
        return True

    def add(self, devs: set[str]) -> bool:
        """Keep these switches if every budget holds."""
        new = devs - self.devs
        if not self._join(new, len(self.nodes)):
            return False
        self.devs |= new
        return True

    def add_node(self, h: str) -> bool:
        """Keep this node if every budget holds (a routing node counts as a router, its sessions too)."""
        if h in self.nodes:
            return True
        if not self._join({h} if h in self.plan.asn else set(), len(self.nodes) + 1):
            return False
        self.nodes.add(h)
        return True


def _parts(up: dict[str, set[str]]) -> list[set[str]]:
    """Connected parts of the switch graph (the planes of a fabric), in order of their first name."""
    seen: set[str] = set()
    parts = []
    for start in sorted(up):
        if start in seen:
            continue
        part, todo = set(), [start]
        while todo:
            d = todo.pop()
            if d not in part:
                part.add(d)
                todo += up[d] - part
        seen |= part
        parts.append(part)
    return parts


def _units(part: set[str], roles: dict[str, str], up: dict[str, set[str]]) -> tuple[set[str], list]:
    """The part's top tier, and its units in order: pods (spines, leaves) under cores, else single leaves."""
    tiers = {roles[d] for d in part}
    top_role = "core" if "core" in tiers else "spine" if "spine" in tiers else "leaf"
    top = {d for d in part if roles[d] == top_role}
    leaves = sorted(d for d in part if roles[d] == "leaf")
    if top_role == "core":
        pods: dict[frozenset[str], list[str]] = {}
        for leaf in leaves:
            pods.setdefault(frozenset(up[leaf]), []).append(leaf)
        return top, [(sorted(spines), members) for spines, members in sorted(pods.items(), key=lambda kv: kv[1][0])]
    return top, ([([], [leaf]) for leaf in leaves] if top_role == "spine" else [])


def restrict(fab: Fabric, kept: set[str], nodes: set[str], plan_of: Callable[[Fabric], Plan]) -> tuple[int, int]:
    """Cut the fabric down to the kept switches and the kept nodes cabled to them; returns the
    switches and nodes left out. `plan_of` recomputes the plan (run._plan) from what is left."""
    hosts = {c[end] for c in fab.cables for end, other in (("a_device", "z_device"), ("z_device", "a_device"))
             if c[end] in nodes and c[other] in kept}
    keep = kept | hosts
    dropped = (len(fab.routers) - len(kept & set(fab.routers)), len(fab.hosts) - len(hosts))
    fab.cables = [c for c in fab.cables if c["a_device"] in keep and c["z_device"] in keep]
    fab.addresses = [r for r in fab.addresses
                     if r["device"] in keep and (not r["peer_device"] or r["peer_device"] in keep)]
    fab.routers = {n: r for n, r in fab.routers.items() if n in kept}
    fab.hosts = {n: h for n, h in fab.hosts.items() if n in hosts}
    node_ports = {(r["device"], r["interface"]) for r in fab.addresses if r["role"] == "node"}
    for h in fab.hosts.values():
        h.ports = {p: port for p, port in h.ports.items() if (h.name, p) in node_ports}
    cabled = {(c["a_device"], c["a_port"]) for c in fab.cables} | {(c["z_device"], c["z_port"]) for c in fab.cables}
    present = {r["address"].split("/")[0] for r in fab.addresses}
    for name, r in fab.routers.items():  # sessions to switches outside the sample are not configured
        r.neighbors = [n for n in r.neighbors if (n.unnumbered and (name, n.peer) in cabled)
                       or (not n.unnumbered and n.peer in present)]
        r.unnumbered = [p for p in r.unnumbered if (name, p) in cabled]
    fab.plan = plan_of(fab)
    return dropped
