"""A render folder as the lab reads it: report.json for the fabrics, cabling.csv for the cables,
addresses.csv for the plan's addresses and ASNs, the switch configs translated strictly (eos.py,
nvue.py, sonic.py), the hosts' netplans and frr.conf. Apart from the lab (run.py) so that verify
reads a render the same way without importing the orchestrator of namespaces and daemons."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fabgen.emulate import eos, inputs, nvue, sonic
from fabgen.emulate.expect import Plan, network
from fabgen.emulate.model import Host, HostPort, Router, TranslateError, load_yaml
from fabgen.spec.platforms import PLATFORMS

MAX_PEER_GROUPS = 16  # fabgen writes two or three per switch (SPINES, LEAVES, HOSTS, CORES)

# platform -> (a switch config's file after <fabric>/switches/<name>, its translator)
TRANSLATORS = {name: (PLATFORMS[name].config_file, translate)
               for name, translate in (("eos", eos.translate), ("nvue", nvue.translate), ("sonic", sonic.translate))}


EMULATED_KINDS = ("roce", "spectrum-x")


class BadInput(Exception):
    """Not a render, a --fabric or --fail naming nothing of it, a config the translators refuse."""


@dataclass
class Fabric:
    """One emulated fabric (all its planes) as the render describes it."""

    name: str
    planes: list[str]
    platform: str
    host_routing: str = "static"  # report.json's addressing.host_routing: bgp where hosts run BGP to leaves
    role: str = "compute"  # report.json's role: on a storage fabric every node also reaches a storage server unbound
    servers: list[str] = field(default_factory=list)  # a storage fabric's nodes on no compute fabric (storage servers)
    routers: dict[str, Router] = field(default_factory=dict)
    hosts: dict[str, Host] = field(default_factory=dict)
    cables: list[dict[str, str]] = field(default_factory=list)
    addresses: list[dict[str, str]] = field(default_factory=list)
    plan: Plan = field(default_factory=Plan)
    left_out: set[str] = field(default_factory=set)


def _table(files: dict[str, bytes], path: str) -> list[dict[str, str]]:
    """A cabling.csv or addresses.csv, every cell the lab uses checked (inputs.table)."""
    try:
        return inputs.table(files, path)
    except TranslateError as exc:
        raise BadInput(str(exc)) from None


def _report(files: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    """report.json's fabrics: a mapping of fabric name to its mapping, or BadInput."""
    try:
        fabrics = json.loads(files["report.json"])["fabrics"]
    except (ValueError, RecursionError, KeyError, TypeError) as exc:
        raise BadInput(f"report.json: not a fabgen report ({str(exc)[:100]})") from None
    if not isinstance(fabrics, dict) or not all(isinstance(f, dict) for f in fabrics.values()):
        raise BadInput("report.json: fabrics is not a mapping of fabrics, as fabgen writes it")
    for name, f in fabrics.items():
        try:
            inputs.name(name, inputs.DEVICE, "report.json: fabrics", "fabric")
            if not isinstance(f.get("addressing") or {}, dict):
                raise inputs.InputError(f"report.json: fabrics.{name}.addressing is not a mapping")
            for key in ("kind", "role", "platform"):
                if f.get(key) is not None:
                    inputs.name(f[key], inputs.WORD, f"report.json: fabrics.{name}.{key}", key)
        except TranslateError as exc:
            raise BadInput(str(exc)) from None
    return fabrics


def _base(name: str) -> str:
    """The inventory fabric of a plane's name (`gpu-plane2` -> `gpu`)."""
    return name.rsplit("-plane", 1)[0] if "-plane" in name else name


def _is_overlay(f: dict[str, Any]) -> bool:
    return (f.get("addressing") or {}).get("host_addressing") == "evpn"


def fabrics_of(files: dict[str, bytes], wanted: str | None, overlay: bool = False) -> list[Fabric]:
    """The routed Ethernet fabrics of the render (every plane of one inventory fabric together); with
    `wanted`, only that one (by its name or a plane's). A GPU overlay fabric (host_addressing evpn)
    has a lab of its own (overlay.py, overlay_of): skipped where the caller emulates it (`overlay`),
    else refused, naming it."""
    report = _report(files)
    groups: dict[str, Fabric] = {}
    skipped = []
    for name, f in report.items():
        base = _base(name)
        # EVPN multihoming (role northsouth) has a lab of its own (evpn.py, northsouth_of)
        if f.get("kind") not in EMULATED_KINDS or f.get("role") in ("oob", "northsouth"):
            skipped.append(name)
            continue
        if _is_overlay(f):
            if not overlay and wanted in (None, base, name):
                raise BadInput(f"fabric {base}: the GPU EVPN overlay (host_addressing evpn) is not read here yet "
                               "(fabgen emulate emulates it); name the render's other fabrics with --fabric NAME")
            continue
        routing = (f.get("addressing") or {}).get("host_routing", "static")
        groups.setdefault(base, Fabric(base, [], f.get("platform", ""), routing, f.get("role") or "compute")
                          ).planes.append(name)
    evpn = northsouth_of(files, wanted) + [name for name, _ in overlay_of(files, wanted) if overlay]
    if wanted is not None:
        chosen = [g for g in groups.values() if wanted == g.name or wanted in g.planes]
        for g in chosen:  # one plane asked for: that plane alone, named so in the report (docs/emulate.md)
            if wanted != g.name:
                g.name, g.planes = wanted, [wanted]
        if not chosen and evpn:
            return []
        if not chosen:
            names = sorted(groups) + sorted(p for g in groups.values() for p in g.planes if p != g.name)
            names += [n for name, planes in (overlay_of(files, None) if overlay else []) for n in (name, *planes)
                      if n != name or len(planes) > 1 or planes[0] != name]
            raise BadInput(f"--fabric {wanted}: no Ethernet fabric of the render is called so (it has "
                           f"{', '.join(names) or 'none'}; InfiniBand and out-of-band networks are not emulated)")
        return chosen
    if not groups and not evpn:
        raise BadInput("the render has no RoCE or Spectrum-X fabric to emulate (InfiniBand and out-of-band "
                       "networks are not emulated)")
    return list(groups.values())


