"""What growing an unplanned fabric would do to what is already cabled.

A fabric without `planned_nodes` is sized for the nodes present. Its next scalable unit
(fat-tree: next leaf) or, with three tiers, its next pod can change the spine or core count,
the leaf-to-spine width or the pod size, and then existing cables move. The check sizes
the grown fabric with the same rules, compares the switch-to-switch cabling of the present
switches in both (switches by their place, ports by index) and says how many cables would
move: the review of that growth would be a re-cabling, and `planned_nodes` avoids it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from fabgen.spec.layout import switch_names, uplinks
from fabgen.spec.model import Switch
from fabgen.spec.schema import Fabric as FabricSpec
from fabgen.spec.sizing import Plan, SizingError, stripe, units_for
from fabgen.spec.sizing import plan as size_plan


@dataclass(frozen=True)
class Growth:
    step: str  # "scalable unit", "leaf" or "pod"
    nodes: int  # node count after the step
    moved: int  # existing cables that would move
    cables: int  # existing cables
    renamed: int  # existing switches whose name would change
    before: dict[str, int]  # spines, cores
    after: dict[str, int]
    tiers: tuple[int, int]
    switches: int = 0  # present switches whose place (loopback, management address; a storage leaf's ASN) moves
    links: int = 0  # switch-to-switch cables that stay but take another /31
    planes: int = 1
    kind: str = "roce"


def _key(p: Plan, s: Switch) -> tuple[str, int]:
    """A switch's identity across plans: storage leaves are counted after the compute leaves."""
    if s.role == "leaf" and s.index > p.compute_leaves:
        return "storage-leaf", s.index - p.compute_leaves
    return s.role, s.index


def _cabling(spec: FabricSpec, p: Plan) -> tuple[dict, dict, dict]:
    """The switch-to-switch cables (by their ends' keys and ports) with their /31's place, the
    present switches' names and their places in the plan (addressing.py numbers both)."""
    switches = switch_names(spec, p)
    key_of = {s.name: _key(p, s) for s in switches}  # once per switch, not once per cable end
    cables = {(key_of[lo.name], lp, key_of[hi.name], hp): ordinal
              for _, lo, lp, hi, hp, ordinal in uplinks(p, switches)}
    places = {key_of[s.name]: p.switch_place(s.role, s.index) for s in switches}
    return cables, {key: name for name, key in key_of.items()}, places


SHAPE = ("tiers", "down", "up", "leaf_spine_width", "spines_per_pod", "leaves_per_pod", "spine_down",
         "spine_up", "spine_core_width", "cores_per_plane")


def _same_shape(now: Plan, later: Plan) -> bool:
    """Every port and peer of an existing switch follows from these (and the storage leaves'
    place after the compute leaves): when they agree, nothing moves and nothing is renamed."""
    return all(getattr(now, f) == getattr(later, f) for f in SHAPE) and \
        (not now.storage_leaves or now.compute_leaves == later.compute_leaves) and \
        bool(now.storage_leaves) == bool(later.storage_leaves)


def _compare(spec: FabricSpec, now: Plan, later: Plan, step: str) -> Growth:
    seen = replace(later, present_nodes=now.present_nodes, present_units=units_for(later, now.present_nodes))
    before, names, places = _cabling(spec, now)
    after, later_names, later_places = _cabling(spec, seen)
    moved = sum(1 for k in before if k not in after) + _restriped(now, later)
    cables = len(before) + now.present_nodes * now.rails + now.storage
    if now.storage and now.storage_leaves == 0 and later.storage_leaves:
        moved += now.storage  # a one-switch fabric's storage NICs move to storage leaves
    renamed = sum(1 for k, n in names.items() if later_names.get(k, n) != n)
    by_name = {later_names[k]: place for k, place in later_places.items()}  # a switch is its name to an operator
    switches = sum(1 for k, place in places.items() if by_name.get(names[k], place) != place)
    named = {(later_names[lo], lp, later_names[hi], hp): o for (lo, lp, hi, hp), o in after.items()}
    links = sum(1 for (lo, lp, hi, hp), o in before.items() if named.get((names[lo], lp, names[hi], hp), o) != o)
    return Growth(step, later.present_nodes, moved, cables, renamed,
                  _upper(now), _upper(later),
                  (now.tiers, later.tiers), switches, links, spec.planes, spec.kind)


def _restriped(now: Plan, later: Plan) -> int:
    """The present nodes' ports a striped plan (a northsouth fabric sized by racks) moves to another
    leaf or port when its leaf count changes."""
    if not now.striped:
        return 0
    if not later.striped:
        return now.present_nodes * now.rails
    return sum(1 for g in range(now.present_nodes) for r in range(now.rails)
               if stripe(now, g, r) != stripe(later, g, r))


