"""Checks of an out-of-band network and its layout: blocks of access switches per fabric it
manages and per node block, each place fixed by the plan (spec/oob_layout.py)."""

from __future__ import annotations

from fabgen.inventory.check_fabrics import (
    attach_node_groups,
    check_fabric_hardware,
    check_fabric_name,
    check_fabric_role,
)
from fabgen.inventory.messages import did_you_mean
from fabgen.inventory.state import Checks, Member
from fabgen.spec.layout import plane_names


def check_oob(c: Checks, i: int, f) -> None:
    """An out-of-band network (topology/oob.py): identity, hardware and node groups as any fabric,
    then the shape (one tier of access switches), the fabrics it manages and its blocks."""
    from fabgen.spec.oob_layout import ACCESS_WIDTH, Layout, access_plan

    path = ("fabrics", i)
    ok = check_fabric_name(c, i, f)
    ok = check_fabric_role(c, i, f) and ok
    ok = check_fabric_hardware(c, i, f) and ok
    fmembers, fstorage, attached_ok = attach_node_groups(c, i, f)
    ok = _check_shape(c, path, f) and ok
    model = c.switch_models.get(f.switch_model)
    if model is not None and len(model.uplinks) < 2:
        c.report((*path, "switch_model"), f"{f.switch_model} names no uplink ports: an access switch bonds two "
                 "uplinks to the site's management network, so an out-of-band network needs a catalog access "
                 "switch that has them (sn2201)")
        ok = False
    managed = _managed(c, i, f)
    if not (ok and attached_ok and managed is not None and model is not None):
        return
    members = fmembers + fstorage
    speed = model.native.speed
    rails = sorted({len(m.nics) for _, _, m in members}) or [1]
    fast = sorted({n.speed for _, _, m in members for n in m.nics if n.speed != speed})
    if len(rails) > 1 or fast:
        c.report((*path, "node_groups"), f"the attached nodes' out-of-band ports must be one per node kind at "
                 f"{speed}G: found {', '.join(map(str, rails))} per node" + (f", {fast[0]}G" if fast else ""))
        return
    domain = max((m.nvlink_domain for _, _, m in members), default=1)
    most = model.radix(speed) // rails[0] // domain * domain
    per_switch = f.scalable_unit or most
    if per_switch > most or per_switch % domain or per_switch < 1:
        c.report((*path, "scalable_unit"), f"nodes per access switch: at most {most} ({model.radix(speed)} ports, "
                 f"{rails[0]} per node" + (f", whole NVLink racks of {domain}" if domain > 1 else "") + ")")
        return
    layout = Layout()
    _node_blocks(c, i, f, members, fstorage, layout, per_switch, rails[0])
    down = model.radix(speed)
    for owner, planned, rows in managed:
        from fabgen.spec.oob_layout import SWITCH_BLOCK, Block

        present = max(p for _, _, p in rows) + 1 if rows else 0
        layout.blocks.append(Block(owner, SWITCH_BLOCK, planned, down, 1, present))
        layout.switches += [(len(layout.blocks) - 1, row) for row in _as_managed(rows)]
    longest = max((len(f.name) + len(b.owner) + len(b.kind) + ACCESS_WIDTH + 2 for b in layout.blocks), default=0)
    if longest > 63:
        c.report((*path, "name"), f"access switches are named '<{f.name}>-<fabric>-access0001': {longest} characters, "
                 "more than a hostname's 63; shorten the fabric names")
        return
    big = max((b.switches for b in layout.blocks), default=0)
    if big >= 10 ** ACCESS_WIDTH:
        c.report(path, f"{big} access switches in one block: names hold {10 ** ACCESS_WIDTH - 1}; split the "
                 "out-of-band network into several fabrics")
        return
    c.plans[f.name] = access_plan(layout, model, speed, rails[0], per_switch)
    c.members[f.name], c.storage[f.name] = fmembers, fstorage
    c.managed[f.name] = layout


