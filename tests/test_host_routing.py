"""Host routing an unmodified client can use (issue 55): each rendered node rebuilt in a network
namespace of its own from its netplan.yaml (a veth per port, its addresses, routes with
their table, metric and scope, and its rules, by `ip -n`), then asked as the kernel would be asked
by a client that binds no address (an NFS mount, a ping): `ip route get <storage server>` leaves
on a storage port, `ip route get 8.8.8.8` on the in-band port, a host of the node's rail and plane
is reached on that plane; and, bound, `ip route get <x> from <port address>` still uses that
port's own table. The netplan without its main-table routes (what fabgen wrote before) fails the
same check, and `netplan generate` keeps the main-table routes in the main table. A port's own
table routes only its plane's part of the hosts pool (the rest unreachable), and the failover on
carrier loss is systemd-networkd's, run on the generated units in a namespace.

Cases: b300-cluster (a two-plane Spectrum-X compute fabric, storage and in-band, /31s and an
in-band leaf subnet), superpod-cluster (InfiniBand compute, RoCE storage with storage servers,
in-band head nodes on leaf subnets) and spectrumx-518-lossy (a compute fabric of two units on leaf subnets)."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import IN_CI, INVENTORIES
from fabgen.pipeline import render_to
from fabgen.targets.hosts import TABLES

IP = shutil.which("ip") or ""  # empty: skipped below
NETPLAN = shutil.which("netplan") or ("/usr/sbin/netplan" if Path("/usr/sbin/netplan").exists() else None)
CAN_NETNS = os.geteuid() == 0 and bool(IP)
if not CAN_NETNS and IN_CI:
    raise RuntimeError("CI runs as root with iproute2: the host routing test needs network namespaces")
needs_netns = pytest.mark.skipif(not CAN_NETNS, reason="needs root and iproute2 (network namespaces)")
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
IFNAMSIZ = 15  # Linux's longest interface name
WAIT = 20  # seconds any one `ip` call may take
CASES = ("b300-cluster", "superpod-cluster", "spectrumx-518-lossy")


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for case in CASES:
        out[case] = tmp_path_factory.mktemp(case) / "out"
        render_to(INVENTORIES / f"{case}.yaml", out[case])
    return out


@pytest.fixture(scope="module")
def plans_of(renders: dict[str, Path]) -> dict[str, dict[str, dict[str, Any]]]:
    """Each case's netplans (netplans()), read once."""
    return {case: netplans(out) for case, out in renders.items()}


# A node as its netplan says ---------------------------------------------------------------------

def netplans(out: Path) -> dict[str, dict[str, Any]]:
    """Every node's `network.ethernets`, by node name."""
    return {p.parent.name: yaml.load(p.read_text(), Loader=LOADER)["network"]["ethernets"]
            for p in sorted((out / "hosts").glob("*/netplan.yaml"))}


def role_of(cfg: dict[str, Any]) -> str | None:
    """A port's role, from its table (TABLES: 100+ compute, 200+ storage, 300+ in-band)."""
    if not cfg.get("routing-policy"):
        return None
    table = cfg["routing-policy"][0]["table"]
    return max((r for r, base in TABLES.items() if table >= base), key=TABLES.__getitem__)


def ports_of(eths: dict[str, Any], role: str) -> list[str]:
    return [n for n, c in eths.items() if role_of(c) == role]


def own_ip(cfg: dict[str, Any]) -> str:
    return str(ipaddress.ip_interface(cfg["addresses"][0]).ip)


def compute_planes(case: str) -> int:
    """The planes of the case's Ethernet compute fabric (1 where it has none)."""
    inv = yaml.safe_load((INVENTORIES / f"{case}.yaml").read_text())
    return max([f.get("planes", 1) for f in inv["fabrics"]
                if f.get("role", "compute") == "compute" and f["kind"] != "infiniband"] or [1])


