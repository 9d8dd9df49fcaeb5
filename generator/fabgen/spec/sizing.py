"""How many switches of each tier, and how they interconnect: pure arithmetic.

Rules (NVIDIA DGX SuperPOD reference architectures; docs/decisions.md for where fabgen chooses):

* A leaf has `down` endpoint ports and `up` uplinks with down:up equal to the declared
  oversubscription, both whole ports, down + up <= radix.
  - rail-optimized: down = the scalable unit (nodes per SU); NIC i of every node of a
    unit goes to leaf i of that unit; a unit's leaves and uplinks are built in full.
  - fat-tree: down = the most ports that hold whole nodes at the ratio (a DGX's eight
    NICs stay on one leaf); nodes fill leaves in order.
* Two tiers while the leaves fit one spine layer (leaves <= radix, i.e. k^2/2 endpoints at
  1:1); three tiers above that, up to k^3/4 at 1:1.
* Balanced: each leaf reaches each spine of its pod with the same number of links, so
  the spine count divides the leaf's uplinks; likewise spines to the cores of their plane.
  The fewest spines that also fit the spine radix win. This is why three 32-node units
  (24 leaves x 32 uplinks) take 16 spines and not 12: 12 does not divide 32.
* Three tiers: leaves are grouped in pods of whole units; every pod has the same spines
  (spine j of every pod forms core plane j); spines are non-blocking (down = up);
  cores per plane divide a spine's uplinks. Among all pod sizes, the one with the fewest
  switches wins; ties go to the larger pod (more traffic stays below the cores). A
  partly populated last pod still gets all its spines and spine uplinks, like a partly
  populated unit gets all its leaves.
* A fat-tree whose endpoints all fit on one leaf is one switch (tiers = 1) unless
  `tiers` is pinned. `tiers: 1` pins one switch that gives every port to NICs (no ports
  kept for a spine layer): the most nodes one switch takes, at the price of re-cabling
  to grow.
* Storage nodes (node groups with role storage) attach to storage leaves of their own,
  after the compute leaves, built like a compute leaf (same endpoint ports and uplinks,
  so uplinks stay balanced for ftree). Their NICs are striped across the storage
  leaves (two at least when storage nodes have two ports or more), so a dual-ported
  storage node survives the loss of one leaf. A one-switch
  fabric takes storage NICs on the ports after the compute NICs when they fit.
  Storage leaves count like any leaf for spines, pods and cores.
* A plan (`planned_nodes`) sizes everything above for the planned node count; the nodes
  present fill it in order and only their units (and the pods holding them, with their
  spines) are built; three tiers build every planned core, a port kept on each for every
  planned pod, so a pod's spines come with its first leaf and move nothing (spec/layout.py).
  Every switch, port, address, ASN and GUID is a function of its place in the plan, so
  adding nodes up to the plan only adds (docs/growth.md). Storage leaves sit after the
  planned compute leaves.
* Name widths depend only on the radix, the rails and the tier count (`name_widths`),
  never on how many switches exist.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any


class SizingError(ValueError):
    """The requested fabric cannot be built; `field` names the inventory key to blame."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Plan:
    topology: str
    tiers: int
    radix: int
    speed: int
    nodes: int
    rails: int  # compute NICs per node
    endpoints: int
    ratio: Fraction
    unit_nodes: int  # rail-optimized: nodes per SU; fat-tree: nodes per leaf (0: nodes span leaves)
    units: int  # rail-optimized: SUs; fat-tree: leaves
    leaves_per_unit: int
    down: int  # leaf endpoint ports (designed)
    up: int  # leaf uplinks
    leaves: int
    pods: int  # 1 with two tiers
    units_per_pod: int
    spines_per_pod: int
    leaf_spine_width: int  # links from a leaf to each spine of its pod
    spine_down: int  # designed leaf-facing ports of a spine
    spine_up: int  # uplinks of a spine (three tiers)
    cores_per_plane: int
    spine_core_width: int  # links from a spine to each core of its plane
    storage: int = 0  # storage endpoints (NICs of storage nodes)
    storage_leaves: int = 0  # leaves dedicated to storage, after the compute leaves
    present_nodes: int = -1  # nodes present (-1: all planned nodes are present)
    present_units: int = -1  # units (fat-tree: leaves) they fill
    domain: int = 1  # nodes per NVLink domain (an NVL72 rack: 18); rail-optimized units hold whole ones
    # Leaves per rail of a unit that spans several leaves per rail (NVIDIA's GB200 SuperPOD: 8, a
    # leaf per rack): every rail of every unit is a spine-leaf group (a pod) with its own spines.
    # 0: the classic unit, one leaf per rail, whose pods hold whole units.
    group_leaves: int = 0
    # A northsouth fabric of NVLink racks sized by rack count (`_northsouth_racks`): the plan's one
    # unit's `leaves_per_unit` leaves take every node's two ports striped, node g's port r on leaf
    # (g + r) mod leaves (`stripe`), as NVIDIA's generator cables them.
    striped: bool = False
    # Links between the two leaves of a collapsed pair (one tier, no spines: a northsouth fabric
    # sized by racks at 1-2 racks, `_northsouth_racks`), leaf 1's port down + t to leaf 2's; 0: none.
    peer_links: int = 0
    # A plane switch pair (`pair`, `_plane_pair`): the plan's two leaves take a node's rails split,
    # rail r on leaf r mod 2 at port slot x rails/2 + r // 2 (`pair_port`), joined by `peer_links`.
    pair: bool = False
    # Port speeds per tier (`cabling.<tier>.speed`, docs/hardware.md "Port speeds"): `speed` is the
    # host ports', and every count above (down, up, widths, peer_links) is in ports at `speed`, "slots"
    # of its lanes. A switch-to-switch tier at a whole multiple of it (`factor`) runs one link on that
    # many slots: a leaf's uplink bandwidth stays `up` x `speed`, in up / factor links. 0: `speed`.
    ls_speed: int = 0  # leaf-spine links (a collapsed pair's peer links)
    sc_speed: int = 0  # spine-core links
    # Host-speed ports per cage where a tier runs at another speed: the other tier's ports start on a
    # cage of their own (`up_base`, `core_base`), so each cage is split one way. 0: speeds not mixed.
    cage_ports: int = 0

    # `nodes`, `units`, `leaves`, `pods` and everything sized from them are the plan's;
    # `present_*` are what the inventory's nodes fill of it.

    @property
    def compute_leaves(self) -> int:
        """Compute leaves of the plan (the storage leaves follow them)."""
        return self.leaves - self.storage_leaves

    @property
    def present_compute_leaves(self) -> int:
        return self.present_units * self.leaves_per_unit

    @property
    def planned(self) -> bool:
        """More nodes planned than present."""
        return self.present_nodes != self.nodes

    @property
    def spines(self) -> int:
        return self.pods * self.spines_per_pod if self.tiers >= 2 else 0

    @property
    def cores(self) -> int:
        return self.spines_per_pod * self.cores_per_plane if self.tiers == 3 else 0

    @property
    def leaves_per_pod(self) -> int:
        if self.group_leaves and self.tiers == 3:
            return self.group_leaves
        return self.units_per_pod * self.leaves_per_unit

    @property
    def rail_groups(self) -> bool:
        """Every rail of a unit is a spine-leaf group of its own (docs/hardware.md)."""
        return self.group_leaves > 0

    @property
    def ns_pair(self) -> bool:
        """A collapsed north-south pair of nodes not sized by racks (`tiers: 1`, `_northsouth_pair`)."""
        return bool(self.peer_links) and not self.pair and not self.striped

    @property
    def pair_servers(self) -> bool:
        """A collapsed north-south pair that takes support and storage servers on its own ports: the
        pair of nodes not sized by racks (`ns_pair`), or the pair sized by racks (`striped`, NVIDIA's
        csl-01/02) where `tiers: 1` gives it servers (`_northsouth_racks`; no storage leaves beside it)."""
        return self.ns_pair or (self.striped and bool(self.peer_links) and self.storage > 0)

    @property
    def server_base(self) -> int:
        """A collapsed pair's first server port (`pair_servers`): on the pair of nodes not sized by racks
        the first slot after its peer links' cages, at the node ports' speed (`up_end`); on the pair sized
        by racks the first slot after the tray ports of the two racks it holds (`NS_COLLAPSED_RACKS`, as
        `stripe` fills them), so a second rack takes its ports below them. Its servers take the next
        `servers` slots of both leaves."""
        if self.ns_pair:
            return self.up_end
        return 2 * -(-NS_COLLAPSED_RACKS * self.domain // self.leaves_per_unit)

    @property
    def server_end(self) -> int:
        """The slot after the last a collapsed pair's servers may take: the switch's last (the pair of
        nodes not sized by racks), or the pair sized by racks' peer links (`up_base`): the node ports'
        range no tray of its two racks takes."""
        return self.radix if self.ns_pair else self.up_base

    @property
    def servers(self) -> int:
        """Slots a collapsed pair's servers take on each leaf (`pair_servers`): one a bond (a server's two
        legs of a bond on the same slot of both leaves); 0 on every other plan."""
        return self.storage // 2 if self.pair_servers else 0

    @property
    def server_place(self) -> int:
        """The node place of a collapsed pair's first server (its tenant addresses and segments follow
        the nodes'): after the planned nodes, or on the pair sized by racks after the two racks' trays
        it holds at most, so a rack added never moves a server's addresses, planned or not."""
        return NS_COLLAPSED_RACKS * self.domain if self.striped and self.pair_servers else self.nodes

    @property
    def mixed(self) -> bool:
        """Some switch-to-switch tier runs at another speed than the host ports."""
        return self.cage_ports > 0

    def tier_speed(self, tier: str) -> int:
        """Gb/s of a tier's links: node-leaf, leaf-spine (and a collapsed pair's leaf-leaf), spine-core."""
        if tier == "node-leaf":
            return self.speed
        ls = self.ls_speed or self.speed
        return (self.sc_speed or ls) if tier == "spine-core" else ls

    def factor(self, tier: str) -> int:
        """Host-speed ports (slots) one link of `tier` takes."""
        return self.tier_speed(tier) // self.speed

    def _aligned(self, slots: int) -> int:
        return -(-slots // self.cage_ports) * self.cage_ports

    @property
    def up_base(self) -> int:
        """A leaf's first uplink (or peer link) slot: after its node ports, on a cage of its own where
        the uplinks run at another speed than the node ports."""
        return self._aligned(self.down) if self.mixed and self.factor("leaf-spine") != 1 else self.down

    @property
    def up_end(self) -> int:
        """The first slot after a leaf's uplink (or peer link) cages: the cages `cage_speeds` splits
        at the uplinks' speed end here; every slot from here on is at the node ports' speed."""
        return self._aligned(self.up_base + self.up) if self.mixed else self.up_base + self.up

    @property
    def core_base(self) -> int:
        """A spine's first core-facing slot: after its leaf-facing ports, on a cage of its own where
        the two tiers run at different speeds."""
        if self.mixed and self.tier_speed("spine-core") != self.tier_speed("leaf-spine"):
            return self._aligned(self.spine_down)
        return self.spine_down

    def cage_speeds(self, role: str, cages: int) -> tuple[int, ...]:
        """Every cage's port speed on a switch of `role`, from the plan alone (so growth never
        re-splits a cage): a leaf's node-port cages, then its uplink cages, then node-port speed;
        a spine's leaf-facing cages, then core-facing ones; a core's all at spine-core speed."""
        host, ls, sc = self.speed, self.tier_speed("leaf-spine"), self.tier_speed("spine-core")
        if not self.mixed:
            return (host,) * cages
        k = self.cage_ports
        if role == "leaf":
            first, last = self.up_base // k, self.up_end // k
            return tuple(ls if first <= c < last else host for c in range(cages))
        if role == "spine":
            first = self.core_base // k
            return tuple(ls if c < first or self.tiers < 3 else sc for c in range(cages))
        return (sc,) * cages

    def switch_place(self, role: str, index: int) -> int:
        """0-based place of a switch (1-based `index` within its role) in one planned plane:
        leaves, then spines, then cores. Loopbacks, management addresses, GUIDs and management
        ports on the out-of-band network follow it, so adding nodes moves none."""
        return {"leaf": 0, "spine": self.leaves, "core": self.leaves + self.spines}[role] + index - 1


def parse_ratio(value: float | int) -> Fraction:
    """1.5 -> 3/2, exactly as written (no binary float noise)."""
    return Fraction(repr(float(value))).limit_denominator(1000)


def _fmt_ratio(r: Fraction) -> str:
    return f"{r.numerator}" if r.denominator == 1 else f"{float(r):g}"


def leaf_split(radix: int, ratio: Fraction, align: int = 1) -> tuple[int, int] | None:
    """Most (down, up) with down:up == ratio, down a multiple of `align`, down + up <= radix."""
    p, q = ratio.numerator, ratio.denominator
    step = p * align // math.gcd(p, align)  # down must be a multiple of p and of align
    down = (radix * p // (p + q)) // step * step
    if down == 0:
        return None
    return down, down * q // p


def _smallest_divisor_at_least(n: int, low: int) -> int | None:
    for d in range(max(1, low), n + 1):
        if n % d == 0:
            return d
    return None


def _two_tier_spines(up: int, low: int, even: bool) -> int | None:
    """The spines of a two-tier fabric: the fewest that divide a leaf's `up` uplinks and hold them
    all (`low`); with `even`, the fewest even such count where one exists. NVIDIA's Spectrum-X
    designs deploy spines in pairs: ERA-00012 (GB300 NVL72, 2-4-5-800) Table 11 gives 4 spines a
    plane at 3-4 racks, where 3 would hold the uplinks, and every spine count of NVIDIA's
    net-configurator outputs (NVIDIA/enterprise-ras at 993eed6/2f46cb2) is even (2, 6, 8)."""
    if even:
        for d in range(max(2, low + low % 2), up + 1, 2):
            if up % d == 0:
                return d
    return _smallest_divisor_at_least(up, low)


def plan(*, nodes: int, planned_nodes: int | None = None, ls_speed: int = 0, sc_speed: int = 0, cage_ports: int = 0,
         **kw: Any) -> Plan:
    """Size one fabric for `planned_nodes` (default: the nodes present) and note what the
    `nodes` present fill of it. Raises SizingError naming the inventory key at fault. `ls_speed`,
    `sc_speed`, `cage_ports`: the tiers' speeds where they differ from the host ports' (`with_speeds`)."""
    if cage_ports:
        return _servers_fit(with_speeds(_plan(nodes=nodes, planned_nodes=planned_nodes, **kw), ls_speed, sc_speed,
                                        cage_ports))
    return _servers_fit(_plan(nodes=nodes, planned_nodes=planned_nodes, **kw))


def _servers_fit(p: Plan) -> Plan:
    """`p`, or a SizingError at node_groups where a collapsed pair's servers (`Plan.servers`) do not fit
    the ports after its peer links (the border and out-of-band uplinks, which take the highest of
    these, are checked where they are written)."""
    if p.servers and p.server_base + p.servers > p.server_end:
        where = "after its peer links" if p.ns_pair else \
            f"between its {NS_COLLAPSED_RACKS} racks' tray ports and its peer links"
        raise SizingError("node_groups", f"the collapsed pair (tiers: 1) takes its servers' bonds on the "
                          f"{p.server_end - p.server_base} ports at {p.speed}G {where}; these servers "
                          f"need {p.servers}: attach fewer, or use tiers: auto (storage leaf pairs of their own)")
    return p


def with_speeds(p: Plan, ls_speed: int, sc_speed: int, cage_ports: int) -> Plan:
    """`p` with its switch-to-switch tiers at their own speeds, each a whole multiple of the host
    ports' (the plan's counts are in host-speed ports: a 400G link on 200G slots takes two), or a
    SizingError at the tier's `speed` where the plan's links do not come in whole links of it or the
    uplink cages no longer fit beside the node ports' cages. A collapsed pair keeps NVIDIA's
    `NS_PEER_LINKS` links at their own speed."""
    out = replace(p, ls_speed=ls_speed, sc_speed=sc_speed, cage_ports=cage_ports)
    m, key = out.factor("leaf-spine"), "cabling.leaf_spine.speed"
    speed, ls = out.speed, out.tier_speed("leaf-spine")
    if out.peer_links and not out.pair and not out.striped:  # a collapsed pair not sized by racks
        # (`_northsouth_pair`): its 20 links at their speed are all its leaves' switch ports (`up`)
        out = replace(out, peer_links=NS_PEER_LINKS * m, up=NS_PEER_LINKS * m)
    elif out.peer_links:  # a switch pair's links carry its slots' bandwidth in whole links, the collapsed pair's 20
        links = -(-out.peer_links // m) * m if out.pair else NS_PEER_LINKS * m
        out = replace(out, peer_links=min(links, out.up // m * m))
    if (out.tiers >= 2 or out.peer_links) and (out.up % m or out.leaf_spine_width % m or not out.up // m):
        raise SizingError(key, f"each leaf has {out.up} x {speed}G of uplinks, {out.leaf_spine_width} x {speed}G to "
                          f"each spine: not whole {ls}G links; choose another leaf_spine speed or scalable_unit")
    if (out.tiers >= 2 or out.peer_links) and out.up_base + out.up > out.radix:
        raise SizingError(key, f"{out.down} node ports at {speed}G fill {out.up_base // cage_ports} cages; their "
                          f"{out.up // m} uplinks at {ls}G need {-(-out.up // cage_ports)} more, beyond the switch's "
                          f"{out.radix // cage_ports}")
    if out.tiers == 3:
        m2, key2, sc = out.factor("spine-core"), "cabling.spine_core.speed", out.tier_speed("spine-core")
        if out.spine_core_width % m2 or out.spine_up % m2:
            raise SizingError(key2, f"each spine has {out.spine_core_width} x {speed}G to each core: not whole "
                              f"{sc}G links; choose another spine_core speed")
        if out.spine_down % out.factor("leaf-spine") or out.core_base + out.spine_up > out.radix:
            raise SizingError(key2, f"a spine's {out.spine_down // m} leaf ports at {ls}G and its core ports at "
                              f"{sc}G do not fit its {out.radix // cage_ports} cages")
    return out


def _plan(*, nodes: int, planned_nodes: int | None = None, **kw: Any) -> Plan:
    if planned_nodes is not None and planned_nodes < nodes:
        raise SizingError("planned_nodes", f"{nodes} nodes are attached, more than the {planned_nodes} this "
                          f"fabric is planned for: raise planned_nodes (the spine and core tiers are sized "
                          "for it) or attach fewer nodes")
    try:
        sized = _sized(nodes=planned_nodes or nodes, **kw)
    except SizingError as exc:
        if planned_nodes is None or exc.field != "node_groups":
            raise
        raise SizingError("planned_nodes", f"planned for {planned_nodes} nodes: {exc.message}") from None
    return replace(sized, present_nodes=nodes, present_units=units_for(sized, nodes))


def _sized(*, pair: bool = False, **kw: Any) -> Plan:
    """`_size`, or a plane's switch pair (`_plane_pair`) where `pair` asks for one."""
    if pair:
        return _plane_pair(**{k: kw[k] for k in ("radix", "speed", "nodes", "rails", "ratio")},
                           model=kw.get("model", "switch"))
    return _size(**kw)


def units_for(p: Plan, nodes: int) -> int:
    """Units (fat-tree: leaves) that `nodes` nodes fill, in order, in plan `p`."""
    if p.unit_nodes:
        return math.ceil(nodes / p.unit_nodes)
    return math.ceil(nodes * p.rails / p.down)


def _size(
    *, topology: str, radix: int, speed: int, nodes: int, rails: int, ratio: Fraction,
    scalable_unit: int | None = None, tiers: str | int = "auto", model: str = "switch",
    storage: int = 0, domain: int = 1, storage_spread: int = 1, storage_pairs: bool = False,
    even_spines: bool = False,
) -> Plan:
    k = radix
    endpoints = nodes * rails
    rtxt = _fmt_ratio(ratio)
    p, q = ratio.numerator, ratio.denominator
    if p + q > k:
        raise SizingError("oversubscription", f"{rtxt}:1 cannot be built with whole ports on a {k}-port {model}: "
                          f"it needs at least {p} downlinks and {q} uplinks per leaf")

    if (ns := _northsouth(topology=topology, northsouth=storage_pairs, radix=k, speed=speed, nodes=nodes,
                          rails=rails, ratio=ratio, model=model, storage=storage, domain=domain,
                          scalable_unit=scalable_unit, tiers=tiers, storage_spread=storage_spread,
                          even_spines=even_spines)) is not None:
        return ns
    if topology == "rail-optimized":
        su = _scalable_unit(scalable_unit, radix=k, ratio=ratio, domain=domain, model=model)
        if scalable_unit is not None and su + su * q // p > k:
            return _rail_groups(su=su, topology=topology, radix=k, speed=speed, nodes=nodes, rails=rails,
                                ratio=ratio, tiers=tiers, model=model, storage=storage, domain=domain,
                                storage_spread=storage_spread, storage_pairs=storage_pairs,
                                even_spines=even_spines)
        down, up = su, su * q // p
        unit_nodes, leaves_per_unit = su, rails
        units = math.ceil(nodes / su)
    else:
        split = leaf_split(k, ratio, rails) if rails <= k else None
        if split is None:
            split = leaf_split(k, ratio)
            assert split is not None
            down, up = split
            unit_nodes = 0  # a node's NICs span leaves
            units = math.ceil(endpoints / down)
        else:
            down, up = split
            unit_nodes = down // rails
            units = math.ceil(nodes / unit_nodes)
        leaves_per_unit = 1
    if tiers == 1:
        return _single_switch(topology=topology, radix=k, speed=speed, nodes=nodes, rails=rails, ratio=ratio,
                              model=model, storage=storage)
    compute_leaves = units * leaves_per_unit
    one_switch = (tiers == "auto" and topology == "fat-tree" and compute_leaves == 1
                  and endpoints + storage <= down)
    storage_leaves = 0 if one_switch else _storage_leaves(storage, down, storage_spread, storage_pairs)
    leaves = compute_leaves + storage_leaves

    common: dict[str, Any] = dict(
        topology=topology, radix=k, speed=speed, nodes=nodes, rails=rails, endpoints=endpoints,
        ratio=ratio, unit_nodes=unit_nodes, units=units, leaves_per_unit=leaves_per_unit,
        down=down, up=up, leaves=leaves, storage=storage, storage_leaves=storage_leaves,
        domain=domain if topology == "rail-optimized" else 1)

    max_units_2 = k // leaves_per_unit
    max_units_3 = k * ((k // 2) // leaves_per_unit)
    unit_word = "scalable units" if topology == "rail-optimized" else "leaves"
    per_unit = f"{unit_nodes * rails}" if unit_nodes else f"{down}"
    with_storage = f" and {storage_leaves} storage leaves" if storage_leaves else ""

    if one_switch:
        return Plan(**common, tiers=1, pods=1, units_per_pod=1, spines_per_pod=0, leaf_spine_width=0,
                    spine_down=0, spine_up=0, cores_per_plane=0, spine_core_width=0)

    if tiers == 2 or (tiers == "auto" and leaves <= k):
        if leaves > k:
            raise SizingError("tiers", f"two tiers of {k}-port switches hold at most {max_units_2} {unit_word} "
                              f"({max_units_2 * int(per_unit)} endpoints at {rtxt}:1); this fabric needs {units}"
                              f"{with_storage} ({endpoints + storage} endpoints): use tiers: 3 or auto")
        spines = _two_tier_spines(up, math.ceil(leaves * up / k), even_spines)
        assert spines is not None  # leaves <= k guarantees spines = up fits
        width = up // spines
        return Plan(**common, tiers=2, pods=1, units_per_pod=units, spines_per_pod=spines,
                    leaf_spine_width=width, spine_down=leaves * width, spine_up=0,
                    cores_per_plane=0, spine_core_width=0)

    too_big = SizingError("node_groups", f"{endpoints + storage} endpoints need {units} {unit_word}{with_storage}; "
                          f"three tiers of {k}-port switches hold at most {max_units_3} "
                          f"({max_units_3 * int(per_unit)} endpoints at {rtxt}:1)")
    if units > max_units_3:
        raise too_big
    best = _best_pods(radix=k, units=units, leaves_per_unit=leaves_per_unit, leaves=leaves, up=up)
    if best is None:  # storage leaves can tip a fabric that fits over the edge
        raise too_big
    return Plan(**common, tiers=3, **best)


def _northsouth(*, topology: str, northsouth: bool, radix: int, speed: int, nodes: int, rails: int,
                ratio: Fraction, model: str, storage: int, domain: int, scalable_unit: int | None,
                tiers: str | int, storage_spread: int, even_spines: bool) -> Plan | None:
    """A rail-optimized northsouth fabric's own shapes: NVLink racks sized by racks (`_northsouth_racks`),
    or the collapsed pair that `tiers: 1` asks for (`_northsouth_pair`); None: the rail-optimized rules."""
    if topology != "rail-optimized" or not northsouth:
        return None
    if domain > 1 and scalable_unit is None and rails == 2 and tiers in ("auto", 2, 1):
        return _northsouth_racks(radix=radix, speed=speed, nodes=nodes, ratio=ratio, model=model, storage=storage,
                                 domain=domain, storage_spread=storage_spread, even_spines=even_spines,
                                 collapse=tiers != 2, pinned=tiers == 1)
    if tiers == 1:
        return _northsouth_pair(radix=radix, speed=speed, nodes=nodes, rails=rails, ratio=ratio, model=model,
                                storage=storage, scalable_unit=scalable_unit, domain=domain)
    return None


def _scalable_unit(scalable_unit: int | None, *, radix: int, ratio: Fraction, domain: int, model: str) -> int:
    """Nodes per scalable unit of a rail-optimized fabric: the declared one, refused unless it
    holds whole NVLink domains and whole uplinks, or else the most whole domains a leaf takes."""
    k, p, q = radix, ratio.numerator, ratio.denominator
    rtxt = _fmt_ratio(ratio)
    if scalable_unit is None:
        whole = leaf_split(k, ratio, domain)  # a unit of whole NVLink domains (racks)
        if whole is None:
            raise SizingError("switch_model", f"a scalable unit holds whole NVLink domains of {domain} nodes, "
                              f"so a leaf needs {domain} node ports per rail and their uplinks at {rtxt}:1; "
                              f"a {k}-port {model} has {leaf_split(k, ratio)[0]} node ports")  # type: ignore[index]
        return whole[0]
    su = scalable_unit
    if su % domain:
        lo, hi = su // domain * domain, (su // domain + 1) * domain
        raise SizingError("scalable_unit", f"a scalable unit holds whole NVLink domains (racks) of {domain} "
                          f"nodes, so it never splits one: use a multiple of {domain} (e.g. {lo or hi} "
                          f"or {hi})")
    if (su * q) % p:
        lo, hi = su // p * p, (su // p + 1) * p
        raise SizingError("scalable_unit", f"at {rtxt}:1 a leaf with {su} node ports would need "
                          f"{Fraction(su * q, p)} uplinks; use a multiple of {p} (e.g. {lo or hi} or {hi})")
    return su


def _best_pods(*, radix: int, units: int, leaves_per_unit: int, leaves: int, up: int) -> dict[str, Any] | None:
    """Three tiers: the pod size (whole units) with the fewest switches, ties to the larger pod;
    its Plan fields, or None when no pod size fits."""
    k = radix
    best: tuple[tuple[int, int], dict[str, int]] | None = None
    for m in range(1, units + 1):
        pod_leaves = m * leaves_per_unit
        if pod_leaves > k // 2:
            break
        pods = math.ceil(leaves / pod_leaves)
        if pods > k:
            continue
        for sp in range(1, up + 1):
            if up % sp:
                continue
            spine_down = pod_leaves * (up // sp)
            if spine_down > k // 2:
                continue
            cores = _smallest_divisor_at_least(spine_down, math.ceil(pods * spine_down / k))
            if cores is None:
                continue
            total = pods * sp + sp * cores
            key = (total, pods)
            if best is None or key < best[0]:
                best = (key, dict(pods=pods, units_per_pod=m, spines_per_pod=sp, leaf_spine_width=up // sp,
                                  spine_down=spine_down, spine_up=spine_down, cores_per_plane=cores,
                                  spine_core_width=spine_down // cores))
    return None if best is None else best[1]


# NVIDIA's converged north-south leaves for GB300 NVL72 racks: ERA-00012 (NVL72 Enterprise RA,
# 2-4-5-800) Tables 7 and 11 give 2, 2, 5, 6, 9, 10, 11, 11 switches for 1-8 racks, leaves 2/4/7 and
# spines -/2/4 at 2/4/8 racks; NVIDIA's own generator (NVIDIA/enterprise-ras net-configurator,
# output/2-4-5-800/largescale at 2f46cb2) cables 8 racks' 144 trays, two ports each, over 7 leaves
# cl-01..07 (41-42 tray ports a leaf, node n on cl n mod 7 and n + 1 mod 7) under 4 spines cs-01..04,
# each leaf with 64 x 400G to the spines (swp18-swp49 split 2x, 16 to each spine). Leaves: 7 per 8
# racks, rounded up, at least 2 (one a rack at 2-7 racks, 7 at 8); no rule of whole tray ports a
# leaf gives 7 at both 7 and 8 racks (docs/decisions.md). Spines: fabgen's two-tier rule
# (`_two_tier_spines`) with a leaf's uplinks at the fabric's ratio, 64 at 1:1 on 128 x 400G: 2
# spines hold 4 leaves' uplinks, 4 hold 8, in pairs on Spectrum-X.
NS_LEAVES_PER_RACKS = (7, 8)
# NVIDIA's collapsed pair (1-2 racks, Table 11's 2 switches, no spines): csl-01 and csl-02 of
# net-configurator/output/2-4-5-800/default/configs (NVIDIA/enterprise-ras at 993eed6, the folder of
# 2f46cb2) join on swp25-swp34 broken out 2 x 400G, 20 links, each a routed unnumbered iBGP session
# (peer group internal_isl, remote-as internal, ipv4-unicast and l2vpn-evpn, BFD profile underlay
# 300 ms x 3), no bond; the VRFs cross it in EVPN type-5 routes (docs/decisions.md).
NS_PEER_LINKS = 20
NS_COLLAPSED_RACKS = 2


def _northsouth_racks(*, radix: int, speed: int, nodes: int, ratio: Fraction, model: str, storage: int,
                      domain: int, storage_spread: int, even_spines: bool, collapse: bool = True,
                      pinned: bool = False) -> Plan:
    """A northsouth fabric of NVLink racks (two ports a tray) without a declared scalable_unit, as
    NVIDIA sizes its converged north-south fabric (`NS_LEAVES_PER_RACKS`): one unit of `leaves`
    leaves, at least two, enough for the ports at the ratio, every node's ports striped over them
    (`stripe`); storage servers on leaf pairs of their own after them; two tiers.

    1-2 racks (planned) without storage leaves are NVIDIA's one tier: the collapsed pair, two leaves
    joined by `NS_PEER_LINKS` links and no spines (`peer_links`); growing past two racks adds the
    spines and moves the peer links (topology/growth.py warns: plan for it with planned_nodes).
    `collapse` False (tiers: 2 pinned): the pair keeps two spines instead; `pinned` (tiers: 1): the
    collapsed pair or a SizingError, never spines (growing past two racks is refused, not warned), its
    support and storage servers on its own ports (`Plan.pair_servers`) instead of storage leaves."""
    k = radix
    split = leaf_split(k, ratio)
    if split is None:
        raise SizingError("oversubscription", f"{_fmt_ratio(ratio)}:1 leaves no node port on a {k}-port {model}")
    down, up = split
    racks = math.ceil(nodes / domain)
    per, of = NS_LEAVES_PER_RACKS
    leaves = max(2, math.ceil(per * racks / of))
    while 2 * math.ceil(nodes / leaves) > down:  # a leaf takes at most 2 x ceil(nodes / leaves) tray ports
        leaves += 1
    # `tiers: 1` (pinned) keeps servers on the collapsed pair's own ports (`Plan.pair_servers`), as NVIDIA's
    # csl-01/02 take its 12 support servers (csl-01-config.sh at 993eed6: swp19-swp24, after the second
    # rack's tray cages swp10-swp18); else they take leaf pairs of their own
    on_pair = pinned and racks <= NS_COLLAPSED_RACKS and leaves == 2
    storage_leaves = 0 if on_pair else _storage_leaves(storage, down, storage_spread, True)
    total = leaves + storage_leaves
    if total > k:
        raise SizingError("node_groups", f"{nodes} nodes in {racks} racks need {leaves} leaves"
                          f"{f' and {storage_leaves} storage leaves' if storage_leaves else ''}; two tiers of "
                          f"{k}-port switches hold at most {k}: split the north-south fabric")
    if pinned and not (racks <= NS_COLLAPSED_RACKS and total == 2):
        why = f"{nodes} nodes in {racks} racks need {leaves} leaves"
        raise SizingError("tiers", f"tiers: 1 on a northsouth fabric is the collapsed pair (two leaves, no spines), "
                          f"which holds {NS_COLLAPSED_RACKS} racks; {why}: use tiers: auto")
    if collapse and racks <= NS_COLLAPSED_RACKS and total == 2:  # NVIDIA's collapsed pair: one tier, a peer link
        return Plan(topology="rail-optimized", tiers=1, radix=k, speed=speed, nodes=nodes, rails=2,
                    endpoints=2 * nodes, ratio=ratio, unit_nodes=nodes, units=1, leaves_per_unit=leaves, down=down,
                    up=up, leaves=total, pods=1, units_per_pod=1, spines_per_pod=0, leaf_spine_width=0,
                    spine_down=0, spine_up=0, cores_per_plane=0, spine_core_width=0, storage=storage,
                    storage_leaves=0, domain=domain, striped=True, peer_links=min(NS_PEER_LINKS, up))
    spines = _two_tier_spines(up, math.ceil(total * up / k), even_spines)
    assert spines is not None  # total <= k
    return Plan(topology="rail-optimized", tiers=2, radix=k, speed=speed, nodes=nodes, rails=2,
                endpoints=2 * nodes, ratio=ratio, unit_nodes=nodes, units=1, leaves_per_unit=leaves, down=down,
                up=up, leaves=total, pods=1, units_per_pod=1, spines_per_pod=spines, leaf_spine_width=up // spines,
                spine_down=total * (up // spines), spine_up=0, cores_per_plane=0, spine_core_width=0,
                storage=storage, storage_leaves=storage_leaves, domain=domain, striped=True)


# The collapsed pair for nodes that are not NVLink racks (`tiers: 1` on a northsouth fabric): NVIDIA's
# 2-8-9-400 at its default size (net-configurator/output/2-8-9-400/default/configs/core-01-config.sh,
# NVIDIA/enterprise-ras at 2f46cb2) puts twelve HGX nodes' two 200G north-south ports, one on each,
# on one SN5600 pair, core-01/02, with one ASN, iBGP over unnumbered links between the two (peer group
# internal-isl, remote-as internal, IPv4 and EVPN, BFD profile default) and no spine. Its 48 x 400G
# links (swp28-swp51 broken 2x) are sized for the GPU traffic the converged pair also carries (each
# core's 48 GPU ports, four of each node's eight, whose rails meet across them); fabgen's north-south
# fabric carries none of it. A pair carrying north-south traffic alone is NVIDIA's csl-01/02
# (2-4-5-800 default at 993eed6), whose 20 x 400G (`NS_PEER_LINKS`) this pair takes too. A node's port r
# sits on leaf r + 1 at the node's place (as core-01 and core-02 both take su-01-node-01 on swp1s0),
# the pair holds as many planned nodes as a leaf has node ports at the ratio (`leaf_split`, less the
# peer links' ports where the ratio leaves fewer), so adding nodes up to that only adds cables; beyond
# it is refused (a spine tier would move the peer links). The leaf's `up` is its peer links' ports.


def _northsouth_pair(*, radix: int, speed: int, nodes: int, rails: int, ratio: Fraction, model: str,
                     storage: int, scalable_unit: int | None, domain: int) -> Plan:
    """`tiers: 1` on a northsouth fabric of nodes that are not sized by racks: the collapsed pair, two
    leaves joined by `NS_PEER_LINKS` peer links, no spines, node port r on leaf r + 1; its support and
    storage servers (`storage`: their ports) on the ports after the peer links (`Plan.server_base`), as
    NVIDIA's 2-8-9-400 core pair takes its support and storage servers on the cages after its ISL
    links (NVIDIA/enterprise-ras net-configurator/output/2-8-9-400/default/configs/core-01-config.sh at
    2f46cb2fca8f4d9b432f9de62957e54aed8f64d9: ISL swp28-swp51, support swp52-swp53, storage swp57)."""
    k = radix
    if domain > 1:
        raise SizingError("scalable_unit", "tiers: 1 on NVLink racks is the collapsed pair sized by racks: "
                          "leave scalable_unit out")
    if scalable_unit is not None:
        raise SizingError("scalable_unit", "tiers: 1 on a northsouth fabric is the collapsed pair, one unit as "
                          "large as a leaf's node ports: leave scalable_unit out (planned_nodes sizes it)")
    if rails != 2:
        raise SizingError("tiers", f"tiers: 1 on a northsouth fabric is the collapsed pair, one port of each node "
                          f"on either leaf; these nodes have {rails} north-south ports: give them two, or use "
                          "tiers: auto")
    split = leaf_split(k, ratio)
    if split is None:
        raise SizingError("oversubscription", f"{_fmt_ratio(ratio)}:1 leaves no node port on a {k}-port {model}")
    down = min(split[0], k - NS_PEER_LINKS)  # a leaf's node ports at the ratio, beside its peer links
    if nodes > down:
        raise SizingError("node_groups", f"the collapsed pair (tiers: 1) of {k}-port {model} holds {down} nodes at "
                          f"{_fmt_ratio(ratio)}:1, one port of each on either leaf; {nodes} need a spine tier: use "
                          "tiers: auto")
    return Plan(topology="rail-optimized", tiers=1, radix=k, speed=speed, nodes=nodes, rails=2, endpoints=2 * nodes,
                ratio=ratio, unit_nodes=down, units=1, leaves_per_unit=2, down=down, up=NS_PEER_LINKS, leaves=2,
                pods=1, units_per_pod=1, spines_per_pod=0, leaf_spine_width=0, spine_down=0, spine_up=0,
                cores_per_plane=0, spine_core_width=0, peer_links=NS_PEER_LINKS, storage=storage)


# NVIDIA's plane switch pair (`pair`): 2-8-9-800 and 2-8-9-400-SP at their default size
# (NVIDIA/enterprise-ras net-configurator/output/2-8-9-800/default, at 2f46cb2 and 993eed6) give each
# plane two SN5600, gsl-plane<p>-01 and -02, and no spine: 8 nodes' odd rails (1, 3, 5, 7) on -01 and
# even rails on -02 (topology/2-8-9-800-topology.json at 2f46cb2: a node's eth3, eth7, eth11, eth15 on
# gsl-plane1-01, eth5, eth9, eth13, eth17 on gsl-plane1-02; gsl-plane2-01-config.sh at 993eed6: rail 1
# on swp1s0, swp3s0, ..., rail 3 on swp1s1, rail 5 on swp2s0, rail 7 on swp2s1), a node's four ports on
# a leaf in rail order from swp1s0 (node n's from port 4(n - 1), swp1-16 broken 2 x 400G); the two
# joined by 32 x 400G (swp33-48 broken 2x at 993eed6, swp49-64 at 2f46cb2), each a routed unnumbered
# iBGP session (peer group internal_isl, remote-as internal, one ASN for the pair), beside one
# loopback-to-loopback iBGP session for EVPN (peer group overlay, multihop-ttl 2, BFD 1000 ms). fabgen:
# as many peer links as a leaf has node ports at the ratio (32 at 1:1 for 8 nodes, NVIDIA's count),
# right after the node ports' range (993eed6's swp33), the pair holding at most one leaf's node ports.
PAIR_LEAVES = 2


def _plane_pair(*, radix: int, speed: int, nodes: int, rails: int, ratio: Fraction, model: str) -> Plan:
    """`pair`: one plane's rails split over two leaves joined by peer links (`PAIR_LEAVES`): a leaf
    keeps half its ports for the peer links at 1:1 (`leaf_split`), so the pair holds the nodes whose
    rails / 2 ports fill a leaf's node ports; the peer links are the node ports of the planned nodes
    at the ratio, so adding nodes up to the plan only adds links."""
    k = radix
    if rails % PAIR_LEAVES:
        raise SizingError("pair", f"a switch pair splits a node's rails in two; these nodes have {rails} "
                          "compute NICs a plane: leave pair out")
    half = rails // PAIR_LEAVES
    split = leaf_split(k, ratio, half)
    if split is None:
        raise SizingError("oversubscription", f"{_fmt_ratio(ratio)}:1 leaves no node port on a {k}-port {model}")
    down, up = split
    most = down // half
    if nodes > most:
        raise SizingError("pair", f"a switch pair of {k}-port {model} holds {most} nodes of {rails} rails at "
                          f"{_fmt_ratio(ratio)}:1 ({down} node ports a leaf, {up} kept for the peer links); "
                          f"{nodes} need spines: leave pair out")
    peer = min(up, math.ceil(nodes * half * ratio.denominator / ratio.numerator))
    return Plan(topology="rail-optimized", tiers=1, radix=k, speed=speed, nodes=nodes, rails=rails,
                endpoints=nodes * rails, ratio=ratio, unit_nodes=most, units=1, leaves_per_unit=PAIR_LEAVES,
                down=down, up=up, leaves=PAIR_LEAVES, pods=1, units_per_pod=1, spines_per_pod=0,
                leaf_spine_width=0, spine_down=0, spine_up=0, cores_per_plane=0, spine_core_width=0,
                peer_links=peer, pair=True)


def pair_port(p: Plan, slot: int, r: int) -> tuple[int, int]:
    """A pair's (0-based leaf, leaf port) of rail r of the node in `slot`: rail r on leaf r mod 2, the
    node's ports on it in rail order (`_plane_pair`)."""
    half = p.rails // PAIR_LEAVES
    return r % PAIR_LEAVES, slot * half + r // PAIR_LEAVES


def stripe(p: Plan, g: int, r: int) -> tuple[int, int]:
    """A striped plan's (0-based leaf, leaf port) of node g's port r: leaf (g + r) mod L, as NVIDIA's
    generator cables a tray's two north-south ports (node n on cl n mod 7 and n + 1 mod 7 at 8 racks),
    the port the node's place among the nodes on that leaf, so nodes added later only add ports."""
    n = p.leaves_per_unit
    leaf = (g + r) % n
    mine = (leaf, (leaf - 1) % n)  # the residues of the nodes on this leaf (port 0, port 1)
    return leaf, 2 * (g // n) + sum(1 for x in range(g % n) if x in mine)


def _storage_leaves(storage: int, down: int, spread: int, pairs: bool = False) -> int:
    """Leaves for `storage` storage NICs, at least two for storage nodes with two or more ports: a
    node's ports alternate between them, so it stays reachable when one leaf is down. `pairs` (a
    northsouth fabric, two ports a node): an even number, so each node's two ports land on one leaf
    pair, on the same port of both (the NICs are striped over the leaves in order)."""
    if not storage:
        return 0
    n = max(math.ceil(storage / down), min(2, spread))
    return n + n % 2 if pairs else n


def _rail_groups(*, su: int, topology: str, radix: int, speed: int, nodes: int, rails: int, ratio: Fraction,
                 tiers: str | int, model: str, storage: int, domain: int, storage_spread: int,
                 storage_pairs: bool = False, even_spines: bool = False) -> Plan:
    """A scalable unit larger than one leaf per rail, as NVIDIA builds the GB200 SuperPOD
    (RA-11338-001, "Compute Fabric": an SU of 8 racks; beyond one SU each SU holds 4 spine-leaf
    groups, one per rail, each of 8 leaves, one per rack, and 6 spines, attached to 6 core groups,
    up to 16 SUs; one SU is rail-aligned leaves under one spine layer).

    Rules: a leaf takes the most whole NVLink domains at the ratio that divide the unit (at least
    half its node ports, or the unit is refused as a likely typo). Three
    tiers (two units or more, or pinned): every rail of every unit is a pod (a spine-leaf group) of
    `g` leaves whose spines are the fewest that divide a leaf's uplinks with at most half their
    ports down, so a group is cabled alike at every size; spine j of every group goes to core
    group j, whose cores are the fewest that divide a spine's uplinks and hold every group's.
    One unit (two tiers): its leaves under one spine layer, sized as `_size` sizes two tiers."""
    k, p, q = radix, ratio.numerator, ratio.denominator
    rtxt = _fmt_ratio(ratio)
    split = leaf_split(k, ratio, domain)
    most = split[0] if split else 0
    down = next((d for d in range(most, 0, -1) if d % domain == 0 and su % d == 0 and (d * q) % p == 0), 0)
    if down == 0 and most == 0:  # no leaf holds one whole NVLink domain (refused as without scalable_unit)
        raise SizingError("switch_model", f"a {model} leaf at {rtxt}:1 takes fewer node ports than one NVLink "
                          f"domain of {domain} nodes: choose a switch with more ports (a domain stays on one leaf)")
    if 2 * down < most or down == 0:  # leaves less than half used: a typo more likely than a design
        raise SizingError("scalable_unit", f"{su} nodes per unit are more than one leaf takes ({most} ports down at "
                          f"{rtxt}:1 on a {model}), and no whole number of leaves per rail, each at least half used, "
                          f"holds them"
                          f"{f' in whole NVLink domains of {domain}' if domain > 1 else ''}: use a multiple of "
                          f"{most or domain}, or at most {most} for one leaf per rail")
    up = down * q // p
    g = su // down
    units = math.ceil(nodes / su)
    storage_leaves = _storage_leaves(storage, down, storage_spread, storage_pairs)
    leaves = units * rails * g + storage_leaves
    common: dict[str, Any] = dict(
        topology=topology, radix=k, speed=speed, nodes=nodes, rails=rails, endpoints=nodes * rails,
        ratio=ratio, unit_nodes=su, units=units, leaves_per_unit=rails * g, down=down, up=up,
        leaves=leaves, storage=storage, storage_leaves=storage_leaves, domain=domain, group_leaves=g)
    if tiers == 1:
        raise SizingError("tiers", "tiers: 1 is one switch; a unit of several leaves per rail has two tiers or three")
    if tiers == 2 or (tiers == "auto" and units == 1):
        if leaves > k:
            raise SizingError("tiers", f"two tiers of {k}-port switches hold at most {k} leaves; this fabric needs "
                              f"{leaves}: use tiers: 3 or auto")
        spines = _two_tier_spines(up, math.ceil(leaves * up / k), even_spines)
        assert spines is not None  # leaves <= k
        return Plan(**common, tiers=2, pods=1, units_per_pod=units, spines_per_pod=spines,
                    leaf_spine_width=up // spines, spine_down=leaves * (up // spines), spine_up=0,
                    cores_per_plane=0, spine_core_width=0)
    spines = _smallest_divisor_at_least(up, math.ceil(g * up / (k // 2)))
    pods = math.ceil(leaves / g)
    if spines is None or g > k // 2:
        raise SizingError("scalable_unit", f"a spine-leaf group of {g} leaves ({su} nodes per unit) does not fit "
                          f"spines of {k} ports with half of them kept for the cores: use a smaller scalable_unit")
    spine_down = g * (up // spines)
    cores = _smallest_divisor_at_least(spine_down, math.ceil(pods * spine_down / k))
    if cores is None or pods > k:
        raise SizingError("node_groups", f"{nodes} nodes need {pods} spine-leaf groups; core groups of {k}-port "
                          f"switches join at most {k} ({k // rails} units of {su} nodes at {rtxt}:1)")
    return Plan(**common, tiers=3, pods=pods, units_per_pod=1, spines_per_pod=spines, leaf_spine_width=up // spines,
                spine_down=spine_down, spine_up=spine_down, cores_per_plane=cores, spine_core_width=spine_down // cores)


def _single_switch(*, topology: str, radix: int, speed: int, nodes: int, rails: int, ratio: Fraction,
                   model: str, storage: int) -> Plan:
    """`tiers: 1`: one switch whose every port may take a NIC (no uplinks reserved). This is
    the classic small cluster (eight DGX on one 64-port switch); it cannot grow without
    moving cables, which is why `auto` never chooses it when the endpoints need the ports
    a spine layer would use."""
    endpoints = nodes * rails
    if topology != "fat-tree":
        raise SizingError("tiers", "tiers: 1 is one switch, which has no rails to spread over: use topology: "
                          "fat-tree, or tiers: auto for a rail-optimized fabric")
    if ratio != 1:
        raise SizingError("oversubscription", "one switch has no uplinks to oversubscribe: leave "
                          "oversubscription at 1 with tiers: 1")
    down = radix // rails * rails if rails <= radix else radix
    if endpoints + storage > down:
        raise SizingError("tiers", f"one {radix}-port {model} takes at most {down} NICs"
                          f"{' of whole nodes' if down != radix else ''}; this fabric has {endpoints + storage} "
                          "(use tiers: auto or 2)")
    return Plan(topology=topology, tiers=1, radix=radix, speed=speed, nodes=nodes, rails=rails,
                endpoints=endpoints, ratio=ratio, unit_nodes=down // rails if rails <= radix else 0, units=1,
                leaves_per_unit=1, down=down, up=0, leaves=1, storage=storage, pods=1, units_per_pod=1,
                spines_per_pod=0, leaf_spine_width=0, spine_down=0, spine_up=0, cores_per_plane=0,
                spine_core_width=0)


@dataclass(frozen=True)
class Widths:
    """Zero-padding of each numbered part of a switch name."""

    unit: int
    rail: int
    leaf: int
    spine: int
    pod: int
    core: int


def _digits(count: int) -> int:
    return max(2, len(str(count)))


def name_widths(p: Plan) -> Widths:
    """Widths for the largest fabric this radix builds at this tier count, so no count of
    switches present (or planned) ever changes a name. Two tiers (and one switch, which
    grows into two): at most `radix` leaves (one spine port each) and `up` spines (they
    divide a leaf's uplinks). Three tiers: at most `radix` pods of radix/2 leaves, `up`
    spines per pod, and `up` planes of radix/2 cores."""
    k, lpu = p.radix, p.leaves_per_unit
    if p.pair:  # two leaves, never more (`_plane_pair`)
        return Widths(unit=2, rail=1, leaf=2, spine=2, pod=2, core=2)
    if p.rail_groups:  # at most k groups (a core port each); a rail's leaves and a group's spines numbered in it
        return Widths(unit=_digits(k // p.rails), rail=len(str(p.rails)), leaf=len(str(p.group_leaves)),
                      spine=len(str(p.up)), pod=_digits(k), core=_digits(p.up * k))
    if p.tiers <= 2:
        units, leaves, pods, cores = k // lpu, k, 1, 0
    else:
        units, leaves, pods, cores = k * ((k // 2) // lpu), k * (k // 2), k, p.up * (k // 2)
    return Widths(unit=_digits(units), rail=len(str(lpu)), leaf=_digits(leaves), spine=_digits(p.up),
                  pod=_digits(pods), core=_digits(cores))
