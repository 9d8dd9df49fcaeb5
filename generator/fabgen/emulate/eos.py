"""Arista EOS running-config (what targets/eos renders) -> the routing it describes.

Strict: every line is either translated (interfaces with their addresses, access VLANs and
SVIs, the loopback, `router bgp` with its peer groups, neighbors, networks and maximum-paths)
or one this module knows it leaves out (QoS, PFC, management plane, accounts, services), by
pattern. Any other line is a TranslateError naming the file and line: a config the emulation
does not understand is never half-emulated.
"""

from __future__ import annotations

import re

from fabgen.emulate.model import Neighbor, Router, TranslateError

_N = r"[0-9]+"
_IP = r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+"
_CIDR = rf"{_IP}/[0-9]+"
_WORD = r"\S+"

# Lines left out, by where they appear: (pattern, what they are)
_TOP_IGNORED = [
    (r"hostname \S+", "name"), (r"service routing protocols model multi-agent", "platform"),
    (r"spanning-tree mode \S+", "layer 2"), (r"qos map .*", "qos"), (r"priority-flow-control .*", "qos"),
    (r"ntp .*", "management"), (r"logging .*", "management"), (r"ip name-server .*", "management"),
    (r"ip domain lookup .*", "management"), (r"dns domain \S+", "management"), (r"aaa .*", "management"),
    (r"username .*", "management"), (rf"ip route vrf \S+ {_CIDR} {_IP}", "management"),
    (r"no ip routing vrf \S+", "management"), (r"end", "end"),
    # the switch baseline (targets/eos.py): services on the management VRF, none of them routing
    (r"clock timezone \S+", "management"), (r"snmp-server .*", "management"), (r"sflow .*", "telemetry"),
    (r"(tacacs|radius)-server host .*", "management"),
]
_BLOCK_IGNORED = [  # whole blocks: header -> what they are
    (r"qos profile \S+", "qos"), (r"management (ssh|api http-commands)", "management"),
    (r"vrf instance \S+", "management"), (rf"vlan {_N}", "layer 2"),
    (r"banner (login|motd)", "management"), (r"management api gnmi", "telemetry"),
    (r"aaa group server (tacacs\+|radius) \S+", "management"), (r"ip access-list \S+", "management"),
    (r"system control-plane", "management"),
]
_INTERFACE_IGNORED = [
    (r"description .*", "name"), (r"mtu [0-9]+", "mtu"), (r"service-profile \S+", "qos"),
    (r"spanning-tree (portfast|bpduguard enable)", "layer 2"), (r"uc-tx-queue [0-9]+", "qos"),
    (r"random-detect ecn .*", "qos"), (r"priority-flow-control .*", "qos"), (r"qos trust dscp", "qos"),
    (r"!", "comment"),
]
_BGP_IGNORED = [
    (r"update wait-install", "timing"), (r"no bgp default ipv4-unicast", "defaults"),
    (r"distance bgp [0-9 ]+", "defaults"), (rf"neighbor {_WORD} (send-community|maximum-routes [0-9]+)", "limits"),
    (rf"neighbor {_IP} description .*", "name"), (r"!", "comment"),
]


class _Patterns(dict):
    """Compiled patterns by their text: re.fullmatch's own cache lookup was half the time of
    translating a fabric's configs (5,120 switches at 64k GPUs are read to choose a sample)."""

    def __missing__(self, pattern: str) -> re.Pattern[str]:
        compiled = self[pattern] = re.compile(pattern)
        return compiled


_RE = _Patterns()


def _fullmatch(pattern: str, line: str) -> re.Match[str] | None:
    return _RE[pattern].fullmatch(line)


_TABLES: dict[int, tuple[re.Pattern[str], list[tuple[str, str]]]] = {}


def _ignored(line: str, table: list[tuple[str, str]]) -> str | None:
    """What the first pattern of `table` that matches the whole line says, by one match of
    them all as alternatives (tried in order, as a loop over them would)."""
    done = _TABLES.get(id(table))
    if done is None:
        done = _TABLES[id(table)] = (re.compile("|".join(f"(?P<_{k}>{p})" for k, (p, _) in enumerate(table))), table)
    m = done[0].fullmatch(line)
    return None if m is None else table[int(m.lastgroup[1:])][1]  # type: ignore[index]  # every alternative is a named group


def translate(name: str, text: str, where: str) -> Router:
    """The Router an EOS config describes; `where` names the file in errors."""
    r = Router(name, "eos")
    routing = False
    for n, head, body in _blocks(text, where):
        if head == "ip routing":
            routing = True
            continue
        m = _fullmatch(r"interface (\S+)", head)
        if m:
            _interface(r, m.group(1), body, where)
            continue
        m = _fullmatch(rf"router bgp ({_N})", head)
        if m:
            r.asn = int(m.group(1))
            _bgp(r, body, where)
            continue
        what = _ignored(head, _BLOCK_IGNORED)
        if what is not None:
            r.ignored.add(what)
            continue
        what = _ignored(head, _TOP_IGNORED)
        if what is not None and not body:
            r.ignored.add(what)
            continue
        raise TranslateError(f"{where}:{n}: the EOS translator does not know {head!r}")
    if not routing:
        raise TranslateError(f"{where}: no 'ip routing': the switch would not route")
    return r


