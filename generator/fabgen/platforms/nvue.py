"""Spectrum-X target: Cumulus Linux NVUE on SN5600, OUT/<fabric>/switches/<device>.nvue.yaml
(a startup.yaml) and <device>.nvue.sh (the same configuration as `nv set` commands).

One structured config per switch, the NVUE object tree as nested dicts, is the single
source: the YAML is that tree under `- set:`, and the script is the same tree flattened
to `nv set <path> <value>` lines (a leaf `{}` is a word of the path, as in
`ip address 10.0.0.1/32`). They cannot say different things. Syntax: vendor-facts
section 4 (Cumulus Linux 5.14 RoCE, Adaptive Routing, BGP pages; NVUE command reference).

Decisions:
* `qos roce mode` from the fabric's QoS intent (lossless by default); the RoCE profile
  brings trust, the DSCP map, PFC and ECN; fabgen sets the congestion-control thresholds
  of the RoCE traffic class from the same intent as EOS and SONiC, and the PFC watchdog on
  host-facing ports.
* adaptive routing on globally and on every switch-to-switch port; not on 800G links
  (Spectrum-4 cannot), where validation has warned.
* the SN5600's 800G cages are broken out 2x when the fabric runs 400G ports (swpNs0,
  swpNs1), every cage alike so port names follow one plan.
* BGP unnumbered on switch-to-switch ports (no /31s to allocate or mismatch), the same
  ASN plan as the RoCE targets, loopback and host subnets announced as networks.
"""

from __future__ import annotations

from typing import Any, Iterable

from fabgen import yamlout

from fabgen.platforms import Context, Target, every_other
from fabgen.platforms.ethernet import adaptive_routing, qos_intent, secret_ref, switch_configs

BREAKOUT = {400: "2x", 200: "4x"}  # SN5600 cage split per port speed


def _tree(sw: dict[str, Any], qos: dict[str, Any], ar: bool, ar_ports: bool, breakout: str | None,
          cages: int) -> dict[str, Any]:
    """ar: adaptive routing on globally; ar_ports: also on every switch-to-switch port."""
    iface: dict[str, Any] = {"lo": {"ip": {"address": {f"{sw['loopback']}/32": {}}}, "type": "loopback"}}
    if breakout:
        for c in range(1, cages + 1):
            iface[f"swp{c}"] = {"link": {"breakout": {breakout: {}}}, "type": "swp"}
    neighbors: dict[str, Any] = {}
    host_ports = []
    for i in sw["interfaces"]:
        if i["kind"] == "unused":
            iface[i["name"]] = {"link": {"state": {"down": {}}}, "type": "swp"}
            continue
        node: dict[str, Any] = {"description": i["description"], "link": {"mtu": sw["mtu"]}, "type": "swp"}
        if i["kind"] == "fabric":
            neighbors[i["name"]] = {"peer-group": _group(i["peer_role"]), "type": "unnumbered"}
            if ar_ports:
                node["router"] = {"adaptive-routing": {"enable": "on"}}
        else:
            host_ports.append(i["name"])
            node["qos"] = {"pfc-watchdog": {}}
            if "ip" in i:
                node["ip"] = {"address": {f"{i['ip']}/{i['prefix']}": {}}}
            else:
                node["bridge"] = {"domain": {"br_default": {"access": i["vlan"]}}}
        iface[i["name"]] = node
    tree: dict[str, Any] = {"system": {"hostname": sw["name"]}}
    svi = sw["svi"]
    bridge = None
    if svi:
        iface[f"vlan{svi['vlan']}"] = {"ip": {"address": {f"{svi['ip']}/{svi['prefix']}": {}}}, "type": "svi",
                                       "vlan": svi["vlan"]}
        bridge = {"domain": {"br_default": {"vlan": {str(svi["vlan"]): {}}}}}
    tree["interface"] = iface
    if bridge:
        tree["bridge"] = bridge
    roce = qos["roce_priority"]
    tree["qos"] = {"roce": {"mode": qos["mode"]},
                   "congestion-control": {"default-global": {"traffic-class": {str(roce): {
                       "min-threshold": qos["ecn"]["min_bytes"], "max-threshold": qos["ecn"]["max_bytes"],
                       "probability": qos["ecn"]["probability"]}}}}}
    bgp = sw["bgp"]
    tree["router"] = {"adaptive-routing": {"enable": "on" if ar else "off"},
                      "bgp": {"autonomous-system": bgp["asn"], "router-id": bgp["router_id"]}}
    groups = {g: {"remote-as": "external", **({"bfd": {"enable": "on"}} if bgp["bfd"] else {}),
                  **({"password": bgp["password"]} if bgp["password"] else {})}
              for g in sorted({n["peer-group"] for n in neighbors.values()})}
    vrf_bgp: dict[str, Any] = {"address-family": {"ipv4-unicast": {
        "multipaths": {"ebgp": bgp["ecmp"]},
        "network": {net: {} for net in bgp["networks"]}}}}
    if groups:
        vrf_bgp["peer-group"] = groups
        vrf_bgp["neighbor"] = neighbors
    tree["vrf"] = {"default": {"router": {"bgp": vrf_bgp}}}
    return tree


def _group(role: str) -> str:
    return {"leaf": "LEAVES", "spine": "SPINES", "core": "CORES"}[role]


def flatten(tree: dict[str, Any], path: tuple[str, ...] = ()) -> list[str]:
    """NVUE tree -> `nv set` argument strings, depth first in the tree's order."""
    out: list[str] = []
    for key, value in tree.items():
        here = (*path, str(key))
        if isinstance(value, dict):
            if value:
                out += flatten(value, here)
            else:
                out.append(" ".join(here))
        else:
            out.append(" ".join((*here, str(value))))
    return out


def structure(ctx: Context) -> dict[str, Any]:
    f = ctx.fabric
    qos = qos_intent(ctx)
    ar, ar_ports = adaptive_routing(ctx)
    mode = f.switch_model.mode_for(f.plan.speed)
    breakout = BREAKOUT.get(f.plan.speed) if mode is not None and mode.per_cage > 1 else None
    switches = []
    for sw in switch_configs(ctx):
        tree = _tree(sw, qos, ar, ar_ports, breakout, f.switch_model.cages)
        switches.append((sw["name"], tree, sw["bgp"]["password_env"]))
    return {"fabric": f.name, "cluster": ctx.cluster, "switches": switches}


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    for name, tree, env in data["switches"]:
        head = f"# {name}: NVUE startup.yaml, fabric {data['fabric']} ({data['cluster']}); generated by fabgen\n"
        body = yamlout.dump([{"set": tree}])
        yield f"{data['fabric']}/switches/{name}.nvue.yaml", (head + body).encode()
        lines = ["#!/usr/bin/env bash",
                 f"# {name}: the configuration of {name}.nvue.yaml as NVUE commands; generated by fabgen",
                 "set -euo pipefail", ""]
        cmds = flatten(tree)
        if env:
            # the script reads the secret from its own environment, as the YAML's reference does
            ref = secret_ref(env)
            lines += [f': "${{{env}:?set {env} to the BGP password}}"', ""]
            cmds = [c.replace(ref, f'"${{{env}}}"') for c in cmds]
        lines += [f"nv set {cmd}" for cmd in cmds]
        lines += ["", "nv config apply --assume-yes", ""]
        yield f"{data['fabric']}/switches/{name}.nvue.sh", "\n".join(lines).encode()


TARGET = Target("nvue", lambda ctx: ctx.fabric.spec.kind == "spectrum-x", structure, render, every_other("switches"))
