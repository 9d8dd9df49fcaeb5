"""Checks of one fabric: its name, role and hardware, the node groups it attaches, its planes and
NVLink racks, and its size (the sizing plan, spec/sizing.py)."""

from __future__ import annotations

import re
from dataclasses import replace

from fabgen.inventory.check_nodes import check_bond_names, group_model
from fabgen.inventory.ethernet import EOS_MAX_VNI, NVUE_RESERVED_VLANS, asn_ranges, asn_stride
from fabgen.inventory.messages import did_you_mean
from fabgen.inventory.state import (
    MAX_ENDPOINTS,
    MAX_FABRIC_NAME,
    RESERVED_FOLDERS,
    Checks,
    Member,
    PendingGrowth,
    switch_name,
)
from fabgen.spec.catalog import NVUE_BREAKOUTS, PLATFORMS_BY_KIND, NodeModel, SwitchModel
from fabgen.spec.layout import PLANE_SUFFIX, border_port_indices, free_cages, leaf_groups
from fabgen.spec.platforms import PLATFORMS
from fabgen.spec.schema import DEVICE_PATTERN, NorthSouth
from fabgen.spec.sizing import SizingError, parse_ratio, plan


def check_fabric(c: Checks, i: int, f) -> None:
    """One fabric: its identity and hardware, the node groups it attaches, then its size."""
    ok = check_fabric_name(c, i, f)
    ok = check_fabric_role(c, i, f) and ok
    ok = check_fabric_hardware(c, i, f) and ok
    fmembers, fstorage, attached_ok = attach_node_groups(c, i, f)
    ok = ok and attached_ok
    if ok and fstorage and not fmembers:
        c.report(("fabrics", i, "node_groups"), "every node group of this fabric has role storage; a fabric needs "
                 "at least one compute node group")
        return
    model = c.switch_models.get(f.switch_model)
    if ok and model is not None and fmembers and (not f.pair or _pair_fits(c, i, f, fstorage)):
        _size_fabric(c, i, f, model, fmembers, fstorage)
    if ok and f.kind != "infiniband":
        _warn_placeholders(c, i, f)


def _warn_placeholders(c: Checks, i: int, f) -> None:
    """An Ethernet fabric's node ports without a known netdev (no published table, no rdma_links):
    their netplans can only name them after their RDMA devices, which no host has."""
    for j, g in enumerate(c.inv.node_groups):
        nm = c.group_models.get(g.name)
        if g.name not in f.node_groups or nm is None:
            continue
        if f.role == "compute" and not nm.can_split(f.planes):
            continue  # the model cannot split so: reported where the planes are checked
        ports = [n for ns in nm.plane_nics(f.planes) for n in ns] if f.role == "compute" else nm.role_ports(f.role)
        unknown = [n.rdma for n in ports if not n.netdev_known]
        if unknown:
            where = ("node_groups", j, "rdma_links") if g.rdma_links else ("node_groups", j)
            fix = ("its rdma_links file lists no netdev for them (the ports ran InfiniBand, without IPoIB, when it "
                   "was saved?): save it again with them in Ethernet mode" if g.rdma_links else
                   "give node_groups[].rdma_links (the output of `rdma link show` on one node of the group)")
            c.warner(f.name)(where, f"node group '{g.name}' ({nm.key}): no known netdev for {len(unknown)} "
                             f"{f.role} port(s) ({', '.join(unknown[:4])}{', ...' if len(unknown) > 4 else ''}): the "
                             "netplans name them after their RDMA devices, which no host has as interfaces, and "
                             f"the host deploy playbook refuses them; {fix}")


def check_fabric_name(c: Checks, i: int, f) -> bool:
    """Fabric names prefix switch names and name OUT's folders: unique ignoring case, short, not reserved."""
    path, ok = ("fabrics", i, "name"), True
    earlier = [x.name for x in c.inv.fabrics[:i]]
    if f.name.lower() in {n.lower() for n in earlier}:
        c.report(path, f"fabric '{f.name}' is declared twice" if f.name in earlier else
                 f"fabric '{f.name}' differs from another fabric's name only in case")
        ok = False
    if f.name.lower() in RESERVED_FOLDERS:
        c.report(path, f"'{f.name}' is a folder fabgen writes at the top of OUT "
                 f"({', '.join(sorted(RESERVED_FOLDERS))}): name the fabric otherwise")
        ok = False
    if len(f.name) > MAX_FABRIC_NAME:
        c.report(path, f"fabric names are at most {MAX_FABRIC_NAME} characters: they prefix "
                 "every switch name, which must stay a valid hostname")
        ok = False
    return ok


def check_fabric_role(c: Checks, i: int, f) -> bool:
    """What a role allows: planes and NCCL are the compute fabric's; in-band management and BMCs are
    Ethernet networks (storage may be InfiniBand, as in NVIDIA's InfiniBand storage fabrics); the
    out-of-band keys are the out-of-band network's (elsewhere nothing would read them)."""
    ok = True
    if f.role != "oob":
        for key in ("manages", "oob_vlan"):
            if key in f.model_fields_set:
                c.report(("fabrics", i, key), f"{key} applies to the out-of-band network (role oob); this {f.role} "
                         "fabric has no access ports: remove it", key=True)
                ok = False
    if f.role != "compute" and f.planes > 1:
        c.report(("fabrics", i, "planes"), f"planes split compute NICs; the {f.role} fabric has one plane")
        ok = False
    if f.role == "northsouth":
        ok = check_northsouth(c, i, f) and ok
    elif f.ethernet is not None and "northsouth" in f.ethernet.model_fields_set:
        c.report(("fabrics", i, "ethernet", "northsouth"), f"northsouth applies to role northsouth; this {f.role} "
                 "fabric has no tenants: remove it", key=True)
        ok = False
    if f.role != "northsouth" and f.ethernet is not None and f.ethernet.host_addressing == "evpn":
        ok = check_gpu_overlay(c, i, f) and ok
    if f.ethernet is not None and "overlay" in f.ethernet.model_fields_set and f.ethernet.host_addressing != "evpn":
        c.report(("fabrics", i, "ethernet", "overlay"), "overlay is the GPU tenant of host_addressing: evpn; "
                 "without it nothing reads overlay: remove it, or set host_addressing: evpn", key=True)
        ok = False
    if f.role == "inband" and f.kind in ("infiniband", "ethernet"):
        c.report(("fabrics", i, "kind"), "an inband fabric is roce or spectrum-x (kind ethernet is the "
                 "out-of-band access layer; InfiniBand carries compute and storage)")
        ok = False
    if (f.role == "oob") != (f.kind == "ethernet"):
        c.report(("fabrics", i, "kind"), "the out-of-band network is kind ethernet with role oob (access switches, "
                 "one management VLAN); " + ("write kind: ethernet" if f.role == "oob" else "write role: oob"))
        ok = False
    return ok


