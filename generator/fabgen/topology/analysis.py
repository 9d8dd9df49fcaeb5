"""Figures an engineer sizes and reviews a fabric by, read off the built topology."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from fabgen.spec.model import ROLES, TIERS, Fabric, follows_compute
from fabgen.spec.sizing import Plan


@dataclass(frozen=True)
class Summary:
    role: str  # compute, storage, inband or oob: what the fabric carries
    kind: str
    platform: str
    topology: str
    tiers: int
    nodes: int
    gpus: int
    endpoints: int
    speed: int
    switch_model: str
    radix: int
    switches: dict[str, int]
    links: dict[str, int]
    oversubscription: dict[str, float]
    bisection_gbps: int
    ports_used: int
    ports_total: int
    units: int
    unit_nodes: int
    pods: int
    racks: int  # NVLink domains (NVL72 racks) of the compute nodes; 0 when each node is its own
    planned: dict[str, Any]  # the plan the fabric grows into: nodes, units, pods, switches per role
    warnings: list[str]
    # a plane of a multi-plane fabric: {fabric, plane, of, cables per tier}; {} otherwise
    network_plane: dict[str, Any] = field(default_factory=dict)
    racks_split: int = 0  # racks whose nodes span two units (a storage or in-band fabric's, port by port)
    pair: bool = False  # a plane's switch pair (spec/sizing.py `_plane_pair`): two leaves, peer links, no spine
    # each tier's link speed where the tiers run at different speeds (cabling.<tier>.speed); {} otherwise
    tier_speeds: dict[str, int] = field(default_factory=dict)


def _ratio(num: int, den: int) -> float:
    return round(num / den, 4) if den else 1.0


def _planned(plan: Plan) -> dict[str, Any]:
    """The fabric the plan completes (equal to the present one without `planned_nodes`)."""
    return {"nodes": plan.nodes, "scalable_units": plan.units if plan.topology == "rail-optimized" else 0,
            "pods": plan.pods if plan.tiers == 3 else 0,
            "switches": {"leaf": plan.leaves, "spine": plan.spines, "core": plan.cores}}


def summarize(fabric: Fabric, guid_map: dict[tuple[str, str], int] | None = None) -> Summary:
    """The fabric's counts, ratios and warnings; `guid_map` (InfiniBand): the real GUIDs, which never move."""
    plan = fabric.plan
    switches = Counter(s.role for s in fabric.switches)
    links = Counter(lk.tier for lk in fabric.links)
    leaf_up = links["leaf-spine"]
    spine_up = links["spine-core"]
    # Designed ratios, as the inventory declares them: ports a leaf reserves for endpoints
    # against its uplinks; spines are built non-blocking.
    over = {
        "leaf": _ratio(plan.down, plan.up) if plan.tiers >= 2 else 1.0,
        "spine": _ratio(plan.spine_down, plan.spine_up) if plan.tiers == 3 else 1.0,
    }
    # Bisection: half the endpoints talk to the other half; each tier can carry at most
    # its total uplink bandwidth across the cut.
    cut = links["node-leaf"] * plan.speed
    if plan.tiers >= 2:  # each tier's links at its own speed (cabling.<tier>.speed)
        cut = min(cut, leaf_up * plan.tier_speed("leaf-spine"))
    if plan.tiers == 3:
        cut = min(cut, spine_up * plan.tier_speed("spine-core"))
    radix = fabric.switch_model.radix(plan.speed)
    used = sum(len(fabric.ports.get(s.name, {})) for s in fabric.switches)
    total = radix * len(fabric.switches)
    if plan.mixed:  # a cage split at another speed has other ports
        of_role = {r: len(fabric.port_names(r)) for r in {s.role for s in fabric.switches}}
        total = sum(of_role[s.role] for s in fabric.switches)
    warnings = list(fabric.warnings)
    if plan.topology == "rail-optimized" and not plan.peer_links:  # a switch pair (a plane's or a collapsed
        # north-south pair) is never "a unit" to complete: its leaves and peer links are all there is
        per_unit = Counter(h.unit for h in fabric.hosts if h.role == "compute")
        moves = _completing_moves(fabric, guid_map or {})
        for u in range(1, plan.present_units + 1):
            if per_unit[u] < plan.unit_nodes:
                warnings.append(f"scalable unit {u} has {per_unit[u]} of {plan.unit_nodes} nodes; its leaves and "
                                "uplinks are built in full so the unit can be completed without re-cabling" + moves)
    pod_leaves = Counter(s.pod for s in fabric.switches if s.role == "leaf")
    if plan.tiers == 3:
        for pod in range(1, plan.pods + 1):
            if 0 < pod_leaves[pod] < plan.leaves_per_pod:
                warnings.append(f"pod {pod} is partly populated ({pod_leaves[pod]} of {plan.leaves_per_pod} "
                                "leaves); its spines and core links are built in full")
    if plan.tiers == 1 and fabric.spec.tiers != 1 and fabric.spec.role != "oob" and not plan.peer_links:
        # pinned: growth warning says; a collapsed pair's growth is warned by topology/growth.py
        warnings.append("all endpoints fit on one leaf: the fabric is a single switch (pin tiers: 2 to build a "
                        "spine layer now)")
    gpus = sum(h.model.gpus for h in fabric.hosts)
    peer = {"leaf-leaf": links["leaf-leaf"]} if links["leaf-leaf"] else {}  # a collapsed pair's peer link
    return Summary(
        role=fabric.spec.role, kind=fabric.spec.kind, platform=fabric.spec.platform,
        # an out-of-band network is one tier of access switches, not a fat tree
        topology="access" if fabric.spec.role == "oob" else plan.topology,
        tiers=plan.tiers,
        nodes=sum(1 for h in fabric.hosts if h.role != "switch"), gpus=gpus, endpoints=links["node-leaf"],
        speed=plan.speed,
        switch_model=fabric.switch_model.key, radix=radix,
        switches={r: switches.get(r, 0) for r in ROLES}, links={**{t: links.get(t, 0) for t in TIERS}, **peer},
        oversubscription=over, bisection_gbps=cut // 2, ports_used=used, ports_total=total,
        # the pods built (a plan's pods without a leaf have no switch yet: `planned` counts them)
        units=plan.present_units, unit_nodes=plan.unit_nodes, pods=len(pod_leaves) if plan.tiers == 3 else 0,
        racks=len({h.rack for h in fabric.hosts if h.rack}), racks_split=_racks_split(fabric), pair=plan.pair,
        planned=_planned(plan), warnings=warnings, network_plane=_plane(fabric),
        tier_speeds={t: plan.tier_speed(t) for t in (*TIERS[:plan.tiers], *peer)} if plan.mixed else {},
    )


