"""The one boundary where a render folder's values enter the lab (docs/emulate.md, "Untrusted renders").

`fabgen emulate` runs as root and turns values read from rendered files into `ip -batch` lines,
interface and bridge names, FRR config lines and report lines. A render folder is input: anyone
may have edited it. So every value that reaches one of those is checked here against what fabgen
itself writes (addresses parse as addresses, names match the patterns fabgen writes, numbers are
numbers in range) before any namespace exists, and anything else is an `InputError` naming the
file and the line, key or column. The translators (eos.py, nvue.py, sonic.py, evpn.py) read the
shape of a config; this module holds what they read to the values a lab may use.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from fabgen.emulate.model import Host, Router, TranslateError
from fabgen.rendered.paths import ADDRESS_COLUMNS, CABLING_COLUMNS

# Names as fabgen writes them (spec/schema.py's DEVICE_PATTERN, the vendors' port names, a
# Linux netdev of at most 15 characters, FRR's words for peer groups, route maps and VRFs).
DEVICE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
PORT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./:-]{0,63}")  # Ethernet1/1, swp1s0, Ethernet0, mlx5_0, IB1/1/1
IFNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,14}")  # IFNAMSIZ is 16 with its NUL
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MAC = re.compile(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}")
ROLES = frozenset({"leaf", "spine", "core", "node", "bmc", "anycast", "access", "border", "superspine"})
REMOTE_AS = frozenset({"external", "internal"})
ASN_MAX = 4294967295
T = TypeVar("T")
MAX_ROWS = 2_000_000  # a table of a 131k-GPU plane has ~600k rows


class InputError(TranslateError):
    """A value of a rendered file that fabgen never writes there: one line, file and where in it."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# Words `ip` reads as its own where an interface name stands (`ip link set help ...`), and the
# loopback: no interface fabgen writes is called so, and the lab would fail on them unlocated.
IP_WORDS = frozenset({"lo", "help", "all", "default", "dev", "type", "name", "up", "down", "master", "nomaster",
                      "netns", "alias", "mtu", "address", "peer", "link", "route", "rule", "addr", "vrf", "table",
                      "via", "from", "to", "scope", "metric", "group", "state", "vlan", "id"})


def name(value: object, pattern: re.Pattern[str], where: str, what: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value) or (pattern is IFNAME and value in IP_WORDS):
        raise InputError(f"{where}: {what} {_shown(value)} is not a name fabgen writes")
    return value