def _check_shape(c: Checks, path: tuple, f) -> bool:
    """One tier of access switches on RJ45 copper, no plan of its own, a management prefix:
    whether the network has that shape (each way it does not is reported)."""
    ok = True
    if f.topology != "fat-tree" or f.tiers not in ("auto", 1):
        c.report((*path, "topology" if f.topology != "fat-tree" else "tiers"), "an out-of-band network is one tier "
                 "of access switches: leave topology and tiers out")
        ok = False
    if f.planned_nodes is not None:
        c.report((*path, "planned_nodes"), "an out-of-band network follows the plans of the fabrics its nodes and "
                 "switches are on (each BMC at its node's planned place there): set planned_nodes on those fabrics",
                 key=True)
        ok = False
    if f.management is None:
        c.report(path, "an out-of-band network needs management: the management VLAN's prefix and gateway (the "
                 "access switches' and the BMCs' addresses)")
        ok = False
    cab = f.cabling
    if cab.leaf_spine.model_fields_set or cab.spine_core.model_fields_set:
        c.report((*path, "cabling", "leaf_spine" if cab.leaf_spine.model_fields_set else "spine_core"),
                 "an out-of-band network has one tier (node_leaf): RJ45 copper to its access switches")
        ok = False
    if cab.node_leaf.media not in (None, "utp") or (cab.node_leaf.length_m or 0) > 100:
        bad = "media" if cab.node_leaf.media not in (None, "utp") else "length_m"
        c.report((*path, "cabling", "node_leaf", bad), "an out-of-band network's access ports are RJ45 copper "
                 "(utp), 1000BASE-T reaches 100 m (IEEE 802.3ab): place the access switches closer")
        ok = False
    return ok


def _as_managed(rows: list[tuple[str, str, int]]) -> list:
    from fabgen.spec.oob_layout import Managed

    return [Managed(name, platform, place) for name, platform, place in rows]


# where a node's BMC is placed: its first fabric in this order
ROLE_ORDER = ("compute", "storage", "northsouth", "inband")


def _node_blocks(c: Checks, i: int, f, members: list[Member], fstorage: list[Member], layout, per_switch: int,
                 ports: int) -> None:
    """One block per home fabric of the attached nodes, in inventory order. A node's place is its
    planned place in its home fabric (a storage node after that fabric's planned nodes) where every
    node of that fabric is homed there; where some are homed elsewhere (a storage fabric's DGX,
    homed on their compute fabric), the nodes homed there follow one another, so no port waits for
    a node placed in another block and no other fabric's nodes move them."""
    from fabgen.spec.oob_layout import NODE_BLOCK, Block, Placed

    attached = {h for h, _, _ in members}
    storage = {h for h, _, _ in fstorage}
    homed: set[str] = set()
    blocks: list[tuple[str, int, dict[str, int], bool]] = []  # (home, planned places, host -> place, sized by plan)
    for role in ROLE_ORDER:
        for spec in c.inv.fabrics:
            if spec.role != role or spec.name not in c.plans:
                continue
            p = c.plans[spec.name]
            hosts = [(h, k) for k, (h, _, _) in enumerate(c.members.get(spec.name, []))]
            hosts += [(h, p.nodes + k) for k, (h, _, _) in enumerate(c.storage.get(spec.name, []))]
            mine = [(h, k) for h, k in hosts if h in attached and h not in homed]
            if not mine:
                continue
            if len(mine) == len(hosts):  # every node homed here: each at its planned place, the plan reserved
                places, planned, by_plan = dict(mine), p.nodes + len(c.storage.get(spec.name, [])), True
            else:  # nodes of other homes too: those homed here one after another, in the fabric's order
                places, planned, by_plan = {h: j for j, (h, _) in enumerate(mine)}, len(mine), False
                if all(h in storage for h, _ in mine):  # only its storage servers: no node of the plan here,
                    by_plan = True  # so its size moves with theirs alone, as a fully homed block's does
                elif spec.planned_nodes is not None:  # some of the plan's nodes: the block keeps room for all
                    planned, by_plan = max(planned, p.nodes + len(c.storage.get(spec.name, []))), True
            homed.update(places)
            blocks.append((spec.name, planned, places, by_plan))
    rest = [h for h, _, _ in members if h not in homed]
    if rest:  # nodes on no other fabric: the out-of-band network is their home
        blocks.append((f.name, len(rest), {h: k for k, h in enumerate(rest)}, False))
    order = [x.name for x in c.inv.fabrics]
    # blocks sized by a plan first (their size changes only with the plan), then those sized by the nodes
    # present (a fabric without planned_nodes): what grows comes last, and last of all the nodes on no other
    # fabric, whom no plan sizes (an out-of-band network takes no planned_nodes)
    sized = {owner: c.inv.fabrics[order.index(owner)].planned_nodes is not None and planned_by_plan
             for owner, _, _, planned_by_plan in blocks}
    blocks.sort(key=lambda b: (b[0] == f.name, not sized[b[0]], order.index(b[0])))
    by_host = {h: (g, m) for h, g, m in members}
    for b, (owner, planned, places, _) in enumerate(blocks):
        layout.blocks.append(Block(owner, NODE_BLOCK, planned, per_switch, ports, max(places.values()) + 1))
        for h, k in sorted(places.items(), key=lambda kv: kv[1]):
            g, m = by_host[h]
            layout.nodes.append(Placed(h, g, m, b, k, "storage" if h in storage else "compute"))
        if not sized[owner] and _moves(b, blocks, storage):
            servers = " (and the cables of its storage servers, which follow its nodes)" if storage & set(places) \
                else ""
            c.warner(f.name)(("fabrics", i), f"the out-of-band block of fabric '{owner}' has no planned_nodes: adding "
                             f"nodes there moves the out-of-band addresses of the blocks after it{servers}; set "
                             f"planned_nodes on fabric '{owner}' to the size it will reach, or accept the "
                             "re-addressing")