# Community SONiC has no EVPN multihoming in any release through 202511: its HLD was merged in
# November 2024 (sonic-net/SONiC pull 1702), the YANG model (sonic-evpn.yang) reached master in
# June 2026 (sonic-buildimage pull 27543) and no release branch through 202605 carries it whole.
SONIC_NO_EVPN_MH = ("community SONiC has no EVPN multihoming in a release (sonic-net/SONiC's EVPN-MH design, "
                    "pull request 1702, reached master only in 2026; releases 202305 to 202511 have none): "
                    "use platform eos (EVPN all-active multihoming) or kind spectrum-x (NVUE), or give the "
                    "fabric role storage and inband separately (routed ports, docs/cluster.md)")


def check_northsouth(c: Checks, i: int, f) -> bool:
    """The converged north-south fabric (docs/northsouth.md): Ethernet with EVPN multihoming (EOS,
    NVUE; not community SONiC), a leaf pair per unit (rail-optimized, two ports per node: checked
    when the node groups attach), one plane, no BGP to the host (the bond is the redundancy)."""
    ok = True
    if f.kind not in ("roce", "spectrum-x"):
        c.report(("fabrics", i, "kind"), "a northsouth fabric is roce (platform eos) or spectrum-x: EVPN "
                 "multihoming over a VXLAN underlay of Ethernet switches")
        ok = False
    elif f.platform in PLATFORMS and not PLATFORMS[f.platform].evpn_multihoming:  # community SONiC
        c.report(("fabrics", i, "platform"), SONIC_NO_EVPN_MH)
        ok = False
    if f.topology != "rail-optimized":
        c.report(("fabrics", i, "topology"), "a northsouth fabric is rail-optimized: a node's two bonded ports "
                 "go to the two leaves of its unit's leaf pair (a fat-tree puts both on one leaf)")
        ok = False
    eth = f.ethernet
    if eth is not None:
        ok = _check_tenants(c, i, eth.northsouth, f) and ok
    if eth is not None and eth.northsouth.border is not None:
        ok = _check_border(c, i, f) and ok
    if eth is not None and "host_routing" in eth.model_fields_set and eth.host_routing != "static":
        c.report(("fabrics", i, "ethernet", "host_routing"), "a northsouth fabric's hosts are bonded to a leaf "
                 "pair (EVPN multihoming): no BGP to the host", key=True)
        ok = False
    if eth is not None and "host_addressing" in eth.model_fields_set:
        c.report(("fabrics", i, "ethernet", "host_addressing"), "a northsouth fabric addresses each node's bond "
                 "on the storage and in-band subnets (the hosts pool's two halves): remove host_addressing",
                 key=True)
        ok = False
    return ok


def check_gpu_overlay(c: Checks, i: int, f) -> bool:
    """host_addressing evpn (intent/switches.py, docs/planes.md): NVIDIA's GPU overlay, on a compute
    fabric on Cumulus Linux (NVUE, as NVIDIA writes it) or EOS (as AVD's l3ls-evpn writes it, VNIs
    within EOS's 16 bits). SONiC is refused: fabgen's SONiC target writes no EVPN."""
    where = ("fabrics", i, "ethernet", "host_addressing")
    if f.role != "compute":
        c.report(where, f"evpn is the GPU fabric's overlay (role compute); this {f.role} fabric is routed: "
                 "use p2p or leaf-subnet")
        return False
    if f.platform not in ("nvue", "eos"):
        c.report(where, f"the GPU EVPN overlay is built on Cumulus Linux (NVUE, as NVIDIA's generator writes it) and "
                 f"EOS (as AVD's l3ls-evpn writes it); fabgen's {f.platform} target writes no EVPN: use p2p or "
                 "leaf-subnet there")
        return False
    t, at = f.ethernet.overlay, ("fabrics", i, "ethernet", "overlay")
    if f.platform == "eos" and "overlay" not in f.ethernet.model_fields_set and max(t.vni, t.l3vni) > EOS_MAX_VNI:
        c.report(where, f"EOS's route distinguisher (router-id:VNI) and route target (VNI:VNI) take VNIs up to "
                 f"{EOS_MAX_VNI}; the default overlay's ({t.vni}, {t.l3vni}, NVIDIA's) do not fit: give "
                 "ethernet.overlay, e.g. {vlan: 900, vni: 10900, vrf: GPU, l3vni: 10003}")
        return False
    ok = _check_tenant(c, at, t, f)
    if t.vni == t.l3vni:
        c.report((*at, "l3vni"), "the layer-3 VNI is also the VLAN's layer-2 VNI: give the VRF a VNI of its own")
        ok = False
    return ok


def _check_own_vrf(c: Checks, where: tuple, vrf: str, f, who: str) -> bool:
    """An EVPN VRF (a tenant's, the border's) is one of its own: neither the switch's (default,
    management) nor named like one of its devices."""
    mgmt = f.management.vrf.lower() if f.management is not None and f.management.vrf else ""
    if vrf.lower() in ("default", "mgmt", mgmt):
        c.report((*where, "vrf"), f"VRF {vrf} is the switch's own (the underlay's default VRF or the "
                 f"management VRF): give {who} a VRF of its own")
        return False
    if (what := switch_name(vrf)) is not None:
        c.report((*where, "vrf"), f"VRF {vrf} is named like {what}: on Cumulus Linux a VRF is a network "
                 f"device beside the switch's ports, bonds, SVIs and bridge, one name each; give {who} a VRF "
                 "of its own")
        return False
    return True


def _check_tenant(c: Checks, where: tuple, t, f) -> bool:
    """One EVPN tenant (a north-south role's, the GPU overlay's): a VRF of its own, neither the
    switch's (default, management) nor named like one of its devices; a VLAN and VNIs the platform
    can take."""
    ok = _check_own_vrf(c, where, t.vrf, f, "the tenant")
    lo, hi = NVUE_RESERVED_VLANS
    if f.platform == "nvue" and lo <= t.vlan <= hi:
        c.report((*where, "vlan"), f"VLAN {t.vlan} is in Cumulus Linux's reserved range {lo}-{hi}: use another")
        ok = False
    ok = _check_l3vni_vlan(c, where, t, f) and ok
    for key in ("vni", "l3vni"):
        if f.platform == "eos" and getattr(t, key) > EOS_MAX_VNI:
            c.report((*where, key), f"{getattr(t, key)} is above {EOS_MAX_VNI}: EOS's route distinguisher "
                     "(router-id:VNI) and route target (VNI:VNI) take 16 bits there")
            ok = False
    return ok




