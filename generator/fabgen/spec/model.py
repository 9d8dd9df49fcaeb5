"""The built fabric: its switches, hosts and links in order, and the networkx graph of them.

The builder keeps the objects in lists sorted by natural keys (later stages need a
deterministic order and fast per-device lookups; nothing downstream iterates a set) and each
device's ports (`Fabric.ports`). The networkx graph (`Fabric.graph`) is drawn from those on
first use, for analysis from Python; no stage draws it, and the builder keeps no nodes or
edges of its own: at 131,072 GPUs of four planes drawing the graph was half of the build and
then most of the structural check's time, and the nodes and edges kept for it (a dict each)
most of a gigabyte of the main process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from fabgen.spec.catalog import NodeModel, SwitchModel
from fabgen.spec.schema import Fabric as FabricSpec
from fabgen.spec.sizing import Plan

if TYPE_CHECKING:
    import networkx as nx

TIERS = ("node-leaf", "leaf-spine", "spine-core")
ROLES = ("leaf", "spine", "core")


class Link(NamedTuple):
    """One cable. `a` is the lower-tier end (the NIC for node-leaf links).

    A named tuple, not a frozen dataclass: as immutable, made three times faster (0.21 against
    0.65 us; a frozen dataclass sets each field through object.__setattr__), and the build of
    131,072 GPUs of four planes makes 1.6 million of them."""

    tier: str
    a: str
    a_port: str
    z: str
    z_port: str
    speed: int
    media: str
    ordinal: int = -1  # place in the planned fabric (per kind: host-facing or switch-to-switch); addresses follow it


@dataclass(frozen=True, slots=True)
class Switch:
    name: str
    role: str  # leaf | spine | core
    index: int  # 1-based within its role
    unit: int = 0  # rail-optimized: scalable unit (1-based); fat-tree leaves: 0
    rail: int = -1  # rail-optimized leaves: rail (0-based)
    pod: int = 0  # leaves and spines: pod (1-based)
    plane: int = -1  # three tiers: spines and cores: core plane (0-based)


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    group: str
    model: NodeModel
    index: int  # 1-based across the fabric
    unit: int  # 1-based scalable unit (rail-optimized) or first leaf (fat-tree)
    slot: int  # 0-based slot in the unit
    role: str = "compute"  # compute | storage (storage nodes sit on storage leaves)
    rack: str = ""  # the NVLink domain (an NVL72 rack, `<group>-rack<NNNN>`); "" when the node is its own


@dataclass
class Fabric:
    spec: FabricSpec
    plan: Plan
    switch_model: SwitchModel
    switches: list[Switch]
    hosts: list[Host]
    links: list[Link]
    ports: dict[str, dict[str, int]] = field(default_factory=dict)  # device -> port -> link index
    warnings: list[str] = field(default_factory=list)
    plane: int = 0  # network plane (0-based) of a multi-plane fabric; its spec carries the plane's name
    planes: int = 1
    parent: str = ""  # the inventory fabric's name (a plane's spec is named `<parent>-plane<p>`)
    oob: Any = None  # an out-of-band network's layout (topology/oob.py Layout): its blocks and places

    @cached_property
    def graph(self) -> nx.MultiGraph:
        """The networkx graph of the fabric, drawn on first use from its switches, nodes (with a
        node per NIC port, attached to its node) and links (keyed by their index): for analysis
        from Python; no stage reads it."""
        import networkx as nx  # the builder and the checks draw the graph; validation never does

        g = nx.MultiGraph(name=self.name)
        key = self.switch_model.key
        g.add_nodes_from((s.name, {"kind": "switch", "role": s.role, "model": key, "unit": s.unit, "rail": s.rail,
                                   "pod": s.pod, "plane": s.plane}) for s in self.switches)
        for h in self.hosts:
            g.add_node(h.name, kind="host", group=h.group, model=h.model.key, role=h.role)
            for r, nic in enumerate(h.model.nics):
                nic_id = f"{h.name}/{nic.rdma}"
                g.add_node(nic_id, kind="nic", host=h.name, rail=-1 if h.role == "storage" else r, rdma=nic.rdma,
                           netdev=nic.netdev)
                g.add_edge(h.name, nic_id, key="attach", tier="attach")
        g.add_edges_from((lk.a, lk.z, i, {"tier": lk.tier, "link": lk}) for i, lk in enumerate(self.links))
        return g

    @property
    def name(self) -> str:
        return self.spec.name

    def port_names(self, role: str) -> tuple[str, ...]:
        """Every port of a switch of `role`, in order: the model's names at the fabric's speed, or
        cage by cage at each cage's speed where the tiers' speeds differ (`Plan.cage_speeds`)."""
        m, plan = self.switch_model, self.plan
        if not plan.mixed:
            return m.port_names(plan.speed)
        return m.ports_by_cage(plan.cage_speeds(role, m.cages))

    def cage_speeds(self, role: str) -> tuple[int, ...]:
        """Each cage's port speed on a switch of `role` (`Plan.cage_speeds`)."""
        return self.plan.cage_speeds(role, self.switch_model.cages)

    @property
    def inventory_name(self) -> str:
        return self.parent or self.spec.name

    def switches_per_plane(self) -> int:
        return self.plan.leaves + self.plan.spines + self.plan.cores

    def ordinal(self, s: Switch) -> int:
        """0-based place of a switch in its planned plane: leaves, then spines, then cores.
        Loopbacks, management addresses and GUIDs follow it, each plane in its own part of the
        pool (addressing.py), so adding nodes moves none."""
        return self.plan.switch_place(s.role, s.index)

    def by_role(self, role: str) -> list[Switch]:
        return [s for s in self.switches if s.role == role]

    def first_leaf(self, host: str) -> str:
        """The leaf of a host's first NIC (a fat-tree node's leaf, or its rail-1 leaf)."""
        return self.links[next(iter(self.ports[host].values()))].z

    def links_of(self, device: str) -> list[Link]:
        """Links of one device in port order, without walking the whole graph."""
        return [self.links[i] for i in self.ports.get(device, {}).values()]


def follows_compute(spec: FabricSpec, plan: Plan, servers: int,
                    real_guids: int = 0) -> tuple[dict[str, int], dict[str, int]]:
    """The storage servers' identifiers a fabric without `planned_nodes` numbers after its compute
    nodes (docs/growth.md), as what -> how many: those each added compute node moves, and those a
    new compute leaf moves (leaf subnets follow the leaf's place, storage leaves after the compute
    ones). With a plan they follow the planned nodes, and nothing moves. InfiniBand: only the
    synthetic GUIDs move; `real_guids` of the storage servers' ports come from the guid_map."""
    if not servers or spec.planned_nodes is not None or spec.role == "oob":
        return {}, {}
    if spec.kind == "infiniband":
        synthetic = max(plan.storage - real_guids, 0)
        return ({"synthetic GUIDs": synthetic} if synthetic else {}), {}
    if spec.role == "northsouth":  # the pair sized by racks numbers them after its two racks (`server_place`)
        return ({}, {}) if plan.striped and plan.pair_servers else ({"bond addresses": 2 * servers}, {})
    eth = spec.ethernet
    if eth is not None and eth.host_addressing == "leaf-subnet":
        return {}, {"port addresses": plan.storage}
    if eth is not None and eth.host_addressing == "evpn":  # 2 + the port's place in the plane's subnet
        return {"port addresses": plan.storage}, {}
    per_node = {"port /31s": plan.storage}
    if eth is not None and eth.host_routing == "bgp":
        per_node |= {"service addresses": servers, "ASNs": servers}
    return per_node, {}
