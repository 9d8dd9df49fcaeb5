"""Build the networkx topology of each fabric from its sizing plan.

Port assignment is deterministic and follows cabling practice:
* leaf: endpoint ports first (rail-optimized: the node's slot in its unit; fat-tree:
  nodes in order, a node's NICs in rail order), then uplinks grouped by spine;
* spine: leaf-facing ports grouped by leaf (in pod order), then uplinks grouped by core;
* core: ports grouped by pod.
Port names are the switch model's real names at the fabric's link speed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

import networkx as nx

from fabgen.inventory.catalog import NodeModel, SwitchModel
from fabgen.inventory.schema import Fabric as FabricSpec
from fabgen.topology.model import Fabric, Host, Link, Switch
from fabgen.topology.sizing import Plan, name_widths

MEDIA = {"node-leaf": "mmf", "leaf-spine": "mmf", "spine-core": "mmf"}
PLANE_SUFFIX = "-plane{p}"  # a network plane's fabric name: the inventory's name and this (docs/planes.md)


def plane_names(spec: FabricSpec) -> list[str]:
    """The fabric names an inventory fabric renders as: its planes', or its own with one plane."""
    if spec.planes == 1:
        return [spec.name]
    return [spec.name + PLANE_SUFFIX.format(p=p + 1) for p in range(spec.planes)]


def build_planes(spec: FabricSpec, plan: Plan, model: SwitchModel, members: list[tuple[str, str, NodeModel]],
                 storage: list[tuple[str, str, NodeModel]] = ()) -> list[Fabric]:  # type: ignore[assignment]
    """Every network plane of an inventory fabric, built alike: plane p is the spec renamed
    `<name>-plane<p>` whose nodes have, for NICs, their ports on that plane. One plane: the
    fabric itself."""
    if spec.planes == 1:
        return [build_fabric(spec, plan, model, members, storage)]
    split: dict[int, tuple[NodeModel, ...]] = {}
    out = []
    for p, name in enumerate(plane_names(spec)):
        nodes = []
        for host, group, m in members:
            if id(m) not in split:  # a node group's model may carry its own netdevs: one split per model object
                split[id(m)] = tuple(replace(m, nics=nics) for nics in m.plane_nics(spec.planes))
            nodes.append((host, group, split[id(m)][p]))
        f = build_fabric(spec.model_copy(update={"name": name}), plan, model, nodes, storage)
        f.plane, f.planes, f.parent = p, spec.planes, spec.name
        out.append(f)
    return out


def _pod(plan: Plan, position: int) -> int:
    """1-based pod of the leaf at 0-based planned `position` (compute leaves, then storage leaves)."""
    return position // plan.leaves_per_pod + 1 if plan.tiers == 3 else 1


def switch_names(spec: FabricSpec, plan: Plan) -> list[Switch]:
    """Every switch present, leaves (compute, then storage) then spines then cores, in natural
    order. A switch's index is its place in the plan (storage leaves follow the planned compute
    leaves); names are padded to `name_widths`, so neither depends on how many exist."""
    f, w = spec.name, name_widths(plan)
    out: list[Switch] = []
    if plan.rail_groups:  # a unit's rails are spine-leaf groups: leaf j of a group serves the unit's j-th leaf of nodes
        i = 0
        for u in range(plan.present_units):
            for r in range(plan.rails):
                for j in range(plan.group_leaves):
                    out.append(Switch(f"{f}-su{u + 1:0{w.unit}d}-rail{r + 1:0{w.rail}d}-leaf{j + 1:0{w.leaf}d}",
                                      "leaf", i + 1, unit=u + 1, rail=r, pod=_pod(plan, i)))
                    i += 1
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
    for j in range(plan.storage_leaves):
        i = plan.compute_leaves + j
        width = w.pod if plan.rail_groups else w.leaf
        out.append(Switch(f"{f}-storage-leaf{j + 1:0{width}d}", "leaf", i + 1, pod=_pod(plan, i)))
    if plan.rail_groups and plan.tiers == 3:  # every planned group's spines, named after its unit and rail
        for p in range(1, plan.pods + 1):
            u, r = divmod(p - 1, plan.rails)
            head = f"{f}-su{u + 1:0{w.unit}d}-rail{r + 1:0{w.rail}d}" if p <= plan.units * plan.rails \
                else f"{f}-storage{p - plan.units * plan.rails:0{w.pod}d}"
            for j in range(plan.spines_per_pod):
                out.append(Switch(f"{head}-spine{j + 1:0{w.spine}d}", "spine", (p - 1) * plan.spines_per_pod + j + 1,
                                  pod=p, plane=j))
    elif plan.tiers == 2:
        out += [Switch(f"{f}-spine{j + 1:0{w.spine}d}", "spine", j + 1, pod=1) for j in range(plan.spines)]
    elif plan.tiers == 3:
        for p in range(1, plan.pods + 1):  # every planned pod's spines: the spine-core layer is the plan's
            for j in range(plan.spines_per_pod):
                out.append(Switch(f"{f}-pod{p:0{w.pod}d}-spine{j + 1:0{w.spine}d}", "spine",
                                  (p - 1) * plan.spines_per_pod + j + 1, pod=p, plane=j))
    if plan.tiers == 3:
        for j in range(plan.spines_per_pod):
            for c in range(plan.cores_per_plane):
                n = j * plan.cores_per_plane + c + 1
                out.append(Switch(f"{f}-core{n:0{w.core}d}", "core", n, plane=j))
    return out


