"""The out-of-band network: one tier of access switches, every access port in one VLAN.

An `oob` fabric (docs/cluster.md) takes the BMC (role `oob`) ports of its node groups and the
management ports of the switches of the fabrics it manages. Its access switches are not
interconnected: each bonds its first two uplinks to the site's management network, which
routes the management VLAN's subnet. Layout, chosen so that growth only adds (docs/growth.md):

* the managed switches' management ports first, each at its *planned* place (a fabric's
  planned switches one after another, planes in order), so a spine that appears later has
  its port waiting;
* then the nodes, from the next access switch on, `per_switch` nodes per access switch (a
  rack or unit of nodes: whole NVLink racks for NVL72 trays), in node order;
* access switches are named `<fabric>-access<NNNN>` (four digits whatever their number, so growth
  renames none); their role is `leaf` (the tier they are).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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


def mgmt_model(platform: str) -> NodeModel:
    """A managed switch, as an endpoint of the out-of-band network: its one management port."""
    port = MGMT_PORT[platform]
    return NodeModel(f"{platform}-switch", "", "", f"{platform} switch management port", 0, "", "",
                     (Nic(port, port, port, "RJ45", 1, "oob"),))


@dataclass(frozen=True)
class Managed:
    """A managed switch: its name, platform and planned place among all managed switches."""

    name: str
    platform: str
    place: int


def access_plan(nodes: int, planned_nodes: int | None, storage_nodes: int, ports_per_node: int,
                managed_places: int, model: SwitchModel, speed: int, per_switch: int) -> Plan:
    """The access layer as a Plan (one tier, no uplinks inside the fabric), so the report, cabling
    and growth code read it like any fabric. `leaves` are the planned access switches; the
    storage nodes' places follow the planned compute nodes', as on every fabric."""
    down = model.radix(speed)
    planned = planned_nodes or nodes
    switch_part = math.ceil(managed_places / down)
    node_part = math.ceil((planned + storage_nodes) / per_switch) if planned + storage_nodes else 0
    filled = planned + storage_nodes if storage_nodes else nodes
    present = switch_part + (math.ceil(filled / per_switch) if filled else 0)
    return Plan(topology="fat-tree", tiers=1, radix=down, speed=speed, nodes=planned, rails=ports_per_node,
                endpoints=planned * ports_per_node + managed_places, ratio=Fraction(1), unit_nodes=per_switch,
                units=switch_part + node_part, leaves_per_unit=1, down=down, up=0,
                leaves=switch_part + node_part, pods=1, units_per_pod=switch_part + node_part, spines_per_pod=0,
                leaf_spine_width=0, spine_down=0, spine_up=0, cores_per_plane=0, spine_core_width=0,
                storage=storage_nodes * ports_per_node, present_nodes=nodes, present_units=present)


ACCESS_WIDTH = 4  # digits of an access switch's number: fixed, so adding switches renames none


def access_names(spec: FabricSpec, plan: Plan) -> list[Switch]:
    """The present access switches (the switch part, then the node part filled so far)."""
    return [Switch(f"{spec.name}-access{i + 1:0{ACCESS_WIDTH}d}", "leaf", i + 1, pod=1)
            for i in range(plan.present_units)]


def build_oob(spec: FabricSpec, plan: Plan, model: SwitchModel, members: list[tuple[str, str, NodeModel]],
              storage: list[tuple[str, str, NodeModel]], managed: list[Managed]) -> Fabric:
    """members, storage: (hostname, group, node model as the oob role sees it) in inventory order,
    compute-role and storage-role groups; managed: the switches whose management ports take
    access ports."""
    switches = access_names(spec, plan)
    b = Builder(spec, plan, model)
    for s in switches:
        b.add_switch(s)

    def cable(host: str, nic: Nic, place: int) -> None:
        leaf, port = divmod(place, plan.down)
        b.link("node-leaf", host, nic.rdma, switches[leaf].name, port, place, media=MEDIA)

    hosts: list[Host] = []
    for m in managed:
        sm = mgmt_model(m.platform)
        hosts.append(Host(m.name, SWITCH_GROUP, sm, len(hosts) + 1, m.place // plan.down + 1, m.place % plan.down,
                          role="switch"))
        b.add_host(m.name, SWITCH_GROUP, sm)
        cable(m.name, sm.nics[0], m.place)
    base = switch_part(plan) * plan.down
    places = [(k, m, "compute") for k, m in enumerate(members)]
    places += [(plan.nodes + j, m, "storage") for j, m in enumerate(storage)]  # after the planned nodes
    for k, (hostname, group, node_model), role in places:
        unit, slot = divmod(k, plan.unit_nodes)
        hosts.append(Host(hostname, group, node_model, len(hosts) + 1, switch_part(plan) + unit + 1, slot,
                          role=role))
        b.add_host(hostname, group, node_model)
        for r, nic in enumerate(node_model.nics):
            cable(hostname, nic, base + unit * plan.down + slot * plan.rails + r)
    return Fabric(spec, plan, model, b.g, switches, hosts, b.links, b.ports)


def switch_part(plan: Plan) -> int:
    """Access switches that take the managed switches' ports (before the nodes')."""
    nodes = plan.nodes + plan.storage // plan.rails
    node_part = math.ceil(nodes / plan.unit_nodes) if nodes else 0
    return plan.units - node_part
