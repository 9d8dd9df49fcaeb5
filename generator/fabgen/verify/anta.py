"""The expected state of EOS switches as an ANTA test catalog (PyPI `anta`, the catalog format of
ANTA 1.x: a mapping of test module to a list of `{TestName: inputs}`, docs "Test Catalog").

Every test carries `filters: {tags: [<device>]}`: ANTA tags each device of its inventory with its
own name, so one catalog serves the whole fabric (an ANTA inventory from fabgen's Ansible one:
`anta get from-ansible`). Per switch:

* VerifyLLDPNeighbors: each switch-to-switch cable, far end by name and port (`require_fqdn:
  false`: the plan's names are short). Host ends are left to `fabgen verify --lldp`: a node sends
  its MAC as the port ID.
* VerifyInterfacesStatus: every cabled port `up`.
* VerifyBGPPeerSession: every planned session (peer address), established.
* VerifyBFDSpecificPeers: the BFD peers the config asks for.
* VerifyBGPRouteECMP: every prefix of the fabric with its planned ECMP width (a prefix the
  plan gives no path is left out: ANTA cannot ask for an absence).
* VerifyRunningConfig: the lossless QoS as rendered (the `qos profile` with its PFC priority and
  ECN thresholds, the profile and MTU on every used port, the BGP ECMP width), section by section.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from fabgen.verify.state import Expected

# The lines of a port's section that carry the plan: MTU, lossless profile, address, VLAN.
PORT_LINES = ("mtu ", "service-profile ", "ip address ", "switchport access vlan ")


def sections(config: str) -> dict[tuple[str, ...], list[str]]:
    """EOS running-config: each section (its path of header lines) -> its own lines. Indent is
    three spaces a level; `!` lines separate."""
    out: dict[tuple[str, ...], list[str]] = {}
    lines = [ln for ln in config.splitlines() if ln.strip() and ln.strip() != "!"]
    path: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        depth = (len(line) - len(line.lstrip(" "))) // 3
        text = line.strip()
        while path and path[-1][0] >= depth:
            path.pop()
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        header = (len(nxt) - len(nxt.lstrip(" "))) // 3 > depth
        if depth:
            out.setdefault(tuple(t for _, t in path), []).append(text)
        if header:
            path.append((depth, text))
            out.setdefault(tuple(t for _, t in path), [])
    return out


def _config_rules(e: Expected, config: str) -> list[dict[str, Any]]:
    secs = sections(config)
    rules = []
    for path, lines in secs.items():
        head = path[0] if path else ""
        if head.startswith("qos profile "):
            keep = lines
        elif head.startswith("interface ") and len(path) == 1 and "no shutdown" in lines:
            keep = [ln for ln in lines if ln.startswith(PORT_LINES)]
        elif head.startswith("router bgp ") and len(path) == 1:
            keep = [ln for ln in lines if ln.startswith("maximum-paths ")]
        else:
            continue
        keep = [ln for ln in keep if (*path, ln) not in secs]  # the line itself heads a section
        if keep:
            rules.append({"section": list(path), "entries": [{"match": ln} for ln in keep]})
    return rules


def catalog(expects: list[Expected], configs: dict[str, str]) -> dict[str, Any]:
    """The catalog for the EOS switches among `expects` (`configs`: device -> its rendered .cfg)."""
    tests: dict[str, list[dict[str, Any]]] = {"anta.tests.connectivity": [], "anta.tests.interfaces": [],
                                              "anta.tests.routing.bgp": [], "anta.tests.bfd": [],
                                              "anta.tests.configuration": []}
    for e in expects:
        if e.platform != "eos":
            continue
        tags = {"filters": {"tags": [e.device]}}
        if e.links:
            tests["anta.tests.connectivity"].append({"VerifyLLDPNeighbors": {
                "require_fqdn": False, **tags,
                "neighbors": [{"port": p, "neighbor_device": d, "neighbor_port": fp} for p, (d, fp) in
                              sorted(e.links.items(), key=lambda kv: _natural(kv[0]))]}})
        ports = sorted(e.links, key=_natural) + sorted(_host_ports(configs[e.device]) - set(e.links), key=_natural)
        if ports:
            tests["anta.tests.interfaces"].append({"VerifyInterfacesStatus": {
                **tags, "interfaces": [{"name": p, "status": "up"} for p in ports]}})
        if e.peers:
            tests["anta.tests.routing.bgp"].append({"VerifyBGPPeerSession": {
                **tags, "bgp_peers": [{"peer_address": k, "vrf": "default"} for k in sorted(e.peers, key=_ip_key)]}})
        routes = [{"prefix": p, "vrf": "default", "ecmp_count": w} for p, w in e.widths.items() if w > 0]
        if routes:
            tests["anta.tests.routing.bgp"].append({"VerifyBGPRouteECMP": {**tags, "route_entries": routes}})
        if e.bfd:
            tests["anta.tests.bfd"].append({"VerifyBFDSpecificPeers": {
                **tags, "bfd_peers": [{"peer_address": k, "vrf": "default"} for k in sorted(e.bfd, key=_ip_key)]}})
        rules = _config_rules(e, configs[e.device])
        if rules:
            tests["anta.tests.configuration"].append({"VerifyRunningConfig": {**tags, "rules": rules}})
    return {k: v for k, v in tests.items() if v}


def _host_ports(config: str) -> set[str]:
    """Used Ethernet ports (not shut down) of a config: the host ports beside the switch links."""
    return {path[0].split(" ", 1)[1] for path, lines in sections(config).items()
            if len(path) == 1 and path[0].startswith("interface Ethernet") and "no shutdown" in lines}


def _natural(text: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))


def _ip_key(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(".")) if text.count(".") == 3 else (1 << 40,)


def dump(cat: dict[str, Any]) -> str:
    head = ("# ANTA test catalog written by fabgen verify --anta-catalog from the render's\n"
            "# plan. Run: anta nrfu --catalog <this file> (an ANTA inventory naming devices\n"
            "# as the plan does)\n")
    # explicit_start: the document start after the comment lines, as every YAML file fabgen writes
    # (yamllint's document-start; fabgen/formats/yamllint.yaml)
    return head + yaml.dump(cat, Dumper=_NoAliases, sort_keys=False, default_flow_style=False, width=120,
                            explicit_start=True)


class _NoAliases(yaml.SafeDumper):
    """Every test's filters written out in full (no `&id001` anchors: a reader sees each device)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True
