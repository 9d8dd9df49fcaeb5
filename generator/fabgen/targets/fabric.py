"""Fabric-level outputs every fabric gets: cabling plan, bill of materials, topology graph, and
for Ethernet fabrics the address plan (addresses.csv: device, role, ASN, interface, address and
the far end, one row per configured address; intent/addresses.py).

cabling.csv is one row per cable in build order (node-leaf node by node, NICs in rail order, then
leaf-spine, then spine-core), so the order is the order a crew pulls cables in.
bom.csv counts what is bought now, bom-later.csv (a fabric with `planned_nodes`) what the plan's
absent nodes add later. bom.csv counts transceivers per used cage: a Quantum-2 OSFP cage carries two NDR ports
on one twin-port transceiver, so switch-side optics = used cages, not used ports.
topology.dot always aggregates nodes by scalable unit (or by leaf), and above
`DOT_DETAIL_LIMIT` switches it aggregates switches too (leaves by unit, spines by pod,
cores by plane), so the picture stays readable at 32k GPUs; beyond `UNIT_DETAIL_LIMIT`
units (rail-optimized: leaves by rail) or pods (fat-tree) each tier is one box.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from fabgen.context import Context
from fabgen.formats import cabling as cabling_formats
from fabgen.formats import csvout
from fabgen.formats.memo import Memo
from fabgen.formats.templating import render as render_template
from fabgen.intent.addresses import address_rows, host_netdevs
from fabgen.intent.infiniband import DEVICE_ID
from fabgen.intent.management import OOB_UPLINK_MEDIA, OOB_UPLINK_TIER, oob_uplinks
from fabgen.intent.northsouth import BORDER_TIER, border_cabling, border_medium, border_uplinks
from fabgen.rendered.paths import ADDRESS_COLUMNS, CABLING_COLUMNS
from fabgen.spec import media
from fabgen.spec.model import TIERS, Fabric
from fabgen.targets.base import Target
from fabgen.topology.build import build_complete

DOT_DETAIL_LIMIT = 24
MGMT_PORTS = "switch management ports"  # the out-of-band network's box for the managed switches' ports
UNIT_DETAIL_LIMIT = 16
PLURAL = {"leaf": "leaves", "spine": "spines", "core": "cores", "node": "nodes"}


def bill_of_materials(f: Fabric) -> list[dict[str, Any]]:
    """bom.csv's rows; `fabgen compare` prices the same rows, so render and compare never count apart.
    Cables and transceivers follow each link's medium (cabling.csv's `media`, spec/media.py);
    NICs that ship inside the node model are rows of category `included`, not bought; a row with
    nothing to buy (an RJ45 port's transceiver) is not written."""
    model = f.switch_model
    roles = Counter(s.role for s in f.switches)
    rows: list[dict[str, Any]] = [
        {"category": "switch", "part": model.part, "description": model.description, "quantity": len(f.switches),
         "notes": " + ".join(f"{roles[r]} {r}" for r in ("leaf", "spine", "core") if roles[r])}]
    rows += _nic_rows(f)
    rows += _cable_rows(f)
    if f.spec.role == "oob" and model.uplinks:  # each access switch's bonded uplinks to the site
        n = 2 * len(f.switches)
        far = "the north-south pair" if f.spec.oob_design == "routed" else "the site's management network"
        rows.append({"category": "cable", "part": "uplink cable (site's choice: DAC or fiber)",
                     "description": f"access uplink to {far}", "quantity": n,
                     "notes": f"{model.uplink_speed}G, 2 per access switch"})
        rows.append({"category": "transceiver", "part": f"{model.uplink_speed}G QSFP28 transceiver",
                     "description": "access uplink", "quantity": n, "notes": "2 per access switch"})
    rows += _transceiver_rows(f)
    rows += _border_rows(f)
    return [r for r in rows if r["quantity"] and r["part"]]


def _border_rows(f: Fabric) -> list[dict[str, Any]]:
    """northsouth.border's uplinks to the site router: a cable each (a twin-port assembly per used
    cage where the medium is one), and a transceiver per used cage on the leaf; the router's own
    optics are the site's (its ports and cages are not fabgen's to know)."""
    ups = border_uplinks(f)
    if not ups:
        return []
    m = border_medium(f)
    speed = ups[0][4]  # northsouth.border.speed, else the fabric's
    cage = f.switch_model.cages_by_port(speed)
    cages = {(sw, cage[port]) for sw, port, *_ in ups}
    cables = len(cages) if m.per_cage else len(ups)
    return [{"category": "cable", "part": m.cable, "description": f"{BORDER_TIER} ({media.TEXT[m.key]})",
             "quantity": cables, "notes": f"{speed}G, to the site router"},
            {"category": "transceiver", "part": m.switch_part, "description": "switch side (border uplinks)",
             "quantity": len(cages), "notes": f"one per used {f.switch_model.cage_type} cage"}]


def later_materials(f: Fabric) -> list[dict[str, Any]]:
    """What the plan buys later (report.md's "Bought later"): the rows of the fabric the plan
    completes to (`planned_nodes` attached) less those bought now, counted by the same code. The
    cores, and the spines of pods already present, are bought now; the absent nodes' leaves, their
    pods' spines, their cables and optics later. Empty without a plan (and for the out-of-band network,
    whose access switches are counted by their blocks). The present fabric is a part of the
    completed one, so no row of it shrinks; one that did would leave bom.csv and bom-later.csv not
    adding up to the completed plan, and stops the render instead of being dropped."""
    done = build_complete(f)
    if done is None:
        return []
    now = Counter({(r["category"], r["part"], r["description"]): r["quantity"] for r in bill_of_materials(f)})
    full = bill_of_materials(done)
    fewer = now - Counter({(r["category"], r["part"], r["description"]): r["quantity"] for r in full})
    if fewer:  # the present fabric is a part of the completed one: a row it needs less of is a fault here
        raise AssertionError(f"{f.name}: the completed plan needs fewer than bought now of {sorted(fewer.items())}; "
                             "bom.csv and bom-later.csv would not add up to it")
    roles = Counter(s.role for s in done.switches)
    roles.subtract(s.role for s in f.switches)
    rows = []
    for r in full:
        n = r["quantity"] - now[(r["category"], r["part"], r["description"])]
        if n == 0:
            continue
        notes = " + ".join(f"{roles[x]} {x}" for x in ("leaf", "spine", "core") if roles[x] > 0) \
            if r["category"] == "switch" else r["notes"]
        rows.append({**r, "quantity": n, "notes": notes})
    return rows


def _nic_rows(f: Fabric) -> list[dict[str, Any]]:
    """A node's NICs once, with the first plane; those that ship in the node model as `included`."""
    counts: Counter[tuple[str, str, str]] = Counter()
    node_models: dict[str, Any] = {}
    for h in f.hosts if f.plane == 0 else ():
        if h.role == "switch":  # a managed switch's management port (out-of-band network): nothing to buy
            continue
        counts[(h.model.nic_model, h.model.key, h.role)] += len(h.model.nics)
        node_models[h.model.key] = h.model
    rows = []
    for (nic_model, node_key, role), n in sorted(counts.items()):
        m = node_models[node_key]
        if f.spec.role == "compute":
            what, notes = f"{role} NIC in {node_key}", f"{f.plan.speed * f.planes}G"
        else:  # a card may carry ports of several roles (storage and in-band): count its ports here
            what, notes = f"{f.spec.role} port of {node_key}", f"{f.plan.speed}G, ports ({len(m.nics)} per node)"
        if m.nics_included:
            rows.append({"category": "included", "part": nic_model, "description": what, "quantity": n,
                         "notes": f"{notes}; ships in the {m.part}: not ordered"})
        else:
            rows.append({"category": "nic", "part": nic_model, "description": what, "quantity": n, "notes": notes})
    return rows


def _media(f: Fabric) -> Memo[media.Medium]:
    """Each medium key's Medium at the fabric's switch model and speed, looked up once (a lookup
    per link was a tenth of a four-plane fabric's structure step)."""
    if f.plan.mixed:  # the tiers at their own speeds: looked up by "<key>@<the link's speed>"
        return Memo(lambda ks: media.by_key(f.switch_model, int(ks.split("@")[1]), ks.split("@")[0]))
    return Memo(lambda key: media.by_key(f.switch_model, f.plan.speed, key))


def _cages(f: Fabric) -> dict[str, int]:
    """Port name -> its cage: at the fabric's speed, or at any where the tiers' speeds differ."""
    return f.switch_model.cage_map() if f.plan.mixed else f.switch_model.cages_by_port(f.plan.speed)


def _cable_rows(f: Fabric) -> list[dict[str, Any]]:
    """Cables per tier and medium: a fibre or a single-port assembly per link; a twin-port copper
    assembly per used cage of the lower switch (to nodes: a splitter per used leaf cage)."""
    cage = _cages(f)
    mixed = f.plan.mixed
    count: Counter[tuple[str, str, str]] = Counter()
    seen: set[tuple[str, str, int]] = set()  # (tier, switch, cage) holding a copper assembly
    medium = _media(f)
    for lk in f.links:
        m = medium[lk.media if not mixed else f"{lk.media}@{lk.speed}"] if lk.media != "utp" else None
        if m is None:
            count[(lk.tier, "utp", media.FAMILIES["rj45"][0].cable)] += 1
            continue
        part = m.nic_cable if lk.tier == "node-leaf" and m.nic_cable else m.cable
        if m.per_cage:
            end, port = (lk.z, lk.z_port) if lk.tier == "node-leaf" else (lk.a, lk.a_port)
            if (lk.tier, end, cage[port]) in seen:
                continue
            seen.add((lk.tier, end, cage[port]))
        count[(lk.tier, lk.media, part)] += 1
    rows = []
    for tier in (*TIERS, "leaf-leaf"):  # leaf-leaf: a collapsed pair's peer link (spec/sizing.py)
        for (t, key, part), n in sorted(count.items()):
            if t == tier:
                rows.append({"category": "cable", "part": part, "description": f"{tier} ({media.TEXT[key]})",
                             "quantity": n, "notes": f"{f.plan.tier_speed(tier)}G"})
    return rows


def _transceiver_rows(f: Fabric) -> list[dict[str, Any]]:
    """Switch side: one per used cage, of the medium its ports run (the longest-reaching where a
    cage's ports mix media); node side: one per used node cage, of its form and medium."""
    cage = _cages(f)
    mixed = f.plan.mixed
    by_cage: dict[tuple[str, int], media.Medium] = {}
    node_cages: dict[tuple[str, str], media.Medium] = {}
    hosts = {h.name: h for h in f.hosts}
    medium = _media(f)
    nic_cage: dict[tuple[str, str], str] = {}  # (node model, RDMA name) -> the NIC's cage
    get = by_cage.get
    for lk in f.links:
        if lk.media == "utp":
            continue
        m, tier = medium[lk.media if not mixed else f"{lk.media}@{lk.speed}"], lk.tier
        # the cage's medium so far; reach compared only where a cage's ports mix media (1.6 million
        # links at 131,072 GPUs of four planes: the comparison on every end was 1.3 s of a render)
        key = (lk.z, cage[lk.z_port])
        was = get(key)
        if was is None or (was is not m and media.reach(m, tier) > media.reach(was, tier)):
            by_cage[key] = m
        if tier != "node-leaf":
            key = (lk.a, cage[lk.a_port])
            was = get(key)
            if was is None or (was is not m and media.reach(m, tier) > media.reach(was, tier)):
                by_cage[key] = m
        if tier == "node-leaf" and f.plane == 0:
            model = hosts[lk.a].model
            at = nic_cage.get((model.key, lk.a_port))
            if at is None:
                at = nic_cage[(model.key, lk.a_port)] = next(n for n in model.nics if n.rdma == lk.a_port).cage
            node_cages.setdefault((lk.a, at), m)
    switch_side = Counter(m.switch_part for m in by_cage.values())
    rows = [{"category": "transceiver", "part": part, "description": "switch side", "quantity": n,
             "notes": f"one per used {f.switch_model.cage_type} cage"} for part, n in sorted(switch_side.items())]
    node_side: Counter[tuple[str, str]] = Counter()
    custom = f.switch_model.custom  # a custom switch's medium names no node parts: the node model's own
    for (host, _), m in node_cages.items():
        model = hosts[host].model
        form = "custom" if custom else model.form(hosts[host].role if f.spec.role == "compute" else f.spec.role)
        node_side[(model.key, media.node_part(m, form, model.transceiver))] += 1
    rows += [{"category": "transceiver", "part": part, "description": f"node side ({key})", "quantity": n,
              "notes": "one per used node cage"} for (key, part), n in sorted(node_side.items())]
    return rows


def _group_of(ctx: Context, detailed: bool) -> dict[str, str]:
    """Map every device to the drawing node that stands for it.

    Three levels: every device (up to DOT_DETAIL_LIMIT switches); per scalable unit, pod
    and core plane; and, beyond UNIT_DETAIL_LIMIT units, leaves per rail with nodes, spines
    and cores one box each, so a 32k-GPU fabric stays a readable picture of a dozen boxes
    (the report carries the per-pod figures). A fat-tree beyond UNIT_DETAIL_LIMIT pods is one
    box per tier: 64 pods drew 224 boxes and 2,000 pod-to-plane edges, which no one could
    read and Graphviz took 2.9 s to lay out."""
    f = ctx.fabric
    plan = f.plan
    huge = plan.topology == "rail-optimized" and plan.units > UNIT_DETAIL_LIMIT
    huge_tree = plan.topology == "fat-tree" and plan.pods > UNIT_DETAIL_LIMIT
    group: dict[str, str] = {}
    _switch_boxes(f, detailed, huge, huge_tree, group)
    _node_boxes(f, detailed, huge, huge_tree, group)
    return group


def _switch_boxes(f: Fabric, detailed: bool, huge: bool, huge_tree: bool, group: dict[str, str]) -> None:
    """_group_of's boxes of the switches."""
    plan = f.plan
    for s in f.switches:
        if detailed:
            group[s.name] = s.name
        elif s.role == "leaf" and s.index > plan.compute_leaves:
            group[s.name] = "storage leaves"
        elif s.role == "leaf" and huge:
            group[s.name] = f"rail{s.rail + 1} leaves"
        elif huge_tree:
            group[s.name] = PLURAL[s.role]
        elif plan.rail_groups and plan.tiers == 3:  # a box per spine-leaf group's leaves and spines, per core group
            group[s.name] = _rail_group_box(plan, s)
        elif s.role == "leaf":
            group[s.name] = f"su{s.unit:02d} leaves" if plan.topology == "rail-optimized" else f"pod{s.pod:02d} leaves"
        elif s.role == "spine":
            group[s.name] = f"pod{s.pod:02d} spines" if plan.tiers == 3 and not huge else "spines"
        else:
            group[s.name] = "cores" if huge else f"plane{s.plane + 1:02d} cores"


def _node_boxes(f: Fabric, detailed: bool, huge: bool, huge_tree: bool, group: dict[str, str]) -> None:
    """_group_of's boxes of the nodes (and of the managed switches' management ports)."""
    plan = f.plan
    for h in f.hosts:
        if h.role == "switch":  # managed switches' management ports (out-of-band network): one box
            group[h.name] = MGMT_PORTS
        elif h.role == "storage" and not detailed:
            group[h.name] = "storage nodes"
        elif (huge or huge_tree) and h.role == "compute":
            group[h.name] = "nodes"
        elif plan.topology == "rail-optimized" and h.role == "compute":
            group[h.name] = f"su{h.unit:02d} nodes"
        elif detailed:
            leaf = f.first_leaf(h.name)
            group[h.name] = f"{leaf} nodes"
        else:
            group[h.name] = f"pod{(h.unit - 1) // plan.units_per_pod + 1:02d} nodes"


def _rail_group_box(plan: Any, s: Any) -> str:
    """The drawing box of a switch of a fabric of spine-leaf groups (NVIDIA's GB200 SuperPOD
    drawing): a group's leaves, its spines, a core group."""
    if s.role == "core":
        return f"core group {s.plane + 1}"
    u, r = divmod(s.pod - 1, plan.rails)
    if u >= plan.units:
        return f"storage {PLURAL[s.role]}"
    return f"su{u + 1:02d} rail{r + 1} {PLURAL[s.role]}"


def _n(count: int, word: str, plural: str = "") -> str:
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _dot(ctx: Context) -> dict[str, Any]:
    f = ctx.fabric
    detailed = len(f.switches) <= DOT_DETAIL_LIMIT
    group = _group_of(ctx, detailed)
    members: dict[str, Counter] = defaultdict(Counter)
    rank_of: dict[str, str] = {}
    for s in f.switches:
        members[group[s.name]][s.role] += 1
        rank_of[group[s.name]] = s.role
    for h in f.hosts:
        members[group[h.name]]["node"] += 1
        rank_of[group[h.name]] = "node"
    edges: Counter[tuple[str, str]] = Counter()
    for lk in f.links:
        edges[(group[lk.a], group[lk.z])] += 1
    nodes = []
    for name in sorted(members):
        role = rank_of[name]
        count = sum(members[name].values())
        label = name if detailed and role != "node" else f"{name}\\n{_n(count, role, PLURAL[role])}"
        if name == MGMT_PORTS:
            label = f"{count} {MGMT_PORTS}"
        nodes.append({"id": name, "label": label, "role": role})
    ranks = {r: [n["id"] for n in nodes if n["role"] == r] for r in ("core", "spine", "leaf", "node")}
    return {
        "fabric": f.name, "cluster": ctx.cluster, "detailed": detailed,
        "title": f"{ctx.cluster} / {f.name}: {f.spec.kind} {f.plan.topology}, {_n(f.plan.tiers, 'tier')}, "
                 f"{_n(sum(1 for h in f.hosts if h.role != 'switch'), 'node')}, "
                 f"{_n(len(f.switches), 'switch', 'switches')}"
                 + (f"; network plane {f.plane + 1} of {f.planes} of {f.parent} (every node's port "
                    f"{f.plane + 1} of each NIC)" if f.planes > 1 else ""),
        "nodes": nodes, "ranks": {r: ids for r, ids in ranks.items() if ids},
        "edges": [{"a": a, "z": z, "count": n} for (a, z), n in sorted(edges.items())],
    }


def structure(ctx: Context) -> dict[str, Any]:
    f = ctx.fabric
    cabling = [[lk.a, lk.a_port, lk.z, lk.z_port, f"{lk.speed}G", lk.media, lk.tier] for lk in f.links]
    addresses = address_rows(ctx) if f.spec.kind != "infiniband" else None
    # the border uplinks (northsouth.border) after the fabric's own cables, in cabling.csv and the PTM
    # and Batfish files alike (every cable in each); the router's ports are named `uplink<k>`
    cabling += border_cabling(f)
    cabling += _oob_uplinks(ctx)
    return {"name": f.name, "cabling": cabling, "bom": bill_of_materials(f), "bom_later": later_materials(f),
            "dot": _dot(ctx), "addresses": addresses, "ibdm": _ibdm(f, cabling), "netdevs": _netdevs(f)}


def _oob_uplinks(ctx: Context) -> list[list[str]]:
    """A routed out-of-band network's uplinks (oob_design routed), in its own cabling.csv after its
    access ports: each access switch's two uplinks to the north-south pair's two leaves, at the access
    switch's uplink speed (the pair's ends at it too where oob_routed.uplink_speed is given, on cages
    broken out for them; else the pair's port runs the pair's speed)."""
    return [[a, ap, z, zp, f"{speed}G", OOB_UPLINK_MEDIA, OOB_UPLINK_TIER] for a, ap, z, zp, speed in oob_uplinks(ctx)]


def _netdevs(f: Fabric) -> dict[str, str]:
    """`node/rdma device` -> the port's Ethernet-mode netdev where it differs (intent/addresses.py
    `host_netdevs`, as addresses.csv names it): the PTM and Batfish files name node ports as the
    node's LLDP agent reports them. InfiniBand ports keep their RDMA device (ibnetdiscover reports
    GUIDs and port numbers)."""
    if f.spec.kind == "infiniband":
        return {}
    return {f"{host}/{rdma}": name for host, names in host_netdevs(f).items() for rdma, name in names.items()
            if name != rdma}


def _ibdm(f: Fabric, cabling: list[list[str]]) -> dict[str, Any] | None:
    """What the IBDM topology file needs beyond the cabling (targets/cabling_formats.py): the
    switch's system type (its part), ASIC device id, port count and port numbers. None for
    Ethernet, and where a name would not read as one IBDM token (said in docs/verify.md)."""
    if f.spec.kind != "infiniband":
        return None
    model = f.switch_model
    switches = {s.name for s in f.switches}
    names = {model.part.split("-")[0]} | {x for a, ap, z, zp, *_ in cabling for x in (a, z)}
    names |= {p for a, ap, z, zp, *_ in cabling for d, p in ((a, ap), (z, zp)) if d not in switches}
    if not all(cabling_formats.ibnl_name(n) for n in names):  # switch ports are written P<number>
        return None
    return {"switches": sorted(switches), "switch_type": model.part.split("-")[0],
            "device": f"MT{DEVICE_ID.get(model.key, 0xD2F2)}", "ports": model.radix(f.plan.speed),
            "numbers": model.port_numbers(f.plan.speed)}


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    name = data["name"]
    yield f"{name}/cabling.csv", csvout.dumps(CABLING_COLUMNS,
                                       data["cabling"])
    if data["addresses"] is not None:
        yield f"{name}/addresses.csv", csvout.dumps(ADDRESS_COLUMNS, data["addresses"])
    cols = ["category", "part", "description", "quantity", "notes"]
    yield f"{name}/bom.csv", csvout.dumps(cols, ([r[c] for c in cols] for r in data["bom"]))
    if data["bom_later"]:  # a plan's later purchases, apart from what is bought now
        yield f"{name}/bom-later.csv", csvout.dumps(cols, ([r[c] for c in cols] for r in data["bom_later"]))
    yield from cabling_formats.render(name, data["cabling"], data["ibdm"], data["netdevs"])
    dot = render_template("fabric/topology.dot.j2", **data["dot"]).encode()
    yield f"{name}/topology.dot", dot
    svg = _svg(dot)
    if svg is not None:
        yield f"{name}/topology.svg", svg


def _svg(dot: bytes) -> bytes | None:
    """topology.svg by Graphviz when it is installed (CI installs it); the version comment
    is dropped so the bytes depend on the layout only."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    run = subprocess.run([exe, "-Tsvg"], input=dot, capture_output=True, timeout=300)
    if run.returncode != 0:  # pragma: no cover - our DOT is generated; a failure is a bug to see
        raise RuntimeError(f"graphviz failed on topology.dot: {run.stderr.decode()[:500]}")
    return re.sub(rb"<!-- Generated by graphviz[^>]*-->\n", b"", run.stdout)


TARGET = Target("fabric", lambda ctx: True, structure, render, apart=True,  # kept: what the report reads
                kept=lambda data: {"name": data["name"], "bom": data["bom"], "bom_later": data["bom_later"]})
