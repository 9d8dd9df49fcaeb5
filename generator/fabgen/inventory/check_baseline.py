"""Checks of the switch baseline (`baseline` at the top and in `fabrics[]`, with their `roles`).

The baseline is applied by the same full replace as the fabric, so a wrong one locks the
operator out as surely as a wrong management address: the control-plane ACL must admit the
prefix the deploy runs from, AAA falls back to local accounts unless told otherwise, and a
key that a platform cannot carry is refused where it is written, naming the fabric.
"""

from __future__ import annotations

import difflib
import ipaddress
from collections.abc import Callable, Iterator

from fabgen.inventory.management import is_name, server_problem
from fabgen.inventory.platform import version_of
from fabgen.spec.schema import Baseline, BaselineSettings, Fabric
from fabgen.spec.timezones import TIMEZONES

Report = Callable[[tuple, str], None]
Reach = Callable[[str], list[Fabric]]  # a block's key -> the fabrics where that key is in force

# What each platform's target renders (spec/schema.py names them; docs/baseline.md).
AAA_PROTOCOLS = {"nvue": {"tacacs+", "radius", "ldap"}, "eos": {"tacacs+", "radius"}, "sonic": {"tacacs+", "radius"}}
# NVUE on Spectrum; EOS and SONiC have sFlow and gNMI instead
SPECTRUM_ONLY = ("wjh", "histograms", "histogram_settings")
# EOS saves by the playbook's copy, SONiC by config save; their SSH servers are on by default and fabgen
# writes no line for them; their roles are their own
NVUE_ONLY = ("auto_save", "ssh_server", "builtin_roles")
NO_API = {"sonic"}  # SONiC's REST server is not part of config_db.json
SONIC_FIRST_BANNER = "202405"  # sonic-banner.yang (BANNER_MESSAGE) exists from 202405 on
SONIC_SNMP_USER_MIN = 4  # sonic-snmp.yang SNMP_USER name: length 4..32


def _blocks(path: tuple, b: Baseline) -> Iterator[tuple[tuple, BaselineSettings, str | None]]:
    yield path, b, None
    for role, r in b.roles.items():
        yield (*path, "roles", role), r, role


def _gives(block: BaselineSettings | None, key: str) -> bool:
    """Whether `block` gives `key` (intent/baseline.py's `settings` takes it from there)."""
    return block is not None and key in block.model_fields_set and getattr(block, key) is not None


def _role_block(block: Baseline | None, role: str) -> BaselineSettings | None:
    return None if block is None else next((r for name, r in block.roles.items() if name == role), None)


def _reached(fabrics: list[Fabric], role: str | None) -> Reach:
    """For each key of a site block (`role`: its roles entry, or None), the fabrics on some switch
    of which it is in force: those whose own block, and own entry for that role, do not replace it
    (intent/baseline.py's rule, the most specific block wins). A fabric that replaces it only for
    some of its roles is still reached (its other roles keep the site's key)."""
    def reach(key: str) -> list[Fabric]:
        return [f for f in fabrics if not _gives(f.baseline, key)
                and not (role is not None and _gives(_role_block(f.baseline, role), key))]
    return reach


def _only(fabric: Fabric) -> Reach:
    """A fabric's own block: its keys are in force on that fabric alone."""
    def reach(key: str) -> list[Fabric]:
        return [fabric]
    return reach