class Builder:
    """The graph, links and port map of one fabric as it is built: every builder (leaf-spine here,
    the out-of-band access layer in topology/oob.py) cables through `link`, which refuses a port
    used twice."""

    def __init__(self, spec: FabricSpec, plan: Plan, model: SwitchModel):
        self.spec, self.plan, self.model = spec, plan, model
        self.names = model.port_names(plan.speed)
        self.g = nx.MultiGraph(name=spec.name)
        self.links: list[Link] = []
        self.ports: dict[str, dict[str, int]] = {}

    def add_switch(self, s: Switch) -> None:
        self.g.add_node(s.name, kind="switch", role=s.role, model=self.model.key, unit=s.unit, rail=s.rail,
                        pod=s.pod, plane=s.plane)
        self.ports[s.name] = {}

    def add_host(self, hostname: str, group: str, model: NodeModel, rails: bool = True, **attrs) -> None:
        """A node and its NIC ports (rail r, or -1 where NICs are not rails) in the graph."""
        self.g.add_node(hostname, kind="host", group=group, model=model.key, **attrs)
        for r, nic in enumerate(model.nics):
            nic_id = f"{hostname}/{nic.rdma}"
            self.g.add_node(nic_id, kind="nic", host=hostname, rail=r if rails else -1, rdma=nic.rdma,
                            netdev=nic.netdev)
            self.g.add_edge(hostname, nic_id, key="attach", tier="attach")

    def link(self, tier: str, a: str, a_port: str, z: str, z_port_index: int, ordinal: int,
             a_port_index: int | None = None, media: str | None = None) -> None:
        z_port = self.names[z_port_index]
        if a_port_index is not None:
            a_port = self.names[a_port_index]
        idx = len(self.links)
        lk = Link(tier, a, a_port, z, z_port, self.plan.speed, media or MEDIA[tier], ordinal)
        self.links.append(lk)
        for dev, port in ((a, a_port), (z, z_port)):
            used = self.ports.setdefault(dev, {})
            if port in used:  # a builder bug, never bad input
                raise AssertionError(f"{dev} port {port} assigned twice")
            used[port] = idx
        self.g.add_edge(a, z, key=idx, tier=tier, link=lk)


