"""Structural invariants, checked on every build from the built fabric itself.

They guard the builders: a failure here is a fabgen bug, never bad input, and is
reported as such. Checked: port budget per switch, every port used once, balanced
uplinks (each leaf reaches each spine of its pod with the same number of links, and
each spine each core of its plane: OpenSM's ftree needs it), the declared ratio met
on every leaf, every NIC cabled exactly once, no link to a device outside the fabric.

It reads the fabric's switches, hosts and links, not the networkx graph drawn from them
(`Fabric.graph`): drawing it was 4.5 of the check's 7.5 CPU-seconds at 131,072 GPUs of
four planes (py-spy), and networkx adds the ends of an edge as nodes, so it could not tell a
link to a device the builder never made.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from fabgen.spec.model import Fabric, Switch
from fabgen.spec.sizing import Plan


class TopologyError(AssertionError):
    """A structural invariant does not hold: a bug in fabgen."""


def _adjacent(fabric: Fabric, devices: set[str], problems: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Each switch's links as (peer, tier), in the order the builder made them; in the same
    pass, every cable end that is not a device of the fabric (a node's as well as a switch's)."""
    adjacent: dict[str, list[tuple[str, str]]] = {s.name: [] for s in fabric.switches}
    get = adjacent.get
    for lk in fabric.links:
        for end, peer in ((lk.a, lk.z), (lk.z, lk.a)):
            if peer not in devices:
                problems.append(f"{end}: link to unknown device {peer}")
        if (mine := get(lk.a)) is not None:
            mine.append((lk.z, lk.tier))
        if (mine := get(lk.z)) is not None and lk.z != lk.a:
            mine.append((lk.a, lk.tier))
    return adjacent


def check(fabric: Fabric) -> None:
    problems: list[str] = []
    plan = fabric.plan
    devices = {s.name for s in fabric.switches} | {h.name for h in fabric.hosts}
    adjacent = _adjacent(fabric, devices, problems)
    _port_budget(fabric, problems)
    by_name = {s.name: s for s in fabric.switches}
    for s in fabric.switches:
        up, down = _up_and_down(s, adjacent[s.name], by_name, problems)
        _balanced(s, up, down, plan, problems)
    _cabled(fabric, problems)
    if problems:
        head = "\n  ".join(problems[:20])
        raise TopologyError(f"fabric {fabric.name}: {len(problems)} structural problem(s):\n  {head}")


def _port_budget(fabric: Fabric, problems: list[str]) -> None:
    """No switch uses more ports than its radix, or a port its model does not have."""
    of_role = {r: set(fabric.port_names(r)) for r in {s.role for s in fabric.switches}}
    for s in fabric.switches:
        valid_ports = of_role[s.role]
        radix = len(valid_ports)
        used = fabric.ports.get(s.name, {})
        if len(used) > radix:
            problems.append(f"{s.name}: {len(used)} ports used, radix {radix}")
        bad = [p for p in used if p not in valid_ports]
        if bad:
            problems.append(f"{s.name}: ports {bad[:3]} are not ports of {fabric.switch_model.key}")


def _up_and_down(s: Switch, links: list[tuple[str, str]], by_name: dict[str, Switch],
                 problems: list[str]) -> tuple[Counter[str], int]:
    """A switch's uplinks per upper switch, and how many of its links go down (to nodes or a
    lower tier); a switch-to-switch link of another tier is a problem."""
    up: Counter[str] = Counter()
    down = 0
    for peer, tier in links:
        other = by_name.get(peer)
        if other is None:
            down += 1
            continue
        higher = (s.role, other.role) in (("leaf", "spine"), ("spine", "core"))
        if higher:
            up[peer] += 1
        else:
            down += 1
        if tier not in ("leaf-spine", "spine-core") and not (tier == "leaf-leaf" and s.role == other.role == "leaf"):
            problems.append(f"{s.name}: switch link to {peer} has tier {tier}")
    return up, down


def _balanced(s: Switch, up: Counter[str], down: int, plan: Plan, problems: list[str]) -> None:
    """A leaf reaches each spine of its pod, and a spine each core of its plane, with the same
    number of links, at the declared ratio."""
    if s.role == "leaf" and plan.tiers >= 2:
        expected = plan.spines_per_pod
        m = plan.factor("leaf-spine")  # counts in host-speed ports: a link of this tier takes m
        if len(up) != expected or set(up.values()) != {plan.leaf_spine_width // m}:
            problems.append(f"{s.name}: unbalanced uplinks {dict(sorted(up.items()))}")
        if down > plan.down or Fraction(plan.down, sum(up.values()) * m) != plan.ratio:
            problems.append(f"{s.name}: {down} endpoints / {sum(up.values())} uplinks breaks {plan.ratio}:1")
    if s.role == "spine" and plan.tiers == 3:
        m2 = plan.factor("spine-core")
        if len(up) != plan.cores_per_plane or set(up.values()) != {plan.spine_core_width // m2}:
            problems.append(f"{s.name}: unbalanced core uplinks {dict(sorted(up.items()))}")
        if sum(up.values()) * m2 != plan.spine_down:
            problems.append(f"{s.name}: {sum(up.values())} uplinks for {plan.spine_down} downlink ports")


def _cabled(fabric: Fabric, problems: list[str]) -> None:
    """Every NIC is cabled."""
    for h in fabric.hosts:
        for nic in h.model.nics:
            if fabric.ports.get(h.name, {}).get(nic.rdma) is None:
                problems.append(f"{h.name} {nic.rdma}: not cabled")