def _check_border(c: Checks, i: int, f) -> bool:
    """northsouth.border (docs/northsouth.md "The way out"): rendered on NVUE only (EOS and SONiC
    refused where it is written); its VRF one of its own (as a tenant's: not the switch's, not named
    like a device, not a tenant's) and its layer-3 VNI no tenant's VNI; each tenant leaked once."""
    where = ("fabrics", i, "ethernet", "northsouth", "border")
    ns, b = f.ethernet.northsouth, f.ethernet.northsouth.border
    if f.platform != "nvue":
        c.report(where, f"the border (VRF, uplinks to the site router, route leaking) is built on Cumulus Linux "
                 f"(NVUE) only, as NVIDIA's generator writes it; fabgen's {f.platform} target writes none yet: "
                 "remove border here, or use platform nvue", key=True)
        return False
    ok = _check_own_vrf(c, where, b.vrf, f, "the border")
    if ok and b.vrf.lower() in (ns.storage.vrf.lower(), ns.inband.vrf.lower()):
        c.report((*where, "vrf"), f"VRF {b.vrf} is a tenant's: the border VRF is one of its own, the tenants' "
                 "routes leaked into it")
        ok = False
    vnis = {ns.storage.vni, ns.storage.l3vni, ns.inband.vni, ns.inband.l3vni}
    if b.l3vni in vnis:
        c.report((*where, "l3vni"), f"VNI {b.l3vni} is a tenant's: give the border VRF a VNI of its own")
        ok = False
    if len(set(b.leak)) != len(b.leak):
        c.report((*where, "leak"), "a tenant is listed twice: list each of inband and storage at most once")
        ok = False
    return ok


# addresses.csv's device names of the north-south tenants' anycast gateways (intent/addresses.py)
GATEWAY_ROWS = ("storage-gateway", "inband-gateway", "gpu-gateway")


def check_segment_ids(c: Checks) -> None:
    """northsouth.segment_local_id port (NVIDIA's numbering by leaf port) holds only where each node's two
    legs sit on the same port of both leaves: not on a fabric sized by racks whose nodes are striped
    over more than two leaves (spec/sizing.py `stripe`: a node's legs on different ports), and only on
    one leaf pair (on more, the ids repeat under the one segment MAC: two pairs, one segment)."""
    for i, f in enumerate(c.inv.fabrics):
        if f.role != "northsouth" or f.ethernet is None or f.ethernet.northsouth.segment_local_id != "port":
            continue
        plan = c.plans.get(f.name)
        # striped over two leaves (the collapsed pair), each node's legs share a port (spec/sizing.py `stripe`:
        # both leaves hold both residues); over more, they do not
        where = ("fabrics", i, "ethernet", "northsouth", "segment_local_id")
        if plan is not None and plan.striped and plan.leaves_per_unit > 2:
            c.report(where, "segment_local_id port numbers a "
                     "segment by its leaf port, the same on both legs only where each node's two ports sit on one "
                     f"port of a leaf pair; fabric '{f.name}' stripes its nodes over {plan.leaves_per_unit} leaves "
                     "(sized by racks), so a node's legs sit on different ports: leave it at place, or give "
                     "scalable_unit")
        elif plan is not None and plan.leaves > 2:
            # the ids repeat on every leaf pair, and every segment has the one segment MAC: two pairs'
            # bonds would share an ESI (type 3: MAC and local id), one Ethernet segment to EVPN
            c.report(where, "segment_local_id port numbers a segment by its leaf port, so the ids repeat on "
                     f"every leaf pair and, with one segment MAC, two pairs' bonds would be one Ethernet segment; "
                     f"fabric '{f.name}' plans {plan.leaves} leaves: leave it at place (one id a node, fabric-wide)")


def check_border_names(c: Checks) -> None:
    """After every fabric is sized and named: a border's router is named like no switch and no node
    (its name is a device of cabling.csv and NetBox), and a border leaf's highest ports, the
    uplinks', are free of its node ports and switch-to-switch links at every size the plan holds."""
    switches = {n.lower(): fname for fname, names in c.switches.items() for n in names}
    nodes = {h.lower(): g for g, names in c.hostnames.items() for h in names}
    routers: dict[str, str] = {}  # router -> the fabric whose border names it first
    for i, f in enumerate(c.inv.fabrics):
        b = f.ethernet.northsouth.border if f.role == "northsouth" and f.ethernet is not None else None
        if b is None or f.name not in c.plans:
            continue
        where = ("fabrics", i, "ethernet", "northsouth", "border")
        name = b.router.lower()
        _check_border_asn(c, where, b.asn)
        if name in routers:  # its ports `uplink<k>` are numbered fabric by fabric: two would share them
            c.report((*where, "router"), f"router '{b.router}' is also fabric '{routers[name]}''s border router: "
                     "each northsouth fabric hands off to a router of its own name (the router's ports are "
                     "numbered per fabric in cabling.csv and NetBox)")
        routers.setdefault(name, f.name)
        if name in GATEWAY_ROWS:
            c.report((*where, "router"), f"router '{b.router}' is the name of a tenant's anycast gateway in "
                     "addresses.csv: name the site router otherwise")
        elif name in switches:
            c.report((*where, "router"), f"router '{b.router}' is also the name of a switch of fabric "
                     f"'{switches[name]}': name the site router after none of the cluster's devices")
        elif name in nodes:
            c.report((*where, "router"), f"router '{b.router}' is also a node of group '{nodes[name]}': name the "
                     "site router after none of the cluster's devices")
        nso = f.ethernet.northsouth if f.ethernet is not None else None
        tenants = (nso.storage, nso.inband) if nso is not None else ()
        taken = taken_tenant_vlans(tenants)
        if b.l3vni_vlan is not None and b.l3vni_vlan in taken:
            c.report((*where, "l3vni_vlan"), f"l3vni_vlan {b.l3vni_vlan} is {taken[b.l3vni_vlan]} on "
                     f"fabric '{f.name}' too: the border VRF's layer-3 VNI takes a VLAN of its own (NVIDIA's 3004)")
        plan = c.plans[f.name]
        if not b.inbound_filter and not plan.peer_links:
            c.report((*where, "inbound_filter"), f"fabric '{f.name}' has spines, so each leaf has an ASN of its own "
                     "and BGP's loop check would not stop one leaf's prefixes coming back to another from the site "
                     "router (docs/decisions.md, \"An inbound route-map on the uplinks\"): the filter stays on; "
                     "false only on a collapsed pair (one ASN, as NVIDIA's)")
        if b.speed is not None and b.speed != plan.speed:
            _check_border_speed(c, where, f, plan, b)
            continue
        free = len(border_port_indices(plan, plan.radix))
        if b.uplinks > free:
            c.report((*where, "uplinks"), f"{b.uplinks} border uplinks do not fit a leaf of fabric '{f.name}': its "
                     f"planned node ports{servers_word(plan)} and switch-to-switch links leave {free} of its "
                     f"{plan.radix} ports at {plan.speed}G free (a smaller scalable_unit or a higher oversubscription "
                     f"frees more{', fewer servers' if plan.servers else ''})")


