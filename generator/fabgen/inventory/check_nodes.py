"""Checks of node groups: names, models, hostnames that never collide, netdev names from
`rdma_links`, and nodes attached to no fabric."""

from __future__ import annotations

from pathlib import Path

from fabgen.inventory.loader import PathT
from fabgen.inventory.messages import MAX_FIELD_WIDTH, did_you_mean, format_all, pattern_problem
from fabgen.inventory.state import NAME_RE, Checks
from fabgen.spec.catalog import Nic, NodeModel
from fabgen.spec.oob_layout import SWITCH_GROUP
from fabgen.spec.schema import NAME_RULE, NodeGroup


def _hostnames(group, report) -> list[str] | None:
    pattern = group.hostname_pattern
    why = pattern_problem(pattern, ("n",))
    if why is None:
        names, why = format_all(pattern, ({"n": n} for n in range(1, group.count + 1)), MAX_FIELD_WIDTH)
    if why is not None:
        report("hostname", f"bad hostname pattern {pattern!r}: {why}; e.g. 'dgx{{n:03d}}'")
        return None
    first, last = names[0], names[-1]
    if group.count > 1 and first == last:
        report("hostname", f"pattern {pattern!r} gives every node the same name; include {{n}}")
        return None
    bad = next((h for h in (first, last) if not NAME_RE.match(h)), None)
    if bad is None:
        bad = next((h for h in names if not NAME_RE.match(h)), None)
    if bad is not None:
        report("hostname", f"pattern {pattern!r} gives {bad!r}, not a valid hostname: {NAME_RULE}")
        return None
    return names


def check_node_groups(c: Checks) -> None:
    """Node groups: unique names (also ignoring case), known models, hostnames that never collide."""
    for i, g in enumerate(c.inv.node_groups):
        path = ("node_groups", i)
        if g.name in c.groups:
            c.report((*path, "name"), f"node group '{g.name}' is declared twice")
            continue
        twin = next((n for n in c.groups if n.lower() == g.name.lower()), None)
        if twin is not None:
            c.report((*path, "name"), f"node group '{g.name}' differs from '{twin}' only in case: file names on "
                     "case-insensitive file systems would collide")
            continue
        if g.name == SWITCH_GROUP:
            c.report((*path, "name"), f"'{SWITCH_GROUP}' is the group fabgen gives the switches' management ports "
                     "on the out-of-band network: name the node group otherwise")
        c.groups[g.name] = g
        if g.model not in c.node_models and g.model not in c.inv.node_models:  # declared: reported there
            c.report((*path, "model"), f"unknown node model '{g.model}'{did_you_mean(g.model, list(c.node_models))}; "
                     f"known: {', '.join(sorted(c.node_models))}, or declare it under node_models")
        names = _hostnames(g, lambda k, m, p=path: c.report((*p, k), m))
        if names is not None:
            c.hostnames[g.name] = names
            _claim_hostnames(c, i, g.name, names)


def hostname_clash(c: Checks, name: str) -> tuple[str, int, str] | None:
    """('case', group index, that hostname) when `name` is a node's hostname but for case,
    ('same', group index, that group) when it is one exactly, None when it is free."""
    if name.lower() in c.owners_ci and name not in c.owners:
        j, other = c.owners_ci[name.lower()]
        return "case", j, other
    if name in c.owners:
        j, group = c.owners[name]
        return "same", j, group
    return None


def _claim_hostnames(c: Checks, i: int, group: str, names: list[str]) -> None:
    """Each hostname belongs to one node; the first clash of a group is reported."""
    for h in names:
        clash = hostname_clash(c, h)
        if clash:
            how, j, other = clash
            c.report(("node_groups", i, "hostname"),
                     f"hostname '{h}' differs from '{other}' only in case; DNS, Slurm and case-insensitive file "
                     "systems see one name" if how == "case" else
                     f"hostname '{h}' is also a node of group '{other}' (node_groups[{j}])")
            return
        c.owners[h] = (i, group)
        c.owners_ci[h.lower()] = (i, h)


