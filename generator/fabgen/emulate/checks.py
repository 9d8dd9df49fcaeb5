"""Reading the emulated fabric's state (FRR's JSON, the kernel's routes, pings) and holding it
against the plan (expect.py). Every finding names its device."""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fabgen.emulate.lab import Lab, LabError, run

STALLED = 20.0  # seconds without any change before a fabric with sessions down gets its verdict


@dataclass
class Finding:
    device: str
    check: str  # sessions | asn | bfd | rib | fib | reach; EVPN: segment | vni | lacp | gateway
    message: str
    about: list[str] = field(default_factory=list)  # the peers down (sessions), the prefixes short (rib)

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "check": self.check, "message": self.message, "about": self.about}


def suspects(findings: list[Finding], origin: dict[str, str]) -> list[tuple[str, str]]:
    """(device, why) most likely at fault, first: a switch running another ASN than the plan's; the
    origin of a prefix missing on several switches; the device at the far end of most sessions down."""
    out: dict[str, str] = {}
    for f in findings:
        if f.check == "asn" and f.message.startswith("runs BGP"):
            out.setdefault(f.device, f.message)
    missing = Counter(prefix for f in findings if f.check == "rib" for prefix in f.about)
    for prefix, n in missing.most_common():
        if n >= 2 and prefix in origin:
            out.setdefault(origin[prefix], f"{prefix}, which it originates, is missing or short on {n} switches")
    far = Counter(dev for f in findings if f.check == "sessions" for dev in f.about)
    for dev, n in far.most_common():
        if n >= 2:
            out.setdefault(dev, f"the far end of {n} sessions that are down")
    return list(out.items())


@dataclass
class State:
    """One poll of every routing device: its BGP summary (peers by name), its routes."""

    summary: dict[str, dict[str, Any]] = field(default_factory=dict)

    def signature(self) -> tuple:
        """What must stay still for the fabric to count as settled: every session's state and prefix
        count, and every device's BGP table version, which moves with each best-path change: a
        leaf can hold its prefix count while path hunting swaps a longer path for a shorter one,
        and its ECMP width is only final once that has stopped (`tableVersion` of FRR's summary)."""
        peers = sorted((d, p, v.get("state"), v.get("pfxRcd")) for d, s in self.summary.items()
                       for p, v in s.get("peers", {}).items())
        tables = sorted((d, s.get("tableVersion")) for d, s in self.summary.items())
        return tuple(peers), tuple(tables)


def _json(la: Lab, d: Any, command: str) -> Any:
    try:
        text = la.vtysh(d, command)
    except LabError:
        return None
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        return None


def poll(la: Lab, dirs: dict[str, Any]) -> State:
    s = State()
    for dev, d in dirs.items():
        doc = _json(la, d, "show bgp ipv4 unicast summary json") or {}
        s.summary[dev] = doc.get("ipv4Unicast", doc)
    return s


def settle(la: Lab, dirs: dict[str, Any], expected: dict[str, int], quiet: float, timeout: float,
           progress: Callable[[str], None], poller: Callable[[Lab, dict[str, Any]], State] | None = None
           ) -> tuple[State, float]:
    """Poll until every device has its expected sessions established and nothing changed for `quiet`
    seconds, or until nothing changed for three times that (a broken fabric gets its verdict fast),
    or `timeout`. Returns the last state and the seconds it took. `poller` reads the sessions
    (`poll`'s IPv4 unicast summary unless given: the GPU overlay's EVPN sessions carry no IPv4)."""
    start = time.monotonic()
    last, since = None, time.monotonic()
    while True:
        s = (poller or poll)(la, dirs)
        sig = s.signature()
        now = time.monotonic()
        if sig != last:
            last, since = sig, now
        up = sum(1 for d in dirs for v in s.summary.get(d, {}).get("peers", {}).values()
                 if v.get("state") == "Established")
        want = sum(expected.values())
        progress(f"{up} of {want} BGP sessions established")
        stable = now - since
        # all up: settled after `quiet`; some missing: a verdict once nothing changed for STALLED seconds
        # (BGP unnumbered learns its peer from IPv6 router advertisements, sent every few seconds)
        if (up >= want and stable >= quiet) or stable >= max(3 * quiet, STALLED) or now - start >= timeout:
            return s, now - start
        time.sleep(min(1.0, quiet / 3))


