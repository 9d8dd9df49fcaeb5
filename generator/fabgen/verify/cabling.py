"""The built fabric's cables held against the plan, from both ends of every cable.

Each evidence row says: on this device's port I see that device's port. Matched to the plan
(plan.py), every planned cable is one of:

* ok: an end sees the planned far end, and no end sees anything else;
* miswired: an end sees another device or port than planned (`found` says what, from which end);
* not-cabled: both devices gave evidence and neither end sees anything;
* unverified: one end's device gave no evidence or sends no LLDP (a node without lldpd) and the
  other sees nothing: not cabled, or silent (reported apart, not as miswired);
* not-deployed: neither device gave any evidence: not built yet (reported apart);
* several-neighbours: an end sees more than one neighbour (a hub, or an unmanaged switch, between);
* unplanned: a link seen between ports the plan leaves unused;
* wrong-speed (with `speed`): the evidence gives a speed other than the plan's.

The repair list turns the wrong cables into moves: a swapped pair (two cables whose far ends are
crossed) is one move, swap the two plugs; a cable in the wrong port is moved to the planned one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabgen.verify.evidence import Seen
from fabgen.verify.plan import Plan

_MAC = re.compile(r"^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$|^([0-9a-f]{4}\.){2}[0-9a-f]{4}$", re.I)
# an RDMA device name as a node description carries it (mlx5_1, rxe0): at most 63
# characters (the kernel's IB_DEVICE_NAME_MAX, 64 with its NUL); anything else is no device name
_RDMA = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,62}$")
ISSUES = ("miswired", "not-cabled", "several-neighbours", "unplanned", "wrong-speed",  # exit 1
          "bgp-session", "bgp-asn", "bgp-unplanned", "ecmp-width", "bfd",  # these five: FRR's state (frr.py)
          "config-missing", "config-extra", "config-different")  # the running configs (running.py)
APART = ("unverified", "not-deployed", "no-state", "no-config")  # reported apart


@dataclass
class Finding:
    kind: str
    fabric: str
    device: str
    port: str
    expected: str
    found: str
    tier: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "fabric": self.fabric, "device": self.device, "port": self.port,
                "expected": self.expected, "found": self.found, "tier": self.tier}


@dataclass
class Verdict:
    findings: list[Finding] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    checked: int = 0  # planned cables held against evidence
    ok: int = 0
    states: int = 0  # switches whose FRR state was held against the plan
    configs: int = 0  # switches whose running config was held against the rendered one
    # device -> (what the remediation is, its lines): what makes its running config the plan's
    remedies: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # every fabric of the plan: "held" (its cables against evidence), "no evidence given", or
    # "not asked" (--fabric named another): none is left out of the report without a word
    fabrics: dict[str, str] = field(default_factory=dict)
    planned: dict[str, int] = field(default_factory=dict)  # fabric -> its planned cables
    roles: dict[str, str] = field(default_factory=dict)  # fabric -> its role

    def fabric_lines(self) -> list[str]:
        """One line a fabric of the plan, whatever evidence it had: a fabric without any is named
        with the cables nothing held, so that a count never shrinks without a word."""
        out = []
        for name, status in sorted(self.fabrics.items()):
            cables = self.planned.get(name, 0)
            what = {"held": f"{cables} planned cables held against the evidence",
                    "no evidence given": f"its {cables} planned cables were not held against any"}.get(
                        status, f"{cables} planned cables, --fabric named another")
            out.append(f"fabric {name} ({self.roles.get(name, 'compute')}): {status}, {what}")
        return out

    @property
    def issues(self) -> list[Finding]:
        return [f for f in self.findings if f.kind in ISSUES]

    def counts(self) -> dict[str, dict[str, int]]:
        """fabric -> kind -> count, and tier -> kind -> count under 'tier:<name>'."""
        out: dict[str, dict[str, int]] = {}
        for f in self.findings:
            for key in (f.fabric, f"tier:{f.tier}" if f.tier else ""):
                if key:
                    out.setdefault(key, {})
                    out[key][f.kind] = out[key].get(f.kind, 0) + 1
        return out


def _resolve(p: Plan, raw_device: str, raw_port: str, descr: str = "") -> tuple[str, str] | None:
    """(device, port) of the plan an evidence end names; the port may stay raw (an unplanned port);
    None when the device is not one of the plan's."""
    head, _, rest = raw_device.strip().partition(" ")
    device = p.device(raw_device) if not rest else (p.device(head) or p.device(raw_device))
    if device is None:
        return None
    if rest and device in p.hosts and _RDMA.match(rest.strip()):  # ibnetdiscover: "<host> <rdma>", planned or not
        return device, rest.strip()
    port = p.port(device, raw_port)
    if port is None and descr:
        port = p.port(device, descr)
    if port is None:
        port = "" if _MAC.match(raw_port.strip()) else raw_port.strip()
    return device, port