def northsouth_of(files: dict[str, bytes], wanted: str | None) -> list[str]:
    """The render's northsouth fabrics (EVPN multihoming, emulated by evpn.py); with `wanted`,
    only that one."""
    report = _report(files)
    return [name for name, f in report.items() if f.get("role") == "northsouth" and wanted in (None, name)]


def overlay_of(files: dict[str, bytes], wanted: str | None) -> list[tuple[str, list[str]]]:
    """The render's GPU overlay fabrics (host_addressing evpn, emulated by overlay.py) as (name,
    planes): every plane of one, or with `wanted` the fabric so named, or the one plane so named
    (the report then names that plane)."""
    out: dict[str, list[str]] = {}
    for name, f in _report(files).items():
        if f.get("kind") in EMULATED_KINDS and f.get("role") not in ("oob", "northsouth") and _is_overlay(f):
            if wanted == name and wanted != _base(name):
                return [(name, [name])]
            if wanted in (None, _base(name)):
                out.setdefault(_base(name), []).append(name)
    return list(out.items())


def read_fabric(files: dict[str, bytes], fab: Fabric) -> Fabric:
    """Translate every switch config, read every host's netplan, build the plan."""
    suffix, translate = TRANSLATORS.get(fab.platform, (None, None))
    if translate is None:
        raise BadInput(f"fabric {fab.name}: platform {fab.platform} is not emulated")
    try:
        inputs.tables_fit(files, _tables(fab.planes))
    except TranslateError as exc:
        raise BadInput(str(exc)) from None
    for plane in fab.planes:
        fab.cables += [r | {"fabric": plane} for r in _table(files, f"{plane}/cabling.csv")]
        fab.addresses += [r | {"fabric": plane} for r in _table(files, f"{plane}/addresses.csv")]
    switches = {r["device"]: r for r in fab.addresses if r["role"] in ("leaf", "spine", "core")}
    for plane in fab.planes:
        for device in sorted({r["device"] for r in fab.addresses if r["fabric"] == plane and r["device"] in switches}):
            path = f"{plane}/switches/{device}{suffix}"
            if path not in files:
                raise BadInput(f"{path}: the switch's config is not in the render")
            try:
                fab.routers[device] = inputs.router(inputs.translated(translate, device, files[path], path), path)
            except TranslateError as exc:
                raise BadInput(str(exc)) from None
            fab.left_out |= fab.routers[device].ignored
    _read_hosts(files, fab)
    if fab.role == "storage":
        fab.servers = _servers(files, fab)
    fab.plan = _plan(fab)
    _only_planned_peers(fab)
    return fab


def _read_hosts(files: dict[str, bytes], fab: Fabric) -> None:
    """Every node addresses.csv names, with the ports it gives it, read from its netplan."""
    for r in fab.addresses:
        if r["role"] == "node":
            if not r["address"]:  # a routed fabric addresses every node port (a northsouth leg has none)
                raise BadInput(f"{r['fabric']}/addresses.csv: {r['device']} {r['interface']} has no address")
            host = fab.hosts.setdefault(r["device"], Host(r["device"]))
            host.ports.setdefault(r["interface"], HostPort(r["interface"], [], plane=r["fabric"]))
    try:
        for name, host in fab.hosts.items():
            inputs.host(_read_host(files, host), f"hosts/{name}/netplan.yaml")
    except TranslateError as exc:
        raise BadInput(str(exc)) from None


def _servers(files: dict[str, bytes], fab: Fabric) -> list[str]:
    """The storage fabric's storage servers: its nodes that no compute fabric of the render cables
    (read from those fabrics' cabling.csv, device names only: InfiniBand's too), which every other
    node of the fabric must reach without binding its source, as an NFS mount does."""
    compute = [f"{name}/cabling.csv" for name, f in _report(files).items()
               if (f.get("role") or "compute") == "compute" and f"{name}/cabling.csv" in files]
    try:
        inputs.tables_fit(files, _tables(fab.planes) + compute)
        on_compute = {d for path in compute for d in inputs.devices(files, path)}
    except TranslateError as exc:
        raise BadInput(str(exc)) from None
    return sorted(set(fab.hosts) - on_compute)