def storage_servers(plans: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The nodes that are on the storage fabric only, with their ports' addresses and, with BGP to
    the host, the service address on lo (the one a mount names: the node's FRR learns it as a /32,
    and the netplan's route to the loopbacks pool reaches it before FRR is up)."""
    ports = {node: {n: c for n, c in eths.items() if n != "lo"} for node, eths in plans.items()}
    return {node: [own_ip(c) for c in plans[node].values()] for node, eths in ports.items()
            if eths and all(role_of(c) == "storage" for c in eths.values())}


def without_main_routes(eths: dict[str, Any]) -> dict[str, Any]:
    """The netplan as fabgen wrote it before issue 55: no route of the main table but the default."""
    return {n: {**c, "routes": [r for r in c["routes"] if "table" in r or r["to"] == "default"]}
            if "routes" in c else c for n, c in eths.items()}


# The namespace ------------------------------------------------------------------------------------

def ip(ns: str, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    run = subprocess.run([IP, "-n", ns, *args], input=stdin, capture_output=True, text=True, timeout=WAIT)
    if check:
        assert run.returncode == 0, f"ip -n {ns} {' '.join(args)}: {run.stderr}"
    return run


@pytest.fixture
def netns() -> Iterator[Any]:
    """Makes namespaces named for this test and this process only; deletes them all at the end."""
    made: list[str] = []

    def make() -> str:
        name = f"fabgen-hr-{os.getpid()}-{len(made)}"
        subprocess.run([IP, "netns", "add", name], check=True, capture_output=True, timeout=WAIT)
        made.append(name)
        return name
    try:
        yield make
    finally:
        for name in made:
            subprocess.run([IP, "netns", "delete", name], capture_output=True, timeout=WAIT)


def rebuild(ns: str, eths: dict[str, Any], fabric: str | None = None, tag: str = "") -> dict[str, str]:
    """The node's ports in `ns`: a veth per port, its far end up beside it for carrier (renamed
    where the name is longer than Linux takes), its MTU, addresses, routes (table, metric, scope
    as written; `via` on the port) and rules. With `fabric`, the far end of each storage port is
    in that namespace instead, holding the leaf's address (the port's gateway: p2p), its name
    starting with `tag`. Returns the kernel's name -> the netplan's."""
    kernel: dict[str, str] = {}
    links, leaves, addresses, routes = ["link set lo up"], [], [], []
    for n, (name, cfg) in enumerate(eths.items()):
        dev = name if name == "lo" or len(name) <= IFNAMSIZ else f"port{n}"
        kernel[dev] = name
        if dev != "lo":
            far = f"{tag}far{n}"
            if fabric is not None and role_of(cfg) == "storage":
                gateway = next(r["via"] for r in cfg["routes"] if "via" in r)
                plen = ipaddress.ip_interface(cfg["addresses"][0]).network.prefixlen
                links.append(f"link add {dev} type veth peer name {far} netns {fabric}")
                leaves += [f"address add {gateway}/{plen} dev {far}", f"link set {far} up"]
            else:
                links += [f"link add {dev} type veth peer name {far}", f"link set {far} up"]
            links += [f"link set {dev} mtu {cfg.get('mtu', 1500)}", f"link set {dev} up"]
        addresses += [f"address add {a} dev {dev}" for a in cfg.get("addresses", [])]
        for r in cfg.get("routes") or []:
            if r.get("type") == "unreachable":  # no interface, as networkd installs it
                routes.append(f"route add unreachable {r['to']} table {r['table']}")
                continue
            line = f"route add {r['to']}" + (f" via {r['via']}" if "via" in r else "") + f" dev {dev}"
            routes.append(line + "".join(f" {k} {r[k]}" for k in ("scope", "table", "metric") if k in r))
        routes += [f"rule add from {p['from']} table {p['table']}" for p in cfg.get("routing-policy", [])]
    ip(ns, "-batch", "-", stdin="\n".join(links) + "\n")
    if leaves:
        assert fabric is not None
        ip(fabric, "-batch", "-", stdin="\n".join(leaves) + "\n")
    ip(ns, "-batch", "-", stdin="\n".join(addresses + routes) + "\n")
    return kernel


def route_get(ns: str, dst: str, source: str | None = None) -> dict[str, Any] | None:
    """The kernel's answer for a packet to dst (from source, or unbound), or None: no route."""
    return routes_get(ns, [(dst, source)])[0]


def routes_get(ns: str, asked: list[tuple[str, str | None]]) -> list[dict[str, Any] | None]:
    """route_get of each (dst, source), by `ip -batch` (it stops at the first lookup that fails
    and names its line; the rest are asked again)."""
    lines = [f"route get {dst}" + (f" from {source}" if source else "") for dst, source in asked]
    out: list[dict[str, Any] | None] = []
    while len(out) < len(lines):
        run = ip(ns, "-j", "-batch", "-", stdin="\n".join(lines[len(out):]) + "\n", check=False)
        out += [json.loads(line)[0] for line in run.stdout.splitlines() if line.strip()]
        if run.returncode != 0:
            assert f"Command failed -:{len(run.stdout.splitlines()) + 1}" in run.stderr, run.stderr
            out.append(None)
    return out


def problems(ns: str, eths: dict[str, Any], kernel: dict[str, str], servers: dict[str, list[str]],
             peers: dict[str, str], planes: int) -> list[str]:
    """What an unbound or bound client of the rebuilt node finds wrong. peers: for each compute
    port, an address of another node on the same rail and plane."""
    address_of = {name: own_ip(c) for name, c in eths.items() if name != "lo"}
    own = {own_ip(c) for c in eths.values()}  # its ports' and its service address
    storage, inband = ports_of(eths, "storage"), ports_of(eths, "inband")
    asked: list[tuple[str, str | None, list[str], str]] = []  # (destination, source, the right ports, what)
    if storage:
        asked += [(a, None, storage, f"unbound to storage server {server}")
                  for server, addresses in servers.items() for a in addresses if a not in own]
    if inband:
        first = min(inband, key=lambda n: next(r["metric"] for r in eths[n]["routes"] if r["to"] == "default"))
        asked.append(("8.8.8.8", None, [first], "the default route"))
    for name, cfg in eths.items():
        if role_of(cfg) is None:
            continue
        table = cfg["routing-policy"][0]["table"]
        pool = next(r["to"] for r in cfg["routes"] if r.get("table") == table and "via" in r)
        asked.append((str(ipaddress.ip_network(pool)[-2]), address_of[name], [name], f"bound to {name}'s own table"))
        if name in peers:  # unbound to a host of its rail and plane: out of a port of that plane
            plane = (table - TABLES["compute"]) % planes
            same = [n for n in ports_of(eths, "compute")
                    if (eths[n]["routing-policy"][0]["table"] - TABLES["compute"]) % planes == plane]
            asked.append((peers[name], None, same, f"unbound to a host on {name}'s rail"))
    out = []
    for (dst, source, want, what), got in zip(asked, routes_get(ns, [(d, s) for d, s, _, _ in asked])):
        dev = kernel.get(got["dev"]) if got else None
        if dev not in want:
            out.append(f"{what}: {dst}" + (f" from {source}" if source else "") +
                       (f" leaves on {dev}, not {' or '.join(want)}" if got else " is unreachable"))
        elif source is None and got is not None and got.get("prefsrc") != address_of[dev]:
            out.append(f"{what}: {dst} leaves on {dev} from {got.get('prefsrc')}, not its address")
    return out


def rail_peers(plans: dict[str, dict[str, Any]], node: str) -> dict[str, str]:
    """For each compute port of node, the address of another node's port with the same table (same
    rail, same plane) behind another leaf (outside the port's subnet, which is on-link anyway)."""
    out = {}
    for name, cfg in plans[node].items():
        if role_of(cfg) != "compute":
            continue
        table, subnet = cfg["routing-policy"][0]["table"], ipaddress.ip_interface(cfg["addresses"][0]).network
        for other, eths in plans.items():
            there = [own_ip(c) for c in eths.values() if role_of(c) == "compute"
                     and c["routing-policy"][0]["table"] == table]
            if other != node and there and ipaddress.ip_address(there[0]) not in subnet:
                out[name] = there[0]
                break
    return out


EVERY_NODE = 160  # a cluster up to this many nodes is checked node by node (b300-cluster, superpod-cluster)


def sample(plans: dict[str, dict[str, Any]]) -> list[str]:
    """Every node of a cluster up to EVERY_NODE; of a larger one every storage server and
    in-band-only node, and the first, a middle and the last node of the others (the nodes'
    shapes, not their count, make spectrumx-518-lossy's cases)."""
    if len(plans) <= EVERY_NODE:
        return sorted(plans)
    others = [n for n, e in plans.items() if ports_of(e, "compute")]
    keep = {n for n, e in plans.items() if not ports_of(e, "compute")}
    keep |= {others[0], others[len(others) // 2], others[-1]} if others else set()
    return sorted(keep)


# The tests ----------------------------------------------------------------------------------------

@needs_netns
@pytest.mark.parametrize("case", CASES)
def test_an_unbound_client_routes_over_the_right_ports(case: str, plans_of: dict[str, Any], netns: Any) -> None:
    """Rebuilt nodes (every node of the two clusters with storage; of the 518-node one every
    storage server and head node, and compute nodes from the start, middle and end): unbound to
    every storage server (its ports and service address) over a storage port and from that port's
    address, the default over the first in-band port, a host of the same rail over the same plane,
    and bound traffic in the port's own table."""
    plans = plans_of[case]
    servers = storage_servers(plans)
    planes = compute_planes(case)
    checked = 0
    for node in sample(plans):
        ns = netns()
        kernel = rebuild(ns, plans[node])
        assert problems(ns, plans[node], kernel, servers, rail_peers(plans, node), planes) == [], node
        checked += 1
    assert checked >= 3
    assert bool(servers) == (case != "spectrumx-518-lossy"), "the cases with storage have storage servers to reach"


@needs_netns
def test_the_second_storage_port_takes_over(plans_of: dict[str, Any], netns: Any) -> None:
    """The metrics fail over: with its first storage port down (networkd drops a port's routes
    when it loses carrier; the kernel drops them when it is down), an unbound client of the node
    reaches the storage servers over the second; with both down, only the in-band default is left."""
    plans = plans_of["b300-cluster"]
    eths = plans["gpu001"]
    first, second = ports_of(eths, "storage")
    server = storage_servers(plans)["store01"][0]
    ns = netns()
    kernel = rebuild(ns, eths)
    dev = {v: k for k, v in kernel.items()}
    for down, want in ((None, first), (first, second), (second, None)):
        if down is not None:
            ip(ns, "link", "set", dev[down], "down")
        got = route_get(ns, server)
        assert got is not None
        if want is not None:
            assert kernel[got["dev"]] == want, (down, got)
        else:  # no storage port left: the default route (as before issue 55 with both up)
            assert kernel[got["dev"]] in ports_of(eths, "inband"), got


NETWORKD = next((p for p in ("/lib/systemd/systemd-networkd", "/usr/lib/systemd/systemd-networkd")
                 if Path(p).exists()), None)
UNSHARE = shutil.which("unshare")
# networkd in the node's namespace, in a mount namespace of its own: its units from the netplan's,
# no other .network file, /sys read-only so it does not wait for udev (systemd's udev_available())
NETWORKD_SH = """set -e
mount -o remount,ro /sys
mount -t tmpfs tmpfs /run/systemd
mkdir -p /run/systemd/network /run/systemd/netif
cp "$1"/* /run/systemd/network/
mount -t tmpfs tmpfs /etc/systemd/network
if id systemd-network >/dev/null 2>&1; then chown systemd-network /run/systemd/netif; fi
exec "$2"
"""


def port_for(ns: str, dst: str, want: str) -> str | None:
    """The port `ip route get dst` names, asked until it is `want` or WAIT seconds have passed
    (networkd configures ports one by one); None: no route."""
    deadline = time.monotonic() + WAIT
    while True:
        got = route_get(ns, dst)
        dev = got["dev"] if got else None
        if dev == want or time.monotonic() > deadline:
            return dev
        time.sleep(0.1)


@needs_netns
@pytest.mark.skipif(NETWORKD is None or UNSHARE is None or NETPLAN is None,
                    reason="needs systemd-networkd, unshare and netplan.io")
def test_networkd_fails_over_on_carrier_loss(renders: dict[str, Path], plans_of: dict[str, Any], netns: Any,
                                             tmp_path: Path) -> None:
    """What performs the failover: gpu001's rendered netplan through `netplan generate` and
    systemd-networkd, run in the node's namespace, its ports veths whose far ends stand for the
    leaves. An unbound client to a storage server leaves by the first storage port; when that
    port loses its carrier (its far end down, the port itself up), networkd removes its routes and
    the second port carries it, and it comes back with the carrier (netplan writes neither
    ConfigureWithoutCarrier= nor IgnoreCarrierLoss=: `ignore-carrier` is false by default). The
    kernel alone (the lab, with no networkd) keeps the route over the port without carrier: that is no failover."""
    assert NETPLAN is not None and NETWORKD is not None and UNSHARE is not None
    plans = plans_of["b300-cluster"]
    eths = plans["gpu001"]
    first, second = ports_of(eths, "storage")
    server = storage_servers(plans)["store01"][0]
    root = tmp_path / "root"
    (root / "etc" / "netplan").mkdir(parents=True)
    conf = root / "etc" / "netplan" / "60-fabgen.yaml"
    conf.write_text((renders["b300-cluster"] / "hosts" / "gpu001" / "netplan.yaml").read_text())
    conf.chmod(0o600)
    run = subprocess.run([NETPLAN, "generate", "--root-dir", str(root)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    units = "".join(p.read_text() for p in (root / "run" / "systemd" / "network").glob("*.network"))
    assert "ConfigureWithoutCarrier" not in units and "IgnoreCarrierLoss" not in units  # networkd's default
    node, leaves = netns(), netns()
    far = {}
    lines = ["link set lo up"]
    for n, name in enumerate(n for n in eths if n != "lo"):
        assert len(name) <= IFNAMSIZ
        far[name] = f"far{n}"
        lines.append(f"link add {name} type veth peer name far{n} netns {leaves}")
    ip(node, "-batch", "-", stdin="\n".join(lines) + "\n")
    ip(leaves, "-batch", "-", stdin="".join(f"link set {f} up\n" for f in far.values()))
    daemon = subprocess.Popen([IP, "netns", "exec", node, UNSHARE, "-m", "sh", "-c", NETWORKD_SH, "networkd",
                               str(root / "run" / "systemd" / "network"), NETWORKD],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert port_for(node, server, first) == first, "networkd configured the ports"
        ip(leaves, "link", "set", far[first], "down")  # the cable's far end: gpu001's port stays admin up
        assert port_for(node, server, second) == second
        link = json.loads(ip(node, "-j", "link", "show", first).stdout)[0]
        assert "UP" in link["flags"] and "LOWER_UP" not in link["flags"], link  # no carrier; networkd acted
        ip(leaves, "link", "set", far[first], "up")
        assert port_for(node, server, first) == first
    finally:
        daemon.kill()
        daemon.wait(timeout=WAIT)
    # the kernel alone, as the lab builds a node: carrier lost, the route over the port stays
    alone = netns()
    kernel = rebuild(alone, eths, tag="k")
    dev = {v: k for k, v in kernel.items()}
    ip(alone, "link", "set", f"kfar{list(eths).index(first)}", "down")
    assert "NO-CARRIER" in ip(alone, "link", "show", dev[first]).stdout
    got = route_get(alone, server)
    assert got is not None and kernel[got["dev"]] == first, got


@needs_netns
@pytest.mark.parametrize("case,node", [("b300-cluster", "gpu001"), ("b300-cluster", "store02"),
                                       ("superpod-cluster", "dgx001"), ("spectrumx-518-lossy", "sx2-gpu01")])
def test_the_check_refuses_the_netplan_without_main_table_routes(case: str, node: str, plans_of: dict[str, Any],
                                                                 netns: Any) -> None:
    """The old netplan (source-bound tables, the in-band default, nothing else in the main table)
    fails the check: a storage server is unreachable unbound, or reached through in-band; a host
    of the same rail is unreachable."""
    plans = plans_of[case]
    old = without_main_routes(plans[node])
    assert old != plans[node]
    ns = netns()
    kernel = rebuild(ns, old)
    found = problems(ns, old, kernel, storage_servers(plans), rail_peers(plans, node), compute_planes(case))
    assert found, node
    assert all(p.startswith("unbound") for p in found), found  # bound traffic and the default were right
    if ports_of(old, "inband"):
        assert any("leaves on" in p and "storage server" in p for p in found), found  # out of the in-band default
    elif ports_of(old, "storage"):
        assert any("storage server" in p and p.endswith("unreachable") for p in found), found


def plane_parts(out: Path) -> dict[tuple[str, int], str]:
    """(role, plane index) -> the hosts pool's part of that plane, as report.json names it (the
    whole pool for a fabric of one plane)."""
    fabrics = json.loads((out / "report.json").read_text())["fabrics"]
    parts = {}
    for f in fabrics.values():
        if "addressing" not in f:
            continue
        plane = f["network_plane"]["plane"] - 1 if "network_plane" in f else 0
        parts[f["role"], plane] = f["addressing"].get("plane_pools", f["addressing"]["pools"])["hosts"]
    return parts


def service_pools(out: Path) -> dict[str, str]:
    """role -> the loopbacks pool of a fabric with BGP to the host (its nodes' service addresses)."""
    fabrics = json.loads((out / "report.json").read_text())["fabrics"]
    return {f["role"]: f["addressing"]["pools"]["loopbacks"] for f in fabrics.values()
            if f.get("addressing", {}).get("host_routing") == "bgp"}


def pool_routes_off_plane(eths: dict[str, Any], parts: dict[tuple[str, int], str], planes: int,
                          services: dict[str, str] | None = None) -> list[str]:
    """Every via route of a port (its own table's and the main table's, not the default) that is
    not exactly its plane's part of the hosts pool (the plane from its table: role base + planes x
    rail + plane), apart from one main-table route to the service addresses' pool with BGP to the
    host (`services`: role -> that pool)."""
    services = services or {}
    bad = []
    for name, cfg in eths.items():
        role = role_of(cfg)
        if role is None:
            continue
        table = cfg["routing-policy"][0]["table"]
        plane = (table - TABLES[role]) % planes if role == "compute" else 0
        vias = [r for r in cfg["routes"] if "via" in r and r["to"] != "default"]
        if role in services:  # the service addresses, main table only, once
            assert [r for r in vias if r["to"] == services[role]] == \
                [r for r in vias if r["to"] == services[role] and "table" not in r][:1], (name, vias)
            vias = [r for r in vias if r["to"] != services[role]]
        assert {("table" in r) for r in vias} == {True, False}, (name, vias)  # one route of each table
        bad += [f"{name} {'table ' + str(r['table']) if 'table' in r else 'main'}: {r['to']}, not {parts[role, plane]}"
                for r in vias if r["to"] != parts[role, plane]]
    return bad


@pytest.mark.parametrize("case", CASES)
def test_every_pool_route_is_its_planes_part(case: str, renders: dict[str, Path], plans_of: dict[str, Any]) -> None:
    """Each port's own table and the main table route only its plane's part of the hosts pool (on a
    two-plane fabric a bound address of plane 2 finds no route to plane 1, whose leaves do not reach
    it); the check refuses the whole pool in a port's table."""
    parts, services = plane_parts(renders[case]), service_pools(renders[case])
    planes = compute_planes(case)
    assert bool(services) == (case == "superpod-cluster")  # its storage fabric runs BGP to the host
    for node, eths in plans_of[case].items():
        assert pool_routes_off_plane(eths, parts, planes, services) == [], node
    if planes > 1:
        node, eths = next((n, e) for n, e in plans_of[case].items() if ports_of(e, "compute"))
        pool = json.loads((renders[case] / "report.json").read_text())["fabrics"]["sx-plane1"]["addressing"]
        for n in ports_of(eths, "compute"):  # the rest of the pool, other planes', unreachable in its table
            assert [(r["to"], r["table"]) for r in eths[n]["routes"] if r.get("type") == "unreachable"] == \
                [(pool["pools"]["hosts"], eths[n]["routing-policy"][0]["table"])], n
        whole = {n: {**c, "routes": [{**r, "to": pool["pools"]["hosts"]} if "table" in r and "via" in r else r
                                     for r in c["routes"]]} if role_of(c) == "compute" else c for n, c in eths.items()}
        assert len(pool_routes_off_plane(whole, parts, planes)) == len(ports_of(eths, "compute")), node


@needs_netns
def test_a_bound_address_of_one_plane_does_not_reach_another(plans_of: dict[str, Any], netns: Any) -> None:
    """gpu001 of b300-cluster (two planes): from its plane-2 address of rail 0, a plane-1 host of
    rail 0 is unreachable (no route in the port's table: its leaf cannot reach plane 1), while a
    plane-2 host is reached on the same port."""
    plans = plans_of["b300-cluster"]
    eths = plans["gpu001"]
    by_table = {c["routing-policy"][0]["table"]: n for n, c in eths.items() if role_of(c) == "compute"}
    plane1, plane2 = by_table[TABLES["compute"]], by_table[TABLES["compute"] + 1]
    peers = rail_peers(plans, "gpu001")
    ns = netns()
    kernel = rebuild(ns, eths)
    source = own_ip(eths[plane2])
    assert route_get(ns, peers[plane1], source) is None
    got = route_get(ns, peers[plane2], source)
    assert got is not None and kernel[got["dev"]] == plane2, got


@pytest.mark.skipif(NETPLAN is None and not IN_CI, reason="netplan.io is not installed")
@pytest.mark.parametrize("case,node", [("b300-cluster", "gpu001"), ("superpod-cluster", "store01"),
                                       ("spectrumx-518-lossy", "sx2-gpu01")])
def test_netplan_keeps_the_main_table_routes(case: str, node: str, renders: dict[str, Path],
                                             tmp_path: Path) -> None:
    """`netplan generate` writes each main-table route into the port's networkd unit as a [Route]
    with a gateway, a metric and no table (networkd's main table), and each table route with its
    table."""
    assert NETPLAN is not None
    text = (renders[case] / "hosts" / node / "netplan.yaml").read_text()
    (tmp_path / "etc" / "netplan").mkdir(parents=True)
    conf = tmp_path / "etc" / "netplan" / "60-fabgen.yaml"
    conf.write_text(text)
    conf.chmod(0o600)
    run = subprocess.run([NETPLAN, "generate", "--root-dir", str(tmp_path)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    mains = 0
    for name, cfg in yaml.safe_load(text)["network"]["ethernets"].items():
        unit = (tmp_path / "run" / "systemd" / "network" / f"10-netplan-{name}.network").read_text()
        sections = [dict(line.split("=", 1) for line in s.strip().splitlines()[1:])
                    for s in re.split(r"^(?=\[)", unit, flags=re.M) if s.startswith("[Route]\n")]
        for r in cfg.get("routes", []):
            want = {"Destination": "0.0.0.0/0" if r["to"] == "default" else r["to"]}
            want |= {"Gateway": r["via"]} if "via" in r else {}
            want |= {"Type": r["type"]} if "type" in r else {}
            want |= {"Table": str(r["table"])} if "table" in r else {"Metric": str(r["metric"])}
            match = [s for s in sections if want.items() <= s.items()]
            assert match, (name, r, sections)
            if "table" not in r:
                assert all("Table" not in s for s in match), (name, r)
                mains += r["to"] != "default"
    assert mains >= 2, "a main-table route over every port of a fabric"


SERVER = """
import socket, sys
s = socket.socket()
s.bind(("0.0.0.0", 5001))
s.listen()
s.settimeout(float(sys.argv[2]))
for _ in range(int(sys.argv[1])):
    c, peer = s.accept()
    c.sendall(c.getsockname()[0].encode())
    print(peer[0], flush=True)
    c.close()
"""
CLIENT = """
import socket, sys, time
end = time.monotonic() + 3
while True:
    try:
        c = socket.create_connection((sys.argv[1], 5001), timeout=2)
        break
    except ConnectionRefusedError:
        if time.monotonic() > end:
            raise
        time.sleep(0.05)
print(c.getsockname()[0], c.recv(64).decode())
"""


def connects(node: str, server: str, eths: dict[str, Any], server_eths: dict[str, Any], netns: Any) -> list[str]:
    """Rebuild node and server with their storage ports cabled to one namespace standing for the
    storage fabric (forwarding between the leaves' addresses); connect over TCP, unbound, from the
    node to every address of the server. Returns, for each, the node's source address and the
    address the server answered on, or the client's error."""
    fabric, client_ns, server_ns = netns(), netns(), netns()
    subprocess.run([IP, "netns", "exec", fabric, "sysctl", "-qw", "net.ipv4.ip_forward=1"], check=True,
                   timeout=WAIT)
    rebuild(client_ns, eths, fabric, "c")
    rebuild(server_ns, server_eths, fabric, "s")
    targets = [own_ip(c) for n, c in server_eths.items() if n != "lo"]
    listener = subprocess.Popen([IP, "netns", "exec", server_ns, sys.executable, "-c", SERVER, str(len(targets)),
                                 "8"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = []
    try:
        for target in targets:
            run = subprocess.run([IP, "netns", "exec", client_ns, sys.executable, "-c", CLIENT, target],
                                 capture_output=True, text=True, timeout=WAIT)
            out.append(f"{target}: " + (run.stdout.strip() if run.returncode == 0
                                        else run.stderr.strip().splitlines()[-1]))
    finally:
        listener.kill()
        listener.wait(timeout=WAIT)
    return out


@needs_netns
def test_an_unbound_tcp_connect_reaches_the_storage_server(plans_of: dict[str, Any], netns: Any) -> None:
    """gpu001 and store01 of b300-cluster rebuilt, their storage ports cabled to a namespace that
    forwards between the leaves' addresses: a TCP connect that binds no address, to each of the
    server's addresses, leaves from one of gpu001's storage addresses and is answered (the server's
    reply leaves by its own port's table). The netplan without main-table routes sends it to the
    in-band gateway, where it never arrives."""
    plans = plans_of["b300-cluster"]
    eths, server = plans["gpu001"], plans["store01"]
    storage = {own_ip(eths[n]) for n in ports_of(eths, "storage")}
    done = connects("gpu001", "store01", eths, server, netns)
    assert len(done) == 2
    for line in done:
        target, rest = line.split(": ", 1)
        source, answered = rest.split()
        assert source in storage and answered == target, line
    old = connects("gpu001", "store01", without_main_routes(eths), server, netns)
    assert all(("timed out" in line or "No route to host" in line) for line in old), old  # the in-band gateway


@needs_netns
def test_a_storage_service_address_is_reached_before_frr_is_up(renders: dict[str, Path], plans_of: dict[str, Any],
                                                               netns: Any) -> None:
    """With BGP to the host (superpod-cluster's storage fabric) a mount names a storage server's
    service address (lo): the netplan alone reaches it over a storage port; without the route to
    the loopbacks pool it is unreachable (FRR's /32s come only once BGP is up)."""
    plans, services = plans_of["superpod-cluster"], service_pools(renders["superpod-cluster"])
    servers = storage_servers(plans)
    lo = {s: [own_ip(plans[s]["lo"])] for s in servers}
    node = next(n for n, e in plans.items() if ports_of(e, "storage") and n not in servers)  # a DGX
    eths = plans[node]
    ns = netns()
    assert problems(ns, eths, rebuild(ns, eths), lo, {}, 1) == []
    stripped = {n: {**c, "routes": [r for r in c["routes"] if r["to"] != services.get(role_of(c) or "")]}
                if "routes" in c else c for n, c in eths.items()}
    ns = netns()
    found = problems(ns, stripped, rebuild(ns, stripped), lo, {}, 1)
    assert len(found) == len(lo) and all(p.endswith("is unreachable") or "leaves on" in p for p in found), found
