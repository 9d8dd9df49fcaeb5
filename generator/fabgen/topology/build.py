"""Build the networkx topology of each fabric from its sizing plan.

Port assignment is deterministic and follows cabling practice:
* leaf: endpoint ports first (rail-optimized: the node's slot in its unit; fat-tree:
  nodes in order, a node's NICs in rail order), then uplinks grouped by spine;
* spine: leaf-facing ports grouped by leaf (in pod order), then uplinks grouped by core;
* core: ports grouped by pod.
Port names are the switch model's real names at the fabric's link speed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from fabgen.spec import media
from fabgen.spec.catalog import NodeModel, SwitchModel
from fabgen.spec.layout import PLANE_SUFFIX, plane_names, server_ports, switch_names, uplinks  # noqa: F401
from fabgen.spec.model import Fabric, Host, Link, Switch
from fabgen.spec.schema import Fabric as FabricSpec
from fabgen.spec.sizing import Plan, pair_port, stripe, units_for


def build_planes(spec: FabricSpec, plan: Plan, model: SwitchModel, members: list[tuple[str, str, NodeModel]],
                 storage: Sequence[tuple[str, str, NodeModel]] = ()) -> list[Fabric]:
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


class Builder:
    """The links and port map of one fabric as it is built: every builder (leaf-spine here,
    the out-of-band access layer in topology/oob.py) cables through `link`, which refuses a port
    used twice."""

    def __init__(self, spec: FabricSpec, plan: Plan, model: SwitchModel):
        self.spec, self.plan, self.model = spec, plan, model
        self.names = model.port_names(plan.speed)
        # a tier at another speed than the node ports (docs/hardware.md "Port speeds"): its names
        self.speeds = {t: plan.tier_speed(t) for t in ("node-leaf", "leaf-spine", "leaf-leaf", "spine-core")}
        self.links: list[Link] = []
        self.ports: dict[str, dict[str, int]] = {}
        self._media: dict[tuple[str, str], str] = {}

    def medium(self, tier: str, form: str = "") -> str:
        """The tier's medium key (validation refused a tier no medium fits: `mmf` never shows)."""
        key = (tier, form)
        if key not in self._media:
            m = media.tier_medium(self.spec, self.model, self.speeds.get(tier, self.plan.speed), tier, form)
            self._media[key] = m.key if isinstance(m, media.Medium) else "mmf"
        return self._media[key]

    def add_switch(self, s: Switch) -> None:
        self.ports[s.name] = {}  # every switch in the port map, cabled or not (check/fabric.py)

    def link(self, tier: str, a: str, a_port: str, z: str, z_port_index: int, ordinal: int,
             a_port_index: int | None = None, media: str | None = None) -> None:
        speed = self.speeds.get(tier, self.plan.speed)
        names = self.names if speed == self.plan.speed else self.model.port_names(speed)
        m = speed // self.plan.speed  # port indexes are host-speed ports: a faster link takes m of them
        z_port = names[z_port_index // m]
        if a_port_index is not None:
            a_port = names[a_port_index // m]
        idx = len(self.links)
        lk = Link(tier, a, a_port, z, z_port, speed, media or self.medium(tier), ordinal)
        self.links.append(lk)
        for dev, port in ((a, a_port), (z, z_port)):
            used = self.ports.setdefault(dev, {})
            if port in used:  # a builder bug, never bad input
                raise AssertionError(f"{dev} port {port} assigned twice")
            used[port] = idx


def build_fabric(spec: FabricSpec, plan: Plan, model: SwitchModel,
                 members: list[tuple[str, str, NodeModel]],
                 storage: Sequence[tuple[str, str, NodeModel]] = ()) -> Fabric:
    """members: (hostname, group, node model) for every attached compute node, in inventory order;
    storage: the same for storage nodes."""
    b = Builder(spec, plan, model)
    switches = switch_names(spec, plan)
    for s in switches:
        b.add_switch(s)
    leaves = [s for s in switches if s.role == "leaf"]

    hosts = _cable_compute(b, spec, plan, leaves, members)
    hosts += _cable_storage(b, spec, plan, leaves, len(members), storage)

    for tier, low, low_port, high, high_port, ordinal in uplinks(plan, switches):
        # a collapsed pair's peer link is cabled as a leaf's uplinks are (the fabric's leaf_spine medium)
        b.link(tier, low.name, "", high.name, high_port, ordinal, a_port_index=low_port,
               media=b.medium("leaf-spine") if tier == "leaf-leaf" else None)

    return Fabric(spec, plan, model, switches, hosts, b.links, b.ports)


def stand_in(f: Fabric) -> Host | None:
    """The present compute node the plan's absent nodes are counted as (the last one: its group and
    model), where `f` has a plan beyond it; None where nothing is planned beyond `f`, or no
    compute node is present to stand for the others. The inventory names no model for nodes it
    does not list, so a fabric whose present nodes mix models is warned about at its
    planned_nodes (inventory/check_cluster.py `_warn_assumed_model`)."""
    compute = [h for h in f.hosts if h.role == "compute"]
    if not f.plan.planned or not compute or f.spec.role == "oob":
        return None
    return compute[-1]


def build_complete(f: Fabric) -> Fabric | None:
    """The fabric `f`'s plan completes to (`planned_nodes` attached), for what the plan buys later
    (targets/fabric.py): the absent nodes are of `stand_in`'s group and model, the storage nodes
    those present. None where `stand_in` is."""
    plan = f.plan
    last = stand_in(f)
    if last is None:
        return None
    compute = [h for h in f.hosts if h.role == "compute"]
    members = [(h.name, h.group, h.model) for h in compute]
    members += [(f"{last.group}-planned{i + 1}", last.group, last.model) for i in range(plan.nodes - len(compute))]
    storage = [(h.name, h.group, h.model) for h in f.hosts if h.role == "storage"]
    full = replace(plan, present_nodes=plan.nodes, present_units=units_for(plan, plan.nodes))
    done = build_fabric(f.spec, full, f.switch_model, members, storage)
    done.plane, done.planes, done.parent = f.plane, f.planes, f.parent
    return done


def _cable_compute(b: Builder, spec: FabricSpec, plan: Plan, leaves: list[Switch],
                   members: list[tuple[str, str, NodeModel]]) -> list[Host]:
    """The compute nodes, each NIC on its leaf port: rail-optimized, the node's slot in its unit
    on its rail's leaf; fat-tree, nodes in order, a node's NICs in rail order."""
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
        for r, nic in enumerate(node_model.nics):
            if plan.pair:  # a plane's switch pair: rail r on leaf r mod 2, a node's ports in rail order
                leaf_i, port = pair_port(plan, slot, r)
                leaf = leaves[leaf_i]
            elif plan.striped:  # a northsouth fabric sized by racks: port r on leaf (g + r) mod leaves
                leaf_i, port = stripe(plan, g, r)
                leaf = leaves[leaf_i]
            elif plan.rail_groups:  # the slot's leaf in the rail's group, its port on that leaf
                j, port = divmod(slot, plan.down)
                leaf = leaves[unit * plan.leaves_per_unit + r * plan.group_leaves + j]
            elif plan.topology == "rail-optimized":
                leaf, port = leaves[unit * plan.leaves_per_unit + r], slot
            elif plan.unit_nodes:
                leaf, port = leaves[unit], slot * plan.rails + r
            else:
                leaf_i, port = divmod(g * plan.rails + r, plan.down)
                leaf = leaves[leaf_i]
            b.link("node-leaf", hostname, nic.rdma, leaf.name, port, g * plan.rails + r,
                   media=b.medium("node-leaf", node_model.form(spec.role)))
    return hosts


def _cable_storage(b: Builder, spec: FabricSpec, plan: Plan, leaves: list[Switch], compute: int,
                   storage: Sequence[tuple[str, str, NodeModel]]) -> list[Host]:
    """Storage NICs: striped over the storage leaves (NIC p of the flattened list to leaf
    p mod L), or on the ports after the compute NICs of a one-switch fabric. `compute`: the
    compute nodes before them."""
    hosts: list[Host] = []
    first = plan.endpoints if plan.storage_leaves == 0 else 0
    spread = max(1, plan.storage_leaves)
    stor_leaves = leaves if plan.pair_servers else leaves[plan.present_compute_leaves:] or leaves[:1]
    # A northsouth fabric fills its storage leaf pairs one after the other (server j on pair
    # j // down, the same port of both leaves), so a new server at most adds a pair; a server with
    # two bonds (four ports, `bonds: 2`) takes two neighbouring ports of each leaf, bond b's legs on
    # port 2j + b of both (intent/northsouth.py).
    # The collapsed pair (`tiers: 1`, spec/sizing.py `_northsouth_pair`, `_northsouth_racks`) takes them on
    # both of its leaves, each bond's legs on one port of either leaf, the ports after its peer links or
    # after its two racks' trays (spec/layout.py `server_ports`), as NVIDIA's 2-8-9-400 core pair and
    # 2-4-5-800 csl-01/02 take their support and storage servers.
    pairs = spec.role == "northsouth" and plan.storage_leaves > 0
    on_pair = spec.role == "northsouth" and plan.pair_servers
    p = 0
    for s_i, (hostname, group, node_model) in enumerate(storage):
        leaf_i, port = p % spread, first + p // spread
        bonds = max(1, len(node_model.nics) // 2)
        per_pair = plan.down // bonds
        if pairs:
            port = s_i % per_pair * bonds
        if on_pair:
            port = server_ports(plan, s_i, bonds)[0]
        hosts.append(Host(hostname, group, node_model, compute + s_i + 1, 0, port, role="storage"))
        for k, nic in enumerate(node_model.nics):
            leaf_i, port = p % spread, first + p // spread
            if pairs:
                leaf_i, port = 2 * (s_i // per_pair) + k % 2, s_i % per_pair * bonds + k // 2
            if on_pair:
                leaf_i, port = k % 2, server_ports(plan, s_i, bonds)[k // 2]
            b.link("node-leaf", hostname, nic.rdma, stor_leaves[leaf_i].name, port, plan.endpoints + p,
                   media=b.medium("node-leaf", node_model.form("storage")))
            p += 1
    return hosts


def rack_name(group: str, model: NodeModel, k: int) -> str:
    """The NVLink domain of the `k`-th (0-based) node of a group: racks fill in node order. Four
    digits hold the largest group's racks, so adding racks renames none."""
    return f"{group}-rack{k // model.nvlink_domain + 1:04d}" if model.nvlink_domain > 1 else ""