def build_fabric(spec: FabricSpec, plan: Plan, model: SwitchModel,
                 members: list[tuple[str, str, NodeModel]],
                 storage: list[tuple[str, str, NodeModel]] = ()) -> Fabric:  # type: ignore[assignment]
    """members: (hostname, group, node model) for every attached compute node, in inventory order;
    storage: the same for storage nodes."""
    b = Builder(spec, plan, model)
    switches = switch_names(spec, plan)
    for s in switches:
        b.add_switch(s)
    leaves = [s for s in switches if s.role == "leaf"]

    hosts: list[Host] = []
    in_group: dict[str, int] = {}
    for g, (hostname, group, node_model) in enumerate(members):
        k = in_group[group] = in_group.get(group, -1) + 1
        if plan.topology == "rail-optimized":
            unit, slot = divmod(g, plan.unit_nodes)
        elif plan.unit_nodes:
            unit, slot = divmod(g, plan.unit_nodes)
        else:
            unit, slot = divmod(g * plan.rails, plan.down)
        hosts.append(Host(hostname, group, node_model, g + 1, unit + 1, slot, rack=rack_name(group, node_model, k)))
        b.add_host(hostname, group, node_model)
        for r, nic in enumerate(node_model.nics):
            if plan.rail_groups:  # the slot's leaf in the rail's group, its port on that leaf
                j, port = divmod(slot, plan.down)
                leaf = leaves[unit * plan.leaves_per_unit + r * plan.group_leaves + j]
            elif plan.topology == "rail-optimized":
                leaf, port = leaves[unit * plan.leaves_per_unit + r], slot
            elif plan.unit_nodes:
                leaf, port = leaves[unit], slot * plan.rails + r
            else:
                leaf, port = divmod(g * plan.rails + r, plan.down)
                leaf = leaves[leaf]
            b.link("node-leaf", hostname, nic.rdma, leaf.name, port, g * plan.rails + r)

    # Storage NICs: striped over the storage leaves (NIC p of the flattened list to leaf
    # p mod L), or on the ports after the compute NICs of a one-switch fabric.
    first = plan.endpoints if plan.storage_leaves == 0 else 0
    spread = max(1, plan.storage_leaves)
    stor_leaves = leaves[plan.present_compute_leaves:] or leaves[:1]
    p = 0
    for s_i, (hostname, group, node_model) in enumerate(storage):
        leaf_i, port = p % spread, first + p // spread
        hosts.append(Host(hostname, group, node_model, len(members) + s_i + 1, 0, port, role="storage"))
        b.add_host(hostname, group, node_model, rails=False, role="storage")
        for nic in node_model.nics:
            leaf_i, port = p % spread, first + p // spread
            b.link("node-leaf", hostname, nic.rdma, stor_leaves[leaf_i].name, port, plan.endpoints + p)
            p += 1

    for tier, low, low_port, high, high_port, ordinal in uplinks(plan, switches):
        b.link(tier, low.name, "", high.name, high_port, ordinal, a_port_index=low_port)

    return Fabric(spec, plan, model, b.g, switches, hosts, b.links, b.ports)


def rack_name(group: str, model: NodeModel, k: int) -> str:
    """The NVLink domain of the `k`-th (0-based) node of a group: racks fill in node order. Four
    digits hold the largest group's racks, so adding racks renames none."""
    return f"{group}-rack{k // model.nvlink_domain + 1:04d}" if model.nvlink_domain > 1 else ""


def uplinks(plan: Plan, switches: list[Switch]) -> Iterator[tuple[str, Switch, int, Switch, int, int]]:
    """Every switch-to-switch cable as (tier, lower switch, its port index, upper switch, its
    port index, ordinal). Ports and ordinals follow places in the plan only, so the growth
    check can compare the cabling of two plans without building either."""
    leaves = [s for s in switches if s.role == "leaf"]
    spines = [s for s in switches if s.role == "spine"]
    cores = [s for s in switches if s.role == "core"]
    if plan.tiers >= 2:
        w, up = plan.leaf_spine_width, plan.up
        of_pod: dict[int, list[Switch]] = {}
        for spine in spines:
            of_pod.setdefault(spine.pod, []).append(spine)
        for leaf in leaves:
            pos = (leaf.index - 1) - (leaf.pod - 1) * plan.leaves_per_pod  # leaf position in its pod
            for s, spine in enumerate(of_pod[leaf.pod]):
                for t in range(w):
                    yield ("leaf-spine", leaf, plan.down + s * w + t, spine, pos * w + t,
                           (leaf.index - 1) * up + s * w + t)
    if plan.tiers == 3:
        w2 = plan.spine_core_width
        for spine in spines:
            plane_cores = cores[spine.plane * plan.cores_per_plane:(spine.plane + 1) * plan.cores_per_plane]
            for c, core in enumerate(plane_cores):
                for t in range(w2):
                    yield ("spine-core", spine, plan.spine_down + c * w2 + t, core, (spine.pod - 1) * w2 + t,
                           plan.leaves * plan.up + (spine.index - 1) * plan.spine_up + c * w2 + t)
