"""Spectrum-X target: Cumulus Linux NVUE on SN5600, OUT/<fabric>/switches/<device>.nvue.yaml
(a startup.yaml) and <device>.nvue.sh (the same configuration as `nv set` commands); and the
out-of-band access switches (SN2201, `OOB_TARGET`, below), written the same way.

One structured config per switch, the NVUE object tree as nested dicts, is the single
source: the YAML is that tree under `- set:` after a `- header:` naming the model and the
Cumulus Linux release (as `nv config save` writes it), and the script is the same tree
flattened to `nv set <path> <value>` lines (a leaf `{}` is a word of the path, as in
`ip address 10.0.0.1/32`). They cannot say different things. Keys and values are those of
NVIDIA's NVUE object model of the release in `platform_version` (the openapi.json of each
release, as PyPI's nvueschema carries it; the tests validate every file against it). The
model changed at 5.15 (`Dialect`): `ip` became `ipv4`, `enable on` became `state enabled`,
NTP and DNS moved from `service <vrf>` to `system`, BFD timers moved to profiles.

Decisions:
* `qos roce mode` from the fabric's QoS intent (lossless by default), with RoCE, BGP (global
  and in the default VRF) and adaptive routing switched on explicitly: the model defaults
  some of them to off, and a full replace keeps only what the file says. The RoCE profile
  brings trust, the DSCP map, PFC and ECN; fabgen sets the congestion-control thresholds
  of the RoCE traffic class from the same intent as EOS and SONiC.
* the PFC watchdog only in lossless mode (lossy mode has no PFC): on host-facing ports, with
  the inventory's polling interval and a robustness of detection / polling interval; NVUE
  has no restoration timer.
* the management plane: eth0 in the mgmt VRF with the switch's address and gateway, NTP,
  DNS, syslog and the operator's accounts (hashed passwords as environment references).
* adaptive routing on globally and on every switch-to-switch port; not on 800G links
  (Spectrum-4 cannot), where validation has warned.
* the SN5600's 800G cages are broken out 2x when the fabric runs 400G ports (swpNs0,
  swpNs1), every cage alike so port names follow one plan.
* BGP unnumbered on switch-to-switch ports (no /31s to allocate or mismatch), the same
  ASN plan as the RoCE targets, loopback and host subnets announced as networks.
* EVPN: on a northsouth fabric on the underlay's sessions (multihoming, uplink tracking); the
  GPU overlay (`host_addressing: evpn`) on numbered loopback sessions in peer group OVERLAY
  (eBGP multihop, update source `lo`, EVPN alone), the underlay's sessions IPv4 alone, VXLAN
  copying the RoCE DSCP out and keeping it in, `evpn route-advertise svi-ip` (each leaf's own SVI
  address reachable), as NVIDIA's generator writes its GPU leaves and spines.
* the switch baseline (intent/baseline.py), where the inventory has one: NVIDIA's spelling
  where its generator writes the key (`_baseline`, below; docs/decisions.md says where fabgen
  differs), its secrets references in the YAML and shell variables in the script.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from functools import partial
from typing import Any

from fabgen.addressing import dotted_quad
from fabgen.context import Context
from fabgen.formats import yamlout
from fabgen.formats.configfile import config_file
from fabgen.intent import secret_ref
from fabgen.intent.baseline import baseline as baseline_of
from fabgen.intent.baseline import named, secret_name, secret_text, users_of
from fabgen.intent.northsouth import (
    ALL_PREFIXES,
    BORDER_IN_MAP,
    BORDER_IN_SITE_MAP,
    BORDER_OUT_LIST,
    BORDER_OUT_MAP,
    GATEWAY_MAC,
    LEAK_COMMUNITY,
    LEAK_COMMUNITY_LIST,
)
from fabgen.intent.northsouth import border as border_of
from fabgen.intent.qos import adaptive_routing, options, qos_intent
from fabgen.intent.switches import (
    DEFAULT_BFD,
    HOSTS_GROUP,
    ISL_GROUP,
    OVERLAY_BFD_CLASS,
    OVERLAY_GROUP,
    PEER_GROUP,
    WEIGHTED_ECMP,
    SwitchIntents,
    group_bfd,
)
from fabgen.inventory.ethernet import AR_MAX_SPEED
from fabgen.inventory.management import gateway_of, services_of
from fabgen.inventory.platform import nvue_state_dialect, version_of
from fabgen.spec.platforms import PLATFORMS
from fabgen.targets.base import Deferred, Target, every_other

BREAKOUT = {400: "2x", 200: "4x", 100: "8x"}  # SN5600 cage split per port speed (100G: NVIDIA's csl-01 at 993eed6)
MGMT_PORT = PLATFORMS["nvue"].mgmt_port
BFD_PROFILE = "FABRIC"  # 5.15 and later: BFD timers live in a profile the peer groups name
USER_ROLES = {"admin": "system-admin", "read-only": "nvue-monitor"}

# The switch baseline. NVIDIA's generator (NVIDIA/enterprise-ras, net-configurator, the
# 2-4-5-800 output: gs-plane1-01-config.sh, cl-01-config.sh) writes `system api state enabled`,
# `system config auto-save state enabled`, the control-plane ACLs `acl-default-dos` and
# `acl-default-whitelist` inbound, `system message pre-login/post-login`, `system date-time
# timezone`, WJH with the forwarding triggers l2, l3 and tunnel, and on its core switches these
# histograms on every port; the keys of each release are NVIDIA's object model (nvueschema).
NVUE_API_PORT = 8765  # the NVUE REST API's port (not written: NVIDIA writes only `state enabled`)
GNMI_PORT = 9339  # gNMI's IANA port, written, so that the server and the ACL agree
CP_ACL = "fabgen-mgmt"  # the baseline's control-plane ACL
DOS_ACL = "acl-default-dos"  # NVIDIA's built-in DoS rules, bound as NVIDIA's generator binds them
# Cumulus Linux's built-in ACL admitting the management services from anywhere (baseline.control_plane.builtin),
# bound beside acl-default-dos as NVIDIA's generator binds both (core-01-config.sh, 2-8-9-400, at 2f46cb2)
WHITELIST_ACL = "acl-default-whitelist"
# baseline.builtin_roles: NVUE's own AAA classes and roles as NVIDIA's generator re-declares them on every switch
# (core-01-config.sh at 2f46cb2: `system aaa class nvapply action allow`, `... command-path / permission all`,
# `system aaa role system-admin class nvapply`, ...)
BUILTIN_ROLES: dict[str, Any] = {
    "class": {"nvapply": {"action": "allow", "command-path": {"/": {"permission": "all"}}},
              "nvshow": {"action": "allow", "command-path": {"/": {"permission": "ro"}}},
              "sudo": {"action": "allow", "command-path": {"/": {"permission": "all"}}}},
    "role": {"nvue-admin": {"class": {"nvapply": {}}}, "nvue-monitor": {"class": {"nvshow": {}}},
             "system-admin": {"class": {"nvapply": {}, "sudo": {}}}}}
WJH_TRIGGERS = ("l2", "l3", "tunnel")
HISTOGRAM: dict[str, Any] = {"counter": {"counter-type": {"rx-packet": {}, "tx-packet": {}}},
                             "egress-buffer": {"traffic-class": {"0": {}}},
                             "ingress-buffer": {"priority-group": {"0": {}, "1": {}}}}
# telemetry.histogram_settings: NVIDIA's global histogram settings (NVIDIA/enterprise-ras net-configurator/output/
# 2-8-9-800/default/configs/csl-01-config.sh at 993eed6, the same in 2-8-9-400's core-01 at 2f46cb2)
HISTOGRAM_SETTINGS: dict[str, Any] = {
    "histogram": {"counter": {"bin-min-boundary": 3552, "histogram-size": 55008, "sample-interval": 1024},
                  "egress-buffer": {"bin-min-boundary": 960, "histogram-size": 9830400, "sample-interval": 1024},
                  "ingress-buffer": {"bin-min-boundary": 960, "histogram-size": 2457600, "sample-interval": 1024}},
    "snapshot-file": {"count": 120, "name": "/var/run/cumulus/histogram_stats"}, "snapshot-interval": 10}
AAA_KEY = {"tacacs+": "tacacs", "radius": "radius", "ldap": "ldap"}


_PERMIT: dict[str, Any] = {"permit": {}}  # a route-map rule's action is a word of its path (`action permit`)
# ethernet.announce redistribute: NVIDIA's route-map admitting the loopback alone into BGP (gl-plane1-01-config.sh
# at 2b4e3e2: `route-map LOOPBACK_BGP rule 10 action permit`, `match interface lo`, `match type ipv4`)
LOOPBACK_MAP = "LOOPBACK_BGP"
_LOOPBACK_RULES: dict[str, Any] = {"rule": {"10": {"action": _PERMIT, "match": {"interface": "lo", "type": "ipv4"}}}}
# ethernet.anycast_mac: NVIDIA's `system global anycast-mac 44:38:39:ff:00:ff` (core-01-config.sh at 2f46cb2)


class ShellWord(str):
    """Text with spaces or newlines (a banner, the SNMP location): a string like any in the YAML,
    one single-quoted word of its `nv set` line, as NVIDIA's generator quotes its banners
    (dump_paths formats a leaf's value with f"{value}": the quotes go there). Validation keeps
    quotes out of such text (spec/schema.py BANNER_LINE)."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        return shlex.quote(str(self))


# A secret the script reads from its environment: (variable, the reference text in the tree,
# "env" or "vault"); the deploy playbooks fill the same reference in the YAML.
Secret = tuple[str, str, str]


def _release(version: str) -> tuple[int, int]:
    major, minor = (int(x) for x in version.split("."))
    return major, minor


class Dialect:
    """How one Cumulus Linux release spells the same intent (the object model changed at 5.15:
    `ip` -> `ipv4`, `enable on` -> `state enabled`, NTP and DNS under `system`, BFD profiles)."""

    def __init__(self, version: str):
        self.version = version
        self.new = nvue_state_dialect(version)
        self.ip = "ipv4" if self.new else "ip"
        # AAA servers' `priority`, as NVIDIA's object model describes it: RADIUS's "lower comes
        # first" in every release; TACACS+'s and LDAP's "higher comes first" up to 5.17, "lower
        # comes first" from 5.18
        self.lower_first = {"radius"} | ({"tacacs", "ldap"} if _release(version) >= (5, 18) else set())
        # `nve vxlan port` is gone from the object model at 5.17 (the port is IANA's 4789 there)
        self.vxlan_port = _release(version) < (5, 17)

    def word(self, value: bool = True) -> str:
        """A bare on/off value in the release's spelling (`arp-nd-suppress on` / `enabled`)."""
        if self.new:
            return "enabled" if value else "disabled"
        return "on" if value else "off"

    def on(self, value: bool = True) -> dict[str, str]:
        if self.new:
            return {"state": "enabled" if value else "disabled"}
        return {"enable": "on" if value else "off"}


def _management(tree: dict[str, Any], iface: dict[str, Any], m: dict[str, Any], d: Dialect) -> None:
    """eth0 in the management VRF with the switch's address and gateway, NTP, DNS, syslog and
    the operator's accounts, in the release's dialect."""
    vrf = m["vrf"]
    port: dict[str, Any] = {d.ip: {"address": {f"{m['address']}/{m['prefix_len']}": {}},
                                   "gateway": {m["gateway"]: {}}}, "type": "eth"}
    if d.new:
        port["vrf"] = vrf
    else:
        port["ip"]["vrf"] = vrf
    iface[MGMT_PORT] = port
    system = tree["system"]
    service: dict[str, Any] = {}
    if m["ntp"]:
        servers = {ip: {"iburst": "enabled" if d.new else "on"} for ip in m["ntp"]}
        if d.new:
            system["ntp"] = {"server": servers, "state": "enabled", "vrf": vrf}
        else:
            service["ntp"] = {vrf: {"server": servers}}
    if m["dns"] or m["domain"]:
        search: dict[str, Any] = {m["domain"]: {}} if m["domain"] else {}
        if d.new:
            system["dns"] = {"server": {ip: {"vrf": vrf} for ip in m["dns"]}, **({"search": search} if search else {})}
        else:
            service["dns"] = {vrf: {"server": {ip: {} for ip in m["dns"]}, **({"search": search} if search else {})}}
    if m["syslog"]:
        system["syslog"] = {"server": {ip: {"vrf": vrf} for ip in m["syslog"]}}
    if m["users"]:
        system["aaa"] = {"user": {u["name"]: {"hashed-password": u["password"], "role": USER_ROLES[u["role"]]}
                                  for u in m["users"]}}
    if service:
        tree["service"] = service


def _baseline(tree: dict[str, Any], b: dict[str, Any], vrf: str, d: Dialect) -> None:
    """The switch baseline (intent/baseline.py) into the tree: `system` keys, and the
    control-plane ACL under `acl`; the services that reach a server (AAA, SNMP, sFlow) in
    the management VRF `vrf` (an access switch's: default)."""
    system = tree["system"]
    if b["timezone"]:  # `system date-time timezone` from 5.15, `system timezone` before
        if d.new:
            system["date-time"] = {"timezone": b["timezone"]}
        else:
            system["timezone"] = b["timezone"]
    banner = b["banner"]
    if banner and (banner["login"] or banner["motd"]):
        system["message"] = {key: ShellWord(text) for key, text in (("pre-login", banner["login"]),
                                                                   ("post-login", banner["motd"])) if text}
    if b["aaa"]:
        system.setdefault("aaa", {}).update(_aaa(b["aaa"], vrf, d))
    if b["control_plane"] and b["control_plane"].get("builtin"):  # Cumulus Linux's own ACLs, bound as NVIDIA's
        system["control-plane"] = {"acl": {DOS_ACL: {"inbound": {}}, WHITELIST_ACL: {"inbound": {}}}}
    elif b["control_plane"]:
        ports = _services(b)
        system["control-plane"] = {"acl": {DOS_ACL: {"inbound": {}}, CP_ACL: {"inbound": {}}}}
        tree["acl"] = {CP_ACL: {"rule": _acl_rules(b["control_plane"]["allow"], ports), "type": "ipv4"}}
    if b["snmp"]:
        system["snmp-server"] = _snmp(b["snmp"], vrf)
    t = b["telemetry"]
    if t["sflow"]:
        collector = {"interface": vrf} if vrf != "default" else {}
        system["sflow"] = {"collector": {ip: dict(collector) for ip in t["sflow"]["collectors"]},
                           "sampling-rate": {"default": t["sflow"]["sample_rate"]}, "state": "enabled"}
    if t["gnmi"]:
        system["gnmi-server"] = {"port": GNMI_PORT, "state": "enabled"}
    if t.get("histogram_settings"):  # `system telemetry state` from 5.15 (5.14's object model has none)
        system["telemetry"] = {**(d.on() if d.new else {}), **HISTOGRAM_SETTINGS}
    # WJH, the API and auto-save: NVIDIA's generator writes them on; off is written too (a full
    # replace leaves the release's default otherwise)
    system["wjh"] = ({"channel": {"forwarding": {"trigger": {k: {} for k in WJH_TRIGGERS}}}, **d.on()}
                     if t["wjh"] else d.on(False))
    system["api"] = {"state": "enabled" if b["api"] else "disabled"}  # `state` in every release
    system["config"] = {"auto-save": {"state": "enabled" if b["auto_save"] else "disabled"}}
    _nvidia_system(system, b, d)


def _nvidia_system(system: dict[str, Any], b: dict[str, Any], d: Dialect) -> None:
    """The baseline's keys that write NVIDIA's lines where fabgen leaves the release's defaults: the SSH
    server's state (ssh_server) and NVUE's own AAA classes and roles (builtin_roles)."""
    if b.get("ssh_server"):  # NVIDIA's `system ssh-server state enabled` (baseline.ssh_server)
        system["ssh-server"] = {"state": "enabled"}
    if b.get("builtin_roles"):  # NVUE's own classes and roles, re-declared as NVIDIA's generator does
        aaa = system.setdefault("aaa", {})
        if not b["aaa"]:  # the authentication order: local accounts (`_aaa` writes it with a server)
            order: dict[str, Any] = ({"authentication": {"order": ["local"]}} if d.new
                                     else {"authentication-order": {"10": {"local": {}}}})
            aaa.update(order)
        aaa.update(BUILTIN_ROLES)


def _aaa(a: dict[str, Any], vrf: str, d: Dialect) -> dict[str, Any]:
    """The remote AAA server group, its key (a reference) and the authentication order: the
    server first, then local accounts when fallback_local. The servers' priorities put the
    first listed first, in the release's sense of priority (`Dialect.lower_first`)."""
    key = AAA_KEY[a["protocol"]]
    n = len(a["servers"])
    rank = (lambda k: k + 1) if key in d.lower_first else (lambda k: n - k)
    group: dict[str, Any] = {}
    if key == "ldap":
        group.update({"base-dn": ShellWord(a["base_dn"]), "bind-dn": ShellWord(a["bind_dn"])})
    group.update({"secret": a["secret"], "server": {ip: {"priority": rank(k)} for k, ip in enumerate(a["servers"])},
                  "vrf": vrf})
    methods = [key, "local"] if a["fallback_local"] else [key]
    if d.new:  # a list from 5.15 (`authentication order tacacs,local`) ...
        order: dict[str, Any] = {"authentication": {"order": methods}}
    else:  # ... before, entries by priority, the lowest first
        order = {"authentication-order": {str(10 * (k + 1)): {m: {}} for k, m in enumerate(methods)}}
    return {**order, key: group}


def _services(b: dict[str, Any]) -> list[tuple[str, int]]:
    """The management services the control-plane ACL guards, (protocol, port): SSH and SNMP,
    the NVUE API and gNMI where the baseline runs them."""
    ports = [("tcp", 22), ("udp", 161)]
    if b["api"]:
        ports.append(("tcp", NVUE_API_PORT))
    if b["telemetry"]["gnmi"]:
        ports.append(("tcp", GNMI_PORT))
    return ports


def _acl_rules(allow: list[str], ports: list[tuple[str, int]]) -> dict[str, Any]:
    """Each allowed prefix admitted to each service and to ICMP, then each service and ICMP echo
    refused from anywhere else. Other traffic to the switch (BGP, BFD, LLDP, ...) is not this
    ACL's: it would otherwise cut the fabric's own sessions."""
    rules: list[dict[str, Any]] = []
    for prefix in allow:
        for proto, port in ports:
            rules.append({"action": {"permit": {}}, "match": {"ip": {
                "protocol": proto, "source-ip": prefix, proto: {"dest-port": {str(port): {}}}}}})
        rules.append({"action": {"permit": {}}, "match": {"ip": {"protocol": "icmp", "source-ip": prefix}}})
    for proto, port in ports:
        rules.append({"action": {"deny": {}}, "match": {"ip": {"protocol": proto,
                                                               proto: {"dest-port": {str(port): {}}}}}})
    rules.append({"action": {"deny": {}}, "match": {"ip": {"icmp-type": "echo-request", "protocol": "icmp"}}})
    return {str(10 * (k + 1)): rule for k, rule in enumerate(rules)}


def _snmp(snmp: dict[str, Any], vrf: str) -> dict[str, Any]:
    """SNMPv3 only: each user with SHA authentication and AES privacy (passphrases as
    references), listening in the management VRF; location and contact."""
    out: dict[str, Any] = {"listening-address": {"all": {"vrf": vrf} if vrf != "default" else {}},
                           "state": "enabled"}
    if snmp["contact"]:
        out["system-contact"] = ShellWord(snmp["contact"])
    if snmp["location"]:
        out["system-location"] = ShellWord(snmp["location"])
    out["username"] = {u["name"]: {"auth-sha": {u["auth"]: {"encrypt-aes": {u["priv"]: {}}}}}
                       for u in snmp["users"]}
    return out


def _watchdog(qos: dict[str, Any]) -> bool:
    """The PFC watchdog runs only in lossless mode (lossy mode has no PFC)."""
    return qos["mode"] == "lossless" and qos["watchdog"]["enabled"]


def _port(extra: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, **extra}


def _routed(extra: dict[str, Any], ip: str, description: str, address: str) -> dict[str, Any]:
    return {"description": description, **extra, ip: {"address": {address: {}}}}


def _access(extra: dict[str, Any], description: str, vlan: int) -> dict[str, Any]:
    return {"description": description, **extra, "bridge": {"domain": {"br_default": {"access": vlan}}}}


class _Parts:
    """The port sub-trees of a fabric's switches: those that are the same on every port, made once
    and shared (yamlout.Shared), and the runs of ports of each switch, which differ from switch to
    switch of a role only in their descriptions and addresses or VLANs (yamlout.Shape: the text of
    a run compiled once per fabric, written by one format per switch). watchdog: the PFC watchdog
    on host ports; ar_ports: adaptive routing on fabric ports."""

    def __init__(self, mtu: int, breakout: str | None, d: Dialect, watchdog: bool, ar_ports: bool,
                 histograms: bool = False, speeds: tuple[int, ...] = (), border_vrf: str | None = None):
        self.unused = yamlout.Shared({"link": yamlout.Shared({"state": {"down": {}}}), "type": "swp"})
        self.cage = yamlout.Shared({"link": {"breakout": {breakout: {}}}, "type": "swp"}) if breakout else None
        # the tiers at their own speeds (`speeds`): each cage's breakout (kind `cage:<mode>`), and each
        # used port's `link speed` (kind `<kind>@<speed>G`), as NVIDIA's generator writes both
        self.cages = {mode: yamlout.Shared({"link": {"breakout": {mode: {}}}, "type": "swp"})
                      for mode in ("2x", "4x", "8x", "disabled")} if speeds else {}
        self.make: dict[str, tuple[Any, int]] = {}
        self.border_vrf = border_vrf  # northsouth.border's VRF: its uplinks' kind `border`
        self.cage_layout: dict[str, tuple[tuple[str, str], ...]] = {}  # by role, where speeds mix
        for speed in (None, *speeds):
            self._kinds(mtu, d, watchdog, ar_ports, histograms, speed)
        self.runs: dict[tuple[tuple[str, str], ...], yamlout.Shape] = {}  # a run of ports' Shape by its layout
        self.peers: dict[tuple[tuple[str, str], ...], yamlout.Shared] = {}  # fabric ports' BGP neighbors

    def _kinds(self, mtu: int, d: Dialect, watchdog: bool, ar_ports: bool, histograms: bool,
               speed: int | None) -> None:
        link = yamlout.Shared({"mtu": mtu, **({"speed": f"{speed}G"} if speed else {})})
        # Spectrum-4 adapts RoCEv2 at 400G and below: not on a faster tier's ports (intent/qos.py)
        ar_ports = ar_ports and (speed is None or speed <= AR_MAX_SPEED)
        # the baseline's histograms on every used port (telemetry.histograms)
        telemetry = {"telemetry": yamlout.Shared({"histogram": HISTOGRAM})} if histograms else {}
        host = {"link": link, "type": "swp",
                **({"qos": yamlout.Shared({"pfc-watchdog": {"state": "enable"}})} if watchdog else {}), **telemetry}
        fabric = {"link": link, "type": "swp", **({"router": yamlout.Shared({"adaptive-routing": d.on()})}
                                                  if ar_ports else {}), **telemetry}
        # EVPN-MH uplink tracking on a leaf's fabric ports: no segment without uplinks
        uplink = {**fabric, "evpn": yamlout.Shared({"multihoming": {"uplink": d.word()}})}
        # a used port's sub-tree by its kind, from its values (description; address or VLAN), and
        # how many values it takes
        at = f"@{speed}G" if speed else ""
        self.make.update({"fabric" + at: (partial(_port, fabric), 1), "uplink" + at: (partial(_port, uplink), 1),
                          "bonded" + at: (partial(_port, host), 1), "routed" + at: (partial(_routed, host, d.ip), 2),
                          "access" + at: (partial(_access, host), 2)})
        # a routed out-of-band network's uplinks on the pair (oob_design routed): routed ports of the default
        # VRF, unnumbered, MTU and histograms as every used port
        self.make["oobup" + at] = (partial(_port, {"link": link, "type": "swp", **telemetry}), 1)
        if self.border_vrf:  # the border uplinks (northsouth.border): routed ports in the border VRF, unnumbered
            # (the eBGP session on the link-local address), MTU and histograms as every used port
            vrf: dict[str, Any] = {"vrf": self.border_vrf} if d.new else {d.ip: {"vrf": self.border_vrf}}
            self.make["border" + at] = (partial(_port, {"link": link, "type": "swp", **telemetry, **vrf}), 1)

    def run(self, layout: list[tuple[str, str]], values: list[Any]) -> yamlout.Filled:
        """A run of ports, (name, kind) each in order, as one Filled: the ports of every switch
        of a role differ only in descriptions and addresses, so their text is compiled once."""
        key = tuple(layout)
        shape = self.runs.get(key)
        if shape is None:
            shape = self.runs[key] = yamlout.Shape(partial(_ports, self, key), len(values))
        return shape.fill(*values)

    def neighbors(self, fabric: list[tuple[str, str]]) -> yamlout.Shared:
        """The unnumbered BGP sessions of a switch's fabric ports, (name, peer group) each: the same
        on every switch of a role, so shared and written once."""
        key = tuple(fabric)
        peers = self.peers.get(key)
        if peers is None:
            peers = self.peers[key] = yamlout.Shared(
                {name: {"peer-group": group, "type": "unnumbered"} for name, group in key})
        return peers


def _ports(parts: _Parts, layout: tuple[tuple[str, str], ...], *values: Any) -> dict[str, Any]:
    """The make of a run's Shape: each port's sub-tree from its kind and its values, in order."""
    out: dict[str, Any] = {}
    k = 0
    make = parts.make
    for name, kind in layout:
        if kind == "unused":
            out[name] = parts.unused
        elif kind == "cage":
            out[name] = parts.cage
        elif kind.startswith("cage:"):
            out[name] = parts.cages[kind[5:]]
        else:
            fn, width = make[kind]
            out[name] = fn(*values[k:k + width])
            k += width
    return out


def _tree(sw: dict[str, Any], qos: dict[str, Any], ar: bool, breakout: str | None, cages: int, d: Dialect,
          parts: _Parts) -> dict[str, Any]:
    """ar: adaptive routing on globally (on the switch-to-switch ports where the fabric's speed
    allows it: `parts`, from qos.adaptive_routing)."""
    watchdog = _watchdog(qos)
    iface: dict[str, Any] = {"lo": {d.ip: {"address": {f"{sw['loopback']}/32": {}}}, "type": "loopback"}}
    tree: dict[str, Any] = {"system": {"hostname": sw["name"]}}
    if sw["management"]:
        _management(tree, iface, sw["management"], d)
    ifaces: list[dict[str, Any]] = [iface]  # the parts of `interface` (yamlout.Joined)
    layout: list[tuple[str, str]] = [(f"swp{c}", "cage") for c in range(1, cages + 1)] if breakout else []
    if "cages" in sw:  # the tiers at their own speeds: each cage split at its own (`_cage_layout`)
        layout = list(parts.cage_layout[sw["role"]])
    fabric = _port_runs(sw, layout, d, parts, ifaces)
    hosts = {n["ip"]: {"peer-group": HOSTS_GROUP, "remote-as": n["asn"], "type": "numbered"}
             for n in sw["bgp"]["neighbors"] if n["peer_group"] == HOSTS_GROUP}  # BGP to the host, over /31s
    neighbors = yamlout.Joined(parts.neighbors(fabric), hosts)
    tree["interface"] = iface  # its place among the tree's keys: the Joined interfaces replace it below
    svi = sw["svi"]
    bridge: dict[str, Any] | None = None
    tail: dict[str, Any] = {}  # the SVIs
    if svi:
        tail[f"vlan{svi['vlan']}"] = {d.ip: {"address": {f"{svi['ip']}/{svi['prefix']}": {}}}, "type": "svi",
                                      "vlan": svi["vlan"]}
        bridge = {"domain": {"br_default": {"vlan": {str(svi["vlan"]): {}}}}}
    if sw.get("evpn"):
        bridge = _evpn(tree, tail, sw, d)
    tree["interface"] = yamlout.Joined(*ifaces, tail)
    if bridge:
        tree["bridge"] = bridge
    roce = qos["roce_priority"]
    tree["qos"] = {"roce": {**d.on(), "mode": qos["mode"]},
                   "congestion-control": {"default-global": {"traffic-class": {str(roce): {
                       "min-threshold": qos["ecn"]["min_bytes"], "max-threshold": qos["ecn"]["max_bytes"],
                       "probability": qos["ecn"]["probability"]}}}}}
    if watchdog:
        wd = qos["watchdog"]
        tree["qos"]["pfc-watchdog"] = {"polling-interval": wd["poll_interval_ms"],
                                       "robustness": wd["detection_ms"] // wd["poll_interval_ms"]}
    if "buffer_pools" in qos:  # the inventory's split of the shared buffer, as NVIDIA's generator writes it
        tree["qos"]["traffic-pool"] = {pool: {"memory-percent": percent}
                                       for pool, percent in sorted(qos["buffer_pools"].items())}
    bgp = sw["bgp"]
    tree["router"] = {"adaptive-routing": d.on(ar),
                      "bgp": {"autonomous-system": bgp["asn"], **d.on(), "router-id": bgp["router_id"]}}
    if tree.pop("router_vrr", False):
        tree["router"]["vrr"] = d.on()
    vrf_bgp = _default_bgp(tree, sw, neighbors, d)
    tree["vrf"] = {"default": {"router": {"bgp": vrf_bgp}}}
    for t in sw["evpn"]["tenants"] if sw.get("evpn") else []:  # the tenants' VRFs: L3VNI, subnets into EVPN
        tree["vrf"][t["vrf"]] = _tenant_vrf(t, d)
    if bgp.get("route_map_out"):
        maps = tree["router"].setdefault("policy", {}).setdefault("route-map", {})
        maps.update(_route_maps(set(bgp["route_map_out"].values())))
        tree["router"]["policy"]["route-map"] = dict(sorted(maps.items()))
    return tree


def _tenant_vrf(t: dict[str, Any], d: Dialect) -> dict[str, Any]:
    """A tenant's VRF: its layer-3 VNI, its connected subnets into EVPN; with a loopback of its own
    (the GPU overlay's VRF, the north-south tenants' with northsouth.vrf_loopbacks) that /32 on the
    VRF, the VRF's router-id and its l2vpn-evpn address family, as NVIDIA's generator writes them
    (gl-plane1-01-config.sh at 2b4e3e2: `vrf GPU loopback ip address`, `vrf GPU router bgp
    router-id`, `vrf GPU router bgp address-family l2vpn-evpn state enabled`); with the tenant's
    l3vni_vlan the VLAN of its layer-3 VNI, as the border's (`vrf GPU evpn vlan 3003`, there)."""
    af: dict[str, Any] = {"ipv4-unicast": {**d.on(), "redistribute": {"connected": d.on()},
                                           "route-export": {"to-evpn": d.on()}}}
    bgp: dict[str, Any] = {**d.on(), "address-family": af}
    vlan = {"vlan": t["l3vni_vlan"]} if t.get("l3vni_vlan") else {}
    vrf: dict[str, Any] = {"evpn": {**d.on(), **vlan, "vni": {str(t["l3vni"]): {}}}}
    if "loopback" in t:
        af["l2vpn-evpn"] = d.on()
        bgp["router-id"] = t["router_id"]
        vrf["loopback"] = {"ip": {"address": {f"{t['loopback']}/32": {}}}}
    vrf["router"] = {"bgp": bgp}
    return vrf


def _route_maps(names: set[str]) -> dict[str, Any]:
    """The route-maps a switch's peer groups send with: NVIDIA's WEIGHTED_ECMP (the link-bandwidth
    extended community set to the number of paths: gl-plane1-01-config.sh at 2b4e3e2, `route-map
    WEIGHTED_ECMP rule 10 action permit`, `rule 10 set ext-community-bw multipaths`)."""
    assert names == {WEIGHTED_ECMP}, names  # the one route-map intent names
    return {WEIGHTED_ECMP: {"rule": {"10": {"action": {"permit": {}}, "set": {"ext-community-bw": "multipaths"}}}}}


def _default_bgp(tree: dict[str, Any], sw: dict[str, Any], neighbors: yamlout.Joined, d: Dialect) -> dict[str, Any]:
    """The default VRF's BGP: the peer groups with their BFD (its profiles into `tree`), the
    neighbors, ECMP and the networks; EVPN where the switch carries it."""
    bgp = sw["bgp"]
    bfd = {g: t for g in sorted({n["peer-group"] for n in neighbors.values()}) if (t := group_bfd(bgp["bfd"], g))}
    if bfd and d.new:
        tree["router"]["bfd"] = {"profile": {_bfd_profile(t): _bfd_timers(t) for t in
                                             sorted(bfd.values(), key=lambda t: _bfd_profile(t))}, "state": "enabled"}
    e = sw.get("evpn")
    # EVPN on the underlay's sessions (north-south), or on the loopback sessions alone (the GPU overlay)
    evpn_af = {"address-family": {"l2vpn-evpn": d.on()}} if e and e["sessions"] == "underlay" else {}
    # the collapsed pair's peer link is iBGP (one ASN, intent/switches.py ISL_GROUP) as NVIDIA's csl-01/02
    groups = {g: {"remote-as": "internal" if g == ISL_GROUP else "external",
                  **({"bfd": _bfd_group(bfd[g], d)} if g in bfd else {}),
                  **({"password": bgp["password"]} if bgp["password"] else {}), **(evpn_af if g != HOSTS_GROUP else {})}
              for g in sorted({n["peer-group"] for n in neighbors.values()})}
    for g, route_map in bgp.get("route_map_out", {}).items():  # NVIDIA's WEIGHTED_ECMP on a GPU overlay leaf's underlay
        if g in groups:
            af = groups[g].setdefault("address-family", {})
            af["ipv4-unicast"] = {**af.get("ipv4-unicast", {}), "policy": {"outbound": {"route-map": route_map}}}
    if e and e["sessions"] == "overlay" and e["overlay"]:  # a one-switch fabric has no EVPN peers
        groups[OVERLAY_GROUP] = _overlay_group(e, bgp, d, tree)
        neighbors = yamlout.Joined(neighbors, {p["ip"]: {"peer-group": OVERLAY_GROUP, "type": "numbered"}
                                               for p in e["overlay"]})
    # ethernet.announce redistribute: the loopback by `redistribute connected` through LOOPBACK_BGP (NVIDIA's
    # gl-plane1-01-config.sh at 2b4e3e2), the host subnets still by `network`
    lo = f"{sw['loopback']}/32" if bgp.get("redistribute_loopback") else None
    ipv4: dict[str, Any] = {"multipaths": {"ebgp": bgp["ecmp"]}}
    if any(net != lo for net in bgp["networks"]):
        ipv4["network"] = {net: {} for net in bgp["networks"] if net != lo}
    if lo:
        ipv4["redistribute"] = {"connected": {**d.on(), "route-map": LOOPBACK_MAP}}
        tree["router"].setdefault("policy", {}).setdefault("route-map", {})[LOOPBACK_MAP] = _LOOPBACK_RULES
    vrf_bgp: dict[str, Any] = {"address-family": {"ipv4-unicast": ipv4}, **d.on()}
    if groups:
        vrf_bgp["peer-group"] = dict(sorted(groups.items()))
        vrf_bgp["neighbor"] = neighbors
    if sw.get("evpn"):
        vrf_bgp["address-family"]["l2vpn-evpn"] = d.on()
    if bgp.get("aspath_ignore"):  # NVIDIA's `path-selection multipath aspath-ignore` (gl-, gs-plane1-01, csl-01)
        vrf_bgp["path-selection"] = {"multipath": {"aspath-ignore": d.word()}}
    return vrf_bgp


def _overlay_group(e: dict[str, Any], bgp: dict[str, Any], d: Dialect, tree: dict[str, Any]) -> dict[str, Any]:
    """The GPU overlay's EVPN sessions: eBGP between loopbacks `multihop` hops apart, from `lo`,
    EVPN only, BFD of the overlay class (its profile added to the switch's BFD profiles)."""
    timers = group_bfd(bgp["bfd"], OVERLAY_BFD_CLASS)
    if timers and d.new:
        bfd = tree["router"].setdefault("bfd", {"profile": {}, "state": "enabled"})
        bfd["profile"] = dict(sorted({**bfd["profile"], _bfd_profile(timers): _bfd_timers(timers)}.items()))
    # iBGP where the peers share the switch's ASN: a plane's switch pair (spec/sizing.py `_plane_pair`),
    # NVIDIA's `overlay` peer group `remote-as internal` (gsl-plane1-01-config.sh at 2f46cb2)
    internal = all(p["asn"] == bgp["asn"] for p in e["overlay"])
    return {"address-family": {"ipv4-unicast": d.on(False), "l2vpn-evpn": d.on()},
            **({"bfd": _bfd_group(timers, d)} if timers else {}), "multihop-ttl": e["multihop"],
            **({"password": bgp["password"]} if bgp["password"] else {}),
            "remote-as": "internal" if internal else "external", "update-source": "lo"}


def _bfd_profile(timers: dict[str, int]) -> str:
    """5.15 and later: the profile of a session class's timers: FABRIC at fabgen's default timers
    (as before they were settable), FABRIC-<interval>x<multiplier> for others (one per timers, so
    two classes alike share one)."""
    if timers == DEFAULT_BFD:
        return BFD_PROFILE
    return f"{BFD_PROFILE}-{timers['interval_ms']}x{timers['multiplier']}"


def _bfd_timers(timers: dict[str, int]) -> dict[str, int]:
    return {"detect-multiplier": timers["multiplier"], "min-rx-interval": timers["interval_ms"],
            "min-tx-interval": timers["interval_ms"]}


def _bfd_group(timers: dict[str, int], d: Dialect) -> dict[str, Any]:
    """A peer group's BFD: the profile (5.15 and later); before, `enable on`, with the timers on
    the group where they are not FRR's default 300 ms x 3."""
    if d.new:
        return {"profile": _bfd_profile(timers)}
    return {"enable": "on", **({} if timers == DEFAULT_BFD else _bfd_timers(timers))}


def _port_runs(sw: dict[str, Any], layout: list[tuple[str, str]], d: Dialect, parts: _Parts,
               ifaces: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Add the switch's ports to `ifaces`: runs of `parts`, the first starting with `layout` (a bond
    comes before its member: the run so far ends there). Returns (port, peer group) of the fabric ports."""
    values: list[Any] = []  # the run's: each used port's description, then its address or VLAN
    fabric: list[tuple[str, str]] = []  # (port, peer group) of the fabric ports
    uplink = "uplink" if sw.get("evpn") and sw["evpn"]["multihoming"] and sw["role"] == "leaf" else "fabric"
    for i in sw["interfaces"]:
        kind = i["kind"]
        if kind == "unused":
            layout.append((i["name"], "unused"))
            continue
        values.append(i["description"])
        if kind == "fabric":
            # leaf to leaf: a collapsed pair's peer link (intent/switches.py ISL_GROUP)
            isl = sw["role"] == i["peer_role"] == "leaf"
            fabric.append((i["name"], ISL_GROUP if isl else _group(i["peer_role"])))
            kind = uplink
        elif kind in ("border", "oobup"):  # northsouth.border, a routed oob uplink: its description alone
            pass
        elif "bond" in i:  # the bond before its member: the run so far, then the bond
            ifaces += [parts.run(layout, values[:-1]), {i["bond"]["name"]: _bond(i, sw, d)}]
            layout, values = [], [i["description"]]
            kind = "bonded"
        elif "ip" in i:
            values.append(f"{i['ip']}/{i['prefix']}")
            kind = "routed"
        else:
            values.append(i["vlan"])
            kind = "access"
        layout.append((i["name"], f"{kind}@{i['speed']}G" if "speed" in i else kind))
    ifaces.append(parts.run(layout, values))
    return fabric


def _bond(i: dict[str, Any], sw: dict[str, Any], d: Dialect) -> dict[str, Any]:
    """The leaf's leg of a node's bond: an LACP bond of the one port that bypasses LACP while the
    node has none (a PXE boot), both tenants' VLANs, the in-band one untagged, an EVPN Ethernet
    segment of the fabric's system MAC and the node's local id (intent/northsouth.py)."""
    b = i["bond"]
    seg = b["segment"]
    vlans: dict[str, dict[str, Any]] = {str(v): {} for v in b["vlans"]}
    return {"bond": {"lacp-bypass": d.word(), "lacp-rate": "fast", "member": {i["name"]: {}}, "mode": "lacp"},
            "bridge": {"domain": {"br_default": {"untagged": b["native"], "vlan": vlans}}},
            "description": i["bond"]["description"],
            "evpn": {"multihoming": {"segment": {**d.on(), "local-id": seg["local_id"],
                                                 "mac-address": seg["sys_mac"]}}},
            "link": {"mtu": sw["mtu"]}, "type": "bond"}


def _evpn(tree: dict[str, Any], iface: dict[str, Any], sw: dict[str, Any], d: Dialect) -> dict[str, Any] | None:
    """EVPN on, multihoming on; on a leaf also the VTEP (VXLAN from the loopback, head-end
    replication, ARP suppression), each tenant's VLAN with its VNI and its SVI in the tenant's VRF
    with the anycast gateway (VRR). Returns the bridge (a leaf's tenant VLANs), or None."""
    e = sw["evpn"]
    tree["evpn"] = {**d.on(), "multihoming": d.on()} if e["multihoming"] else d.on()
    if e["vtep"] is None:
        return None
    if not e["multihoming"]:  # the GPU overlay: each leaf's own SVI address advertised, as NVIDIA's leaves
        tree["evpn"]["route-advertise"] = {"svi-ip": d.word()}
    dscp = {f"{k}": {"dscp": {"action": a}} for k, a in e["dscp"].items()} if e["dscp"] else {}
    port = {"port": e["udp_port"]} if d.vxlan_port else {}
    tree["nve"] = {"vxlan": {**d.on(), "arp-nd-suppress": d.word(), **dscp, **port, "source": {"address": e["vtep"]}}}
    tree["router_vrr"] = True
    vlans: dict[str, Any] = {}
    for t in e["tenants"]:
        vlans[str(t["vlan"])] = {"vni": {str(t["vni"]): {}}}
        vrr = {**d.on(), "address": {f"{t['gateway']}/{t['prefix']}": {}}, "mac-address": e["gateway_mac"]}
        svi: dict[str, Any] = {"address": {f"{t['svi_ip']}/{t['prefix']}": {}}, "vrr": vrr}
        node: dict[str, Any] = {"description": t["vrf"], d.ip: svi, "type": "svi",
                                "vlan": t["vlan"]}
        if d.new:
            node["vrf"] = t["vrf"]
        else:
            svi["vrf"] = t["vrf"]
        iface[f"vlan{t['vlan']}"] = node
    return {"domain": {"br_default": {"vlan": vlans}}}


def _group(role: str) -> str:
    return PEER_GROUP[role]


def structure(ctx: Context) -> dict[str, Any]:
    """The fabric's shared data and its switches (`Deferred`): each switch's tree is made where it
    is written, by the render piece that writes it."""
    f = ctx.fabric
    qos = qos_intent(ctx)
    ar, ar_ports = adaptive_routing(ctx)
    mode = f.switch_model.mode_for(f.plan.speed)
    breakout = BREAKOUT.get(f.plan.speed) if mode is not None and mode.per_cage > 1 else None
    version = version_of(f.spec) or ""
    dialect = Dialect(version)
    # every switch's `mtu` (intent/switches.py)
    # without and with the baseline's histograms (a role may differ: intent/baseline.py)
    intents = SwitchIntents(ctx)
    # speeds that mix: the tiers' (cabling.<tier>.speed) and a north-south leaf's port groups' at their own
    # (northsouth.border.speed, oob_routed.uplink_speed: their cages broken out at it)
    roles = [r for r in ("leaf", "spine", "core") if intents.mixed(r)]
    speeds = tuple(sorted({v for r in roles for v in intents.cage_speeds(r) if v}
                          | ({f.plan.tier_speed(t) for t in ("node-leaf", "leaf-spine", "spine-core")}
                             if roles else set())))
    b = border_of(ctx)
    parts = {h: _Parts(options(ctx).mtu, breakout, dialect, _watchdog(qos), ar_ports, h, speeds,
                       b["vrf"] if b else None) for h in (False, True)}
    if speeds:
        for p in parts.values():
            p.cage_layout = {r: _cage_layout(f, intents.cage_speeds(r)) for r in roles}
    make = partial(_switch, intents, qos, ar, breakout, f.switch_model.cages, dialect, parts, b,
                   ctx.oob_routed)
    header = {"model": f.switch_model.part.removeprefix("M"), "nvue-api-version": "nvue_v1", "rev-id": 1.0,
              "version": f"Cumulus Linux {version}.0"}
    return {"fabric": f.name, "cluster": ctx.cluster, "switches": Deferred(make, f.switches), "header": header}


def _cage_layout(f: Any, speeds: tuple[int, ...]) -> tuple[tuple[str, str], ...]:
    """Each cage of a switch split at its own speed (`speeds`, intent/switches.py `cage_speeds`): NVUE's
    breakout mode is the cage's ports at that speed (SN5600: 400G 2x, 200G 4x, 100G 8x); a cage run whole
    has no breakout line."""
    m = f.switch_model
    cages = m.port_names(m.native.speed)
    out = []
    for c, speed in enumerate(speeds):
        if not speed:  # the even neighbour of a cage split a port a lane (spec/layout.py `leaf_groups`)
            out.append((cages[c], "cage:disabled"))
            continue
        per = m.mode_for(speed).per_cage
        if per > 1:
            out.append((cages[c], f"cage:{per}x"))
    return tuple(out)


def _switch(intents: SwitchIntents, qos: dict[str, Any], ar: bool, breakout: str | None, cages: int, d: Dialect,
            parts: dict[bool, _Parts], border: dict[str, Any] | None, oob: Any,
            s: Any) -> tuple[str, dict[str, Any], list[Secret]]:
    """One switch's item: its name, its NVUE tree and the variables its secrets come from."""
    sw = intents(s)
    ups = border["uplinks"].get(sw["name"]) if border else None
    if ups:
        sw = _border_ports(sw, ups)
    oob_ups = oob.pair_ports.get(sw["name"]) if oob else None
    if oob_ups:
        sw = _border_ports(sw, [{"port": u["port"], "description": f"{u['peer']}:{u['peer_port']}",
                                 **({"speed": u["speed"]} if "speed" in u else {})} for u in oob_ups], "oobup")
    b = sw.get("baseline")
    tree = _tree(sw, qos, ar, breakout, cages, d, parts[bool(b and b["telemetry"]["histograms"])])
    if ups and border:
        _border(tree, sw, border, d)
    if oob_ups and oob:
        _oob_pair(tree, sw, oob, border if ups else None, d)
    if b and sw["management"]:
        _baseline(tree, b, sw["management"]["vrf"], d)
    if sw["bgp"].get("bfd_offload") and "bfd" in tree["router"]:  # ethernet.bfd.offload, where BFD runs
        tree["router"]["bfd"]["offload"] = d.word()
    if "anycast_mac" in sw:  # ethernet.anycast_mac
        tree["system"]["global"] = {"anycast-mac": sw["anycast_mac"]}
    envs = [sw["bgp"]["password_env"]] if sw["bgp"]["password_env"] else []
    users = sw["management"]["users"] if sw["management"] else []
    secrets = _secrets([(e, secret_ref(e), "env") for e in envs],
                       [(u["password_source"], u["password"]) for u in users])
    return sw["name"], tree, _with_baseline(secrets, b)


def _border_ports(sw: dict[str, Any], ups: list[dict[str, Any]], kind: str = "border") -> dict[str, Any]:
    """The switch's intent with its border uplinks (unused ports until now: the highest-numbered,
    intent/northsouth.py `border_ports`) as ports of kind `border`, each described by its far end;
    with kind `oobup`, a routed out-of-band network's uplinks (the free ports below those)."""
    far = {u["port"]: u for u in ups}  # description, and speed where the tiers' speeds mix
    interfaces = [{"name": i["name"], "kind": kind, **{k: v for k, v in far[i["name"]].items() if k != "port"}}
                  if i["name"] in far else i for i in sw["interfaces"]]
    assert sum(i["kind"] == kind for i in interfaces) == len(far), f"a {kind} uplink on a used port"
    return {**sw, "interfaces": interfaces}



_DENY: dict[str, Any] = {"deny": {}}


def _prefix_list(prefixes: list[str]) -> dict[str, Any]:
    """A prefix list permitting each prefix and everything inside it (`max-prefix-len 32`), rules
    10, 20, ... as NVIDIA numbers them."""
    return {"rule": {str(10 * (k + 1)): {"action": "permit", "match": {p: {"max-prefix-len": 32}}}
                     for k, p in enumerate(prefixes)}}


def _border_policy(sw: dict[str, Any], border: dict[str, Any]) -> dict[str, Any]:
    """The border's route policy, NVIDIA's (csl-01-config.sh at 993eed6, core-01-config.sh at
    2f46cb2): what goes out to the site router (OUTBOUND_ERA_PREFIXES: the leaked tenants'
    subnets and their VRF loopbacks; never taken back from it), what the border VRF imports from
    the tenants (EXIT_FILTER: tagged 11:11), and what each tenant imports from it (<VRF>_FILTER:
    nothing tagged 11:11, so no tenant learns another's routes through the border, nor the other
    tenant's subnet, nor its own SVI addresses; the rest)."""
    own = {t["vrf"]: t for t in sw["evpn"]["tenants"]}
    leaked = border["leak"]
    own_lo = border["own_loopbacks"].get(sw["name"])
    lists: dict[str, Any] = {ALL_PREFIXES: _prefix_list(["0.0.0.0/0"]),
                             **({f"{border['vrf']}_LOCAL_IF": _prefix_list([f"{own_lo}/32"])} if own_lo else {}),
                             BORDER_OUT_LIST: _prefix_list([t["subnet"] for t in leaked]
                                                           + ([border["loopbacks"]] if border["loopbacks"] else [])
                                                           + ([border["oob_subnet"]] if border["oob_subnet"] else [])
                                                           + ([border["oob_loopbacks"]] if border["oob_loopbacks"]
                                                              else []))}
    maps: dict[str, Any] = {
        BORDER_OUT_MAP: {"rule": {"10": {"action": _PERMIT,
                                         "match": {"ip-prefix-list": BORDER_OUT_LIST, "type": "ipv4"}}}},
        # NVIDIA's rule 10 denies the border VRF's own loopback (EXIT_LOCAL_IF), where it has one
        # (border.loopback; csl-01-config.sh at 993eed6: `route-map EXIT_FILTER rule 10 action deny`,
        # `match ip-prefix-list EXIT_LOCAL_IF`, `match type ipv4`)
        BORDER_IN_MAP: {"rule": {
            **({"10": {"action": _DENY, "match": {"ip-prefix-list": f"{border['vrf']}_LOCAL_IF", "type": "ipv4"}}}
               if own_lo else {}),
            "20": {"action": _PERMIT, "set": {"community": {LEAK_COMMUNITY: {}}}}}},
        **({BORDER_IN_SITE_MAP: {"rule": {"10": {"action": _DENY,
                                                 "match": {"ip-prefix-list": BORDER_OUT_LIST, "type": "ipv4"}},
                                          "20": {"action": _PERMIT}}}} if border["inbound_filter"] else {})}
    for t in leaked:
        v = t["vrf"]
        lists[f"{v}_PREFIXES"] = _prefix_list([t["subnet"]])
        lists[f"{v}_LOCAL_IF"] = _prefix_list([f"{own[v]['svi_ip']}/32"])
        rules: dict[str, Any] = {"5": {"action": _DENY, "match": {"community-list": LEAK_COMMUNITY_LIST}}}
        for o in leaked:  # the other tenant's subnet stays out (NVIDIA's INBAND_FILTER rule 10, OOB_PREFIXES)
            if o is not t:
                rules["10"] = {"action": _DENY, "match": {"ip-prefix-list": f"{o['vrf']}_PREFIXES", "type": "ipv4"}}
        rules["15"] = {"action": _DENY, "match": {"ip-prefix-list": f"{v}_LOCAL_IF", "type": "ipv4"}}
        rules["20"] = {"action": _PERMIT, "match": {"ip-prefix-list": ALL_PREFIXES, "type": "ipv4"}}
        maps[f"{v}_FILTER"] = {"rule": rules}
    return {"community-list": {LEAK_COMMUNITY_LIST: {"rule": {"100": {
                "action": "permit", "community": {LEAK_COMMUNITY: {}}}}}},
            "prefix-list": dict(sorted(lists.items())), "route-map": dict(sorted(maps.items()))}


def _border(tree: dict[str, Any], sw: dict[str, Any], border: dict[str, Any], d: Dialect) -> None:
    """northsouth.border on a border switch: the border VRF (its L3VNI, its routes into EVPN, the
    tenants' routes imported), its uplinks' unnumbered eBGP sessions to the site router with the
    outbound route-map (BFD of the `border` class), the route policy, each leaked tenant importing
    the border VRF's routes, and the ECMP width in the border and the default VRF."""
    vrf, group = border["vrf"], border["group"]
    timers = border["bfd"]
    if timers and d.new:
        bfd = tree["router"].setdefault("bfd", {"profile": {}, "state": "enabled"})
        bfd["profile"] = dict(sorted({**bfd["profile"], _bfd_profile(timers): _bfd_timers(timers)}.items()))
    # the inbound filter (border.inbound_filter, default on; NVIDIA's sessions have none)
    policy = {**({"inbound": {"route-map": BORDER_IN_SITE_MAP}} if border["inbound_filter"] else {}),
              "outbound": {"route-map": BORDER_OUT_MAP}}
    peer = {"address-family": {"ipv4-unicast": {**d.on(), "policy": policy}},
            **({"bfd": _bfd_group(timers, d)} if timers else {}),
            "remote-as": border["asn"] if border["asn"] is not None else "external"}
    leaked = border["leak"]
    # border.multipaths default-only: the border VRF keeps the release's paths (NVIDIA's csl-01 at 993eed6)
    paths = {} if border.get("multipaths") == "default-only" else {"multipaths": {"ebgp": border["ecmp"]}}
    ipv4: dict[str, Any] = {**d.on(), **paths, "redistribute": {"connected": d.on()},
                            "route-export": {"to-evpn": d.on()}}
    if leaked:
        ipv4["route-import"] = {"from-vrf": {**d.on(), "list": {t["vrf"]: {} for t in leaked},
                                             "route-map": BORDER_IN_MAP}}
    # the switch's router-id written (FRR would take one of the VRF's addresses, and EXIT has none)
    # and the l2vpn-evpn address family, as NVIDIA's EXIT (csl-01-config.sh at 993eed6); with
    # border.loopback the VRF's own loopback is its router-id, as NVIDIA's (`vrf EXIT loopback ip address
    # 172.16.1.183/32`, `vrf EXIT router bgp router-id 172.16.1.183`); border.l3vni_vlan: `vrf EXIT evpn vlan`
    own_lo = border["own_loopbacks"].get(sw["name"])
    evpn = {**d.on(), **({"vlan": border["l3vni_vlan"]} if border["l3vni_vlan"] else {}),
            "vni": {str(border["l3vni"]): {}}}
    tree["vrf"][vrf] = {"evpn": evpn, **({"loopback": {"ip": {"address": {f"{own_lo}/32": {}}}}} if own_lo else {}),
                        "router": {"bgp": {
        **d.on(), "address-family": {"ipv4-unicast": ipv4, "l2vpn-evpn": d.on()},
        "router-id": own_lo or sw["bgp"]["router_id"], "peer-group": {group: peer},
        "neighbor": {u["port"]: {"peer-group": group, "type": "unnumbered"} for u in border["uplinks"][sw["name"]]}}}}
    for t in leaked:
        af = tree["vrf"][t["vrf"]]["router"]["bgp"]["address-family"]["ipv4-unicast"]
        af["route-import"] = {"from-vrf": {**d.on(), "list": {vrf: {}}, "route-map": f"{t['vrf']}_FILTER"}}
    multipaths = tree["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["multipaths"]
    multipaths["ebgp"] = max(multipaths["ebgp"], border["ecmp"])
    policy = tree["router"].setdefault("policy", {})
    for key, value in _border_policy(sw, border).items():
        policy[key] = dict(sorted({**policy.get(key, {}), **value}.items()))


# A routed out-of-band network (oob_design routed; docs/cluster.md "A routed out-of-band network"), as
# NVIDIA's generator writes both ends: NVIDIA/enterprise-ras net-configurator/output/2-8-9-400/default/
# configs/oob-switch-01-config.sh at 993eed6a993b668e9ab80556cd973b548612c4a4 (the SN2201: VLAN 200 on
# VNI 4200, vlan200 in VRF OOB with a VRR gateway, VRF OOB on L3VNI 5001 with `evpn vlan 3001`, unnumbered
# eBGP uplinks in peer group `underlay` with WEIGHTED_ECMP outbound and BFD 300 ms x 3, numbered EVPN
# sessions to the cores' loopbacks in peer group `overlay`: multihop-ttl 2, update-source lo, IPv4 off,
# BFD 1000 ms x 3; `path-selection multipath aspath-ignore`) and 2-4-5-800/default/configs/csl-01-config.sh
# at the same commit (the pair: the uplinks in `underlay`, the SN2201 loopbacks in `overlay`, VRF OOB
# importing EXIT through OOB_FILTER and EXIT importing OOB through EXIT_FILTER, `service dhcp-relay OOB`
# with a server group, the downstream vlan200 and the upstream vlan3001_l3, `source-ip giaddress`).
OOB_UNDERLAY = "oob-underlay"  # NVIDIA's `underlay`: named apart from the pair's own groups
OOB_OVERLAY = "oob-overlay"  # NVIDIA's `overlay`
OOB_MULTIHOP = 2  # NVIDIA's multihop-ttl: the access switch and a pair leaf are one link apart
RELAY_GROUP = "oob-dhcp-servers"  # NVIDIA's server group name (csl-01-config.sh at 993eed6)
OOB_TENANT_RULE = "12"  # a leaked tenant's <VRF>_FILTER rule denying the out-of-band subnet (NVIDIA: rule 10)
OOB_EVPN_OUT = "EVPN_OOB_OUT"  # oob_routed.evpn_filter: NVIDIA's route-map name (csl-01-config.sh at 993eed6)
OOB_HOSTS_LIST = "OOB_HOSTS"  # its prefix list: the management subnet (NVIDIA's name and content)


def _oob_bfd(tree: dict[str, Any], timers: dict[str, int] | None, d: Dialect) -> dict[str, Any]:
    """A routed out-of-band group's BFD (its profile added to the switch's), or nothing."""
    if not timers:
        return {}
    if d.new:
        bfd = tree["router"].setdefault("bfd", {"profile": {}, "state": "enabled"})
        bfd["profile"] = dict(sorted({**bfd["profile"], _bfd_profile(timers): _bfd_timers(timers)}.items()))
    return {"bfd": _bfd_group(timers, d)}


def _oob_sessions(tree: dict[str, Any], bgp: dict[str, Any], oob: Any, uplinks: list[str], loopbacks: list[str],
                  d: Dialect, evpn_out: str | None = None) -> None:
    """Both session kinds of a routed out-of-band network into a default VRF's BGP `bgp`: the uplinks'
    unnumbered eBGP (IPv4, WEIGHTED_ECMP outbound) and the loopbacks' EVPN (multihop, from lo; with
    `evpn_out`, that route-map outbound on their l2vpn-evpn, oob_routed.evpn_filter on the pair)."""
    groups = dict(bgp.get("peer-group", {}))
    groups[OOB_UNDERLAY] = {"address-family": {"ipv4-unicast": {**d.on(), "policy": {"outbound": {
        "route-map": WEIGHTED_ECMP}}}}, **_oob_bfd(tree, oob.bfd_uplink, d), "remote-as": "external"}
    evpn_af = {**d.on(), "policy": {"outbound": {"route-map": evpn_out}}} if evpn_out else d.on()
    groups[OOB_OVERLAY] = {"address-family": {"ipv4-unicast": d.on(False), "l2vpn-evpn": evpn_af},
                           **_oob_bfd(tree, oob.bfd_overlay, d), "multihop-ttl": OOB_MULTIHOP,
                           "remote-as": "external", "update-source": "lo"}
    bgp["peer-group"] = dict(sorted(groups.items()))
    mine = {p: {"peer-group": OOB_UNDERLAY, "type": "unnumbered"} for p in uplinks}
    mine.update({ip: {"peer-group": OOB_OVERLAY, "type": "numbered"} for ip in loopbacks})
    bgp["neighbor"] = yamlout.Joined(bgp["neighbor"], mine) if "neighbor" in bgp else mine
    policy = tree["router"].setdefault("policy", {})
    policy["route-map"] = dict(sorted({**policy.get("route-map", {}), **_route_maps({WEIGHTED_ECMP})}.items()))


def _oob_svi(oob: Any, own: str, d: Dialect) -> dict[str, Any]:
    """The management VLAN's SVI in the out-of-band VRF: an address of its own and the anycast gateway."""
    vrr = {**d.on(), "address": {f"{oob.gateway}/{oob.prefix_len}": {}}, "mac-address": GATEWAY_MAC}
    svi: dict[str, Any] = {"address": {f"{own}/{oob.prefix_len}": {}}, "vrr": vrr}
    node: dict[str, Any] = {"description": oob.vrf, d.ip: svi, "type": "svi", "vlan": oob.vlan}
    if d.new:
        node["vrf"] = oob.vrf
    else:
        svi["vrf"] = oob.vrf
    return node


def _oob_vrf(oob: Any, router_id: str, d: Dialect, loopback: str | None = None) -> dict[str, Any]:
    """The out-of-band VRF: its layer-3 VNI on NVIDIA's VLAN (`evpn vlan`), its connected subnet into
    EVPN, l2vpn-evpn; its router-id the switch's, or with oob_routed.vrf_loopbacks the VRF's own
    loopback (NVIDIA's oob-switch-01 at 993eed6: `vrf OOB loopback ip address 172.16.176.121/32`,
    `vrf OOB router bgp router-id 172.16.176.121`; csl-01: 172.16.1.151)."""
    af: dict[str, Any] = {"ipv4-unicast": {**d.on(), "redistribute": {"connected": d.on()},
                                           "route-export": {"to-evpn": d.on()}}, "l2vpn-evpn": d.on()}
    return {"evpn": {**d.on(), "vlan": oob.l3vni_vlan, "vni": {str(oob.l3vni): {}}},
            **({"loopback": {"ip": {"address": {f"{loopback}/32": {}}}}} if loopback else {}),
            "router": {"bgp": {**d.on(), "address-family": af, "router-id": loopback or router_id}}}


def _oob_relay(oob: Any, d: Dialect) -> dict[str, Any]:
    """`service dhcp-relay <vrf>`: the management VLAN's requests to the server, from the VRF's layer-3
    VNI interface, the relay's address as the source (5.14 and later: a server group; 5.13: the
    server and both interfaces)."""
    down, up = f"vlan{oob.vlan}", f"vlan{oob.l3vni_vlan}_l3"
    if _release(d.version) >= (5, 14):
        relay: dict[str, Any] = {
            "downstream-interface": {down: {"server-group-name": RELAY_GROUP}},
            "server-group": {RELAY_GROUP: {"server": {oob.dhcp_server: {}}, "upstream-interface": {up: {}}}}}
    else:
        relay = {"interface": {down: {}, up: {}}, "server": {oob.dhcp_server: {}}}
    return {oob.vrf: {**relay, "source-ip": "giaddress"}}


def _oob_pair(tree: dict[str, Any], sw: dict[str, Any], oob: Any, border: dict[str, Any] | None, d: Dialect) -> None:
    """A north-south pair leaf's side of a routed out-of-band network: the management VLAN on its VNI,
    its SVI and anycast gateway in the out-of-band VRF, the VRF, both session kinds with every access
    switch, the DHCP relay, and with a border the leaking between the VRF and the border's."""
    me = next(p for p in oob.pair if p["name"] == sw["name"])
    ports = oob.pair_ports[sw["name"]]
    domain = tree.setdefault("bridge", {"domain": {"br_default": {}}})["domain"]["br_default"]
    domain["vlan"] = {**domain.get("vlan", {}), str(oob.vlan): {"vni": {str(oob.vni): {}}}}
    tree["interface"] = yamlout.Joined(tree["interface"], {f"vlan{oob.vlan}": _oob_svi(oob, me["svi_ip"], d)})
    tree["vrf"][oob.vrf] = _oob_vrf(oob, sw["bgp"]["router_id"], d, me.get("vrf_loopback"))
    _oob_sessions(tree, tree["vrf"]["default"]["router"]["bgp"], oob, [u["port"] for u in ports],
                  [oob.access[u["peer"]]["loopback"] for u in ports], d, OOB_EVPN_OUT if oob.evpn_filter else None)
    if oob.evpn_filter:
        _oob_evpn_filter(tree, oob)
    if oob.dhcp_server:
        tree.setdefault("service", {})["dhcp-relay"] = _oob_relay(oob, d)
    if border is not None:
        _oob_leak(tree, oob, me, border)


def _oob_evpn_filter(tree: dict[str, Any], oob: Any) -> None:
    """oob_routed.evpn_filter: NVIDIA's EVPN_OOB_OUT (csl-01-config.sh at 993eed6: rule 10 permits MAC/IP
    routes matching prefix list OOB_HOSTS, the management subnet; rule 20 denies every other MAC/IP
    route; rule 100 permits the rest), sent on the pair's EVPN sessions to the access switches, which
    then receive the management VLAN's type-2 routes and none of the pair's other tenants'."""
    policy = tree["router"].setdefault("policy", {})
    lists = {**policy.get("prefix-list", {}), OOB_HOSTS_LIST: _prefix_list([oob.subnet])}
    macip = {"evpn-route-type": "macip", "type": "ipv4"}
    maps = {**policy.get("route-map", {}), OOB_EVPN_OUT: {"rule": {
        "10": {"action": _PERMIT, "match": {**macip, "ip-prefix-list": OOB_HOSTS_LIST}},
        "20": {"action": _DENY, "match": macip},
        "100": {"action": _PERMIT}}}}
    policy["prefix-list"] = dict(sorted(lists.items()))
    policy["route-map"] = dict(sorted(maps.items()))


def _oob_leak(tree: dict[str, Any], oob: Any, me: dict[str, str], border: dict[str, Any]) -> None:
    """The out-of-band VRF and the border's, as NVIDIA's csl-01 (993eed6) leaks OOB and EXIT: the border
    VRF imports the out-of-band one through EXIT_FILTER (tagged 11:11), the out-of-band VRF imports the
    border's through OOB_FILTER (nothing tagged 11:11, no leaked tenant's subnet, not the pair's own SVI
    address; the rest), each leaked tenant's filter denies the out-of-band subnet (which goes out to the
    site router from every border leaf: `_border_policy`'s ERA_PREFIXES)."""
    v = oob.vrf
    imp = tree["vrf"][border["vrf"]]["router"]["bgp"]["address-family"]["ipv4-unicast"].setdefault(
        "route-import", {"from-vrf": {"state": "enabled", "list": {}, "route-map": BORDER_IN_MAP}})
    imp["from-vrf"]["list"] = {**imp["from-vrf"]["list"], v: {}}
    af = tree["vrf"][v]["router"]["bgp"]["address-family"]["ipv4-unicast"]
    af["route-import"] = {"from-vrf": {**({"state": "enabled"} if "state" in af else {"enable": "on"}),
                                       "list": {border["vrf"]: {}}, "route-map": f"{v}_FILTER"}}
    policy = tree["router"]["policy"]
    lists = policy["prefix-list"]
    # the VRF's own loopback (oob_routed.vrf_loopbacks) with its prefixes and local addresses, as NVIDIA's
    # OOB_PREFIXES rule 20 and OOB_LOCAL_IF (csl-01-config.sh at 993eed6: 172.16.1.151/32)
    vlo = [f"{me['vrf_loopback']}/32"] if me.get("vrf_loopback") else []
    lists[f"{v}_PREFIXES"] = _prefix_list([oob.subnet, *vlo])
    lists[f"{v}_LOCAL_IF"] = _prefix_list([f"{me['svi_ip']}/32", *vlo])
    rules: dict[str, Any] = {"5": {"action": _DENY, "match": {"community-list": LEAK_COMMUNITY_LIST}}}
    for k, t in enumerate(border["leak"]):  # NVIDIA's OOB_FILTER rule 10: INBAND_PREFIXES
        rules[str(10 + k)] = {"action": _DENY, "match": {"ip-prefix-list": f"{t['vrf']}_PREFIXES", "type": "ipv4"}}
        policy["route-map"][f"{t['vrf']}_FILTER"]["rule"][OOB_TENANT_RULE] = {
            "action": _DENY, "match": {"ip-prefix-list": f"{v}_PREFIXES", "type": "ipv4"}}
    rules["15"] = {"action": _DENY, "match": {"ip-prefix-list": f"{v}_LOCAL_IF", "type": "ipv4"}}
    rules["20"] = {"action": _PERMIT, "match": {"ip-prefix-list": ALL_PREFIXES, "type": "ipv4"}}
    maps = policy["route-map"]
    maps[f"{v}_FILTER"] = {"rule": rules}
    for name in maps:
        maps[name]["rule"] = dict(sorted(maps[name]["rule"].items(), key=lambda kv: int(kv[0])))
    policy["prefix-list"] = dict(sorted(lists.items()))
    policy["route-map"] = dict(sorted(maps.items()))


def _with_baseline(secrets: list[Secret], b: dict[str, Any] | None) -> list[Secret]:
    """`secrets` and then the baseline's (AAA key, SNMPv3 passphrases), each variable once."""
    if not b:
        return secrets
    refs: list[tuple[dict[str, str], str]] = []
    if b["aaa"]:
        refs.append((b["aaa"]["secret_source"], b["aaa"]["secret"]))
    for u in b["snmp"]["users"] if b["snmp"] else []:
        refs += [(u["auth_source"], u["auth"]), (u["priv_source"], u["priv"])]
    return _secrets(secrets, refs)


def _secrets(secrets: list[Secret], refs: list[tuple[dict[str, str], str]]) -> list[Secret]:
    """`secrets` and then each (source, reference) of `refs` whose variable is not yet among them:
    a script asks for each variable once."""
    out = list(secrets)
    for source, ref in refs:
        ((kind, var),) = source.items()
        if all(var != v for v, _, _ in out):
            out.append((var, ref, kind))
    return out


def _check_line(var: str, kind: str) -> str:
    """The script's check that a secret's variable is set: an environment variable as the
    playbooks' lookup reads it, or a shell variable named after the Ansible Vault variable
    (the script does not read the vault: export it from there)."""
    if kind == "vault":
        return (f': "${{{var}:?set {var} to the Ansible Vault variable {var} (a secret this configuration '
                'references)}"')
    return f': "${{{var}:?set {var} (a secret this configuration references)}}"'


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    for name, tree, secrets in data["switches"]:
        head = yamlout.comment(f"{name}: NVUE startup.yaml, fabric {data['fabric']} ({data['cluster']}); "
                               "generated by fabgen") + yamlout.DOCUMENT_START
        # dump([{"header": ...}, {"set": tree}]), the tree's lines and its nv set lines in one walk
        tree_lines, cmds = yamlout.dump_paths(tree, "    ", "nv set ")
        body = yamlout.dump([{"header": data["header"]}]) + "- set:\n" + "\n".join(tree_lines) + "\n"
        yield f"{data['fabric']}/switches/{name}.nvue.yaml", (head + body).encode()
        lines = ["#!/usr/bin/env bash",
                 f"# {name}: the configuration of {name}.nvue.yaml as NVUE commands; generated by fabgen",
                 "set -euo pipefail", ""]
        for var, ref, kind in secrets:
            # the script reads each secret from its own environment, as the YAML's reference does
            lines.append(_check_line(var, kind))
            cmds = [c.replace(ref, f'"${{{var}}}"') for c in cmds]
        if secrets:
            lines.append("")
        lines += cmds  # `nv set <path>` lines, several to an entry (yamlout.dump_paths)
        # applied with a rollback timer: unless `nv config apply --confirm-yes` follows within
        # ten minutes (after checking the switch is still reachable), the switch rolls back
        lines += ["", "nv config apply --confirm 600s --assume-yes", ""]
        yield f"{data['fabric']}/switches/{name}.nvue.sh", "\n".join(lines).encode()
        # the tree for Ansible too, written here from the tree just made (ansible.py says why)
        yield config_file(name, "nvue", tree)


# Out-of-band access switches (role oob, kind ethernet; docs/cluster.md): SN2201 on Cumulus Linux,
# written like the Spectrum-X switches (same header, dialects, YAML and `nv set` script).
# Decisions:
# * one management VLAN (`oob_vlan`, default 10): every used access port an untagged member in
#   br_default, unused ports down; the switch's own address on that VLAN's SVI (the top of the
#   management prefix, addressing.allocate_oob) with a static default route to the gateway: it is
#   managed on the network it serves, not on eth0;
# * the model's first two uplinks (swp49, swp50) form the LACP bond `uplink`, an untagged member
#   of the VLAN, towards the site's management network that routes the subnet;
# * no RoCE, no BGP, no adaptive routing: NTP, DNS, syslog and accounts from the management block.
# With `oob_design: routed` the uplinks, the SVI and the routing are NVIDIA's routed design instead
# (`_access_routed`, below; the pair's side in `_oob_pair`, above).

UPLINK = "uplink"


def _access_tree(ctx: Context, s, d: Dialect, vlan: int) -> tuple[dict[str, Any], list[Secret]]:
    f = ctx.fabric
    m = f.spec.management
    assert m is not None
    address = ctx.allocation.management[s.name]
    plen = int(m.prefix.split("/")[1])
    gateway = dotted_quad(gateway_of(m))
    tree: dict[str, Any] = {"system": {"hostname": s.name}}
    iface: dict[str, Any] = {}
    accounts = m.users or users_of(ctx.baseline, f.spec.baseline)  # as intent/management.py takes them
    services = {"address": address, "prefix_len": plen, "gateway": gateway, "vrf": "default",
                **services_of(m, ctx.baseline, f.spec.baseline), "domain": m.domain,
                "users": [{"name": u.name, "role": u.role, "password": secret_text(u.password_hash)}
                          for u in accounts]}
    routed = ctx.oob_routed
    if routed is not None:  # the switch's services reach their servers through the out-of-band VRF
        services["vrf"] = routed.vrf
    _management(tree, iface, services, d)
    iface.clear()  # eth0 stays unused: the switch is managed on its SVI
    b = named(baseline_of(ctx.baseline, f.spec.baseline, "access", f.spec.platform, m.prefix), s.name)
    telemetry = {"telemetry": {"histogram": HISTOGRAM}} if b and b["telemetry"]["histograms"] else {}
    used = f.ports.get(s.name, {})
    # cabling.node_leaf.speed: each used access port's `link speed`, as NVIDIA's SN2201 (`nv set interface
    # swp1-48 link speed 1G`, oob-switch-01-config.sh for 2-8-9-400 at 993eed6a993b668e9ab80556cd973b548612c4a4)
    speed = f.spec.cabling.node_leaf.speed
    link = {"link": {"speed": f"{speed}G"}} if speed else {}
    for name in f.switch_model.port_names(f.plan.speed):
        idx = used.get(name)
        if idx is None:
            iface[name] = {"link": {"state": {"down": {}}}, "type": "swp"}
            continue
        lk = f.links[idx]
        iface[name] = {"bridge": {"domain": {"br_default": {"access": vlan}}},
                       "description": f"OOB_{lk.a}_{lk.a_port}", **link, "type": "swp", **telemetry}
    if routed is not None:
        _access_routed(tree, iface, routed, s.name, d, telemetry)
    else:
        members = f.switch_model.uplinks[:2]
        iface[UPLINK] = {"bond": {"member": {p: {} for p in members}, "mode": "lacp"},
                         "bridge": {"domain": {"br_default": {"access": vlan}}},
                         "description": "UPLINK_site_management", "type": "bond"}
        iface[f"vlan{vlan}"] = {d.ip: {"address": {f"{address}/{plen}": {}}}, "type": "svi", "vlan": vlan}
        tree["interface"] = iface
        tree["bridge"] = {"domain": {"br_default": {"vlan": {str(vlan): {}}}}}
        tree["vrf"] = {"default": {"router": {"static": {"0.0.0.0/0": {"via": {gateway: {}}}}}}}
    if b:
        _baseline(tree, b, routed.vrf if routed is not None else "default", d)
    secrets = _secrets([], [(secret_name(u.password_hash), secret_text(u.password_hash)) for u in accounts])
    return tree, _with_baseline(secrets, b)


def _access_routed(tree: dict[str, Any], iface: dict[str, Any], oob: Any, name: str, d: Dialect,
                   telemetry: dict[str, Any]) -> None:
    """An access switch of a routed out-of-band network (oob_design routed): an EVPN VTEP with a
    loopback and an ASN of its own, its first two uplinks routed (unnumbered eBGP) to the pair's two
    leaves, the management VLAN on its VNI, its SVI in the out-of-band VRF with the switch's own
    address and the anycast gateway, EVPN sessions to the pair's loopbacks; its default route comes
    by BGP (EVPN type-5 into the VRF) where the layer-2 design writes a static one."""
    me = oob.access[name]
    lo = me["loopback"]
    for u in me["uplinks"]:
        iface[u["port"]] = {"description": f"{u['peer']}:{u['peer_port']}", "type": "swp", **telemetry}
    iface["lo"] = {d.ip: {"address": {f"{lo}/32": {}}}, "type": "loopback"}
    iface[f"vlan{oob.vlan}"] = _oob_svi(oob, me["svi_ip"], d)
    tree["interface"] = dict(sorted(iface.items(), key=lambda kv: (kv[0] != "lo", kv[0].startswith("vlan"))))
    tree["bridge"] = {"domain": {"br_default": {"vlan": {str(oob.vlan): {"vni": {str(oob.vni): {}}}}}}}
    tree["evpn"] = d.on()
    tree["nve"] = {"vxlan": {**d.on(), "arp-nd-suppress": d.word(), "source": {"address": lo}}}
    tree["router"] = {"bgp": {"autonomous-system": me["asn"], **d.on(), "router-id": lo}, "vrr": d.on()}
    # oob_routed.announce redistribute: the loopback by `redistribute connected` through LOOPBACK_BGP, as
    # NVIDIA's oob-switch-01 (993eed6: `redistribute connected route-map LOOPBACK_BGP`, the route-map
    # `match interface lo`, `match type ipv4`); the default, a `network` statement as every fabgen switch
    announce: dict[str, Any] = {"redistribute": {"connected": {**d.on(), "route-map": LOOPBACK_MAP}}} \
        if oob.announce == "redistribute" else {"network": {f"{lo}/32": {}}}
    bgp: dict[str, Any] = {**d.on(), "address-family": {"ipv4-unicast": {**d.on(), **announce},
                                                        "l2vpn-evpn": d.on()},
                           "path-selection": {"multipath": {"aspath-ignore": d.word()}}}
    _oob_sessions(tree, bgp, oob, [u["port"] for u in me["uplinks"]], [p["loopback"] for p in oob.pair], d)
    if oob.announce == "redistribute":
        maps = tree["router"]["policy"]["route-map"]
        tree["router"]["policy"]["route-map"] = dict(sorted({**maps, LOOPBACK_MAP: _LOOPBACK_RULES}.items()))
    tree["vrf"] = {"default": {"router": {"bgp": bgp}}, oob.vrf: _oob_vrf(oob, lo, d, me.get("vrf_loopback"))}


def _access_switch(ctx: Context, d: Dialect, vlan: int, s: Any) -> tuple[str, dict[str, Any], list[Secret]]:
    return (s.name, *_access_tree(ctx, s, d, vlan))


def access_structure(ctx: Context) -> dict[str, Any]:
    f = ctx.fabric
    version = version_of(f.spec) or ""
    d = Dialect(version)
    switches = Deferred(partial(_access_switch, ctx, d, f.spec.oob_vlan), f.switches)
    header = {"model": f.switch_model.part.removeprefix("M").split("-")[0], "nvue-api-version": "nvue_v1",
              "rev-id": 1.0, "version": f"Cumulus Linux {version}.0"}
    return {"fabric": f.name, "cluster": ctx.cluster, "switches": switches, "header": header}


TARGET = Target("nvue", lambda ctx: ctx.fabric.spec.kind == "spectrum-x", structure, render, every_other("switches"))
OOB_TARGET = Target("oob", lambda ctx: ctx.fabric.spec.role == "oob", access_structure, render,
                    every_other("switches"))
