"""The out-of-band network: one tier of access switches, every access port in one VLAN.

An `oob` fabric (docs/cluster.md) takes the BMC (role `oob`) ports of its node groups and the
management ports of the switches of the fabrics it manages. Its access switches are not
interconnected: each bonds its first two uplinks to the site's management network, which
routes the management VLAN's subnet.

Everything is placed by where it stands in its own fabric's plan, never by what another
fabric holds (docs/growth.md), in *blocks* of access switches named after what they serve:

* a node's BMC goes to the block of its *home* fabric (its compute fabric; a node on none, its
  storage, then its in-band fabric; a node on no other fabric, the out-of-band network itself),
  at the node's planned place there: `<oob>-<home>-access<NNNN>`, `per_switch` nodes each
  (whole NVLink racks for NVL72 trays). Growth of the home fabric within its plan only adds;
  a storage server's place follows its fabric's planned nodes, as on every fabric;
* a managed switch's management port goes to the block of its own fabric, at its planned
  place there (planes in order): `<oob>-<fabric>-mgmt<NNNN>`, every access port used.

So a change of one fabric (its platform, hence its switch count; its nodes within its plan)
never moves another's cables. Addresses (addressing.allocate_oob): the BMCs take the prefix's
host addresses from the bottom, each node block a range the size of its plan; the access
switches theirs from the top, block by block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from fabgen.inventory.catalog import Nic, NodeModel, SwitchModel
from fabgen.inventory.schema import Fabric as FabricSpec
from fabgen.topology.build import Builder
from fabgen.topology.model import Fabric, Host, Switch
from fabgen.topology.sizing import Plan

SWITCH_GROUP = "switch-management"  # the group of the managed switches' management ports (a reserved name)
# A switch's management port by platform: EOS Management1, Cumulus and SONiC eth0, Quantum (NVOS/UFM
# managed InfiniBand switches) mgmt0.
MGMT_PORT = {"eos": "Management1", "sonic": "eth0", "nvue": "eth0", "ufm": "mgmt0", "opensm": "mgmt0"}
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

    @property
    def switches(self) -> int:
        return math.ceil(self.planned / self.per_switch) if self.planned else 0

    @property
    def present_switches(self) -> int:
        return math.ceil(self.present / self.per_switch) if self.present else 0

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
                endpoints=planned_nodes * ports_per_node + sum(b.planned for b in layout.blocks
                                                               if b.kind == SWITCH_BLOCK),
                ratio=Fraction(1), unit_nodes=per_switch, units=planned, leaves_per_unit=1, down=down, up=0,
                leaves=planned, pods=1, units_per_pod=planned, spines_per_pod=0, leaf_spine_width=0, spine_down=0,
                spine_up=0, cores_per_plane=0, spine_core_width=0, storage=0, present_nodes=len(layout.nodes),
                present_units=present)


def access_names(spec: FabricSpec, layout: Layout) -> list[Switch]:
    """The present access switches, block by block."""
    return [Switch(name, "leaf", i + 1, pod=1) for i, (_, _, name) in enumerate(layout.access_switches(spec.name))]


def build_oob(spec: FabricSpec, plan: Plan, model: SwitchModel, layout: Layout) -> Fabric:
    """Cable every BMC and managed switch management port at its place in its block."""
    switches = access_names(spec, layout)
    first = {}  # block -> index of its first present access switch in `switches`
    for i, (b, k, _) in enumerate(layout.access_switches(spec.name)):
        first.setdefault(b, i - k)
    b_ = Builder(spec, plan, model)
    for s in switches:
        b_.add_switch(s)

    def cable(host: str, nic: Nic, block: int, port: int, ordinal: int) -> None:
        k, slot = divmod(port, plan.down)
        b_.link("node-leaf", host, nic.rdma, switches[first[block] + k].name, slot, ordinal, media=MEDIA)

    hosts: list[Host] = []
    for b, m in layout.switches:
        sm = mgmt_model(m.platform)
        k, slot = divmod(m.place, plan.down)
        hosts.append(Host(m.name, SWITCH_GROUP, sm, len(hosts) + 1, first[b] + k + 1, slot, role="switch"))
        b_.add_host(m.name, SWITCH_GROUP, sm)
        cable(m.name, sm.nics[0], b, m.place, -1)  # no oob address: its own fabric's prefix gives one
    for p in layout.nodes:
        blk = layout.blocks[p.block]
        k, slot = divmod(p.place, blk.per_switch)
        hosts.append(Host(p.host, p.group, p.model, len(hosts) + 1, first[p.block] + k + 1, slot, role=p.role))
        b_.add_host(p.host, p.group, p.model)
        base = layout.address_base(p.block) + p.place * blk.ports_per_place
        for r, nic in enumerate(p.model.nics):
            cable(p.host, nic, p.block, k * plan.down + slot * blk.ports_per_place + r, base + r)
    f = Fabric(spec, plan, model, b_.g, switches, hosts, b_.links, b_.ports)
    f.oob = layout
    return f
