"""Reading the emulated fabric's state (FRR's JSON, the kernel's routes, pings) and holding it
against the plan (expect.py). Every finding names its device."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from fabgen.emulate.lab import Lab, LabError, run


STALLED = 20.0  # seconds without any change before a fabric with sessions down gets its verdict


@dataclass
class Finding:
    device: str
    check: str  # sessions | asn | bfd | rib | fib | reach
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"device": self.device, "check": self.check, "message": self.message}


@dataclass
class State:
    """One poll of every routing device: its BGP summary (peers by name), its routes."""

    summary: dict[str, dict[str, Any]] = field(default_factory=dict)

    def signature(self) -> tuple:
        return tuple(sorted((d, p, v.get("state"), v.get("pfxRcd")) for d, s in self.summary.items()
                            for p, v in s.get("peers", {}).items()))


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
           progress: Callable[[str], None]) -> tuple[State, float]:
    """Poll until every device has its expected sessions established and nothing changed for `quiet`
    seconds, or until nothing changed for three times that (a broken fabric gets its verdict fast),
    or `timeout`. Returns the last state and the seconds it took."""
    start = time.monotonic()
    last, since = None, time.monotonic()
    while True:
        s = poll(la, dirs)
        sig = s.signature()
        now = time.monotonic()
        if sig != last:
            last, since = sig, now
        up = sum(1 for d in dirs for v in s.summary.get(d, {}).get("peers", {}).values() if v.get("state") == "Established")
        want = sum(expected.values())
        progress(f"{up} of {want} BGP sessions established")
        stable = now - since
        # all up: settled after `quiet`; some missing: a verdict once nothing changed for STALLED seconds
        # (BGP unnumbered learns its peer from IPv6 router advertisements, sent every few seconds)
        if (up >= want and stable >= quiet) or stable >= max(3 * quiet, STALLED) or now - start >= timeout:
            return s, now - start
        time.sleep(min(1.0, quiet / 3))


def sessions(s: State, expected: dict[str, int], asn: dict[str, int], peer_asn: dict[str, dict[str, int]]
             ) -> list[Finding]:
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
            out.append(Finding(dev, "sessions", f"{len(up)} of {want} BGP sessions established{tail}"))
        for p, v in up.items():
            want_as = peer_asn.get(dev, {}).get(p)
            if want_as is not None and int(v.get("remoteAs", 0)) != want_as:
                out.append(Finding(dev, "asn", f"peer {p} is AS {v.get('remoteAs')}, the plan says AS {want_as}"))
    return out


def bfd(la: Lab, dirs: dict[str, Any], with_bfd: set[str]) -> list[Finding]:
    out = []
    for dev in sorted(with_bfd):
        peers = _json(la, dirs[dev], "show bfd peers json") or []
        down = [p.get("interface") or p.get("peer") for p in peers if p.get("status") != "up"]
        if not peers:
            out.append(Finding(dev, "bfd", "BFD is configured and no BFD peer exists"))
        elif down:
            out.append(Finding(dev, "bfd", f"{len(down)} BFD peer(s) not up: {', '.join(map(str, down[:6]))}"))
    return out


def rib(la: Lab, dirs: dict[str, Any], widths: dict[str, dict[str, int]], prefixes: dict[str, str],
        switches: list[str]) -> list[Finding]:
    """Every prefix on every switch with the expected number of active next hops in FRR's RIB."""
    out = []
    for dev in switches:
        routes = _json(la, dirs[dev], "show ip route json") or {}
        bad = []
        for prefix, origin in prefixes.items():
            if origin == dev:
                continue
            want = widths[dev].get(origin, 0)
            entries = routes.get(prefix, [])
            got = max((sum(1 for nh in e.get("nexthops", []) if nh.get("active")) for e in entries
                       if e.get("protocol") == "bgp" and e.get("selected")), default=0)
            if got != want:
                bad.append(f"{prefix} {got} of {want}")
        if bad:
            out.append(Finding(dev, "rib", f"{len(bad)} prefix(es) without the planned ECMP width (got of "
                               f"planned): {', '.join(bad[:6])}"))
    return out


def fib(ns: dict[str, str], widths: dict[str, dict[str, int]], prefixes: dict[str, str],
        switches: list[str]) -> list[Finding]:
    """The same widths in the kernel's forwarding table of each switch's namespace."""
    out = []
    for dev in switches:
        routes = json.loads(run("ip", "-n", ns[dev], "-j", "route", "show").stdout or "[]")
        have = {}
        for r in routes:
            dst = r.get("dst", "")
            if "/" not in dst and dst != "default":
                dst += "/32"
            have[dst] = len(r.get("nexthops", [])) or (1 if r.get("gateway") or r.get("via") else 0)
        bad = []
        for prefix, origin in prefixes.items():
            if origin == dev:
                continue
            want = widths[dev].get(origin, 0)
            if have.get(prefix, 0) != want:
                bad.append(f"{prefix} {have.get(prefix, 0)} of {want}")
        if bad:
            out.append(Finding(dev, "fib", f"{len(bad)} prefix(es) in the kernel without the planned width: "
                               f"{', '.join(bad[:6])}"))
    return out


def reach(ns: dict[str, str], pairs: list[tuple[str, str, str, str]], parallel: int = 32) -> list[Finding]:
    """Each (host, source address, peer host, its address): one ping from the source address."""
    out: list[Finding] = []
    pending = list(pairs)
    while pending:
        batch, pending = pending[:parallel], pending[parallel:]
        procs = [(p, subprocess.Popen(["ip", "netns", "exec", ns[p[0]], "ping", "-c", "1", "-W", "2", "-I", p[1],
                                       p[3]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)) for p in batch]
        for (host, src, far, dst), proc in procs:
            try:
                code = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                code = 1
            if code != 0:
                out.append(Finding(host, "reach", f"{src} does not reach {far} {dst}"))
    return out


def pairs(hosts: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """Each host port and the same rail's (routing table's) port of the next host: a ring per rail."""
    rails: dict[str, list[tuple[str, str]]] = {}
    for name in sorted(hosts):
        for port in hosts[name].ports.values():
            table = str(port.rules[0]["table"]) if port.rules else port.name
            for cidr in port.addresses:
                rails.setdefault(table, []).append((name, cidr.split("/")[0]))
    out = []
    for ring in rails.values():
        for k, (host, addr) in enumerate(ring):
            far, far_addr = ring[(k + 1) % len(ring)]
            if far != host:
                out.append((host, addr, far, far_addr))
    return out