def check_unattached(c: Checks) -> None:
    """Node groups that would render nothing, and host keys no file of theirs reads: warnings."""
    attached = {g for f in c.inv.fabrics for g in f.node_groups}
    first = c.inv.fabrics[0].name if c.inv.fabrics else ""
    for j, g in enumerate(c.inv.node_groups):
        if g.name not in attached:
            c.warner(first)(("node_groups", j), f"node group '{g.name}' is on no fabric: none of its files are "
                            "rendered; list it in a fabric's node_groups or remove it")
        elif g.role == "storage":
            for key in ("nccl_version", "bootstrap_interface"):
                if key in g.model_fields_set:
                    c.warner(first)(("node_groups", j, key), f"{key} sets NCCL for compute nodes; storage nodes "
                                    "(role storage) get no nccl.env, so it is not rendered")
        if g.tenants is not None:
            _check_group_tenants(c, j, g)
        if g.bonds == 2 and not any(f.role == "northsouth" and g.name in f.node_groups for f in c.inv.fabrics):
            c.report(("node_groups", j, "bonds"), f"bonds: 2 sets a server's bonds on a northsouth fabric; node group "
                     f"'{g.name}' is on none: remove it")


def _check_group_tenants(c: Checks, j: int, g: NodeGroup) -> None:
    """node_groups[].tenants: a one-bond server's tenants on a northsouth fabric (docs/northsouth.md)."""
    where, named = ("node_groups", j, "tenants"), list(g.tenants or ())
    if len(set(named)) != len(named):
        c.report(where, f"tenants lists {', '.join(named)}: name each tenant once")
    elif g.role != "storage":
        c.report(where, f"tenants sets a server's tenants (node group role storage); '{g.name}' is role {g.role}: "
                 "a compute node's bond carries both")
    elif g.bonds == 2:
        c.report(where, "tenants sets a one-bond server's tenants; with bonds: 2 bond0 carries in-band and bond1 "
                 "storage: remove one of the two keys")
    elif not any(f.role == "northsouth" and g.name in f.node_groups for f in c.inv.fabrics):
        c.report(where, f"tenants sets a server's tenants on a northsouth fabric; node group '{g.name}' is on none: "
                 "remove it")


NETDEV_RULE = "a Linux interface name is at most 15 characters, and lo is the loopback"


def netdev_ok(name: str) -> bool:
    return len(name) <= 15 and name not in ("lo", "all", "default") and "/" not in name


# The node's bond on a northsouth fabric, and a tenant's VLAN on it, as the hosts' netplans name
# them (intent/northsouth.py's HOST_BOND and host_vlan_interface; a test holds the two equal).
HOST_BOND = "bond0"


def host_bond_names(vlans: tuple[int, ...], bonds: int = 1) -> dict[str, str]:
    """The interface names a northsouth fabric adds to its nodes: the bond and a VLAN per tenant
    (and a server's second bond, `bonds: 2`)."""
    return {HOST_BOND: "the bond of the node's two north-south ports",
            **{f"{HOST_BOND}.{v}": f"the tenant VLAN {v} on the bond" for v in vlans},
            **({"bond1": "the server's second bond (bonds: 2)"} if bonds == 2 else {})}


def host_ports(c: Checks, gname: str, nm: NodeModel) -> tuple[Nic, ...]:
    """Every port a node of the group has as a network interface: its compute NICs (their plane
    ports where its compute fabric splits them) and its storage and in-band ports."""
    planes = next((f.planes for f in c.inv.fabrics if f.role == "compute" and gname in f.node_groups), 1)
    nics = nm.nics if planes == 1 or not nm.can_split(planes) else tuple(n for ns in nm.plane_nics(planes) for n in ns)
    return nics + tuple(p for p in nm.ports if p.role != "oob")


def check_bond_names(c: Checks, gpath: PathT, gname: str, nm: NodeModel, vlans: tuple[int, ...],
                     bonds: int = 1) -> bool:
    """No port of a bonded node is named like the bond or its VLANs: its netplan would make the bond
    a member of itself, or an interface both an ethernet and a VLAN, and `netplan generate`
    refuses either (the node would not come up). Reported where the name was written."""
    derived = host_bond_names(vlans, bonds)
    clash = next((n for n in host_ports(c, gname, nm) if n.netdev in derived), None)
    if clash is None:
        return True
    path, source = _netdev_source(c, gname, nm, clash, gpath)
    c.report(path, f"{source}: on this northsouth fabric's nodes that is the name of {derived[clash.netdev]} "
             f"(fabgen writes {', '.join(derived)}), and netplan would take the bond as its own member or one name "
             "as two interfaces; rename the port")
    return False