def _blocks(text: str, where: str) -> list[tuple[int, str, list[tuple[int, str]]]]:
    """The config's sections: (line number, header, body), comments and blank lines left out;
    a banner's text, whatever it reads, is its body up to the line EOF."""
    lines = text.split("\n")
    blocks: list[tuple[int, str, list[tuple[int, str]]]] = []  # (line number, header, body)
    banner = False
    for n, raw in enumerate(lines, 1):
        if banner:
            banner = raw != "EOF"
            blocks[-1][2].append((n, raw))
            continue
        banner = raw.startswith("banner ")
        if not raw.strip():
            continue
        if raw.startswith("!"):
            continue
        if raw[0] != " ":
            blocks.append((n, raw, []))
        elif not blocks:
            raise TranslateError(f"{where}:{n}: an indented line before any section: {raw.strip()!r}")
        else:
            blocks[-1][2].append((n, raw))
    return blocks


def _interface(r: Router, port: str, body: list[tuple[int, str]], where: str) -> None:  # noqa: C901 (one case a line of the section)
    addresses: list[str] = []
    routed = access = False
    vlan = ""
    mgmt = False
    for n, raw in body:
        line = raw.strip()
        if line in ("no shutdown", "shutdown"):
            if line == "shutdown":
                return  # an unused port: no link is built on it
            continue
        m = _fullmatch(rf"ip address ({_CIDR})", line)
        if m:
            addresses.append(m.group(1))
            continue
        if line == "no switchport":
            routed = True
            continue
        m = _fullmatch(rf"switchport access vlan ({_N})", line)
        if m:
            access, vlan = True, m.group(1)
            continue
        if _fullmatch(r"vrf \S+", line):
            mgmt = True  # the management port in its VRF: the management plane is not emulated
            continue
        if _ignored(line, _INTERFACE_IGNORED) is not None:
            continue
        raise TranslateError(f"{where}:{n}: the EOS translator does not know {line!r} in interface {port}")
    if mgmt or port.startswith("Management"):
        r.ignored.add("management")
    elif port.startswith("Loopback"):
        r.loopbacks += addresses
    elif port.startswith("Vlan"):
        r.vlans[f"vlan{port[4:]}"] = addresses
    elif access:
        r.members[port] = f"vlan{vlan}"
    elif routed:
        r.routed[port] = addresses
    else:
        raise TranslateError(f"{where}: interface {port} is neither routed nor an access port")


def _bgp(r: Router, body: list[tuple[int, str]], where: str) -> None:  # noqa: C901 (one case a line of the section)
    depth_af = False
    pending: dict[str, Neighbor] = {}
    for n, raw in body:
        indent = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        if indent <= 3:
            depth_af = False
        if line == "address-family ipv4":
            depth_af = True
            continue
        if depth_af:
            m = _fullmatch(rf"network ({_CIDR})", line)
            if m:
                r.networks.append(m.group(1))
                continue
            if _fullmatch(r"neighbor \S+ activate", line):
                continue
            raise TranslateError(f"{where}:{n}: the EOS translator does not know {line!r} in address-family ipv4")
        m = _fullmatch(rf"router-id ({_IP})", line)
        if m:
            r.router_id = m.group(1)
            continue
        m = _fullmatch(rf"maximum-paths ({_N}) ecmp {_N}", line)
        if m:
            r.multipath = int(m.group(1))
            continue
        m = _fullmatch(r"neighbor (\S+) peer group", line)
        if m:
            r.groups[m.group(1)] = Neighbor("", "", m.group(1))
            continue
        m = _fullmatch(rf"neighbor (\S+) bfd(?: interval {_N} min-rx {_N} multiplier {_N})?", line)
        if m and m.group(1) in r.groups:
            r.groups[m.group(1)].bfd = True
            continue
        m = _fullmatch(rf"neighbor ({_IP}) peer group (\S+)", line)
        if m:
            if m.group(2) not in r.groups:
                raise TranslateError(f"{where}:{n}: neighbor {m.group(1)} joins peer group {m.group(2)}, "
                                     "never declared")
            pending.setdefault(m.group(1), Neighbor(m.group(1), "")).group = m.group(2)
            continue
        m = _fullmatch(rf"neighbor ({_IP}|\S+) remote-as ({_N})", line)
        if m:
            if m.group(1) in r.groups:
                r.groups[m.group(1)].remote_as = m.group(2)
            else:
                pending.setdefault(m.group(1), Neighbor(m.group(1), "")).remote_as = m.group(2)
            continue
        if _ignored(line, _BGP_IGNORED) is not None:
            continue
        raise TranslateError(f"{where}:{n}: the EOS translator does not know {line!r} in router bgp")
    for peer, nb in pending.items():
        group = r.groups.get(nb.group)
        nb.remote_as = nb.remote_as or (group.remote_as if group else "")
        nb.bfd = bool(group and group.bfd)
        if not nb.remote_as:
            raise TranslateError(f"{where}: neighbor {peer} has no remote-as")
        r.neighbors.append(nb)