def sessions(s: State, expected: dict[str, int], asn: dict[str, int], peer_asn: dict[str, dict[str, int]],
             peer_dev: dict[str, dict[str, str]] | None = None) -> list[Finding]:
    """Every expected session established, with the plan's ASNs at both ends."""
    out = []
    for dev, want in sorted(expected.items()):
        summary = s.summary.get(dev, {})
        peers = summary.get("peers", {})
        if summary.get("as") is not None and int(summary["as"]) != asn.get(dev):
            out.append(Finding(dev, "asn", f"runs BGP as AS {summary['as']}, the plan's is {asn.get(dev)}"))
        up = {p: v for p, v in peers.items() if v.get("state") == "Established"}
        if len(up) != want:
            down = sorted(p for p, v in peers.items() if v.get("state") != "Established")
            tail = f"; not up: {', '.join(down[:6])}" if down else ""
            fars = sorted({(peer_dev or {}).get(dev, {}).get(p, "") for p in down} - {""})
            out.append(Finding(dev, "sessions", f"{len(up)} of {want} BGP sessions established{tail}"
                               + (f" (to {', '.join(fars[:6])})" if fars else ""), fars))
        for p, v in up.items():
            want_as = peer_asn.get(dev, {}).get(p)
            if want_as is not None and int(v.get("remoteAs", 0)) != want_as:
                out.append(Finding(dev, "asn", f"peer {p} is AS {v.get('remoteAs')}, the plan says AS {want_as}"))
    return out


def bfd(la: Lab, dirs: dict[str, Any], with_bfd: set[str], gone: dict[str, set[str]] | None = None,
        wait: float = 60.0) -> list[Finding]:
    """Every BFD peer up, but those on ports taken down on purpose (`gone`: device -> interfaces).
    BGP settles first; a BFD session comes up some packets later (at a large lab's 2 s, several
    seconds later), so the peers are read again while some are not up and their states still move,
    for at most STALLED seconds without change or `wait` in all."""
    start, last, since = time.monotonic(), None, time.monotonic()
    while True:
        out, sig = _bfd_once(la, dirs, with_bfd, gone or {})
        now = time.monotonic()
        if sig != last:
            last, since = sig, now
        if not out or now - since >= STALLED or now - start >= wait:
            return out
        time.sleep(1.0)


def _bfd_once(la: Lab, dirs: dict[str, Any], with_bfd: set[str],
              gone: dict[str, set[str]]) -> tuple[list[Finding], tuple]:
    out = []
    tables = _side_by_side(lambda dev: _json(la, dirs[dev], "show bfd peers json") or [], sorted(with_bfd))
    for dev in sorted(with_bfd):
        peers = tables[dev]
        down = [p.get("interface") or p.get("peer") for p in peers
                if p.get("status") != "up" and p.get("interface") not in gone.get(dev, set())]
        if not peers:
            out.append(Finding(dev, "bfd", "BFD is configured and no BFD peer exists"))
        elif down:
            out.append(Finding(dev, "bfd", f"{len(down)} BFD peer(s) not up: {', '.join(map(str, down[:6]))}"))
    sig = tuple(sorted((dev, str(p.get("interface") or p.get("peer")), str(p.get("status")))
                       for dev in tables for p in tables[dev]))
    return out, sig