def _completing_moves(fabric: Fabric, guid_map: dict[tuple[str, str], int]) -> str:
    """What completing a unit re-addresses on this fabric: nothing, or (no planned_nodes) the
    storage servers' identifiers numbered after the compute nodes, counted (docs/growth.md)."""
    servers = [h for h in fabric.hosts if h.role == "storage"]
    real = sum(1 for h in servers for nic in h.model.nics if (h.name, nic.rdma) in guid_map)
    per_node, _ = follows_compute(fabric.spec, fabric.plan, len(servers), real)
    if not per_node:
        return " or re-addressing this fabric"
    parts = [f"{n:,} {what}" for what, n in per_node.items()]
    listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return f", but each node added moves the storage servers' {listed} (set planned_nodes)"


def _racks_split(fabric: Fabric) -> int:
    """NVLink racks whose nodes sit in more than one unit: none on a compute or northsouth fabric
    (validation refuses it), possibly on a storage or in-band one, which attaches trays like any node."""
    units: dict[str, set[int]] = {}
    for h in fabric.hosts:
        if h.rack:
            units.setdefault(h.rack, set()).add(h.unit)
    return sum(1 for u in units.values() if len(u) > 1)


def _plane(fabric: Fabric) -> dict[str, Any]:
    if fabric.planes == 1:
        return {}
    return {"fabric": fabric.parent, "plane": fabric.plane + 1, "of": fabric.planes, "cables": cables(fabric)}


def cables(f: Fabric) -> dict[str, int]:
    """Physical cables per tier of one plane of a multi-plane fabric, counted as NVIDIA's
    multi-plane tables count them: one per used cage at the lower end. A node's NIC leaves its
    cage on one cable whose legs (a link each) go to the planes: counted once, with the first
    plane. A leaf's (or spine's) uplink cage takes one cable carrying the cage's ports, to one
    upper switch or, as a breakout, to several."""
    cage = f.switch_model.cage_map() if f.plan.mixed else f.switch_model.cages_by_port(f.plan.speed)
    out: Counter[str] = Counter()
    seen: set[tuple[str, int]] = set()
    for lk in f.links:
        if lk.tier == "node-leaf":
            continue
        key = (lk.a, cage[lk.a_port])
        if key not in seen:
            seen.add(key)
            out[lk.tier] += 1
    nodes = sum(h.model.cage_count for h in f.hosts) if f.plane == 0 else 0
    return {"node-leaf": nodes, **{t: out[t] for t in TIERS[1:]}}