def _moves(b: int, blocks: list[tuple[str, int, dict[str, int], bool]], storage: set[str]) -> bool:
    """Whether a node added to block b, sized by what is present, moves anything: a node block after
    it (its addresses start after b's), or a storage server of b placed after b's other nodes."""
    places = blocks[b][2]
    last_node = max((k for h, k in places.items() if h not in storage), default=-1)
    return b < len(blocks) - 1 or any(k > last_node for h, k in places.items() if h in storage and last_node >= 0)


def _managed(c: Checks, i: int, f) -> list[tuple[str, int, list[tuple[str, str, int]]]] | None:
    """The switches of the fabrics an oob network manages: per managed fabric its name, its planned
    switch count (every plane) and its present switches as (name, platform, planned place)."""
    from fabgen.spec.layout import switch_names

    names = f.manages if f.manages is not None else [x.name for x in c.inv.fabrics if x.role != "oob"]
    by_name = {x.name: x for x in c.inv.fabrics}
    out = []
    for j, name in enumerate(names):
        if name in names[:j]:
            c.report(("fabrics", i, "manages", j), f"fabric '{name}' is listed twice")
            return None
        spec = by_name.get(name)
        if spec is None or spec.role == "oob":
            c.report(("fabrics", i, "manages", j), f"'{name}' is not a fabric this network can manage" +
                     did_you_mean(name, [x.name for x in c.inv.fabrics if x.role != "oob"]))
            return None
        other = c.manager.setdefault(name, f.name)
        if other != f.name:  # two networks would cable every switch's management port twice
            where = ("fabrics", i, "manages", j) if f.manages is not None else ("fabrics", i)
            c.report(where, f"fabric '{name}' is already managed by the out-of-band network '{other}': a switch has "
                     "one management port; give each out-of-band network a `manages` list of its own fabrics")
            return None
        p = c.plans.get(name)
        if p is None:  # not sized: reported there
            return None
        per_plane = p.leaves + p.spines + p.cores
        # the planes side by side: plane k's switch at place x in its plane takes x * planes + k, so no
        # plane's management ports move when another plane's switch count does (docs/planes.md)
        rows = []
        for k, plane in enumerate(plane_names(spec)):
            for s in switch_names(spec.model_copy(update={"name": plane}), p):
                rows.append((s.name, spec.platform, p.switch_place(s.role, s.index) * spec.planes + k))
        rows.sort(key=lambda row: row[2])
        out.append((name, per_plane * spec.planes, rows))
    return out
