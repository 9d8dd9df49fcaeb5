"""The control-plane state the plan implies, read from the render as a user's tools would.

Per switch of every Ethernet fabric: its BGP sessions (the key the switch reports a peer by: the
far end's address from addresses.csv, or the local port of an unnumbered session) with the far
end's ASN, its BFD peers, and the ECMP width of every prefix of the fabric (emulate/expect.py's
eBGP path-vector over cabling.csv). The switch configs are read by the emulator's strict
translators (emulate/eos.py, nvue.py, sonic.py), so a config they would refuse is refused here.

Two consumers: `anta.py` writes it as an ANTA catalog for EOS; `frr.py` holds FRR's own JSON
(`show bgp ipv4 unicast summary json`, `show ip route json`, `show bfd peers json`) against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabgen.emulate.model import Router
from fabgen.emulate.read import BadInput as EmulateBadInput
from fabgen.emulate.read import Fabric, fabrics_of, read_fabric


class StateError(Exception):
    """The render cannot give the expected state (no Ethernet fabric, a config refused)."""


@dataclass
class Expected:
    device: str
    fabric: str  # the plane's name where the fabric has planes
    platform: str
    asn: int
    role: str
    peers: dict[str, tuple[str, int]] = field(default_factory=dict)  # peer key -> (far device, far ASN)
    bfd: set[str] = field(default_factory=set)  # peer keys with BFD
    widths: dict[str, int] = field(default_factory=dict)  # prefix -> ECMP width (0: no route)
    links: dict[str, tuple[str, str]] = field(default_factory=dict)  # port -> (far switch, far port)


def fabrics(files: dict[str, bytes], fabric: str | None = None) -> list[Fabric]:
    try:
        fabs = [read_fabric(files, f) for f in fabrics_of(files, fabric)]
    except EmulateBadInput as exc:
        raise StateError(str(exc)) from None
    if not fabs:  # only northsouth fabrics (emulate/evpn.py has their lab; no expected state here yet)
        raise StateError("the render's Ethernet fabrics are northsouth (EVPN multihoming): their control-plane "
                         "state is not compared yet (docs/northsouth.md); --lldp checks their cabling")
    return fabs


def _sessions(e: Expected, fab: Fabric, router: Router) -> None:
    """The switch's unnumbered peers and its links to other switches, from the plan's sessions."""
    plan, dev = fab.plan, e.device
    for a, ap, z, zp in plan.sessions:
        for me, port, far in ((a, ap, z), (z, zp, a)):
            if me == dev and port in router.unnumbered:
                e.peers[port] = (far, plan.asn[far])
    for a, ap, z, zp in plan.sessions:
        if a in fab.routers and z in fab.routers:
            if a == dev:
                e.links[ap] = (z, zp)
            elif z == dev:
                e.links[zp] = (a, ap)


def expected(fabs: list[Fabric]) -> list[Expected]:
    """Every switch's expected state, in the order of the fabrics and device names."""
    out = []
    for fab in fabs:
        plan = fab.plan
        widths = plan.widths()
        prefixes = plan.prefixes()
        plane_of = {r["device"]: r["fabric"] for r in fab.addresses}
        for dev, router in sorted(fab.routers.items()):
            e = Expected(dev, plane_of.get(dev, fab.name), router.platform, plan.asn[dev], plan.roles.get(dev, ""))
            for r in fab.addresses:
                if r["peer_device"] == dev and r["device"] in plan.asn and r["address"]:
                    e.peers[r["address"].split("/")[0]] = (r["device"], plan.asn[r["device"]])
            _sessions(e, fab, router)
            for n in router.neighbors:
                group = router.groups.get(n.group)
                if (n.bfd or (group is not None and group.bfd)) and n.peer in e.peers:
                    e.bfd.add(n.peer)
            e.widths = {p: widths[dev].get(o, 0) for p, o in sorted(prefixes.items()) if o != dev}
            out.append(e)
    return out
