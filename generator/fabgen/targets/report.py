"""report.json (for machines) and report.md (for people), read from the built topology."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from fabgen.errors import keyed
from fabgen.formats.templating import render
from fabgen.intent.northsouth import with_border
from fabgen.topology.analysis import Summary


def intent(ctx: Any) -> dict[str, Any]:
    """The fabric-wide intent a reviewer checks: QoS for Ethernet, subnet-manager choices for InfiniBand."""
    f = ctx.fabric
    if f.spec.role == "oob":
        return {"oob": _oob(ctx)}
    if f.spec.kind == "infiniband":
        from fabgen.intent.infiniband import options, resolved

        r = resolved(ctx)
        parts = [{"name": p.name, "pkey": f"0x{p.pkey:04x}", "node_groups": p.node_groups, "membership": p.membership}
                 for p in options(ctx).partitions]
        return {"subnet_manager": {**r, "partitions": parts}, "platform_version": f.spec.platform_version}
    from fabgen.intent.qos import options as eth_options
    from fabgen.intent.qos import qos_intent

    q = qos_intent(ctx)
    eth = eth_options(ctx)
    qos = {k: v for k, v in q.items() if k not in ("dscp_to_tc", "tc_to_queue", "tc_to_pg")}
    qos["dscp_to_tc"] = {str(d): tc for d, tc in enumerate(q["dscp_to_tc"]) if tc}
    bgp = eth.host_routing == "bgp"  # BGP to the host: its ASN block and the mode (else left out)
    asn = {k: v for k, v in eth.asn.model_dump().items() if bgp or k != "host"}
    overlay = None
    if ctx.allocation.tenants is not None:  # northsouth: the tenants and the segments a reviewer checks
        from fabgen.intent.northsouth import ES_SYS_MAC, tenants

        overlay = {"tenants": [{k: t[k] for k in ("role", "vlan", "vni", "vrf", "l3vni", "subnet", "gateway")}
                               for t in tenants(ctx)],
                   # one a bond: a two-bond server (bonds: 2) has two
                   "segments": sum(len(h.model.nics) // 2 for h in ctx.fabric.hosts),
                   "es_sys_mac": (eth.northsouth.segment_mac or "").upper() or ES_SYS_MAC}
        if f.plan.striped:  # sized by racks (spec/sizing.py `stripe`): every node's legs on two of all the leaves
            overlay["striped_leaves"] = f.plan.leaves_per_unit
        if f.plan.peer_links:  # NVIDIA's collapsed pair (1-2 racks, spec/sizing.py NS_PEER_LINKS): no spines
            overlay["peer_links"] = f.plan.peer_links // f.plan.factor("leaf-leaf")  # links, at their speed
            if not f.plan.striped:  # tiers: 1 on nodes not sized by racks (`_northsouth_pair`): the nodes it holds
                overlay["pair_nodes"] = f.plan.unit_nodes
    return {"platform_version": f.spec.platform_version, "qos": qos,
            "addressing": {"pools": eth.pools.model_dump(), **_plane_parts(f, eth.pools.model_dump()),
                           "host_addressing": eth.host_addressing, **({"host_routing": "bgp"} if bgp else {})},
            **({"northsouth": overlay} if overlay else {}),
            "asn": asn,
            # the variable's name, never its value (fabgen does not read it)
            "bgp_password_env": eth.bgp_password.env if eth.bgp_password else None}


def _oob(ctx: Any) -> dict[str, Any]:
    """What an out-of-band network builds, by its design (oob_design): layer2, each access switch's
    first two uplinks bonded to the site's management network; routed, each access switch an EVPN
    VTEP with an unnumbered eBGP uplink to each leaf of a north-south pair, the management VLAN's
    gateway an anycast address in a VRF on both ends, no bond to a site network (schema.py
    `oob_design`, addressing.py `RoutedOob`). `node_ports`: each node model's out-of-band ports by
    their labels (a DGX its BMC; a GB300 tray its BMC, Host 1GbE and BF3 OOB, catalog.py), with how
    many nodes of it the network takes."""
    from fabgen.addressing import dotted_quad
    from fabgen.inventory.management import gateway_of

    f = ctx.fabric
    m = f.spec.management
    ports: dict[str, dict[str, Any]] = {}
    for h in f.hosts:
        if h.role != "switch":
            row = ports.setdefault(h.model.key, {"model": h.model.key, "ports": [n.label for n in h.model.nics],
                                                 "nodes": 0})
            row["nodes"] += 1
    out: dict[str, Any] = {"vlan": f.spec.oob_vlan, "prefix": m.prefix if m else None,
                           "gateway": dotted_quad(gateway_of(m)) if m else None, "design": f.spec.oob_design,
                           "managed_switches": sum(1 for h in f.hosts if h.role == "switch"),
                           "node_ports": list(ports.values())}
    r = ctx.oob_routed
    if r is not None:
        out["routed"] = {"northsouth": r.northsouth, "pair": [p["name"] for p in r.pair], "vni": r.vni,
                         "vrf": r.vrf, "l3vni": r.l3vni, "dhcp_server": r.dhcp_server}
    return out


def _plane_parts(fabric: Any, pools: dict[str, str]) -> dict[str, Any]:
    """A plane's own part of each pool (addressing.plane_part), which its addresses come from; a
    one-plane fabric's part is the whole pool, so nothing is added."""
    if fabric.planes == 1:
        return {}
    from fabgen.addressing import plane_cidr

    return {"plane_pools": {key: plane_cidr(pool, fabric) for key, pool in pools.items()}}


