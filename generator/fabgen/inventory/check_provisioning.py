"""The `provisioning` block: the server's address on a management network, and the MAC map.

Which switches can be provisioned is decided here, once: a switch of an Ethernet fabric with a
management prefix (its address comes from there; targets/provisioning.py reads `provisioned`).
An out-of-band network's access switches take their address on the management VLAN's interface,
which the DHCP client of a factory-fresh switch (on eth0) does not ask for, and InfiniBand
switches are managed by their subnet manager; neither is in a MAC map.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

from fabgen.inventory.state import Checks

PLATFORMS = ("nvue", "eos", "sonic")  # the platforms with a zero-touch provisioning script
MAX_LISTED = 20  # switches named in the warning of those missing from the map
IFNAMSIZ = 15  # the longest Linux interface name (IFNAMSIZ less the terminating NUL)


def provisioned(fabric) -> str | None:
    """None where the fabric's switches can be provisioned, else why not."""
    if fabric.role == "oob":
        return ("an out-of-band access switch takes its address on the management VLAN, not by DHCP on its "
                "management port")
    if fabric.kind == "infiniband" or fabric.platform not in PLATFORMS:
        return f"its fabric's platform {fabric.platform} has no zero-touch provisioning here"
    if fabric.management is None:
        return "its fabric has no management prefix (fabrics[].management), so no address to give it"
    return None


def check_provisioning(c: Checks) -> None:
    """The server's address and the MAC map into c.macs (switch -> MAC)."""
    p = c.inv.provisioning
    if p is None:
        return
    if len(p.interface) > IFNAMSIZ:
        c.report(("provisioning", "interface"), f"{p.interface!r} is longer than the {IFNAMSIZ} characters of a Linux "
                 "interface name (netplan and dnsmasq name it)")
    if c.problems and any(f.name not in c.plans for f in c.inv.fabrics):
        return  # a fabric failed its own checks (reported): its switches, which the map names, are not known
    fabrics = [f for f in c.inv.fabrics if f.name in c.plans]
    if not any(provisioned(f) is None for f in fabrics):
        c.report(("provisioning",), "no fabric has switches to provision: an Ethernet fabric (nvue, eos, sonic) "
                 "with a management prefix", key=True)
        return
    _check_server(c, p.server, fabrics)
    _check_acl_admits(c, p.server)
    known: dict[str, str | None] = {}
    for f in fabrics:
        why = provisioned(f)
        known.update({name: why for name in c.switches.get(f.name, [])})
    c.macs = _read(c, p.mac_map, known)
    missing = [name for name, why in known.items() if why is None and name not in c.macs]
    if missing:  # filed under the first fabric with a switch missing: warnings are a fabric's
        owner = next(f.name for f in fabrics if missing[0] in c.switches.get(f.name, []))
        listed = ", ".join(missing[:MAX_LISTED]) + (f" and {len(missing) - MAX_LISTED} more"
                                                    if len(missing) > MAX_LISTED else "")
        c.warner(owner)(("provisioning", "mac_map"), f"{len(missing)} switch(es) not in the MAC map get no DHCP "
                     f"reservation and no zero-touch provisioning: {listed}")


def _check_server(c: Checks, server: str, fabrics: list) -> None:
    """An IPv4 host address inside exactly one served management prefix, not its gateway (the
    switches' addresses are known after allocation: check/cluster.py)."""
    from fabgen.inventory.management import gateway_of

    path = ("provisioning", "server")
    try:
        address = ipaddress.IPv4Address(server)
    except ValueError:
        c.report(path, f"{server!r} is not an IPv4 address")
        return
    inside = [f for f in fabrics if f.management is not None and (provisioned(f) is None or f.role == "oob")
              and address in ipaddress.IPv4Network(f.management.prefix)]
    if len(inside) != 1:
        where = "none" if not inside else ", ".join(f.name for f in inside)
        c.report(path, f"{server} must be inside exactly one management prefix of a provisioned fabric or the "
                 f"out-of-band network (it is in {where})")
        return
    m = inside[0].management
    net = ipaddress.IPv4Network(m.prefix)
    if address in (net.network_address, net.broadcast_address):
        c.report(path, f"{server} is the {'network' if address == net.network_address else 'broadcast'} address "
                 f"of {net}")
    elif int(address) == gateway_of(m):
        c.report(path, f"{server} is the gateway of {net} (fabric {inside[0].name})")


def _check_acl_admits(c: Checks, server: str) -> None:
    """A Cumulus switch's ZTP script confirms its new config only once the server answers over the
    management network (else NVUE rolls back): the control-plane ACL in force on each of its
    switches (the most specific baseline block that gives control_plane, intent/baseline.py's
    rule) must admit the server."""
    try:
        address = ipaddress.IPv4Address(server)
    except ValueError:
        return  # reported by _check_server
    for i, f in enumerate(c.inv.fabrics):
        if f.name not in c.plans or provisioned(f) is not None or f.platform != "nvue":
            continue
        for role in ("leaf", "spine", "core"):
            path, acl = _control_plane(c, i, f, role)
            if acl is None or not acl.allow:
                continue
            try:
                admitted = any(address in ipaddress.IPv4Network(a, strict=False) for a in acl.allow)
            except ValueError:
                continue  # reported by check_baseline
            if not admitted:
                c.report((*path, "control_plane", "allow"), f"the control-plane ACL of fabric '{f.name}' does not "
                         f"admit the provisioning server {server}: the ZTP script confirms the new configuration only "
                         "once the server answers, else NVUE rolls back; admit it")
                return


def _control_plane(c: Checks, i: int, f, role: str) -> tuple[tuple, Any]:
    """(where it is given, the control_plane block) in force on a switch of `role` in fabric i."""
    found: tuple[tuple, Any] = ((), None)
    for path, block in (("baseline",), c.inv.baseline), (("fabrics", i, "baseline"), f.baseline):
        if block is None:
            continue
        if block.control_plane is not None:
            found = (path, block.control_plane)
        by_role = next((r for name, r in block.roles.items() if name == role), None)
        if by_role is not None and by_role.control_plane is not None:
            found = ((*path, "roles", role), by_role.control_plane)
    return found


def _read(c: Checks, mac_map: str, known: dict[str, str | None]) -> dict[str, str]:
    """The MAC map CSV, relative to the inventory, as the GUID map is (check_infiniband.py)."""
    from fabgen.inventory.macmap import read_mac_map

    path = ("provisioning", "mac_map")
    map_path = Path(c.loaded.file).parent / mac_map
    try:
        if not map_path.exists():
            c.report(path, f"MAC map {mac_map!r} not found (paths are relative to the inventory)")
            return {}
        if not map_path.is_file():
            what = "a directory" if map_path.is_dir() else "not a regular file"
            c.report(path, f"MAC map {mac_map!r} is {what}: give the CSV file")
            return {}
    except OSError as exc:
        c.report(path, f"cannot read the MAC map: {exc.strerror or exc}")
        return {}
    shown = mac_map if Path(mac_map).is_absolute() else str(map_path)
    found, problems = read_mac_map(map_path, shown, known)
    c.problems.extend(problems)
    return found