def _netdev_source(c: Checks, gname: str, nm: NodeModel, port: Nic, fallback: PathT) -> tuple[PathT, str]:
    """Where a port's netdev was written (the group's rdma_links file, its node_models entry: the
    netdev, the RDMA name a netdev defaults to, or the plane pattern), and how it came to be."""
    j, g = next((j, g) for j, g in enumerate(c.inv.node_groups) if g.name == gname)
    name = repr(port.netdev)
    if g.rdma_links is not None and port.rdma in dict(nm.netdevs):
        return ("node_groups", j, "rdma_links"), f"{g.rdma_links} gives {name} as the netdev of {port.rdma}"
    custom = c.inv.node_models.get(g.model)
    if custom is not None:
        for k in ("nics", "ports"):
            for n, x in enumerate(getattr(custom, k)):
                if x.rdma == port.rdma and x.netdev is not None:
                    return ("node_models", g.model, k, n, "netdev"), f"port {port.rdma}'s netdev is {name}"
                if x.rdma == port.rdma:
                    return ("node_models", g.model, k, n, "rdma"), f"port {name} has no netdev, so its " \
                        "interface is named after it"
        if custom.plane_rdma is not None:
            return ("node_models", g.model, "plane_rdma"), f"the plane pattern names a port {name}"
    return fallback, f"node group '{gname}' has a port named {name}"


def group_model(c: Checks, gname: str) -> NodeModel | None:
    """A node group's model as its nodes are: role ports numbered after its compute fabric's plane
    ports (NodeModel.for_planes), netdevs from its rdma_links file. None: reported elsewhere."""
    if gname in c.group_models:
        return c.group_models[gname]
    i, g = next((i, g) for i, g in enumerate(c.inv.node_groups) if g.name == gname)
    nm = c.node_models.get(g.model)
    if nm is not None:
        planes = next((f.planes for f in c.inv.fabrics if f.role == "compute" and gname in f.node_groups), 1)
        nm = nm.for_planes(planes)
        if g.rdma_links is not None:
            nm = _with_rdma_links(c, i, g, nm, planes)
    c.group_models[gname] = nm
    return nm


def _with_rdma_links(c: Checks, i: int, g, nm: NodeModel, planes: int) -> NodeModel | None:
    """nm with the netdevs of the group's rdma_links file: every device a port of the group uses
    must be in it (the file comes from one of its nodes)."""
    from fabgen.inventory.rdmalinks import read_rdma_links

    path = Path(c.loaded.file).parent / g.rdma_links
    shown = g.rdma_links if Path(g.rdma_links).is_absolute() else str(path)
    found, problems = read_rdma_links(path, shown)
    if problems:
        c.problems.extend(problems)
        return None
    ports = [n for ns in (nm.plane_nics(planes) if planes > 1 and nm.can_split(planes) else (nm.nics,)) for n in ns]
    ports += [n for n in nm.ports if n.role != "oob"]
    bad = sorted({netdev for netdev in found.values() if netdev and not netdev_ok(netdev)})
    if bad:
        c.report(("node_groups", i, "rdma_links"), f"{shown} gives {bad[0]!r} as a netdev: {NETDEV_RULE}")
        return None
    missing = [n.rdma for n in ports if n.rdma not in found]
    if missing:
        on_planes = f" on {planes} planes" if planes > 1 else ""
        c.report(("node_groups", i, "rdma_links"), f"{shown} lists no {', '.join(missing[:6])}"
                 f"{' and more' if len(missing) > 6 else ''} ({nm.key}'s port names{on_planes}); "
                 f"it lists {', '.join(sorted(found)[:12])}: take it from a node of this group, or declare a "
                 "node_models entry that names the ports as the node does")
        return None
    return nm.with_netdevs({dev: netdev for dev, netdev in found.items() if netdev})