def compare(p: Plan, seen: list[Seen], reporting: set[str], speed: bool = False,
            only: set[str] | None = None) -> Verdict:
    """reporting: the planned devices that gave evidence (the others are not deployed or silent);
    only: the fabrics to hold (default: every fabric the evidence touches)."""
    v = Verdict()
    views: dict[tuple[str, str], list[tuple[str, str, int | None]]] = {}
    outsiders: set[str] = set()
    for s in seen:
        local = _resolve(p, s.device, s.port)
        if local is None:
            outsiders.add(s.device)
            continue
        far = _resolve(p, s.peer, s.peer_port, s.peer_port_descr)
        views.setdefault(local, []).append((far[0], far[1], s.speed) if far else (s.peer or "?", s.peer_port, s.speed))
    if outsiders:
        v.notes.append(f"evidence from {len(outsiders)} device(s) the plan does not have: "
                       f"{', '.join(sorted(outsiders)[:6])}")
    fabrics = only or {p.ends[e].fabric for e in views if e in p.ends}
    ends: dict[str, int] = {}
    for info in p.ends.values():
        ends[info.fabric] = ends.get(info.fabric, 0) + 1
    for name in sorted(set(p.roles) | set(ends)):
        v.fabrics[name] = ("held" if name in fabrics else "no evidence given" if only is None else "not asked")
        v.planned[name] = ends.get(name, 0) // 2  # two ends a cable
        v.roles[name] = p.roles.get(name, "compute")
    done: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    wrong: dict[tuple[str, str], tuple[str, str]] = {}  # an end -> the end it is cabled to instead
    for end, info in sorted(p.ends.items()):
        if info.fabric not in fabrics:
            continue
        pair = tuple(sorted((end, info.far)))
        if pair in done:
            continue
        done.add(pair)  # type: ignore[arg-type]  # a sorted pair: two ends
        v.checked += 1
        _cable(v, p, end, info.far, views, reporting, speed, wrong)
    _unplanned(v, p, views, fabrics)
    v.repairs = _repairs(p, wrong)
    return v


def _cable(v: Verdict, p: Plan, a: tuple[str, str], z: tuple[str, str], views: dict, reporting: set[str],
           speed: bool, wrong: dict) -> None:
    info = p.ends[a]
    exp = f"{z[0]} {z[1]}"
    bad = False
    for here, there in ((a, z), (z, a)):
        seen = views.get(here, [])
        if len(seen) > 1:
            v.findings.append(Finding("several-neighbours", info.fabric, *here, f"{there[0]} {there[1]}",
                                      ", ".join(f"{d} {q}".strip() for d, q, _ in seen), info.tier))
            bad = True
            continue
        for d, q, sp in seen:
            if d == there[0] and (q == there[1] or q == ""):
                if speed and sp is not None and info.speed is not None and sp != info.speed:
                    v.findings.append(Finding("wrong-speed", info.fabric, *here, f"{info.speed}G", f"{sp}G",
                                              info.tier))
                    bad = True
                continue
            v.findings.append(Finding("miswired", info.fabric, *here, f"{there[0]} {there[1]}", f"{d} {q}".strip(),
                                      info.tier))
            wrong[here] = (d, q)
            bad = True
    if bad:
        return
    a_seen, z_seen = views.get(a, []), views.get(z, [])
    if a_seen or z_seen:
        v.ok += 1
        return
    a_on, z_on = a[0] in reporting, z[0] in reporting
    if a_on and z_on:
        v.findings.append(Finding("not-cabled", info.fabric, *a, exp, "nothing", info.tier))
    elif a_on or z_on:
        silent = z if a_on else a
        v.findings.append(Finding("unverified", info.fabric, *a, exp, f"nothing; {silent[0]} gave no evidence "
                                  "(not cabled, or it sends no LLDP)", info.tier))
    else:
        v.findings.append(Finding("not-deployed", info.fabric, *a, exp, "no evidence from either end", info.tier))


def _unplanned(v: Verdict, p: Plan, views: dict, fabrics: set[str]) -> None:
    """Links seen on ports the plan leaves unused (both ends unplanned)."""
    seen_pairs = set()
    fabric_of = _fabric_of(p, fabrics)
    for (d, q), found in sorted(views.items()):
        if (d, q) in p.ends:
            continue
        for fd, fq, _ in found:
            if (fd, fq) in p.ends:
                continue  # the far end is planned: reported there as miswired
            pair = tuple(sorted(((d, q), (fd, fq))))
            if pair in seen_pairs:
                continue
            seen_pairs.add(pair)
            v.findings.append(Finding("unplanned", fabric_of.get(d, ""), d, q, "unused", f"{fd} {fq}".strip()))


def _fabric_of(p: Plan, fabrics: set[str]) -> dict[str, str]:
    """Each device's first fabric of `fabrics` in the plan: an index, so that every unplanned port is
    placed at once (a scan of every planned end for each took minutes at 200,000 ports)."""
    out: dict[str, str] = {}
    for (device, _), end in p.ends.items():
        if end.fabric in fabrics:
            out.setdefault(device, end.fabric)
    return out


def _repairs(p: Plan, wrong: dict[tuple[str, str], tuple[str, str]]) -> list[str]:
    """Moves that make the wrong cables right: a crossed pair is one swap."""
    out, done = [], set()
    for here, there in sorted(wrong.items()):
        if here in done:
            continue
        planned = p.ends[here].far
        other = wrong.get(planned)
        # crossed pair: here sees X (planned for Y), and Y's planned end sees... the planned far end of X
        x_planned = p.ends.get(there)
        if x_planned is not None and wrong.get(x_planned.far) == planned:
            partner = x_planned.far
            done |= {here, partner, there, planned}
            out.append(f"swap the plugs at {there[0]} {there[1]} and {planned[0]} {planned[1]} (the cables from "
                       f"{here[0]} {here[1]} and {partner[0]} {partner[1]} are crossed)")
            continue
        if other is None or other == here:
            done |= {here, planned}
            out.append(f"move the cable at {there[0]} {there[1]} to {planned[0]} {planned[1]} (its other end is "
                       f"{here[0]} {here[1]})")
    return out
