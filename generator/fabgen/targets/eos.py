"""Arista EOS target: one complete running-config per switch, OUT/<fabric>/switches/<device>.cfg.

Sections follow EOS's own running-config order (as `show running-config` prints them and
AVD's eos_cli_config_gen renders them): hostname, qos profile, spanning-tree, vlans,
Ethernet, Loopback and Vlan interfaces, ip routing, qos maps, PFC watchdog defaults,
router bgp, management ssh, end. Syntax: docs/sources.md, "Arista EOS" (AVD test outputs, Arista's
AI fabric deployment guide). Values come from the intent layer (`intent/qos.py`,
`intent/switches.py`); nothing is decided here except how EOS spells it: watchdog timers in seconds (two decimals,
validation keeps them to 10 ms steps), ECN thresholds in bytes, DSCP maps as value lists of
at most eight per line.

The file is complete for `configure replace`: it carries the management plane (Management1
in the management VRF with the switch's `ansible_host` address, the VRF's default route,
name servers, NTP and syslog in that VRF, SSH and eAPI enabled there) and the operator's
accounts as environment references, because a replace removes everything it does not
carry. Host ports of a `leaf-subnet` leaf are edge ports (`spanning-tree portfast` with
BPDU guard): they face NICs, which never bridge, so they forward at once instead of waiting
out spanning tree's listening and learning; a NIC that does send BPDUs is shut down.

A fabric with a baseline (intent/baseline.py) adds, each where AVD's eos_cli_config_gen puts it:
sFlow and SNMPv3 after the QoS profile, the time zone before the VLANs, banners, gNMI and the
AAA servers after eAPI, the control-plane ACL before `ip routing` and its `system control-plane`
attachment (management VRF only: the fabric's BGP in the default VRF keeps EOS's default
control-plane ACL) before the static routes. Secrets are the deploy's references, spelled where
EOS takes the clear text (`key 0`, SNMP passphrases), since the deploy fills in the value itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fabgen.context import Context
from fabgen.formats.templating import render as render_template
from fabgen.intent.qos import qos_intent
from fabgen.intent.switches import DEFAULT_BFD, OVERLAY_BFD_CLASS, group_bfd, switch_configs
from fabgen.targets.base import Target, every_other

DSCP_PER_LINE = 8
OVERLAY_GROUP = "EVPN-OVERLAY-PEERS"  # AVD's name for the loopback-to-loopback EVPN sessions
OVERLAY_MULTIHOP = 3  # AVD's default evpn_ebgp_multihop
# BFD as AVD 6.4's eos_cli_config_gen writes it: `neighbor G bfd`, then, where a session class's
# timers are not EOS's defaults (300 ms x 3, fabgen's `bfd: true`), `neighbor G bfd interval I
# min-rx I multiplier M` (router_bgp.peer_groups[].bfd_timers); the multihop overlay sessions'
# timers under `router bfd` (router_bfd.multihop; AVD writes EOS's defaults explicitly).
QOS_PROFILE = "ROCE_LOSSLESS"
ECN_WEIGHT = 0  # no averaging of the queue depth: mark on the instantaneous depth
# fabgen's account roles in EOS's built-in roles (EOS manual, "Role-based authorization")
USER_ROLES = {"admin": {"privilege": 15, "role": "network-admin"},
              "read-only": {"privilege": 1, "role": "network-operator"}}
# Names of the baseline's objects (the AVD comparison, benchmarks/avd.py, uses the same)
SERVER_COMMAND = {"tacacs+": "tacacs-server", "radius": "radius-server"}  # a server's own line, per protocol
AAA_GROUP = {"tacacs+": "FABGEN-TACACS", "radius": "FABGEN-RADIUS"}
CONTROL_PLANE_ACL = "FABGEN-CONTROL-PLANE"
SNMP_GROUP = "FABGEN-V3"
GNMI_TRANSPORT = "default"
ACL_STEP = 10
# What the control-plane ACL admits from anywhere before the allowed prefixes: ICMP (as the
# baseline promises) and the replies to what the switch itself opened (NTP, DNS, TACACS+,
# RADIUS answers), EOS's `tracked` match as in its own default-control-plane-acl.
ACL_ANY = ("permit icmp any any", "permit ip any any tracked")


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g}"


def dscp_lines(dscp_to_tc: list[int]) -> list[tuple[str, int]]:
    """('0 1 2 3 4 5 6 7', 0), ...: DSCPs grouped by class, in DSCP order, eight per line."""
    by_tc: dict[int, list[int]] = {}
    for d, tc in enumerate(dscp_to_tc):
        by_tc.setdefault(tc, []).append(d)
    out = []
    for tc in sorted(by_tc):
        values = by_tc[tc]
        for i in range(0, len(values), DSCP_PER_LINE):
            out.append((" ".join(str(v) for v in values[i:i + DSCP_PER_LINE]), tc))
    return out


def structure(ctx: Context) -> dict[str, Any]:
    qos = qos_intent(ctx)
    wd = qos["watchdog"]
    eos_qos = {**qos, "profile": QOS_PROFILE, "dscp_lines": dscp_lines(qos["dscp_to_tc"]),
               "tc_queue_lines": [(qos["roce_priority"], qos["roce_priority"]),
                                  (qos["cnp_priority"], qos["cnp_priority"])],
               "ecn_weight": ECN_WEIGHT,
               "watchdog_s": {"timeout": _seconds(wd["detection_ms"]), "recovery": _seconds(wd["restoration_ms"]),
                              "polling": _seconds(wd["poll_interval_ms"])}}
    # eBGP routes preferred over iBGP and local ones (20 200 200 is what AVD's l3ls designs
    # set explicitly; EOS's own default differs and AVD 6.4 renders no distance unless asked);
    # a leaf without host VLANs is routed on every port and runs no spanning tree
    # a northsouth fabric (intent/northsouth.py) runs EVPN on loopback-to-loopback eBGP sessions in
    # their own peer group, as AVD's l3ls-evpn designs do (the spines pass routes on with
    # next-hop-unchanged); EVPN all-active multihoming, no MLAG peer link (docs/northsouth.md)
    eos = {"bgp_distance": "20 200 200", "routed_stp_mode": "none", "user_roles": USER_ROLES,
           "overlay_group": OVERLAY_GROUP, "overlay_multihop": OVERLAY_MULTIHOP}
    switches = [sw if not sw.get("baseline") else {**sw, "eos_baseline": eos_baseline(sw["baseline"])}
                for sw in switch_configs(ctx)]
    eos["bfd"] = {sw["name"]: eos_bfd(sw["bgp"]) for sw in switches}
    return {"fabric": ctx.fabric.name, "cluster": ctx.cluster, "qos": eos_qos, "eos": eos, "switches": switches}


def _bfd_line(t: dict[str, int]) -> dict[str, int]:
    return {"interval": t["interval_ms"], "min_rx": t["interval_ms"], "multiplier": t["multiplier"]}


def eos_bfd(bgp: dict[str, Any]) -> dict[str, Any]:
    """A switch's BFD as EOS spells it: per peer group with BFD, its timers line (None at EOS's
    defaults: `neighbor G bfd` alone); the overlay's multihop timers, None without BFD there."""
    groups = {g: t for g in bgp["peer_groups"] if (t := group_bfd(bgp["bfd"], g))}
    overlay = group_bfd(bgp["bfd"], OVERLAY_BFD_CLASS)
    return {"groups": {g: None if t == DEFAULT_BFD else _bfd_line(t) for g, t in groups.items()},
            "overlay": _bfd_line(overlay) if overlay else None}