def taken_tenant_vlans(tenants) -> dict[int, str]:
    """The VLANs the north-south tenants take (each one's own and its layer-3 VNI's), named for a
    message: what a border or out-of-band VLAN must not be."""
    return {**{t.l3vni_vlan: f"{t.vrf}'s layer-3 VNI VLAN" for t in tenants if t.l3vni_vlan},
            **{t.vlan: f"{t.vrf}'s VLAN" for t in tenants}}


def servers_word(plan, word: str = ", servers") -> str:
    """The collapsed pair's servers among what takes a leaf's ports (spec/sizing.py `Plan.servers`)."""
    return word if plan.servers else ""


def _check_border_speed(c: Checks, where: tuple, f, plan, b) -> None:
    """northsouth.border.speed other than the node ports': a breakout NVUE writes of the switch's cages
    (SN5600: 400 2x, 200 4x, 100 8x), and whole cages for the uplinks among those no planned node and
    no switch link takes (spec/layout.py `leaf_groups`)."""
    model = c.switch_models.get(f.switch_model)
    if model is None:  # reported at switch_model
        return
    mode = model.nvue_mode(b.speed)
    if mode is None:
        c.report((*where, "speed"), f"{f.switch_model}'s cages break out to {model.nvue_speeds()} on NVUE, not "
                 f"{b.speed}G: a "
                 "border uplink runs one of those")
        return
    got = len(leaf_groups(plan, model, (b.uplinks, b.speed)).border)
    if got < b.uplinks:
        cages = len(free_cages(plan, model.cages))
        c.report((*where, "speed"), f"{b.uplinks} border uplinks at {b.speed}G take {-(-b.uplinks // mode.per_cage)} "
                 f"whole cage(s) of their own ({mode.per_cage} ports a cage"
                 f"{', each beside a free cage left unsplit' if mode.per_cage >= model.lanes_per_cage else ''}); a "
                 f"leaf of fabric '{f.name}' has {cages} cages no planned node{servers_word(plan, ', server')} or "
                 "switch link takes: fewer uplinks, another speed, or a smaller scalable_unit")


def _check_border_asn(c: Checks, where: tuple, asn: int | None) -> None:
    """A border router's ASN is none of the cluster's Ethernet fabrics use (leaves, spines, cores,
    nodes, every plane): the fabric's own would make the site router an iBGP peer, a spine's would
    make the spines drop the border VRF's routes (their own AS in the path)."""
    if asn is None:
        return
    clash = asn_clash(c, asn, asn)
    if clash is not None:
        name, tier, low, high = clash
        c.report((*where, "asn"), f"ASN {asn} is one of fabric '{name}''s {tier} ASNs ({low}-{high}): "
                 "give the site router an ASN the cluster does not use")


def asn_clash(c: Checks, low: int, high: int) -> tuple[str, str, int, int] | None:
    """The first Ethernet fabric tier whose ASNs meet [low, high]: (fabric, tier, its first, its
    last), plane by plane (a plane's ASNs start a stride apart, so the span from plane 1's first to
    the last plane's last holds ASNs no plane uses); None where none does."""
    for f in c.inv.fabrics:
        if f.ethernet is None or f.name not in c.plans:
            continue
        for tier, (first, last) in asn_ranges(f.ethernet, c.plans[f.name]).items():  # plane 1's
            stride = asn_stride(f.ethernet, tier, f.planes) if tier != "host" else 0
            for lo, hi in ((first + k * stride, last + k * stride) for k in range(f.planes if stride else 1)):
                if low <= hi and lo <= high:
                    return f.name, tier, lo, hi
    return None


def _check_l3vni_vlan(c: Checks, where: tuple, t, f) -> bool:
    """A tenant's l3vni_vlan: written by the NVUE target alone (`vrf <vrf> evpn vlan`, as NVIDIA's
    generator and northsouth.border.l3vni_vlan), a VLAN Cumulus Linux takes, not the tenant's own."""
    v = t.l3vni_vlan
    if v is None:
        return True
    lo, hi = NVUE_RESERVED_VLANS
    if f.platform != "nvue":
        how = (f"EOS maps the VRF's layer-3 VNI with no VLAN fabgen writes (`vxlan vrf {t.vrf} vni {t.l3vni}`, as "
               "AVD's l3ls-evpn)") if f.platform == "eos" else f"fabgen's {f.platform} target writes no EVPN"
        c.report((*where, "l3vni_vlan"), f"l3vni_vlan is NVUE's `vrf <vrf> evpn vlan` (as NVIDIA's generator "
                 f"writes it); {how}: remove l3vni_vlan here, or use platform nvue")
        return False
    if lo <= v <= hi:
        c.report((*where, "l3vni_vlan"), f"VLAN {v} is in Cumulus Linux's reserved range {lo}-{hi}: use another "
                 "(NVIDIA's 3002-3005)")
        return False
    if v == t.vlan:
        c.report((*where, "l3vni_vlan"), f"l3vni_vlan {v} is the tenant's own VLAN: the VRF's layer-3 VNI takes a "
                 "VLAN of its own (NVIDIA's 3002, 3003, 3005)")
        return False
    return True


