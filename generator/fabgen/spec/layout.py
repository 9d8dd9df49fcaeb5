"""Where every switch of a fabric stands and how the tiers cable, from its sizing plan alone:
the switch names (`switch_names`), the fabric names of network planes (`plane_names`) and the
switch-to-switch ports (`uplinks`). Arithmetic, no graph: the builder (build.py) cables from it,
the growth check compares two plans with it, and validate checks the names it gives, so the
inventory layer reads it without importing the builder (tests/test_architecture.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from fabgen.spec.catalog import SwitchModel
from fabgen.spec.model import Switch
from fabgen.spec.schema import Fabric as FabricSpec
from fabgen.spec.sizing import Plan, Widths, name_widths

PLANE_SUFFIX = "-plane{p}"  # a network plane's fabric name: the inventory's name and this (docs/planes.md)


def plane_names(spec: FabricSpec) -> list[str]:
    """The fabric names an inventory fabric renders as: its planes', or its own with one plane."""
    if spec.planes == 1:
        return [spec.name]
    return [spec.name + PLANE_SUFFIX.format(p=p + 1) for p in range(spec.planes)]


def _pod(plan: Plan, position: int) -> int:
    """1-based pod of the leaf at 0-based planned `position` (compute leaves, then storage leaves)."""
    return position // plan.leaves_per_pod + 1 if plan.tiers == 3 else 1


def present_pods(plan: Plan) -> list[int]:
    """The 1-based pods (three tiers) holding a leaf present: the compute leaves the nodes fill and
    every storage leaf. A planned pod without one has no spines yet (docs/growth.md): its spines
    cable only to its own leaves and to the cores, so adding it later moves nothing."""
    positions = [*range(plan.present_compute_leaves), *range(plan.compute_leaves, plan.leaves)]
    return sorted({_pod(plan, i) for i in positions})


def switch_names(spec: FabricSpec, plan: Plan) -> list[Switch]:
    """Every switch present, leaves (compute, then storage) then spines then cores, in natural
    order. A switch's index is its place in the plan (storage leaves follow the planned compute
    leaves); names are padded to `name_widths`, so neither depends on how many exist."""
    f, w = spec.name, name_widths(plan)
    return (_compute_leaves(f, w, plan) + _storage_leaves(spec, w, plan) + _spines(f, w, plan)
            + _cores(f, w, plan))


def _compute_leaves(f: str, w: Widths, plan: Plan) -> list[Switch]:
    out: list[Switch] = []
    if plan.rail_groups:  # a unit's rails are spine-leaf groups: leaf j of a group serves the unit's j-th leaf of nodes
        i = 0
        for u in range(plan.present_units):
            for r in range(plan.rails):
                for j in range(plan.group_leaves):
                    out.append(Switch(f"{f}-su{u + 1:0{w.unit}d}-rail{r + 1:0{w.rail}d}-leaf{j + 1:0{w.leaf}d}",
                                      "leaf", i + 1, unit=u + 1, rail=r, pod=_pod(plan, i)))
                    i += 1
    elif plan.striped or plan.pair:  # one unit whose leaves take every node's ports striped (spec/sizing.py
        # `stripe`), or a plane's switch pair: odd rails on leaf01, even rails on leaf02 (`pair_port`)
        for i in range(plan.present_compute_leaves):
            out.append(Switch(f"{f}-leaf{i + 1:0{w.leaf}d}", "leaf", i + 1, unit=1, pod=_pod(plan, i)))
    elif plan.topology == "rail-optimized":
        i = 0
        for u in range(plan.present_units):
            for r in range(plan.leaves_per_unit):
                out.append(Switch(f"{f}-su{u + 1:0{w.unit}d}-leaf{r + 1:0{w.rail}d}", "leaf", i + 1, unit=u + 1,
                                  rail=r, pod=_pod(plan, i)))
                i += 1
    else:
        for i in range(plan.present_compute_leaves):
            out.append(Switch(f"{f}-leaf{i + 1:0{w.leaf}d}", "leaf", i + 1, pod=_pod(plan, i)))
    return out


