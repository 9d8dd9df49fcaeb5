"""The switch baseline: what every switch of a fabric carries beyond the fabric itself (accounts,
remote AAA, the control-plane ACL, banners, timezone, SNMPv3, telemetry, API, auto-save, and the
management plane's NTP, DNS and syslog servers where a fabric's management block gives none).

One block of site defaults (the inventory's top-level `baseline`), replaced key by key by the
fabric's own `baseline`, then by the role's entry of either (`roles`): the most specific
block that gives a key wins, and a key is taken whole (a fabric's `aaa` replaces the site's
`aaa`, it is not merged with it). Decided here once; NVUE, EOS and SONiC only spell it.
"""

from __future__ import annotations

from typing import Any

from fabgen.intent import secret_ref
from fabgen.spec.schema import HOSTNAME_TOKEN, Baseline, BaselineSettings, EnvRef, VaultRef

KEYS = tuple(BaselineSettings.model_fields)

# What a baseline switches on where the inventory says nothing, per platform: NVIDIA's
# generator (NVIDIA/enterprise-ras, net-configurator, every switch of its 2-4-5-800 output)
# writes `system api state enabled`, `system config auto-save state enabled` and WJH with
# the forwarding triggers l2, l3 and tunnel on every Cumulus switch. fabgen's EOS configs
# have always carried eAPI in the management VRF (ANTA reads the switch through it), so a
# baseline keeps it; gNMI, sFlow and the rest are off on EOS and SONiC unless asked.
PLATFORM_DEFAULTS: dict[str, dict[str, bool]] = {
    "nvue": {"api": True, "auto_save": True, "wjh": True},
    "eos": {"api": True},
}


def secret_text(ref: EnvRef | VaultRef) -> str:
    """How a baseline secret appears in a rendered file: a reference the deploy playbooks
    resolve (an environment lookup, or the Ansible Vault variable), never its value."""
    if isinstance(ref, VaultRef):
        return "{{ " + ref.vault + " }}"
    return secret_ref(ref.env)


def secret_name(ref: EnvRef | VaultRef) -> dict[str, str]:
    """Where a secret comes from, for the playbooks' pre-flight checks: {"env": X} or {"vault": X}."""
    return {"vault": ref.vault} if isinstance(ref, VaultRef) else {"env": ref.env}


def settings(site: Baseline | None, fabric: Baseline | None, role: str) -> dict[str, Any] | None:
    """The baseline keys in force for a switch of `role` (leaf, spine, core, access), each
    from the most specific block that gives it; None where neither the site nor the fabric
    has a baseline."""
    if site is None and fabric is None:
        return None
    chosen: dict[str, Any] = {}
    blocks: list[BaselineSettings | None] = [site, _role(site, role), fabric, _role(fabric, role)]
    for block in blocks:
        if block is None:
            continue
        for key in KEYS:
            if key in block.model_fields_set and getattr(block, key) is not None:
                chosen[key] = getattr(block, key)
    return chosen


def _role(block: Baseline | None, role: str) -> BaselineSettings | None:
    if block is None:
        return None
    return next((v for k, v in block.roles.items() if k == role), None)


def users_of(site: Baseline | None, fabric: Baseline | None) -> list[Any]:
    """The local accounts of a fabric's switches when its management block names none: the
    fabric's baseline users, else the site's (per-role users are refused in validation: one
    fabric, one set of accounts)."""
    for block in (fabric, site):
        if block is not None and block.users is not None:
            return list(block.users)
    return []


def baseline(site: Baseline | None, fabric: Baseline | None, role: str, platform: str,
             management_prefix: str | None) -> dict[str, Any] | None:
    """One switch's baseline as plain data, every default filled; None without a baseline
    (the switch config is then what it was before baselines existed, byte for byte)."""
    chosen = settings(site, fabric, role)
    if chosen is None:
        return None
    d = PLATFORM_DEFAULTS.get(platform, {})
    banner = chosen.get("banner")
    aaa = chosen.get("aaa")
    acl = chosen.get("control_plane")
    snmp = chosen.get("snmp")
    tel = chosen.get("telemetry")
    return {
        "timezone": chosen.get("timezone"),
        "banner": {"login": banner.login, "motd": banner.motd} if banner else None,
        "aaa": {"protocol": aaa.protocol, "servers": list(aaa.servers), "secret": secret_text(aaa.secret),
                "secret_source": secret_name(aaa.secret), "base_dn": aaa.base_dn, "bind_dn": aaa.bind_dn,
                "fallback_local": aaa.fallback_local} if aaa else None,
        "control_plane": {"allow": list(acl.allow), "deploy_from": acl.deploy_from or management_prefix,
                          **({"builtin": True} if acl.builtin else {})} if acl else None,
        "snmp": {"users": [{"name": u.name, "auth": secret_text(u.auth), "priv": secret_text(u.priv),
                            "auth_source": secret_name(u.auth), "priv_source": secret_name(u.priv)}
                           for u in snmp.users],
                 "location": snmp.location, "contact": snmp.contact} if snmp else None,
        "telemetry": {
            "wjh": _flag(tel.wjh if tel else None, d.get("wjh", False)),
            "histograms": _flag(tel.histograms if tel else None, False),
            "sflow": {"collectors": list(tel.sflow.collectors), "sample_rate": tel.sflow.sample_rate}
            if tel and tel.sflow else None,
            "gnmi": _flag(tel.gnmi if tel else None, False),
            # telemetry.histogram_settings: NVIDIA's global histogram settings, only where set
            **({"histogram_settings": True} if tel and tel.histogram_settings else {}),
        },
        "api": _flag(chosen.get("api"), d.get("api", False)),
        "auto_save": _flag(chosen.get("auto_save"), d.get("auto_save", False)),
        **({"ssh_server": True} if chosen.get("ssh_server") else {}),
        **({"builtin_roles": True} if chosen.get("builtin_roles") else {}),
    }


def named(b: dict[str, Any] | None, hostname: str) -> dict[str, Any] | None:
    """A switch's baseline with `{hostname}` in its banners replaced by the switch's name (NVIDIA's
    post-login banner names the switch: `You are successfully logged in to: core-01`); the same
    dict where no banner holds the token (a role's switches then share it)."""
    banner = b["banner"] if b else None
    if not b or not banner or not any(HOSTNAME_TOKEN in (banner[k] or "") for k in ("login", "motd")):
        return b
    return {**b, "banner": {k: v.replace(HOSTNAME_TOKEN, hostname) if v else v for k, v in banner.items()}}


def _flag(given: bool | None, default: bool) -> bool:
    return default if given is None else given