def _readdressed(spec: FabricSpec, now: Plan, later: Plan, step: str) -> Growth | None:
    """A growth of the same shape (every port and peer stays): the places that still move, by
    arithmetic rather than by listing every cable. Spines follow the leaves and cores the spines
    in the plan's switch order, storage leaves the compute leaves, and the spine-core /31s (and
    the storage leaves' uplinks') the leaves' uplinks (spec/sizing.py `switch_place`,
    spec/layout.py `uplinks`); without a plan those counts are the present ones."""
    leaves = now.leaves != later.leaves
    storage = bool(now.storage_leaves) and now.compute_leaves != later.compute_leaves
    spines = len([s for s in switch_names(spec, now) if s.role == "spine"]) if now.tiers >= 2 else 0
    switches = (now.storage_leaves if storage else 0) + (spines if leaves else 0) + \
        (now.cores if now.leaves + now.spines != later.leaves + later.spines else 0)
    links = (now.storage_leaves * now.up if storage and now.tiers >= 2 else 0) + \
        (spines * now.spine_up if now.tiers == 3 and now.leaves * now.up != later.leaves * later.up else 0)
    if not switches and not links:
        return None
    cables = now.leaves * now.up + spines * now.spine_up + now.present_nodes * now.rails + now.storage
    return Growth(step, later.present_nodes, 0, cables, 0, _upper(now), _upper(later), (now.tiers, later.tiers),
                  switches, links, spec.planes, spec.kind)


def _upper(p: Plan) -> dict[str, int]:
    """The upper tiers a leaf is cabled to. New pods add spines by themselves (pure addition);
    a new spine in an existing pod or a new core moves existing cables."""
    if p.tiers == 3:
        return {"spines per pod": p.spines_per_pod, "cores": p.cores}
    return {"spines": p.spines}


def check_growth(spec: FabricSpec, now: Plan, size: Callable[[int], Plan]) -> list[str]:
    """Warnings for an unplanned fabric whose next unit (or pod) re-cables; `size(n)` sizes it for n nodes."""
    if now.planned:
        return []
    if spec.tiers == 1 and not now.peer_links:
        return [f"tiers: 1 is one switch with no ports kept for uplinks: growing past its {now.down} NIC ports "
                "means moving cables into a two-tier fabric (tiers: auto keeps the ports a spine layer needs)"]
    per_unit = now.unit_nodes or math.ceil(now.down / now.rails)
    word = "scalable unit" if now.topology == "rail-optimized" else "leaf"
    steps = [(word, (now.present_units + 1) * per_unit)]
    if now.pair or (now.peer_links and not now.striped):  # a plane's switch pair (spec/sizing.py `_plane_pair`)
        # or a collapsed pair of nodes not sized by racks (`_northsouth_pair`): the next node, up to its size
        steps = [("node", now.present_nodes + 1)]
    if now.striped:  # sized by racks: the next rack
        steps = [("rack", (math.ceil(now.present_nodes / now.domain) + 1) * now.domain)]
    if now.tiers == 3:
        pods = math.ceil(now.present_units / now.units_per_pod)
        steps.append(("pod", (pods + 1) * now.units_per_pod * per_unit))
    for step, nodes in steps:
        try:
            later = size(nodes)
        except SizingError as exc:
            return [f"the next {step} ({nodes} nodes) cannot be added: {exc.message}"]
        if _same_shape(now, later):
            same = _readdressed(spec, now, later, step)
            if same is not None:
                return [_message(same)]
            continue
        g = _compare(spec, now, later, step)
        if g.moved or g.before != g.after or g.renamed or g.switches or g.links:
            return [_message(g)]
    return []


def _message(g: Growth) -> str:
    changes = []
    if g.tiers[0] != g.tiers[1]:
        changes.append(f"take it from {g.tiers[0]} to {g.tiers[1]} tiers")
    new = [f"{g.after[what]:,} {what}" for what in g.after if what not in g.before]
    if new and changes:  # a tier that did not exist: its size, not a change from zero
        changes[-1] += " with " + " and ".join(new)
    for what in g.after:
        if what in g.before and g.before[what] != g.after[what]:
            changes.append(f"change the {what} from {g.before[what]:,} to {g.after[what]:,}")
    if g.moved:
        changes.append(f"move {g.moved:,} of its {g.cables:,} cables")
    if g.renamed:
        changes.append(f"rename {g.renamed:,} switches")
    ids = "GUID" if g.kind == "infiniband" else "loopback"
    n = g.switches
    whose = f"its {ids} and management address" if n == 1 else f"their {ids}s and management addresses"
    readdressed = [f"{n:,} switch{'es' if n > 1 else ''} ({whose})"] if n else []
    if g.links and g.kind != "infiniband":
        readdressed.append(f"{g.links:,} switch-to-switch /31s")
    if readdressed:
        each = f" on each of its {g.planes} planes" if g.planes > 1 else ""
        changes.append(f"re-address {' and '.join(readdressed)}{each}")
    only = not g.moved and not g.renamed and g.tiers[0] == g.tiers[1] and g.before == g.after
    if only:
        changes[-1] = "move no cable but " + changes[-1]
    text = ", ".join(changes[:-1]) + " and " + changes[-1] if len(changes) > 1 else changes[0]
    upper = "spine and core tiers" if max(g.tiers) == 3 else "spine tier"
    advice = ("number every switch by its place in that plan" if only
              else f"build its {upper} for that now")
    return (f"growing this fabric by one {g.step} (to {g.nodes:,} nodes) would {text}: set planned_nodes to "
            f"the size it will reach to {advice} (docs/growth.md)")


def growth_warnings(validated: Any) -> list[list[str]]:
    """The growth checks validate left (`Validated.pending`), each one's located warnings in
    order: the stage after validation, run by the pipeline beside the build and filed with
    `Validated.settle`."""
    out = []
    for p in validated.pending:
        def size(n: int, rules: dict = p.rules) -> Plan:
            return size_plan(nodes=n, **rules)
        out.append([p.located + m for m in check_growth(p.spec, p.plan, size)])
    return out