def _storage_leaves(spec: FabricSpec, w: Widths, plan: Plan) -> list[Switch]:
    """The storage servers' leaves, numbered like the fabric's other leaves (a unit's leaf1, or leaf001
    of a fat-tree); on a storage fabric they are its servers' leaves (not storage-storage-leaf)."""
    f = spec.name
    width = w.pod if plan.rail_groups else w.rail if plan.topology == "rail-optimized" and not plan.striped \
        else w.leaf
    word = "servers" if spec.role == "storage" else "storage"
    out: list[Switch] = []
    for j in range(plan.storage_leaves):
        i = plan.compute_leaves + j
        out.append(Switch(f"{f}-{word}-leaf{j + 1:0{width}d}", "leaf", i + 1, pod=_pod(plan, i)))
    return out


def _spines(f: str, w: Widths, plan: Plan) -> list[Switch]:
    out: list[Switch] = []
    if plan.rail_groups and plan.tiers == 3:  # every present group's spines, named after its unit and rail
        for p in present_pods(plan):
            u, r = divmod(p - 1, plan.rails)
            head = f"{f}-su{u + 1:0{w.unit}d}-rail{r + 1:0{w.rail}d}" if p <= plan.units * plan.rails \
                else f"{f}-storage{p - plan.units * plan.rails:0{w.pod}d}"
            for j in range(plan.spines_per_pod):
                out.append(Switch(f"{head}-spine{j + 1:0{w.spine}d}", "spine", (p - 1) * plan.spines_per_pod + j + 1,
                                  pod=p, plane=j))
    elif plan.tiers == 2:
        out += [Switch(f"{f}-spine{j + 1:0{w.spine}d}", "spine", j + 1, pod=1) for j in range(plan.spines)]
    elif plan.tiers == 3:
        for p in present_pods(plan):  # every present pod's spines; the cores and their ports are the plan's
            for j in range(plan.spines_per_pod):
                out.append(Switch(f"{f}-pod{p:0{w.pod}d}-spine{j + 1:0{w.spine}d}", "spine",
                                  (p - 1) * plan.spines_per_pod + j + 1, pod=p, plane=j))
    return out


def _cores(f: str, w: Widths, plan: Plan) -> list[Switch]:
    out: list[Switch] = []
    if plan.tiers == 3:
        for j in range(plan.spines_per_pod):
            for c in range(plan.cores_per_plane):
                n = j * plan.cores_per_plane + c + 1
                out.append(Switch(f"{f}-core{n:0{w.core}d}", "core", n, plane=j))
    return out


