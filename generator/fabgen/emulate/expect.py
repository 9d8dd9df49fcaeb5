"""What the fabric should do, from the plan alone: the render's addresses.csv (addresses, ASNs,
which port faces which) and cabling.csv (who is cabled to whom), never the configs under test.

BGP sessions: one per switch-to-switch cable, and one per host port where the host runs BGP
(its frr.conf). Prefixes: every switch's loopback, every host-facing subnet (a port's /31, or a
leaf's host subnet), every host's service address, each originated by the switch (or host) that
holds it. ECMP widths: eBGP path-vector over the sessions, as BGP runs it: a speaker takes the
shortest AS path, refuses one holding its own AS, advertises its best path with its AS in front,
and spreads over every session whose path is as short and comes through the same neighbouring
AS (eBGP multipath without `as-path multipath-relax`); over iBGP (a switch pair's one ASN) a path
passes unchanged, eBGP is preferred at equal length, and an iBGP-learned path is not passed on.
Computed once per originating speaker: all its prefixes travel alike.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field


@dataclass
class Plan:
    """The plan of one emulated fabric (every plane of it), read from the render."""

    asn: dict[str, int] = field(default_factory=dict)  # speaker -> ASN (switches, and hosts running BGP)
    sessions: list[tuple[str, str, str, str]] = field(default_factory=list)  # (a, a port, z, z port)
    origins: dict[str, list[str]] = field(default_factory=dict)  # speaker -> prefixes it originates
    roles: dict[str, str] = field(default_factory=dict)  # switch -> leaf/spine/core

    def widths(self, down: set[tuple[str, str]] = frozenset()) -> dict[str, dict[str, int]]:  # type: ignore[assignment]
        """speaker -> origin speaker -> ECMP width (0: no path), with the sessions on `down` ports
        ((device, port) of either end) gone."""
        live = [s for s in self.sessions if (s[0], s[1]) not in down and (s[2], s[3]) not in down]
        peers: dict[str, list[str]] = {n: [] for n in self.asn}
        for a, _, z, _ in live:
            peers[a].append(z)
            peers[z].append(a)
        out: dict[str, dict[str, int]] = {n: {} for n in self.asn}
        for origin in self.origins:
            best = _paths(origin, self.asn, peers)
            for n in self.asn:
                if n == origin:
                    continue
                out[n][origin] = _width(n, best, self.asn, peers)
        return out

    def prefixes(self) -> dict[str, str]:
        """prefix -> the speaker that originates it."""
        return {p: o for o, ps in self.origins.items() for p in ps}


def _paths(origin: str, asn: dict[str, int], peers: dict[str, list[str]]) -> dict[str, tuple[tuple[int, ...], bool]]:
    """Each speaker's best AS path to `origin` (the origin's own: ()) and whether it came over iBGP,
    to a fixed point. Ties go to the lexically smaller path, so the result does not depend on
    iteration order."""
    best: dict[str, tuple[tuple[int, ...], bool]] = {origin: ((), False)}
    changed, rounds = True, 0
    while changed and rounds <= len(asn) + 2:  # a path is at most one AS per speaker long
        changed, rounds = False, rounds + 1
        for n in sorted(asn):
            if n == origin:
                continue
            cands = [c for p in peers[n] if (c := _offer(n, p, best, asn)) is not None]
            if not cands:
                if n in best:
                    del best[n]
                    changed = True
                continue
            pick = min(cands, key=lambda c: (len(c[0]), c[1], c[0]))  # shortest, then eBGP over iBGP
            if best.get(n) != pick:
                best[n] = pick
                changed = True
    return best


def _offer(n: str, p: str, best: dict[str, tuple[tuple[int, ...], bool]],
           asn: dict[str, int]) -> tuple[tuple[int, ...], bool] | None:
    """The path `p` offers `n` (and whether over iBGP), or None: eBGP puts p's AS in front and is
    refused where it holds n's; iBGP (one ASN: a switch pair's peer links, spec/sizing.py
    `_plane_pair`) passes the path as it is, and never one p learned over iBGP itself."""
    if p not in best:
        return None
    path, ibgp = best[p]
    if asn[p] == asn[n]:
        return None if ibgp else (path, True)
    path = (asn[p], *path)
    return None if asn[n] in path else (path, False)


def _width(n: str, best: dict[str, tuple[tuple[int, ...], bool]], asn: dict[str, int],
           peers: dict[str, list[str]]) -> int:
    if n not in best:
        return 0
    mine, ibgp = best[n]
    return sum(1 for p in peers[n] if (c := _offer(n, p, best, asn)) is not None and len(c[0]) == len(mine)
               and c[1] == ibgp and (ibgp or asn[p] == mine[0]))


def network(cidr: str) -> str:
    return str(ipaddress.ip_interface(cidr).network)
