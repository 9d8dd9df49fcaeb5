"""Where each compute node sits in its fabric, for schedulers: one group per tier, the group a
job's traffic stays within when it fits there.

* tier 0: a rail-optimized scalable unit (its nodes reach each other through their rail leaves
  in one hop on every rail), or a fat-tree leaf (a node whose NICs span leaves sits under the
  leaf of its first NIC); a one-switch fabric is that switch;
* tier 1: the pod (three tiers);
* the fabric itself at the top.
A unit of spine-leaf groups (`Plan.rail_groups`, the GB200 SuperPOD) has, for tier 0, the leaves
that serve the same racks on every rail (`<fabric>-su<n>-leaf<j>`: a node reaches the others under
them in one hop on every rail), for tier 1 the unit (its groups' spines), then the fabric.
Unit and pod names are `<fabric>-su<n>` and `<fabric>-pod<n>`, padded like the switch names
(a multi-plane fabric's, from its first plane, under the inventory's name: every plane is cabled
alike; a fat-tree node's tier 0 is its first plane's leaf)
(`name_widths`), so they never change when nodes are added. Slurm's topology and the Kubernetes
labels both read this, so the two schedulers see the same groups.
"""

from __future__ import annotations

from fabgen.context import Context
from fabgen.spec.sizing import name_widths


def node_groups(ctx: Context) -> dict[str, list[str]]:
    """compute node -> its groups from tier 0 up to the fabric, in node order."""
    f = ctx.fabric
    plan = f.plan
    widths = name_widths(plan)
    name = f.inventory_name  # the planes of a fabric are cabled alike: its units and pods are the fabric's
    leaf_pod = {s.name: s.pod for s in f.switches if s.role == "leaf"}
    out: dict[str, list[str]] = {}
    for h in f.hosts:
        if h.role != "compute":
            continue
        if plan.rail_groups:  # the leaves a node's rails reach in one hop (its rack's), then its unit
            unit = f"{name}-su{h.unit:0{widths.unit}d}"
            first = f"{unit}-leaf{h.slot // plan.down + 1:0{widths.leaf}d}"
            out[h.name] = [first] + ([unit] if plan.tiers == 3 else []) + [name]
            continue
        if plan.topology == "rail-optimized":
            first = f"{name}-su{h.unit:0{widths.unit}d}"
            pod = (h.unit - 1) // plan.units_per_pod + 1
        else:
            first = f.first_leaf(h.name)
            pod = leaf_pod[first]
        groups = [first]
        if plan.tiers == 3:
            groups.append(f"{name}-pod{pod:0{widths.pod}d}")
        out[h.name] = groups + [name]
    return out


def racks(ctx: Context) -> dict[str, list[str]]:
    """NVLink domain (an NVL72 rack) -> its compute nodes in node order; {} when every node is its
    own domain. Slurm's blocks and the Kubernetes accelerator label both read this."""
    out: dict[str, list[str]] = {}
    for h in ctx.fabric.hosts:
        if h.rack and h.role == "compute":
            out.setdefault(h.rack, []).append(h.name)
    return out