def uplinks(plan: Plan, switches: list[Switch]) -> Iterator[tuple[str, Switch, int, Switch, int, int]]:
    """Every switch-to-switch cable as (tier, lower switch, its port index, upper switch, its
    port index, ordinal). Ports and ordinals follow places in the plan only, so the growth
    check can compare the cabling of two plans without building either. Port indexes are
    host-speed ports (slots); a tier at a multiple of that speed (`Plan.factor`) takes one link
    every `factor` slots, its ordinals counted in links."""
    leaves = [s for s in switches if s.role == "leaf"]
    spines = [s for s in switches if s.role == "spine"]
    cores = [s for s in switches if s.role == "core"]
    m, base = plan.factor("leaf-spine"), plan.up_base
    if plan.peer_links:  # a collapsed pair: leaf 1's ports after its node ports to leaf 2's same ports
        for t in range(plan.peer_links // m):
            yield ("leaf-leaf", leaves[0], base + t * m, leaves[1], base + t * m, t)
    if plan.tiers >= 2:
        w, up = plan.leaf_spine_width, plan.up
        of_pod: dict[int, list[Switch]] = {}
        for spine in spines:
            of_pod.setdefault(spine.pod, []).append(spine)
        for leaf in leaves:
            pos = (leaf.index - 1) - (leaf.pod - 1) * plan.leaves_per_pod  # leaf position in its pod
            for s, spine in enumerate(of_pod[leaf.pod]):
                for t in range(0, w, m):
                    yield ("leaf-spine", leaf, base + s * w + t, spine, pos * w + t,
                           ((leaf.index - 1) * up + s * w + t) // m)
    if plan.tiers == 3:
        w2, m2, core_base = plan.spine_core_width, plan.factor("spine-core"), plan.core_base
        first = plan.leaves * plan.up // m
        for spine in spines:
            plane_cores = cores[spine.plane * plan.cores_per_plane:(spine.plane + 1) * plan.cores_per_plane]
            for c, core in enumerate(plane_cores):
                for t in range(0, w2, m2):
                    yield ("spine-core", spine, core_base + c * w2 + t, core, (spine.pod - 1) * w2 + t,
                           first + ((spine.index - 1) * plan.spine_up + c * w2 + t) // m2)


def border_port_indices(plan: Plan, uplinks: int) -> list[int]:
    """A border leaf's uplink ports (northsouth.border), as 0-based port indices at the plan's speed:
    the `uplinks` highest that neither a node of the plan (every planned node, so that growth never
    reaches them) nor a switch-to-switch link takes: above the switch links where the leaf has room
    there (the collapsed pair), else at the top of the node ports' range (a leaf with spines at 1:1,
    whose uplinks take its highest ports). Fewer than `uplinks` where the leaf has no more free
    (validation refuses that count)."""
    if plan.striped:  # a tray's two ports striped over the leaves (spec/sizing.py `stripe`)
        nodes = 2 * -(-plan.nodes // plan.leaves_per_unit)
    elif plan.rail_groups:
        nodes = plan.down
    else:
        nodes = plan.unit_nodes or plan.down
    # the node ports' cages (up to `up_base`), and the cages after the switch links' (`up_end`):
    # where the links run at another speed (cabling.<tier>.speed) every port of these is at the
    # node ports' speed, so the names at that speed are the ports' (spec/sizing.py `cage_speeds`)
    after = plan.up_end if plan.mixed else plan.up_base + (plan.up if plan.tiers >= 2 else plan.peer_links)
    # a collapsed pair's servers (`server_ports`): right after its peer links, or (the pair sized by racks)
    # after its two racks' tray ports
    servers = range(plan.server_base, plan.server_base + plan.servers) if plan.servers else range(0)
    free = [p for p in (*range(min(nodes, plan.down), plan.up_base), *range(after, plan.radix)) if p not in servers]
    return free[len(free) - uplinks:] if uplinks <= len(free) else free


def server_ports(plan: Plan, server: int, bonds: int) -> list[int]:
    """A collapsed pair's (`Plan.pair_servers`) `server`-th server's ports (0-based port indices at the plan's
    speed, the same on both leaves), one a bond: the servers' bonds fill the ports from `Plan.server_base`
    (after the peer links, or on the pair sized by racks after its two racks' tray ports) in inventory
    order, so a server added later takes the next ports, a rack added its own below them, and the
    border and out-of-band uplinks (the highest free ports, `border_port_indices`) stay where they are."""
    first = plan.server_base + server * bonds
    return list(range(first, first + bonds))


# Port groups at their own speed on a north-south leaf (docs/hardware.md "Port speeds"): NVIDIA's
# generator runs the border uplinks and the routed out-of-band uplinks on cages broken out at a
# speed of their own (NVIDIA/enterprise-ras net-configurator/output/2-4-5-800/default/configs/
# csl-01-config.sh at 993eed6a993b668e9ab80556cd973b548612c4a4: `swp61,swp62 link breakout 4x` for
# the EXIT uplinks at 200G, `swp63 link breakout 8x` for the out-of-band uplinks at 100G;
# .../2-8-9-400/default/configs/core-01-config.sh at 2f46cb2fca8f4d9b432f9de62957e54aed8f64d9:
# `swp55,swp61,swp63 link breakout 8x`, the EXIT uplinks on swp61s0-s5 and swp63s0-s5, the
# out-of-band uplinks on swp55s0-s2).


@dataclass(frozen=True)
class LeafGroups:
    """A north-south leaf's border uplinks and routed out-of-band uplinks (access switch j's at j), by
    name, and the cages the groups at their own speed split (0-based cage -> its speed)."""

    border: tuple[str, ...] = ()
    oob: tuple[str, ...] = ()
    cages: dict[int, int] = field(default_factory=dict)


def free_cages(plan: Plan, cages: int, taken: frozenset[int] = frozenset()) -> list[int]:
    """The 0-based cages, ascending, every host-speed port of which no planned node and no switch link
    takes (`border_port_indices` with every port), less the host-speed ports `taken`."""
    per = plan.radix // cages
    free = set(border_port_indices(plan, plan.radix)) - taken
    return [c for c in range(cages) if all(c * per + k in free for k in range(per))]


def _split_cages(free: list[int], model: SwitchModel, per: int, need: int, top: bool) -> list[int]:
    """`need` of the `free` cages (0-based, ascending) for a group of `per` ports a cage, the highest
    (`top`: returned ascending) or the highest below them (returned descending). A cage split into a
    port a lane (SN5600's 8x) takes an odd-numbered cage (1-based) whose even neighbour is free too and
    stays unsplit, as NVIDIA's generator writes it (`swp63 link breakout 8x`, `swp64 link breakout
    disabled` in csl-01-config.sh at 993eed6; swp55/56, 61/62, 63/64 in 2-8-9-400's core-01 at 2f46cb2)."""
    if per >= model.lanes_per_cage:
        free = [c for c in free if c % 2 == 0 and c + 1 in free]
    chosen = free[-need:] if need else []
    return chosen if top else chosen[::-1]


def _own_speed(plan: Plan, model: SwitchModel, speed: int, count: int, taken: frozenset[int],
               top: bool) -> tuple[tuple[str, ...], dict[int, int]]:
    """A group of `count` ports at its own `speed` on whole free cages (`_split_cages`): its port
    names, and the cages it splits with their speed (`_with_neighbours`)."""
    per = model.mode_for(speed).per_cage  # type: ignore[union-attr]
    chosen = _split_cages(free_cages(plan, model.cages, taken), model, per, -(-count // per), top)
    at = model.port_names(speed)
    return tuple([at[c * per + k] for c in chosen for k in range(per)][:count]), _with_neighbours(chosen, speed,
                                                                                                   per, model)


def leaf_groups(plan: Plan, model: SwitchModel, border: tuple[int, int] = (0, 0),
                oob: tuple[int, int] = (0, 0)) -> LeafGroups:
    """The border uplinks (`border`: their count, their speed) and the routed out-of-band uplinks
    (`oob`: the planned access switches, their speed) of a north-south leaf; a speed 0 or the
    plan's own keeps the group on the free ports at the node ports' speed as before
    (`border_port_indices`). A group at its own speed takes whole free cages:
    the border's the highest, filled from the lowest of them up; the out-of-band uplinks' the next
    ones down, from the highest, access switch j on the j-th port counted so, so that a switch
    added to the plan takes a port nobody moves from. Both follow from the plan alone, so growth
    within it never moves them. Fewer ports than asked where the cages run out (validation
    refuses that)."""
    names = model.port_names(plan.speed)
    per_host = plan.radix // model.cages
    uplinks, bspeed = border
    switches, ospeed = oob
    cages: dict[int, int] = {}
    if uplinks and bspeed and bspeed != plan.speed:
        bports, cages = _own_speed(plan, model, bspeed, uplinks, frozenset(), top=True)
        taken = frozenset(c * per_host + k for c in cages for k in range(per_host))
    else:
        bidx = border_port_indices(plan, uplinks) if uplinks else []
        bports, taken = tuple(names[i] for i in bidx), frozenset(bidx)
    if switches and ospeed and ospeed != plan.speed:
        oports, split = _own_speed(plan, model, ospeed, switches, taken, top=False)
        cages.update(split)
    else:  # at the node ports' speed: the free ports below the border's, from the highest down
        free = [i for i in border_port_indices(plan, plan.radix) if i not in taken]
        oports = tuple(names[i] for i in free[::-1][:switches])
    return LeafGroups(bports, oports, cages)


def _with_neighbours(chosen: list[int], speed: int, per: int, model: SwitchModel) -> dict[int, int]:
    """The cages a group splits at `speed`, and (0: `breakout disabled`, no ports) the even neighbour of
    each cage split a port a lane (`_split_cages`)."""
    out = {c: speed for c in chosen}
    if per >= model.lanes_per_cage:
        out.update({c + 1: 0 for c in chosen})
    return out
