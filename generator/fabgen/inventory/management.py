"""Checks of `fabrics[].management`: the switches' management plane.

A switch configuration applied by full replace (EOS `configure replace`, SONiC `config
reload`, NVUE `nv config replace`) keeps only what the file says, so the management plane
has to be right before anything is rendered: the prefix holds every switch and the gateway,
the gateway is a host address of the prefix, servers are addresses, the VRF name is one the
platform has, and accounts are declared where a replace would remove them.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

from fabgen.inventory.ethernet import check_prefix
from fabgen.spec.platforms import PLATFORMS
from fabgen.spec.schema import DOMAIN_PATTERN, Baseline, Fabric, Management

Report = Callable[[tuple, str], None]

# SONiC's management VRF and Cumulus Linux's are built in and both named "mgmt"
# (SONiC MGMT_VRF_CONFIG enables it; Cumulus puts eth0 in it by default). EOS takes any name;
# AVD's default is MGMT.
FIXED_VRF = {name: p.mgmt_vrf for name, p in PLATFORMS.items() if p.fixed_vrf}
DEFAULT_VRF = {name: p.mgmt_vrf for name, p in PLATFORMS.items() if p.mgmt_vrf}
KEEPS_USERS = {name for name, p in PLATFORMS.items() if p.keeps_users}


def gateway_of(m: Management) -> int:
    """The gateway as an integer address: the one given, or the prefix's last host address."""
    net = ipaddress.IPv4Network(m.prefix)
    return int(ipaddress.IPv4Address(m.gateway)) if m.gateway else int(net.broadcast_address) - 1


def vrf_of(m: Management, platform: str) -> str:
    return m.vrf or DEFAULT_VRF.get(platform, "MGMT")


def check_management(i: int, f: Fabric, switches: int, given_as_text: bool, report: Report, warn: Report,
                     taken: list, what: str = "switches and their gateway", site: Baseline | None = None) -> None:
    """Report problems of fabrics[i].management; `taken` collects management prefixes."""
    m = f.management
    if m is None:
        return
    path = ("fabrics", i, "management")
    prefix_path = path if given_as_text else (*path, "prefix")
    # the gateway is never given to a switch, so the prefix holds one address more
    before = len(taken)
    check_prefix(prefix_path, m.prefix, switches + 1, what, report, taken)
    if len(taken) == before:
        return
    net = ipaddress.IPv4Network(m.prefix)
    if m.gateway is None:
        if f.kind != "infiniband":
            warn(prefix_path, "no gateway given: the management default route uses "
                 f"{ipaddress.IPv4Address(gateway_of(m))}, the prefix's last host address; set management.gateway "
                 "if the router is elsewhere")
    else:
        _check_gateway((*path, "gateway"), m.gateway, net, report)
    servers = services_of(m, site, f.baseline)
    _check_servers(path, m, report, servers["dns"])
    if not m.ntp and not servers["dns"]:  # a baseline's NTP names, resolved with no DNS server
        for name in (s for s in servers["ntp"] if is_name(s)):
            report(path, f"the baseline's NTP server {name!r} is a name: this fabric's switches resolve it with "
                   "DNS, which neither its management block nor a baseline gives; give dns or the server's address")
    fixed = FIXED_VRF.get(f.platform)
    if m.vrf is not None and fixed is not None and m.vrf != fixed:
        report((*path, "vrf"), f"{f.platform} has one management VRF, named '{fixed}': leave vrf out or write "
               f"'{fixed}'")
    elif m.vrf is not None and m.vrf.lower() == "default":
        report((*path, "vrf"), "the management VRF keeps the management port and its default route apart from the "
               "data plane; 'default' is the data plane's own VRF: leave vrf out (MGMT) or name another")
    if f.kind == "infiniband":
        _check_unrendered(path, m, report)
        return
    _check_users(path, f, m, report, warn, site)


SERVICES = ("ntp", "dns", "syslog")  # the management plane's servers a baseline may give


def services_of(m: Management, site: Baseline | None, fabric: Baseline | None) -> dict[str, list[str]]:
    """A fabric's NTP, DNS and syslog servers: its management block's where it gives them, else
    its baseline's, else the site baseline's (per fabric: every switch of a fabric reaches the
    same servers through one management network; per-role servers are refused in validation)."""
    out = {}
    for key in SERVICES:
        given = list(getattr(m, key))
        for block in (fabric, site):
            if not given and block is not None and getattr(block, key) is not None:
                given = list(getattr(block, key))
        out[key] = given
    return out


def is_name(server: str) -> bool:
    """An NTP server given by DNS name (N.cumulusnetworks.pool.ntp.org), not an address."""
    return bool(re.fullmatch(DOMAIN_PATTERN, server)) and not _looks_numeric(server)


def _check_servers(path: tuple, m: Management, report: Report, dns: list[str]) -> None:
    """NTP, DNS and syslog servers: addresses, or for NTP a DNS name the switch can resolve (with
    `dns`, the fabric's DNS servers: its management block's, else a baseline's)."""
    for key in ("ntp", "dns", "syslog"):
        for j, server in enumerate(getattr(m, key)):
            if key == "ntp" and is_name(server):
                if not dns:  # NTP by name, as NVIDIA's generator writes it (N.cumulusnetworks.pool.ntp.org)
                    report((*path, key, j), f"NTP server {server!r} is a name: the switch resolves it with "
                           "management.dns, which is empty; give a DNS server or the NTP server's address")
                continue
            why = server_problem(server)
            if why and key == "ntp":
                report((*path, key, j), f"{why} (an NTP server is an address or a DNS name)")
            elif why:
                report((*path, key, j), f"{why} ({key} servers are given by address, so the switch needs no name "
                       "resolution to reach them)")


