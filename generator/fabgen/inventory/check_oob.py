"""Checks of an out-of-band network and its layout: blocks of access switches per fabric it
manages and per node block, each place fixed by the plan (spec/oob_layout.py)."""

from __future__ import annotations

import ipaddress

from fabgen.inventory.check_fabrics import (
    asn_clash,
    attach_node_groups,
    check_fabric_hardware,
    check_fabric_name,
    check_fabric_role,
    servers_word,
    taken_tenant_vlans,
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
    ok = _check_design(c, path, f) and ok
    ok = (model is None or _access_speed(c, path, f, model)) and ok
    managed = _managed(c, i, f)
    if not (ok and attached_ok and managed is not None and model is not None):
        return
    members = fmembers + fstorage
    speed = model.native.speed
    rails = sorted({len(m.nics) for _, _, m in members}) or [1]
    fast = sorted({n.speed for _, _, m in members for n in m.nics if n.speed != speed})
    if fast:
        c.report((*path, "node_groups"), f"the attached nodes' out-of-band ports must be {speed}G ones: found "
                 f"{fast[0]}G")
        return
    domain = max((m.nvlink_domain for _, _, m in members), default=1)
    down = model.radix(speed)
    layout = Layout()

    refused: list[int] = []

    def fit(ports: int) -> tuple[int, int]:
        """(nodes per group of access switches, switches a group spans) for nodes of `ports` ports each
        (where they do not fit: reported, noted in `refused`): a node kind's ports side by side on one
        switch, `per_switch` nodes a switch; where a whole NVLink rack's ports outnumber one switch's,
        the rack on as many switches as its port kinds need, each kind a run of `domain` ports (a GB300
        rack: 3 x 18 on two SN2201, ERA-00012)."""
        most, span = down // ports // domain * domain, 1
        if not most and domain > 1 and down >= domain:
            most, span = domain, -(-ports // (down // domain))
        per_switch = f.scalable_unit or most
        if per_switch > most or per_switch % domain or per_switch < 1:
            group = f"{span} access switches" if span > 1 else "access switch"
            c.report((*path, "scalable_unit"), f"nodes per {group}: at most {most} ({down} ports a switch, {ports} "
                     "per node" + (f", whole NVLink racks of {domain}" if domain > 1 else "") + ")")
            refused.append(ports)
            return 1, 1
        return per_switch, span

    _node_blocks(c, i, f, members, fstorage, layout, fit)
    if refused:
        return
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
    if not _check_routed(c, path, f, layout):
        return
    first = next((b for b in layout.blocks if b.kind == "access"), None)
    c.plans[f.name] = access_plan(layout, model, speed, rails[-1], first.per_switch if first else down)
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


def _access_speed(c: Checks, path: tuple, f, model) -> bool:
    """An out-of-band network's `cabling.node_leaf.speed`: each used access port's `link speed` (NVIDIA's
    `nv set interface swp1-48 link speed 1G` on the SN2201, oob-switch-01-config.sh for 2-8-9-400 at
    993eed6a993b668e9ab80556cd973b548612c4a4), a speed the access ports run, NVUE only; the plan is
    unchanged (its other tiers are refused by `_check_shape`). False: refused, at the key."""
    v = f.cabling.node_leaf.speed
    where = (*path, "cabling")
    if v is None:
        return True
    if f.platform != "nvue":
        c.report((*where, "node_leaf", "speed"), f"the access ports' `link speed` is written on Cumulus Linux (NVUE) "
                 f"only; fabgen's {f.platform} access switch writes none: leave it out")
        return False
    if model.mode_for(v) is None:
        c.report((*where, "node_leaf", "speed"), f"{f.switch_model}'s access ports run "
                 f"{', '.join(f'{s}G' for s in model.speeds())}, not {v}G")
        return False
    return True


def _as_managed(rows: list[tuple[str, str, int]]) -> list:
    from fabgen.spec.oob_layout import Managed

    return [Managed(name, platform, place) for name, platform, place in rows]


# where a node's BMC is placed: its first fabric in this order
ROLE_ORDER = ("compute", "storage", "northsouth", "inband")


def _node_blocks(c: Checks, i: int, f, members: list[Member], fstorage: list[Member], layout, fit) -> None:
    """One block per home fabric of the attached nodes, in inventory order. A node's place is its
    planned place in its home fabric (a storage node after that fabric's planned nodes) where every
    node of that fabric is homed there; where some are homed elsewhere (a storage fabric's DGX,
    homed on their compute fabric), the nodes homed there follow one another, so no port waits for
    a node placed in another block and no other fabric's nodes move them."""
    from fabgen.spec.oob_layout import Placed

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
    layout.blocks += [_block(owner, planned, places, by_host, fit) for owner, planned, places, _ in blocks]
    for b, (owner, _, places, _) in enumerate(blocks):
        for h, k in sorted(places.items(), key=lambda kv: kv[1]):
            g, m = by_host[h]
            layout.nodes.append(Placed(h, g, m, b, k, "storage" if h in storage else "compute"))
        if not sized[owner] and _moves(b, blocks, storage):
            _warn_moves(c, i, f, owner, bool(storage & set(places)))


def _warn_moves(c: Checks, i: int, f, owner: str, servers: bool) -> None:
    also = " (and the cables of its storage servers, which follow its nodes)" if servers else ""
    c.warner(f.name)(("fabrics", i), f"the out-of-band block of fabric '{owner}' has no planned_nodes: adding "
                     f"nodes there moves the out-of-band addresses of the blocks after it{also}; set "
                     f"planned_nodes on fabric '{owner}' to the size it will reach, or accept the "
                     "re-addressing")


def _block(owner: str, planned: int, places: dict[str, int], by_host: dict, fit):
    """A node block sized for its widest node (a narrower one leaves its other ports free)."""
    from fabgen.spec.oob_layout import NODE_BLOCK, Block

    ports = max(len(by_host[h][1].nics) for h in places)
    per_switch, span = fit(ports)
    return Block(owner, NODE_BLOCK, planned, per_switch, ports, max(places.values()) + 1, span)


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


def routed_northsouth(inv, f):
    """The north-south fabric a routed out-of-band network hangs from (oob_routed.northsouth, else
    the cluster's only northsouth fabric), or None."""
    r = f.oob_routed
    ns = [x for x in inv.fabrics if x.role == "northsouth"]
    if r is not None and r.northsouth is not None:
        return next((x for x in ns if x.name == r.northsouth), None)
    return ns[0] if len(ns) == 1 else None


def _check_design(c: Checks, path: tuple, f) -> bool:
    """oob_design routed (NVIDIA's routed out-of-band network): NVUE access switches, its settings,
    a north-south fabric on NVUE to hang from."""
    r = f.oob_routed
    if f.oob_design == "layer2":
        if r is not None:
            c.report((*path, "oob_routed"), "oob_routed is the routed design's: set oob_design: routed, or leave "
                     "oob_routed out", key=True)
            return False
        return True
    if r is None:
        c.report((*path, "oob_design"), "the routed design needs oob_routed with at least the access switches' "
                 "loopbacks prefix (oob_routed: {loopbacks: 10.0.0.0/24})")
        return False
    ok = True
    if f.platform != "nvue":
        c.report((*path, "platform"), f"the routed out-of-band design is written for NVUE (SN2201 on Cumulus Linux, "
                 f"as NVIDIA's generator builds it), not {f.platform}: use platform nvue or oob_design: layer2")
        ok = False
    ns = routed_northsouth(c.inv, f)
    where = (*path, "oob_routed", "northsouth") if r.northsouth is not None else (*path, "oob_design")
    if ns is None:
        names = [x.name for x in c.inv.fabrics if x.role == "northsouth"]
        c.report(where, "the routed out-of-band design hangs from a north-south fabric's leaf pair (EVPN): " + (
            f"'{r.northsouth}' is not a northsouth fabric" + did_you_mean(r.northsouth, names)
            if r.northsouth is not None else
            f"the cluster has {len(names)} northsouth fabrics: name one in oob_routed.northsouth"))
        return False
    first = next(x for x in c.inv.fabrics if x.role == "oob" and x.oob_design == "routed"
                 and routed_northsouth(c.inv, x) is ns)
    if first is not f:  # both would take the same pair ports, VLAN and VRF
        c.report(where, f"the north-south fabric '{ns.name}' already carries the routed out-of-band network "
                 f"'{first.name}': one routed out-of-band network a north-south pair (make the other layer2, or "
                 "hang it from another north-south fabric)")
        return False
    if ns.platform != "nvue":
        c.report(where, f"the north-south fabric '{ns.name}' runs {ns.platform}: the routed out-of-band design's "
                 "pair side (VRF, uplinks, DHCP relay) is written for NVUE only")
        ok = False
    for key, text in (("loopbacks", r.loopbacks), ("dhcp_server", r.dhcp_server)):
        try:
            if text is not None:
                (ipaddress.IPv4Network if key == "loopbacks" else ipaddress.IPv4Address)(text)
        except ValueError as exc:
            c.report((*path, "oob_routed", key), f"not an IPv4 {'prefix' if key == 'loopbacks' else 'address'}: "
                     f"{exc}")
            ok = False
    if r.dhcp_server is None and c.inv.provisioning is None:
        c.report((*path, "oob_routed"), "the pair relays the management VLAN's DHCP to a server it must know: give "
                 "oob_routed.dhcp_server, or a provisioning block (its server is taken)")
        ok = False
    return _check_numbers(c, path, f, ns) and ok


def _check_numbers(c: Checks, path: tuple, f, ns) -> bool:
    """The VLAN, VNIs and VRF the pair carries beside its own tenants and border: none twice."""
    r = f.oob_routed
    eth = ns.ethernet
    nso = eth.northsouth if eth is not None else None
    tenants = [nso.storage, nso.inband] if nso is not None else []
    border = nso.border if nso is not None else None
    vni = r.vni if r.vni is not None else 4000 + f.oob_vlan
    ok = True

    def at(key: str) -> tuple:  # the key where the inventory writes it, else the block
        return (*path, "oob_routed", key) if key in r.model_fields_set else (*path, "oob_routed")

    taken_vlans = taken_tenant_vlans(tenants)
    if border is not None and border.l3vni_vlan is not None:  # northsouth.border.l3vni_vlan
        taken_vlans[border.l3vni_vlan] = f"{border.vrf}'s layer-3 VNI VLAN"
    for key, value in (("oob_vlan", f.oob_vlan), ("l3vni_vlan", r.l3vni_vlan)):
        if value in taken_vlans or (key == "l3vni_vlan" and value == f.oob_vlan):
            c.report((*path, key) if key == "oob_vlan" else at(key), f"{key} {value} is "
                     f"{taken_vlans.get(value, 'oob_vlan')} on the north-south fabric '{ns.name}' too: the pair "
                     "carries both")
            ok = False
    taken = {**{t.vni: f"{t.vrf}'s VNI" for t in tenants}, **{t.l3vni: f"{t.vrf}'s layer-3 VNI" for t in tenants}}
    if border is not None:
        taken[border.l3vni] = f"{border.vrf}'s layer-3 VNI"
    for key, value in (("vni", vni), ("l3vni", r.l3vni)):
        other = taken.get(value) or ("the VRF's layer-3 VNI" if key == "vni" and value == r.l3vni else None)
        if other:
            c.report(at(key), f"{key} {value} is {other} on the north-south fabric '{ns.name}': each "
                     "VNI once")
            ok = False
    vrfs = {t.vrf for t in tenants} | ({border.vrf} if border is not None else set())
    if r.vrf in vrfs or r.vrf.lower() in ("default", "mgmt"):
        c.report(at("vrf"), f"vrf {r.vrf} is taken on the north-south fabric '{ns.name}' (or the "
                 "switch's own): a VRF of its own")
        ok = False
    return ok


def _uplink_speed_runs(c: Checks, path: tuple, f, ns, ns_model) -> bool:
    """oob_routed.uplink_speed: a speed the access switch's uplinks run (SN2201: 100G QSFP28) and a
    breakout NVUE writes of the north-south pair's cages (SN5600: 100 8x, as NVIDIA's generator breaks
    them out for these uplinks)."""
    speed = f.oob_routed.uplink_speed
    if speed is None:
        return True
    where = (*path, "oob_routed", "uplink_speed")
    model = c.switch_models.get(f.switch_model)
    if model is not None and model.uplink_speed != speed:
        c.report(where, f"{f.switch_model}'s uplinks run {model.uplink_speed}G, not {speed}G")
        return False
    if ns_model.nvue_mode(speed) is None:
        c.report(where, f"the north-south pair's {ns.switch_model} cages break out to {ns_model.nvue_speeds()} on "
                 f"NVUE, not {speed}G")
        return False
    return True


def _check_routed(c: Checks, path: tuple, f, layout) -> bool:
    """What the routed design needs of the sizes: a port on each pair leaf, a loopback and an ASN for
    every planned access switch."""
    if f.oob_design != "routed":
        return True
    from fabgen.spec.layout import leaf_groups

    r = f.oob_routed
    ns = routed_northsouth(c.inv, f)
    plan = c.plans.get(ns.name)
    if plan is None:  # not sized: reported there
        return False
    planned = layout.planned_switches
    if plan.leaves < 2:
        c.report((*path, "oob_design"), f"the north-south fabric '{ns.name}' has no leaf pair for the access "
                 "switches' two uplinks")
        return False
    border = ns.ethernet.northsouth.border if ns.ethernet and ns.ethernet.northsouth else None
    ns_model = c.switch_models.get(ns.switch_model)
    if ns_model is None or not _uplink_speed_runs(c, path, f, ns, ns_model):
        return False
    if border is not None and border.speed and ns_model.nvue_mode(border.speed) is None:
        return False  # refused at northsouth.border.speed (check_fabrics.py `_check_border_speed`)
    ports = leaf_groups(plan, ns_model, (border.uplinks, border.speed or 0) if border else (0, 0),
                        (planned, r.uplink_speed or 0)).oob
    if len(ports) < planned and r.uplink_speed and r.uplink_speed != plan.speed:
        per = ns_model.mode_for(r.uplink_speed).per_cage  # type: ignore[union-attr]
        c.report((*path, "oob_routed", "uplink_speed"), f"{planned} access switches planned, each an uplink at "
                 f"{r.uplink_speed}G to both leaves of the north-south pair of '{ns.name}': "
                 f"{-(-planned // per)} whole cage(s) of {per} ports"
                 f"{', each beside a free cage left unsplit' if per >= ns_model.lanes_per_cage else ''}, which its "
                 f"leaves do not have free below the border's (after its nodes{servers_word(plan)} "
                 "and switch links): fewer access "
                 "switches, or leave uplink_speed out")
        return False
    if len(ports) < planned:
        c.report((*path, "oob_design"), f"{planned} access switches planned, each an uplink to both leaves of the "
                 f"north-south pair of '{ns.name}', which has {len(ports)} free ports left (after its nodes, "
                 f"{servers_word(plan, 'servers, ')}switch links and border uplinks): fewer access switches, "
                 "or a larger pair")
        return False
    net = ipaddress.IPv4Network(r.loopbacks)
    # oob_routed.vrf_loopbacks: the out-of-band VRF's loopbacks too, the pair's two and one an access switch
    wanted = 2 * planned + 2 if r.vrf_loopbacks else planned
    if net.num_addresses - 2 < wanted:
        what = f"{wanted} loopbacks (each access switch's and its VRF's, the pair's two VRF loopbacks)" \
            if r.vrf_loopbacks else f"{planned} loopbacks"
        c.report((*path, "oob_routed", "loopbacks"), f"{planned} access switches planned, {what}: {r.loopbacks} "
                 f"holds {max(net.num_addresses - 2, 0)}")
        return False
    if r.asn + planned - 1 > 4_294_967_294:
        c.report((*path, "oob_routed", "asn"), f"{planned} access switches from ASN {r.asn} pass 4294967294")
        return False
    if not _check_asns(c, path, r.asn, r.asn + planned - 1):
        return False
    return _check_room(c, path, f, layout, net)


def _check_asns(c: Checks, path: tuple, low: int, high: int) -> bool:
    """The access switches' ASNs (one each, from oob_routed.asn) are none an Ethernet fabric of the
    cluster uses: the pair's would make their uplink sessions iBGP (`remote-as external` never comes
    up), another fabric's would drop that fabric's routes as a loop."""
    clash = asn_clash(c, low, high)
    if clash is not None:
        name, tier, lo, hi = clash
        c.report((*path, "oob_routed", "asn"), f"the access switches' ASNs {low}-{high} meet fabric '{name}''s "
                 f"{tier} ASNs ({lo}-{hi}): give oob_routed.asn a range the cluster does not use")
        return False
    return True


def _check_room(c: Checks, path: tuple, f, layout, net) -> bool:
    """The loopbacks prefix apart from every pool and management prefix; the management VLAN's
    prefix holding the pair's two addresses too."""
    r = f.oob_routed
    planned = layout.planned_switches
    for other in c.inv.fabrics:
        pools = other.ethernet.pools if other.ethernet is not None else None
        prefixes = [pools.loopbacks, pools.links, pools.hosts] if pools is not None else []
        prefixes += [other.management.prefix] if other.management is not None else []
        for p in prefixes:
            try:
                clash = net.overlaps(ipaddress.IPv4Network(p, strict=False))
            except ValueError:
                continue
            if clash:
                c.report((*path, "oob_routed", "loopbacks"), f"{r.loopbacks} overlaps {p} of fabric '{other.name}': "
                         "the access switches' loopbacks take a prefix of their own")
                return False
    m = f.management
    if m is not None:
        size = ipaddress.IPv4Network(m.prefix, strict=False).num_addresses - 3  # network, broadcast, gateway
        need = layout.bmc_places + planned + 2
        if size < need:
            c.report((*path, "management"), f"the routed design's management VLAN holds every BMC, every planned "
                     f"access switch and both pair switches' own addresses: {need}, more than {m.prefix}'s {size}")
            return False
        return _check_server(c, path, f, layout)
    return True


def _check_server(c: Checks, path: tuple, f, layout) -> bool:
    """A DHCP server inside the management VLAN's prefix takes none of the addresses the plan hands
    out there: the BMCs' from the bottom, the switches' (the pair's two, the access switches') from the
    top, each skipping the gateway (addressing.allocate_oob); one outside it is reached only by the
    border VRF's routes, leaked into VRF OOB: without a border, a warning."""
    from fabgen.inventory.management import gateway_of

    r = f.oob_routed
    server = r.dhcp_server or (c.inv.provisioning.server if c.inv.provisioning else None)
    net = ipaddress.IPv4Network(f.management.prefix, strict=False)
    try:
        ip = ipaddress.IPv4Address(server)
    except ValueError:  # reported where it is written
        return True
    if ip not in net:
        ns = routed_northsouth(c.inv, f)
        nso = ns.ethernet.northsouth if ns is not None and ns.ethernet is not None else None
        if nso is not None and nso.border is None:  # VRF OOB then holds its own subnet and nothing more
            where = (*path, "oob_routed", "dhcp_server") if r.dhcp_server else (*path, "oob_routed")
            c.warner(f.name)(where, f"the DHCP server {server} lies outside the management VLAN "
                             f"({f.management.prefix}) and the north-south fabric '{ns.name}' has no way out "
                             "(northsouth.border): VRF OOB has no route to it, so the relayed requests go nowhere")
        return True
    gateway = gateway_of(f.management)
    low = int(net.network_address) + layout.bmc_places + 1  # the BMCs' last, the gateway skipped
    high = int(net.broadcast_address) - 1 - (layout.planned_switches + 2) - 1
    if int(ip) == gateway or not low < int(ip) < high:
        where = (*path, "oob_routed", "dhcp_server") if r.dhcp_server else (*path, "oob_routed")
        c.report(where, f"the DHCP server {server} takes an address the management VLAN's plan hands out (the BMCs' "
                 f"from the bottom, the switches' from the top, the gateway): one of {ipaddress.IPv4Address(low + 1)}"
                 f" to {ipaddress.IPv4Address(high - 1)}")
        return False
    return True
