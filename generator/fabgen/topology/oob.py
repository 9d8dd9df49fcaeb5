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

from fabgen.spec.catalog import Nic, SwitchModel
from fabgen.spec.model import Fabric, Host
from fabgen.spec.oob_layout import (  # noqa: F401 (read from here too)
    ACCESS_WIDTH,
    MEDIA,
    MGMT_PORT,
    NODE_BLOCK,
    SWITCH_BLOCK,
    SWITCH_GROUP,
    Block,
    Layout,
    Managed,
    Placed,
    access_names,
    access_plan,
    mgmt_model,
)
from fabgen.spec.schema import Fabric as FabricSpec
from fabgen.spec.sizing import Plan
from fabgen.topology.build import Builder


def build_oob(spec: FabricSpec, plan: Plan, model: SwitchModel, layout: Layout) -> Fabric:
    """Cable every BMC and managed switch management port at its place in its block."""
    switches = access_names(spec, layout)
    first: dict[int, int] = {}  # block -> index of its first present access switch in `switches`
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
        cable(m.name, sm.nics[0], b, m.place, -1)  # no oob address: its own fabric's prefix gives one
    for p in layout.nodes:
        blk = layout.blocks[p.block]
        k, slot = blk.port_of(p.place, 0, plan.down)
        hosts.append(Host(p.host, p.group, p.model, len(hosts) + 1, first[p.block] + k + 1,
                          slot if blk.span > 1 else slot // blk.ports_per_place, role=p.role))
        base = layout.address_base(p.block) + p.place * blk.ports_per_place
        for r, nic in enumerate(p.model.nics):
            k, port = blk.port_of(p.place, r, plan.down)
            cable(p.host, nic, p.block, k * plan.down + port, base + r)
    f = Fabric(spec, plan, model, switches, hosts, b_.links, b_.ports)
    f.oob = layout
    return f