# fabgen writes no switch configuration for an InfiniBand fabric (the subnet manager configures
# it): its management block gives the switches' addresses (Ansible, NetBox) and nothing else.
NOT_FOR_INFINIBAND = ("vrf", "ntp", "dns", "syslog", "domain", "users")  # the gateway: no switch takes its address


def _check_unrendered(path: tuple, m: Management, report: Report) -> None:
    for key in NOT_FOR_INFINIBAND:
        if key in m.model_fields_set:
            report((*path, key), f"management.{key} is not rendered for an InfiniBand fabric: fabgen writes no "
                   "switch configuration there (the subnet manager configures the fabric), only the switches' "
                   "management addresses from prefix; remove it")
            return


def _looks_numeric(text: str) -> bool:
    """A dotted name of digits only (10.0.0.300) is a mistyped address, not a host name."""
    return all(part.isdigit() for part in text.split("."))


def server_problem(text: str) -> str | None:
    """Why `text` is not a server address a switch config can hold, or None. Python's ipaddress
    takes any text after '%' as an IPv6 zone (`fe80::1%$(reboot)`); a zone names a link, which a
    server reached through the management VRF never needs, so none is accepted: what reaches a
    config is hex digits, '.' and ':' only."""
    if "%" in text:
        return f"{text!r} carries an IPv6 zone ('%...'): give the server's address without one"
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return f"{text!r} is not an IP address"
    if not re.fullmatch(r"[0-9A-Fa-f:.]+", text):
        return f"{text!r} is not an IP address"
    address = ipaddress.ip_address(text)
    for test, what in ((address.is_unspecified, "unspecified"), (address.is_loopback, "a loopback address"),
                       (address.is_multicast, "a multicast address"), (address.is_link_local, "link-local (it "
                        "needs a zone, an interface)"), (text == "255.255.255.255", "the broadcast address")):
        if test:
            return f"{text!r} is {what}: no server answers there"
    return None


def _check_gateway(where: tuple, text: str, net: ipaddress.IPv4Network, report: Report) -> None:
    try:
        gw = ipaddress.IPv4Address(text)
    except ValueError:
        report(where, f"{text!r} is not an IPv4 address")
        return
    if gw not in net:
        report(where, f"gateway {gw} is outside the management prefix {net}")
    elif gw in (net.network_address, net.broadcast_address):
        report(where, f"gateway {gw} is the {'network' if gw == net.network_address else 'broadcast'} address "
               f"of {net}")


def accounts(f: Fabric, site: Baseline | None) -> list:
    """The fabric's local accounts: its management block's, else its baseline's, else the site's
    (intent/baseline.py `users_of` renders the same choice)."""
    if f.management is not None and f.management.users:
        return list(f.management.users)
    for block in (f.baseline, site):
        if block is not None and block.users is not None:
            return list(block.users)
    return []


def _check_users(path: tuple, f: Fabric, m: Management, report: Report, warn: Report,
                 site: Baseline | None = None) -> None:
    if not m.users and f.baseline is not None and f.baseline.users is not None:
        _check_accounts(("fabrics", path[1], "baseline"), f, f.baseline.users, report, warn)
    elif not m.users and site is not None and site.users is not None:
        _check_accounts(("baseline",), f, site.users, report, warn)
    else:
        _check_accounts(path, f, m.users, report, warn)


def _check_accounts(path: tuple, f: Fabric, users: list, report: Report, warn: Report) -> None:
    names = [u.name for u in users]
    for j, name in enumerate(names):
        if names.index(name) != j:
            report((*path, "users", j, "name"), f"user '{name}' is declared twice")
    for j, u in enumerate(users):
        if u.ssh_key is not None and u.ssh_key.env == getattr(u.password_hash, "env", None):
            report((*path, "users", j, "ssh_key"), f"the password hash and the SSH key of '{u.name}' come from one "
                   f"variable ({u.ssh_key.env}): a variable holds one secret; give the key its own")
        elif u.ssh_key is not None and f.platform == "nvue":
            report((*path, "users", j, "ssh_key"), "NVUE takes an SSH key as its type and body apart, which fabgen "
                   "cannot split from one secret it never reads: ssh_key is rendered on EOS only; add the key on "
                   "the switch (nv set system aaa user ... ssh authorized-key) or leave it out")
    if f.platform in KEEPS_USERS and users:
        warn((*path, "users"), "SONiC keeps local accounts in the Linux user database, which config reload "
             "leaves alone: these users are not rendered")
    elif f.platform == "eos" and not users:
        warn(path, "EOS configure replace removes every account the file does not carry: declare "
             "management.users (the deploy playbook refuses a config without one)")
    elif f.platform == "nvue" and not users:
        warn(path, "NVUE nv config replace replaces the NVUE-managed accounts with the file's, and it carries "
             "none: declare management.users (with an admin account), or accounts set on the switch are gone "
             "after the deploy")
    elif f.platform in ("eos", "nvue") and users and not any(u.role == "admin" for u in users):
        report((*path, "users"), f"a full replace keeps only these accounts and none is admin: nobody could "
               f"configure the {'switch' if f.role != 'oob' else 'access switch'} after the deploy; make one "
               "role admin")