def eos_baseline(b: dict[str, Any]) -> dict[str, Any]:
    """A switch's baseline (intent/baseline.py) as EOS spells it; the management VRF is the
    template's (`sw.management.vrf`). Keys without a value are None and render nothing."""
    tel = b["telemetry"]
    return {
        "timezone": b["timezone"],
        "banners": _banners(b["banner"]),
        "aaa": _aaa(b["aaa"]),
        "acl": _acl(b["control_plane"]),
        "snmp": _snmp(b["snmp"]),
        "sflow": tel["sflow"],
        "gnmi": GNMI_TRANSPORT if tel["gnmi"] else None,
        "api": b["api"],
    }


def _banners(banner: dict[str, Any] | None) -> list[tuple[str, list[str]]]:
    """[(login|motd, its lines)]: each banner ends at a line reading EOF (validation refuses one
    inside the text)."""
    if not banner:
        return []
    return [(kind, banner[kind].split("\n")) for kind in ("login", "motd") if banner[kind] is not None]


def _aaa(aaa: dict[str, Any] | None) -> dict[str, Any] | None:
    """One server group of the baseline's protocol; its key in clear (`key 0`), because the deploy
    fills the reference with the secret itself; login and exec authorization by the group, then
    the local accounts where `fallback_local` says so."""
    if not aaa:
        return None
    group = AAA_GROUP[aaa["protocol"]]
    methods = f"group {group}" + (" local" if aaa["fallback_local"] else "")
    return {"protocol": aaa["protocol"], "group": group, "servers": aaa["servers"], "key": aaa["secret"],
            "methods": methods, "host_command": SERVER_COMMAND[aaa["protocol"]]}


def _acl(cp: dict[str, Any] | None) -> dict[str, Any] | None:
    """The control-plane ACL: ICMP and replies from anywhere, everything else from the allowed
    prefixes only (the lock-out guard in validation has made sure they admit the deploy)."""
    if not cp:
        return None
    rules = [*ACL_ANY, *(f"permit ip {prefix} any" for prefix in cp["allow"])]
    return {"name": CONTROL_PLANE_ACL, "entries": [(ACL_STEP * (i + 1), r) for i, r in enumerate(rules)]}


def _snmp(snmp: dict[str, Any] | None) -> dict[str, Any] | None:
    """SNMPv3 only, authPriv: one group, every user in it with SHA and AES-128 passphrases."""
    if not snmp:
        return None
    return {"group": SNMP_GROUP, "location": snmp["location"], "contact": snmp["contact"],
            "users": [{"name": u["name"], "auth": u["auth"], "priv": u["priv"]} for u in snmp["users"]]}


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    for sw in data["switches"]:
        text = render_template("eos/switch.cfg.j2", sw=sw, qos=data["qos"], eos=data["eos"], fabric=data["fabric"],
                               cluster=data["cluster"])
        yield f"{data['fabric']}/switches/{sw['name']}.cfg", text.encode()


TARGET = Target("eos", lambda ctx: ctx.fabric.spec.kind == "roce" and ctx.fabric.spec.platform == "eos",
                structure, render, every_other("switches"))
