"""Structural invariants, checked on every build from the graph itself.

They guard the builders: a failure here is a fabgen bug, never bad input, and is
reported as such. Checked: port budget per switch, every port used once, balanced
uplinks (each leaf reaches each spine of its pod with the same number of links, and
each spine each core of its plane: OpenSM's ftree needs it), the declared ratio met
on every leaf, every NIC cabled exactly once, no link to a device outside the fabric.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from fabgen.topology.model import Fabric


class TopologyError(AssertionError):
    """A structural invariant does not hold: a bug in fabgen."""


def check(fabric: Fabric) -> None:
    problems: list[str] = []
    plan, g = fabric.plan, fabric.graph
    radix = fabric.switch_model.radix(plan.speed)
    valid_ports = set(fabric.switch_model.port_names(plan.speed))
    by_name = {s.name: s for s in fabric.switches}

    for s in fabric.switches:
        used = fabric.ports.get(s.name, {})
        if len(used) > radix:
            problems.append(f"{s.name}: {len(used)} ports used, radix {radix}")
        bad = [p for p in used if p not in valid_ports]
        if bad:
            problems.append(f"{s.name}: ports {bad[:3]} are not ports of {fabric.switch_model.key}")

    for s in fabric.switches:
        up, down = Counter(), 0
        for _, peer, data in g.edges(s.name, data=True):
            tier = data["tier"]
            if peer not in g:
                problems.append(f"{s.name}: link to unknown device {peer}")
            other = by_name.get(peer)
            if other is None:
                down += 1
                continue
            higher = (s.role, other.role) in (("leaf", "spine"), ("spine", "core"))
            if higher:
                up[peer] += 1
            else:
                down += 1
            if tier not in ("leaf-spine", "spine-core"):
                problems.append(f"{s.name}: switch link to {peer} has tier {tier}")
        if s.role == "leaf" and plan.tiers >= 2:
            expected = plan.spines_per_pod
            if len(up) != expected or set(up.values()) != {plan.leaf_spine_width}:
                problems.append(f"{s.name}: unbalanced uplinks {dict(sorted(up.items()))}")
            if down > plan.down or Fraction(plan.down, sum(up.values())) != plan.ratio:
                problems.append(f"{s.name}: {down} endpoints / {sum(up.values())} uplinks breaks {plan.ratio}:1")
        if s.role == "spine" and plan.tiers == 3:
            if len(up) != plan.cores_per_plane or set(up.values()) != {plan.spine_core_width}:
                problems.append(f"{s.name}: unbalanced core uplinks {dict(sorted(up.items()))}")
            if sum(up.values()) != plan.spine_down:
                problems.append(f"{s.name}: {sum(up.values())} uplinks for {plan.spine_down} downlink ports")

    for h in fabric.hosts:
        for nic in h.model.nics:
            nic_id = f"{h.name}/{nic.rdma}"
            cabled = fabric.ports.get(h.name, {}).get(nic.rdma)
            if nic_id not in g or cabled is None:
                problems.append(f"{h.name} {nic.rdma}: not cabled")
    if len(fabric.links) != sum(1 for _ in g.edges(keys=True)) - sum(len(h.model.nics) for h in fabric.hosts):
        problems.append("graph edges and link list disagree")
    if problems:
        head = "\n  ".join(problems[:20])
        raise TopologyError(f"fabric {fabric.name}: {len(problems)} structural problem(s):\n  {head}")