def check_baseline(inv_baseline: Baseline | None, fabrics: list[Fabric], report: Report, warn: Report) -> None:
    """Every baseline block against the platforms of the fabrics where its keys are in force: a
    site key that a fabric replaces with its own is not held to that fabric's platform or
    management prefix."""
    ethernet = [(i, f) for i, f in enumerate(fabrics) if f.kind != "infiniband"]
    if inv_baseline is not None:
        managed = [f for _, f in ethernet if f.management is not None]
        for path, block, role in _blocks(("baseline",), inv_baseline):
            _check_block(path, block, role, _reached(managed, role), report)
        if not any(f.management is not None for _, f in ethernet):
            warn(("baseline",), "no Ethernet fabric has a management block: the baseline is rendered nowhere")
    for i, f in enumerate(fabrics):
        if f.baseline is None:
            continue
        path = ("fabrics", i, "baseline")
        if f.kind == "infiniband":
            report(path, "fabgen writes no switch configuration for an InfiniBand fabric (the subnet manager "
                   "configures it): remove baseline")
            continue
        if f.management is None:
            report(path, "the baseline is rendered with the management plane: give the fabric a management block")
            continue
        for bpath, block, role in _blocks(path, f.baseline):
            _check_block(bpath, block, role, _only(f), report)


def _check_services(path: tuple, b: BaselineSettings, role: str | None, report: Report) -> None:
    """A baseline's NTP, DNS and syslog servers: per fabric, not per role; addresses (NTP also a
    name, resolved with the fabric's DNS servers: checked per fabric, inventory/management.py)."""
    for key in ("ntp", "dns", "syslog"):
        if getattr(b, key) is None:
            continue
        if role is not None:
            report((*path, key), f"{key} servers are the same on every switch of a fabric (one management network): "
                   "give them in the baseline itself, not per role")
        for j, server in enumerate(getattr(b, key)):
            why = None if key == "ntp" and is_name(server) else server_problem(server)
            if why:
                what = "addresses, or names with dns" if key == "ntp" else "addresses"
                report((*path, key, j), f"{why} ({key} servers are {what})")


def _check_block(path: tuple, b: BaselineSettings, role: str | None, reach: Reach, report: Report) -> None:
    if role is not None and b.users is not None:
        report((*path, "users"), "accounts are the same on every switch of a fabric: give users in the baseline "
               "itself, not per role")
    _check_services(path, b, role, report)
    if b.timezone is not None:
        _check_timezone((*path, "timezone"), b.timezone, report)
    if b.banner is not None:
        _check_banner((*path, "banner"), b, report)
    if b.aaa is not None:
        _check_aaa((*path, "aaa"), b, reach("aaa"), report)
    if b.control_plane is not None:
        _check_acl((*path, "control_plane"), b, reach("control_plane"), report)
    if b.snmp is not None:
        _check_snmp((*path, "snmp"), b, report)
    if b.telemetry is not None:
        _check_telemetry((*path, "telemetry"), b, reach("telemetry"), report)
    _check_platform_keys(path, b, reach, report)
    _check_sonic(path, b, reach, report)


def _check_banner(where: tuple, b: BaselineSettings, report: Report) -> None:
    assert b.banner is not None
    for key in ("login", "motd"):
        text = getattr(b.banner, key)
        if text is not None and any(line.strip() == "EOF" for line in text.split("\n")):
            report((*where, key), "a line reading EOF ends an EOS banner early: reword it")


def _check_snmp(where: tuple, b: BaselineSettings, report: Report) -> None:
    assert b.snmp is not None
    names = [u.name for u in b.snmp.users]
    for j, name in enumerate(names):
        if names.index(name) != j:
            report((*where, "users", j, "name"), f"SNMPv3 user '{name}' is declared twice")
    for j, u in enumerate(b.snmp.users):
        if u.auth == u.priv:
            report((*where, "users", j, "priv"), f"the authentication and privacy passphrases of '{u.name}' come "
                   "from one variable: give each its own")


def _check_platform_keys(path: tuple, b: BaselineSettings, reach: Reach, report: Report) -> None:
    """Keys a platform of the fabrics it applies to has no counterpart for."""
    if b.ssh_server is False:
        report((*path, "ssh_server"), "the deploy and every operator reach the switch by SSH: ssh_server: false "
               "would lock them out after the replace; write true (NVIDIA's line) or leave it out")
    for key in NVUE_ONLY:
        other = next((f for f in reach(key) if f.platform != "nvue"), None)
        if getattr(b, key) and other is not None:
            report((*path, key), f"{key} is an NVUE setting; fabric '{other.name}' runs {other.platform}: leave it "
                   "out there (set it in the fabric's own baseline)")
    bare = next((f for f in reach("api") if f.platform in NO_API), None)
    if b.api and bare is not None:
        report((*path, "api"), f"fabgen renders no API server for {bare.platform} (fabric '{bare.name}'): SONiC's "
               "REST and gNMI servers are set apart; use telemetry.gnmi")