def _check_tenants(c: Checks, i: int, ns, f) -> bool:
    """Storage and in-band apart: their own VLAN, VNIs and VRF (one would carry the other's traffic);
    no tenant in the default or the management VRF nor named like a device of the switch; VLANs and
    VNIs the platform can take."""
    path, ok = ("fabrics", i, "ethernet", "northsouth", "inband"), True
    a, b = ns.storage, ns.inband
    for role, t in (("storage", a), ("inband", b)):
        ok = _check_tenant(c, ("fabrics", i, "ethernet", "northsouth", role), t, f) and ok
    vnis = {a.vni, a.l3vni}
    for key, clash in (("vlan", b.vlan == a.vlan), ("vrf", b.vrf.lower() == a.vrf.lower()),
                       ("vni", b.vni in vnis), ("l3vni", b.l3vni in vnis)):
        if clash:
            c.report((*path, key), f"the in-band {key} is also storage's: each role has its own VLAN, VNIs and VRF")
            ok = False
    # a layer-3 VNI's VLAN on the other tenant's VLAN, or both on one (reported at in-band's, as above)
    for role, t, other in (("storage", a, {b.vlan: "VLAN"}),
                           ("inband", b, {a.l3vni_vlan: "layer-3 VNI VLAN", a.vlan: "VLAN"})):
        if t.l3vni_vlan is not None and t.l3vni_vlan in other:
            vrf = (b if role == "storage" else a).vrf
            c.report(("fabrics", i, "ethernet", "northsouth", role, "l3vni_vlan"), f"l3vni_vlan {t.l3vni_vlan} is "
                     f"{vrf}'s {other[t.l3vni_vlan]} too: each VRF's layer-3 VNI takes a VLAN of its own")
            ok = False
    for role, t in (("storage", a), ("inband", b)):
        if t.vni == t.l3vni:
            c.report(("fabrics", i, "ethernet", "northsouth", role, "l3vni"), "the layer-3 VNI is also the VLAN's "
                     "layer-2 VNI: give the VRF a VNI of its own")
            ok = False
    return ok


def tenant_vlans(f) -> tuple[int, ...]:
    """The VLANs of a northsouth fabric's tenants, storage then in-band (their defaults if unset)."""
    ns = f.ethernet.northsouth if f.ethernet is not None else NorthSouth()
    return ns.storage.vlan, ns.inband.vlan


def check_fabric_hardware(c: Checks, i: int, f) -> bool:
    """The platform fits the kind, the switch model is known, built for the kind and runs the platform."""
    path, ok = ("fabrics", i), True
    platforms = PLATFORMS_BY_KIND[f.kind]
    if f.platform not in platforms:
        everything = [p for ps in PLATFORMS_BY_KIND.values() for p in ps]
        owner = next((k for k, ps in PLATFORMS_BY_KIND.items() if f.platform in ps), None)
        hint = f" ('{f.platform}' is a {owner} platform)" if owner else did_you_mean(f.platform, everything)
        c.report((*path, "platform"), f"'{f.platform}' is not a platform for kind {f.kind}: choose "
                 f"{' or '.join(platforms)}{hint}")
        ok = False
    model = c.switch_models.get(f.switch_model)
    if model is None and f.switch_model in c.inv.switch_models:
        ok = False  # declared, and already reported where it is declared
    elif model is None:
        c.report((*path, "switch_model"), f"unknown model '{f.switch_model}'"
                 f"{did_you_mean(f.switch_model, list(c.switch_models))}; known: "
                 f"{', '.join(sorted(c.switch_models))}, or declare it under switch_models")
        ok = False
    elif f.kind not in model.kinds:
        fits = sorted(k for k, m in c.switch_models.items() if f.kind in m.kinds)
        c.report((*path, "switch_model"), f"{f.switch_model} is built for {' and '.join(model.kinds)}, not for "
                 f"kind {f.kind} (use {', '.join(fits)})")
        ok = False
    elif f.platform in platforms and f.platform not in model.platforms:
        c.report((*path, "switch_model"), f"{f.switch_model} does not run {f.platform} "
                 f"(it runs {', '.join(model.platforms)})")
        ok = False
    if f.scalable_unit is not None and f.topology != "rail-optimized" and f.role != "oob":
        c.report((*path, "scalable_unit"), "scalable_unit applies to rail-optimized fabrics only")
        ok = False
    return ok


def two_bonds(c: Checks, gname: str, nm: NodeModel) -> NodeModel | None | bool:
    """A group with `bonds: 2` on a northsouth fabric (docs/northsouth.md): servers on the storage
    leaf pairs with two inband and two storage ports; the model as the fabric sees it, its four
    ports in bond order (bond0's two, then bond1's), or False where it cannot be."""
    j = next(j for j, g in enumerate(c.inv.node_groups) if g.name == gname)
    inband = tuple(p for p in nm.ports if p.role == "inband")
    storage = tuple(p for p in nm.ports if p.role == "storage")
    if c.groups[gname].role != "storage":
        c.report(("node_groups", j, "bonds"), f"bonds: 2 is a server's (node group role storage, on the storage leaf "
                 f"pairs); '{gname}' is role {c.groups[gname].role}")
        return False
    if len(inband) != 2 or len(storage) != 2:
        c.report(("node_groups", j, "bonds"), f"bonds: 2 bonds two inband ports (bond0) and two storage ports "
                 f"(bond1); '{gname}' ({nm.key}) has {len(inband)} inband and {len(storage)} storage ports")
        return False
    return replace(nm.for_role("northsouth"), nics=inband + storage)


