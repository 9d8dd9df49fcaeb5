"""`fabgen emulate RENDER_DIR`: bring an Ethernet fabric up from its rendered files and check it.

Reads the render as a user's tools would (through its manifest, docs/emulate.md): report.json
for the fabrics, cabling.csv for the cables, addresses.csv for the plan's addresses and ASNs,
the switch configs (translated strictly: eos.py, nvue.py, sonic.py) and the hosts' netplans and
frr.conf. Builds one namespace per switch and per node, one veth pair per cable, runs FRR
(zebra, bgpd, bfdd) per switch and per host that routes, waits for the state to settle and
checks it against the plan (expect.py): every session and BFD peer up, every switch's running
ASN the plan's, every prefix on every switch with the width the cabling promises (FRR's RIB and
the kernel's FIB), every host port reaching the next host on its rail from its own address.
`--fail` then takes ports or devices down and checks the widths drop as the plan says and no
host loses its way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabgen.emulate import checks, inputs
from fabgen.emulate.expect import Plan
from fabgen.emulate.frr import LAB_BFD_MS, LAB_BFD_MULTIPLIER, LAB_BGP_TIMERS, frr_conf
from fabgen.emulate.lab import Built, Lab
from fabgen.emulate.lab import daemons as _daemons
from fabgen.emulate.lab import host_ip as _host_ip
from fabgen.emulate.lab import lab as open_lab
from fabgen.emulate.lab import route_line as _route_line  # noqa: F401 (tests read it here)
from fabgen.emulate.model import Router, TranslateError
from fabgen.emulate.read import BadInput, Fabric, _plan, _tables, fabrics_of, northsouth_of, overlay_of, read_fabric

# Switches and routing hosts emulated at once on two cores (benchmarks/results-emulate.md): a
# sample of 320 routers, 128 nodes and 2,048 sessions passes in 246 s, converged in 9 s, with the
# large lab's BFD timers and ports brought up together (BFD_DEFAULT_UP_TO); 80 routers at FRR's
# 300 ms BFD took 256 s.
MAX_ROUTERS = 320
# Up to this many routers BFD runs at FRR's default timers and the ports are up from the start;
# beyond, BFD at frr.LAB_BFD_MS (frr.py) and the switch ports come up together (release).
BFD_DEFAULT_UP_TO = 100
# Nodes (one namespace each, no daemon unless they route) emulated at once; beyond either bound a
# sample is emulated (sample.py). 128 is measured beside 320 routers; 384 and 512 (with their
# prefixes on every router) were not.
MAX_HOSTS = 128
# BGP sessions emulated at once: FRR 8.4's bgpd holds about 0.7 MB per configured peer (measured:
# 13 MB idle, 58 MB with 64 peers and none up), so the sessions, not the prefixes, bound the
# lab's memory; a whole fabric of 320 routers and 8,192 sessions filled 22 of 24 GiB.
MAX_SESSIONS = 4096
# Seconds to settle, per phase, unless --timeout says: a whole three-tier fabric of 160 routers and
# 4,096 sessions converged in 846 s on two cores (benchmarks/results-emulate.md).
SMALL_LAB_TIMEOUT, LARGE_LAB_TIMEOUT = 300.0, 1200.0
# The checks of what the switches route; --fail is applied once these pass (a node that cannot reach
# another does not change what the switches route, and the widths after it are still worth reading).
ROUTING = frozenset({"sessions", "asn", "bfd", "rib", "fib"})


# Building --------------------------------------------------------------------------------------------


def build(la: Lab, fabs: list[Fabric], progress: Callable[[str], None]) -> Built:
    b = Built(slow_bfd=_speakers(fabs) > BFD_DEFAULT_UP_TO)
    devices = [d for f in fabs for d in (*f.routers, *f.hosts)]
    for k, d in enumerate(dict.fromkeys(devices)):
        b.ns[d] = la.namespace(k)
    la.neighbours(sum(len(f.cables) for f in fabs))
    progress(f"cabling {sum(len(f.cables) for f in fabs)} links")
    ends_up = _cable(b, fabs)
    hosts_all = {h for f in fabs for h in f.hosts}
    b.flush()
    held: list[tuple[str, str]] = []  # a large lab's switch ports: up once every daemon runs (release)
    for ns, ifn, alias, dev in ends_up:
        hold = b.slow_bfd and dev not in hosts_all
        b.ip(ns, f"link set {ifn} alias {_alias(alias)}" + ("" if hold else " up"))
        if hold:
            held.append((ns, ifn))
    progress("addresses and routes")
    for f in fabs:
        for name, r in f.routers.items():
            _router_ip(b, name, r)
        for h in f.hosts.values():
            _host_ip(b, h)
    b.flush()
    progress("FRR daemons")
    for f in fabs:
        for name, r in f.routers.items():
            _router_frr(la, b, name, r, b.slow_bfd)
        for h in f.hosts.values():
            # one BGP speaker per node, started by the fabric it routes in (not there when a sample left it out)
            if h.frr and h.name in f.plan.asn and h.name not in b.dirs:
                frr_dir = la.frr_dir(b.ns[h.name])
                conf = frr_dir / "frr.conf"
                conf.write_text(h.frr)  # unmodified
                _daemons(la, b, h.name, frr_dir, conf, bfd=" bfd" in h.frr)
    release(b, held, progress)
    return b


def release(b: Built, ends: list[tuple[str, str]], progress: Callable[[str], None]) -> None:
    """A large lab's switch ports, cabled down, brought up at once when every daemon runs: started
    one by one with their links up, each new router's sessions re-ran the best-path work of all
    that were up, and beyond a few hundred routers the last daemons started ever more slowly
    (benchmarks/results-emulate.md). Node ports are up from the start (their routes need a live
    port); their far ends are down until now. Small labs (every test's) start with ports up."""
    if ends:
        progress(f"bringing {len(ends)} switch ports up")
    for ns, ifn in ends:
        b.ip(ns, f"link set {ifn} up")
    b.flush()


def _cable(b: Built, fabs: list[Fabric]) -> list[tuple[str, str, str, str]]:
    """A veth pair a cable, each end named for its node port or numbered on its switch; every end
    as (namespace, interface, port, device)."""
    ends_up: list[tuple[str, str, str, str]] = []
    for f in fabs:
        host_if = {(r["device"], r["peer_device"], r["peer_interface"]): r["interface"]
                   for r in f.addresses if r["role"] == "node"}
        counter: dict[str, int] = {}
        for c in f.cables:
            ends = []
            for dev, port, far, far_port in ((c["a_device"], c["a_port"], c["z_device"], c["z_port"]),
                                             (c["z_device"], c["z_port"], c["a_device"], c["a_port"])):
                if dev in f.hosts:
                    name = host_if.get((dev, far, far_port))
                    if name is None:
                        raise BadInput(f"{c['fabric']}/cabling.csv: {dev} {port} to {far} {far_port} has no address "
                                       "in addresses.csv")
                elif dev in f.routers:
                    counter[dev] = counter.get(dev, 0) + 1
                    name = f"p{counter[dev]}"
                else:
                    raise BadInput(f"{c['fabric']}/cabling.csv: {dev} is neither a switch nor a node of the fabric")
                b.ifname[(dev, port)] = name
                ends.append((b.ns[dev], name, port, dev))
            (na, ia, pa, da), (nz, iz, pz, dz) = ends
            b.ip(na, f"link add {ia} type veth peer name {iz} netns {nz}")
            ends_up += [(na, ia, pa, da), (nz, iz, pz, dz)]
    return ends_up


def _speakers(fabs: list[Fabric]) -> int:
    """FRR instances of the lab: every switch, and every node that runs BGP once (a node on several
    fabrics is one namespace, one speaker)."""
    nodes = {h.name for f in fabs for h in f.hosts.values() if h.frr and h.name in f.plan.asn}
    return sum(len(f.routers) for f in fabs) + len(nodes)


def _alias(text: str) -> str:
    """A vendor port name as an interface alias (no spaces in an `ip -batch` line)."""
    return "".join(c if c.isalnum() or c in "/._-:" else "_" for c in text)[:120] or "-"


def _router_ip(b: Built, name: str, r: Router) -> None:
    ns = b.ns[name]
    for cidr in r.loopbacks:
        b.ip(ns, f"addr add {cidr} dev lo")
    for port, cidrs in r.routed.items():
        ifn = b.ifname.get((name, port))
        if ifn is not None:  # a routed port without a cable is not built
            for cidr in cidrs:
                b.ip(ns, f"addr add {cidr} dev {ifn}")
    for vlan, cidrs in r.vlans.items():
        b.ip(ns, f"link add {vlan} type bridge")
        b.ip(ns, f"link set {vlan} up")
        for cidr in cidrs:
            b.ip(ns, f"addr add {cidr} dev {vlan}")
    for port, vlan in r.members.items():
        ifn = b.ifname.get((name, port))
        if ifn is not None:
            b.ip(ns, f"link set {ifn} master {vlan}")


def _router_frr(la: Lab, b: Built, name: str, r: Router, slow_bfd: bool) -> None:
    missing = [p for p in r.unnumbered if (name, p) not in b.ifname]
    if missing:
        raise BadInput(f"{name}: BGP unnumbered on {', '.join(missing[:3])}, which no cable of the plan uses")
    d = la.frr_dir(b.ns[name])
    conf = d / "frr.conf"
    conf.write_text(frr_conf(r, {p: b.ifname[(name, p)] for p in r.unnumbered}, slow_bfd))
    _daemons(la, b, name, d, conf, bfd=any(g.bfd for g in r.groups.values()) or any(n.bfd for n in r.neighbors))


# The run ------------------------------------------------------------------------------------------

@dataclass
class Result:
    fabrics: list[str]
    routers: int
    hosts: int
    links: int
    seconds: float
    findings: list[Any]
    failed: list[str]
    left_out: list[str]
    notes: list[str] = field(default_factory=list)
    suspects: list[tuple[str, str]] = field(default_factory=list)  # (device, why), most likely at fault first
    evpn: list[str] = field(default_factory=list)  # the northsouth fabrics among `fabrics` (evpn.py)
    overlay: list[str] = field(default_factory=list)  # the GPU overlay fabrics among `fabrics` (overlay.py)
    checked: dict[str, Any] = field(default_factory=dict)  # device -> what was checked on it (checks.Checked)

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict[str, Any]:
        return {"fabrics": self.fabrics, "routers": self.routers, "hosts": self.hosts, "links": self.links,
                "seconds": round(self.seconds, 1), "ok": self.ok, "failed": self.failed,
                "findings": [f.as_dict() for f in self.findings], "left_out": self.left_out, "notes": self.notes,
                "suspects": [{"device": d, "why": w} for d, w in self.suspects], "evpn": self.evpn,
                "overlay": self.overlay, "checked": self.checked}


def _fail_targets(fabs: list[Fabric], fails: list[str]) -> set[tuple[str, str]]:
    """(device, vendor port) of every port `--fail DEVICE[:PORT]` takes down; BadInput naming one that
    is no device or port of the emulated fabrics."""
    ports = {(c["a_device"], c["a_port"]) for f in fabs for c in f.cables}
    ports |= {(c["z_device"], c["z_port"]) for f in fabs for c in f.cables}
    devices = {d for d, _ in ports}
    out: set[tuple[str, str]] = set()
    for item in fails:
        device, _, port = item.partition(":")
        if device not in devices:
            raise BadInput(f"--fail {item}: {device} is no switch or node of the emulated fabric(s) (or of the sample "
                           "emulated of a large one: --max-routers)")
        if port and (device, port) not in ports:
            raise BadInput(f"--fail {item}: {device} has no cabled port {port}")
        out |= {(d, p) for d, p in ports if d == device and (not port or p == port)}
    return out


def _render(render: Path, trust_edited: bool, progress: Callable[[str], None]) -> tuple[dict[str, bytes], list[str]]:
    """The render's files as its manifest lists them, and the notes on files edited since (trusted)."""
    from fabgen.rendered import read as rendered

    try:
        files = rendered.read_render(render, progress)
        edited = rendered.trusted(render, files, trust_edited, "emulate")
    except rendered.NotARender as exc:
        raise BadInput(str(exc)) from None
    if "report.json" not in files:
        raise BadInput(f"{render}: no report.json: not a render")
    return files, edited


def emulate(render: Path, fabric: str | None = None, fails: list[str] | None = None, timeout: float | None = None,
            quiet: float = 3.0, progress: Callable[[str], None] = lambda s: None,
            save_state: Path | None = None, max_routers: int = MAX_ROUTERS, max_hosts: int = MAX_HOSTS,
            max_sessions: int = MAX_SESSIONS, trust_edited: bool = False) -> Result:
    """The whole run; raises BadInput (exit 2) or LabError (exit 2: the machine cannot). With
    `save_state`, every switch's FRR state once converged goes there (save_states)."""
    start = time.monotonic()
    if save_state is not None and (save_state.is_symlink() or save_state.exists()):
        raise BadInput(f"--save-state {save_state}: give a directory that does not exist yet (fabgen creates it)")
    files, edited = _render(render, trust_edited, progress)
    chosen, evpn_names = fabrics_of(files, fabric, overlay=True), northsouth_of(files, fabric)
    overlays = overlay_of(files, fabric)
    try:  # every table of the run together, before any is read
        inputs.tables_fit(files, _tables([p for f in chosen for p in f.planes] + evpn_names
                                         + [p for _, planes in overlays for p in planes]))
    except TranslateError as exc:
        raise BadInput(str(exc)) from None
    fabs = [read_fabric(files, f) for f in chosen]
    evpn_plans = _evpn_plans(files, evpn_names) + _overlay_plans(files, overlays, max_routers)  # all before any lab
    if not fabs:  # northsouth and overlay fabrics only: their own labs (evpn.py, overlay.py)
        if fails:
            raise BadInput("--fail applies to routed fabrics; a northsouth or GPU overlay fabric's emulation takes "
                           "its leaves down by itself")
        result = _emulate_evpn(evpn_plans, start, progress)
        result.notes[:0] = edited
        return result
    _fail_targets(fabs, fails or [])  # a --fail naming nothing of the render: said before any sampling
    fabs, sampled = _sampled(fabs, max_routers, max_hosts, max_sessions)
    down = _fail_targets(fabs, fails or [])  # within the sample (a port sampled out is said so)
    notes = [*edited, "the management plane (management ports, VRF, services) is not emulated",
             "QoS, PFC, ECN and adaptive routing are not emulated: vendor data planes are not", *sampled]
    findings: list[Any] = []
    checked = checks.Checked()
    with open_lab() as la:
        progress(f"namespaces for {sum(len(f.routers) + len(f.hosts) for f in fabs)} devices")
        b = build(la, fabs, progress)
        if timeout is None:
            timeout = LARGE_LAB_TIMEOUT if b.slow_bfd else SMALL_LAB_TIMEOUT
        if b.slow_bfd:
            notes.append(f"BFD at {LAB_BFD_MS} ms x {LAB_BFD_MULTIPLIER}, BGP keepalive and hold at "
                         f"{LAB_BGP_TIMERS[0]} and {LAB_BGP_TIMERS[1]} s (a lab beyond {BFD_DEFAULT_UP_TO} routers; "
                         "FRR's 300 ms and datacenter timers below)")
        plan = _merged([f.plan for f in fabs])
        expected = _expected_sessions(plan)
        state, took = checks.settle(la, b.dirs, expected, quiet, timeout, progress)
        notes.append(f"converged (or settled) in {took:.1f} s")
        findings += _check_all(la, b, fabs, plan, state, expected, set(), progress, checked)
        if save_state is not None:
            save_states(la, b, fabs, save_state, progress)
        broken = sorted({f.check for f in findings if f.check in ROUTING})
        if down and broken:
            notes.append(f"--fail not applied: the fabric failed its {', '.join(broken)} checks before it")
        if down and not broken:  # a host that cannot reach does not change what the switches route
            progress(f"taking {len(down)} port(s) down")
            for dev, port in sorted(down):
                run_ip(b.ns[dev], "link", "set", b.ifname[(dev, port)], "down")
            notes.append(f"--fail took {len(down)} port(s) down: {', '.join(f'{d}:{p}' for d, p in sorted(down)[:8])}"
                         "; the widths were checked against the plan without them")
            state, took = checks.settle(la, b.dirs, _expected_sessions(plan, down), quiet, timeout, progress)
            notes.append(f"after --fail: settled in {took:.1f} s")
            findings += _check_all(la, b, fabs, plan, state, _expected_sessions(plan, down), down, progress,
                                   checked)
        speakers = len(b.dirs)
    culprits = checks.suspects(findings, plan.prefixes())
    failed = sorted({f.device for f in findings} | {d for d, _ in culprits})  # a suspect failed too
    hosts = len({h for f in fabs for h in f.hosts})
    result = Result([p for f in fabs for p in f.planes], speakers, hosts, sum(len(f.cables) for f in fabs),
                    time.monotonic() - start, findings, failed, sorted(set().union(*(f.left_out for f in fabs))),
                    notes, culprits, checked=checked.as_dict())
    if evpn_plans:
        more = _emulate_evpn(evpn_plans, start, progress)
        result.fabrics += more.fabrics
        result.routers, result.hosts, result.links = (result.routers + more.routers, result.hosts + more.hosts,
                                                      result.links + more.links)
        result.findings += more.findings
        result.failed = sorted(set(result.failed) | set(more.failed))
        result.notes += more.notes
        result.evpn, result.overlay = more.evpn, more.overlay
        result.suspects += more.suspects
        result.seconds = time.monotonic() - start
    return result


def _evpn_plans(files: dict[str, bytes], names: list[str]) -> list[Any]:
    """Each northsouth fabric's lab plan, read and checked (evpn.read), or BadInput."""
    from fabgen.emulate import evpn

    try:
        return [evpn.read(files, name, inputs.table) for name in names]
    except TranslateError as exc:
        raise BadInput(str(exc)) from None


def _overlay_plans(files: dict[str, bytes], overlays: list[tuple[str, list[str]]],
                   max_routers: int = MAX_ROUTERS) -> list[Any]:
    """Each GPU overlay fabric's lab plan (its planes together), read and checked (overlay.read), or
    BadInput; one whose switches exceed `max_routers` too (its lab takes every switch of its planes:
    it is not sampled; one plane at a time is)."""
    from fabgen.emulate import overlay

    try:
        plans = [overlay.read(files, name, planes, inputs.table) for name, planes in overlays]
    except TranslateError as exc:
        raise BadInput(str(exc)) from None
    for plan, (_, planes) in zip(plans, overlays):
        if len(plan.switches) > max_routers:
            raise BadInput(f"fabric {plan.fabric}: the GPU overlay's lab takes every switch of its planes, "
                           f"{len(plan.switches)}, beyond --max-routers {max_routers}: emulate one plane with "
                           f"--fabric {planes[0]}, or raise --max-routers")
    return plans


def _emulate_evpn(plans: list[Any], start: float, progress: Callable[[str], None]) -> Result:
    """Each northsouth fabric (evpn.py: EVPN multihoming, then a leaf of each pair down) and each GPU
    overlay fabric (overlay.py: then a leaf of each plane down) in a lab of its own."""
    from fabgen.emulate import evpn, overlay

    findings: list[Any] = []
    notes: list[str] = []
    routers = hosts = links = 0
    names = [p.fabric for p in plans]
    for plan in plans:
        runner = overlay.run_fabric if isinstance(plan, overlay.Plan) else evpn.run_fabric
        with open_lab() as la:
            found, said, r, h, n = runner(la, plan, progress)
        findings += found
        notes += said
        routers, hosts, links = routers + r, hosts + h, links + n
    culprits = [s for plan in plans if isinstance(plan, overlay.Plan)
                for s in overlay.suspects(findings, plan.switches)]
    return Result(list(names), routers, hosts, links, time.monotonic() - start, findings,
                  sorted({f.device for f in findings}), [], notes, culprits,
                  evpn=[p.fabric for p in plans if not isinstance(p, overlay.Plan)],
                  overlay=[p.fabric for p in plans if isinstance(p, overlay.Plan)])


STATE_COMMANDS = {"bgp": "show bgp ipv4 unicast summary json", "routes": "show ip route json",
                  "bfd": "show bfd peers json"}


def save_states(la: Lab, b: Built, fabs: list[Fabric], out: Path, progress: Callable[[str], None]) -> None:
    """Each switch's `<device>.bgp.json`, `.routes.json` and (BFD running) `.bfd.json`: FRR's own JSON
    as `fabgen verify --frr` reads it from a real SONiC or Cumulus switch, with the lab's interface
    names given back as the switch's port names."""
    progress(f"saving the state of {sum(len(f.routers) for f in fabs)} switches")
    out.mkdir(parents=False)
    for f in fabs:
        for dev, r in sorted(f.routers.items()):
            back = {ifn: port for (d, port), ifn in b.ifname.items() if d == dev}
            for kind, command in STATE_COMMANDS.items():
                if kind == "bfd" and not (any(g.bfd for g in r.groups.values()) or any(n.bfd for n in r.neighbors)):
                    continue
                doc = json.loads(la.vtysh(b.dirs[dev], command, timeout=60) or "{}")
                with open(out / f"{dev}.{kind}.json", "x") as fh:
                    json.dump(_renamed(doc, back), fh, indent=1, sort_keys=True)
                    fh.write("\n")


def _renamed(doc: Any, back: dict[str, str]) -> Any:
    if isinstance(doc, dict):
        return {back.get(k, k): _renamed(v, back) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_renamed(v, back) for v in doc]
    return back.get(doc, doc) if isinstance(doc, str) else doc


def _hosts_of(f: Fabric) -> dict[str, set[str]]:
    """The nodes cabled to each device of the fabric."""
    hosts_of: dict[str, set[str]] = {}
    for c in f.cables:
        for dev, far in ((c["a_device"], c["z_device"]), (c["z_device"], c["a_device"])):
            if far in f.hosts:
                hosts_of.setdefault(dev, set()).add(far)
    return hosts_of


def _sampled(fabs: list[Fabric], budget: int, host_budget: int,
             session_budget: int = 1 << 30) -> tuple[list[Fabric], list[str]]:
    """The fabrics whole while they fit in `budget` routers, `host_budget` nodes and
    `session_budget` BGP sessions, the first that does not as a sample (sample.py), the rest left
    out; notes saying what was left out."""
    from fabgen.emulate import sample

    def size(group: list[Fabric]) -> tuple[int, int, int]:  # a node on several fabrics: one namespace, one speaker
        return _speakers(group), len({h for f in group for h in f.hosts}), sum(len(f.plan.sessions) for f in group)

    def fits(group: list[Fabric]) -> bool:
        return all(x <= b for x, b in zip(size(group), (budget, host_budget, session_budget)))

    if fits(fabs):
        return fabs, []
    kept: list[Fabric] = []
    notes: list[str] = []
    routers, hosts, sessions = 0, 0, 0
    for f in fabs:
        if fits(kept + [f]):
            kept.append(f)
            routers, hosts, sessions = size(kept)
            continue
        keep, nodes = sample.choose(f.plan, _hosts_of(f), budget - routers, host_budget - hosts,  # shared nodes twice
                                    session_budget - sessions)
        if not any(f.plan.roles.get(d) == "leaf" for d in keep):
            notes.append(f"fabric {f.name} left out: its top tier alone is more than the {budget - routers} routers "
                         f"left of {budget}; emulate it with --fabric")
            continue
        switches, left = sample.restrict(f, keep, nodes, _plan)
        kept.append(f)
        notes.append(f"fabric {f.name} sampled: {len(f.routers)} of {len(f.routers) + switches} switches, "
                     f"{len(f.hosts)} of {len(f.hosts) + left} nodes (plane by plane, the top tier whole, then "
                     f"whole pods or leaves in order, their nodes in order while they fit; sessions to what is left "
                     f"out are not configured, widths are the sample's); "
                     f"beyond {budget} routers, {host_budget} nodes or {session_budget} BGP sessions a sample is "
                     "emulated")
        break  # the budget is spent
    if not kept:
        raise BadInput(f"more than {budget} routers even for one fabric's top tier; emulate one fabric or plane "
                       "(--fabric NAME-plane1)")
    emulated = {f.name for f in kept}
    for f in fabs:
        if f.name not in emulated and not any(f.name in n for n in notes):
            notes.append(f"fabric {f.name} left out: the budget of {budget} routers is spent; emulate it with --fabric")
    return kept, notes


def run_ip(ns: str, *args: str) -> None:
    from fabgen.emulate.lab import run

    run("ip", "-n", ns, *args)


def _merged(plans: list[Plan]) -> Plan:
    out = Plan()
    for p in plans:
        out.asn.update(p.asn)
        out.sessions += p.sessions
        out.roles.update(p.roles)
        for o, ps in p.origins.items():
            out.origins.setdefault(o, []).extend(ps)
    return out


def _expected_sessions(plan: Plan, down: set[tuple[str, str]] = frozenset()) -> dict[str, int]:  # type: ignore[assignment]
    """Sessions each speaker should have established: one per live cable to another speaker."""
    out = {n: 0 for n in plan.asn}
    for a, ap, z, zp in plan.sessions:
        if (a, ap) in down or (z, zp) in down:
            continue
        out[a] += 1
        out[z] += 1
    return out


def _check_all(la: Lab, b: Built, fabs: list[Fabric], plan: Plan, state: Any, expected: dict[str, int],
               down: set[tuple[str, str]], progress: Callable[[str], None],
               checked: checks.Checked | None = None) -> list[Any]:
    """Every check of one phase (`before`, or `after` the --fail ports went down), each device's
    part of it recorded in `checked` for the report."""
    phase = "after" if down else "before"
    checked = checked if checked is not None else checks.Checked()
    progress("checking sessions, routes and reachability")
    speakers = {d: expected[d] for d in b.dirs}
    peer_asn, peer_dev = _peer_asns(b, plan, fabs)
    out = checks.sessions(state, speakers, plan.asn, peer_asn, peer_dev)
    for dev, want in sorted(speakers.items()):
        peers = state.summary.get(dev, {}).get("peers", {})
        checked.sessions(phase, dev, want, sum(1 for v in peers.values() if v.get("state") == "Established"))
    with_bfd = {n for f in fabs for n, r in f.routers.items()
                if any(g.bfd for g in r.groups.values()) or any(x.bfd for x in r.neighbors)}
    gone: dict[str, set[str]] = {}
    for dev, port in down:  # a port taken down takes its far end's BFD peer with it
        for a, ap, z, zp in plan.sessions:
            for x, xp, y, yp in ((a, ap, z, zp), (z, zp, a, ap)):
                if (x, xp) == (dev, port):
                    gone.setdefault(x, set()).add(b.ifname[(x, xp)])
                    gone.setdefault(y, set()).add(b.ifname[(y, yp)])
    out += checks.bfd(la, b.dirs, {n for n in with_bfd if expected.get(n)}, gone)
    widths = plan.widths(down)
    prefixes = plan.prefixes()
    switches = sorted(plan.roles)
    rib: dict[str, dict[str, int]] = {}
    fib: dict[str, dict[str, int]] = {}
    out += checks.again(lambda: checks.rib(la, b.dirs, widths, prefixes, switches, rib))
    out += checks.again(lambda: checks.fib(b.ns, widths, prefixes, switches, fib))
    checked.widths(phase, widths, prefixes, rib, fib)
    seen: dict[checks.Pair, tuple[bool, str]] = {}
    out += checks.reach(b.ns, _pairs(fabs, down), seen)
    checked.reach(phase, seen)
    return out


def _pairs(fabs: list[Fabric], down: set[tuple[str, str]]) -> list[Any]:
    """Each fabric's reachability pairs (checks.pairs: a node on several fabrics pings on each with
    that fabric's ports), but those --fail cuts: a ping from or to a node port whose cable has an
    end down, and an unbound one from a node with such a port (its main table may still choose it:
    the kernel keeps a route over a port that lost its carrier)."""
    out = []
    for f in fabs:
        host_if = {(r["device"], r["peer_device"], r["peer_interface"]): r["interface"]
                   for r in f.addresses if r["role"] == "node"}
        cut: set[tuple[str, str]] = set()  # (node, interface) whose cable has an end down
        for c in f.cables:
            ends = ((c["a_device"], c["a_port"]), (c["z_device"], c["z_port"]))
            if ends[0] in down or ends[1] in down:
                for (dev, _), (far, far_port) in (ends, ends[::-1]):
                    if dev in f.hosts:
                        cut.add((dev, host_if.get((dev, far, far_port), "")))
        cut_addr = {a.split("/")[0] for h, ifn in cut if ifn in f.hosts[h].ports
                    for a in f.hosts[h].ports[ifn].addresses}
        hurt = {h for h, _ in cut}
        out += [p for p in checks.pairs(f.hosts, f.servers)
                if p.dst not in cut_addr and (p.src not in cut_addr if p.src else p.host not in hurt)]
    return out


def _peer_asns(b: Built, plan: Plan, fabs: list[Fabric]) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, str]]]:
    """device -> FRR's peer key (the far end's address from addresses.csv, or the interface of an
    unnumbered session) -> the plan's ASN of the device at the other end, and that device."""
    out: dict[str, dict[str, int]] = {}
    dev_of: dict[str, dict[str, str]] = {}
    for a, ap, z, zp in plan.sessions:
        for dev, port, far in ((a, ap, z), (z, zp, a)):
            ifn = b.ifname.get((dev, port))
            if ifn:
                out.setdefault(dev, {})[ifn] = plan.asn[far]
                dev_of.setdefault(dev, {})[ifn] = far
    for f in fabs:
        for r in f.addresses:
            if r["peer_device"] in plan.asn and r["device"] in plan.asn:
                key = r["address"].split("/")[0]
                out.setdefault(r["peer_device"], {})[key] = plan.asn[r["device"]]
                dev_of.setdefault(r["peer_device"], {})[key] = r["device"]
    return out, dev_of