def structure(contexts: list[Any], structured: list[tuple[str, Any]]) -> dict[str, Any]:
    """report.json's data: every fabric's summary, intent and bill of materials."""
    bom = {data["name"]: data["bom"] for tname, data in structured if tname == "fabric"}
    later = {data["name"]: data["bom_later"] for tname, data in structured if tname == "fabric" and data["bom_later"]}
    return collect(contexts[0].cluster if contexts else "", {c.fabric.name: _with_border(c) for c in contexts}, bom,
                   {c.fabric.name: intent(c) for c in contexts}, later, _growing(contexts))


def _growing(contexts: list[Any]) -> list[str]:
    """The fabrics whose plan holds more nodes than are attached (spec/sizing.py `Plan.planned`), which
    report.md says it is planned for. The plan counts the nodes it is sized by, not the support and
    storage servers beside them, so a fabric's node count (servers included) is not the measure."""
    return [c.fabric.name for c in contexts if c.fabric.plan.planned]


def _with_border(ctx: Any) -> Summary:
    """The fabric's summary with its border uplinks (intent/northsouth.py `with_border`)."""
    out: Summary = with_border(ctx.summary, ctx.fabric)
    return out


def collect(cluster: str, summaries: dict[str, Summary], bom: dict[str, list[dict[str, Any]]],
            intents: dict[str, dict[str, Any]] | None = None,
            later: dict[str, list[dict[str, Any]]] | None = None, growing: list[str] | None = None) -> dict[str, Any]:
    """report.json's data; `later`: what each planned fabric buys as its plan fills (bom-later.csv),
    apart from `bom`, what is bought now; `growing`: the fabrics planned for more nodes than attached
    (report.md's 'Planned for' line; not in report.json, whose `planned` holds the plan)."""
    later = later or {}
    fabrics = {}
    for name, s in summaries.items():
        d = asdict(s)
        fabrics[name] = {
            "role": d["role"], "kind": d["kind"], "platform": d["platform"], "topology": d["topology"],
            "tiers": d["tiers"],
            "nodes": d["nodes"], "gpus": d["gpus"], "endpoints": d["endpoints"], "link_speed_gbps": d["speed"],
            # the tiers at their own speeds (cabling.<tier>.speed): each tier's; link_speed_gbps is the hosts'
            **({"tier_speeds_gbps": d["tier_speeds"]} if d["tier_speeds"] else {}),
            "switch_model": d["switch_model"], "switch_radix": d["radix"],
            "scalable_units": d["units"] if d["topology"] == "rail-optimized" else 0,
            "nodes_per_unit": d["unit_nodes"] if d["topology"] == "rail-optimized" else 0,
            "pods": d["pods"], "nvlink_racks": d["racks"], "planned": d["planned"],
            **({"nvlink_racks_split": d["racks_split"]} if d["racks_split"] else {}),
            # a plane's switch pair (spec/sizing.py `_plane_pair`): its peer links, at their speed
            **({"pair": {"peer_links": d["links"]["leaf-leaf"]}} if d["pair"] else {}),
            "switches": d["switches"], "links": d["links"], "oversubscription": d["oversubscription"],
            "bisection_bandwidth_gbps": d["bisection_gbps"],
            "switch_ports": {"used": d["ports_used"], "total": d["ports_total"]},
            "warnings": [keyed(w) for w in d["warnings"]],
            **({"network_plane": d["network_plane"]} if d["network_plane"] else {}),
            **({"bom_later": later[name]} if later.get(name) else {}),
            **(intents or {}).get(name, {}),
        }
    out = {"cluster": cluster, "fabrics": fabrics, "bom": bom, "bom_total": bom_total(bom), "bom_later": later,
           "growing": list(growing or ())}
    if later:
        out["bom_later_total"] = bom_total(later)
    return out


def bom_total(bom: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The cluster's bill of materials: every fabric's rows summed by category and part (a plane,
    a storage and an in-band fabric may buy the same switch or optic), with the fabrics each is for."""
    total: dict[tuple[str, str], dict[str, Any]] = {}
    order = {"switch": 0, "nic": 1, "cable": 2, "transceiver": 3, "included": 4}
    for name, rows in bom.items():
        for r in rows:
            row = total.setdefault((r["category"], r["part"]), {"category": r["category"], "part": r["part"],
                                                                "quantity": 0, "fabrics": []})
            row["quantity"] += r["quantity"]
            if name not in row["fabrics"]:
                row["fabrics"].append(name)
    return sorted(total.values(), key=lambda r: (order.get(r["category"], 9), r["part"]))


def render_files(data: dict[str, Any]) -> list[tuple[str, bytes]]:
    keys = ("cluster", "fabrics", "bom_total", "bom_later_total")
    js = json.dumps({k: data[k] for k in keys if k in data}, indent=2, sort_keys=True) + "\n"
    md = render("report/report.md.j2", **data)
    return [("report.json", js.encode()), ("report.md", md.encode())]


def _target():
    from fabgen.targets.base import CLUSTER, Target

    return Target("report", lambda ctx: True, structure, render_files, scope=CLUSTER, reads=("fabric",), apart=True)


TARGET = _target()
