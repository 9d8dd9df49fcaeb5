"""Switch and subnet-manager names across the cluster: unique, DNS labels, apart from hostnames."""

from __future__ import annotations

from fabgen.inventory.check_nodes import hostname_clash
from fabgen.inventory.state import Checks
from fabgen.spec.layout import plane_names


def check_switch_names(c: Checks) -> None:
    """Switch names come from fabric names and share the namespace of hostnames (file names, Ansible
    hosts), so a collision is an inventory error, not a surprise later."""
    from fabgen.spec.layout import switch_names

    devices: dict[str, str] = {}  # lower-case switch name -> fabric
    from fabgen.spec.oob_layout import access_names

    for i, f in enumerate(c.inv.fabrics):
        if f.name in c.plans and f.role == "oob":
            c.switches[f.name] = [s.name for s in access_names(f, c.managed[f.name])]
            _claim_switch_names(c, i, f, c.switches[f.name], devices)
        elif f.name in c.plans:
            c.switches[f.name] = [s.name for name in plane_names(f)
                                  for s in switch_names(f.model_copy(update={"name": name}), c.plans[f.name])]
            _claim_switch_names(c, i, f, c.switches[f.name], devices)


def _claim_switch_names(c: Checks, i: int, f, names: list[str], devices: dict[str, str]) -> None:
    for name in names:
        other = devices.get(name.lower())
        if other is not None and other != f.name:
            c.report(("fabrics", i, "name"), f"switch '{name}' of fabric '{f.name}' is also a switch of fabric "
                     f"'{other}': their configs would overwrite each other; rename one fabric")
            return
        devices[name.lower()] = f.name
        clash = hostname_clash(c, name)
        if clash:
            how, j, other = clash
            c.report(("node_groups", j, "hostname"),
                     f"hostname '{other}' differs from switch '{name}' of fabric '{f.name}' only in case"
                     if how == "case" else f"hostname '{name}' is also the name of a switch of fabric "
                     f"'{f.name}' (fabrics[{i}]); switch names are '<fabric>-...'")
            return


def check_subnet_manager_names(c: Checks) -> None:
    """Subnet-manager hosts join the namespace of nodes and switches (Ansible hosts). An SM host may
    be a node of a node group on the same fabric (a UFM appliance as a node group, its HCA on the
    fabric: docs/cluster.md), but not any other node."""
    fabrics = c.inv.fabrics
    switch_owner = {name: fabric for fabric, names in c.switches.items() for name in names}
    sm_seen: dict[str, str] = {}
    node_names = {h.lower() for h in c.owners} if any(f.infiniband and f.infiniband.subnet_managers
                                                       for f in fabrics) else set()
    for i, f in enumerate(fabrics):
        for k, sm in enumerate(f.infiniband.subnet_managers if f.infiniband else []):
            on_fabric = sm in c.owners and any(owner == f.name for (g, _), owner in c.attached.items()
                                                if g == c.owners[sm][1])
            clash = ("a node of a node group not on this fabric" if sm.lower() in node_names and not on_fabric else
                     f"a switch of fabric '{switch_owner[sm]}'" if sm in switch_owner else
                     f"already a subnet manager of fabric '{sm_seen[sm]}'" if sm in sm_seen else None)
            if clash:
                c.report(("fabrics", i, "infiniband", "subnet_managers", k),
                         f"subnet manager '{sm}' is {clash}; give the SM host its own name")
            sm_seen.setdefault(sm, f.name)
