"""Host side: NCCL environment, NIC setup and addresses for every compute node of a fabric.

Files (docs/reference/outputs.md, "A tour of the output"):
* OUT/host-groups/<group>/nccl.env and hca-setup.sh: identical for every node of a group
  (same NIC names, same fabric), so written once per group, not thousands of times;
* OUT/hosts/<node>/netplan.yaml: per node, since addresses differ (Ethernet fabrics).

Every value comes from a decision made once elsewhere: the InfiniBand half of NCCL from
`infiniband.nccl_settings`, the RoCE QoS (DSCP, priorities, ToS, MTU) from
`ethernet.qos_intent`, addresses from the allocation. Decided here:
* NCCL_IB_HCA lists the node's compute NICs in rail order with exact-match names
  (`=mlx5_0:1,...`: without `=`, mlx5_1 also matches mlx5_10-19);
* NCCL_CROSS_NIC: 0 on rail-optimized fabrics (a rail's traffic stays on its leaf), 1 on
  a fat-tree whose node NICs share a leaf, NCCL's default (2) where they span leaves;
* RoCE: NCCL_IB_TC is the ToS byte (DSCP x 4 + ECT(0)), QPs per connection for ECMP
  entropy, NCCL_IB_GID_INDEX only when pinned; Spectrum-X with adaptive routing turns
  NCCL's adaptive routing on;
* hca-setup.sh: LINK_TYPE_P1 (IB 1, Ethernet 2) and ATS_ENABLED=0 (bare metal GPUDirect)
  by mlxconfig, only when they differ; for Ethernet: trust DSCP, PFC on the no-drop
  priority only (none in lossy mode), global pause off, MTU, ECN notification and reaction
  on the RoCE priority, CNP DSCP and priority, the RoCE ToS for all QPs, ARP sysctls for
  NICs that share a subnet. Netdevs are found from the RDMA name at run time, since
  their names change with the link type;
* netplan: each rail NIC's address, MTU, a routing table per NIC (100 + rail) with its
  plane's part of the hosts pool (the pool on one plane) via its leaf and a rule
  `from <address>`, so traffic from a NIC's address (RDMA, NCCL) leaves on its own rail and
  never towards another plane; in the main table, for a client that binds no address (a
  storage mount, a ping), the plane's part of the pool via every port of the plane, metrics
  100, 200, ... (the first port carries it, the next takes over on link loss; netplan writes
  no multipath route); no default route on rail NICs (in-band ports carry it). Ethernet-mode
  netdev names are the InfiniBand ones with `ibp` -> `enp` and the port suffix `np0` (systemd
  naming for a ConnectX port), unless the node model declares them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from netaddr import IPNetwork

from fabgen.addressing import network_of, plane_cidr
from fabgen.context import Context
from fabgen.formats import yamlout
from fabgen.formats.memo import Memo
from fabgen.formats.templating import render as render_template
from fabgen.intent.northsouth import bond_tenants, bond_vlans, group_tenants, host_bonds, host_vlan_interface, tenants
from fabgen.intent.qos import adaptive_routing, options, qos_intent
from fabgen.intent.switches import HOSTS_BFD_CLASS, bfd_timers, bfd_value
from fabgen.spec.catalog import eth_netdev
from fabgen.targets.base import CLUSTER, Target

# Variables current NCCL reads (NVIDIA/nccl docs/userguide/source/env.rst, v2.30); a test keeps
# every rendered variable inside this set.
NCCL_KNOWN = frozenset({
    "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_IB_FIFO_TC", "NCCL_IB_SL",
    "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_AR_THRESHOLD",
    "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT", "NCCL_COLLNET_ENABLE", "NCCL_COLLNET_NODE_THRESHOLD", "NCCL_NVLS_ENABLE",
    "NCCL_NET_GDR_LEVEL", "NCCL_CROSS_NIC", "NCCL_TOPO_FILE", "NCCL_IB_ADDR_FAMILY", "NCCL_IB_ADDR_RANGE",
    "NCCL_IB_PKEY", "NCCL_IB_MERGE_NICS",
})
TABLE_BASE = 100


def _cross_nic(ctx: Context) -> tuple[str | None, str]:
    plan = ctx.fabric.plan
    if plan.topology == "rail-optimized":
        return "0", "rail-optimized: NIC i talks to NIC i of other nodes over its own rail leaf"
    if plan.unit_nodes:
        return "1", "fat-tree with all of a node's NICs on one leaf: any NIC reaches any other in one hop"
    return None, ""


ROCE_V2_IPV4_GID = 3


def nccl_before(version: str, release: tuple[int, int]) -> bool:
    """'2.20.5' < (2, 21)"""
    major, minor = (int(x) for x in version.split(".")[:2])
    return (major, minor) < release


PLANES_FROM = (2, 30, 7)  # NCCL_IB_HCA's <hca>:<port>:<rail>:<plane> form (NVIDIA/nccl v2.30.7-1,
# src/misc/utils.cc parseStringList; earlier releases read '<hca>:<port>' and drop the rest)


def nccl_before_release(version: str, release: tuple[int, ...]) -> bool:
    """'2.30.4' < (2, 30, 7); a version without a patch level is its first release."""
    parts = tuple(int(x) for x in version.split("-")[0].split("."))
    return parts + (0,) * (len(release) - len(parts)) < release


def _hca(ports: list[tuple[Any, int, int]], planes: int, nccl_version: str) -> tuple[str, str]:
    """NCCL_IB_HCA and why: every compute port in rail order (a rail's planes together); with planes,
    the rail and plane of each port where the release reads them."""
    if planes == 1:
        return "=" + ",".join(f"{n.rdma}:1" for n, _, _ in ports), ""
    if nccl_before_release(nccl_version, PLANES_FROM):
        return "=" + ",".join(f"{n.rdma}:1" for n, _, _ in ports), (
            f"; NCCL {nccl_version} reads no plane in NCCL_IB_HCA (2.30.7 and later do): NCCL_CROSS_NIC=0 keeps "
            "each connection on one port index, so on one plane")
    return "=" + ",".join(f"{n.rdma}:1:{r}:{p}" for n, r, p in ports), (
        f"; <hca>:<port>:<rail>:<plane>, so NCCL {nccl_version} never connects two planes")


def nccl_env(ctx: Context, group: str, model, bootstrap: str | None,
             nccl_version: str = "2.28", ports: list[tuple[Any, int, int]] | None = None,
             planes: int = 1) -> list[tuple[str, str, str]]:
    """(variable, value, why) in the order an engineer reads them. ports: (NIC port, rail, plane)
    of every plane (default: the model's NICs, one plane)."""
    f = ctx.fabric
    ports = ports if ports is not None else [(n, r, 0) for r, n in enumerate(model.nics)]
    hca, plane_why = _hca(ports, planes, nccl_version)
    what = (f"{len(ports)} compute ports of {model.key} ({len(ports) // planes} NICs x {planes} planes)"
            if planes > 1 else f"{len(model.nics)} compute NICs of {model.key}")
    rows = [("NCCL_IB_HCA", hca, f"exactly the {what}, in rail order; '=' makes names exact "
             f"(mlx5_1 would also match mlx5_10-19){plane_why}")]
    if bootstrap:
        rows.append(("NCCL_SOCKET_IFNAME", f"={bootstrap}", "bootstrap and out-of-band traffic on the management "
                     "interface, never a rail NIC"))
    else:
        rows.append(("NCCL_SOCKET_IFNAME", "^lo,docker,virbr", "bootstrap: any interface but loopback and container "
                     "bridges (set node_groups[].bootstrap_interface to pin it)"))
    cross, why = _cross_nic(ctx)
    if planes > 1 and cross != "0":
        cross, why = "0", "planes are separate networks: a connection stays on one port index, so on one plane"
    if cross is not None:
        rows.append(("NCCL_CROSS_NIC", cross, why))
    if f.spec.kind == "infiniband":
        from fabgen.intent.infiniband import nccl_settings

        ib = nccl_settings(ctx)
        rows.append(("NCCL_IB_SL", ib["NCCL_IB_SL"], "the service level the subnet manager routes NCCL on"))
        rows.append(("NCCL_IB_ADAPTIVE_ROUTING", ib["NCCL_IB_ADAPTIVE_ROUTING"],
                     "adaptive routing is on in the subnet manager" if ib["NCCL_IB_ADAPTIVE_ROUTING"] == "1"
                     else "the subnet manager routes statically (upstream OpenSM)"))
        if "NCCL_COLLNET_ENABLE" in ib:
            rows.append(("NCCL_COLLNET_ENABLE", ib["NCCL_COLLNET_ENABLE"],
                         "SHARP in-network reductions are on (needs the nccl-rdma-sharp plugin)"))
        return rows
    eth = options(ctx)
    qos = qos_intent(ctx)
    rows.append(("NCCL_IB_TC", str(qos["host_tos"]), f"ToS byte: RoCE DSCP {qos['roce_dscp']} x 4 + ECT(0); the "
                 f"switches map DSCP {qos['roce_dscp']} to no-drop priority {qos['roce_priority']}"))
    rows.append(("NCCL_IB_QPS_PER_CONNECTION", str(eth.qps_per_connection),
                 "several QPs per connection give ECMP more flows to spread"))
    if eth.gid_index is not None:
        rows.append(("NCCL_IB_GID_INDEX", str(eth.gid_index), "pinned in the inventory (default: NCCL picks RoCEv2)"))
    elif nccl_before(nccl_version, (2, 21)):
        rows.append(("NCCL_IB_GID_INDEX", str(ROCE_V2_IPV4_GID),
                     f"NCCL {nccl_version} uses GID 0 (RoCE v1, link-local) unless told: GID 3 is RoCE v2 on the "
                     "NIC's IPv4 address on ConnectX (0-1 link-local v1/v2, 2-3 IPv4 v1/v2); NCCL 2.21 and later "
                     "pick it themselves"))
    if adaptive_routing(ctx)[1]:
        rows.append(("NCCL_IB_ADAPTIVE_ROUTING", "1", "the Spectrum-X switches route adaptively"))
    return rows


def _setup(ctx: Context, model, ports: list[tuple[Any, int, int]] | None = None) -> dict[str, Any]:
    f = ctx.fabric
    ib = f.spec.kind == "infiniband"
    nics = [n for n, _, _ in ports] if ports is not None else list(model.nics)
    data: dict[str, Any] = {
        # the netdev each port's netplan names it (known names only): the script checks the node agrees
        "ib": ib, "nics": [{"rdma": n.rdma, "netdev": eth_netdev(n.netdev) if not ib and n.netdev_known else ""}
                           for n in nics],
        "mlxconfig": [("LINK_TYPE_P1", "1" if ib else "2", "InfiniBand" if ib else "Ethernet"),
                      ("ATS_ENABLED", "0", "bare metal GPUDirect RDMA (1 only for VM passthrough)")],
    }
    if not ib:
        qos = qos_intent(ctx)
        lossless = qos["mode"] == "lossless"
        pfc = ",".join("1" if (lossless and p in qos["no_drop"]) else "0" for p in range(8))
        # NICs of a node sharing a subnet (leaf-subnet, evpn: a plane's one subnet) must answer ARP only for their own
        # address, from their own address, or traffic leaves on the wrong rail
        shared = options(ctx).host_addressing in ("leaf-subnet", "evpn")
        data.update(qos=qos, pfc=pfc, lossless=lossless,
                    sysctls=["net.ipv4.conf.all.arp_announce=1", "net.ipv4.conf.all.arp_ignore=2"] if shared else [])
    return data


TABLES = {"compute": 100, "storage": 200, "inband": 300}  # a role's routing tables: its base + the port's place
METRIC = 100  # a port's main-table routes: the first port's of a plane, then each next port's 100 higher


def _netplan(ctx: Context, host, pool: str, mtu: int, k: int, placeholders: list[str],
             shapes: dict[Any, Any]) -> yamlout.Filled:
    """One fabric's part of a node's netplan: each port's address, a routing table per port
    (the role's base + planes x rail + plane) with its plane's part of the hosts pool via the
    port's leaf and a rule from its address, so traffic from a port's address (RDMA, a bound
    socket) leaves on that port, and only to its own plane. The main table, for a client that
    binds no address (a mount, ip route get), has the plane's part of the hosts pool via every
    port of the plane, one metric per port (100, 200, ...: the first port carries it, the next
    takes over when networkd removes its routes on carrier loss); only the in-band ports carry a
    default route, with the same metrics. pool: the hosts pool (CIDR); mtu: the host MTU;
    k: the host's place in the fabric's hosts (the same on every plane); placeholders: collects the
    interface names that are RDMA names standing in for an unknown netdev. The ports are one
    yamlout.Filled of the node's shape (`shapes`: by its models, then by its ports' names and
    tables): every node of a group has the same ports, only their addresses differ, so the text
    is compiled once and the ports are laid out once."""
    models = tuple(id(pctx.fabric.hosts[k].model) for pctx in ctx.plane_contexts())
    kind = shapes.get(models)  # a node's ports and shape follow from its models (one a plane)
    if kind is None:
        kind = shapes[models] = _node_kind(ctx, k, pool, mtu, shapes)
    shape, ports, unknown = kind
    placeholders += unknown
    name = host.name
    values: list[str] = []  # each port's address/length, subnet, gateway and address
    for ports_of, link_ips, rdma in ports:
        ip, gateway, plen = link_ips[ports_of[name][rdma]]
        values += [f"{ip}/{plen}", network_of(ip, plen), gateway, ip]
    return shape.fill(*values)


def _node_kind(ctx: Context, k: int, pool: str, mtu: int,
               shapes: dict[Any, Any]) -> tuple[yamlout.Shape, list[tuple[Any, Any, str]], list[str]]:
    """What the nodes with the k-th node's models share: the Shape of their ports (by names,
    tables, metrics and planes' blocks: one per layout), where each port's link is found (the
    plane's port map and addresses, its RDMA name), and the placeholder interface names."""
    planes = len(ctx.plane_contexts())
    role = ctx.fabric.spec.role
    layout: list[_Port] = []
    ports: list[tuple[Any, Any, str]] = []
    # each port's subnet is its plane's whole block (the GPU overlay's one VLAN a plane); a VLAN a rail
    # (overlay.vlans rail) is routed as leaf-subnet is: the rail's subnet on-link, the plane's block via its gateway
    eth = options(ctx)
    stretched = eth.host_addressing == "evpn" and eth.overlay.vlans == "plane"
    unknown: list[str] = []
    for pctx, nic, r, p in _plane_ports(ctx, k):
        name = eth_netdev(nic.netdev) if nic.netdev else nic.rdma
        if not nic.netdev_known:
            unknown.append(name)
        layout.append((name, TABLES[role] + planes * r + p, METRIC * (r + 1), _block(pool, pctx), role == "inband",
                       stretched))
        ports.append((pctx.fabric.ports, pctx.allocation.link_ips, nic.rdma))
    service = str(IPNetwork(eth.pools.loopbacks).cidr) if eth.host_routing == "bgp" else ""
    key = (tuple(layout), mtu, pool, service)
    shape = shapes.get(key)
    if shape is None:
        shape = shapes[key] = yamlout.Shape(partial(_ports, *key), 4 * len(layout))
    return shape, ports, unknown


# A port of a node's shape: name, table, metric of its main-table routes, its plane's part of the
# hosts pool (what those reach), whether it also carries the default route (in-band), whether its
# subnet is that whole part (the GPU overlay: on-link, no route via a gateway)
_Port = tuple[str, int, int, str, bool, bool]


def _block(pool: str, pctx: Context) -> str:
    """A plane's part of the fabric's hosts pool (the pool itself on one plane): every address the
    plane's host ports can take, none of another plane's, so a route to it leaves on the plane
    that reaches it (planes are separate networks)."""
    return plane_cidr(pool, pctx.fabric)


def _ports(layout: tuple[_Port, ...], mtu: int, pool: str, service: str, *values: str) -> dict[str, Any]:
    """The make of a node's ports' Shape: each port's entry from its address/length, subnet,
    gateway and address. Its table: the subnet on-link, its plane's block via its leaf (the rule
    from its address); on a multi-plane fabric also the whole pool unreachable, so a bound address
    of one plane finds no way to another plane (its leaf cannot reach it, and the main table would
    send it out another plane's port with this plane's source); the main table: the same block via
    its leaf, with BGP to the host also the loopbacks pool (`service`: the nodes' service addresses,
    which the node's FRR learns as /32s; this route reaches them while FRR is not up, as a mount at
    boot needs), and the default on in-band ports."""
    out: dict[str, Any] = {}
    for n, (name, table, metric, block, default, stretched) in enumerate(layout):
        address, subnet, gateway, ip = values[4 * n:4 * n + 4]
        # stretched (evpn): the port's subnet is its plane's whole block, on-link over the plane's leaves
        routes = [{"to": subnet, "scope": "link", "table": table}]
        if not stretched:
            routes.append({"to": block, "via": gateway, "table": table})
        if block != pool:  # another plane's part: unreachable from this address, not on to the main table
            routes.append({"to": pool, "type": "unreachable", "table": table})
        if not stretched:  # the main table's on-link route is the kernel's own for the address
            routes.append({"to": block, "via": gateway, "metric": metric})
        if service:
            routes.append({"to": service, "via": gateway, "metric": metric})
        if default:
            routes.append({"to": "default", "via": gateway, "metric": metric})
        out[name] = {"mtu": mtu, "addresses": [address], "routes": routes,
                     "routing-policy": [{"from": ip, "table": table}]}
    return out


BOND_PARAMETERS = {  # 802.3ad towards an EVPN-multihomed leaf pair (docs/northsouth.md)
    "mode": "802.3ad", "lacp-rate": "fast", "mii-monitor-interval": 100, "transmit-hash-policy": "layer3+4"}


def _bonded(ctx: Context, host, mtu: int, ethernets: list[dict[str, Any]], extra: dict[str, Any],
            placeholders: list[str]) -> None:
    """A northsouth fabric's part of a node's netplan: its two ports bonded (802.3ad, towards the
    leaf pair's one Ethernet segment), the node's address in each tenant's subnet: the in-band one
    on the bond itself (untagged, as the leaves carry it, so the address a node PXE-boots with is
    the one it runs with), the storage one on a VLAN of the bond; the storage subnet on-link only,
    the default route via the in-band anycast gateway (main table: the node's one default). A
    two-bond server (`bonds: 2`): bond0 its in-band ports with the in-band address, bond1 its
    storage ports with the storage address, each untagged as its leaves carry it."""
    t = ctx.allocation.tenants
    assert t is not None
    members = []
    for nic in host.model.nics:
        name = eth_netdev(nic.netdev) if nic.netdev else nic.rdma
        if not nic.netdev_known:
            placeholders.append(name)
        members.append(name)
    ethernets.append({name: {"mtu": mtu} for name in members})
    overlay = tenants(ctx)
    names = host_bonds(len(members))
    for b, bname in enumerate(names):
        bond: dict[str, Any] = {"interfaces": members[2 * b:2 * b + 2] if len(names) > 1 else members, "mtu": mtu,
                                "parameters": dict(BOND_PARAMETERS)}
        extra.setdefault("bonds", {})[bname] = bond
        carried = bond_tenants(overlay, b, len(names), group_tenants(ctx.groups, host.group))
        native = bond_vlans(carried)["native"]
        for ten in carried:
            routes = [{"to": "default", "via": ten["gateway"]}] if ten["default_route"] else []
            own = {"addresses": [f"{t.nodes[host.name][overlay.index(ten)]}/{t.prefix}"], "routes": routes}
            if ten["vlan"] == native:
                bond.update(own)
            else:
                extra.setdefault("vlans", {})[host_vlan_interface(ten["vlan"], bond=bname)] = {
                    "id": ten["vlan"], "link": bname, "mtu": mtu, **own}


def _netplan_text(plan: dict[str, Any]) -> str:
    """The netplan document in the block style yamlout writes, by f-strings: a 32k-GPU cluster
    has 4,096 of them, and only addresses, names and numbers vary (tests load them back)."""
    net = plan["network"]
    out = ["network:", f"  version: {net['version']}", f"  renderer: {net['renderer']}"]
    for section in ("ethernets", "bonds", "vlans"):
        if section in net:
            out.append(f"  {section}:")
            _entries(out, net[section])
    return "\n".join(out) + "\n"


def _entries(out: list[str], entries: dict[str, Any]) -> None:
    """One netplan section's interfaces: a bond's members and parameters, a VLAN's id and link,
    then MTU, addresses, routes and policy (a bond member has only its MTU). A Joined section
    part by part, a Filled part (a fabric's ports) by its shape's text, compiled by this function."""
    if type(entries) is yamlout.Joined:
        for part in entries.parts:
            if part.__class__ is tuple:  # a Filled part: (shape, values)
                shape, values = part
                out.append(shape.written(_entries_text, yamlout.scalar, "netplan").format(*yamlout.texts(values)))
            else:
                _entries(out, part)
        return
    for name, e in entries.items():
        out.append(f"    {yamlout.scalar(name)}:")
        _links(out, e)
        if "addresses" in e:  # else a bond member
            _addressing(out, e)


def _links(out: list[str], e: dict[str, Any]) -> None:
    """An interface's bond members and parameters, VLAN id and link, and MTU."""
    q = yamlout.scalar
    if "interfaces" in e:
        out.append("      interfaces:")
        out += [f"      - {q(m)}" for m in e["interfaces"]]
    for key in ("id", "link"):
        if key in e:
            out.append(f"      {key}: {q(e[key])}")
    if "mtu" in e:
        out.append(f"      mtu: {e['mtu']}")
    if "parameters" in e:
        out.append("      parameters:")
        out += [f"        {k}: {q(v)}" for k, v in e["parameters"].items()]


def _addressing(out: list[str], e: dict[str, Any]) -> None:
    """An interface's addresses, then its routes and routing policy."""
    q = yamlout.scalar
    out.append("      addresses:")
    out += [f"      - {q(a)}" for a in e["addresses"]]
    if "routes" not in e:  # lo: the node's service address (BGP to the host)
        return
    if e["routes"]:
        out.append("      routes:")
    for r in e["routes"]:
        first = True
        for k, v in r.items():
            out.append(f"      {'- ' if first else '  '}{k}: {q(v)}")
            first = False
    if e.get("routing-policy"):
        out.append("      routing-policy:")
    for r in e.get("routing-policy", []):
        out += [f"      - from: {q(r['from'])}", f"        table: {r['table']}"]


def _entries_text(entries: dict[str, Any]) -> str:
    out: list[str] = []
    _entries(out, entries)
    return "\n".join(out)


def _plane_ports(ctx: Context, k: int) -> list[tuple[Context, Any, int, int]]:
    """(plane's context, port, rail, plane) of the k-th host (its place is the same on every
    plane) on every plane, in rail order, a rail's planes together."""
    out = [(pctx, nic, r, p) for p, pctx in enumerate(ctx.plane_contexts())
           for r, nic in enumerate(pctx.fabric.hosts[k].model.nics)]
    return sorted(out, key=lambda x: (x[2], x[3]))


def _groups(ctx: Context) -> list[dict[str, Any]]:
    """nccl.env and hca-setup.sh of each node group on a compute fabric (its first plane's context)."""
    f = ctx.fabric
    groups: dict[str, Any] = {}
    planes = len(ctx.plane_contexts())
    for k, h in enumerate(f.hosts):
        if h.role != "compute" or h.group in groups:
            continue
        spec = ctx.groups.get(h.group)
        bootstrap = spec.bootstrap_interface if spec is not None else None
        version = spec.nccl_version if spec is not None else "2.28"
        ports = [(nic, r, p) for _, nic, r, p in _plane_ports(ctx, k)]
        groups[h.group] = {"group": h.group, "model": h.model.key, "fabric": f.inventory_name,
                           "kind": f.spec.kind, "platform": f.spec.platform, "nccl_version": version,
                           "planes": planes,
                           "nccl": nccl_env(ctx, h.group, h.model, bootstrap, version, ports, planes),
                           "setup": _setup(ctx, h.model, ports), "count": 0}
    for h in f.hosts:
        if h.group in groups:
            groups[h.group]["count"] += 1
    return list(groups.values())


# A node's netplan as its Ethernet fabrics add to it: group, (fabric, role) of each fabric,
# ethernets, placeholder interface names, and the other sections (bonds, VLANs)
_Node = tuple[str, list[tuple[str, str]], list[dict[str, Any]], list[str], dict[str, Any]]


def _fabric_netplans(ctx: Context, nodes: dict[str, _Node], bgp: dict[str, dict[str, Any]]) -> None:
    """Add one Ethernet fabric's ports to each of its nodes' netplans (`nodes`: hostname -> _Node),
    in the order the fabrics come in the inventory; with BGP to the host, the node's service
    address on lo and its BGP speaker (`bgp`: hostname -> it)."""
    f = ctx.fabric
    eth = options(ctx)
    pool = str(IPNetwork(eth.pools.hosts).cidr)
    alloc = ctx.allocation
    shapes: dict[Any, Any] = {}  # the nodes' ports' shapes and layouts (_netplan)
    for k, h in enumerate(f.hosts):
        if f.spec.role == "compute" and h.role != "compute":
            continue  # storage servers on a compute fabric: their own systems configure them
        group, fabrics, ethernets, placeholders, extra = nodes.setdefault(h.name, (h.group, [], [], [], {}))
        fabrics.append((f.inventory_name, f.spec.role))
        if alloc.tenants is not None:
            _bonded(ctx, h, eth.host_mtu, ethernets, extra, placeholders)
            continue
        ethernets.append(_netplan(ctx, h, pool, eth.host_mtu, k, placeholders, shapes))
        if h.name in alloc.node_asns:
            address = alloc.node_loopbacks[h.name]
            ethernets.append({"lo": {"addresses": [f"{address}/32"]}})
            peers = []
            for nic in h.model.nics:
                idx = f.ports[h.name][nic.rdma]
                leaf = f.links[idx].z
                peers.append({"ip": alloc.link_ips[idx][1], "asn": alloc.asns[leaf], "leaf": leaf,
                              "port": eth_netdev(nic.netdev) if nic.netdev else nic.rdma})
            bgp[h.name] = {"asn": alloc.node_asns[h.name], "address": address, "fabric": f.inventory_name,
                           "bfd": bfd_value(bfd_timers(eth, HOSTS_BFD_CLASS)), "neighbors": peers}


def _role_setups(ctx: Context) -> list[dict[str, Any]]:
    """`<role>-nic-setup.sh` of each node group on a storage or in-band RoCE fabric whose QoS the
    inventory sets: the role's ports get that fabric's class (trust DSCP, PFC, ECN, ToS), never
    the compute one; no firmware settings (a dual-port card's other port may serve another role)."""
    f = ctx.fabric
    eth = f.spec.ethernet
    if f.spec.role not in ("storage", "inband") or eth is None or "qos" not in eth.model_fields_set:
        return []
    out: dict[str, dict[str, Any]] = {}
    for k, h in enumerate(f.hosts):
        if h.group in out:
            continue
        ports = [(nic, r, p) for _, nic, r, p in _plane_ports(ctx, k)]
        setup = {**_setup(ctx, h.model, ports), "mlxconfig": []}
        out[h.group] = {"group": h.group, "model": h.model.key, "fabric": f.inventory_name, "kind": f.spec.kind,
                        "platform": f.spec.platform, "role": f.spec.role, "setup": setup}
    return list(out.values())


def structure(contexts: list[Context], _structured: list | None = None) -> dict[str, Any]:
    """Every node's host files, across the fabrics it is on: the group files from its compute
    fabric, one netplan with the ports of every Ethernet fabric (compute, storage, in-band; the
    BMC is addressed by the BMC itself, not by the host)."""
    groups: list[dict[str, Any]] = []
    setups: list[dict[str, Any]] = []
    nodes: dict[str, _Node] = {}
    bgp: dict[str, dict[str, Any]] = {}
    for ctx in contexts:
        f = ctx.fabric
        if f.plane > 0:  # the first plane's context covers every plane
            continue
        if f.spec.role == "compute":
            groups += _groups(ctx)
        setups += _role_setups(ctx)
        if f.spec.kind != "infiniband" and f.spec.role != "oob":
            _fabric_netplans(ctx, nodes, bgp)
    cluster = contexts[0].cluster if contexts else ""
    items = [(name, group, fabrics, {"network": {"version": 2, "renderer": "networkd", "ethernets": _joined(eths),
                                                 **extra}},
              bgp.get(name), unknown) for name, (group, fabrics, eths, unknown, extra) in nodes.items()]
    return {"cluster": cluster, "groups": groups, "setups": setups, "nodes": items}


def _joined(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A node's ethernets, each fabric's part in the order of the fabrics: one mapping whose
    parts are written in turn (yamlout.Joined); were a name in two parts, the later one's entry
    (the whole-cluster check refuses one port on two fabrics before this runs)."""
    try:
        return yamlout.Joined(*parts)
    except ValueError:
        merged: dict[str, Any] = {}
        for part in parts:
            merged.update(part)
        return merged


# the heads' words after the node's own line, wrapped once (yamlout.comment: lines within yamllint's width)
_COMPUTE_HEAD = yamlout.comment("rail NIC addresses, one routing table per rail, the fabric's hosts in the main "
                                "table, no default route; generated by fabgen")
_NORTHSOUTH_HEAD = yamlout.comment("every port's address and routing table, the north-south bond with in-band "
                                   "untagged (PXE) and storage a VLAN; the default route only via in-band; "
                                   "generated by fabgen")
# a server whose bonds carry a tenant each, untagged (node_groups[].tenants, bonds: 2): no VLAN on them
_SERVER_HEAD = yamlout.comment("every port's address and routing table, each north-south bond with its tenant "
                               "untagged; a default route only via in-band; generated by fabgen")
_FABRICS_HEAD = yamlout.comment("every port's address and routing table, each fabric's hosts in the main table "
                                "over its ports; a default route only on in-band ports; generated by fabgen")
_SHARED_LINES = Memo(yamlout.comment)  # the lines every node of a group shares (its fabrics, its placeholders)


def _head(name: str, group: str, fabrics: list[tuple[str, str]], cluster: str, vlans: bool = True) -> str:
    """The netplan's head comment: the node, then a node on one compute fabric as before, else
    every fabric with its role; the node's own line first, the others shared by its group. `vlans`:
    the north-south bond carries a tenant as a VLAN (a server whose bonds carry one each has none)."""
    if [role for _, role in fabrics] == ["compute"]:
        return yamlout.comment(f"{name} (group {group}) on fabric {fabrics[0][0]} of {cluster}:") + _COMPUTE_HEAD
    named = ", ".join(fab if role == "compute" else f"{fab} ({role})" for fab, role in fabrics)
    what = (_NORTHSOUTH_HEAD if vlans else _SERVER_HEAD) if any(role == "northsouth" for _, role in fabrics) \
        else _FABRICS_HEAD
    return yamlout.comment(f"{name} (group {group}) of {cluster},") + _SHARED_LINES[f"on fabrics {named}:"] + what


PLACEHOLDER = "# PLACEHOLDER interface names"  # ansible/deploy-hosts.yml refuses a netplan holding it


def _placeholder_line(names: list[str]) -> str:
    """The mark of a netplan whose ports are named after RDMA devices for want of their netdevs
    (its first line starts with PLACEHOLDER: the words up to the colon are never broken)."""
    if not names:
        return ""
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return _SHARED_LINES[f"{PLACEHOLDER[2:]} (RDMA device names, not this host's interfaces): {shown}; give "
                         "the node group's rdma_links (`rdma link show` of one node) and render again"]


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    for g in data["groups"]:
        base = f"host-groups/{g['group']}"
        yield f"{base}/nccl.env", render_template("hosts/nccl.env.j2", g=g, cluster=data["cluster"]).encode()
        yield f"{base}/hca-setup.sh", render_template("hosts/hca-setup.sh.j2", g=g, s=g["setup"],
                                                      cluster=data["cluster"]).encode()
    for g in data["setups"]:
        yield (f"host-groups/{g['group']}/{g['role']}-nic-setup.sh",
               render_template("hosts/hca-setup.sh.j2", g=g, s=g["setup"], cluster=data["cluster"]).encode())
    for name, group, fabrics, plan, bgp, unknown in data["nodes"]:
        head = _head(name, group, fabrics, data["cluster"], "vlans" in plan["network"]) + _placeholder_line(unknown) \
            + yamlout.DOCUMENT_START
        yield f"hosts/{name}/netplan.yaml", (head + _netplan_text(plan)).encode()
        if bgp is not None:
            yield f"hosts/{name}/frr.conf", frr_conf(name, bgp, data["cluster"]).encode()


HOST_BFD_PROFILE = "FABRIC"  # the node's bfdd profile where ethernet.bfd.leaf_host sets other timers


def frr_conf(name: str, bgp: dict[str, Any], cluster: str) -> str:
    """The node's BGP speaker (FRR, /etc/frr/frr.conf; bgpd on, and bfdd where the fabric runs BFD):
    eBGP to the leaf of every port over its /31, announcing only the service address (a route-map
    out), taking the fabric's routes (ECMP over the ports). `vtysh --dryrun` accepts it (tests)."""
    out = [f"! {name} of {cluster}: BGP to the leaves of fabric {bgp['fabric']}; generated by fabgen",
           "frr defaults datacenter", f"hostname {name}", "log syslog informational", "!",
           f"ip prefix-list SERVICE seq 10 permit {bgp['address']}/32", "!",
           "route-map SERVICE-OUT permit 10", " match ip address prefix-list SERVICE", "exit", "!",
           "route-map FABRIC-IN permit 10", "exit", "!"]
    bfd = bgp["bfd"]  # true (FRR's default timers), false, or the leaf_host class's timers
    custom = isinstance(bfd, dict)
    if custom:  # the leaf_host class's own timers: a bfdd profile (FRR's defaults are 300 ms x 3)
        out += ["bfd", f" profile {HOST_BFD_PROFILE}", f"  detect-multiplier {bfd['multiplier']}",
                f"  receive-interval {bfd['interval_ms']}", f"  transmit-interval {bfd['interval_ms']}", " exit",
                "exit", "!"]
    out += [f"router bgp {bgp['asn']}", f" bgp router-id {bgp['address']}",
            " neighbor FABRIC peer-group", " neighbor FABRIC remote-as external"]
    if bfd:
        out.append(" neighbor FABRIC bfd" + (f" profile {HOST_BFD_PROFILE}" if custom else ""))
    for n in bgp["neighbors"]:
        out += [f" neighbor {n['ip']} peer-group FABRIC",
                f" neighbor {n['ip']} description {n['leaf']} via {n['port']} (AS {n['asn']})"]
    out += [" !", " address-family ipv4 unicast", f"  network {bgp['address']}/32",
            "  neighbor FABRIC route-map FABRIC-IN in", "  neighbor FABRIC route-map SERVICE-OUT out",
            f"  maximum-paths {len(bgp['neighbors'])}", " exit-address-family", "exit", "!"]
    return "\n".join(out) + "\n"


def shard(data: dict[str, Any], part: int, parts: int) -> dict[str, Any]:
    """Every parts-th node's netplan; the group files in part 0 only."""
    return {**data, "groups": data["groups"] if part == 0 else [], "setups": data["setups"] if part == 0 else [],
            "nodes": data["nodes"][part::parts]}


TARGET = Target("hosts", lambda ctx: True, structure, render, shard, scope=CLUSTER)