def integer(value: object, low: int, high: int, where: str, what: str) -> int:
    """An integer in [low, high]; a digit string counts (CSV and YAML keys), a bool does not."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,10}", value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{where}: {what} {_shown(value)} is not a number from {low} to {high}")
    return value


def _parsed(value: object, text: str, parse: Callable[[str], object], where: str, what: str, why: str) -> str:
    """`value` when it is a string of the characters `text` allows and `parse` takes it; else InputError."""
    try:
        if not isinstance(value, str) or not re.fullmatch(text, value):
            raise ValueError
        parse(value)
    except ValueError:
        raise InputError(f"{where}: {what} {_shown(value)} {why}") from None
    return value


def cidr(value: object, where: str, what: str = "address") -> str:
    """An address with its prefix length, as fabgen writes it (`10.0.0.1/31`, `fd00::1/64`)."""
    return _parsed(value, r"[0-9a-fA-F.:]+/[0-9]{1,3}", ipaddress.ip_interface, where, what,
                   "is not an address with its prefix length")


def address(value: object, where: str, what: str = "address") -> str:
    """A plain IPv4 or IPv6 address (a router id, a next hop, a BGP peer)."""
    return _parsed(value, r"[0-9a-fA-F.:]+", ipaddress.ip_address, where, what, "is not an IP address")


def network(value: object, where: str, what: str = "prefix") -> str:
    """A prefix whose host bits are zero (a route's destination, a prefix-list entry), or `default`."""
    if value == "default":
        return "default"
    cidr(value, where, what)
    try:
        ipaddress.ip_network(str(value))
    except ValueError:
        raise InputError(f"{where}: {what} {_shown(value)} has host bits set: not a prefix fabgen writes") from None
    return str(value)


def text(data: bytes, path: str) -> str:
    """A rendered file's text: UTF-8, as fabgen writes every file."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def items(mapping: Any, key: str, where: str) -> list[Any]:
    """mapping[key] as a list (absent: empty), InputError where it is something else."""
    if not isinstance(mapping, dict):
        raise InputError(f"{where}: not a mapping, as fabgen writes it")
    value = mapping.get(key, [])
    if not isinstance(value, list):
        raise InputError(f"{where}.{key}: not a list, as fabgen writes it")
    return value


def translated(translate: Callable[[str, str, str], T], device: str, data: bytes, path: str) -> T:
    """`translate(device, text, path)` where the translator's own reading of a malformed value (a
    number that is not one, a list where a mapping belongs) ends as an InputError on the file,
    never as a traceback: the translators read shape, this module the values."""
    try:
        return translate(device, text(data, path), path)
    except TranslateError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError, OverflowError) as exc:
        raise InputError(f"{path}: a value fabgen never writes there ({type(exc).__name__}: "
                         f"{str(exc)[:100]})") from None


# Tables ---------------------------------------------------------------------------------------------

_CELL = {"device": DEVICE, "a_device": DEVICE, "z_device": DEVICE, "peer_device": DEVICE,
         "a_port": PORT, "z_port": PORT, "interface": PORT, "peer_interface": PORT}
COLUMNS = {"cabling.csv": CABLING_COLUMNS, "addresses.csv": ADDRESS_COLUMNS}


# What the tables of one run may hold together: CSV text read into rows takes about 50 times its
# size in memory (2 million rows, 22 MB, took 1.15 GB), and a 65,536-GPU plane's two tables are
# about 40 MB; a render's 1 GiB would otherwise become tens of GB.
MAX_TABLE_BYTES = 96 * 1024 * 1024


def tables_fit(files: dict[str, bytes], paths: Iterable[str]) -> None:
    """InputError before reading when the tables of a run are more than MAX_TABLE_BYTES together."""
    total = sum(len(files.get(p, b"")) for p in paths)
    if total > MAX_TABLE_BYTES:
        raise InputError(f"cabling.csv and addresses.csv of the fabrics asked for are {total:,} bytes together, "
                         f"more than the {MAX_TABLE_BYTES:,} fabgen writes for what one machine emulates: "
                         "emulate one fabric or plane (--fabric)")


def table(files: dict[str, bytes], path: str) -> list[dict[str, str]]:
    """A rendered cabling.csv or addresses.csv, every cell the lab uses checked (`path:line`)."""
    if path not in files:
        raise InputError(f"{path}: not in the render")
    columns = COLUMNS[path.rsplit("/", 1)[-1]]
    try:
        text = files[path].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[dict[str, str]] = []
    try:
        header = next(reader, None)
        if header is None or tuple(header) != columns:
            raise InputError(f"{path}:1: the columns are not {','.join(columns)}, as fabgen writes them")
        for cells in reader:
            where = f"{path}:{reader.line_num}"
            if len(cells) != len(columns):
                raise InputError(f"{where}: {len(cells)} cells where fabgen writes {len(columns)}")
            if len(rows) >= MAX_ROWS:
                raise InputError(f"{where}: more than {MAX_ROWS:,} rows, more than fabgen writes in one table")
            row = dict(zip(columns, cells))
            _row(row, where, host_netdev=columns[0] == "device" and row["role"] == "node")
            rows.append(row)
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: not CSV as fabgen writes it ({exc})") from None
    return rows


def devices(files: dict[str, bytes], path: str) -> set[str]:
    """The devices a rendered cabling.csv names at either end, each a device name fabgen writes
    (`path:line`); the other cells are not read (a compute fabric's table only says who is on it)."""
    try:
        text = files[path].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    out: set[str] = set()
    try:
        if tuple(next(reader, [])) != CABLING_COLUMNS:
            raise InputError(f"{path}:1: the columns are not {','.join(CABLING_COLUMNS)}, as fabgen writes them")
        for k, cells in enumerate(reader):
            where = f"{path}:{reader.line_num}"
            if len(cells) != len(CABLING_COLUMNS) or k >= MAX_ROWS:
                raise InputError(f"{where}: not a row of {len(CABLING_COLUMNS)} cells as fabgen writes them")
            out.add(name(cells[0], DEVICE, where, "a_device"))
            out.add(name(cells[2], DEVICE, where, "z_device"))
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: not CSV as fabgen writes it ({exc})") from None
    return out


def _row(row: dict[str, str], where: str, host_netdev: bool) -> None:
    for key, value in row.items():
        pattern = _CELL.get(key)
        if pattern is not None and (value or key not in ("peer_device", "peer_interface")):
            name(value, IFNAME if key == "interface" and host_netdev else pattern, where, key)
    if "role" in row:
        if row["role"] not in ROLES:
            raise InputError(f"{where}: role {_shown(row['role'])} is not a role fabgen writes")
        if row["asn"]:
            integer(row["asn"], 1, ASN_MAX, where, "asn")
        elif row["role"] in ("leaf", "spine", "core"):
            raise InputError(f"{where}: a {row['role']} without an asn")
        if row["address"]:
            cidr(row["address"], where)


# Switches ---------------------------------------------------------------------------------------------

def router(r: Router, where: str) -> Router:
    """A translated switch config, every value the lab and its frr.conf use held to fabgen's own."""
    integer(r.asn, 1, ASN_MAX, where, "its BGP ASN")
    if r.router_id:
        address(r.router_id, where, "router-id")
    for c in r.loopbacks:
        cidr(c, where, "loopback address")
    for port, cidrs in r.routed.items():
        name(port, PORT, where, "port")
        for c in cidrs:
            cidr(c, where, f"{port}'s address")
    name_all(r.unnumbered, PORT, where, "BGP unnumbered port")
    for vlan, cidrs in r.vlans.items():
        name(vlan, IFNAME, where, "SVI")
        for c in cidrs:
            cidr(c, where, f"{vlan}'s address")
    for port, vlan in r.members.items():
        name(port, PORT, where, "access port")
        name(vlan, IFNAME, where, f"{port}'s VLAN interface")
        if vlan not in r.vlans:
            raise InputError(f"{where}: access port {port} is in {vlan}, which has no SVI in the config")
    _bgp(r, where)
    _policies(r, where)
    return r


def _bgp(r: Router, where: str) -> None:
    """Peer groups, neighbors, announced networks and maximum paths."""
    for g in r.groups.values():
        name(g.group, WORD, where, "peer group")
        _remote_as(g.remote_as, where, f"peer group {g.group}'s remote-as", empty=True)
    for nb in r.neighbors:
        if nb.unnumbered:
            name(nb.peer, PORT, where, "BGP unnumbered port")
        else:
            address(nb.peer, where, "BGP neighbor")
        if nb.group:
            name(nb.group, WORD, where, f"neighbor {nb.peer}'s peer group")
        _remote_as(nb.remote_as, where, f"neighbor {nb.peer}'s remote-as", empty=bool(nb.group))
    for n in r.networks:
        network(n, where, "announced network")
    integer(r.multipath, 1, 1024, where, "maximum paths")


def _policies(r: Router, where: str) -> None:
    """Route maps on peer groups, prefix lists and route maps."""
    for group, maps in r.route_maps.items():
        name(group, WORD, where, "peer group")
        for m in maps:
            if m:
                name(m, WORD, where, f"peer group {group}'s route map")
    for plist, rows in r.prefix_lists.items():
        name(plist, WORD, where, "prefix list")
        for seq, action, prefix, ge, le in rows:
            integer(seq, 1, 4294967295, where, f"prefix list {plist}'s sequence number")
            if action not in ("permit", "deny"):
                raise InputError(f"{where}: prefix list {plist}: action {_shown(action)} is neither permit nor deny")
            network(prefix, where, f"prefix list {plist}'s prefix")
            integer(ge, 0, 128, where, f"prefix list {plist}'s ge")
            integer(le, 0, 128, where, f"prefix list {plist}'s le")
    for map_name, entries in r.maps.items():
        name(map_name, WORD, where, "route map")
        for seq, action, match in entries:
            integer(seq, 1, 65535, where, f"route map {map_name}'s sequence number")
            if action not in ("permit", "deny"):
                raise InputError(f"{where}: route map {map_name}: action {_shown(action)} is neither permit nor deny")
            if match:
                name(match, WORD, where, f"route map {map_name}'s prefix list")


def name_all(values: Iterable[object], pattern: re.Pattern[str], where: str, what: str) -> None:
    for v in values:
        name(v, pattern, where, what)


def _remote_as(value: object, where: str, what: str, empty: bool) -> None:
    if (value == "" and empty) or value in REMOTE_AS:
        return
    integer(value, 1, ASN_MAX, where, what)


# Hosts ---------------------------------------------------------------------------------------------

ROUTE_KEYS = frozenset({"to", "via", "scope", "table", "metric", "on-link", "type"})
ROUTE_TYPES = frozenset({"unreachable"})  # another plane's part of a port's table (targets/hosts.py)
SCOPES = frozenset({"link", "host", "global"})


def netplan_ethernets(doc: Any, path: str) -> dict[str, Any]:
    """`network.ethernets` of a rendered netplan, a mapping of mappings, or InputError."""
    eths = doc.get("network", {}).get("ethernets") if isinstance(doc, dict) and isinstance(doc.get("network"), dict) \
        else None
    if not isinstance(eths, dict) or not all(isinstance(v, dict) for v in eths.values()):
        raise InputError(f"{path}: network.ethernets is not a mapping of interfaces, as fabgen writes it")
    return eths


def host(h: Host, path: str) -> Host:
    """A node's ports as its netplan gives them, each value the lab's `ip` lines use checked."""
    for c in h.loopbacks:
        cidr(c, f"{path}: network.ethernets.lo.addresses", "loopback")
    for port in h.ports.values():
        key = f"{path}: network.ethernets.{port.name}"
        name(port.name, IFNAME, path, "interface")
        integer(port.mtu, 0, 65535, f"{key}.mtu", "MTU")
        for c in port.addresses:
            cidr(c, f"{key}.addresses")
        for i, route in enumerate(port.routes):
            _route(route, f"{key}.routes[{i}]")
        for i, rule in enumerate(port.rules):
            at = f"{key}.routing-policy[{i}]"
            if not isinstance(rule, dict) or set(rule) - {"from", "table", "priority"} or "from" not in rule \
                    or "table" not in rule:
                raise InputError(f"{at}: a rule is `from` and `table`, as fabgen writes it")
            if "/" in str(rule["from"]):
                cidr(rule["from"], at, "from")
            else:
                address(rule["from"], at, "from")
            integer(rule["table"], 1, 2**31 - 1, at, "table")
            if rule.get("priority") is not None:
                integer(rule["priority"], 0, 2**32 - 1, at, "priority")
    if h.frr:
        frr_text(h.frr, f"hosts/{h.name}/frr.conf")
    return h


def _route(route: object, where: str) -> None:
    if not isinstance(route, dict) or "to" not in route or set(route) - ROUTE_KEYS:
        raise InputError(f"{where}: a route is `to` with `via`, `scope`, `table` or `metric`, as fabgen writes it")
    network(route["to"], where, "to")
    if "via" in route:
        address(route["via"], where, "via")
    if "type" in route and (route["type"] not in ROUTE_TYPES or "via" in route):
        raise InputError(f"{where}: type {_shown(route['type'])} is not unreachable without `via`, as fabgen "
                         "writes it")
    if route.get("scope") is not None and route["scope"] not in SCOPES:
        raise InputError(f"{where}: scope {_shown(route['scope'])} is not link, host or global")
    if route.get("table") is not None:
        integer(route["table"], 1, 2**31 - 1, where, "table")
    if route.get("metric") is not None:
        integer(route["metric"], 0, 2**32 - 1, where, "metric")
    if route.get("on-link") not in (None, True, False):
        raise InputError(f"{where}: on-link {_shown(route['on-link'])} is not true or false")


# A node's frr.conf runs as written, so each of its lines must be one targets/hosts.py writes.
_V4 = r"(?P<ip>[0-9.]{7,15})"
FRR_HOST_LINES = [re.compile(p) for p in (
    r"![ -~]*", r"frr defaults datacenter", r"hostname [A-Za-z0-9][A-Za-z0-9_.-]{0,63}", r"log syslog informational",
    rf"ip prefix-list SERVICE seq 10 permit {_V4}/32", r"route-map (SERVICE-OUT|FABRIC-IN) permit 10",
    r" match ip address prefix-list SERVICE", r"exit", r"router bgp (?P<asn>[0-9]{1,10})",
    rf" bgp router-id {_V4}", r" neighbor FABRIC (peer-group|remote-as external|bfd|bfd profile FABRIC)",
    # the leaf_host class's own BFD timers (targets/hosts.py): a bfdd profile
    r"bfd", r" profile FABRIC", r"  detect-multiplier [0-9]{1,2}", r"  (receive|transmit)-interval [0-9]{2,5}",
    r" exit",
    rf" neighbor {_V4} peer-group FABRIC", rf" neighbor {_V4} description [A-Za-z0-9_./:() -]{{1,200}}", r" !",
    r" address-family ipv4 unicast", rf"  network {_V4}/32",
    r"  neighbor FABRIC route-map (FABRIC-IN in|SERVICE-OUT out)", r"  maximum-paths [0-9]{1,3}",
    r" exit-address-family")]
MAX_FRR_LINES = 10_000
MAX_NODE_PEERS = 64  # a node's BGP sessions: one per port of the fabric it routes in (8 or 16 on a DGX)


def frr_text(text: str, path: str) -> str:
    """A node's rendered frr.conf, refused unless every line is one fabgen writes there."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > MAX_FRR_LINES:
        raise InputError(f"{path}: {len(lines):,} lines, more than fabgen writes for a node")
    peers = sum(1 for line in lines if line.endswith(" peer-group FABRIC"))
    if peers > MAX_NODE_PEERS:
        raise InputError(f"{path}: {peers} BGP neighbors, more than the {MAX_NODE_PEERS} a node's ports take")
    for number, line in enumerate(lines, 1):
        m = next((m for p in FRR_HOST_LINES if (m := p.fullmatch(line))), None)
        if m is None:
            raise InputError(f"{path}:{number}: {_shown(line)} is not a line fabgen writes in a node's frr.conf")
        groups = m.groupdict()
        if groups.get("ip"):
            address(groups["ip"], f"{path}:{number}")
        if groups.get("asn"):
            integer(groups["asn"], 1, ASN_MAX, f"{path}:{number}", "ASN")
    return text