def _check_sonic(path: tuple, b: BaselineSettings, reach: Reach, report: Report) -> None:
    """What SONiC's YANG models refuse or its release lacks (targets/sonic.py baseline_tables)."""
    def sonic(key: str) -> list[Fabric]:
        return [f for f in reach(key) if f.platform == "sonic"]

    old = next((f for f in sonic("banner") if (version_of(f) or "") < SONIC_FIRST_BANNER), None)
    if b.banner is not None and old is not None:
        report((*path, "banner"), f"fabric '{old.name}' runs SONiC {version_of(old)}, which has no login banner "
               f"in config_db (BANNER_MESSAGE comes with {SONIC_FIRST_BANNER}): leave the banner out there (set "
               "it in the other fabrics' own baseline) or raise platform_version")
    if b.aaa is not None and b.aaa.protocol == "tacacs+" and not b.aaa.fallback_local and sonic("aaa"):
        report((*path, "aaa", "fallback_local"), f"SONiC (fabric '{sonic('aaa')[0].name}') falls back to the local "
               "accounts whenever no TACACS+ server answers (hostcfgd's PAM template writes login tacacs+ as "
               "tacacs+,local): fallback_local: false cannot be rendered there; use radius, or leave it true")
    if b.snmp is not None and sonic("snmp"):
        for j, u in enumerate(b.snmp.users):
            if len(u.name) < SONIC_SNMP_USER_MIN:
                report((*path, "snmp", "users", j, "name"), f"SONiC takes SNMPv3 user names of "
                       f"{SONIC_SNMP_USER_MIN} to 32 characters (fabric '{sonic('snmp')[0].name}'): '{u.name}' is "
                       "refused")


def _check_timezone(where: tuple, name: str, report: Report) -> None:
    if name not in TIMEZONES:
        near = difflib.get_close_matches(name, sorted(TIMEZONES), n=1)
        hint = f": did you mean {near[0]}?" if near else " (Etc/UTC, Europe/Berlin, America/New_York, ...)"
        report(where, f"{name!r} is not a time zone the switches take (the IANA names of NVIDIA's NVUE "
               f"list){hint}")


def _check_aaa(where: tuple, b: BaselineSettings, fabrics: list[Fabric], report: Report) -> None:
    aaa = b.aaa
    assert aaa is not None
    for j, server in enumerate(aaa.servers):
        why = server_problem(server)
        if why:
            report((*where, "servers", j), why)
    _check_once((*where, "servers"), aaa.servers, report)
    if aaa.protocol == "ldap" and (aaa.base_dn is None or aaa.bind_dn is None):
        report(where, "ldap needs base_dn (where accounts are searched) and bind_dn (who the switch binds as)")
    elif aaa.protocol != "ldap" and (aaa.base_dn is not None or aaa.bind_dn is not None):
        report((*where, "base_dn" if aaa.base_dn is not None else "bind_dn"), f"base_dn and bind_dn are LDAP's; "
               f"{aaa.protocol} takes servers and a shared key (secret)")
    for f in fabrics:
        if aaa.protocol not in AAA_PROTOCOLS.get(f.platform, set()):
            report((*where, "protocol"), f"fabric '{f.name}' runs {f.platform}, which fabgen configures for "
                   f"{' and '.join(sorted(AAA_PROTOCOLS.get(f.platform, set())))} only")
            return


