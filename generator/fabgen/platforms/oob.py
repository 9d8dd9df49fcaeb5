"""Out-of-band access switches (role oob, kind ethernet): Cumulus Linux NVUE on SN2201,
OUT/<fabric>/switches/<device>.nvue.yaml and .nvue.sh, as the Spectrum-X target writes them
(the same header, dialects, YAML and `nv set` script; platforms/nvue.py).

Decisions (docs/cluster.md):
* one management VLAN (`oob_vlan`, default 10): every used access port is an untagged member of
  it in br_default, unused ports are down; the switch's own address is on that VLAN's SVI
  (the top of the management prefix, addressing.allocate_oob), with a static default route to
  the management gateway: its management is in-band on the network it serves;
* the first two uplinks (swp49, swp50 on SN2201) form the LACP bond `uplink`, an untagged
  member of the VLAN, towards the site's management network that routes the subnet;
* no RoCE, no BGP, no adaptive routing: an access layer carries BMC and switch-management
  traffic only; NTP, DNS, syslog and accounts from the fabric's management block.
"""

from __future__ import annotations

from typing import Any

from fabgen.inventory.platform import version_of
from fabgen.platforms import Context, Target, every_other
from fabgen.platforms.nvue import Dialect, _management, render

UPLINK = "uplink"


def _tree(ctx: Context, s, d: Dialect, vlan: int) -> tuple[dict[str, Any], list[str]]:
    f = ctx.fabric
    m = f.spec.management
    assert m is not None
    address = ctx.allocation.management[s.name]
    plen = int(m.prefix.split("/")[1])
    from fabgen.inventory.management import gateway_of
    from fabgen.addressing import _ip

    gateway = _ip(gateway_of(m))
    tree: dict[str, Any] = {"system": {"hostname": s.name}}
    iface: dict[str, Any] = {}
    services = {"address": address, "prefix_len": plen, "gateway": gateway, "vrf": "default", "ntp": m.ntp,
                "dns": m.dns, "syslog": m.syslog, "domain": m.domain,
                "users": [{"name": u.name, "role": u.role, "password": _secret(u.password_hash.env)}
                          for u in m.users]}
    _management(tree, iface, services, d)
    iface.clear()  # eth0 stays unused: the switch is managed on its SVI
    used = f.ports.get(s.name, {})
    for name in f.switch_model.port_names(f.plan.speed):
        idx = used.get(name)
        if idx is None:
            iface[name] = {"link": {"state": {"down": {}}}, "type": "swp"}
            continue
        lk = f.links[idx]
        iface[name] = {"bridge": {"domain": {"br_default": {"access": vlan}}},
                       "description": f"OOB_{lk.a}_{lk.a_port}", "type": "swp"}
    members = f.switch_model.uplinks[:2]
    iface[UPLINK] = {"bond": {"member": {p: {} for p in members}, "mode": "lacp"},
                     "bridge": {"domain": {"br_default": {"access": vlan}}},
                     "description": "UPLINK_site_management", "type": "bond"}
    iface[f"vlan{vlan}"] = {d.ip: {"address": {f"{address}/{plen}": {}}}, "type": "svi", "vlan": vlan}
    tree["interface"] = iface
    tree["bridge"] = {"domain": {"br_default": {"vlan": {str(vlan): {}}}}}
    tree["vrf"] = {"default": {"router": {"static": {"0.0.0.0/0": {"via": {gateway: {}}}}}}}
    envs = [u.password_hash.env for u in m.users]
    return tree, envs


def _secret(env: str) -> str:
    from fabgen.intent import secret_ref

    return secret_ref(env)


def structure(ctx: Context) -> dict[str, Any]:
    f = ctx.fabric
    version = version_of(f.spec) or ""
    d = Dialect(version)
    switches = [(s.name, *_tree(ctx, s, d, f.spec.oob_vlan)) for s in f.switches]
    header = {"model": f.switch_model.part.removeprefix("M").split("-")[0], "nvue-api-version": "nvue_v1",
              "rev-id": 1.0, "version": f"Cumulus Linux {version}.0"}
    return {"fabric": f.name, "cluster": ctx.cluster, "switches": switches, "header": header}


TARGET = Target("oob", lambda ctx: ctx.fabric.spec.role == "oob", structure, render, every_other("switches"))