def _tables(planes: list[str]) -> list[str]:
    return [f"{plane}/{name}" for plane in planes for name in ("cabling.csv", "addresses.csv")]


def _only_planned_peers(fab: Fabric) -> None:
    """A switch config configures no more BGP neighbors than the plan gives it sessions, and every
    cable end is cabled once: bgpd holds about 0.7 MB per configured peer (a few MB of neighbor lines
    would fill the machine, and pass), and a port cabled twice fails inside `ip` without a location."""
    planned: dict[str, int] = {}
    for a, _, z, _ in fab.plan.sessions:
        planned[a] = planned.get(a, 0) + 1
        planned[z] = planned.get(z, 0) + 1
    for dev, r in fab.routers.items():
        if len(r.neighbors) > planned.get(dev, 0) or len(r.groups) > MAX_PEER_GROUPS:
            raise BadInput(f"{_config_path(fab, dev)}: {len(r.neighbors)} BGP neighbors in {len(r.groups)} peer "
                           f"groups, where the plan (cabling.csv, addresses.csv) gives {dev} {planned.get(dev, 0)} "
                           "sessions")
    ends: set[tuple[str, str]] = set()
    for c in fab.cables:
        for end in ((c["a_device"], c["a_port"]), (c["z_device"], c["z_port"])):
            if end in ends:
                raise BadInput(f"{c['fabric']}/cabling.csv: {end[0]} {end[1]} is cabled twice")
            ends.add(end)


def _config_path(fab: Fabric, device: str) -> str:
    suffix = TRANSLATORS[fab.platform][0]
    plane = next((r["fabric"] for r in fab.addresses if r["device"] == device), fab.name)
    return f"{plane}/switches/{device}{suffix}"


def _read_host(files: dict[str, bytes], host: Host) -> Host:
    """A node's ports, loopbacks and frr.conf from its rendered files (checked by inputs.host)."""
    path = f"hosts/{host.name}/netplan.yaml"
    if path not in files:
        raise BadInput(f"{path}: the node's netplan is not in the render")
    eths = inputs.netplan_ethernets(load_yaml(files[path], path), path)
    for name, port in host.ports.items():
        e = eths.get(name)
        if e is None:
            raise BadInput(f"{path}: no interface {name}, which addresses.csv gives the node")
        port.addresses = inputs.items(e, "addresses", f"{path}: network.ethernets.{name}")
        port.routes = inputs.items(e, "routes", f"{path}: network.ethernets.{name}")
        port.rules = inputs.items(e, "routing-policy", f"{path}: network.ethernets.{name}")
        port.mtu = inputs.integer(e.get("mtu", 0), 0, 65535, f"{path}: network.ethernets.{name}.mtu", "MTU")
    host.loopbacks = inputs.items(eths.get("lo", {}), "addresses", f"{path}: network.ethernets.lo")
    frr = f"hosts/{host.name}/frr.conf"
    if frr in files:
        host.frr = inputs.text(files[frr], frr)
    return host


def _plan(fab: Fabric) -> Plan:
    """Sessions, ASNs and origins from addresses.csv and cabling.csv only."""
    p = Plan()
    for r in fab.addresses:
        if r["role"] in ("leaf", "spine", "core"):
            p.asn[r["device"]] = int(r["asn"])
            p.roles[r["device"]] = r["role"]
    for r in fab.cables:
        a, z = r["a_device"], r["z_device"]
        if a in p.asn and z in p.asn:
            p.sessions.append((a, r["a_port"], z, r["z_port"]))
    host_port = {(r["peer_device"], r["peer_interface"]): (r["device"], r["interface"], r["address"])
                 for r in fab.addresses if r["role"] == "node"}
    for host in fab.hosts.values():  # hosts that route announce their service address over every port
        asn = _host_asn(host.frr) if fab.host_routing == "bgp" else None  # its ASN: its own rendered frr.conf
        if asn is None:
            continue
        p.asn[host.name] = asn
        p.origins[host.name] = [network(a) for a in host.loopbacks]
    for (leaf, port), (node, iface, address) in host_port.items():
        if node in p.asn:
            p.sessions.append((node, iface, leaf, port))
        p.origins.setdefault(leaf, [])
        subnet = network(address)
        if subnet not in p.origins[leaf]:
            p.origins[leaf].append(subnet)
    for r in fab.addresses:
        if r["role"] in ("leaf", "spine", "core") and r["address"].endswith("/32") and not r["peer_device"]:
            p.origins.setdefault(r["device"], []).append(network(r["address"]))
    return p


def _host_asn(frr: str) -> int | None:
    for line in frr.splitlines():
        if line.startswith("router bgp "):
            return int(line.split()[2])
    return None