def attach_node_groups(c: Checks, i: int, f) -> tuple[list[Member], list[Member], bool]:
    """A fabric's node groups: known, listed once, on one fabric only; split into compute and storage."""
    fmembers: list[Member] = []
    fstorage: list[Member] = []
    seen: set[str] = set()
    ok = True
    for j, gname in enumerate(f.node_groups):
        gpath = ("fabrics", i, "node_groups", j)
        if gname not in c.groups:
            c.report(gpath, f"unknown node group '{gname}'{did_you_mean(gname, list(c.groups))}")
            ok = False
            continue
        if gname in seen:
            c.report(gpath, f"node group '{gname}' is listed twice")
            ok = False
            continue
        seen.add(gname)
        claims = ("storage", "inband") if f.role == "northsouth" else (f.role,)  # converged: both roles
        taken = next((r for r in claims if (gname, r) in c.attached), None)
        if taken is not None:
            both = " (northsouth carries storage and inband)" if taken in ("storage", "inband") else ""
            c.report(gpath, f"node group '{gname}' is already attached to fabric '{c.attached[gname, taken]}' "
                     f"for role {taken}; a node group is on one fabric per role{both}")
            ok = False
            continue
        for r in claims:
            c.attached[gname, r] = f.name
        nm = group_model(c, gname)
        if nm is None or gname not in c.hostnames:
            ok = False
            continue
        if not nm.role_ports(f.role):
            have = sorted({p.role for p in nm.ports} | ({"compute"} if nm.nics else set()))
            c.report(gpath, f"node group '{gname}' ({nm.key}) has no {f.role} ports for this {f.role} fabric (it has "
                     f"{', '.join(have) or 'none'}){'' if nm.custom else '; declare a node_models entry for others'}")
            ok = False
            continue
        view = two_bonds(c, gname, nm) if f.role == "northsouth" and c.groups[gname].bonds == 2 else None
        if view is False:
            ok = False
            continue
        if view is None and f.role == "northsouth" and len(nm.role_ports(f.role)) != 2:
            c.report(gpath, f"node group '{gname}' ({nm.key}) has {len(nm.role_ports(f.role))} "
                     f"{nm.port_role(f.role)} ports; a northsouth fabric bonds two, one to each leaf of a pair")
            ok = False
            continue
        if f.role == "northsouth" and not check_bond_names(c, gpath, gname, nm, tenant_vlans(f),
                                                           c.groups[gname].bonds):
            ok = False
            continue
        view = view if isinstance(view, NodeModel) else nm.for_role(f.role)
        (fstorage if c.groups[gname].role == "storage" else fmembers).extend(
            (h, gname, view) for h in c.hostnames[gname])
    servers = sorted({g for _, g, _ in fstorage}, key=list(f.node_groups).index)
    if f.role == "northsouth" and len({c.groups[g].bonds for g in servers}) > 1:  # the pairs fill alike
        c.report(("fabrics", i, "node_groups"), f"the servers of a northsouth fabric have one shape: groups "
                 f"{', '.join(servers)} differ in bonds; put servers with two bonds on a fabric of their own")
        ok = False
    return fmembers, fstorage, ok


def _size_fabric(c: Checks, i: int, f, model: SwitchModel, fmembers: list[Member], fstorage: list[Member]) -> None:
    """The numbers: one link speed, one NIC count per node, ports at that speed, then the sizing plan."""
    path = ("fabrics", i)
    models = {m.key: m for _, _, m in fmembers}
    speeds = sorted({nic.speed for m in [*models.values(), *(m for _, _, m in fstorage)] for nic in m.nics})
    rails = sorted({len(m.nics) for m in models.values()})
    if len(speeds) > 1:
        c.report((*path, "node_groups"), f"the attached nodes mix NIC speeds "
                 f"({', '.join(f'{s}G' for s in speeds)}); one fabric runs one link speed")
        return
    if len(rails) > 1 and f.topology == "rail-optimized":
        what = "compute NICs" if f.role == "compute" else f"{f.role} ports"
        c.report((*path, "node_groups"), f"rail-optimized fabrics need the same number of {what} on every "
                 f"node; these have {', '.join(map(str, rails))}")
        return
    if len(rails) > 1:
        c.report((*path, "node_groups"), f"nodes with different NIC counts ({', '.join(map(str, rails))}) "
                 "cannot share one fabric's leaf layout")
        return
    speed = speeds[0]
    if f.planes > 1:
        if not _planes_fit(c, i, f, models, fstorage, speed):
            return
        speed //= f.planes
    tiers = _speeds(c, i, f, model, speed)
    if tiers is None:
        return
    speed = tiers.get("speed", speed)
    domain = _unit_domain(c, i, f, models)
    if domain is None:
        return
    rules = dict(topology=f.topology, radix=model.radix(speed), speed=speed, rails=rails[0],
                 ratio=parse_ratio(f.oversubscription), scalable_unit=f.scalable_unit, tiers=f.tiers,
                 model=f.switch_model, storage=sum(len(m.nics) for _, _, m in fstorage), domain=domain,
                 storage_spread=max((len(m.nics) for _, _, m in fstorage), default=1),
                 storage_pairs=f.role == "northsouth", even_spines=f.kind == "spectrum-x",
                 **({"pair": True} if f.pair else {}),
                 **{k: v for k, v in tiers.items() if k != "speed"})
    try:
        sized = plan(nodes=len(fmembers), planned_nodes=f.planned_nodes, **rules)  # arithmetic only: cheap
    except SizingError as exc:
        c.report((*path, *exc.field.split(".")), exc.message)
        return
    endpoints = (sized.endpoints + sized.storage) * f.planes
    if endpoints > MAX_ENDPOINTS:  # before anything of that size is built
        c.report((*path, "planned_nodes" if f.planned_nodes else "node_groups"),
                 f"{endpoints:,} switch ports for nodes ({'planned ' if f.planned_nodes else ''}nodes x ports x "
                 f"planes) is more than the {MAX_ENDPOINTS:,} one fabric may have (131,072 GPUs on four planes); "
                 "check planned_nodes, or split the cluster into fabrics")
        return
    if not _cabling_fits(c, i, f, model, sized, fmembers, fstorage) or \
            (f.role == "northsouth" and domain > 1 and not _racks_whole(c, i, f, sized, fmembers)):
        return
    c.plans[f.name] = sized
    c.members[f.name] = fmembers
    c.storage[f.name] = fstorage
    if f.planned_nodes is None:  # a plan is the final size: growing past it is an error, not a warning
        now = c.plans[f.name]

        c.pending.append(PendingGrowth(f.name, len(c.warnings.get(f.name, [])), f, now, rules,
                                       c.located(path, "")))


def _pair_fits(c: Checks, i: int, f, fstorage: list[Member]) -> bool:
    """`pair` (spec/sizing.py `_plane_pair`): a rail-optimized compute fabric of roce or spectrum-x on
    NVUE, sized by auto, without storage nodes or a scalable unit; refused at the key otherwise."""
    why = None
    if f.platform != "nvue":
        why = (f"the peer links' iBGP (one ASN for the pair) is written on Cumulus Linux (NVUE) only, as NVIDIA's "
               f"generator writes it; fabgen's {f.platform} target writes none: remove pair, or use platform nvue")
    elif f.role != "compute" or f.kind not in ("roce", "spectrum-x"):
        why = "a switch pair splits a compute fabric's rails (kinds roce and spectrum-x): remove pair here"
    elif f.topology != "rail-optimized":
        why = "a switch pair splits each node's rails over its two leaves: use topology: rail-optimized"
    elif f.tiers != "auto" or f.scalable_unit is not None:
        why = f"a switch pair is one tier of two leaves: remove {'tiers' if f.tiers != 'auto' else 'scalable_unit'}"
    elif fstorage:
        why = "a switch pair takes compute nodes only: put the storage nodes on a fabric of their own"
    if why is not None:
        c.report(("fabrics", i, "pair"), why)
    return why is None


