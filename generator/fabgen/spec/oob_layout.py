"""The out-of-band network's layout: its blocks, places and access-switch names, computed by
validate from the inventory alone and read by the builder (topology/oob.py). Plain data and
arithmetic, no graph: the inventory layer may read it (tests/test_architecture.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from fabgen.spec.catalog import Nic, NodeModel, SwitchModel
from fabgen.spec.model import Switch
from fabgen.spec.platforms import PLATFORMS
from fabgen.spec.schema import Fabric as FabricSpec
from fabgen.spec.sizing import Plan

SWITCH_GROUP = "switch-management"  # the group of the managed switches' management ports (a reserved name)
# A switch's management port by platform: EOS Management1, Cumulus and SONiC eth0, Quantum (NVOS/UFM
# managed InfiniBand switches) mgmt0.
MGMT_PORT = {name: p.mgmt_port for name, p in PLATFORMS.items()}
MEDIA = "utp"  # RJ45 copper
ACCESS_WIDTH = 4  # digits of an access switch's number within its block: fixed, so growth renames none
NODE_BLOCK, SWITCH_BLOCK = "access", "mgmt"


def mgmt_model(platform: str) -> NodeModel:
    """A managed switch, as an endpoint of the out-of-band network: its one management port."""
    port = MGMT_PORT[platform]
    return NodeModel(f"{platform}-switch", "", "", f"{platform} switch management port", 0, "", "",
                     (Nic(port, port, port, "RJ45", 1, "oob"),))


@dataclass(frozen=True)
class Managed:
    """A managed switch: its name, platform and planned place among its own fabric's switches."""

    name: str
    platform: str
    place: int


@dataclass(frozen=True)
class Block:
    """Access switches serving one fabric's nodes (kind access) or its switches (kind mgmt)."""

    owner: str  # the home fabric (node blocks) or the managed fabric (mgmt blocks)
    kind: str  # NODE_BLOCK or SWITCH_BLOCK
    planned: int  # places of the owner's plan (nodes, or switches of every plane)
    per_switch: int  # places per access switch
    ports_per_place: int  # access ports per place (a node's BMC ports; 1 for a switch)
    present: int  # places up to the last present one, plus one (0: none present yet)
    # access switches a group of `per_switch` places spans: 1, or more where a whole NVLink rack's
    # out-of-band ports outnumber one switch's (a GB300 rack: 18 trays x 3 ports on two SN2201,
    # ERA-00012); each of the rack's port kinds then takes a run of `per_switch` ports (`port_of`)
    span: int = 1

    @property
    def switches(self) -> int:
        return math.ceil(self.planned / self.per_switch) * self.span if self.planned else 0

    @property
    def present_switches(self) -> int:
        return math.ceil(self.present / self.per_switch) * self.span if self.present else 0

    def port_of(self, place: int, r: int, down: int) -> tuple[int, int]:
        """(access switch within the block, 0-based port on it) of port r of the node at `place`.
        One switch a group: the node's ports side by side (place by place). A group over several
        switches: port kind r of every node in a run, the runs in order over the group's switches,
        so a rack's BMCs take swp1-18 of its first SN2201 as in NVIDIA's generator's topology
        (2-4-5-800 at 66f13d5: tray n's management port on rack-oob-su-01-01 swpn)."""
        g, slot = divmod(place, self.per_switch)
        if self.span == 1:
            flat = g * down + slot * self.ports_per_place + r
            return divmod(flat, down)
        runs = down // self.per_switch
        sw, run = divmod(r, runs)
        return g * self.span + sw, run * self.per_switch + slot

    def name(self, oob: str, k: int) -> str:
        """The k-th (0-based) access switch of the block."""
        return f"{oob}-{self.owner}-{self.kind}{k + 1:0{ACCESS_WIDTH}d}"


@dataclass(frozen=True)
class Placed:
    """A node on the out-of-band network, at its place in its home fabric's block."""

    host: str
    group: str
    model: NodeModel
    block: int
    place: int
    role: str = "compute"


@dataclass
class Layout:
    """Where everything of one out-of-band network goes (validate computes it, build reads it)."""

    blocks: list[Block] = field(default_factory=list)
    nodes: list[Placed] = field(default_factory=list)
    switches: list[tuple[int, Managed]] = field(default_factory=list)  # (block, the managed switch)

    def access_switches(self, oob: str) -> list[tuple[int, int, str]]:
        """(block, k, name) of every present access switch, block by block."""
        return [(b, k, blk.name(oob, k)) for b, blk in enumerate(self.blocks) for k in range(blk.present_switches)]

    def address_base(self, block: int) -> int:
        """0-based offset of a node block's first BMC address among the BMC addresses."""
        return sum(b.planned * b.ports_per_place for b in self.blocks[:block] if b.kind == NODE_BLOCK)

    def switch_base(self, block: int) -> int:
        """0-based offset of a block's first access switch among the access switches' addresses."""
        return sum(b.switches for b in self.blocks[:block])

    @property
    def bmc_places(self) -> int:
        return sum(b.planned * b.ports_per_place for b in self.blocks if b.kind == NODE_BLOCK)

    @property
    def planned_switches(self) -> int:
        return sum(b.switches for b in self.blocks)


def access_plan(layout: Layout, model: SwitchModel, speed: int, ports_per_node: int, per_switch: int) -> Plan:
    """The access layer as a Plan (one tier, no uplinks), so the report, cabling and validate read it
    like any fabric: `leaves` the planned access switches, `nodes` the planned node places."""
    down = model.radix(speed)
    planned_nodes = sum(b.planned for b in layout.blocks if b.kind == NODE_BLOCK)
    planned = layout.planned_switches
    present = sum(b.present_switches for b in layout.blocks)
    return Plan(topology="fat-tree", tiers=1, radix=down, speed=speed, nodes=planned_nodes, rails=ports_per_node,
                endpoints=sum(b.planned * b.ports_per_place for b in layout.blocks),
                ratio=Fraction(1), unit_nodes=per_switch, units=planned, leaves_per_unit=1, down=down, up=0,
                leaves=planned, pods=1, units_per_pod=planned, spines_per_pod=0, leaf_spine_width=0, spine_down=0,
                spine_up=0, cores_per_plane=0, spine_core_width=0, storage=0, present_nodes=len(layout.nodes),
                present_units=present)


def access_names(spec: FabricSpec, layout: Layout) -> list[Switch]:
    """The present access switches, block by block."""
    return [Switch(name, "leaf", i + 1, pod=1) for i, (_, _, name) in enumerate(layout.access_switches(spec.name))]