def _side_by_side(fn: Any, devices: list[str]) -> dict[str, Any]:
    """fn(device) for every device, four at a time (each is a process of FRR's or the kernel's)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(devices, pool.map(fn, devices)))


_ROUTE = re.compile(r"^([A-Za-z])([>*q ]*)\s(\S+/[0-9]+)\s")
_MORE = re.compile(r"^\s+(\*)?\s+via\s")


def routes_text(text: str) -> dict[str, tuple[str, bool, int]]:
    """`show ip route` (text: its JSON is 7 MB and 2.5 s a switch at 2,048 links, the text 0.4 s)
    -> prefix -> (protocol code, selected, next hops installed in the FIB)."""
    out: dict[str, tuple[str, bool, int]] = {}
    current = None
    for line in text.splitlines():
        m = _ROUTE.match(line)
        if m:
            code, flags, prefix = m.groups()
            installed = 1 if "*" in flags and " via " in line else 0
            if prefix not in out or ">" in flags:  # the selected entry of a prefix wins
                out[prefix] = (code, ">" in flags, installed)
                current = prefix if ">" in flags else None
            continue
        m = _MORE.match(line)
        if m and current is not None and m.group(1):
            code, sel, n = out[current]
            out[current] = (code, sel, n + 1)
    return out


def rib(la: Lab, dirs: dict[str, Any], widths: dict[str, dict[str, int]], prefixes: dict[str, str],
        switches: list[str], seen: dict[str, dict[str, int]] | None = None) -> list[Finding]:
    """Every prefix on every switch with the expected number of next hops in FRR's RIB (selected,
    installed), read from every switch at once (the queries run side by side); each width read
    into `seen` (device -> prefix -> next hops) for the report."""
    from concurrent.futures import ThreadPoolExecutor

    def one(dev: str) -> tuple[str, dict[str, tuple[str, bool, int]]]:
        try:
            return dev, routes_text(la.vtysh(dirs[dev], "show ip route", timeout=60))
        except LabError:
            return dev, {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        tables = dict(pool.map(one, switches))
    out = []
    for dev in switches:
        routes = tables[dev]
        bad = []
        for prefix, origin in prefixes.items():
            if origin == dev:
                continue
            want = widths[dev].get(origin, 0)
            code, selected, n = routes.get(prefix, ("", False, 0))
            got = n if code == "B" and selected else 0
            if seen is not None:
                seen.setdefault(dev, {})[prefix] = got
            if got != want:
                bad.append(f"{prefix} {got} of {want}")
        if bad:
            out.append(Finding(dev, "rib", f"{len(bad)} prefix(es) without the planned ECMP width (got of "
                               f"planned): {', '.join(bad[:6])}", [b.split()[0] for b in bad]))
    return out


_KERNEL = re.compile(r"^(\S+)")


def kernel_routes(text: str) -> dict[str, int]:
    """`ip route show` (text) -> prefix -> next hops (a multipath route's `nexthop` lines)."""
    out: dict[str, int] = {}
    current = None
    for line in text.splitlines():
        if line.startswith((" ", "\t")):
            if current is not None and line.strip().startswith("nexthop"):
                out[current] = out.get(current, 0) + 1
            continue
        dst = line.split()[0]
        if dst == "default":
            dst = "0.0.0.0/0"
        elif "/" not in dst:
            dst += "/32"
        current = dst
        out[dst] = (1 if (" via " in line or " nhid " in line and " dev " in line) and " proto kernel " not in line
                    else 0)
    return out


def again(read: Callable[[], list[Finding]], stall: float = 6.0, wait: float = 60.0) -> list[Finding]:
    """read() until it finds nothing, or its findings stay the same for `stall` seconds, or `wait`
    in all: BGP settles in bgpd first, and zebra and the kernel may hold a path fewer for a moment
    after (seen once in CI: two leaves at 3 of 4 paths right after BGP had settled)."""
    start, last, since = time.monotonic(), None, time.monotonic()
    while True:
        out = read()
        now = time.monotonic()
        sig = tuple((f.device, f.check, f.message) for f in out)
        if sig != last:
            last, since = sig, now
        if not out or now - since >= stall or now - start >= wait:
            return out
        time.sleep(1.0)


def fib(ns: dict[str, str], widths: dict[str, dict[str, int]], prefixes: dict[str, str],
        switches: list[str], seen: dict[str, dict[str, int]] | None = None) -> list[Finding]:
    """The same widths in the kernel's forwarding table of each switch's namespace (read into `seen`)."""
    tables = _side_by_side(lambda dev: kernel_routes(run("ip", "-n", ns[dev], "route", "show").stdout), switches)
    out = []
    for dev in switches:
        have = tables[dev]
        bad = []
        for prefix, origin in prefixes.items():
            if origin == dev:
                continue
            want = widths[dev].get(origin, 0)
            if seen is not None:
                seen.setdefault(dev, {})[prefix] = have.get(prefix, 0)
            if have.get(prefix, 0) != want:
                bad.append(f"{prefix} {have.get(prefix, 0)} of {want}")
        if bad:
            out.append(Finding(dev, "fib", f"{len(bad)} prefix(es) in the kernel without the planned width: "
                               f"{', '.join(bad[:6])}"))
    return out


# One ping per pair, run in the host's namespace; an unbound one (no source address, as a mount or
# any TCP client that does not bind) first asks the main table which port it leaves by.
_BOUND = "(ping -q -c 1 -W 2 -I {src} {dst} >/dev/null 2>&1 && echo ok {k} || echo no {k}) & "
_UNBOUND = ("(d=$(ip route get {dst} 2>/dev/null | sed -n 's/.* dev \\([^ ]*\\).*/\\1/p'); "
            "ping -q -c 1 -W 2 {dst} >/dev/null 2>&1 && echo ok {k} $d || echo no {k} $d) & ")


@dataclass(frozen=True)
class Pair:
    """One reachability check: `host` pings `dst` (an address of `far`) from `src`, or unbound
    (src None) through its main table, which must send it out of one of `ports` (the host's ports
    on the plane of `dst`: planes are separate networks, another plane's port cannot reach it)."""

    host: str
    src: str | None
    far: str
    dst: str
    ports: tuple[str, ...] = ()
    why: str = "rail"  # rail | storage (an unbound client of a storage server)


def reach(ns: dict[str, str], pairs: list[Pair], seen: dict[Pair, tuple[bool, str]] | None = None) -> list[Finding]:
    """Each pair: one ping, from its source address or unbound. A host's pings run together in one
    shell in its namespace; hosts four at a time. An unbound ping passes only when it is answered
    and the main table sent it out of a port of the pair's fabric. `seen`: pair -> (passed, the port
    an unbound ping left by)."""
    by_host: dict[str, list[Pair]] = {}
    for p in pairs:
        by_host.setdefault(p.host, []).append(p)

    def one(host: str) -> list[Finding]:
        script = "".join((_BOUND if p.src else _UNBOUND).format(src=p.src, dst=p.dst, k=k)
                         for k, p in enumerate(by_host[host])) + "wait"
        try:
            text = run("ip", "netns", "exec", ns[host], "sh", "-c", script, timeout=30, check=False).stdout
        except LabError:
            text = ""
        answers = {int(w[1]): (w[0] == "ok", w[2] if len(w) > 2 else "")
                   for w in (line.split() for line in text.splitlines()) if len(w) >= 2 and w[0] in ("ok", "no")
                   and w[1].isdigit()}
        out = []
        for k, p in enumerate(by_host[host]):
            answered, dev = answers.get(k, (False, ""))
            ok = passed(p, answered, dev)
            if seen is not None:
                seen[p] = (ok, dev)
            if ok:
                continue
            if p.src:
                out.append(Finding(host, "reach", f"{p.src} does not reach {p.far} {p.dst}"))
            else:
                how = f"its main table sends it out of {dev}" if dev else "its main table has no route to it"
                out.append(Finding(host, "reach", f"unbound (no source address, as a mount): does not reach "
                                   f"{p.far} {p.dst} over its ports on that plane ({', '.join(p.ports)}; {how})",
                                   [p.far]))
        return out
    return [f for found in _side_by_side(one, sorted(by_host)).values() for f in found]


def passed(p: Pair, answered: bool, dev: str) -> bool:
    """A ping's verdict: answered, and unbound only out of one of the pair's ports (a main table
    that sends plane-2 traffic out of a plane-1 port is wrong even where something answers)."""
    return answered and (p.src is not None or dev in p.ports)


def pairs(hosts: dict[str, Any], servers: list[str] | None = None) -> list[Pair]:
    """Each host port and the same rail's (routing table's) port of the next host, a ring per rail:
    once from the port's own address (its rule sends it out of that port) and once unbound (the
    main table chooses, out of one of the host's ports on the destination's plane); on a storage
    fabric (`servers`: its storage servers) each other node unbound to one server's address too,
    the servers taken in turn."""
    rails: dict[str, list[tuple[str, str, str]]] = {}
    for name in sorted(hosts):
        for port in hosts[name].ports.values():
            table = str(port.rules[0]["table"]) if port.rules else port.name
            for cidr in port.addresses:
                rails.setdefault(table, []).append((name, cidr.split("/")[0], port.plane))
    on_plane: dict[tuple[str, str], tuple[str, ...]] = {}  # (host, plane) -> its ports there
    for name, h in hosts.items():
        for port in sorted(h.ports.values(), key=lambda x: x.name):
            on_plane[name, port.plane] = (*on_plane.get((name, port.plane), ()), port.name)
    out = []
    for ring in rails.values():
        for k, (host, addr, _) in enumerate(ring):
            far, far_addr, plane = ring[(k + 1) % len(ring)]
            if far != host:
                mine = on_plane.get((host, plane), ())
                out += [Pair(host, addr, far, far_addr, mine), Pair(host, None, far, far_addr, mine)]
    kept = sorted(s for s in servers or () if s in hosts)  # a sample may leave servers out
    targets = [(s, c.split("/")[0], port.plane) for s in kept for port in hosts[s].ports.values()
               for c in port.addresses]
    clients = [h for h in sorted(hosts) if h not in kept]
    unbound = {(p.host, p.dst) for p in out if p.src is None}
    for k, host in enumerate(clients):
        if targets and (host, targets[k % len(targets)][1]) not in unbound:
            far, addr, plane = targets[k % len(targets)]
            out.append(Pair(host, None, far, addr, on_plane.get((host, plane), ()), "storage"))
    return out


@dataclass
class Checked:
    """What was checked, device by device and phase by phase (`before`; `after` a --fail), for
    the report: each speaker's sessions, each switch's width per prefix (the plan's, FRR's RIB's,
    the kernel's), each reachability pair and whether it passed."""

    devices: dict[str, dict[str, Any]] = field(default_factory=dict)

    def _dev(self, device: str) -> dict[str, Any]:
        return self.devices.setdefault(device, {})

    def sessions(self, phase: str, device: str, planned: int, established: int) -> None:
        self._dev(device).setdefault("sessions", {})[phase] = {"planned": planned, "established": established}

    def widths(self, phase: str, widths: dict[str, dict[str, int]], prefixes: dict[str, str],
               rib: dict[str, dict[str, int]], fib: dict[str, dict[str, int]]) -> None:
        for dev in sorted(set(rib) | set(fib)):
            mine = self._dev(dev).setdefault("widths", {})
            for prefix, origin in sorted(prefixes.items()):
                if origin != dev:
                    mine.setdefault(prefix, {})[phase] = {"planned": widths.get(dev, {}).get(origin, 0),
                                                          "rib": rib.get(dev, {}).get(prefix, 0),
                                                          "fib": fib.get(dev, {}).get(prefix, 0)}

    def reach(self, phase: str, seen: dict[Pair, tuple[bool, str]]) -> None:
        for p, (ok, dev) in seen.items():
            rows = self._dev(p.host).setdefault("reach", [])
            row = next((r for r in rows if (r["from"], r["to"], r["address"]) == (p.src, p.far, p.dst)), None)
            if row is None:
                row = {"from": p.src, "to": p.far, "address": p.dst, "why": p.why}
                rows.append(row)
            row[phase] = {"ok": ok, **({"port": dev} if p.src is None else {})}

    def as_dict(self) -> dict[str, Any]:
        return self.devices