def _speeds(c: Checks, i: int, f, model: SwitchModel, speed: int) -> dict[str, int] | None:
    """The tiers' speeds (`_tier_speeds`), the host ports' a speed the switch runs; None: refused."""
    tiers = _tier_speeds(c, i, f, model, speed)
    if tiers is not None and "speed" not in tiers and model.mode_for(speed) is None:
        split = f" split across {f.planes} planes" if f.planes > 1 else ""
        c.report(("fabrics", i, "switch_model"), f"{f.switch_model} has no {speed}G ports for these nodes' {speed}G "
                 f"NICs{split} (it runs {', '.join(f'{s}G' for s in model.speeds())})")
        return None
    return tiers


def _tier_speeds(c: Checks, i: int, f, model: SwitchModel, nic: int) -> dict[str, int] | None:
    """The tiers' `cabling.<tier>.speed` (docs/hardware.md "Port speeds"): {} where none is given;
    `speed`, the host ports' where node_leaf's is; `ls_speed`, `sc_speed` and `cage_ports` where a
    switch-to-switch tier runs at another speed (spec/sizing.py `with_speeds`). None: refused, at the key."""
    cab = f.cabling
    given = {t: getattr(cab, t).speed for t in ("node_leaf", "leaf_spine", "spine_core")}
    if all(v is None for v in given.values()):
        return {}
    where = ("fabrics", i, "cabling")
    if f.kind not in ("roce", "spectrum-x") or f.role == "oob":
        t = next(k for k, v in given.items() if v is not None)
        c.report((*where, t, "speed"), "a tier's speed is set on routed Ethernet fabrics (roce, spectrum-x); "
                 "this fabric runs its NICs' speed")
        return None
    runs = ", ".join(f"{s}G" for s in model.speeds())
    host = given["node_leaf"] or nic
    for t, v in given.items():
        mode = model.mode_for(v) if v is not None else None
        if v is not None and mode is None:
            c.report((*where, t, "speed"), f"{f.switch_model}'s cages run {runs}, not {v}G")
            return None
        if mode is not None and f.platform == "nvue" and model.nvue_mode(v) is None:
            c.report((*where, t, "speed"), f"{v}G splits a cage {mode.per_cage} ways, not a breakout NVUE has "
                     f"({', '.join(f'{n}x' for n in NVUE_BREAKOUTS)})")
            return None
    if host > nic:
        c.report((*where, "node_leaf", "speed"), f"the nodes' NICs run at most {nic}G"
                 f"{' a plane' if f.planes > 1 else ''}, not {host}G")
        return None
    ls = given["leaf_spine"] or host
    sc = given["spine_core"] or ls
    per = model.mode_for(host).per_cage  # type: ignore[union-attr]
    for t, v in (("leaf_spine", ls), ("spine_core", sc)):
        mode = model.mode_for(v)
        if v % host or mode is None or mode.per_cage * (v // host) != per:
            c.report((*where, t, "speed"), f"a switch-to-switch tier runs a whole multiple of the host ports' "
                     f"{host}G on the same cages ({host}G x {per} a cage), not {v}G: a slower tier is not built")
            return None
    out: dict[str, int] = {"speed": host}
    if ls == sc == host:
        return out
    if f.platform != "nvue":
        t = "leaf_spine" if ls != host else "spine_core"
        c.report((*where, t, "speed"), f"switch-to-switch links at another speed than the host ports are "
                 f"written for NVUE (Cumulus Linux) only; not built yet on {f.platform}")
        return None
    return {**out, "ls_speed": ls, "sc_speed": sc, "cage_ports": per}


def _planes_fit(c: Checks, i: int, f, models: dict[str, NodeModel], fstorage: list[Member], speed: int) -> bool:
    """A multi-plane fabric: Ethernet, NICs that split (the model names the ports), a speed that
    divides, no storage nodes (their NICs are not split), and room for the plane suffix."""
    path = ("fabrics", i)
    if f.kind == "infiniband":
        c.report((*path, "planes"), "planes split Ethernet NICs (roce, spectrum-x); an InfiniBand fabric has "
                 "one plane")
        return False
    ok = True
    for key, m in models.items():
        if not m.splits:
            c.report((*path, "node_groups"), f"{key} does not say how its NICs split across planes: declare a "
                     "node_models entry with plane_rdma (the RDMA name pattern of the split ports, e.g. mlx5_{k})")
            ok = False
            continue
        if f.planes not in m.plane_counts:
            c.report((*path, "planes"), f"{key}'s NICs split into {' or '.join(map(str, m.plane_counts))} planes, "
                     f"not {f.planes}")
            ok = False
            continue
        names = [n.rdma for ports in m.plane_nics(f.planes) for n in ports]
        where = ("node_models", key, "plane_rdma") if m.custom else (*path, "planes")
        repeated = sorted({n for n in names if names.count(n) > 1})
        invalid = [n for n in names if not re.fullmatch(DEVICE_PATTERN, n)]
        if repeated or invalid:
            c.report(where, f"{key}'s plane_rdma '{m.plane_rdma}' gives "
                     + (f"the same port name to several ports ({', '.join(repeated[:3])}): use {{k}}, or {{rail}} "
                        "and {plane}" if repeated else f"names that are not device names ({invalid[0]})"))
            ok = False
            continue
        taken = {p.rdma: p.role for p in m.ports if p.role != "oob"}
        shared = [n for n in names if n in taken]
        if shared:  # one port on two fabrics: cabled twice, addressed twice, NCCL on a storage port
            c.report(where, f"{key}'s ports on {f.planes} planes (plane_rdma '{m.plane_rdma}': {names[0]} to "
                     f"{names[-1]}) take the names of its {' and '.join(sorted(set(taken[n] for n in shared)))} "
                     f"ports ({', '.join(shared[:4])}): a port is one cable and one address; give plane_rdma and "
                     "ports names apart")
            ok = False
    if speed % f.planes or speed // f.planes < 100:
        c.report((*path, "planes"), f"{speed}G NICs do not split into {f.planes} ports of at least 100G")
        ok = False
    if fstorage:
        c.report((*path, "node_groups"), "storage nodes on a multi-plane fabric: their NICs are not split across "
                 "planes; attach them to a fabric of their own")
        ok = False
    longest = len(f.name) + len(PLANE_SUFFIX.format(p=f.planes))
    if longest > 40:
        c.report((*path, "name"), f"with {f.planes} planes the fabric's names end in "
                 f"'{PLANE_SUFFIX.format(p=f.planes)}': '{f.name}' leaves {longest} characters, more than 40")
        ok = False
    return ok


def _nvlink_domain(c: Checks, i: int, f, models: dict[str, NodeModel]) -> int | None:
    """Nodes per NVLink domain of a fabric's compute nodes (1: each node its own). NVL72 racks come
    whole: a group of trays is whole racks, so racks start at the same place in every unit and
    no unit or Slurm block splits one. None: reported."""
    domains = sorted({m.nvlink_domain for m in models.values()})
    if len(domains) > 1 and f.topology == "rail-optimized":
        c.report(("fabrics", i, "node_groups"), f"the attached nodes mix NVLink domain sizes "
                 f"({', '.join(map(str, domains))} nodes): a rail-optimized unit holds whole domains of one size")
        return None
    ok = True
    for j, g in enumerate(c.inv.node_groups):
        d = c.node_models[g.model].nvlink_domain if g.model in c.node_models else 1
        if d > 1 and g.name in f.node_groups and g.count % d:
            whole = g.count // d
            c.report(("node_groups", j, "count"), f"{g.model} comes in NVLink racks of {d}: {g.count} is {whole} "
                     f"rack{'' if whole == 1 else 's'} and {g.count % d} more; use {whole * d or d} or "
                     f"{(whole + 1) * d}")
            ok = False
    d = domains[-1] if domains else 1
    if ok and d > 1 and f.planned_nodes is not None and f.planned_nodes % d:
        whole = f.planned_nodes // d
        c.report(("fabrics", i, "planned_nodes"), f"the nodes come in NVLink racks of {d}: {f.planned_nodes} is "
                 f"{whole} rack{'' if whole == 1 else 's'} and {f.planned_nodes % d} more; plan whole racks: "
                 f"{whole * d or d} or {(whole + 1) * d}")
        ok = False
    if not ok:
        return None
    return d


def _unit_domain(c: Checks, i: int, f, models: dict[str, NodeModel]) -> int | None:
    """Nodes per NVLink domain a unit holds whole. NVLink racks shape the compute fabric's units
    (jobs are placed by them) and a northsouth fabric's (a rack's trays on one leaf pair); a storage
    or in-band fabric attaches trays like any node (1). None: reported."""
    if f.role == "compute":
        return _nvlink_domain(c, i, f, models)
    return _northsouth_domain(c, i, f, models) if f.role == "northsouth" else 1


def _northsouth_domain(c: Checks, i: int, f, models: dict[str, NodeModel]) -> int | None:
    """A northsouth fabric's units (leaf pairs) hold whole NVLink racks, as the compute fabric's do:
    the largest domain of its nodes (head nodes, each its own, may share the fabric; `_racks_whole`
    checks that no rack spans two pairs). None: a group of trays is not whole racks (reported)."""
    d = max((m.nvlink_domain for m in models.values()), default=1)
    ok = True
    for j, g in enumerate(c.inv.node_groups):
        gd = c.node_models[g.model].nvlink_domain if g.model in c.node_models else 1
        if gd > 1 and g.name in f.node_groups and g.count % gd:
            whole = g.count // gd
            c.report(("node_groups", j, "count"), f"{g.model} comes in NVLink racks of {gd}: {g.count} is {whole} "
                     f"rack{'' if whole == 1 else 's'} and {g.count % gd} more; use {whole * gd or gd} or "
                     f"{(whole + 1) * gd}")
            ok = False
    return d if ok else None


def _racks_whole(c: Checks, i: int, f, sized, fmembers: list[Member]) -> bool:
    """Every NVLink rack's nodes in one unit (a northsouth fabric's leaf pair): nodes fill units in
    order, so a group of trays after nodes that are not whole racks would start mid-unit."""
    first: dict[tuple[str, int], int] = {}
    in_group: dict[str, int] = {}
    for g, (host, group, m) in enumerate(fmembers):
        k = in_group[group] = in_group.get(group, -1) + 1
        if m.nvlink_domain == 1:
            continue
        rack, unit = (group, k // m.nvlink_domain), g // sized.unit_nodes
        if first.setdefault(rack, unit) != unit:
            c.report(("fabrics", i, "node_groups"), f"NVLink rack {rack[1] + 1} of node group '{group}' ({host}) "
                     f"would span units {first[rack] + 1} and {unit + 1} of {sized.unit_nodes} nodes: a unit holds "
                     "whole racks; list the groups of NVL72 trays first, or give the other groups whole units")
            return False
    return True


def _cabling_fits(c: Checks, i: int, f, model: SwitchModel, sized, fmembers: list[Member],
                  fstorage: list[Member]) -> bool:
    """Every tier the fabric has takes a medium that reaches (spec/media.py): else a located
    error at the tier's `media` or `length_m`."""
    from fabgen.spec import media

    forms = sorted({m.form(f.role) for _, _, m in fmembers} | {m.form("storage") for _, _, m in fstorage})
    ok = True
    for tier in media.TIERS[:sized.tiers]:
        want = getattr(f.cabling, media.TIER_KEYS[tier])
        for form in forms if tier == "node-leaf" else [""]:
            speed = sized.tier_speed(tier)
            why = media.tier_medium(f, model, speed, tier, form)
            width = {"leaf-spine": sized.leaf_spine_width, "spine-core": sized.spine_core_width}.get(tier, 0)
            width //= sized.factor(tier)  # links to each switch above, at the tier's speed
            per = (model.mode_for(speed) or model.native).per_cage
            if isinstance(why, media.Medium) and why.per_cage and tier != "node-leaf" and width % per:
                why = (f"{media.TEXT[why.key]} joins a cage to one cage ({per} ports), but each switch here has "
                       f"{width} link(s) to each switch above it: use fibre (mmf, smf)")
            if isinstance(why, str):
                key = "media" if want.media is not None and want.length_m is None or "not offered" in why \
                    or "joins a cage" in why and want.media is not None else "length_m"
                c.report(("fabrics", i, "cabling", media.TIER_KEYS[tier], key), why)
                ok = False
                break
    return ok