def _check_acl(where: tuple, b: BaselineSettings, fabrics: list[Fabric], report: Report) -> None:
    acl = b.control_plane
    assert acl is not None
    if acl.builtin or not acl.allow:
        _check_builtin(where, b, fabrics, report)
        return
    allowed: list[ipaddress.IPv4Network] = []
    for j, text in enumerate(acl.allow):
        net = _prefix(text)
        if net is None:
            report((*where, "allow", j), f"{text!r} is not an IPv4 prefix (10.0.0.0/24)")
        elif net.prefixlen == 0:
            report((*where, "allow", j), f"{net} admits every address: the ACL would limit nothing while it seems "
                   "to; list the prefixes the switches are managed from (or leave control_plane out)")
        else:
            allowed.append(net)
    deploy = _prefix(acl.deploy_from) if acl.deploy_from is not None else None
    if acl.deploy_from is not None and deploy is None:
        report((*where, "deploy_from"), f"{acl.deploy_from!r} is not an IPv4 prefix (10.0.0.0/24)")
        return
    if len(allowed) != len(acl.allow):
        return
    for f in fabrics:
        source = deploy
        if source is None and f.management is not None:
            source = _prefix(f.management.prefix)
        if source is not None and not any(source.subnet_of(a) for a in allowed):
            said = "deploy_from" if deploy is not None else f"the management prefix of fabric '{f.name}'"
            report((*where, "allow"), f"the control-plane ACL admits {', '.join(map(str, allowed))} but not {source} "
                   f"({said}), where the deploy runs from: the switch would refuse the deploy's own SSH after the "
                   "replace; admit it, or set deploy_from to the prefix the deploy really uses")
            return


def _check_builtin(where: tuple, b: BaselineSettings, fabrics: list[Fabric], report: Report) -> None:
    """control_plane.builtin: Cumulus Linux's own ACLs (NVIDIA's), NVUE only, with no prefixes of fabgen's
    ACL beside them; without it, allow is needed."""
    acl = b.control_plane
    assert acl is not None
    if not acl.builtin:
        report(where, "control_plane needs allow, the prefixes admitted to the management services (at least one), "
               "or builtin: true (Cumulus Linux's own ACLs, NVUE)")
        return
    other = next((f for f in fabrics if f.platform != "nvue"), None)
    if other is not None:
        report((*where, "builtin"), f"builtin binds Cumulus Linux's own acl-default-dos and acl-default-whitelist; "
               f"fabric '{other.name}' runs {other.platform}, which has no such ACLs: give allow there instead "
               "(in that fabric's own baseline)")
    elif acl.allow or acl.deploy_from is not None:
        report((*where, "allow" if acl.allow else "deploy_from"), "builtin binds Cumulus Linux's own ACLs, which "
               "admit the management services from anywhere: leave allow and deploy_from out, or builtin")


def _check_telemetry(where: tuple, b: BaselineSettings, fabrics: list[Fabric], report: Report) -> None:
    t = b.telemetry
    assert t is not None
    if t.sflow is not None:
        for j, server in enumerate(t.sflow.collectors):
            why = server_problem(server)
            if why:
                report((*where, "sflow", "collectors", j), why)
        _check_once((*where, "sflow", "collectors"), t.sflow.collectors, report)
    for key in SPECTRUM_ONLY:
        if getattr(t, key):
            for f in fabrics:
                if f.platform != "nvue":
                    report((*where, key), f"{key} is a Spectrum feature fabgen renders on NVUE; fabric '{f.name}' "
                           f"runs {f.platform} (use sflow or gnmi there)")
                    break


def _check_once(where: tuple, servers: list[str], report: Report) -> None:
    """Each server once: SONiC and NVUE key a server by its address (a second entry would be lost,
    with its place in the order), EOS would write its line twice."""
    for j, server in enumerate(servers):
        if servers.index(server) != j:
            report((*where, j), f"{server} is listed twice (first as item {servers.index(server)})")


def _prefix(text: str) -> ipaddress.IPv4Network | None:
    try:
        net = ipaddress.IPv4Network(text, strict=True)
    except ValueError:
        return None
    return net if "/" in text else None
